package enginetest

import (
	"context"
	"fmt"
	"math/big"
	"sync/atomic"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
)

// ECFaultModes are the faults an [ECFault] can apply to k·G, each a way a
// broken engine answers: off the curve, on the curve but wrong, or no
// point at all.
var ECFaultModes = []string{
	"off-curve",    // the last bit of x flipped
	"bit-flip",     // the point of k with one bit flipped, a different bit each call
	"k+1",          // (k+1)·G
	"double",       // 2k·G
	"negate",       // −k·G: the same x, so r is right
	"generator",    // G, whatever k
	"zero",         // both coordinates zero
	"short",        // x one byte short
	"device-error", // an error wrapping engine.ErrDevice
}

// ECFault wraps an engine for the tests of the algorithms above it
// (engine/alg/ecdsa, engine/guard): its ScalarBaseMult answers with the
// fault named by Mode (one of [ECFaultModes], "" for none). The other
// methods are the wrapped engine's.
type ECFault struct {
	engine.ECEngine
	Mode  string
	calls atomic.Int64
}

// Info is the wrapped engine's, named ecfault:<Mode>.
func (f *ECFault) Info() engine.Info {
	i := f.ECEngine.Info()
	i.Name = "ecfault:" + f.Mode
	return i
}

// Calls is the number of ScalarBaseMult calls so far.
func (f *ECFault) Calls() int64 { return f.calls.Load() }

// ScalarBaseMult is [engine.ECEngine]'s, faulted by Mode.
func (f *ECFault) ScalarBaseMult(ctx context.Context, curve string, k []byte) ([]byte, []byte, engine.Cost, error) {
	n := f.calls.Add(1)
	x, y, cost, err := f.ECEngine.ScalarBaseMult(ctx, curve, k)
	if err != nil || f.Mode == "" {
		return x, y, cost, err
	}
	c, err := ec.CurveByName(curve)
	if err != nil {
		return nil, nil, cost, err
	}
	kk := new(big.Int).SetBytes(k)
	mult := func(s *big.Int) ([]byte, []byte, engine.Cost, error) {
		s.Mod(s, c.Params().N)
		x, y, err := c.ScalarBaseMult(s.FillBytes(make([]byte, c.OrderByteLen())))
		return x, y, cost, err
	}
	switch f.Mode {
	case "off-curve":
		x = append([]byte(nil), x...)
		x[len(x)-1] ^= 1
	case "bit-flip":
		return mult(new(big.Int).SetBit(kk, int(n)%c.OrderBits(), kk.Bit(int(n)%c.OrderBits())^1))
	case "k+1":
		return mult(kk.Add(kk, big.NewInt(1)))
	case "double":
		return mult(kk.Lsh(kk, 1))
	case "negate":
		ny := new(big.Int).Sub(c.Params().P, new(big.Int).SetBytes(y))
		y = ny.FillBytes(make([]byte, len(y)))
	case "generator":
		return mult(big.NewInt(1))
	case "zero":
		x, y = make([]byte, len(x)), make([]byte, len(y))
	case "short":
		x = x[1:]
	case "device-error":
		return nil, nil, cost, fmt.Errorf("ecfault: %w", engine.ErrDevice)
	default:
		return nil, nil, cost, fmt.Errorf("ecfault: unknown mode %q", f.Mode)
	}
	return x, y, cost, nil
}
