package engine

import "context"

// ECEngine is implemented by engines that multiply points on named curves
// ("P-192", "P-224", "P-256", "P-384", "P-521", "secp256k1"; see Info.Curves). Points are
// affine, as big-endian coordinates padded to the field's byte length.
// ECDSA itself (nonces, mod-n arithmetic, verification before release)
// lives above the engines in engine/alg/ecdsa.
type ECEngine interface {
	Engine
	// ScalarBaseMult returns k·G. k is secret and reduced mod the order.
	ScalarBaseMult(ctx context.Context, curve string, k []byte) (x, y []byte, c Cost, err error)
	// ScalarMult returns k·(px, py). k is secret; the point must be on the curve.
	ScalarMult(ctx context.Context, curve string, k, px, py []byte) (x, y []byte, c Cost, err error)
}
