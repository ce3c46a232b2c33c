// Package rsa is the RSA private and public operation over any engine.
package rsa

// NOTE: temporary stubs fixing the API the token calls; replaced by the
// implementation. Signature changes must be made together with token/.

import (
	"context"
	"errors"
	"io"
	"math/big"

	"github.com/modexp-token/modexp-token/engine"
)

// Sentinel errors.
var (
	// ErrInputRange: the input is not below the modulus.
	ErrInputRange = errors.New("rsa: input out of range")
	// ErrFault: the engine's result failed the check before release.
	ErrFault = errors.New("rsa: engine result failed verification")
	// ErrInvalidKey: inconsistent or unsupported key.
	ErrInvalidKey = errors.New("rsa: invalid key")
)

// PrivateKey holds the key's numbers. Dp, Dq, Qinv may be nil (computed).
type PrivateKey struct {
	N            *big.Int
	E            int
	D, P, Q      *big.Int
	Dp, Dq, Qinv *big.Int
}

// Options select how private operations run.
type Options struct {
	Fallback         engine.Engine // if non-nil, retried on when the engine's result fails the check
	ExponentBlinding bool          // d_p + k·(p−1) with a fresh 64-bit k per operation
}

// Key is a private key prepared for one engine (moduli set up, blinding
// state). Safe for concurrent use.
type Key struct{}

// NewKey validates priv and prepares it for eng.
func NewKey(eng engine.Engine, priv *PrivateKey, opts Options) (*Key, error) {
	return nil, ErrInvalidKey
}

// Private returns c^d mod n (big-endian, modulus length), computed with CRT
// and blinding on the engine and checked with the public key before release.
func (k *Key) Private(ctx context.Context, c []byte) ([]byte, engine.Cost, error) {
	return nil, engine.Cost{}, ErrInvalidKey
}

// Public returns m^e mod n (big-endian, modulus length) for the public key
// (n, e). Variable time: only public data.
func Public(n *big.Int, e int, m []byte) ([]byte, error) { return nil, ErrInvalidKey }

// GenerateKey makes a bits-long RSA key with public exponent e, testing
// primality on eng (FIPS 186-5 checks: |p−q|, size of d).
func GenerateKey(ctx context.Context, eng engine.Engine, random io.Reader, bits, e int) (*PrivateKey, error) {
	return nil, ErrInvalidKey
}
