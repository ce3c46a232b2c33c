package mont

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/engine/arith/randop"
)

// ifmaEmuFuncs are one emulated kernel and its lookup (ifma_emu_test.go).
type ifmaEmuFuncs struct {
	amm func(mem []uint64, z, a, b, m, k0 int)
	sel func(mem []uint64, out, table, idx int)
}

// emuKernels returns the emulated kernels for C chains of L digits
// (registers of the width in use for L) as slab functions (word offsets;
// the emulator takes byte addresses).
func emuKernels(L, C int) (ammFunc, selFunc, bool) { return emuKernelsW(L, C, ifmaWidth[L]) }

// emuKernelsW is emuKernels for registers of W lanes.
func emuKernelsW(L, C, W int) (ammFunc, selFunc, bool) {
	f, ok := ifmaEmu[[3]int{L, C, W}]
	if !ok {
		return nil, nil, false
	}
	return func(s []uint64, z, a, b, m, k0 int) { f.amm(s, 8*z, 8*a, 8*b, 8*m, 8*k0) },
		func(s []uint64, out, table, idx int) { f.sel(s, 8*out, 8*table, 8*idx) }, true
}

// skipWithoutIFMA skips a test that needs the IFMA hardware, naming what
// is missing, or fails it under MODEXP_REQUIRE_IFMA=1 (make test-ifma).
func skipWithoutIFMA(t testing.TB) {
	t.Helper()
	if haveIFMA {
		return
	}
	if os.Getenv("MODEXP_REQUIRE_IFMA") == "1" {
		t.Fatalf("MODEXP_REQUIRE_IFMA=1 but the IFMA kernel cannot run here: it needs %s (CPU features seen: %v)", ifmaNeeds(), cpuFeatures())
	}
	t.Skipf("IFMA kernel not tested here: it needs %s (CPU features seen: %v)", ifmaNeeds(), cpuFeatures())
}

// TestRequireIFMA fails under MODEXP_REQUIRE_IFMA=1 when the IFMA kernel
// cannot run or is not the one selected (make test-ifma).
func TestRequireIFMA(t *testing.T) {
	if os.Getenv("MODEXP_REQUIRE_IFMA") != "1" {
		t.Skip("set MODEXP_REQUIRE_IFMA=1 (make test-ifma)")
	}
	skipWithoutIFMA(t)
	if err := ifmaSelfTest(); err != nil {
		t.Fatalf("IFMA self-test: %v", err)
	}
	if ki := Kernels(); ki.Name != "ifma" {
		t.Fatalf("kernel in use %q, want ifma (%+v)", ki.Name, ki)
	}
}

// ifmaCase is a random modulus for L digits with operands below 2m.
type ifmaCase struct {
	n, a, b *big.Int
	L       int
}

// randIFMACase draws a modulus of bits bits (4n ≤ 2^(52L)) and operands
// a, b < 2n; edge selects boundary operands.
func randIFMACase(r *rand.Rand, bits, L, edge int) ifmaCase {
	n := randop.Odd(r, bits)
	n2 := new(big.Int).Lsh(n, 1)
	a := new(big.Int).Mod(randop.Bits(r, bits+1), n2)
	b := new(big.Int).Mod(randop.Bits(r, bits+1), n2)
	switch edge {
	case 1:
		a.Sub(n2, big.NewInt(1))
		b.Sub(n2, big.NewInt(1))
	case 2:
		a.SetInt64(0)
	case 3:
		b.SetInt64(1)
	case 4:
		a.Sub(n, big.NewInt(1))
		b.Set(n)
	}
	return ifmaCase{n, a, b, L}
}

func digitsOf(x *big.Int, L int) []uint64 {
	return to52(make([]uint64, L), natOfLen(x, (L*52+63)/64))
}

func natOfLen(x *big.Int, k int) []uint64 {
	z := make([]uint64, k)
	if SetBytes(z, x.Bytes()) != 1 {
		panic("natOfLen: too large")
	}
	return z
}

func bigOfDigits(d []uint64) *big.Int {
	return bigOf(from52(make([]uint64, (len(d)*52+63)/64), d))
}

// checkAMM checks z = AMM(a, b) for the case: normalised digits, below
// 2n, congruent to a·b·2^(−52L).
func checkAMM(t testing.TB, what string, c ifmaCase, z []uint64) {
	t.Helper()
	for i, d := range z {
		if d > mask52 {
			t.Fatalf("%s: digit %d = %#x not normalised", what, i, d)
		}
	}
	got := bigOfDigits(z)
	if got.Cmp(new(big.Int).Lsh(c.n, 1)) >= 0 {
		t.Fatalf("%s: result %x not below 2n", what, got)
	}
	R := new(big.Int).Lsh(big.NewInt(1), uint(52*c.L))
	want := new(big.Int).Mul(c.a, c.b)
	want.Mul(want, new(big.Int).ModInverse(R, c.n)).Mod(want, c.n)
	if new(big.Int).Mod(got, c.n).Cmp(want) != 0 {
		t.Fatalf("%s: %x·%x mod %x = %x, want ≡ %x", what, c.a, c.b, c.n, got, want)
	}
}

// ifmaKernelSets are the kernels compared by the tests below: the model
// everywhere, the emulator everywhere, the assembly where it runs.
func ifmaKernelSets(t testing.TB, L, C int) map[string][2]any {
	return ifmaKernelSetsW(t, L, C, ifmaWidth[L])
}

// ifmaKernelSetsW is ifmaKernelSets for registers of W lanes.
func ifmaKernelSetsW(t testing.TB, L, C, W int) map[string][2]any {
	sets := map[string][2]any{}
	ra, rs := refKernels(L, C)
	sets["model"] = [2]any{ra, rs}
	ea, es, ok := emuKernelsW(L, C, W)
	if !ok {
		t.Fatalf("no emulated kernel for %d digits, %d chains", L, C)
	}
	sets["emu"] = [2]any{ea, es}
	if haveIFMA {
		aa, as, ok := ifmaASMKernelsW(L, C, W)
		if !ok {
			t.Fatalf("no assembly kernel for %d digits, %d chains", L, C)
		}
		sets["asm"] = [2]any{aa, as}
	}
	return sets
}

// TestIFMAKernelsAgree runs the model, the emulated instruction sequence
// and (on IFMA hardware) the assembly on random and boundary operands of
// every size, one and two chains, and checks each result with math/big
// and against each other digit for digit.
func TestIFMAKernelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for v := range ifmaEmu {
		L, C, W := v[0], v[1], v[2]
		for _, bits := range []int{52*L - 2 - r.IntN(20), 64 * ((52*L - 2) / 64)} {
			sets := ifmaKernelSetsW(t, L, C, W)
			iters := 12
			if raceEnabled {
				iters = 6 // every boundary case once
			}
			for it := 0; it < iters; it++ {
				cs := make([]ifmaCase, C)
				CL := C * L
				s := make([]uint64, 4*CL+C)
				a, b, m, k0 := 0, CL, 2*CL, 3*CL
				for c := range cs {
					cs[c] = randIFMACase(r, bits, L, it%6)
					copy(s[a+c*L:], digitsOf(cs[c].a, L))
					copy(s[b+c*L:], digitsOf(cs[c].b, L))
					copy(s[m+c*L:], digitsOf(cs[c].n, L))
					n0 := cs[c].n.Uint64() // the low word
					inv := n0
					for range 6 {
						inv *= 2 - n0*inv
					}
					s[k0+c] = -inv & mask52
				}
				var ref []uint64
				for _, name := range []string{"model", "emu", "asm"} {
					set, ok := sets[name]
					if !ok {
						continue
					}
					amm := set[0].(ammFunc)
					w := slices.Clone(s)
					w = append(w, make([]uint64, CL)...)
					amm(w, 4*CL+C, a, b, m, k0)
					z := w[4*CL+C:]
					for c := range cs {
						checkAMM(t, name, cs[c], z[c*L:c*L+L])
					}
					if ref == nil {
						ref = slices.Clone(z)
					} else if !slices.Equal(z, ref) {
						t.Fatalf("%s: digits differ from the model", name)
					}
					// In place (z = a) gives the same.
					amm(w, a, a, b, m, k0)
					if !slices.Equal(w[a:a+CL], ref) {
						t.Fatalf("%s: in-place product differs", name)
					}
				}
			}
			// Table lookups: every index, both chains.
			CL := C * L
			s := make([]uint64, ifmaEntries*CL+CL+C)
			for i := range s {
				s[i] = r.Uint64()
			}
			table, out, idx := 0, ifmaEntries*CL, ifmaEntries*CL+CL
			for j := 0; j < ifmaEntries; j++ {
				for c := 0; c < C; c++ {
					s[idx+c] = uint64((j + 11*c) % ifmaEntries)
				}
				for name, set := range sets {
					sel := set[1].(selFunc)
					sel(s, out, table, idx)
					for c := 0; c < C; c++ {
						e := int(s[idx+c])
						want := s[table+e*CL+c*L : table+e*CL+c*L+L]
						if !slices.Equal(s[out+c*L:out+c*L+L], want) {
							t.Fatalf("%s: %d digits, chain %d: lookup of entry %d wrong", name, L, c, e)
						}
					}
				}
			}
		}
	}
}

// TestIFMAExp runs the radix-2^52 exponentiation on the model, the
// emulator and the assembly, alone and paired, against math/big.
func TestIFMAExp(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	for _, bits := range []int{1024, 1536, 2048, 3072, 4096} {
		L := ifmaDigits(Limbs(bits / 8))
		for _, C := range []int{1, 2} {
			if _, ok := ifmaEmu[[3]int{L, C, ifmaWidth[L]}]; !ok {
				continue // no pairs at this size
			}
			if raceEnabled && bits > 2048 {
				continue
			}
			for name, set := range ifmaKernelSets(t, L, C) {
				if name == "emu" && (bits > 1024 || raceEnabled) {
					continue // slow; the model covers these, and the digits are compared above
				}
				ms := make([]*Modulus, C)
				zs, xs := make([][]uint64, C), make([][]uint64, C)
				es := make([][]byte, C)
				ns, xb := make([]*big.Int, C), make([]*big.Int, C)
				for c := range ms {
					ns[c] = randop.Odd(r, bits-c*3)
					ms[c] = mustModulus(t, ns[c])
					xb[c] = new(big.Int).Mod(randop.Bits(r, bits), ns[c])
					if c == 1 {
						xb[c].SetInt64(0)
					}
					xs[c] = natOf(ms[c], xb[c])
					zs[c] = make([]uint64, ms[c].Limbs())
					es[c] = randop.Bits(r, bits+64-8*c).Bytes()
				}
				if C == 1 && name == "model" {
					es[0] = nil // an empty exponent: x^0 = 1
				}
				expIFMA(ms, zs, xs, es, set[0].(ammFunc), set[1].(selFunc))
				for c := range ms {
					want := new(big.Int).Exp(xb[c], new(big.Int).SetBytes(es[c]), ns[c])
					if got := bigOf(zs[c]); got.Cmp(want) != 0 {
						t.Fatalf("%s, %d bits, %d chains: chain %d = %x, want %x", name, bits, C, c, got, want)
					}
				}
			}
		}
	}
}

// TestExpPair checks ExpPair through the dispatcher: it pairs only what
// the IFMA kernels handle, and gets it right.
func TestExpPair(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	for _, name := range []string{"purego", "ifma", "ifma-model"} {
		t.Run(name, func(t *testing.T) {
			withKernel(t, name, func() {
				for _, bits := range [][2]int{{1024, 1024}, {1024, 1020}, {2048, 2047}, {1024, 1536}, {512, 512}} {
					n1, n2 := randop.Odd(r, bits[0]), randop.Odd(r, bits[1])
					m1, m2 := mustModulus(t, n1), mustModulus(t, n2)
					x1, x2 := new(big.Int).Mod(randop.Bits(r, bits[0]), n1), new(big.Int).Mod(randop.Bits(r, bits[1]), n2)
					e1, e2 := randop.Bits(r, bits[0]+64).Bytes(), randop.Bits(r, bits[1]).Bytes()
					z1, z2 := make([]uint64, m1.Limbs()), make([]uint64, m2.Limbs())
					ok := ExpPair(m1, m2, z1, natOf(m1, x1), e1, z2, natOf(m2, x2), e2)
					wantOK := name != "purego" && m1.l52 != 0 && m1.l52 == m2.l52
					if ok != wantOK {
						t.Fatalf("%v bits: ExpPair = %v, want %v", bits, ok, wantOK)
					}
					if !ok {
						continue
					}
					if got, want := bigOf(z1), new(big.Int).Exp(x1, new(big.Int).SetBytes(e1), n1); got.Cmp(want) != 0 {
						t.Fatalf("%v bits: first = %x, want %x", bits, got, want)
					}
					if got, want := bigOf(z2), new(big.Int).Exp(x2, new(big.Int).SetBytes(e2), n2); got.Cmp(want) != 0 {
						t.Fatalf("%v bits: second = %x, want %x", bits, got, want)
					}
				}
			})
		})
	}
}

// TestRadix52Conversions checks to52/from52 round trips and R52² mod n.
func TestRadix52Conversions(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	for _, bits := range []int{1024, 1536, 2048} {
		n := randop.Odd(r, bits)
		m := mustModulus(t, n)
		x := new(big.Int).Mod(randop.Bits(r, bits), n)
		d := to52(make([]uint64, m.l52), natOf(m, x))
		if bigOfDigits(d).Cmp(x) != 0 {
			t.Fatalf("%d bits: to52 lost the value", bits)
		}
		if got := bigOf(from52(make([]uint64, m.Limbs()), d)); got.Cmp(x) != 0 {
			t.Fatalf("%d bits: from52 = %x, want %x", bits, got, x)
		}
		R := new(big.Int).Lsh(big.NewInt(1), uint(52*m.l52))
		if got, want := bigOfDigits(m.rr52), new(big.Int).Mod(new(big.Int).Mul(R, R), n); got.Cmp(want) != 0 {
			t.Fatalf("%d bits: rr52 = %x, want %x", bits, got, want)
		}
		if 4*bits > 4*52*m.l52-8 { // 4n ≤ R52
			t.Fatalf("%d bits: %d digits leave no room for lazy reduction", bits, m.l52)
		}
	}
}

// TestKernelSelection checks MODEXP_KERNEL handling.
func TestKernelSelection(t *testing.T) {
	oldASM, oldIFMA, oldInfo := useASM, useIFMA, kernelInfo
	defer func() { useASM, useIFMA, kernelInfo = oldASM, oldIFMA, oldInfo }()
	for _, tc := range []struct {
		req, want string
		err       bool
	}{
		{"", map[bool]string{true: "ifma", false: map[bool]string{true: "adx", false: "purego"}[haveASM]}[haveIFMA], false},
		{"purego", "purego", false},
		{"adx", map[bool]string{true: "adx", false: "purego"}[haveASM], !haveASM},
		{"ifma", map[bool]string{true: "ifma", false: map[bool]string{true: "adx", false: "purego"}[haveASM]}[haveIFMA], !haveIFMA},
		{"fast", map[bool]string{true: "ifma", false: map[bool]string{true: "adx", false: "purego"}[haveASM]}[haveIFMA], true},
	} {
		ki := selectKernel(tc.req)
		if ki.Name != tc.want || Kernel() != tc.want || (ki.Err != nil) != tc.err {
			t.Errorf("MODEXP_KERNEL=%q: %+v, Kernel() %q; want %q, error %v", tc.req, ki, Kernel(), tc.want, tc.err)
		}
		if ki.Err != nil {
			t.Logf("MODEXP_KERNEL=%q: %v", tc.req, ki.Err)
		}
	}
}

// FuzzAMM52 compares the model, the emulator and (on IFMA hardware) the
// assembly with math/big for any modulus of the kernels' sizes and
// operands below 2n.
func FuzzAMM52(f *testing.F) {
	f.Add(uint8(0), []byte{0xff}, []byte{3}, []byte{7})
	f.Add(uint8(1), []byte{0x80, 1}, []byte{0xff, 0xfe}, []byte{0x12})
	f.Add(uint8(2), []byte{0xff, 0xff, 0xff, 0xff}, []byte{}, []byte{0xff, 0xff})
	f.Fuzz(func(t *testing.T, size uint8, nb, ab, bb []byte) {
		bits := []int{1024, 1536, 2048}[int(size)%3]
		L := ifmaDigits(bits / 64)
		// Stretch the seed bytes over the modulus length; top bit set, odd.
		stretch := func(b []byte, nbytes int) *big.Int {
			out := make([]byte, nbytes)
			for i := range out {
				if len(b) > 0 {
					out[i] = b[i%len(b)] ^ byte(i*131)
				}
			}
			return new(big.Int).SetBytes(out)
		}
		n := stretch(nb, bits/8)
		n.SetBit(n, bits-1, 1)
		n.SetBit(n, 0, 1)
		n2 := new(big.Int).Lsh(n, 1)
		c := ifmaCase{n, new(big.Int).Mod(stretch(ab, bits/8+1), n2), new(big.Int).Mod(stretch(bb, bits/8+1), n2), L}
		s := make([]uint64, 5*L+1)
		copy(s[0:], digitsOf(c.a, L))
		copy(s[L:], digitsOf(c.b, L))
		copy(s[2*L:], digitsOf(c.n, L))
		m := mustModulus(t, n)
		s[3*L] = m.k052
		var ref []uint64
		for name, set := range ifmaKernelSets(t, L, 1) {
			w := slices.Clone(s)
			set[0].(ammFunc)(w, 3*L+1, 0, L, 2*L, 3*L)
			z := w[3*L+1 : 4*L+1]
			checkAMM(t, name, c, z)
			if ref == nil {
				ref = slices.Clone(z)
			} else if !slices.Equal(ref, z) {
				t.Fatalf("%s: digits differ", name)
			}
		}
	})
}

// TestKernelSelfTestFailure checks that a kernel failing its self-test is
// not used: auto falls back to adx and says why; a forced ifma is an
// error.
func TestKernelSelfTestFailure(t *testing.T) {
	skipWithoutIFMA(t)
	oldASM, oldIFMA, oldCheck := useASM, useIFMA, ifmaCheck
	defer func() { useASM, useIFMA, ifmaCheck = oldASM, oldIFMA, oldCheck }()
	ifmaCheck = func() error { return errors.New("injected failure") }
	ki := selectKernel("auto")
	if ki.Name != "adx" || ki.Err != nil || len(ki.Notes) != 1 || !strings.Contains(ki.Notes[0], "injected failure") {
		t.Fatalf("auto with a failing IFMA self-test: %+v", ki)
	}
	ki = selectKernel("ifma")
	if ki.Name != "adx" || ki.Err == nil || !errors.Is(ki.Err, ErrKernel) {
		t.Fatalf("ifma with a failing self-test: %+v", ki)
	}
	t.Logf("note: %s; error: %v", ki.Notes[0], ki.Err)
}
