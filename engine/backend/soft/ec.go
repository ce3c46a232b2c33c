package soft

import (
	"context"
	"fmt"

	"filippo.io/nistec"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
)

// The software engine multiplies points with engine/arith/ec: fixed-window,
// complete-formula, constant-time scalar multiplication over per-curve
// Montgomery field arithmetic (see that package's documentation); k·G on
// P-256, the nonce point of every P-256 signature, is Go's P-256 assembly
// instead, as filippo.io/nistec exports it (p256BaseMult).

var _ engine.ECEngine = (*Engine)(nil)

func init() { supportedCurves = ec.Names() }

// softCurve resolves a curve name for the engine; an unknown curve is
// engine.ErrUnsupported.
func softCurve(ctx context.Context, op, name string) (*ec.Curve, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("soft: %s: %w", op, err)
	}
	c, err := ec.CurveByName(name)
	if err != nil {
		return nil, fmt.Errorf("soft: %s: %w: %w", op, engine.ErrUnsupported, err)
	}
	return c, nil
}

// ScalarBaseMult returns k·G on the named curve ("P-256", "P-384", "P-521",
// "secp256k1"), coordinates padded to the field's byte length. k is secret
// (big-endian, reduced mod the order) and does not leak through timing
// beyond its length. The cost is zero (software).
func (e *Engine) ScalarBaseMult(ctx context.Context, curve string, k []byte) (x, y []byte, c engine.Cost, err error) {
	cv, err := softCurve(ctx, "scalar base mult", curve)
	if err != nil {
		return nil, nil, engine.Cost{}, err
	}
	if cv.Name() == "P-256" && len(k) == cv.OrderByteLen() && cv.IsValidScalar(k) {
		x, y, err = p256BaseMult(k)
	} else {
		x, y, err = cv.ScalarBaseMult(k)
	}
	if err != nil {
		return nil, nil, engine.Cost{}, fmt.Errorf("soft: %s scalar base mult: %w", cv.Name(), err)
	}
	return x, y, engine.Cost{}, nil
}

// p256BaseMult is k·G on P-256 (k in [1, n−1], 32 bytes) by
// filippo.io/nistec, the exported copy of Go's crypto/internal/fips140/nistec:
// the fixed-base comb in amd64 and arm64 assembly, constant time, about
// 1.6 times engine/arith/ec's comb here (go test -run '^$' -bench
// ScalarBaseMult ./engine/backend/soft), and without crypto/ecdh's key
// objects (seven allocations, 2.7 µs a signature: MODEXP_CPUTIME=1 go test
// -run SignBreakdown -v ./engine/alg/ecdsa). Every signature made with the
// point is checked before release (engine/alg/ecdsa): by default the
// point is recomputed from the complement n − k, which selects other
// entries of the comb's table, so a transient fault of either
// multiplication or a corrupted table entry is caught (docs/THREATS.md);
// with ecdsa_check = "verify", the signature is verified by
// engine/arith/ec's own arithmetic. x and y share one allocation.
func p256BaseMult(k []byte) (x, y []byte, err error) {
	var p nistec.P256Point
	if _, err := p.ScalarBaseMult(k); err != nil {
		return nil, nil, fmt.Errorf("filippo.io/nistec: %w", err)
	}
	pub := p.Bytes() // 0x04 ‖ x ‖ y
	if len(pub) != 65 {
		return nil, nil, fmt.Errorf("filippo.io/nistec: k·G is the point at infinity")
	}
	return pub[1:33:33], pub[33:65:65], nil
}

// ScalarMult returns k·(px, py) on the named curve. The point must be on
// the curve (coordinates of the field's byte length, < p); k is secret
// and handled as in ScalarBaseMult.
func (e *Engine) ScalarMult(ctx context.Context, curve string, k, px, py []byte) (x, y []byte, c engine.Cost, err error) {
	cv, err := softCurve(ctx, "scalar mult", curve)
	if err != nil {
		return nil, nil, engine.Cost{}, err
	}
	x, y, err = cv.ScalarMult(k, px, py)
	if err != nil {
		return nil, nil, engine.Cost{}, fmt.Errorf("soft: %s scalar mult: %w", cv.Name(), err)
	}
	return x, y, engine.Cost{}, nil
}
