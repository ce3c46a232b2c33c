package mont

import (
	"bytes"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/modexp-token/modexp-token/engine/arith/randop"
)

func natOf(m *Modulus, x *big.Int) []uint64 {
	z := make([]uint64, m.Limbs())
	if SetBytes(z, x.Bytes()) != 1 {
		panic("natOf: too large")
	}
	return z
}

func bigOf(x []uint64) *big.Int {
	b := make([]byte, 8*len(x))
	FillBytes(b, x)
	return new(big.Int).SetBytes(b)
}

// testSizes covers one-limb moduli, limb boundaries and RSA sizes.
var testSizes = []int{2, 3, 63, 64, 65, 127, 128, 129, 255, 512, 521, 1023, 1024, 1536, 2048, 3072, 4096}

func mustModulus(t testing.TB, n *big.Int) *Modulus {
	t.Helper()
	m, err := NewModulus(n.Bytes())
	if err != nil {
		t.Fatalf("NewModulus(%x): %v", n, err)
	}
	return m
}

func TestModulusConstants(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, bits := range testSizes {
		for range 5 {
			n := randop.Odd(r, bits)
			m := mustModulus(t, n)
			R := new(big.Int).Lsh(big.NewInt(1), uint(64*m.Limbs()))
			wantRR := new(big.Int).Mod(new(big.Int).Mul(R, R), n)
			if got := bigOf(m.rr); got.Cmp(wantRR) != 0 {
				t.Fatalf("%d bits: RR = %x, want %x", bits, got, wantRR)
			}
			if got, want := bigOf(m.one), new(big.Int).Mod(R, n); got.Cmp(want) != 0 {
				t.Fatalf("%d bits: one = %x, want %x", bits, got, want)
			}
			if m.BitLen() != n.BitLen() || !bytes.Equal(m.Bytes(), n.Bytes()) {
				t.Fatalf("%d bits: BitLen/Bytes mismatch", bits)
			}
			if m.n[0]*-m.n0inv != 1 {
				t.Fatalf("%d bits: n0inv wrong", bits)
			}
		}
	}
}

func TestNewModulusInvalid(t *testing.T) {
	for _, b := range [][]byte{nil, {0}, {0, 0}, {1}, {0, 1}, {2}, {1, 0}, {0xff, 0xfe}} {
		if _, err := NewModulus(b); err != ErrInvalidModulus {
			t.Errorf("NewModulus(%x) = %v, want ErrInvalidModulus", b, err)
		}
	}
	if _, err := NewModulus([]byte{0, 0, 3}); err != nil {
		t.Errorf("NewModulus(3 with leading zeros): %v", err)
	}
}

// checkMontMul compares MontMul and MontSqr with math/big for one triple.
func checkMontMul(t testing.TB, n, x, y *big.Int) {
	t.Helper()
	m := mustModulus(t, n)
	k := m.Limbs()
	R := new(big.Int).Lsh(big.NewInt(1), uint(64*k))
	Rinv := new(big.Int).ModInverse(R, n)
	want := new(big.Int).Mul(x, y)
	want.Mul(want, Rinv).Mod(want, n)
	xs, ys := natOf(m, x), natOf(m, y)
	z := make([]uint64, k)
	tt := make([]uint64, m.ScratchLen())
	m.MontMul(z, xs, ys, tt)
	if got := bigOf(z); got.Cmp(want) != 0 {
		t.Fatalf("MontMul(%x, %x) mod %x = %x, want %x", x, y, n, got, want)
	}
	want2 := new(big.Int).Mul(x, x)
	want2.Mul(want2, Rinv).Mod(want2, n)
	m.MontSqr(z, xs, tt)
	if got := bigOf(z); got.Cmp(want2) != 0 {
		t.Fatalf("MontSqr(%x) mod %x = %x, want %x", x, n, got, want2)
	}
	// Generic squaring regardless of size threshold.
	montSqrGeneric(z, xs, m.n, m.n0inv, tt)
	if got := bigOf(z); got.Cmp(want2) != 0 {
		t.Fatalf("montSqrGeneric(%x) mod %x = %x, want %x", x, n, got, want2)
	}
	// Every kernel directly (the dispatcher above uses only one): the
	// assembly kernel, where there is one, must agree with math/big too.
	for _, kc := range kernels() {
		kc.mul(z, xs, ys, m.n, m.n0inv, tt)
		if got := bigOf(z); got.Cmp(want) != 0 {
			t.Fatalf("%s kernel: MontMul(%x, %x) mod %x = %x, want %x", kc.name, x, y, n, got, want)
		}
		kc.mul(z, xs, xs, m.n, m.n0inv, tt)
		if got := bigOf(z); got.Cmp(want2) != 0 {
			t.Fatalf("%s kernel: square(%x) mod %x = %x, want %x", kc.name, x, n, got, want2)
		}
	}
	if haveASM {
		montSqrASM(z, xs, m.n, m.n0inv, tt)
		if got := bigOf(z); got.Cmp(want2) != 0 {
			t.Fatalf("montSqrASM(%x) mod %x = %x, want %x", x, n, got, want2)
		}
	}
	// Aliasing z = x.
	copy(z, xs)
	m.MontMul(z, z, ys, tt)
	if got := bigOf(z); got.Cmp(want) != 0 {
		t.Fatalf("aliased MontMul = %x, want %x", got, want)
	}
}

func TestMontMul(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, bits := range testSizes {
		for range 20 {
			n := randop.Odd(r, bits)
			nm1 := new(big.Int).Sub(n, big.NewInt(1))
			x := new(big.Int).Mod(randop.Bits(r, bits), n)
			y := new(big.Int).Mod(randop.Bits(r, bits), n)
			checkMontMul(t, n, x, y)
			checkMontMul(t, n, nm1, nm1)
			checkMontMul(t, n, big.NewInt(0), y)
			checkMontMul(t, n, nm1, big.NewInt(1))
		}
	}
	// All-ones moduli stress every carry.
	for _, limbs := range []int{1, 2, 8, 32} {
		n := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(64*limbs)), big.NewInt(1))
		nm1 := new(big.Int).Sub(n, big.NewInt(1))
		checkMontMul(t, n, nm1, nm1)
	}
}

func TestExp(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, bits := range testSizes {
		if raceEnabled && bits > 1024 {
			continue
		}
		// Sizes above 1024 bits are covered again through the engine by
		// the conformance suite; here they get one modulus and fewer
		// operands so the package tests stay fast under -race.
		iters, ebits := 4, []int{0, 1, 2, 17, 64, 300, bits}
		if bits > 1024 {
			iters, ebits = 1, []int{0, 1, 17, bits}
		}
		for range iters {
			n := randop.Odd(r, bits)
			m := mustModulus(t, n)
			for _, x := range []*big.Int{big.NewInt(0), big.NewInt(1), new(big.Int).Sub(n, big.NewInt(1)), new(big.Int).Mod(randop.Bits(r, bits), n)} {
				for _, eb := range ebits {
					if eb > 64 && x.BitLen() <= 1 {
						continue // long exponents: non-trivial bases only
					}
					e := randop.Bits(r, eb)
					eBytes := e.Bytes()
					if eb%3 == 0 { // leading zero bytes must not matter
						eBytes = append([]byte{0, 0}, eBytes...)
					}
					want := new(big.Int).Exp(x, e, n)
					z := make([]uint64, m.Limbs())
					m.Exp(z, natOf(m, x), eBytes)
					if got := bigOf(z); got.Cmp(want) != 0 {
						t.Fatalf("Exp(%x, %x) mod %x = %x, want %x", x, e, n, got, want)
					}
					clear(z)
					m.ExpVarTime(z, natOf(m, x), eBytes)
					if got := bigOf(z); got.Cmp(want) != 0 {
						t.Fatalf("ExpVarTime(%x, %x) mod %x = %x, want %x", x, e, n, got, want)
					}
				}
			}
		}
	}
}

func TestReduceAddSub(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, bits := range testSizes {
		for range 10 {
			n := randop.Odd(r, bits)
			m := mustModulus(t, n)
			for _, xb := range []int{0, 1, bits - 1, bits, bits + 1, 2 * bits, 3*bits + 5} {
				x := randop.Bits(r, xb)
				z := make([]uint64, m.Limbs())
				buf := append([]byte{0}, x.Bytes()...)
				m.Reduce(z, buf)
				if got, want := bigOf(z), new(big.Int).Mod(x, n); got.Cmp(want) != 0 {
					t.Fatalf("Reduce(%x) mod %x = %x, want %x", x, n, got, want)
				}
			}
			a := new(big.Int).Mod(randop.Bits(r, bits), n)
			b := new(big.Int).Mod(randop.Bits(r, bits), n)
			z := make([]uint64, m.Limbs())
			m.ModAdd(z, natOf(m, a), natOf(m, b))
			if got, want := bigOf(z), new(big.Int).Mod(new(big.Int).Add(a, b), n); got.Cmp(want) != 0 {
				t.Fatalf("ModAdd = %x, want %x", got, want)
			}
			m.ModSub(z, natOf(m, a), natOf(m, b))
			if got, want := bigOf(z), new(big.Int).Mod(new(big.Int).Sub(a, b), n); got.Cmp(want) != 0 {
				t.Fatalf("ModSub = %x, want %x", got, want)
			}
			p := make([]uint64, 2*m.Limbs())
			Mul(p, natOf(m, a), natOf(m, b))
			if got, want := bigOf(p), new(big.Int).Mul(a, b); got.Cmp(want) != 0 {
				t.Fatalf("Mul = %x, want %x", got, want)
			}
		}
	}
}

func TestBytesHelpers(t *testing.T) {
	z := make([]uint64, 2)
	if SetBytes(z, []byte{1, 2, 3}) != 1 || z[0] != 0x010203 || z[1] != 0 {
		t.Fatalf("SetBytes small = %x", z)
	}
	long := make([]byte, 17)
	long[0] = 1
	if SetBytes(z, long) != 0 {
		t.Fatal("SetBytes did not report overflow")
	}
	long[0] = 0
	long[16] = 9
	if SetBytes(z, long) != 1 || z[0] != 9 {
		t.Fatal("SetBytes with leading zeros")
	}
	b := make([]byte, 3)
	if FillBytes(b, []uint64{0x01020304}) != 0 {
		t.Fatal("FillBytes did not report overflow")
	}
	if FillBytes(b, []uint64{0x020304}) != 1 || !bytes.Equal(b, []byte{2, 3, 4}) {
		t.Fatalf("FillBytes = %x", b)
	}
	if Less([]uint64{1, 2}, []uint64{2, 2}) != 1 || Less([]uint64{2, 2}, []uint64{2, 2}) != 0 || Less([]uint64{0, 3}, []uint64{9, 2}) != 0 {
		t.Fatal("Less")
	}
	if Equal([]uint64{1, 2}, []uint64{1, 2}) != 1 || Equal([]uint64{1, 2}, []uint64{1, 3}) != 0 {
		t.Fatal("Equal")
	}
	if IsZero([]uint64{0, 0}) != 1 || IsZero([]uint64{0, 1}) != 0 {
		t.Fatal("IsZero")
	}
}
