package chip

import (
	"context"
	"math/big"
	"math/rand/v2"
	"testing"
)

// The simulators compute some loops in closed form; these tests run the
// chips' loops literally and check that the closed forms are the same
// function, bit for bit.

// bitSerialLoop is Cryptech's montprod as the FSM runs it: for each of the
// 32L bits of B, add A if the bit is set, add N if odd, halve.
func bitSerialLoop(a, b, n *big.Int, L int) *big.Int {
	s := new(big.Int)
	for i := 0; i < 32*L; i++ {
		if b.Bit(i) == 1 {
			s.Add(s, a)
		}
		if s.Bit(0) == 1 {
			s.Add(s, n)
		}
		s.Rsh(s, 1)
	}
	return s
}

func TestBitSerialClosedForm(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, n := range []int{2, 5, 31, 32, 33, 64, 100, 256, 521} {
		m := randOdd(r, n)
		bs := newBitSerial(m, cryptech2015Words(n))
		two := new(big.Int).Lsh(m, 1)
		for range 20 {
			a := new(big.Int).Mod(randBits(r, n+1), two)
			b := new(big.Int).Mod(randBits(r, n+1), two)
			want := bitSerialLoop(a, b, m, bs.L)
			got := bs.montprod(a, b)
			if got.Cmp(want) != 0 {
				t.Fatalf("%d bits: closed form %x, loop %x", n, got, want)
			}
			if got.Cmp(two) >= 0 {
				t.Fatalf("%d bits: montprod left the range [0, 2N)", n)
			}
		}
	}
}

// wordSerialMont is a literal word-by-word (32-bit, CIOS-like) Montgomery
// product with the final subtraction, as PUKCC and ModExpA7 compute it.
func wordSerialMont(a, b, m *big.Int, L int) *big.Int {
	w := new(big.Int).Lsh(big.NewInt(1), 32)
	m0inv := new(big.Int).ModInverse(new(big.Int).Mod(m, w), w)
	m0inv.Sub(w, m0inv) // −m⁻¹ mod 2³²
	s := new(big.Int)
	for i := 0; i < L; i++ {
		ai := new(big.Int).Rsh(a, uint(32*i))
		ai.Mod(ai, w)
		s.Add(s, new(big.Int).Mul(ai, b))
		q := new(big.Int).Mod(s, w)
		q.Mul(q, m0inv)
		q.Mod(q, w)
		s.Add(s, q.Mul(q, m))
		s.Rsh(s, 32)
	}
	if s.Cmp(m) >= 0 {
		s.Sub(s, m)
	}
	return s
}

func TestMontgomeryClosedForm(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{3, 32, 33, 96, 255, 512, 1025} {
		m := randOdd(r, n)
		mm := newMontMod(m)
		for range 20 {
			a := new(big.Int).Mod(randBits(r, n), m)
			b := new(big.Int).Mod(randBits(r, n), m)
			if got, want := mm.mont(a, b), wordSerialMont(a, b, m, mm.L); got.Cmp(want) != 0 {
				t.Fatalf("%d bits: closed form %x, word loop %x", n, got, want)
			}
		}
	}
}

// TestOrupMultiplier checks the radix-32 multiplier's invariant: from
// partially reduced inputs it returns S ≡ A·B (mod m) with 0 ≤ S < 2m, the
// quotient estimate never overshooting.
func TestOrupMultiplier(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{2, 9, 10, 11, 12, 63, 64, 65, 127, 128, 200, 512, 561, 1024} {
		m := randOdd(r, n)
		p := newOrupMod(m)
		two := new(big.Int).Lsh(m, 1)
		z := make([]uint64, p.k)
		for range 30 {
			a := new(big.Int).Mod(randBits(r, n+1), two)
			b := new(big.Int).Mod(randBits(r, n+1), two)
			p.mul(z, toWords(a, p.k), toWords(b, p.k), orupMinNi(n))
			s := fromWords(z)
			if s.Cmp(two) >= 0 {
				t.Fatalf("%d bits: S = %x ≥ 2m", n, s)
			}
			want := new(big.Int).Mul(a, b)
			want.Mod(want, m)
			if new(big.Int).Mod(s, m).Cmp(want) != 0 {
				t.Fatalf("%d bits: S ≢ A·B", n)
			}
		}
	}
}

// TestSlidingWindowCounts checks the operation counts the PUKCC cost is
// made of: every exponent position squared, one product per window, and
// 2^(W−1) table products for W > 1.
func TestSlidingWindowCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	m := randOdd(r, 512)
	mm := newMontMod(m)
	x := new(big.Int).Mod(randBits(r, 512), m)
	for w := 1; w <= 4; w++ {
		for _, e := range []*big.Int{randBits(r, 512), big.NewInt(0), big.NewInt(1), big.NewInt(0xffff)} {
			nbits := expBits(e.BitLen(), mm.L)
			z, ops, err := slidingExp(context.Background(), mm, x, e, w, nbits)
			if err != nil {
				t.Fatal(err)
			}
			if z.Cmp(new(big.Int).Exp(x, e, m)) != 0 {
				t.Fatalf("W=%d: wrong result", w)
			}
			windows := 0
			for i := nbits - 1; i >= 0; {
				if e.Bit(i) == 0 {
					i--
					continue
				}
				l := min(w, i+1)
				for e.Bit(i-l+1) == 0 {
					l--
				}
				windows++
				i -= l
			}
			table := 0
			if w > 1 {
				table = 1 << (w - 1)
			}
			if ops.sqr != nbits || ops.mul != windows || ops.table != table || ops.conv != 2 {
				t.Errorf("W=%d e=%x: ops %+v, want sqr %d mul %d table %d conv 2", w, e, ops, nbits, windows, table)
			}
		}
	}
}
