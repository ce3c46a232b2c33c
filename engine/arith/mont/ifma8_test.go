package mont

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine/arith/randop"
)

// batchEmuFuncs are one emulated 8-lane kernel and its lookup blocks
// (ifma8_emu_test.go).
type batchEmuFuncs struct {
	amm func(mem []uint64, z, a, b, m, k0, t int)
	ams func(mem []uint64, z, a, m, k0 int) // nil: none
	sel []func(mem []uint64, out, table, idx int)
}

// batchEmuSquare returns the emulated squaring kernel for L digits as a
// slab function, nil where there is none.
func batchEmuSquare(L int) batchAMSFunc {
	f := batchEmu[L].ams
	if f == nil {
		return nil
	}
	return func(s []uint64, z, a, m, k0 int) { f(s, 8*z, 8*a, 8*m, 8*k0) }
}

// batchEmuKernels returns the emulated batch kernels for L digits as slab
// functions (word offsets; the emulator takes byte addresses).
func batchEmuKernels(L int) (batchAMMFunc, batchSelFunc, bool) {
	f, ok := batchEmu[L]
	if !ok {
		return nil, nil, false
	}
	return func(s []uint64, z, a, b, m, k0, t int) { f.amm(s, 8*z, 8*a, 8*b, 8*m, 8*k0, 8*t) },
		func(s []uint64, out, table, idx int) {
			for _, f := range f.sel {
				f(s, 8*out, 8*table, 8*idx)
			}
		}, true
}

// batchKernelSets are the batch kernels the tests compare: the model and
// the emulator everywhere, the assembly where it runs.
func batchKernelSets(t testing.TB, L int) map[string][2]any {
	ra, rs := refBatchKernels(L)
	sets := map[string][2]any{"model": {ra, rs}}
	ea, es, ok := batchEmuKernels(L)
	if !ok {
		t.Fatalf("no emulated batch kernel for %d digits", L)
	}
	sets["emu"] = [2]any{ea, es}
	if haveIFMA {
		aa, as, ok := batchASMKernels(L)
		if !ok {
			t.Fatalf("no assembly batch kernel for %d digits", L)
		}
		sets["asm"] = [2]any{aa, as}
	}
	return sets
}

// k0Of returns −n⁻¹ mod 2^52.
func k0Of(n *big.Int) uint64 {
	n0 := n.Uint64()
	inv := n0
	for range 6 {
		inv *= 2 - n0*inv
	}
	return -inv & mask52
}

// TestBatchKernelsAgree runs the model, the emulated instructions and
// (on IFMA hardware) the assembly of every batch kernel on 8 lanes of
// different moduli and operands, random and boundary (each lane its own
// case), checks every lane with math/big and the kernels against each
// other digit for digit, in place too; then every lookup index in every
// lane.
func TestBatchKernelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	for _, L := range slices.Sorted(func(yield func(int) bool) {
		for L := range batchEmu {
			if !yield(L) {
				return
			}
		}
	}) {
		t.Run(fmt.Sprint(L), func(t *testing.T) {
			const W = BatchLanes
			N := W * L
			sets := batchKernelSets(t, L)
			iters := 6
			if raceEnabled {
				iters = 2
			}
			for it := 0; it < iters; it++ {
				// s: a | b | m | t | z | k0
				a, b, m, tt, z, k0 := 0, N, 2*N, 3*N, 4*N, 5*N
				s := make([]uint64, 5*N+W)
				cs := make([]ifmaCase, W)
				for l := range cs {
					bits := 52*L - 2 - r.IntN(30)
					cs[l] = randIFMACase(r, bits, L, (it+l)%5)
					scatter8(s[a:], l, digitsOf(cs[l].a, L))
					scatter8(s[b:], l, digitsOf(cs[l].b, L))
					scatter8(s[m:], l, digitsOf(cs[l].n, L))
					s[k0+l] = k0Of(cs[l].n)
				}
				var ref []uint64
				for _, name := range []string{"model", "emu", "asm"} {
					set, ok := sets[name]
					if !ok {
						continue
					}
					amm := set[0].(batchAMMFunc)
					w := slices.Clone(s)
					amm(w, z, a, b, m, k0, tt)
					for l := range cs {
						checkAMM(t, name, cs[l], gather8(make([]uint64, L), w[z:], l))
					}
					got := slices.Clone(w[z : z+N])
					if ref == nil {
						ref = got
					} else if !slices.Equal(got, ref) {
						t.Fatalf("%s: digits differ from the model", name)
					}
					amm(w, a, a, b, m, k0, tt) // in place
					if !slices.Equal(w[a:a+N], ref) {
						t.Fatalf("%s: in-place product differs", name)
					}
				}
			}
			s := make([]uint64, ifmaEntries*N+N+W)
			for i := range s {
				s[i] = r.Uint64()
			}
			table, out, idx := 0, ifmaEntries*N, ifmaEntries*N+N
			for j := 0; j < ifmaEntries; j++ {
				for l := 0; l < W; l++ {
					s[idx+l] = uint64((j + 5*l) % ifmaEntries)
				}
				for name, set := range sets {
					set[1].(batchSelFunc)(s, out, table, idx)
					for l := 0; l < W; l++ {
						e := int(s[idx+l])
						want := gather8(make([]uint64, L), s[table+e*N:], l)
						if got := gather8(make([]uint64, L), s[out:], l); !slices.Equal(got, want) {
							t.Fatalf("%s: lane %d: lookup of entry %d wrong", name, l, e)
						}
					}
				}
			}
		})
	}
}

// TestBatchSquareAgrees runs every batch squaring kernel, emulated and
// (on IFMA hardware) in assembly, on 8 lanes of different moduli and
// operands, random and boundary (0, 1, n−1, 2n−1), checks each lane with
// math/big and requires the digits of the model's multiplication a·a,
// in place too: the squaring is the multiplication, computed otherwise.
func TestBatchSquareAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(87, 88))
	tested := 0
	for _, L := range batchDigits() {
		emu := batchEmuSquare(L)
		if emu == nil {
			continue
		}
		tested++
		t.Run(fmt.Sprint(L), func(t *testing.T) {
			const W = BatchLanes
			N := W * L
			model, _ := refBatchKernels(L)
			sets := map[string]batchAMSFunc{"emu": emu}
			if haveIFMA {
				if sets["asm"] = batchASMSquare(L); sets["asm"] == nil {
					t.Fatalf("no assembly squaring kernel for %d digits", L)
				}
			}
			iters := 8
			if raceEnabled {
				iters = 2
			}
			for it := 0; it < iters; it++ {
				// s: a | m | t | z | k0
				a, m, tt, z, k0 := 0, N, 2*N, 3*N, 4*N
				s := make([]uint64, 4*N+W)
				cs := make([]ifmaCase, W)
				for l := range cs {
					c := randIFMACase(r, 52*L-2-r.IntN(30), L, 0)
					switch (it + l) % 6 {
					case 1:
						c.a.SetInt64(0)
					case 2:
						c.a.SetInt64(1)
					case 3:
						c.a.Sub(c.n, big.NewInt(1))
					case 4:
						c.a.Lsh(c.n, 1).Sub(c.a, big.NewInt(1))
					}
					c.b = c.a
					cs[l] = c
					scatter8(s[a:], l, digitsOf(c.a, L))
					scatter8(s[m:], l, digitsOf(c.n, L))
					s[k0+l] = k0Of(c.n)
				}
				want := slices.Clone(s)
				model(want, z, a, a, m, k0, tt)
				for name, ams := range sets {
					w := slices.Clone(s)
					ams(w, z, a, m, k0)
					for l := range cs {
						checkAMM(t, name, cs[l], gather8(make([]uint64, L), w[z:], l))
					}
					if !slices.Equal(w[z:z+N], want[z:z+N]) {
						t.Fatalf("%s: iteration %d: digits differ from the multiplication's", name, it)
					}
					ams(w, a, a, m, k0) // in place
					if !slices.Equal(w[a:a+N], want[z:z+N]) {
						t.Fatalf("%s: iteration %d: the in-place square differs", name, it)
					}
				}
			}
		})
	}
	if tested == 0 {
		t.Fatal("no batch squaring kernel")
	}
}

// batchCase is up to 8 exponentiations of one size.
type batchCase struct {
	ns, xs []*big.Int
	es     [][]byte
}

// randBatch draws n moduli of bits bits (some a few bits shorter), bases
// (one zero, one n−1) and exponents of different lengths (one empty, one
// all ones).
func randBatch(r *rand.Rand, bits, n int) batchCase {
	var c batchCase
	for l := 0; l < n; l++ {
		nb := randop.Odd(r, bits-(l%3))
		x := new(big.Int).Mod(randop.Bits(r, bits), nb)
		e := randop.Bits(r, bits/2+8*l).Bytes()
		switch l {
		case 1:
			x.SetInt64(0)
		case 2:
			x.Sub(nb, big.NewInt(1))
			e = nil
		case 3:
			for i := range e {
				e[i] = 0xff
			}
		}
		c.ns, c.xs, c.es = append(c.ns, nb), append(c.xs, x), append(c.es, e)
	}
	return c
}

// run computes the batch with ExpBatch on the kernel configuration in
// use and checks every lane with math/big; it reports whether ExpBatch
// took it.
func (c batchCase) run(t testing.TB) bool {
	t.Helper()
	ms := make([]*Modulus, len(c.ns))
	zs, xs := make([][]uint64, len(ms)), make([][]uint64, len(ms))
	for l := range ms {
		ms[l] = mustModulus(t, c.ns[l])
		xs[l] = natOf(ms[l], c.xs[l])
		zs[l] = xs[l] // in place
	}
	if !ExpBatch(ms, zs, xs, c.es) {
		return false
	}
	for l := range ms {
		want := new(big.Int).Exp(c.xs[l], new(big.Int).SetBytes(c.es[l]), c.ns[l])
		if got := bigOf(zs[l]); got.Cmp(want) != 0 {
			t.Fatalf("%d-bit batch of %d: lane %d = %x, want %x", c.ns[0].BitLen(), len(ms), l, got, want)
		}
	}
	return true
}

// TestExpBatch runs ExpBatch on the model, the emulator and the assembly
// for every size and batches of 1 to 8 against math/big, and checks what
// it refuses.
func TestExpBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(83, 84))
	for _, name := range []string{"ifma-model", "ifma-emu", "ifma"} {
		t.Run(name, func(t *testing.T) {
			withKernel(t, name, func() {
				for _, bits := range []int{1024, 1536, 2048, 3072, 4096} {
					if name == "ifma-emu" && (bits > 1024 || testing.Short() || raceEnabled) && bits != 1536 {
						continue // slow; the kernels are compared digit for digit above
					}
					if raceEnabled && bits > 2048 {
						continue
					}
					for _, n := range []int{1, 3, 8} {
						if name == "ifma-emu" && n != 8 {
							continue
						}
						if !randBatch(r, bits, n).run(t) {
							t.Fatalf("%d bits, %d lanes: ExpBatch refused", bits, n)
						}
					}
				}
				// Refused: mixed sizes, too many, an unsupported size.
				mixed := randBatch(r, 1024, 2)
				mixed.ns[1] = randop.Odd(r, 2048)
				if mixed.run(t) {
					t.Fatal("ExpBatch took moduli of different sizes")
				}
				if randBatch(r, 1024, 9).run(t) {
					t.Fatal("ExpBatch took 9 operations")
				}
				if randBatch(r, 512, 2).run(t) {
					t.Fatal("ExpBatch took 512-bit moduli")
				}
			})
		})
	}
	withKernel(t, "purego", func() {
		if randBatch(r, 1024, 2).run(t) {
			t.Fatal("ExpBatch ran without the IFMA kernel")
		}
	})
}

// TestBatchTraceIndependentOfSecrets records the kernel calls and table
// lookups of ExpBatch and, on the emulator, every memory address its
// instructions touch, for batches whose lanes hold different secrets
// (zero, all-ones and random exponents of one length; zero, one and
// random bases; different moduli of one size), and requires them to be
// identical: what one lane computes changes neither the instruction
// sequence nor the addresses.
func TestBatchTraceIndependentOfSecrets(t *testing.T) {
	r := rand.New(rand.NewPCG(85, 86))
	const bits, elen = 1024, 64
	trace := func(c batchCase) string {
		var b strings.Builder
		kernelTrace = func(op byte) { b.WriteByte(op) }
		emuAddrTrace = func(addr int) { fmt.Fprintf(&b, "%x,", addr) }
		defer func() { kernelTrace, emuAddrTrace = nil, nil }()
		if !c.run(t) {
			t.Fatal("ExpBatch refused")
		}
		return b.String()
	}
	withKernel(t, "ifma-emu", func() {
		var ref string
		for k := 0; k < 3; k++ {
			c := randBatch(r, bits, BatchLanes)
			for l := range c.es {
				c.es[l] = make([]byte, elen)
				switch (l + k) % 3 {
				case 1:
					for i := range c.es[l] {
						c.es[l][i] = 0xff
					}
				case 2:
					for i := range c.es[l] {
						c.es[l][i] = byte(r.Uint32())
					}
				}
				switch (l + 2*k) % 3 {
				case 0:
					c.xs[l].SetInt64(0)
				case 1:
					c.xs[l].SetInt64(1)
				}
			}
			got := trace(c)
			if !strings.ContainsRune(got, ',') || !strings.ContainsRune(got, 'T') {
				t.Fatal("the trace hooks recorded nothing")
			}
			if ref == "" {
				ref = got
			} else if got != ref {
				t.Fatalf("batch %d: the trace differs (%d against %d bytes)", k, len(got), len(ref))
			}
		}
	})
}

// TestBatchKernelsConstantTimeByConstruction applies the rules of
// TestIFMAKernelsConstantTimeByConstruction to kernel_ifma8_amd64.s.
func TestBatchKernelsConstantTimeByConstruction(t *testing.T) {
	src, err := os.ReadFile("kernel_ifma8_amd64.s")
	if err != nil {
		t.Skip("no generated assembly in this directory")
	}
	n, errs := checkConstantTimeAsm(string(src))
	for _, e := range errs {
		t.Error(e)
	}
	squares := 0
	for _, f := range batchEmu {
		if f.ams != nil {
			squares++
		}
	}
	if want := len(batchDigits()) + squares + batchSelCount(); n != want {
		t.Fatalf("%d kernels checked, want %d", n, want)
	}
}

// batchDigits returns the digit counts of the generated batch kernels.
func batchDigits() []int {
	var ds []int
	for L := range batchEmu {
		ds = append(ds, L)
	}
	return ds
}

// batchSelCount returns the number of generated lookup functions.
func batchSelCount() int {
	n := 0
	for _, f := range batchEmu {
		n += len(f.sel)
	}
	return n
}

// TestBatchTimingDudect is the dudect-style test of TestExpTimingDudect
// on the assembly batch kernel: batches of 8 lanes of 1024-bit moduli in
// which the secret exponents of all lanes are zero (class 0) or random
// (class 1), interleaved at random, Welch's t-test on the run times;
// |t| > 10 would indicate a leak. Opt-in (MODEXP_DUDECT=1).
func TestBatchTimingDudect(t *testing.T) {
	if os.Getenv("MODEXP_DUDECT") != "1" {
		t.Skip("set MODEXP_DUDECT=1 to run the statistical timing test")
	}
	skipWithoutIFMA(t)
	withKernel(t, "ifma", func() {
		r := rand.New(rand.NewPCG(87, 88))
		c := randBatch(r, 1024, BatchLanes)
		ms := make([]*Modulus, BatchLanes)
		zs, xs := make([][]uint64, BatchLanes), make([][]uint64, BatchLanes)
		for l := range ms {
			ms[l] = mustModulus(t, c.ns[l])
			xs[l] = natOf(ms[l], c.xs[l])
			zs[l] = make([]uint64, ms[l].Limbs())
		}
		es := make([][]byte, BatchLanes)
		var sum, sumSq, cnt [2]float64
		for i := 0; i < 2000; i++ {
			class := r.IntN(2)
			for l := range es {
				es[l] = make([]byte, 128)
				if class == 1 {
					for j := range es[l] {
						es[l][j] = byte(r.Uint32())
					}
				}
			}
			start := time.Now()
			ExpBatch(ms, zs, xs, es)
			d := float64(time.Since(start).Nanoseconds())
			sum[class] += d
			sumSq[class] += d * d
			cnt[class]++
		}
		tv := welch(sum, sumSq, cnt)
		t.Logf("ExpBatch, 8 lanes of 1024 bits: Welch t = %.2f (means %.0f, %.0f ns)", tv, sum[0]/cnt[0], sum[1]/cnt[1])
		if math.Abs(tv) > 10 {
			t.Errorf("ExpBatch timing differs between exponent classes: t = %.2f", tv)
		}
	})
}
