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

// DefaultKDFParams are RFC 9106's second recommended Argon2id setting
// (t=3, m=64 MiB, p=4). On the development machine (2 shared cores) one
// derivation takes about 95 ms, so every PIN attempt costs that much.
var DefaultKDFParams = KDFParams{Time: 3, MemoryKiB: 64 * 1024, Threads: 4}

// InsecureTestKDFParams are cheap Argon2id parameters (t=1, m=64 KiB) that
// make PIN checks take microseconds. They offer no protection against PIN
// guessing on a stolen file: use them only in tests.
var InsecureTestKDFParams = KDFParams{Time: 1, MemoryKiB: 64, Threads: 1}

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
	// after which the PIN is locked (default 10). It is the policy of the
	// opener, not stored in the file: all processes sharing a token should
	// use the same value.
	MaxPINTries int

	// KDF are the Argon2id parameters for PIN records written by this Store
	// (InitToken, SetPIN, InitUserPIN). Zero means DefaultKDFParams. Tests
	// set InsecureTestKDFParams.
	KDF KDFParams

	// Logger receives the records refused by their whole-record checks
	// (auth.go), as errors. Nil discards them. The keystore never prints.
	Logger *slog.Logger
}

func (o Options) withDefaults() (Options, error) {
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
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
	return o, nil
}
