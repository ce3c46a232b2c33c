// Package ecdh is the EC Diffie–Hellman primitive (SEC 1 §3.3.1, the Z of
// PKCS #11's CKM_ECDH1_DERIVE) over any engine.ECEngine: the engine
// computes d·Q, and the checks before release are done here, once, for
// every engine, as engine/alg/ecdsa does for signatures.
//
// # The check before release
//
// A shared secret has no public check, so [Shared] verifies the engine's
// point twice: it must be a point of the curve (its coordinates of the
// field's length, satisfying the curve equation), and, unless the engine
// is the software arithmetic itself, equal to d·Q computed by
// engine/arith/ec (compared in constant time). A disagreement is an error
// wrapping [ErrFault] and engine.ErrDevice: engine/guard then redoes the
// agreement on the software engine. A wrong secret is never returned.
// The cross-check doubles the work of an agreement on a device.
//
// # What is not constant time
//
// Nothing here branches on d or on the secret beyond what engine/arith/ec
// and the engine do: the comparison is crypto/subtle's, and the y
// coordinate is wiped before return.
package ecdh

import (
	"context"
	"crypto/subtle"
	"fmt"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
)

// ErrFault reports an engine result that failed the check before release.
// It wraps engine.ErrDevice.
var ErrFault = fmt.Errorf("ecdh: wrong result from the engine: %w", engine.ErrDevice)

// Shared returns Z, the x-coordinate of d·(qx, qy) on curve c, computed by
// eng and checked before release (see the package comment). crossCheck
// asks for the comparison with the software result; the guard leaves it
// off only when eng is the software engine. d is the private scalar and
// (qx, qy) the peer's point, which the caller has checked is on c.
// Errors: the engine's, or one wrapping ErrFault.
func Shared(ctx context.Context, eng engine.ECEngine, c *ec.Curve, d, qx, qy []byte, crossCheck bool) ([]byte, error) {
	x, y, _, err := eng.ScalarMult(ctx, c.Name(), d, qx, qy)
	if err != nil {
		return nil, fmt.Errorf("ecdh: %s: %w", c.Name(), err)
	}
	defer clear(y)
	if len(x) != c.ByteLen() || len(y) != c.ByteLen() || !c.IsOnCurve(x, y) {
		return nil, fmt.Errorf("%w: d·Q is not a point of %s", ErrFault, c.Name())
	}
	if crossCheck {
		sx, sy, err := c.ScalarMult(d, qx, qy)
		if err != nil {
			return nil, fmt.Errorf("ecdh: %s in software: %w", c.Name(), err)
		}
		ok := subtle.ConstantTimeCompare(sx, x) & subtle.ConstantTimeCompare(sy, y)
		clear(sx)
		clear(sy)
		if ok != 1 {
			clear(x)
			return nil, fmt.Errorf("%w: d·Q on %s differs from the software result", ErrFault, c.Name())
		}
	}
	return x, nil
}
