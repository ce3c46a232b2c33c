package ec

import (
	"math/big"
	"testing"
)

// p256Impl returns the four-limb implementation of P-256.
func p256Impl(t testing.TB) *curve[[4]uint64] {
	t.Helper()
	c, err := CurveByName("P-256")
	if err != nil {
		t.Fatal(err)
	}
	ci, ok := c.impl.(*curve[[4]uint64])
	if !ok {
		t.Fatal("P-256 is not four limbs")
	}
	return ci
}

// p256Order returns the scalar modulus of P-256.
func p256Order(t testing.TB) *modulus[[4]uint64] {
	t.Helper()
	f := &p256Impl(t).fn
	if limbsToBig(&f.m).Cmp(n256) != 0 || f.sg == nil {
		t.Fatal("P-256 order not found, or without the divstep inversion")
	}
	return f
}

// checkInv compares f.inv (by divsteps for the P-256 prime and order)
// of the plain x < m with exp by m − 2 and with math/big's ModInverse (0
// for x = 0).
func checkInv(t *testing.T, f *modulus[[4]uint64], x *big.Int) {
	t.Helper()
	m := limbsToBig(&f.m)
	var xl, xm, z1, z2, zp [4]uint64
	bigToLimbs(&xl, x)
	f.toMont(&xm, &xl)
	f.inv(&z1, &xm)
	f.exp(&z2, &xm, &f.mm2)
	if z1 != z2 {
		t.Fatalf("inv(%x) mod %x = %x, exp by m−2 gives %x", x, m, z1, z2)
	}
	f.fromMont(&zp, &z1)
	want := new(big.Int).ModInverse(x, m)
	if want == nil {
		want = new(big.Int)
	}
	if got := limbsToBig(&zp); got.Cmp(want) != 0 {
		t.Fatalf("inv(%x) mod %x = %x, want %x", x, m, got, want)
	}
}

// TestInvN256 checks the P-256 order's inversion on edge values
// (0, 1, 2, n − 1, n − 2, every 2^k, every 2^k − 1 below n) and on random
// ones.
func TestInvN256(t *testing.T) {
	f := p256Order(t)
	one := big.NewInt(1)
	tests := []struct {
		name string
		xs   func() []*big.Int
	}{
		{"small", func() []*big.Int { return []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(2), big.NewInt(3)} }},
		{"top", func() []*big.Int {
			return []*big.Int{new(big.Int).Sub(n256, one), new(big.Int).Sub(n256, big.NewInt(2))}
		}},
		{"powers", func() []*big.Int {
			var xs []*big.Int
			for k := range 256 {
				p := new(big.Int).Lsh(one, uint(k))
				xs = append(xs, p, new(big.Int).Sub(p, one))
			}
			return xs
		}},
		{"random", func() []*big.Int {
			r := testRand(t)
			var xs []*big.Int
			for range 500 {
				xs = append(xs, randInt(r, n256))
			}
			return xs
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, x := range tt.xs() {
				checkInv(t, f, x)
			}
		})
	}
}

// FuzzInvN256 compares the P-256 order's inversion with exp by n − 2 and
// math/big on x mod n.
func FuzzInvN256(f *testing.F) {
	f.Add([]byte{1})
	f.Add(new(big.Int).Sub(n256, big.NewInt(1)).Bytes())
	f.Add(make([]byte, 32))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 32 {
			b = b[:32]
		}
		x := new(big.Int).SetBytes(b)
		x.Mod(x, n256)
		checkInv(t, p256Order(t), x)
	})
}

// BenchmarkInvN256 times the P-256 order's inversion in Montgomery form:
// by divsteps (fn.inv) against the generic exponentiation by n − 2.
func BenchmarkInvN256(b *testing.B) {
	f := p256Order(b)
	var x, xm, z [4]uint64
	bigToLimbs(&x, randInt(testRand(b), n256))
	f.toMont(&xm, &x)
	b.Run("Divsteps", func(b *testing.B) {
		for b.Loop() {
			f.inv(&z, &xm)
		}
	})
	b.Run("Exp", func(b *testing.B) {
		for b.Loop() {
			f.exp(&z, &xm, &f.mm2)
		}
	})
}
