// Package guard is the engine policy of one slot: which engine computes,
// what stands behind it, and how its health is known. A token slot holds
// one [Guard]; every private operation of every algorithm goes through it,
// so the promises below hold for RSA, ECDSA, ECDH, DSA and DH alike.
//
//   - Primary and fallback. The primary is the slot's engine (one spec, or
//     a pool of several). With a fallback (the software engine, fallback
//     "soft" in the configuration), an operation the primary fails or gets
//     wrong is redone on the software engine; without one it fails with an
//     error wrapping [engine.ErrDevice]. A wrong result is never released:
//     engine/alg/rsa, engine/alg/ecdsa, engine/alg/dsa and engine/alg/dh check every result
//     before release, and report a wrong one as engine.ErrDevice. The
//     fallback is one path for every algorithm: the guard hands out keys
//     prepared on both engines ([RSAKey], [DSAKey], [DHKey]; rsa.Key.On and
//     its kin prepare the same key on the software engine) and routes
//     ([ECRoute.Run], [ExpRoute.Run]) whose operations, on such an error,
//     count the fault once and run again on the fallback, drawing fresh
//     blinding and nonces. The algorithm packages themselves never fall
//     back.
//   - Self-test at open ([Guard.SelfTest], bounded by a timeout), or at
//     first use ([Guard.DeferSelfTest]: before the guard's first
//     known-answer test, hence before its first result, or at the first
//     [Guard.Status]). A failure is logged and counted but does not stop
//     the slot: a device may come back, and every result is checked anyway.
//   - Known-answer tests on fixed test keys, once per engine path (kat.go):
//     before the first RSA key of a size is prepared, the private
//     operation of the RSA test key that vouches for that size (1024,
//     2048, 3072, 4096 bits: katkeys/); before the first operation on a
//     curve, k1·G and k2·(k1·G) with fixed scalars; before the first DSA
//     or DH key or generation of a modulus size, one exponentiation with a
//     fixed modulus, base and exponent. Each runs on the primary alone and
//     is compared with a stored answer (kat_answers.go); no user key is
//     ever used, and nothing runs at open (C_Initialize). A failed test
//     marks that path of the primary faulty for katRetry: without a
//     fallback the key or operation is refused (engine.ErrDevice); with
//     one, curves and modulus sizes run on the software engine alone,
//     while RSA keys stay on the primary (every result is checked, and
//     redone in software if wrong). Passed tests are remembered for the
//     guard's life ([Status].KATs).
//   - Fault accounting ([Guard.Status]): every
//     wrong result and device failure is counted and logged; every private
//     operation is counted, and logged at debug level with its cost
//     (engine.Cost: simulated device time, cycles, energy) and wall time,
//     by the guard itself: the keys' operations and [ECRoute.Sign] and
//     [ECRoute.Shared] time and record what they run.
//   - Routes: which engine serves an EC curve ([Guard.EC]) or a modulus size
//     ([Guard.ExpEngines]), given what the primary can do (its Info) and
//     whether the software engine stands behind it.
//
// Exponent blinding on small engines: orup561 refuses exponents longer than
// 561 bits, so the blinded CRT exponents of RSA-1024 (512 + 64 bits) do not
// fit. The first key of each size probes it (one blinded private operation
// of that key, checked like any other): when blinding is the default
// ([Options].BlindingDefault) and the engine answers ErrOperandTooLarge,
// keys of that size run without exponent blinding on that engine, with a
// warning in the log. Configured explicitly, the key is refused instead.
//
// The guard knows engines only through package engine: which
// implementations exist is the business of the programs (cgo/, cmd/), which
// import engine/backend/all.
package guard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/ecdsa"
	"github.com/modexp-token/modexp-token/engine/alg/rsa"
	"github.com/modexp-token/modexp-token/engine/backend/pool"
)

// Time limits of the engine checks.
const (
	selfTestTimeout = 20 * time.Second
	katTimeout      = 20 * time.Second
)

// Options configure a [Guard].
type Options struct {
	// Software is the software engine (engine.Open("soft")), shared by the
	// slots of a module. The guard never closes it. It is what stands
	// behind the primary when Fallback is set, and serves the curves and
	// sizes the primary cannot.
	Software engine.Engine
	// Fallback puts the software engine behind the primary (fallback
	// "soft"). Without it, a failing primary fails the operation.
	Fallback bool
	// ExponentBlinding is RSA exponent blinding (engine/alg/rsa).
	ExponentBlinding bool
	// BlindingDefault says ExponentBlinding is the default, not configured:
	// a key size whose blinded exponents the primary refuses then runs
	// unblinded (with a warning) instead of being refused.
	BlindingDefault bool
	// ECDSACheck is the check of every ECDSA signature before release:
	// ecdsa.CheckDefault (the relation check on P-256, the full
	// verification elsewhere) or ecdsa.CheckVerify (the full verification
	// on every curve).
	ECDSACheck ecdsa.Check
	// Log receives the guard's records (nil: discarded).
	Log *slog.Logger
}

// Guard is one slot's engine policy. It is safe for concurrent use.
type Guard struct {
	primary  engine.Engine
	software engine.Engine // Options.Software
	fallback engine.Engine // software with Options.Fallback, unless primary is software; else nil
	opts     Options
	log      *slog.Logger

	ops          atomic.Uint64 // private operations attempted
	faults       atomic.Uint64 // wrong results and device failures seen
	deviceErrors atomic.Uint64 // operations that failed with a device error
	katFailures  atomic.Uint64

	mu          sync.Mutex
	selfTestErr error
	selfTestRan bool
	blindProbed map[int]bool // RSA key sizes whose exponent blinding was probed
	noExpBlind  map[int]bool // RSA key sizes run without exponent blinding

	katMu sync.Mutex           // held while a known-answer test runs
	kats  map[string]*katEntry // known-answer tests run, by name (kat.go)
	katOK sync.Map             // names of the passed tests, read without katMu

	selfTestDeferred atomic.Bool // DeferSelfTest was called
	selfTestOnce     sync.Once   // the deferred self-test, run once

	ec ecRoutes
}

// New returns the guard of primary. The guard owns primary (Close closes
// it) unless it is Options.Software.
func New(primary engine.Engine, opts Options) *Guard {
	g := &Guard{primary: primary, software: opts.Software, opts: opts, log: opts.Log}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	if opts.Fallback && opts.Software != nil && primary != opts.Software {
		g.fallback = opts.Software
	}
	return g
}

// Engine is the primary engine (for its Info: the token's model, limits).
func (g *Guard) Engine() engine.Engine { return g.primary }

// Fallback is the engine behind the primary, or nil.
func (g *Guard) Fallback() engine.Engine { return g.fallback }

// Close closes the primary engine (not the shared software engine).
func (g *Guard) Close() error {
	if g.primary == g.software {
		return nil
	}
	return g.primary.Close()
}

// SelfTest runs the primary's SelfTest (bounded by a timeout) and records
// the outcome for [Guard.Status]. A failure is counted and logged.
func (g *Guard) SelfTest() error {
	ctx, cancel := context.WithTimeout(context.Background(), selfTestTimeout)
	defer cancel()
	start := time.Now()
	err := g.primary.SelfTest(ctx)
	g.mu.Lock()
	g.selfTestRan, g.selfTestErr = true, err
	g.mu.Unlock()
	if err != nil {
		g.faults.Add(1)
		g.log.Error("engine self-test failed", "engine", g.name(), "fallback", g.fallback != nil,
			"duration", time.Since(start), "err", err)
		return err
	}
	g.log.Info("engine self-test passed", "engine", g.name(), "duration", time.Since(start))
	return nil
}

// DeferSelfTest arranges for [Guard.SelfTest] to run once at the guard's
// first use instead of now: before its first known-answer test (every
// engine path runs one before its first result, kat.go) or at the first
// [Guard.Status], whichever comes first. A slot whose host never computes
// with it (an nginx master that loads the key and forks) does not pay it.
func (g *Guard) DeferSelfTest() { g.selfTestDeferred.Store(true) }

// deferredSelfTest runs the self-test DeferSelfTest put off, once; the
// callers that come while it runs wait for it.
func (g *Guard) deferredSelfTest() {
	if g.selfTestDeferred.Load() {
		g.selfTestOnce.Do(func() { g.SelfTest() }) // a failure is logged and counted
	}
}

// fault records a wrong result or a device failure of the primary (called
// once per operation, before any fallback, by run).
func (g *Guard) fault(err error) {
	n := g.faults.Add(1)
	g.log.Warn("engine fault detected", "engine", g.name(), "faults", n, "fallback", g.fallback != nil, "err", err)
}

// done accounts for one private operation, the one place that does (the
// keys' do, ECRoute.Sign and ECRoute.Shared call it): op names it, bits is
// the key size, cost what the engine reported, wall its time, err its
// outcome (an error wrapping engine.ErrDevice or rsa.ErrFault counts as a
// device error).
func (g *Guard) done(op string, bits int, cost engine.Cost, wall time.Duration, err error) {
	g.ops.Add(1)
	if err != nil && (errors.Is(err, engine.ErrDevice) || errors.Is(err, rsa.ErrFault)) {
		g.deviceErrors.Add(1)
	}
	if !g.log.Enabled(context.Background(), slog.LevelDebug) {
		return // spare the hot path the line's arguments
	}
	g.log.Debug("private operation", "op", op, "key_bits", bits, "engine", g.name(),
		"device_time", cost.Device, "cycles", cost.Cycles, "energy_j", cost.Energy,
		"wall", wall, "ok", err == nil)
}

// Status is a guard's engine health, for the CLI, logs and tests.
type Status struct {
	Engine       string   // the primary's Info().Name
	HasFallback  bool     // the software engine stands behind the primary
	SelfTest     string   // "passed", "not run", or the failure
	Ops          uint64   // private operations attempted
	Faults       uint64   // engine results that failed the check, and device failures
	DeviceErrors uint64   // operations that failed with a device error
	KATFailures  uint64   // failed known-answer tests
	KATSizes     []int    // sizes of the RSA test keys whose known-answer test passed
	KATs         []string // the passed known-answer tests: "rsa-2048", "ec-P-256", "exp-2048"
	// Members is the state of each engine of a pool (nil otherwise).
	Members []pool.MemberStatus
}

// Status reports the guard's engine health.
func (g *Guard) Status() Status {
	g.deferredSelfTest() // first, so that its outcome is counted below
	st := Status{
		Engine:       g.name(),
		HasFallback:  g.fallback != nil,
		Ops:          g.ops.Load(),
		Faults:       g.faults.Load(),
		DeviceErrors: g.deviceErrors.Load(),
		KATFailures:  g.katFailures.Load(),
	}
	g.mu.Lock()
	switch {
	case !g.selfTestRan:
		st.SelfTest = "not run"
	case g.selfTestErr != nil:
		st.SelfTest = g.selfTestErr.Error()
	default:
		st.SelfTest = "passed"
	}
	g.mu.Unlock()
	st.KATs = g.katPassedNames()
	sort.Strings(st.KATs)
	for _, n := range st.KATs {
		var b int
		if _, err := fmt.Sscanf(n, "rsa-%d", &b); err == nil && !slices.Contains(st.KATSizes, b) {
			st.KATSizes = append(st.KATSizes, b)
		}
	}
	sort.Ints(st.KATSizes)
	if p, ok := g.primary.(*pool.Pool); ok {
		st.Members = p.Members()
	}
	return st
}

func (g *Guard) name() string { return g.primary.Info().Name }
