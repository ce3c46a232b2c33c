package mech

// The seam: what a mechanism may use of the PKCS#11 state. The state
// (package token, its seam.go) implements these interfaces; this package
// never sees *operation, *slot or *object.

import (
	"hash"
	"log/slog"

	"github.com/modexp-token/modexp-token/engine/guard"
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/config"
)

// Slot is what a mechanism may use of its slot.
type Slot interface {
	// Guard is the slot's engine policy: every private operation runs
	// through it.
	Guard() *guard.Guard
	// Policy is the slot's configuration (fallback, legacy switches).
	Policy() *config.Slot
	// Log is the slot's logger.
	Log() *slog.Logger
	// EngineErr maps an engine error of the operation what to a CK_RV
	// error (and logs it).
	EngineErr(what string, err error) error
	// EngineName is the slot's engine spec, for messages.
	EngineName() string
	// MechanismInfo is what the slot offers of m (false: not at all).
	MechanismInfo(m Mechanism) (Info, bool)
	// UseGCMIV records a caller's AES-GCM IV for key k and reports
	// whether it is fresh within the module's window (token/gcmiv.go).
	UseGCMIV(k Key, iv []byte) bool
	// GenerateGCMIV fills the free field of iv for generator gen under
	// key k and records it in the module's window (token/gcmgen.go).
	GenerateGCMIV(k Key, iv []byte, fixedBits int, gen uint64) error
	// KeyObject is the key object of handle h for a mechanism's parameter
	// that names another key (an HKDF salt key).
	KeyObject(h uint64) (Key, error)
}

// Key is what a mechanism or key type may use of a key object: its
// attributes (read only), its handle for the log, whether its sealed
// values are open, and its prepared form through preparedKey. *object
// implements it; the mechanism side names no *object.
type Key interface {
	// Attrs are the object's attributes; the mechanism side reads them
	// and never writes.
	Attrs() attr.Map
	// Handle is the object's handle, for the log.
	Handle() uint64
	// Class and KeyType are CKA_CLASS and CKA_KEY_TYPE (^0 when absent).
	Class() uint64
	KeyType() uint64
	// Complete reports whether every attribute is present (the sealed
	// values were opened by a login).
	Complete() bool
	// SecretValue is a secret key's CKA_VALUE (token/secretkey.go).
	SecretValue() ([]byte, error)
	// Cache is the object's prepared-key cache (preparedKey).
	Cache(match func(any) bool, sealed func() error, build func() (any, error)) (any, error)
	// Cached is what the cache holds (nil before the first preparation):
	// the key types' fast path, which makes no closure (cachedKey).
	Cached() any
}

// Op is what a mechanism may use of the operation it serves: the key,
// the kind of operation, the accumulator its Update calls fed, and the
// slot. *operation implements it; the mechanism side names no
// *operation.
type Op interface {
	// Key is the operation's key (nil for a digest).
	Key() Key
	// Kind is what the operation does (OpSign, OpEncrypt ...).
	Kind() OpKind
	// Accumulator is what the operation's Update calls fed (a running
	// digest, MAC or message buffer; nil for a one-shot mechanism).
	Accumulator() hash.Hash
	// Stream is a stream cipher's state, made at Init (symstream.go).
	Stream() SymStream
	// Slot is the operation's slot.
	Slot() Slot
	// KeyBits and KeyBytes are the key's size (token/operation.go).
	KeyBits() int
	KeyBytes() int
	// InitInput sets up the accumulator or stream again (token/operation.go).
	InitInput() error
	// OutBuf is the caller's output buffer, empty with room for n bytes,
	// when the call has one that large (C_Sign, C_SignFinal), else nil: a
	// signer appends its signature there and allocates nothing.
	OutBuf(n int) []byte
}

// cachedKey is the fast path of preparedKey: k's prepared key when the
// cache holds one of type K. A key type calls it before preparedKey,
// whose closures it then does not make.
func cachedKey[K any](k Key) (K, bool) {
	v, ok := k.Cached().(K)
	return v, ok
}

// preparedKey returns k's key in the form build makes, once per
// snapshot: the first call builds it under the object's lock and keeps
// it, later calls return it. sealed, when not nil, makes the error for a
// key whose private values are still sealed (not logged in). It is the
// state's cache; the key types only say how to build.
func preparedKey[K any](k Key, sealed func() error, build func() (K, error)) (K, error) {
	v, err := k.Cache(func(v any) bool { _, ok := v.(K); return ok }, sealed,
		func() (any, error) { return build() })
	if err != nil {
		var zero K
		return zero, err
	}
	return v.(K), nil
}
