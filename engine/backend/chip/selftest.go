package chip

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/randop"
)

// kat returns a deterministic odd n-bit modulus (top bit set), a base
// below it and an n-bit exponent, drawn from a fixed seed.
func kat(seed uint64, n int) (m, x, e *big.Int) {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	m = randOdd(r, n)
	x = randBits(r, n)
	x.Mod(x, m)
	e = randBits(r, n)
	return m, x, e
}

// The operand drawers, shared with the reproduction table (cmd/modexp-token/report).
var (
	randOdd  = randop.Odd
	randBits = randop.Bits
)

// selfTestExp compares e's exponentiations with math/big's at each size.
func selfTestExp(ctx context.Context, e engine.Engine, profile string, sizes []int) error {
	for _, n := range sizes {
		m, x, d := kat(0x5e1f7e57, n)
		mod, err := e.NewModulus(m.Bytes())
		if err != nil {
			return fmt.Errorf("chip: %s: self-test at %d bits: %w", profile, n, err)
		}
		got, _, err := e.Exp(ctx, mod, x.Bytes(), d.Bytes())
		if err != nil {
			return fmt.Errorf("chip: %s: self-test at %d bits: %w", profile, n, err)
		}
		want := fixed(new(big.Int).Exp(x, d, m), len(m.Bytes()))
		if !bytes.Equal(got, want) {
			return fmt.Errorf("chip: %s: self-test at %d bits: wrong result: %w", profile, n, engine.ErrDevice)
		}
	}
	return nil
}
