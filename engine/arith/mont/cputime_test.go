//go:build linux

package mont

import (
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine/arith/randop"
	"github.com/modexp-token/modexp-token/engine/internal/cputime"
)

// TestKernelCPUTime reports thread CPU time per multiplication and
// squaring for each kernel (the minimum over batches; opt-in:
// MODEXP_CPUTIME=1); on a shared machine wall-clock benchmarks mostly
// measure waiting.
func TestKernelCPUTime(t *testing.T) {
	cputime.OptIn(t)
	r := rand.New(rand.NewPCG(1, 1))
	for _, bits := range []int{1024, 1536, 2048, 4096} {
		n := randop.Odd(r, bits)
		m := mustModulus(t, n)
		x := natOf(m, new(big.Int).Mod(randop.Bits(r, bits), n))
		y := natOf(m, new(big.Int).Mod(randop.Bits(r, bits), n))
		tt := make([]uint64, m.ScratchLen())
		iters := 4096 * 1024 / (bits * bits / 1024)
		type op struct {
			name string
			f    func()
		}
		ops := []op{
			{"generic mul", func() { montMulGeneric(x, x, y, m.n, m.n0inv, tt) }},
			{"generic sqr", func() { montSqrGeneric(x, x, m.n, m.n0inv, tt) }},
		}
		if haveASM {
			ops = append(ops,
				op{"adx-rows mul", func() { montMulRowsASM(x, x, y, m.n, m.n0inv, tt) }},
				op{"adx-rows sqr", func() { montSqrRowsASM(x, x, m.n, m.n0inv, tt) }},
				op{"adx mul", func() { montMulASM(x, x, y, m.n, m.n0inv, tt) }},
				op{"adx sqr", func() { montSqrASM(x, x, m.n, m.n0inv, tt) }})
		}
		// Batches of the kernels in turn, so that a change of load hits
		// them alike.
		best := make([]time.Duration, len(ops))
		for i := range best {
			best[i] = 1<<63 - 1
		}
		for range 15 {
			for i, o := range ops {
				best[i] = min(best[i], cputime.MinThread(1, iters, o.f))
			}
		}
		line := ""
		for i, o := range ops {
			line += o.name + " " + best[i].String() + ", "
		}
		t.Logf("%4d bits: %s(thread CPU per op, min of 15 batches of %d, kernels in turn)", bits, line, iters)
		if haveASM && (m.Limbs() == 16 || m.Limbs() == 24 || m.Limbs() == 32) {
			// A secret Exp with a full-length exponent on the looped
			// assembly kernel and on the unrolled one, in turn.
			e := randop.Bits(r, bits).FillBytes(make([]byte, bits/8))
			z := make([]uint64, m.Limbs())
			exp := func(fixed bool) func() {
				return func() {
					useFixed = fixed
					m.Exp(z, x, e)
					useFixed = true
				}
			}
			rows, fixed := time.Duration(1<<63-1), time.Duration(1<<63-1)
			for range 7 {
				rows = min(rows, cputime.MinThread(1, max(1, iters/1024), exp(false)))
				fixed = min(fixed, cputime.MinThread(1, max(1, iters/1024), exp(true)))
			}
			t.Logf("%4d bits: secret Exp adx-rows %v, adx (unrolled) %v, ratio %.2f (min of 7 batches of %d, in turn)",
				bits, rows, fixed, float64(rows)/float64(fixed), max(1, iters/1024))
		}
	}
}

// TestIFMACPUTime reports thread CPU time of the two secret
// exponentiations of an RSA private operation (CRT halves with 64-bit
// blinded exponents) on the adx kernel, on the IFMA kernel one after the
// other, and on the IFMA kernel paired (ExpPair), in turn (opt-in:
// MODEXP_CPUTIME=1; needs IFMA hardware).
func TestIFMACPUTime(t *testing.T) {
	cputime.OptIn(t)
	skipWithoutIFMA(t)
	r := rand.New(rand.NewPCG(3, 3))
	for _, bits := range []int{1024, 1536, 2048} {
		n1, n2 := randop.Odd(r, bits), randop.Odd(r, bits)
		m1, m2 := mustModulus(t, n1), mustModulus(t, n2)
		x1 := natOf(m1, new(big.Int).Mod(randop.Bits(r, bits), n1))
		x2 := natOf(m2, new(big.Int).Mod(randop.Bits(r, bits), n2))
		e1 := randop.Bits(r, bits+64).FillBytes(make([]byte, bits/8+8))
		e2 := randop.Bits(r, bits+64).FillBytes(make([]byte, bits/8+8))
		z1, z2 := make([]uint64, m1.Limbs()), make([]uint64, m2.Limbs())
		run := func(name string) func() {
			return func() {
				withKernel(t, map[string]string{"adx": "adx", "ifma": "ifma", "pair": "ifma"}[name], func() {
					if name == "pair" {
						ExpPair(m1, m2, z1, x1, e1, z2, x2, e2)
						return
					}
					m1.Exp(z1, x1, e1)
					m2.Exp(z2, x2, e2)
				})
			}
		}
		names := []string{"adx", "ifma", "pair"}
		best := make([]time.Duration, len(names))
		for i := range best {
			best[i] = 1<<63 - 1
		}
		for range 9 {
			for i, name := range names {
				best[i] = min(best[i], cputime.MinThread(1, 20, run(name)))
			}
		}
		t.Logf("%4d-bit halves (RSA-%d private op, both halves): adx %v, ifma %v (%.2fx), ifma paired %v (%.2fx); thread CPU, min of 9 batches of 20, in turn",
			bits, 2*bits, best[0], best[1], float64(best[0])/float64(best[1]), best[2], float64(best[0])/float64(best[2]))
	}
}

// TestIFMAShapesCPUTime compares, for each size, the digit counts and
// register widths there are kernels for (8-lane ZMM, 4-lane YMM):
// thread CPU time of the two halves paired (ExpPair) and of one
// exponentiation alone, in turn (opt-in: MODEXP_CPUTIME=1; needs IFMA).
func TestIFMAShapesCPUTime(t *testing.T) {
	cputime.OptIn(t)
	skipWithoutIFMA(t)
	defer func(s, w map[int]int) { ifmaShape, ifmaWidth = s, w }(ifmaShape, ifmaWidth)
	r := rand.New(rand.NewPCG(5, 5))
	for _, tc := range []struct {
		bits   int
		shapes [][2]int // digits, lanes
	}{{1024, [][2]int{{24, 8}, {20, 4}}}, {1536, [][2]int{{32, 8}, {32, 4}}}, {2048, [][2]int{{40, 8}, {40, 4}}}} {
		n1, n2 := randop.Odd(r, tc.bits), randop.Odd(r, tc.bits)
		x1b, x2b := new(big.Int).Mod(randop.Bits(r, tc.bits), n1), new(big.Int).Mod(randop.Bits(r, tc.bits), n2)
		e1 := randop.Bits(r, tc.bits+64).FillBytes(make([]byte, tc.bits/8+8))
		e2 := randop.Bits(r, tc.bits+64).FillBytes(make([]byte, tc.bits/8+8))
		type prepped struct{ m1, m2 *Modulus }
		ps := make([]prepped, len(tc.shapes))
		for i, sh := range tc.shapes {
			ifmaShape = map[int]int{tc.bits / 64: sh[0]}
			ps[i] = prepped{mustModulus(t, n1), mustModulus(t, n2)}
		}
		pair := make([]time.Duration, len(tc.shapes))
		one := make([]time.Duration, len(tc.shapes))
		for i := range pair {
			pair[i], one[i] = 1<<63-1, 1<<63-1
		}
		for range 7 {
			for i, sh := range tc.shapes {
				ifmaWidth = map[int]int{sh[0]: sh[1]}
				p := ps[i]
				x1, x2 := natOf(p.m1, x1b), natOf(p.m2, x2b)
				z1, z2 := make([]uint64, p.m1.Limbs()), make([]uint64, p.m2.Limbs())
				withKernel(t, "ifma", func() {
					pair[i] = min(pair[i], cputime.MinThread(1, 20, func() { ExpPair(p.m1, p.m2, z1, x1, e1, z2, x2, e2) }))
					one[i] = min(one[i], cputime.MinThread(1, 20, func() { p.m1.Exp(z1, x1, e1) }))
				})
			}
		}
		for i, sh := range tc.shapes {
			t.Logf("%4d bits, %d digits in %d-lane registers: pair %v, one %v", tc.bits, sh[0], sh[1], pair[i], one[i])
		}
	}
}
