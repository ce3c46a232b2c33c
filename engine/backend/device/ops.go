package device

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"sync"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire"
)

// modulus is the client's prepared modulus: just its bytes, checked. The
// device is stateless; the modulus travels with every request.
type modulus struct {
	n    []byte // without leading zeros
	bits int
}

func (m *modulus) BitLen() int   { return m.bits }
func (m *modulus) Bytes() []byte { return slices.Clone(m.n) }

// bitLen is the length in bits of a big-endian integer without leading zeros.
func bitLen(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	return (len(b)-1)*8 + bits.Len8(b[0])
}

// expBits is the exponent length a request is predicted with: the bit
// length of a public exponent, the whole byte length of a secret one.
func expBits(exp []byte, public bool) int {
	if public {
		return bitLen(exp)
	}
	return 8 * len(exp)
}

func trim(b []byte) []byte {
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	return b
}

// NewModulus checks that n is odd, > 1 and within the device's limit.
func (e *Engine) NewModulus(n []byte) (engine.Modulus, error) {
	n = trim(n)
	v := new(big.Int).SetBytes(n)
	if len(n) == 0 || n[len(n)-1]&1 == 0 || v.BitLen() < 2 {
		return nil, fmt.Errorf("device: modulus: %w", engine.ErrInvalidModulus)
	}
	if v.BitLen() > e.limits.maxModBits {
		return nil, fmt.Errorf("device: modulus of %d bits (device max %d): %w", v.BitLen(), e.limits.maxModBits, engine.ErrOperandTooLarge)
	}
	return &modulus{n: slices.Clone(n), bits: v.BitLen()}, nil
}

// cost reads the cost fields of an answer.
func cost(f *wire.Frame) engine.Cost {
	var c engine.Cost
	if v, ok, err := f.Uint(wire.TagCycles); ok && err == nil {
		c.Cycles = v
	}
	if v, ok, err := f.Uint(wire.TagDeviceNS); ok && err == nil && v <= math.MaxInt64 {
		c.Device = time.Duration(v)
	}
	if v, ok, err := f.Float(wire.TagEnergy); ok && err == nil && v >= 0 && !math.IsInf(v, 0) {
		c.Energy = v
	}
	return c
}

// badAnswer is a well-framed but unusable answer: the device is at fault.
func (e *Engine) badAnswer(op wire.Op, format string, args ...any) error {
	err := fmt.Errorf("device: %s: %v: %s: %w", e.cfg.Name, op, fmt.Sprintf(format, args...), engine.ErrDevice)
	e.br.done(time.Now(), false, failure, err)
	return err
}

// result checks the result field t (RESULT or RESULT2): exactly the
// modulus length, below the modulus.
func (e *Engine) result(resp *wire.Frame, t wire.Tag, n []byte) ([]byte, error) {
	name := "RESULT"
	if t == wire.TagResult2 {
		name = "RESULT2"
	}
	r, ok := resp.Get(t)
	if !ok {
		return nil, e.badAnswer(resp.Op, "no %s", name)
	}
	if len(r) != len(n) {
		return nil, e.badAnswer(resp.Op, "%s of %d bytes for a %d-byte modulus", name, len(r), len(n))
	}
	if bytes.Compare(r, n) >= 0 { // same length: byte order is numeric order
		return nil, e.badAnswer(resp.Op, "%s not below the modulus", name)
	}
	return r, nil // the frame's own buffer, used by no one else
}

// expOperands checks one exponentiation's operands against the device's
// limits and returns them without leading zeros, except a secret exponent:
// it keeps the caller's length (public; the value is not), which the
// device's software engine processes in full (see engine.Engine's Exp).
func (e *Engine) expOperands(m engine.Modulus, base, exp []byte, public bool) (*modulus, []byte, []byte, error) {
	dm, ok := m.(*modulus)
	if !ok {
		pm, err := e.NewModulus(m.Bytes())
		if err != nil {
			return nil, nil, nil, err
		}
		dm = pm.(*modulus)
	}
	base = trim(base)
	if len(base) > len(dm.n) || len(base) == len(dm.n) && bytes.Compare(base, dm.n) >= 0 {
		return nil, nil, nil, fmt.Errorf("device: exp: base not below the modulus: %w", engine.ErrOperandTooLarge)
	}
	if public {
		exp = trim(exp)
	}
	if len(exp) > wire.MaxOperand {
		return nil, nil, nil, fmt.Errorf("device: exponent of %d bytes: %w", len(exp), engine.ErrOperandTooLarge)
	}
	return dm, base, exp, nil
}

// expMode returns base^exp mod m on the device.
func (e *Engine) expMode(ctx context.Context, m engine.Modulus, base, exp []byte, public bool) ([]byte, engine.Cost, error) {
	dm, base, exp, err := e.expOperands(m, base, exp, public)
	if err != nil {
		return nil, engine.Cost{}, err
	}
	req := wire.NewRequest(wire.OpModExp, 0).Add(wire.TagMod, dm.n).Add(wire.TagBase, base).Add(wire.TagExp, exp)
	if public {
		req.AddU8(wire.TagMode, wire.ModePublic)
	}
	resp, err := e.call(ctx, req, e.cost.ModExp(dm.bits, expBits(exp, public)))
	if err != nil {
		return nil, engine.Cost{}, err
	}
	r, err := e.result(resp, wire.TagResult, dm.n)
	return r, cost(resp), err
}

// Exp is [engine.Engine]'s: the exponent is secret.
func (e *Engine) Exp(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return e.expMode(ctx, m, base, exp, false)
}

// ExpVarTime is [engine.Engine]'s: the exponent is public.
func (e *Engine) ExpVarTime(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return e.expMode(ctx, m, base, exp, true)
}

// ExpPair returns a.Base^a.Exp mod a.M and b.Base^b.Exp mod b.M. A device
// whose INFO lists MODEXP_PAIR gets both in one request (one round trip;
// the device decides whether to run them at once); with another device, or
// when the two differ in MODE, they are two MODEXP requests in flight
// together.
func (e *Engine) ExpPair(ctx context.Context, a, b engine.ExpOp) (ra, rb []byte, c engine.Cost, err error) {
	if !e.pairOp || a.Public != b.Public {
		var (
			cb engine.Cost
			eb error
			wg sync.WaitGroup
		)
		wg.Go(func() { rb, cb, eb = engine.ExpMode(ctx, e, b.M, b.Base, b.Exp, b.Public) })
		ra, c, err = engine.ExpMode(ctx, e, a.M, a.Base, a.Exp, a.Public)
		wg.Wait()
		c = c.Add(cb)
		if err == nil {
			err = eb
		}
		if err != nil {
			return nil, nil, c, err
		}
		return ra, rb, c, nil
	}
	ma, baseA, expA, err := e.expOperands(a.M, a.Base, a.Exp, a.Public)
	if err != nil {
		return nil, nil, engine.Cost{}, err
	}
	mb, baseB, expB, err := e.expOperands(b.M, b.Base, b.Exp, b.Public)
	if err != nil {
		return nil, nil, engine.Cost{}, err
	}
	req := wire.NewRequest(wire.OpModExpPair, 0).
		Add(wire.TagMod, ma.n).Add(wire.TagBase, baseA).Add(wire.TagExp, expA).
		Add(wire.TagMod2, mb.n).Add(wire.TagBase2, baseB).Add(wire.TagExp2, expB)
	if a.Public {
		req.AddU8(wire.TagMode, wire.ModePublic)
	}
	// Predicted as one after the other: what a busy device does.
	predicted := e.cost.ModExp(ma.bits, expBits(expA, a.Public)) + e.cost.ModExp(mb.bits, expBits(expB, b.Public))
	resp, err := e.call(ctx, req, predicted)
	if err != nil {
		return nil, nil, engine.Cost{}, err
	}
	if ra, err = e.result(resp, wire.TagResult, ma.n); err != nil {
		return nil, nil, cost(resp), err
	}
	if rb, err = e.result(resp, wire.TagResult2, mb.n); err != nil {
		return nil, nil, cost(resp), err
	}
	return ra, rb, cost(resp), nil
}

// expCRT returns base^d mod p·q on the device (native CRT).
func (e *Engine) expCRT(ctx context.Context, k *engine.CRTKey, base []byte) ([]byte, engine.Cost, error) {
	p, q := trim(k.P), trim(k.Q)
	n := new(big.Int).Mul(new(big.Int).SetBytes(p), new(big.Int).SetBytes(q))
	if n.BitLen() > e.limits.maxCRTBits {
		return nil, engine.Cost{}, fmt.Errorf("device: CRT modulus of %d bits (device max %d): %w", n.BitLen(), e.limits.maxCRTBits, engine.ErrOperandTooLarge)
	}
	base = trim(base)
	if new(big.Int).SetBytes(base).Cmp(n) >= 0 {
		return nil, engine.Cost{}, fmt.Errorf("device: exp crt: base not below p·q: %w", engine.ErrOperandTooLarge)
	}
	req := wire.NewRequest(wire.OpModExpCRT, 0).Add(wire.TagBase, base).Add(wire.TagP, p).Add(wire.TagQ, q).
		Add(wire.TagDP, trim(k.DP)).Add(wire.TagDQ, trim(k.DQ)).Add(wire.TagQInv, trim(k.QInv))
	resp, err := e.call(ctx, req, e.cost.ModExpCRT(n.BitLen()))
	if err != nil {
		return nil, engine.Cost{}, err
	}
	r, err := e.result(resp, wire.TagResult, n.FillBytes(make([]byte, (n.BitLen()+7)/8)))
	return r, cost(resp), err
}

// ecMul asks for k·P (k·G when px is nil) and checks the answer: both
// coordinates of the field's length, below p, and not the all-zero pair
// (never an affine point of the curves served).
func (e *Engine) ecMul(ctx context.Context, curve string, k, px, py []byte) (x, y []byte, c engine.Cost, err error) {
	cv := wire.LookupCurve(curve)
	if cv == nil || !slices.Contains(e.info.Curves, curve) {
		return nil, nil, c, fmt.Errorf("device: curve %q: %w", curve, engine.ErrUnsupported)
	}
	k = trim(k)
	if len(k) > cv.FieldBytes {
		return nil, nil, c, fmt.Errorf("device: scalar of %d bytes on %s: %w", len(k), curve, engine.ErrOperandTooLarge)
	}
	req := wire.NewRequest(wire.OpECMul, 0).AddString(wire.TagCurve, curve).Add(wire.TagScalar, k)
	if px != nil {
		req.Add(wire.TagPX, px).Add(wire.TagPY, py)
	}
	resp, err := e.call(ctx, req, e.cost.ECMul(cv.P.BitLen()))
	if err != nil {
		return nil, nil, c, err
	}
	c = cost(resp)
	rx, okx := resp.Get(wire.TagRX)
	ry, oky := resp.Get(wire.TagRY)
	if !okx || !oky || len(rx) != cv.FieldBytes || len(ry) != cv.FieldBytes {
		return nil, nil, c, e.badAnswer(resp.Op, "malformed point")
	}
	X, Y := new(big.Int).SetBytes(rx), new(big.Int).SetBytes(ry)
	if X.Cmp(cv.P) >= 0 || Y.Cmp(cv.P) >= 0 {
		return nil, nil, c, e.badAnswer(resp.Op, "coordinate not below p")
	}
	if X.Sign() == 0 && Y.Sign() == 0 {
		return nil, nil, c, e.badAnswer(resp.Op, "all-zero point")
	}
	return slices.Clone(rx), slices.Clone(ry), c, nil
}

// Ping sends PING with payload and checks the echo: one round trip, no
// arithmetic (a liveness check, and the measure of the protocol's own
// overhead).
func (e *Engine) Ping(ctx context.Context, payload []byte) error {
	req := wire.NewRequest(wire.OpPing, 0)
	if payload != nil {
		req.Add(wire.TagPayload, payload)
	}
	resp, err := e.call(ctx, req, 0)
	if err != nil {
		return err
	}
	if got, _ := resp.Get(wire.TagPayload); !bytes.Equal(got, payload) {
		return e.badAnswer(resp.Op, "PING echo differs")
	}
	return nil
}

// SelfTest runs the device's own known-answer tests (SELFTEST), then
// client-side ones: MODEXP at several widths up to the device's limit (and
// native CRT, and k·G on each curve), checked against math/big and
// crypto/ecdh. A device that is wrong only above some width fails here.
func (e *Engine) SelfTest(ctx context.Context) error {
	if _, err := e.call(ctx, wire.NewRequest(wire.OpSelfTest, 0), 0); err != nil {
		return fmt.Errorf("device: self-test: %w", err)
	}
	if err := e.kat(ctx); err != nil {
		e.br.done(time.Now(), false, failure, err)
		return err
	}
	return nil
}

// The client has every ability on its type; Has says which its device
// has (INFO).
var (
	_ engine.PairEngine = (*Engine)(nil)
	_ engine.CRTEngine  = (*Engine)(nil)
	_ engine.ECEngine   = (*Engine)(nil)
	_ engine.Limited    = (*Engine)(nil)
)

// Has is [engine.Limited]'s: native CRT when the device's INFO lists
// MODEXP_CRT, point multiplication when it lists curves; pairs always
// (one MODEXP_PAIR request, or two MODEXP requests in flight together).
func (e *Engine) Has(a engine.Ability) bool {
	switch a {
	case engine.AbilityCRT:
		return e.crt
	case engine.AbilityEC:
		return len(e.info.Curves) > 0
	}
	return true
}

// ExpCRT returns base^d mod p·q using the device's native CRT (an error
// wrapping engine.ErrUnsupported when the device has none).
func (e *Engine) ExpCRT(ctx context.Context, k *engine.CRTKey, base []byte) ([]byte, engine.Cost, error) {
	if !e.crt {
		return nil, engine.Cost{}, fmt.Errorf("device: %s: no native CRT: %w", e.cfg.Name, engine.ErrUnsupported)
	}
	return e.expCRT(ctx, k, base)
}

// ScalarBaseMult returns k·G on the device.
func (e *Engine) ScalarBaseMult(ctx context.Context, curve string, k []byte) (x, y []byte, c engine.Cost, err error) {
	return e.ecMul(ctx, curve, k, nil, nil)
}

// ScalarMult returns k·(px, py) on the device.
func (e *Engine) ScalarMult(ctx context.Context, curve string, k, px, py []byte) (x, y []byte, c engine.Cost, err error) {
	if px == nil || py == nil {
		return nil, nil, c, fmt.Errorf("device: scalar mult: missing point")
	}
	return e.ecMul(ctx, curve, k, px, py)
}
