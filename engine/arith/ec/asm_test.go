package ec

import (
	"math/big"
	"math/bits"
	"testing"
)

// edgeOperands returns field elements of m that stress carries: 0, 1, 2,
// m−1, m−2, (m−1)/2, 2^64−1 and 2^(64j) (below m), plus random ones.
func edgeOperands[E limbs](t *testing.T, m *big.Int, random int) []E {
	var vals []*big.Int
	one := big.NewInt(1)
	vals = append(vals, big.NewInt(0), one, big.NewInt(2),
		new(big.Int).Sub(m, one), new(big.Int).Sub(m, big.NewInt(2)),
		new(big.Int).Rsh(m, 1), new(big.Int).SetUint64(^uint64(0)))
	for j := 1; 64*j < m.BitLen(); j++ {
		p := new(big.Int).Lsh(one, uint(64*j))
		vals = append(vals, p, new(big.Int).Sub(p, one))
	}
	r := testRand(t)
	for range random {
		vals = append(vals, randInt(r, m))
	}
	out := make([]E, len(vals))
	for i, v := range vals {
		bigToLimbs(&out[i], v)
	}
	return out
}

// TestMulASM compares the assembly products and squarings (when this CPU runs them)
// with the pure-Go ones and with math/big, for the P-256 field, the
// P-256 order and both secp256k1 moduli, on edge and random operands.
func TestMulASM(t *testing.T) {
	if !haveADX {
		t.Skip("no assembly products on this machine or build (pure Go only)")
	}
	random := 300
	if raceBuild {
		random = 40
	}
	for _, c := range Curves() {
		ci, ok := c.impl.(*curve[[4]uint64])
		if !ok {
			continue
		}
		for _, f := range []*modulus[[4]uint64]{&ci.fp, &ci.fn} {
			m := limbsToBig(&f.m)
			rInv := new(big.Int).ModInverse(new(big.Int).Lsh(big.NewInt(1), 256), m)
			ops := edgeOperands[[4]uint64](t, m, random)
			for i := range ops {
				for j := range ops {
					x, y := &ops[i], &ops[j]
					var got, ref [4]uint64
					if f.p256 {
						montMulP256ADX(&got, x, y, &f.m)
						montMulP256(&ref, x, y)
					} else {
						montMul4ADX(&got, x, y, &f.m, f.m0inv)
						montMul4(&ref, x, y, &f.m, f.m0inv)
					}
					if got != ref {
						t.Fatalf("%s mod %x: asm(%x, %x) = %x, Go = %x", c.Name(), m, *x, *y, got, ref)
					}
					if i < 20 || j < 20 { // math/big too, on the edge rows
						want := new(big.Int).Mul(limbsToBig(x), limbsToBig(y))
						want.Mul(want, rInv).Mod(want, m)
						if limbsToBig(&got).Cmp(want) != 0 {
							t.Fatalf("%s mod %x: asm(%x, %x) = %x, want %x", c.Name(), m, *x, *y, got, want)
						}
					}
				}
			}
			// Squarings.
			for _, x := range ops {
				var got, ref [4]uint64
				if f.p256 {
					montSqrP256ADX(&got, &x, &f.m)
					montSqrP256(&ref, &x)
				} else {
					montSqr4ADX(&got, &x, &f.m, f.m0inv)
					montSqr4(&ref, &x, &f.m, f.m0inv)
				}
				want := new(big.Int).Mul(limbsToBig(&x), limbsToBig(&x))
				want.Mul(want, rInv).Mod(want, m)
				if got != ref || limbsToBig(&got).Cmp(want) != 0 {
					t.Fatalf("%s mod %x: asm square of %x = %x, Go %x, want %x", c.Name(), m, x, got, ref, want)
				}
				z := x
				if f.p256 {
					montSqrP256ADX(&z, &z, &f.m)
				} else {
					montSqr4ADX(&z, &z, &f.m, f.m0inv)
				}
				if z != got {
					t.Fatalf("%s: in-place asm square of %x = %x, want %x", c.Name(), x, z, got)
				}
			}
			// One operand ≥ m (toMont and reduceBytes multiply a value < R
			// by R² mod m): x·y < m·R still holds.
			for _, y := range ops {
				x := [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
				var got [4]uint64
				if f.p256 {
					montMulP256ADX(&got, &x, &y, &f.m)
				} else {
					montMul4ADX(&got, &x, &y, &f.m, f.m0inv)
				}
				want := new(big.Int).Mul(limbsToBig(&x), limbsToBig(&y))
				want.Mul(want, rInv).Mod(want, m)
				if limbsToBig(&got).Cmp(want) != 0 {
					t.Fatalf("%s mod %x: asm(%x, %x) = %x, want %x", c.Name(), m, x, y, got, want)
				}
			}
			// Aliased output, as the field code calls it (z = x·x in place).
			for _, x := range ops[:20] {
				z, want := x, [4]uint64{}
				if f.p256 {
					montMulP256(&want, &x, &x)
					montMulP256ADX(&z, &z, &z, &f.m)
				} else {
					montMul4(&want, &x, &x, &f.m, f.m0inv)
					montMul4ADX(&z, &z, &z, &f.m, f.m0inv)
				}
				if z != want {
					t.Fatalf("%s: in-place asm square of %x = %x, want %x", c.Name(), x, z, want)
				}
			}
		}
	}
}

// TestInvVarTime compares the variable-time inversion with math/big on
// the field and order of every curve.
func TestInvVarTime(t *testing.T) {
	random := 200
	if raceBuild {
		random = 30
	}
	for _, c := range Curves() {
		check := func(m *big.Int, inv func(x *big.Int) *big.Int) {
			r := testRand(t)
			xs := []*big.Int{big.NewInt(1), big.NewInt(2), big.NewInt(3), new(big.Int).Sub(m, big.NewInt(1)),
				new(big.Int).Rsh(m, 1), new(big.Int).Lsh(big.NewInt(1), 64), new(big.Int).Lsh(big.NewInt(1), 200)}
			for range random {
				xs = append(xs, new(big.Int).Add(randInt(r, new(big.Int).Sub(m, big.NewInt(1))), big.NewInt(1)))
			}
			for _, x := range xs {
				want := new(big.Int).ModInverse(x, m)
				if got := inv(x); got.Cmp(want) != 0 {
					t.Fatalf("%s: %x⁻¹ mod %x = %x, want %x", c.Name(), x, m, got, want)
				}
			}
		}
		switch ci := c.impl.(type) {
		case *curve[[4]uint64]:
			for _, f := range []*modulus[[4]uint64]{&ci.fp, &ci.fn} {
				check(limbsToBig(&f.m), func(x *big.Int) *big.Int { return invVarTimeBig(f, x) })
			}
		case *curve[[6]uint64]:
			for _, f := range []*modulus[[6]uint64]{&ci.fp, &ci.fn} {
				check(limbsToBig(&f.m), func(x *big.Int) *big.Int { return invVarTimeBig(f, x) })
			}
		case *curve[[9]uint64]:
			for _, f := range []*modulus[[9]uint64]{&ci.fp, &ci.fn} {
				check(limbsToBig(&f.m), func(x *big.Int) *big.Int { return invVarTimeBig(f, x) })
			}
		}
	}
}

func invVarTimeBig[E limbs](f *modulus[E], x *big.Int) *big.Int {
	var xl, z E
	bigToLimbs(&xl, x)
	f.invVarTime(&z, &xl)
	return limbsToBig(&z)
}

// TestMul9ASM checks the nine-limb products against math/big: the P-521
// prime (montMulP521ADX, and mul9ADX + foldP521) and the P-521 order
// (mul9ADX + redc9), on edge and random operands, with the first operand
// also up to 2⁵⁷⁶ − 1 (toMont's case), and with z aliasing x.
func TestMul9ASM(t *testing.T) {
	if !haveADX {
		t.Skip("no assembly products on this machine or build (pure Go only)")
	}
	random := 60
	if raceBuild {
		random = 10
	}
	c, err := CurveByName("P-521")
	if err != nil {
		t.Fatal(err)
	}
	ci := c.impl.(*curve[[9]uint64])
	r576 := new(big.Int).Lsh(big.NewInt(1), 576)
	for _, f := range []*modulus[[9]uint64]{&ci.fp, &ci.fn} {
		m := limbsToBig(&f.m)
		rInv := new(big.Int).ModInverse(r576, m)
		ops := edgeOperands[[9]uint64](t, m, random)
		var wide [9]uint64 // 2⁵⁷⁶ − 1 and a random value below 2⁵⁷⁶
		for i := range wide {
			wide[i] = ^uint64(0)
		}
		var rnd [9]uint64
		bigToLimbs(&rnd, randInt(testRand(t), r576))
		xs := append([][9]uint64{wide, rnd}, ops...)
		for _, x := range xs {
			for _, y := range ops {
				want := new(big.Int).Mul(limbsToBig(&x), limbsToBig(&y))
				want.Mul(want, rInv).Mod(want, m)
				var prod [18]uint64
				mul9ADX(&prod, &x, &y)
				var got [9]uint64
				if f.p521 {
					montMulP521ADX(&got, &x, &y)
					var viaGo [9]uint64
					foldP521(&viaGo, &prod)
					if viaGo != got {
						t.Fatalf("P-521 p: asm %x, foldP521 %x", got, viaGo)
					}
					if less(&x, &f.m) == 1 {
						var old [9]uint64
						montMulP521(&old, &x, &y)
						if old != got {
							t.Fatalf("P-521 p: asm %x, montMulP521 %x", got, old)
						}
					}
					if x == y {
						var sq [9]uint64
						montSqrP521ADX(&sq, &x)
						if sq != got {
							t.Fatalf("P-521 p: square %x, product %x", sq, got)
						}
					}
					alias := x
					montMulP521ADX(&alias, &alias, &y)
					if alias != got {
						t.Fatalf("P-521 p: aliased result %x, want %x", alias, got)
					}
				} else {
					montMul9ADX(&got, &x, &y, &f.m, f.m0inv)
					var viaGo [9]uint64
					redc9(&viaGo, &prod, &f.m, f.m0inv)
					if viaGo != got {
						t.Fatalf("P-521 n: asm %x, redc9 %x", got, viaGo)
					}
					alias := x
					montMul9ADX(&alias, &alias, &y, &f.m, f.m0inv)
					if alias != got {
						t.Fatalf("P-521 n: aliased result %x, want %x", alias, got)
					}
				}
				if limbsToBig(&got).Cmp(want) != 0 {
					t.Fatalf("mod %x: mont(%x, %x) = %x, want %x", m, x, y, got, want)
				}
			}
		}
		if f.p521 { // squarings, in place too, also of x up to 2⁵⁷⁶ − 1
			for _, x := range xs {
				want := new(big.Int).Mul(limbsToBig(&x), limbsToBig(&x))
				want.Mul(want, rInv).Mod(want, m)
				got := x
				montSqrP521ADX(&got, &got)
				if limbsToBig(&got).Cmp(want) != 0 {
					t.Fatalf("P-521 p: sqr(%x) = %x, want %x", x, got, want)
				}
			}
		}
	}
}

// The Go references of the assembly reductions (mul_amd64.s), which the
// tests above compare with the assembly.

// foldP521 sets z = t·2⁻⁵⁷⁶ mod p for p = 2⁵²¹ − 1 and any 18-word t (the
// Montgomery reduction of a full product). With t = L + 2⁵⁷⁶·H (L, H of
// nine words) and 2⁵⁷⁶ ≡ 2⁵⁵, t·2⁻⁵⁷⁶ ≡ H + L·2⁻⁵⁵ ≡ H + (L >> 55) +
// (L mod 2⁵⁵)·2⁴⁶⁶: shifts and two additions, then the bits from 2⁵²¹
// up are folded back once and p is subtracted when the value is ≥ p.
// Constant time.
//
//go:norace
func foldP521(z *[9]uint64, t *[18]uint64) {
	const n = 9
	// a = L >> 55, below 2⁵²¹.
	var a [n]uint64
	for i := range n - 1 {
		a[i] = t[i]>>55 | t[i+1]<<9
	}
	a[n-1] = t[n-1] >> 55
	// plus (L mod 2⁵⁵)·2⁴⁶⁶ (466 = 7·64 + 18): into words 7 and 8.
	lo := t[0] & (1<<55 - 1)
	var c uint64
	a[7], c = bits.Add64(a[7], lo<<18, 0)
	a[8], _ = bits.Add64(a[8], lo>>46, c) // a < 2⁵²²: no carry out
	// plus H.
	var s [n]uint64
	c = 0
	for i := range n {
		s[i], c = bits.Add64(a[i], t[n+i], c)
	}
	// s + c·2⁵⁷⁶ < 2⁵⁷⁷: fold the bits from 2⁵²¹ up (less than 2⁵⁶).
	top := s[8]>>9 | c<<55
	s[8] &= 0x1ff
	s[0], c = bits.Add64(s[0], top, 0)
	for i := 1; i < n; i++ {
		s[i], c = bits.Add64(s[i], 0, c)
	}
	// s < 2⁵²¹ + 2⁵⁶: s ≥ p exactly when s + 1 reaches 2⁵²¹, and then
	// s − p = (s + 1) mod 2⁵²¹.
	var u [n]uint64
	u[0], c = bits.Add64(s[0], 1, 0)
	for i := 1; i < n; i++ {
		u[i], c = bits.Add64(s[i], 0, c)
	}
	mask := -(u[8] >> 9) // all ones: s ≥ p
	u[8] &= 0x1ff
	for i := range n {
		z[i] = u[i]&mask | s[i]&^mask
	}
}

// redc9 sets z = t·2⁻⁵⁷⁶ mod m for an 18-word t < m·2⁵⁷⁶ (the Montgomery
// reduction of a product), one q·m row per low word. Constant time.
//
//go:norace
func redc9(z *[9]uint64, t *[18]uint64, m *[9]uint64, m0inv uint64) {
	const n = 9
	var extra uint64 // the carry out of word i+8 of row i−1, at word i+9
	for i := range n {
		q := t[i] * m0inv
		var c uint64
		for j := range n {
			hi, lo := bits.Mul64(q, m[j])
			var cc uint64
			lo, cc = bits.Add64(lo, t[i+j], 0)
			hi += cc
			lo, cc = bits.Add64(lo, c, 0)
			hi += cc
			t[i+j], c = lo, hi
		}
		t[i+n], extra = bits.Add64(t[i+n], c, extra)
	}
	// t[9..17] + extra·2⁵⁷⁶ < 2m: subtract m once if it is ≥ m.
	var d [n]uint64
	var b uint64
	for i := range n {
		d[i], b = bits.Sub64(t[n+i], m[i], b)
	}
	_, b = bits.Sub64(extra, 0, b)
	mask := -b // all ones: below m, keep it
	for i := range n {
		z[i] = t[n+i]&mask | d[i]&^mask
	}
}
