package keystore

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"sync"
	"time"

	"golang.org/x/crypto/argon2"
)

// Remembered PINs (Options.PINCache)
//
// Argon2id at the token's cost runs for every PIN check that is not
// remembered. After a check that succeeded, this Store remembers, for
// Options.PINCache, a verifier of the PIN and the key-encryption key (KEK)
// it derived, so that the same right PIN again costs an HMAC instead of
// Argon2id:
//
//   - In the process: verifier = HMAC-SHA256(k, context ‖ PIN), k random
//     per Store and never stored, compared in constant time. context binds
//     the entry to the PIN record as it was (token serial, user type,
//     salt, KDF parameters, wrapped key): a PIN set meanwhile, here or in
//     another process, misses.
//   - With Options.PINCacheKeyring, also in the Linux kernel's user
//     keyring (keyring_linux.go): a "user" key whose payload is the KEK
//     sealed with AES-GCM under Argon2id(PIN, t=1, m=1 MiB) (a few
//     milliseconds), with possessor-only permissions and the lifetime as
//     its kernel timeout, so a new process of the same user finds it, as
//     gpg-agent caches passphrases. Where keyctl is missing or refused
//     (seccomp in containers, quota) the keyring is skipped silently: the
//     process cache and Argon2id remain.
//
// A PIN that does not match misses both and pays the full Argon2id, then
// is counted as before: a guesser gains nothing through the cache. What
// each layer gives an attacker with the file, the user's uid or root is in
// docs/THREATS.md. Setting a PIN (SetPIN, InitUserPIN, InitToken) forgets
// the remembered PINs of the token, and Close forgets this Store's.

// keyringKDF is the Argon2id cost of the keyring payload's key: cheap
// enough for a login in milliseconds, and still a memory-hard step per
// guess for whoever reads the payload.
var keyringKDF = KDFParams{Time: 1, MemoryKiB: 1024, Threads: 1}

const keyringSaltSize = 16

// pinCache is a Store's remembered PINs.
type pinCache struct {
	mu      sync.Mutex
	key     [32]byte // the verifier key, random per Store
	entries map[UserType]*pinEntry
}

type pinEntry struct {
	verifier [sha256.Size]byte
	kek      []byte
	expires  time.Time
}

// pinContext is what a remembered PIN is bound to: the PIN record as it
// was when the PIN was checked.
func pinContext(name string, who UserType, serial string, pr *pinRecord) []byte {
	b := []byte("modexp-token/keystore/pin-cache/v1\x00")
	for _, s := range [][]byte{[]byte(name), []byte(serial), pr.Salt, pr.Wrapped} {
		b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	b = append(b, byte(who))
	b = binary.BigEndian.AppendUint32(b, pr.KDF.Time)
	b = binary.BigEndian.AppendUint32(b, pr.KDF.MemoryKiB)
	return append(b, pr.KDF.Threads)
}

func (c *pinCache) verifier(ctx, pin []byte) (v [sha256.Size]byte) {
	m := hmac.New(sha256.New, c.key[:])
	m.Write(ctx)
	m.Write(pin)
	m.Sum(v[:0])
	return v
}

// cachedKEK returns the remembered KEK of pin for who's record pr (a copy
// the caller clears), or nil. A miss in the process tries the keyring.
func (s *Store) cachedKEK(who UserType, serial string, pr *pinRecord, pin []byte) []byte {
	if s.opts.PINCache <= 0 {
		return nil
	}
	c := &s.pins
	ctx := pinContext(s.path, who, serial, pr)
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[UserType]*pinEntry{}
		if _, err := rand.Read(c.key[:]); err != nil {
			c.mu.Unlock()
			return nil
		}
	}
	v := c.verifier(ctx, pin)
	e := c.entries[who]
	if e != nil && time.Now().Before(e.expires) && subtle.ConstantTimeCompare(e.verifier[:], v[:]) == 1 {
		kek := append([]byte(nil), e.kek...)
		c.mu.Unlock()
		return kek
	}
	c.mu.Unlock()
	if !s.opts.PINCacheKeyring {
		return nil
	}
	payload, remaining, ok := keyringRead(keyringDesc(ctx))
	if !ok {
		return nil
	}
	kek := openKeyringPayload(payload, ctx, pin)
	if kek != nil {
		s.rememberIn(who, v, kek, remaining)
	}
	return kek
}

// rememberPIN remembers a PIN that just unlocked who's record pr, in the
// process and, if configured, in the keyring.
func (s *Store) rememberPIN(who UserType, serial string, pr *pinRecord, pin, kek []byte) {
	if s.opts.PINCache <= 0 {
		return
	}
	ctx := pinContext(s.path, who, serial, pr)
	c := &s.pins
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[UserType]*pinEntry{}
		if _, err := rand.Read(c.key[:]); err != nil {
			c.mu.Unlock()
			return
		}
	}
	v := c.verifier(ctx, pin)
	c.mu.Unlock()
	s.rememberIn(who, v, kek, s.opts.PINCache)
	if s.opts.PINCacheKeyring {
		if payload := sealKeyringPayload(ctx, pin, kek); payload != nil {
			keyringWrite(keyringDesc(ctx), payload, s.opts.PINCache)
		}
	}
}

func (s *Store) rememberIn(who UserType, v [sha256.Size]byte, kek []byte, life time.Duration) {
	c := &s.pins
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.entries[who]; old != nil {
		clear(old.kek)
	}
	c.entries[who] = &pinEntry{verifier: v, kek: append([]byte(nil), kek...), expires: time.Now().Add(life)}
}

// forgetPINs drops this Store's remembered PINs and, with the keyring,
// the token's keyring entries for the records in rec (the ones about to
// be replaced).
func (s *Store) forgetPINs(rec *tokenRecord) {
	c := &s.pins
	c.mu.Lock()
	for who, e := range c.entries {
		clear(e.kek)
		delete(c.entries, who)
	}
	c.mu.Unlock()
	if !s.opts.PINCacheKeyring || rec == nil {
		return
	}
	for _, who := range []UserType{SO, User} {
		if pr := rec.pin(who); pr != nil {
			keyringForget(keyringDesc(pinContext(s.path, who, rec.Serial, pr)))
		}
	}
}

// pinsOnly is a copy of r's serial and PIN records (what forgetPINs
// needs of a record about to be replaced).
func (r *tokenRecord) pinsOnly() tokenRecord {
	out := tokenRecord{Serial: r.Serial, SO: r.SO}
	if r.User != nil {
		u := *r.User
		out.User = &u
	}
	return out
}

// keyringDesc names a keyring entry by a hash of its context (the token's
// name and serial are not shown to whoever lists the keyring).
func keyringDesc(ctx []byte) string {
	h := sha256.Sum256(ctx)
	return "modexp-token:pin:" + hex.EncodeToString(h[:16])
}

// sealKeyringPayload seals kek for the keyring: salt ‖ nonce ‖
// AES-256-GCM(Argon2id(pin, salt, keyringKDF), kek, aad = ctx).
func sealKeyringPayload(ctx, pin, kek []byte) []byte {
	out := make([]byte, keyringSaltSize+nonceSize, keyringSaltSize+nonceSize+len(kek)+16)
	if _, err := rand.Read(out); err != nil {
		return nil
	}
	k := argon2.IDKey(pin, out[:keyringSaltSize], keyringKDF.Time, keyringKDF.MemoryKiB, keyringKDF.Threads, 32)
	defer clear(k)
	aead, err := newGCM(k)
	if err != nil {
		return nil
	}
	return aead.Seal(out, out[keyringSaltSize:], kek, ctx)
}

// openKeyringPayload opens a payload of sealKeyringPayload with pin (nil:
// another PIN, another record, or not a payload).
func openKeyringPayload(payload, ctx, pin []byte) []byte {
	if len(payload) < keyringSaltSize+nonceSize+16 {
		return nil
	}
	k := argon2.IDKey(pin, payload[:keyringSaltSize], keyringKDF.Time, keyringKDF.MemoryKiB, keyringKDF.Threads, 32)
	defer clear(k)
	aead, err := newGCM(k)
	if err != nil {
		return nil
	}
	kek, err := aead.Open(nil, payload[keyringSaltSize:keyringSaltSize+nonceSize], payload[keyringSaltSize+nonceSize:], ctx)
	if err != nil {
		return nil
	}
	return kek
}
