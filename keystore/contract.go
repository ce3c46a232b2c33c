package keystore

// NOTE: temporary stubs fixing the API the token calls; the keystore
// implementation replaces these bodies (and this file). Signature changes
// must be made together with token/.

import (
	"errors"
	"time"
)

// Sentinel errors.
var (
	ErrNotInitialized = errors.New("keystore: token not initialized")    // no token file / no token record
	ErrCorrupt        = errors.New("keystore: token file corrupt")       // unreadable, truncated, bad schema
	ErrPINIncorrect   = errors.New("keystore: PIN incorrect")            // wrong PIN (counter incremented)
	ErrPINLocked      = errors.New("keystore: PIN locked")               // too many wrong PINs
	ErrPINNotSet      = errors.New("keystore: user PIN not initialized") // C_Login before C_InitPIN
	ErrNotFound       = errors.New("keystore: object not found")
	ErrLocked         = errors.New("keystore: token file busy") // file lock not obtained in time
)

// UserType selects a PIN record.
type UserType int

// PIN owners.
const (
	SO   UserType = 0 // CKU_SO
	User UserType = 1 // CKU_USER
)

// Options tune a Store.
type Options struct {
	LockTimeout time.Duration // wait for the file lock (default 5s)
	MaxPINTries int           // consecutive wrong PINs before lockout (default 10)
}

// TokenRecord is the token's public record.
type TokenRecord struct {
	Label         string
	Serial        string // 16 hex chars, random at init
	UserPINSet    bool
	SOTriesLeft   int // consecutive wrong SO PINs still allowed
	UserTriesLeft int
	MaxPINTries   int
	Generation    uint64 // bumped by every change of any kind
}

// Key is the token key unlocked by a PIN: it seals and opens private
// attributes. Wipe it on logout.
type Key struct{}

// Wipe zeroes the key material.
func (k *Key) Wipe() {}

// Object is a stored object: its attributes by type. Sealed lists the types
// whose values are encrypted at rest (private objects' attributes, sensitive
// values); other attributes are stored in the clear so public objects are
// readable without a PIN.
type Object struct {
	ID     uint64 // stable, assigned by Put when 0
	Attrs  map[uint64][]byte
	Sealed map[uint64]bool
}

// Store is one token file (bbolt). Safe for concurrent use and for use by
// several processes at once: it holds the file lock only per transaction.
type Store struct{}

// Open opens (without creating) the token file at path. A missing file is
// not an error: the Store reports ErrNotInitialized until InitToken.
func Open(path string, opts Options) (*Store, error) { return &Store{}, nil }

// Close releases the store.
func (s *Store) Close() error { return nil }

// Token returns the token record (ErrNotInitialized if none).
func (s *Store) Token() (TokenRecord, error) { return TokenRecord{}, ErrNotInitialized }

// InitToken (re)initialises the token: new serial and token key, SO PIN
// record, no user PIN, every object destroyed. If the token exists, soPIN
// must match its SO PIN (ErrPINIncorrect otherwise). One transaction.
func (s *Store) InitToken(soPIN []byte, label string) error { return ErrNotInitialized }

// Login checks the PIN of who (counting failures, persisted) and returns
// the unlocked token key.
func (s *Store) Login(who UserType, pin []byte) (*Key, error) { return nil, ErrNotInitialized }

// SetPIN changes who's PIN from oldPIN to newPIN.
func (s *Store) SetPIN(who UserType, oldPIN, newPIN []byte) error { return ErrNotInitialized }

// InitUserPIN sets (or resets, clearing the lockout) the user PIN; soKey
// proves the SO is logged in.
func (s *Store) InitUserPIN(soKey *Key, pin []byte) error { return ErrNotInitialized }

// Objects returns every object with the generation it reflects. With key
// nil, sealed attributes are absent from Attrs (Sealed still lists them).
func (s *Store) Objects(key *Key) ([]Object, uint64, error) { return nil, 0, ErrNotInitialized }

// Generation is the current change counter (cheap: one read transaction);
// callers use it to notice other processes' changes.
func (s *Store) Generation() (uint64, error) { return 0, ErrNotInitialized }

// Put stores obj (new if ID is 0), sealing Sealed attributes under key, and
// returns its ID. key may be nil only if nothing is sealed.
func (s *Store) Put(key *Key, obj Object) (uint64, error) { return 0, ErrNotInitialized }

// Delete removes the object with id.
func (s *Store) Delete(id uint64) error { return ErrNotInitialized }
