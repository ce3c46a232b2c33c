package mont

import (
	"math/big"
	"testing"
)

// FuzzMontMul compares MontMul and MontSqr with math/big for any odd
// modulus and operands (reduced below the modulus first).
func FuzzMontMul(f *testing.F) {
	f.Add([]byte{0x0b}, []byte{3}, []byte{7})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, []byte{0xff, 0xfe}, []byte{0x12})
	f.Fuzz(func(t *testing.T, nb, xb, yb []byte) {
		if len(nb) > 600 {
			return
		}
		n := new(big.Int).SetBytes(nb)
		if n.Bit(0) == 0 || n.Cmp(big.NewInt(1)) <= 0 {
			if _, err := NewModulus(nb); err == nil {
				t.Fatalf("NewModulus(%x) accepted an invalid modulus", nb)
			}
			return
		}
		x := new(big.Int).Mod(new(big.Int).SetBytes(xb), n)
		y := new(big.Int).Mod(new(big.Int).SetBytes(yb), n)
		checkMontMul(t, n, x, y)
		m := mustModulus(t, n)
		z := make([]uint64, m.Limbs())
		m.Reduce(z, xb)
		if bigOf(z).Cmp(x) != 0 {
			t.Fatalf("Reduce(%x) mod %x = %x, want %x", xb, n, bigOf(z), x)
		}
	})
}
