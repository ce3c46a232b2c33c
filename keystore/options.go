package keystore

import (
	"fmt"
	"log/slog"
	"time"
)

// Defaults applied to zero fields of Options.
const (
	DefaultLockTimeout = 5 * time.Second
	DefaultMaxPINTries = 10
)

// KDFParams are the Argon2id parameters of a PIN record. They are stored in
// the file with each PIN record, so existing PINs keep working when the
// defaults change; new parameters apply when a PIN is (re)set.
type KDFParams struct {
	Time      uint32 // passes over memory
	MemoryKiB uint32 // memory in KiB
	Threads   uint8  // lanes
}

// DefaultKDFParams are the Argon2id cost of new PIN records unless the
// token is initialised with another (`init --pin-cost`, the kdf_* keys):
// the floor, OWASP's least recommended setting (t=2, m=19 MiB, one lane),
// about 50 ms a derivation here. A first login costs that; later ones are
// remembered (pin_cache); an attacker with only the token file pays it per
// guess (docs/THREATS.md, Logins).
var DefaultKDFParams = MinKDFParams

// RFC9106KDFParams are RFC 9106's second recommended Argon2id setting
// (t=3, m=64 MiB, p=4): the "rfc9106" cost profile, about 4 times the
// floor's memory and 200-300 ms a derivation here.
var RFC9106KDFParams = KDFParams{Time: 3, MemoryKiB: 64 * 1024, Threads: 4}

// InsecureTestKDFParams are cheap Argon2id parameters (t=1, m=64 KiB) that
// make PIN checks take microseconds. They offer no protection against PIN
// guessing on a stolen file: use them only in tests (Options.AllowWeakKDF).
var InsecureTestKDFParams = KDFParams{Time: 1, MemoryKiB: 64, Threads: 1}

// MinKDFParams is the floor on the Argon2id cost of new PIN records: OWASP's
// least recommended setting (t=2, m=19 MiB). Options.KDF below it (in time
// or memory) is refused unless Options.AllowWeakKDF.
var MinKDFParams = KDFParams{Time: 2, MemoryKiB: 19 * 1024, Threads: 1}

// PINCostProfiles are the named Argon2id costs `modexp-token init
// --pin-cost` stores in a token (Policy.KDF): what an attacker holding
// only the token file pays per PIN guess. "floor" is MinKDFParams (OWASP's
// least: t=2, 19 MiB, one lane; the default), "rfc9106" RFC9106KDFParams
// (t=3, 64 MiB, 4 lanes), "high" t=4, 256 MiB, 4 lanes.
var PINCostProfiles = map[string]KDFParams{
	"floor":   MinKDFParams,
	"rfc9106": RFC9106KDFParams,
	"high":    {Time: 4, MemoryKiB: 256 * 1024, Threads: 4},
}

// below reports whether p costs less than q in time or memory.
func (p KDFParams) below(q KDFParams) bool { return p.Time < q.Time || p.MemoryKiB < q.MemoryKiB }

// stricter returns the componentwise maximum of p and q.
func (p KDFParams) stricter(q KDFParams) KDFParams {
	return KDFParams{Time: max(p.Time, q.Time), MemoryKiB: max(p.MemoryKiB, q.MemoryKiB), Threads: max(p.Threads, q.Threads)}
}

// Limits on parameters read from a file (a corrupt or hostile file must not
// make a login allocate gigabytes or spin for minutes).
const (
	maxKDFTime      = 64
	maxKDFMemoryKiB = 4 << 20 // 4 GiB
	maxKDFThreads   = 64
)

func (p KDFParams) validate() error {
	switch {
	case p.Time < 1 || p.Time > maxKDFTime:
		return fmt.Errorf("argon2id time %d out of range [1, %d]", p.Time, maxKDFTime)
	case p.Threads < 1 || p.Threads > maxKDFThreads:
		return fmt.Errorf("argon2id threads %d out of range [1, %d]", p.Threads, maxKDFThreads)
	case p.MemoryKiB < 8*uint32(p.Threads) || p.MemoryKiB > maxKDFMemoryKiB:
		return fmt.Errorf("argon2id memory %d KiB out of range [%d, %d]", p.MemoryKiB, 8*uint32(p.Threads), maxKDFMemoryKiB)
	}
	return nil
}

// Options tune a Store. The zero value gives the defaults.
type Options struct {
	// LockTimeout bounds the wait for the file lock of one transaction
	// (default 5s). On timeout the call fails with ErrLocked.
	LockTimeout time.Duration

	// MaxPINTries is the number of consecutive wrong PINs (per user type)
	// after which the PIN is locked (default 10). InitToken stores it in
	// the token (Policy); afterwards a Store's value can only lower the
	// token's (the least of the two applies), never raise it.
	MaxPINTries int

	// KDF are the Argon2id parameters for PIN records written by this Store
	// (InitToken, SetPIN, InitUserPIN). Zero means DefaultKDFParams.
	// InitToken stores them in the token (Policy) as the floor of every
	// later PIN record: a Store's value can only raise them (the
	// componentwise maximum applies). Below MinKDFParams they are refused
	// unless AllowWeakKDF.
	KDF KDFParams

	// PINCache is how long a right PIN is remembered after the check
	// that paid Argon2id (pincache.go): the same PIN again within it costs
	// an HMAC. Zero or negative: never remembered.
	PINCache time.Duration

	// PINCacheKeyring remembers right PINs in the kernel's user keyring
	// too (possessor-only, PINCache as the kernel timeout), so that a new
	// process of the same user logs in without Argon2id. Ignored where
	// keyctl is missing or refused.
	PINCacheKeyring bool

	// AllowWeakKDF lets KDF go below MinKDFParams: for tests only
	// (InsecureTestKDFParams).
	AllowWeakKDF bool

	// Logger receives the records refused by their whole-record checks
	// (auth.go), as errors. Nil discards them. The keystore never prints.
	Logger *slog.Logger

	triesSet bool // MaxPINTries was given (not the default)
}

// Policy is the token's own PIN policy, stored in the token record: set by
// InitToken from the initialiser's Options, then the least a Store
// applies (a Store's Options may only make it stricter: fewer tries, a
// costlier KDF). A token initialised before policies were stored gets the
// Options of its first login's Store.
type Policy struct {
	MaxPINTries int       // consecutive wrong PINs before lockout
	KDF         KDFParams // the least Argon2id parameters of new PIN records
}

// maxTries is the lockout limit that applies to a token with record rec.
func (s *Store) maxTries(rec *tokenRecord) int {
	if rec.Policy == nil {
		return s.opts.MaxPINTries
	}
	n := rec.Policy.MaxPINTries
	if s.opts.triesSet && s.opts.MaxPINTries < n {
		n = s.opts.MaxPINTries
	}
	return n
}

// kdfFor is the Argon2id parameters of new PIN records on a token with
// record rec.
func (s *Store) kdfFor(rec *tokenRecord) KDFParams {
	if rec == nil || rec.Policy == nil {
		return s.opts.KDF
	}
	return s.opts.KDF.stricter(rec.Policy.KDF)
}

func (o Options) withDefaults() (Options, error) {
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	o.triesSet = o.MaxPINTries > 0
	if o.MaxPINTries <= 0 {
		o.MaxPINTries = DefaultMaxPINTries
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.KDF == (KDFParams{}) {
		o.KDF = DefaultKDFParams
	}
	if err := o.KDF.validate(); err != nil {
		return o, fmt.Errorf("keystore: options: %w", err)
	}
	if o.KDF.below(MinKDFParams) && !o.AllowWeakKDF {
		return o, fmt.Errorf("keystore: options: argon2id t=%d m=%d KiB is below the floor t=%d m=%d KiB (AllowWeakKDF is for tests)",
			o.KDF.Time, o.KDF.MemoryKiB, MinKDFParams.Time, MinKDFParams.MemoryKiB)
	}
	return o, nil
}
