package keystore

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/crypto/argon2"
)

// Sealing
//
// The token key is 32 random bytes made at InitToken. It never reaches the
// file in the clear: each PIN record holds it wrapped (AES-256-GCM) under
// Argon2id(PIN, salt). Sealed attributes use a sub-key derived from it with
// HKDF-SHA256; the AAD names the object ID and the attribute type, so a
// sealed value moved to another object or attribute fails to open. A second
// sub-key keys the object records' MACs (auth.go).

const (
	tokenKeySize = 32
	nonceSize    = 12
	tagSize      = 16
)

// Domain-separation labels (AAD prefixes and HKDF info strings). Schema
// version 3 seals under a new AAD label (aadAttr): a value sealed by a
// version-3 keystore does not open as a version-2 one, so a file set back
// to version 2 (its records stripped of their MACs) cannot have its
// private objects re-authenticated by the migration (auth.go).
const (
	aadAttrV1 = "modexp-token/keystore/v1/attr"
	aadAttr   = "modexp-token/keystore/v3/attr"
	aadPIN    = "modexp-token/keystore/v1/pin"
	infoSeal  = "modexp-token/keystore/v1 seal key"
	infoMAC   = "modexp-token/keystore/v3 object MAC key"
)

// Key is the token key unlocked by a PIN: it seals and opens private
// attributes. It belongs to one token initialisation (a Key unlocked
// before InitToken is refused after it). Wipe it on logout. A Key is safe
// for concurrent use; Wipe waits for operations using it.
type Key struct {
	mu     sync.RWMutex
	key    [tokenKeySize]byte
	serial string   // token the key belongs to
	who    UserType // who unlocked it
	wiped  bool
	// remembered: the PIN was a remembered one (pincache.go), no
	// Argon2id ran at the token's cost.
	remembered bool
}

// Wipe zeroes the key material. Later use of the Key fails with
// ErrKeyMismatch.
func (k *Key) Wipe() {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	clear(k.key[:])
	k.wiped = true
}

// isWiped reports whether Wipe was called (nil: no key, not wiped).
func (k *Key) isWiped() bool {
	if k == nil {
		return false
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.wiped
}

// UserType reports who unlocked the key.
func (k *Key) UserType() UserType { return k.who }

// Remembered reports whether the PIN that unlocked the key was a
// remembered one (Options.PINCache): no Argon2id ran at the token's cost.
func (k *Key) Remembered() bool { return k.remembered }

// sealer holds the sub-keys derived from a Key for one Store call.
type sealer struct {
	aead   cipher.AEAD
	macKey []byte // keys the object records' MACs (auth.go)
	serial string
}

// sealer derives the sub-keys for one call, checking that k belongs to the
// token with serial. Call wipe on the result when done.
func (k *Key) sealer(serial string) (*sealer, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.wiped {
		return nil, fmt.Errorf("keystore: key was wiped: %w", ErrKeyMismatch)
	}
	if k.serial != serial {
		return nil, fmt.Errorf("keystore: key of token %s used on token %s: %w", k.serial, serial, ErrKeyMismatch)
	}
	sealKey, err := hkdf.Key(sha256.New, k.key[:], nil, infoSeal, 32)
	if err != nil {
		return nil, fmt.Errorf("keystore: derive seal key: %w", err)
	}
	defer clear(sealKey)
	aead, err := newGCM(sealKey)
	if err != nil {
		return nil, err
	}
	macKey, err := hkdf.Key(sha256.New, k.key[:], nil, infoMAC, 32)
	if err != nil {
		return nil, fmt.Errorf("keystore: derive MAC key: %w", err)
	}
	return &sealer{aead: aead, macKey: macKey, serial: serial}, nil
}

// wipe zeroes what Go lets us zero (the AES key schedule inside the AEAD
// cannot be reached).
func (s *sealer) wipe() {
	if s != nil {
		clear(s.macKey)
	}
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("keystore: aes: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("keystore: gcm: %w", err)
	}
	return aead, nil
}

// attrAAD binds a sealed value to its object and attribute type (label
// aadAttr, or aadAttrV1 for the values of a file not yet migrated to
// schema version 3).
func attrAAD(label string, id, typ uint64) []byte {
	b := make([]byte, 0, len(label)+16)
	b = append(b, label...)
	b = binary.BigEndian.AppendUint64(b, id)
	return binary.BigEndian.AppendUint64(b, typ)
}

// seal returns nonce ‖ ciphertext ‖ tag of value for attribute typ of
// object id.
func (s *sealer) seal(id, typ uint64, value []byte) ([]byte, error) {
	out := make([]byte, nonceSize, nonceSize+len(value)+tagSize)
	if _, err := rand.Read(out); err != nil {
		return nil, fmt.Errorf("keystore: nonce: %w", err)
	}
	return s.aead.Seal(out, out, value, attrAAD(aadAttr, id, typ)), nil
}

// openLabel opens a value sealed with AAD label label (aadAttr: one made
// by seal); a value altered or moved gives ErrUnsealFailed.
func (s *sealer) openLabel(label string, id, typ uint64, sealed []byte) ([]byte, error) {
	if len(sealed) < nonceSize+tagSize {
		return nil, fmt.Errorf("keystore: object %d attribute %#x: short sealed value: %w: %w", id, typ, ErrCorrupt, ErrUnsealFailed)
	}
	pt, err := s.aead.Open(nil, sealed[:nonceSize], sealed[nonceSize:], attrAAD(label, id, typ))
	if err != nil {
		return nil, fmt.Errorf("keystore: object %d attribute %#x: %w: %w", id, typ, ErrCorrupt, ErrUnsealFailed)
	}
	return pt, nil
}

// kdfRuns counts Argon2id derivations (tests check that every PIN attempt
// pays one).
var kdfRuns atomic.Uint64

// deriveKEK derives the key-encryption key from a PIN. Every PIN attempt
// pays for it. The caller wipes the result.
func deriveKEK(pin, salt []byte, p KDFParams) []byte {
	kdfRuns.Add(1)
	return argon2.IDKey(pin, salt, p.Time, p.MemoryKiB, p.Threads, 32)
}

func pinAAD(who UserType, serial string) []byte {
	b := make([]byte, 0, len(aadPIN)+1+len(serial))
	b = append(b, aadPIN...)
	b = append(b, byte(who))
	return append(b, serial...)
}

// wrapTokenKey seals the token key under kek for who's PIN record.
func wrapTokenKey(kek, tokenKey []byte, who UserType, serial string) ([]byte, error) {
	aead, err := newGCM(kek)
	if err != nil {
		return nil, err
	}
	out := make([]byte, nonceSize, wrappedLen)
	if _, err := rand.Read(out); err != nil {
		return nil, fmt.Errorf("keystore: nonce: %w", err)
	}
	return aead.Seal(out, out, tokenKey, pinAAD(who, serial)), nil
}

// unwrapTokenKey opens a PIN record's wrapped key with kek into dst;
// false means the PIN (hence kek) is wrong.
func unwrapTokenKey(dst *[tokenKeySize]byte, kek, wrapped []byte, who UserType, serial string) bool {
	aead, err := newGCM(kek)
	if err != nil || len(wrapped) != wrappedLen {
		return false
	}
	pt, err := aead.Open(nil, wrapped[:nonceSize], wrapped[nonceSize:], pinAAD(who, serial))
	if err != nil || len(pt) != tokenKeySize {
		return false
	}
	copy(dst[:], pt)
	clear(pt)
	return true
}

// pendingPIN is a new PIN's salt and derived KEK, computed before the
// transaction that stores it (the file lock is never held across Argon2id).
type pendingPIN struct {
	kdf  KDFParams
	salt []byte
	kek  []byte
}

// newPendingPIN makes a fresh salt and derives pin's KEK with p.
func newPendingPIN(pin []byte, p KDFParams) (*pendingPIN, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return nil, fmt.Errorf("keystore: salt: %w", err)
	}
	return &pendingPIN{kdf: p, salt: salt, kek: deriveKEK(pin, salt, p)}, nil
}

// record wraps tokenKey into a PIN record for who (tries zero).
func (p *pendingPIN) record(tokenKey []byte, who UserType, serial string) (*pinRecord, error) {
	wrapped, err := wrapTokenKey(p.kek, tokenKey, who, serial)
	if err != nil {
		return nil, err
	}
	return &pinRecord{KDF: p.kdf, Salt: p.salt, Wrapped: wrapped}, nil
}

// wipe zeroes the derived key.
func (p *pendingPIN) wipe() {
	if p != nil {
		clear(p.kek)
	}
}
