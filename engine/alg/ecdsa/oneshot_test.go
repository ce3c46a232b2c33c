package ecdsa

import (
	"context"
	"fmt"
	"io"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
)

// The one-shot Sign and Verify the package's tests call: the product signs
// with a PrivateKey (NewPrivateKey, PrivateKey.Sign) and verifies with
// ec.Curve's ECDSAVerifyVarTime or an ec.PublicKey; tests of other packages
// use ecdsatest.Verify.

// Sign returns the raw r‖s signature of hash with the private scalar d on
// the named curve, k·G computed by eng. It is NewPrivateKey followed by
// PrivateKey.Sign; callers that sign repeatedly with one key keep the
// PrivateKey instead (it saves computing the public point each time).
func Sign(ctx context.Context, eng engine.ECEngine, curve string, d, hash []byte, rand io.Reader) ([]byte, error) {
	k, err := NewPrivateKey(curve, d)
	if err != nil {
		return nil, err
	}
	rs := make([]byte, 2*k.curve.OrderByteLen())
	// One signature: verifying without the table is cheaper than building it.
	if err := k.signTo(ctx, eng, rs, hash, rand, checkPlain); err != nil {
		return nil, err
	}
	return rs, nil
}

// Verify checks the raw r‖s signature of hash under the public point
// (pubX, pubY) on the named curve, in software (variable time: all inputs
// are public). It returns nil, or an error wrapping ErrInvalidSignature
// (bad signature) or ErrInvalidKey (bad point) or ec.ErrUnknownCurve.
func Verify(curve string, pubX, pubY, hash, rs []byte) error {
	c, err := ec.CurveByName(curve)
	if err != nil {
		return fmt.Errorf("ecdsa: %w", err)
	}
	if !c.IsOnCurve(pubX, pubY) {
		return fmt.Errorf("%w: %s public point not on the curve", ErrInvalidKey, c.Name())
	}
	if err := c.ECDSAVerifyVarTime(pubX, pubY, hash, rs); err != nil {
		return fmt.Errorf("ecdsa: verify: %w", err)
	}
	return nil
}
