package guard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/ecdh"
	"github.com/modexp-token/modexp-token/engine/alg/ecdsa"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
)

// ECRoute is how a guard runs operations on one curve: the engine that
// computes and the one behind it.
type ECRoute struct {
	g        *Guard
	curve    string
	katName  string          // "ec-" + curve: its known-answer test
	Primary  engine.ECEngine // computes the scalar multiplications
	Fallback engine.ECEngine // the software engine behind it, or nil
}

// Software reports whether e is the software engine (whose results need
// no cross-check against software).
func (rt ECRoute) Software(e engine.ECEngine) bool {
	if m, ok := e.(*meter); ok {
		e = m.ECEngine
	}
	soft, _ := engine.As[engine.ECEngine](rt.g.software)
	return soft != nil && e == soft
}

// Run runs op on the primary, adding up the costs it reports; when op's
// error wraps engine.ErrDevice (a failure, or a result its checks found
// wrong) the fault is counted and op runs again on the fallback, if any.
// op must check what the engine returns (engine/alg/ecdsa does) and must not
// release anything before it returns nil. Run returns the primary's cost.
//
// The first Run of a curve runs the curve's known-answer test on the
// primary. While it stands failed the primary is not used on that curve:
// op runs on the fallback alone, or, without one, Run fails with the
// test's error (wrapping engine.ErrDevice).
func (rt ECRoute) Run(ctx context.Context, op func(e engine.ECEngine) error) (engine.Cost, error) {
	if rt.curve != "" {
		err := rt.g.katRun(rt.katName, func(ctx context.Context) error {
			return katEC(ctx, rt.Primary, rt.curve)
		})
		if err != nil {
			if rt.Fallback == nil {
				return engine.Cost{}, fmt.Errorf("guard: curve %s: %w", rt.curve, err)
			}
			return engine.Cost{}, op(rt.Fallback)
		}
	}
	m := meters.Get().(*meter)
	m.ECEngine = rt.Primary
	err := run[engine.ECEngine](rt.g, m, rt.Fallback, op)
	cost := m.cost
	*m = meter{}
	meters.Put(m)
	return cost, err
}

// meters keeps the meters of ECRoute.Run, so that a signature allocates
// none.
var meters = sync.Pool{New: func() any { return new(meter) }}

// Sign is [ecdsa.PrivateKey.Sign] through the route ([ECRoute.Run]): on
// the primary, every signature checked before release (the check of
// Options.ECDSACheck); a fault is counted and the signature made again on
// the fallback with a fresh nonce. The operation is accounted
// ([Guard.Status], the debug record).
func (rt ECRoute) Sign(ctx context.Context, key *ecdsa.PrivateKey, hash []byte, rnd io.Reader) (sig []byte, cost engine.Cost, err error) {
	return rt.SignTo(ctx, key, nil, hash, rnd)
}

// SignTo is Sign with the signature appended to dst (no allocation when
// dst has room for it).
func (rt ECRoute) SignTo(ctx context.Context, key *ecdsa.PrivateKey, dst, hash []byte, rnd io.Reader) (sig []byte, cost engine.Cost, err error) {
	start := time.Now()
	cost, err = rt.Run(ctx, func(e engine.ECEngine) error {
		sig, err = key.SignToCheck(ctx, e, dst, hash, rnd, rt.g.opts.ECDSACheck)
		return err
	})
	rt.g.done("ecdsa sign", key.Curve().OrderBits(), cost, time.Since(start), err)
	if err != nil {
		return nil, cost, err
	}
	return sig, cost, nil
}

// Shared is [ecdh.Shared] through the route: Z = x(d·Q) on the primary,
// checked (and, off the software engine, compared with the software
// result) before release; a fault is counted and the agreement redone on
// the fallback. The operation is accounted like [ECRoute.Sign].
func (rt ECRoute) Shared(ctx context.Context, c *ec.Curve, d, qx, qy []byte) (z []byte, cost engine.Cost, err error) {
	start := time.Now()
	cost, err = rt.Run(ctx, func(e engine.ECEngine) error {
		z, err = ecdh.Shared(ctx, e, c, d, qx, qy, !rt.Software(e))
		return err
	})
	rt.g.done("ecdh derive", c.OrderBits(), cost, time.Since(start), err)
	if err != nil {
		return nil, cost, err
	}
	return z, cost, nil
}

// run is the one fallback of the guard, for every algorithm: op on the
// primary (an engine, or a key prepared on it); on an error wrapping
// engine.ErrDevice (a device failure, or a result the algorithm's check
// before release found wrong: rsa.ErrFault, dsa.ErrFault, dh.ErrFault and
// engine/alg/ecdsa's all wrap it) the fault is counted once (Guard.fault),
// then op runs on the fallback (when not the zero E). op must release
// nothing unless it returns nil; each run of op draws its own blinding and
// nonces. A fallback that fails too gives an error wrapping both errors.
func run[E comparable](g *Guard, primary, fallback E, op func(E) error) error {
	err := op(primary)
	if err == nil || !errors.Is(err, engine.ErrDevice) {
		return err
	}
	g.fault(err)
	var none E
	if fallback == none {
		return err
	}
	if ferr := op(fallback); ferr != nil {
		return fmt.Errorf("guard: the fallback engine failed too (%w) after: %w", ferr, err)
	}
	return nil
}

// preparedKey is a key of engine/alg/rsa, engine/alg/dsa or engine/alg/dh: prepared
// for one engine, and for another by On.
type preparedKey[K any] interface {
	comparable
	On(engine.Engine) (K, error)
}

// keys is one private key prepared on a guard's engines: on the primary
// and, when there is one, on the fallback (the same key, by On).
type keys[K preparedKey[K]] struct {
	g                 *Guard
	primary, fallback K      // fallback: the zero K without one
	op                string // what its operation is called in the accounts
	bits              int    // the key's size, for the accounts
}

// newKeys prepares k, made on the primary, on the fallback too (if any);
// op and bits name its operations in the accounts (Guard.done).
func newKeys[K preparedKey[K]](g *Guard, op string, bits int, k K, err error, fallback engine.Engine) (keys[K], error) {
	if err != nil {
		return keys[K]{}, err
	}
	ks := keys[K]{g: g, primary: k, op: op, bits: bits}
	if fallback != nil {
		if ks.fallback, err = k.On(fallback); err != nil {
			return keys[K]{}, fmt.Errorf("guard: key on the fallback engine: %w", err)
		}
	}
	return ks, nil
}

// refused accounts for a key that could not be prepared on the way to its
// first operation (the operation was attempted and failed) and returns err.
func (g *Guard) refused(op string, bits int, start time.Time, err error) error {
	g.done(op, bits, engine.Cost{}, time.Since(start), err)
	return err
}

// do runs op through run: on the primary's key, and on the fallback's
// after a fault, and accounts for it (Guard.done). The cost is that of
// both attempts; with an error there is no output, whatever op returned.
func (ks keys[K]) do(op func(K) ([]byte, engine.Cost, error)) ([]byte, engine.Cost, error) {
	var (
		out  []byte
		cost engine.Cost
	)
	start := time.Now()
	err := run(ks.g, ks.primary, ks.fallback, func(k K) error {
		r, c, err := op(k)
		cost = cost.Add(c)
		out = r
		return err
	})
	ks.g.done(ks.op, ks.bits, cost, time.Since(start), err)
	if err != nil {
		return nil, cost, err
	}
	return out, cost, nil
}

// ecRoutes is what a guard can do with EC keys. The primary and the policy
// do not change: computed once, on first use.
type ecRoutes struct {
	once             sync.Once
	byCurve          map[string]ECRoute // the curves the guard can compute on
	minBits, maxBits int                // their order sizes (0, 0: none)
}

// EC returns how the guard computes on curve: on the primary when it is an
// engine.ECEngine listing the curve in Info().Curves (with the software
// engine behind it under fallback); else on the software engine under
// fallback; else not at all (false).
func (g *Guard) EC(curve string) (ECRoute, bool) {
	rt, ok := g.ecRoutes().byCurve[curve]
	return rt, ok
}

// ECOrderBits is the range of the order sizes of the curves the guard can
// compute on (0, 0: none).
func (g *Guard) ECOrderBits() (minBits, maxBits int) {
	r := g.ecRoutes()
	return r.minBits, r.maxBits
}

func (g *Guard) ecRoutes() *ecRoutes {
	r := &g.ec
	r.once.Do(func() {
		soft, _ := engine.As[engine.ECEngine](g.fallback)
		r.byCurve = map[string]ECRoute{}
		own, isEC := engine.As[engine.ECEngine](g.primary)
		for _, c := range ec.Curves() {
			var rt ECRoute
			switch {
			case isEC && slices.Contains(g.primary.Info().Curves, c.Name()):
				rt = ECRoute{g: g, curve: c.Name(), katName: "ec-" + c.Name(), Primary: own, Fallback: soft}
			case soft != nil && slices.Contains(soft.Info().Curves, c.Name()):
				rt = ECRoute{g: g, curve: c.Name(), katName: "ec-" + c.Name(), Primary: soft}
			default:
				continue
			}
			r.byCurve[c.Name()] = rt
			bits := c.OrderBits()
			if r.minBits == 0 || bits < r.minBits {
				r.minBits = bits
			}
			r.maxBits = max(r.maxBits, bits)
		}
	})
	return r
}

// meter adds up the cost an engine reports for the multiplications of one
// operation (engine/alg/ecdsa does not return it).
type meter struct {
	engine.ECEngine
	cost engine.Cost
}

// ScalarBaseMult is the engine's, with its cost recorded.
func (m *meter) ScalarBaseMult(ctx context.Context, curve string, k []byte) (x, y []byte, c engine.Cost, err error) {
	x, y, c, err = m.ECEngine.ScalarBaseMult(ctx, curve, k)
	m.cost = m.cost.Add(c)
	return x, y, c, err
}

// ScalarMult is the engine's, with its cost recorded.
func (m *meter) ScalarMult(ctx context.Context, curve string, k, px, py []byte) (x, y []byte, c engine.Cost, err error) {
	x, y, c, err = m.ECEngine.ScalarMult(ctx, curve, k, px, py)
	m.cost = m.cost.Add(c)
	return x, y, c, err
}
