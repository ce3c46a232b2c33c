package soft

import (
	"context"
	"fmt"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
)

// The software engine multiplies points with engine/arith/ec: fixed-window,
// complete-formula, constant-time scalar multiplication over per-curve
// Montgomery field arithmetic (see that package's documentation).

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
	x, y, err = cv.ScalarBaseMult(k)
	if err != nil {
		return nil, nil, engine.Cost{}, fmt.Errorf("soft: %s scalar base mult: %w", cv.Name(), err)
	}
	return x, y, engine.Cost{}, nil
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
