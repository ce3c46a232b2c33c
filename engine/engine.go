// Package engine defines what an arithmetic engine is: the modular
// exponentiation (and, optionally, elliptic-curve scalar multiplication)
// behind every RSA and ECDSA private operation of the token.
//
// An engine only does arithmetic. Padding, CRT recombination, blinding and
// the check of every result before release live once, above the engines, in
// [github.com/modexp-token/modexp-token/engine/alg/rsa] (and engine/alg/ecdsa), so
// every engine gets them. Engines may be wrong (a simulated chip driven past
// its limits, a faulty device); callers must never trust a result unchecked.
//
// # Core and optional abilities
//
// The core interface is small: [Engine]. Optional abilities are optional
// interfaces, as in filippo.io/age: [CRTEngine] for engines that do the
// whole CRT exponentiation natively, [PairEngine] for engines that take two
// exponentiations in one call more cheaply than in two, [ECEngine] for
// engines that multiply curve points. Callers ask for an ability with
// [As] (never with a type assertion of their own): an engine has it when
// its type implements the interface and, if the engine implements
// [Limited], its Has method says so. Limited is for engines whose
// abilities are known only per instance: a device client has ExpCRT and
// the point multiplications on its type, and has them as abilities only
// when the device's INFO lists them; a pool has them when its members do.
// Such an engine writes each method once on one type instead of one
// wrapper type per combination of abilities (there were three for the
// device client) and test engines need no wrapper to hide the abilities
// of the engine they embed.
//
// There is deliberately no embeddable default whose optional methods
// answer ErrUnsupported: embedding it would make every engine implement
// every optional interface, so the interfaces would no longer say what an
// engine can do, and each caller would learn it only by a failed call per
// operation, or from Info flags duplicating the interfaces. An engine that
// declines one call of an ability it has (ExpPair of two moduli the
// software kernel cannot interleave, a curve not in Info().Curves) still
// answers ErrUnsupported, before doing anything.
//
// # Operand conventions
//
// Operands are big-endian byte strings. Results are padded to the byte length
// of the modulus (or field). Secret exponents and scalars must not leak
// through timing on the software engine; simulators say in their Info that
// they are not constant-time.
package engine

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors. Engines wrap them with context using %w.
var (
	// ErrUnsupported: the engine cannot do this operation or size at all.
	ErrUnsupported = errors.New("engine: operation not supported")
	// ErrOperandTooLarge: an operand exceeds the engine's limits (Info).
	ErrOperandTooLarge = errors.New("engine: operand too large")
	// ErrInvalidModulus: the modulus is even, zero or one.
	ErrInvalidModulus = errors.New("engine: invalid modulus")
	// ErrDevice: the engine (device, chip) failed or returned garbage.
	ErrDevice = errors.New("engine: device failure")
	// ErrUnknownEngine: no engine is registered under the requested name.
	ErrUnknownEngine = errors.New("engine: unknown engine")
)

// Cost is what one operation cost on the engine's (possibly simulated)
// hardware. The software engine reports zero.
type Cost struct {
	Cycles uint64        // engine clock cycles
	Device time.Duration // device time (simulated for chips)
	Energy float64       // joules, where the model knows it (0 otherwise)
}

// Add returns the sum of two costs.
func (c Cost) Add(d Cost) Cost {
	return Cost{Cycles: c.Cycles + d.Cycles, Device: c.Device + d.Device, Energy: c.Energy + d.Energy}
}

// Info describes an engine's identity and limits.
type Info struct {
	Name           string   // registry spec, e.g. "soft", "chip:pukcc", "device:unix:/run/x.sock"
	Model          string   // shown as the token model (at most 16 chars are used)
	MaxModulusBits int      // largest modulus Exp accepts; 0 = no limit
	ConstantTime   bool     // secret exponents/scalars do not leak through timing
	Simulated      bool     // results carry simulated hardware cost
	Curves         []string // curves ScalarMult accepts ("P-256", "secp256k1", ...); nil = none
	Cores          int      // operations that may usefully run at once (>= 1)
}

// Modulus is an engine's prepared form of an odd modulus (Montgomery
// constants and the like), made once per key and reused. Implementations
// are immutable and safe for concurrent use.
type Modulus interface {
	// BitLen is the modulus length in bits.
	BitLen() int
	// Bytes is the modulus, big-endian, without leading zeros.
	Bytes() []byte
}

// Engine is the core arithmetic engine. Implementations are safe for
// concurrent use by many goroutines.
type Engine interface {
	// Info describes the engine.
	Info() Info
	// NewModulus prepares the odd modulus n (big-endian, > 1).
	NewModulus(n []byte) (Modulus, error)
	// Exp returns base^exp mod m, big-endian, padded to m's byte length.
	// base must be < m. exp is secret: its value must not leak, its byte
	// length is public. Callers pass a secret exponent at a length that
	// does not depend on its value (leading zero bytes kept, e.g. dp at
	// the byte length of p); engines may process it over exactly that
	// length (the software engine does) and must not shorten it by
	// stripping leading zeros.
	Exp(ctx context.Context, m Modulus, base, exp []byte) ([]byte, Cost, error)
	// ExpVarTime is Exp for a public exponent (a public key's e, a
	// verification): it may take time that depends on exp.
	ExpVarTime(ctx context.Context, m Modulus, base, exp []byte) ([]byte, Cost, error)
	// SelfTest runs known-answer tests on the engine.
	SelfTest(ctx context.Context) error
	// Close releases the engine's resources (connections, goroutines).
	Close() error
}

// ExpMode calls e.ExpVarTime when public, else e.Exp: for code that carries
// the flag as data (the wire protocol, ExpOp).
func ExpMode(ctx context.Context, e Engine, m Modulus, base, exp []byte, public bool) ([]byte, Cost, error) {
	if public {
		return e.ExpVarTime(ctx, m, base, exp)
	}
	return e.Exp(ctx, m, base, exp)
}

// CRTKey is an RSA private key in CRT form, as big-endian byte strings.
type CRTKey struct {
	P, Q, DP, DQ, QInv []byte
}

// CRTEngine is implemented by engines that do the whole CRT private
// exponentiation natively (PUKCC's CRT service, Cryptech modexpa7).
type CRTEngine interface {
	Engine
	// ExpCRT returns base^d mod p·q using the CRT components; base < p·q.
	ExpCRT(ctx context.Context, k *CRTKey, base []byte) ([]byte, Cost, error)
}

// ExpOp is one exponentiation of an [PairEngine.ExpPair] call: Base^Exp mod
// M, with Exp secret unless Public.
type ExpOp struct {
	M         Modulus
	Base, Exp []byte
	Public    bool
}

// BatchEngine is implemented by engines that gather the secret
// exponentiations asked of them at once (from any goroutines) and compute
// several together for less than one by one: the software engine on the
// 8-lane IFMA kernel. A caller that bounds the calls it lets run at once
// (modexpd's core slots) lets BatchWidth per core in, or there is nothing
// to gather.
type BatchEngine interface {
	Engine
	// BatchWidth is the number of exponentiations computed together per
	// core, 0 when the engine does not batch (its kernel cannot).
	BatchWidth() int
}

// PairEngine is implemented by engines for which two exponentiations asked
// together cost less than two calls: a device reached over a link answers
// both in one round trip, and decides itself whether to run them at once.
// engine/alg/rsa asks for the two CRT halves of a private operation this way.
type PairEngine interface {
	Engine
	// ExpPair returns a.Base^a.Exp mod a.M and b.Base^b.Exp mod b.M, each
	// as Exp would, and their summed cost. An engine may decline a pair it
	// cannot do better than two calls with an error wrapping
	// ErrUnsupported, before doing anything: callers then make two Exp
	// calls.
	ExpPair(ctx context.Context, a, b ExpOp) (ra, rb []byte, c Cost, err error)
}

// Describer is implemented by engines with more to say about themselves
// than Info: the software engine names the limb kernel it runs on, which
// the module writes in its load record.
type Describer interface {
	Engine
	// Describe returns key-value pairs for a log record and the notes
	// worth a warning (such as why a faster kernel is not in use).
	Describe() (attrs []any, notes []string)
}

// Ability is one optional ability of an engine: the optional interface
// that provides it.
type Ability int

// The optional abilities.
const (
	AbilityCRT  Ability = iota + 1 // CRTEngine
	AbilityPair                    // PairEngine
	AbilityEC                      // ECEngine
)

// Limited is implemented by engines whose abilities depend on the
// instance: Has reports whether the engine has an ability whose interface
// its type implements. Engines without it have every ability their type
// implements.
type Limited interface {
	Has(Ability) bool
}

// As returns e as the optional interface T (CRTEngine, PairEngine or
// ECEngine) and true when e has that ability: its type implements T and,
// if e is [Limited], e.Has says so. It is the one capability query of the
// code base (a test checks that no other code asserts the optional
// interfaces).
func As[T Engine](e Engine) (T, bool) {
	var none T
	t, ok := e.(T)
	if !ok {
		return none, false
	}
	if l, limited := e.(Limited); limited {
		if a := abilityOf[T](); a != 0 && !l.Has(a) {
			return none, false
		}
	}
	return t, true
}

// abilityOf is the ability T provides (0 for Engine itself).
func abilityOf[T Engine]() Ability {
	switch any((*T)(nil)).(type) {
	case *CRTEngine:
		return AbilityCRT
	case *PairEngine:
		return AbilityPair
	case *ECEngine:
		return AbilityEC
	}
	return 0
}
