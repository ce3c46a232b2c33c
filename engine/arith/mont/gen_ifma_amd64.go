//go:build ignore

// gen_ifma_amd64.go writes, from one description of each kernel, both
// kernel_ifma_amd64.s (AVX-512 IFMA assembly) and ifma_emu_test.go (the
// same instruction sequence as calls to small Go functions on [8]uint64
// lanes, see ifma_machine_test.go), so that the very instructions the hardware runs
// are tested against math/big on any machine; only their encoding is left
// to the hardware (make test-ifma). Run it with go generate (see
// kernel_amd64.go).
//
// The kernels are Almost Montgomery Multiplication in radix 2^52 (digits
// of 52 bits in 64-bit lanes, VPMADD52LUQ/VPMADD52HUQ), word by word over
// the digits of b: column 0 of the accumulator is kept exactly in a
// general-purpose register (MULX gives the whole 104-bit product a0·b_i
// and m0·y, so y = acc·k0 mod 2^52 is known early), the other columns in
// vector lanes, shifted down one lane per step with VALIGNQ. After the
// last step the digits are normalised: one shift-and-add of the carries,
// then the remaining ±1 carries resolved with a carry-lookahead on the
// compare masks ((g<<1 + p) XOR p on a general-purpose register). The
// x2 kernels run two independent multiplications (the CRT halves) with
// their instructions interleaved, hiding the multiplier latency of one
// chain behind the other. Nothing branches on, or indexes memory by, the
// values of the operands: the only loop counts the digits (public).
//
// The table lookup reads every entry with full-width loads and keeps the
// wanted one with a compare mask and a blend.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"path/filepath"
	"strings"
)

// variant is one generated kernel: digits L in lanes of width W, C chains.
type variant struct {
	L, W, C int
}

func (v variant) name() string { return "amm52" + v.suffix() }

// suffix tells the variants apart: chains, digits, and y for 4-lane (YMM)
// registers.
func (v variant) suffix() string {
	s := fmt.Sprintf("x%d_%d", v.C, v.L)
	if v.W == 4 {
		s += "y"
	}
	return s
}

// variants: the CRT halves of RSA-2048, -3072 and -4096 (1024-, 1536- and
// 2048-bit moduli), one and two chains: 24, 32 and 40 digits of 52 bits in
// 8-lane (ZMM) registers, and 20, 32 and 40 in 4-lane (YMM) ones (which
// ifma.go uses: faster on AMD Zen 4, see ifmaWidth); and, one chain only
// (two would need more than 32 registers), 60 and 80 digits for 3072- and
// 4096-bit moduli (public operations, the check of a signature).
var variants = []variant{
	{24, 8, 1}, {24, 8, 2},
	{32, 8, 1}, {32, 8, 2},
	{40, 8, 1}, {40, 8, 2},
	{20, 4, 1}, {20, 4, 2},
	{32, 4, 1}, {32, 4, 2},
	{40, 4, 1}, {40, 4, 2},
	{60, 4, 1}, {80, 4, 1},
}

// General-purpose registers, numbered as the emulator indexes them.
const (
	AX  = 0
	CX  = 1
	DX  = 2
	BX  = 3
	SI  = 6
	DI  = 7
	R8  = 8
	R9  = 9
	R10 = 10
	R11 = 11
	R12 = 12
	R13 = 13
)

var gpName = map[int]string{0: "AX", 1: "CX", 2: "DX", 3: "BX", 6: "SI", 7: "DI", 8: "R8", 9: "R9", 10: "R10", 11: "R11", 12: "R12", 13: "R13"}

// gen accumulates the assembly and the Go emulation of one function.
type gen struct {
	s, g *bytes.Buffer
	W    int
}

func (e *gen) vr(i int) string {
	if e.W == 8 {
		return fmt.Sprintf("Z%d", i)
	}
	return fmt.Sprintf("Y%d", i)
}

func (e *gen) asm(format string, a ...any) { fmt.Fprintf(e.s, "\t"+format+"\n", a...) }
func (e *gen) emu(format string, a ...any) { fmt.Fprintf(e.g, "\t"+format+"\n", a...) }
func (e *gen) comment(c string) {
	e.asm("// %s", c)
	e.emu("// %s", c)
}

func mem(off, base int) string { return fmt.Sprintf("%d(%s)", off, gpName[base]) }

// The instructions. Each emits its assembly and its emulation.

func (e *gen) movLoad(off, base, dst int) {
	e.asm("MOVQ %s, %s", mem(off, base), gpName[dst])
	e.emu("m.movLoad(%d, %d, %d)", off, base, dst)
}
func (e *gen) movImm(imm uint64, dst int) {
	e.asm("MOVQ $%#x, %s", imm, gpName[dst])
	e.emu("m.gp[%d] = %#x", dst, imm)
}
func (e *gen) movRR(src, dst int) {
	e.asm("MOVQ %s, %s", gpName[src], gpName[dst])
	e.emu("m.gp[%d] = m.gp[%d]", dst, src)
}
func (e *gen) mulx(off, base, lo, hi int) {
	e.asm("MULXQ %s, %s, %s", mem(off, base), gpName[lo], gpName[hi])
	e.emu("m.mulx(%d, %d, %d, %d)", off, base, lo, hi)
}
func (e *gen) add(src, dst int) {
	e.asm("ADDQ %s, %s", gpName[src], gpName[dst])
	e.emu("m.add(%d, %d)", src, dst)
}
func (e *gen) adc(src, dst int) {
	e.asm("ADCQ %s, %s", gpName[src], gpName[dst])
	e.emu("m.adc(%d, %d)", src, dst)
}
func (e *gen) adc0(dst int) {
	e.asm("ADCQ $0, %s", gpName[dst])
	e.emu("m.adc0(%d)", dst)
}
func (e *gen) imulMem(off, base, dst int) {
	e.asm("IMULQ %s, %s", mem(off, base), gpName[dst])
	e.emu("m.gp[%d] *= m.load(%d, %d)", dst, off, base)
}
func (e *gen) shl(n, dst int) {
	e.asm("SHLQ $%d, %s", n, gpName[dst])
	e.emu("m.gp[%d] <<= %d", dst, n)
}
func (e *gen) shr(n, dst int) {
	e.asm("SHRQ $%d, %s", n, gpName[dst])
	e.emu("m.gp[%d] >>= %d", dst, n)
}
func (e *gen) or(src, dst int) {
	e.asm("ORQ %s, %s", gpName[src], gpName[dst])
	e.emu("m.gp[%d] |= m.gp[%d]", dst, src)
}
func (e *gen) xor(src, dst int) {
	e.asm("XORQ %s, %s", gpName[src], gpName[dst])
	e.emu("m.gp[%d] ^= m.gp[%d]", dst, src)
}
func (e *gen) lea(off, base, dst int) {
	e.asm("LEAQ %s, %s", mem(off, base), gpName[dst])
	e.emu("m.gp[%d] = m.gp[%d] + %d", dst, base, off)
}
func (e *gen) arg(name string, off, dst int) {
	e.asm("MOVQ %s+%d(FP), %s", name, off, gpName[dst])
	e.emu("m.gp[%d] = uint64(%sP)", dst, name)
}
func (e *gen) vbroadcast(src, dst int) {
	e.asm("VPBROADCASTQ %s, %s", gpName[src], e.vr(dst))
	e.emu("m.vbroadcast(%d, %d, -1)", src, dst)
}
func (e *gen) vbroadcastMasked(src, k, dst int) {
	e.asm("VPBROADCASTQ %s, K%d, %s", gpName[src], k, e.vr(dst))
	e.emu("m.vbroadcast(%d, %d, %d)", src, dst, k)
}
func (e *gen) madd52lo(off, base, src1, dst int) {
	e.asm("VPMADD52LUQ %s, %s, %s", mem(off, base), e.vr(src1), e.vr(dst))
	e.emu("m.madd52lo(%d, %d, %d, %d)", off, base, src1, dst)
}
func (e *gen) madd52hi(off, base, src1, dst int) {
	e.asm("VPMADD52HUQ %s, %s, %s", mem(off, base), e.vr(src1), e.vr(dst))
	e.emu("m.madd52hi(%d, %d, %d, %d)", off, base, src1, dst)
}

// valign sets dst = the lanes of high:low shifted down by n lanes.
func (e *gen) valign(n, low, high, dst int) {
	e.asm("VALIGNQ $%d, %s, %s, %s", n, e.vr(low), e.vr(high), e.vr(dst))
	e.emu("m.valign(%d, %d, %d, %d)", n, low, high, dst)
}
func (e *gen) vmovqToGP(src, dst int) {
	e.asm("VMOVQ X%d, %s", src, gpName[dst])
	e.emu("m.gp[%d] = m.v[%d][0]", dst, src)
}
func (e *gen) vsrl(n, src, dst int) {
	e.asm("VPSRLQ $%d, %s, %s", n, e.vr(src), e.vr(dst))
	e.emu("m.vsrl(%d, %d, %d)", n, src, dst)
}
func (e *gen) vand(a, b, dst int) {
	e.asm("VPANDQ %s, %s, %s", e.vr(a), e.vr(b), e.vr(dst))
	e.emu("m.vand(%d, %d, %d)", a, b, dst)
}
func (e *gen) vxor(a, b, dst int) {
	e.asm("VPXORQ %s, %s, %s", e.vr(a), e.vr(b), e.vr(dst))
	e.emu("m.vxor(%d, %d, %d)", a, b, dst)
}
func (e *gen) vadd(a, b, dst int) {
	e.asm("VPADDQ %s, %s, %s", e.vr(a), e.vr(b), e.vr(dst))
	e.emu("m.vadd(%d, %d, %d, -1)", a, b, dst)
}
func (e *gen) vaddMasked(a, b, k, dst int) {
	e.asm("VPADDQ %s, %s, K%d, %s", e.vr(a), e.vr(b), k, e.vr(dst))
	e.emu("m.vadd(%d, %d, %d, %d)", a, b, dst, k)
}

// vcmpu sets mask register k to the lanes where src1 <pred> src2
// (unsigned; pred 0 equal, 6 greater).
func (e *gen) vcmpu(pred, src2, src1, k int) {
	e.asm("VPCMPUQ $%d, %s, %s, K%d", pred, e.vr(src2), e.vr(src1), k)
	e.emu("m.vcmpu(%d, %d, %d, %d)", pred, src2, src1, k)
}
func (e *gen) kmovToGP(k, dst int) {
	e.asm("KMOVB K%d, %s", k, gpName[dst])
	e.emu("m.gp[%d] = m.k[%d] & 0xff", dst, k)
}
func (e *gen) kmovFromGP(src, k int) {
	e.asm("KMOVB %s, K%d", gpName[src], k)
	e.emu("m.k[%d] = m.gp[%d] & 0xff", k, src)
}
func (e *gen) vload(off, base, dst int) {
	e.asm("VMOVDQU64 %s, %s", mem(off, base), e.vr(dst))
	e.emu("m.vload(%d, %d, %d)", off, base, dst)
}
func (e *gen) vstore(src, off, base int) {
	e.asm("VMOVDQU64 %s, %s", e.vr(src), mem(off, base))
	e.emu("m.vstore(%d, %d, %d)", src, off, base)
}

// vblend sets dst = k ? src : other, lane by lane.
func (e *gen) vblend(src, other, k, dst int) {
	e.asm("VPBLENDMQ %s, %s, K%d, %s", e.vr(src), e.vr(other), k, e.vr(dst))
	e.emu("m.vblend(%d, %d, %d, %d)", src, other, k, dst)
}

// loop emits body with counter register cnt, decremented to zero.
func (e *gen) loop(label string, cnt int, body func()) {
	fmt.Fprintf(e.s, "%s:\n", label)
	e.emu("for {")
	body()
	e.asm("DECQ %s", gpName[cnt])
	e.asm("JNZ %s", label)
	e.emu("m.gp[%d]--", cnt)
	e.emu("if m.gp[%d] == 0 {\n\t\tbreak\n\t}\n\t}", cnt)
}

// Register plan of the multiplication kernels.
const (
	rZ, rA, rB, rM, rK = DI, SI, BX, R13, R8 // z (at the end), a, b (moves), m, k0
	rLo, rHi           = AX, R12             // MULX halves
)

var rAcc = [2]int{R9, R10} // column 0 of each chain
var rT0 = [2]int{R11, DI}  // high word of column 0 (DI is z only after the loop)

// Vector registers: accumulators of chain c at c·V..c·V+V−1 (at most 20
// registers; the first of each chain below 16, where VMOVQ reads lane 0),
// the rest above.
const (
	vB0, vY0             = 20, 22 // b_i and y broadcast, one per chain
	vMask, vOne, vZero   = 25, 26, 27
	vTmp                 = 28
	vT0                  = 29 // and 30
	kTmp, kFirst, kOther = 1, 2, 3
)

// genAMM emits func <name>(z, a, b, m, k0 *uint64): for each chain c,
// z_c = a_c·b_c·2^(−52L) mod m_c, up to one m_c (z_c < 2m_c if a_c, b_c <
// 2m_c and 4m_c ≤ 2^(52L)), digits normalised below 2^52. The operands of
// chain c are L digits at word offset c·L of z, a, b, m; k0[c] =
// −m_c⁻¹ mod 2^52.
func genAMM(s, g *bytes.Buffer, v variant) {
	L, W, C := v.L, v.W, v.C
	V := L / W
	e := &gen{s: s, g: g, W: W}
	acc := func(c, i int) int { return c*V + i }
	fmt.Fprintf(s, "// func %s(z, a, b, m, k0 *uint64)\nTEXT ·%s(SB), NOSPLIT, $0-40\n", v.name(), v.name())
	fmt.Fprintf(g, "// %sEmu is %s on the emulator: the same instructions.\nfunc %sEmu(mem []uint64, zP, aP, bP, mP, k0P int) {\n\tm := &ifmaMachine{mem: mem, w: %d}\n", v.name(), v.name(), v.name(), W)
	e.arg("a", 8, rA)
	e.arg("b", 16, rB)
	e.arg("m", 24, rM)
	e.arg("k0", 32, rK)
	e.movImm(1<<52-1, AX)
	e.vbroadcast(AX, vMask)
	e.movImm(1, AX)
	e.vbroadcast(AX, vOne)
	e.kmovFromGP(AX, kFirst)
	e.vxor(vZero, vZero, vZero)
	for c := 0; c < C; c++ {
		e.movImm(0, rAcc[c])
		for i := 0; i < V; i++ {
			e.vxor(acc(c, i), acc(c, i), acc(c, i))
		}
	}
	e.movImm(uint64(L), CX)
	e.loop(fmt.Sprintf("%sloop", v.name()), CX, func() {
		for c := 0; c < C; c++ {
			o := 8 * L * c
			e.comment(fmt.Sprintf("chain %d: column 0 exactly, y = acc·k0 mod 2^52", c))
			e.movLoad(o, rB, DX)
			e.vbroadcast(DX, vB0+c)
			e.mulx(o, rA, rLo, rT0[c])
			e.add(rLo, rAcc[c])
			e.adc0(rT0[c])
			e.movRR(rAcc[c], DX)
			e.imulMem(8*c, rK, DX)
			e.shl(12, DX)
			e.shr(12, DX)
			e.vbroadcast(DX, vY0+c)
			e.mulx(o, rM, rLo, rHi)
			e.add(rLo, rAcc[c])
			e.adc(rHi, rT0[c])
			e.shr(52, rAcc[c])
			e.shl(12, rT0[c])
			e.or(rT0[c], rAcc[c])
		}
		halves := func(what string, madd func(off, base, src1, dst int)) {
			for c := 0; c < C; c++ {
				o := 8 * L * c
				e.comment(fmt.Sprintf("chain %d: %s halves of a·b_i and m·y", c, what))
				for i := 0; i < V; i++ {
					madd(o+8*W*i, rA, vB0+c, acc(c, i))
				}
				for i := 0; i < V; i++ {
					madd(o+8*W*i, rM, vY0+c, acc(c, i))
				}
			}
		}
		halves("low", e.madd52lo)
		for c := 0; c < C; c++ {
			e.comment(fmt.Sprintf("chain %d: shift down one digit; lane 0 joins column 0", c))
			for i := 0; i < V; i++ {
				high := vZero
				if i+1 < V {
					high = acc(c, i+1)
				}
				e.valign(1, acc(c, i), high, acc(c, i))
			}
			e.vmovqToGP(acc(c, 0), rLo)
			e.add(rLo, rAcc[c])
		}
		halves("high", e.madd52hi)
		e.lea(8, rB, rB)
	})
	e.arg("z", 0, rZ)
	for c := 0; c < C; c++ {
		e.comment(fmt.Sprintf("chain %d: column 0 into lane 0, then normalise", c))
		e.vbroadcastMasked(rAcc[c], kFirst, acc(c, 0))
		// Carries: digit i keeps its low 52 bits plus the carry of digit
		// i−1, from the top down with two rotating registers.
		cur, prev := vT0, vT0+1
		e.vsrl(52, acc(c, V-1), cur)
		for i := V - 1; i >= 0; i-- {
			low := vZero
			if i > 0 {
				e.vsrl(52, acc(c, i-1), prev)
				low = prev
			}
			e.valign(W-1, low, cur, cur)
			e.vand(vMask, acc(c, i), acc(c, i))
			e.vadd(cur, acc(c, i), acc(c, i))
			cur, prev = prev, cur
		}
		// g: digits above 2^52−1 (carry out), p: digits equal to it
		// (propagate a carry in); carries in = ((g<<1) + p) XOR p, one
		// bit a digit, in one register or, beyond 64 digits, two (BX and
		// CX are free after the loop).
		gR, pR := [2]int{R11, BX}, [2]int{R12, CX}
		for i := 0; i < V; i++ {
			wd, sh := W*i/64, W*i%64
			for _, cmp := range []struct {
				pred int
				r    int
			}{{6, gR[wd]}, {0, pR[wd]}} {
				e.vcmpu(cmp.pred, vMask, acc(c, i), kTmp)
				e.kmovToGP(kTmp, AX)
				if sh == 0 {
					e.movRR(AX, cmp.r)
				} else {
					e.shl(sh, AX)
					e.or(AX, cmp.r)
				}
			}
		}
		if V*W > 64 {
			e.add(gR[0], gR[0])
			e.adc(gR[1], gR[1])
			e.add(pR[0], gR[0])
			e.adc(pR[1], gR[1])
			e.xor(pR[0], gR[0])
			e.xor(pR[1], gR[1])
		} else {
			e.shl(1, R11)
			e.add(R12, R11)
			e.xor(R12, R11)
		}
		for i := 0; i < V; i++ {
			wd, sh := W*i/64, W*i%64
			e.movRR(gR[wd], AX)
			if sh > 0 {
				e.shr(sh, AX)
			}
			e.kmovFromGP(AX, kTmp)
			e.vaddMasked(vOne, acc(c, i), kTmp, acc(c, i))
			e.vand(vMask, acc(c, i), acc(c, i))
			e.vstore(acc(c, i), 8*L*c+8*W*i, rZ)
		}
	}
	e.asm("VZEROUPPER")
	e.asm("RET\n")
	g.WriteString("}\n\n")
}

// genSelect emits func <sel>(out, table *uint64, idx *uint64): for each
// chain c, out_c = entry idx[c] of chain c, where the table has 32
// entries of C·L words (chain c at word offset c·L of each): every entry
// is loaded in full and blended under a compare mask.
func genSelect(s, g *bytes.Buffer, v variant) {
	L, W, C := v.L, v.W, v.C
	V := L / W
	name := "sel52" + v.suffix()
	e := &gen{s: s, g: g, W: W}
	fmt.Fprintf(s, "// func %s(out, table, idx *uint64)\nTEXT ·%s(SB), NOSPLIT, $0-24\n", name, name)
	fmt.Fprintf(g, "// %sEmu is %s on the emulator.\nfunc %sEmu(mem []uint64, outP, tableP, idxP int) {\n\tm := &ifmaMachine{mem: mem, w: %d}\n", name, name, name, W)
	e.arg("table", 8, SI)
	e.arg("idx", 16, BX)
	e.movImm(1, AX)
	e.vbroadcast(AX, vOne)
	e.vxor(vZero, vZero, vZero) // the running entry number
	for c := 0; c < C; c++ {
		e.movLoad(8*c, BX, AX)
		e.vbroadcast(AX, vY0+c)
		for i := 0; i < V; i++ {
			e.vxor(c*V+i, c*V+i, c*V+i)
		}
	}
	e.movImm(32, CX)
	e.loop(name+"loop", CX, func() {
		for c := 0; c < C; c++ {
			e.vcmpu(0, vZero, vY0+c, kTmp+c)
			for i := 0; i < V; i++ {
				e.vload(8*L*c+8*W*i, SI, vTmp)
				e.vblend(vTmp, c*V+i, kTmp+c, c*V+i)
			}
		}
		e.vadd(vOne, vZero, vZero)
		e.lea(8*C*L, SI, SI)
	})
	e.arg("out", 0, DI)
	for c := 0; c < C; c++ {
		for i := 0; i < V; i++ {
			e.vstore(c*V+i, 8*L*c+8*W*i, DI)
		}
	}
	e.asm("VZEROUPPER")
	e.asm("RET\n")
	g.WriteString("}\n\n")
}

func main() {
	dir := flag.String("dir", ".", "directory to write the generated files to")
	flag.Parse()
	var s, g, d bytes.Buffer
	s.WriteString(`// Code generated by gen_ifma_amd64.go; DO NOT EDIT.

//go:build amd64 && !purego

#include "textflag.h"

// Radix-2^52 Almost Montgomery Multiplication on AVX-512 IFMA and the
// window-table lookup; see gen_ifma_amd64.go. ifma_emu_test.go is the same
// instruction sequence on a Go emulator.

`)
	g.WriteString(`// Code generated by gen_ifma_amd64.go; DO NOT EDIT.

package mont

// The kernels of kernel_ifma_amd64.s, instruction for instruction, on the
// emulator of ifma_machine_test.go. Pointers are byte offsets into mem.

`)
	d.WriteString(`// Code generated by gen_ifma_amd64.go; DO NOT EDIT.

//go:build amd64 && !purego

package mont

`)
	for _, v := range variants {
		genAMM(&s, &g, v)
		genSelect(&s, &g, v)
		fmt.Fprintf(&d, "// %s: radix-2^52 Montgomery multiplication, %d digits, %d chain(s), %d lanes.\n//\n//go:noescape\nfunc %s(z, a, b, m, k0 *uint64)\n\n", v.name(), v.L, v.C, v.W, v.name())
		fmt.Fprintf(&d, "// sel52%[1]s: table lookup, %[2]d digits, %[3]d chain(s), %[4]d lanes.\n//\n//go:noescape\nfunc sel52%[1]s(out, table, idx *uint64)\n\n", v.suffix(), v.L, v.C, v.W)
	}
	d.WriteString("// ifmaASM are the assembly kernels by digit count, chain count and lanes.\nvar ifmaASM = map[[3]int]ifmaASMFuncs{\n")
	for _, v := range variants {
		fmt.Fprintf(&d, "\t{%d, %d, %d}: {amm52%s, sel52%s},\n", v.L, v.C, v.W, v.suffix(), v.suffix())
	}
	d.WriteString("}\n")
	g.WriteString("// ifmaEmu are the emulated kernels by digit count, chain count and lanes.\nvar ifmaEmu = map[[3]int]ifmaEmuFuncs{\n")
	for _, v := range variants {
		fmt.Fprintf(&g, "\t{%d, %d, %d}: {amm52%sEmu, sel52%sEmu},\n", v.L, v.C, v.W, v.suffix(), v.suffix())
	}
	g.WriteString("}\n")
	writeGenerated(*dir, map[string]*bytes.Buffer{"kernel_ifma_amd64.s": &s, "ifma_emu_test.go": &g, "kernel_ifma_amd64.go": &d})
	for _, f := range extraKernels {
		f(*dir)
	}
}

// extraKernels are the generators of the files given with this one on
// the command line (gen_ifma8_amd64.go: the 8-lane batch kernels).
var extraKernels []func(dir string)

// writeGenerated writes the files into dir, the Go ones gofmt'ed.
func writeGenerated(dir string, files map[string]*bytes.Buffer) {
	for name, b := range files {
		out := b.Bytes()
		if strings.HasSuffix(name, ".go") {
			var err error
			if out, err = format.Source(out); err != nil {
				log.Fatalf("%s: %v", name, err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), out, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
