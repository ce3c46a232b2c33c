package soft_test

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
)

// TestShortSecretExponent: a secret exponent shorter than the modulus,
// with and without leading zero bytes, and the empty one, give math/big's
// result through Exp and ExpPair (the engine processes an exponent over
// the byte length it is given, no longer padding it to the modulus).
func TestShortSecretExponent(t *testing.T) {
	ctx := context.Background()
	e := soft.New()
	r := rand.New(rand.NewPCG(21, 22))
	rnd := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	for _, bits := range []int{1024, 2048, 3072} {
		nb := rnd(bits / 8)
		nb[0] |= 0x80
		nb[len(nb)-1] |= 1
		n := new(big.Int).SetBytes(nb)
		m, err := e.NewModulus(nb)
		if err != nil {
			t.Fatal(err)
		}
		lead := rnd(40)
		lead[0], lead[1] = 0, 0
		for _, exp := range [][]byte{rnd(40), lead, make([]byte, 40), {0}, nil, rnd(17), rnd(bits/8 + 8)} {
			base := new(big.Int).Mod(new(big.Int).SetBytes(rnd(bits/8)), n).FillBytes(make([]byte, len(nb)))
			base2 := new(big.Int).Mod(new(big.Int).SetBytes(rnd(bits/8)), n).FillBytes(make([]byte, len(nb)))
			want := new(big.Int).Exp(new(big.Int).SetBytes(base), new(big.Int).SetBytes(exp), n).FillBytes(make([]byte, len(nb)))
			got, _, err := e.Exp(ctx, m, base, exp)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%d bits, %d-byte exponent %x: Exp wrong (err %v)", bits, len(exp), exp, err)
			}
			// A pair: the other exponent full length, so the two differ in length.
			exp2 := rnd(bits / 8)
			want2 := new(big.Int).Exp(new(big.Int).SetBytes(base2), new(big.Int).SetBytes(exp2), n).FillBytes(make([]byte, len(nb)))
			ra, rb, _, err := e.ExpPair(ctx, engine.ExpOp{M: m, Base: base, Exp: exp}, engine.ExpOp{M: m, Base: base2, Exp: exp2})
			if errors.Is(err, engine.ErrUnsupported) {
				continue // the kernel in use does not pair this size
			}
			if err != nil || !bytes.Equal(ra, want) || !bytes.Equal(rb, want2) {
				t.Fatalf("%d bits, %d-byte exponent: ExpPair wrong (err %v)", bits, len(exp), err)
			}
		}
	}
}
