package ecdsatest

import (
	"fmt"

	"github.com/modexp-token/modexp-token/engine/arith/ec"
)

// Verify checks the raw r‖s signature of hash under the public point
// (x, y) on the named curve with the software curve (variable time), for
// the tests that check a signature the token or an engine made. It returns
// nil, or an error saying why (a bad point or a bad signature).
func Verify(curve string, x, y, hash, rs []byte) error {
	c, err := ec.CurveByName(curve)
	if err != nil {
		return err
	}
	if err := c.ECDSAVerifyVarTime(x, y, hash, rs); err != nil {
		return fmt.Errorf("ecdsatest: %s: %w", curve, err)
	}
	return nil
}
