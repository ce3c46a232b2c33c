package soft_test

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
)

// FuzzExp compares Engine.Exp (secret and public mode) with math/big for
// any modulus, base and exponent, including the refusals: an invalid
// modulus must be ErrInvalidModulus and a base not below it
// ErrOperandTooLarge.
func FuzzExp(f *testing.F) {
	f.Add([]byte{0x0b}, []byte{3}, []byte{7}, false)
	f.Add([]byte{0x01, 0x00, 0x01}, []byte{0x01, 0x00, 0x00}, []byte{}, true)
	f.Add(bytes.Repeat([]byte{0xff}, 65), []byte{0xff, 0xfe}, bytes.Repeat([]byte{0xa5}, 70), false)
	e := soft.New()
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, nb, base, exp []byte, public bool) {
		if len(nb) > 300 || len(exp) > 300 {
			return
		}
		n := new(big.Int).SetBytes(nb)
		m, err := e.NewModulus(nb)
		if n.Bit(0) == 0 || n.Cmp(big.NewInt(1)) <= 0 {
			if !errors.Is(err, engine.ErrInvalidModulus) {
				t.Fatalf("NewModulus(%x): error %v, want ErrInvalidModulus", nb, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("NewModulus(%x): %v", nb, err)
		}
		got, _, err := engine.ExpMode(ctx, e, m, base, exp, public)
		b := new(big.Int).SetBytes(base)
		if b.Cmp(n) >= 0 {
			if !errors.Is(err, engine.ErrOperandTooLarge) {
				t.Fatalf("base ≥ modulus: error %v, want ErrOperandTooLarge", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Exp: %v", err)
		}
		want := new(big.Int).Exp(b, new(big.Int).SetBytes(exp), n).FillBytes(make([]byte, (n.BitLen()+7)/8))
		if !bytes.Equal(got, want) {
			t.Fatalf("Exp(%x, %x) mod %x (public=%v) = %x, want %x", base, exp, nb, public, got, want)
		}
	})
}
