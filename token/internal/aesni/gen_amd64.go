//go:build ignore

// gen_amd64.go writes, from one description of each kernel, both
// kernel_amd64.s (AES-NI assembly, VEX-encoded) and emu_test.go (the same
// instruction sequence as calls to the small Go functions of
// machine_test.go), so that the very instructions the hardware runs are
// tested against crypto/aes and crypto/cipher on any machine; only their
// encoding is left to the hardware (the tests of kernel_amd64_test.go).
// Run it with go generate (see kernel_amd64.go).
//
// The kernels:
//
//   - cbcEnc<R>(rk, iv, dst, src *byte, n int): CBC encryption of n
//     blocks with R rounds (10, 12, 14: AES-128, -192, -256). The round
//     keys 1 to R stay in X2 … X(R+1) for the whole message (AES-256
//     fills all sixteen XMM registers: X0 the chaining value, X1 the next
//     plaintext block with round key 0 folded in off the chain); the
//     chain per block is one VPXOR, R-1 VAESENC and one VAESENCLAST.
//   - cbcMAC<R>(rk, x, src *byte, n int): the same chain without the
//     stores, x = E(x ⊕ m) block after block (CBC-MAC, CMAC's body).
//   - subWord(w uint32) uint32: FIPS 197's SubWord through
//     VAESKEYGENASSIST, for the key expansion of aesni.go.
//
// Nothing branches on, or indexes memory by, a key or data value: the one
// loop counts blocks (public). The vector registers that held round keys
// or data are cleared before returning.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"path/filepath"
)

// General-purpose registers, numbered as the emulator indexes them.
const (
	AX = 0
	CX = 1
	DX = 2
	BX = 3
	SI = 6
	DI = 7
)

var gpName = map[int]string{AX: "AX", CX: "CX", DX: "DX", BX: "BX", SI: "SI", DI: "DI"}

// gen accumulates the assembly and the Go emulation of the kernels.
type gen struct {
	s, g *bytes.Buffer
}

func (e *gen) asm(format string, a ...any) { fmt.Fprintf(e.s, "\t"+format+"\n", a...) }
func (e *gen) emu(format string, a ...any) { fmt.Fprintf(e.g, "\t"+format+"\n", a...) }
func (e *gen) comment(c string) {
	e.asm("// %s", c)
	e.emu("// %s", c)
}

func mem(off, base int) string { return fmt.Sprintf("%d(%s)", off, gpName[base]) }

// The instructions. Each emits its assembly and its emulation.

func (e *gen) arg(name string, off, dst int) {
	e.asm("MOVQ %s+%d(FP), %s", name, off, gpName[dst])
	e.emu("m.gp[%d] = uint64(%s)", dst, name)
}
func (e *gen) load(off, base, x int) {
	e.asm("VMOVDQU %s, X%d", mem(off, base), x)
	e.emu("m.load(%d, %d, %d)", off, base, x)
}
func (e *gen) store(x, off, base int) {
	e.asm("VMOVDQU X%d, %s", x, mem(off, base))
	e.emu("m.store(%d, %d, %d)", x, off, base)
}
func (e *gen) pxorMem(off, base, src, dst int) {
	e.asm("VPXOR %s, X%d, X%d", mem(off, base), src, dst)
	e.emu("m.pxorMem(%d, %d, %d, %d)", off, base, src, dst)
}
func (e *gen) pxor(a, b, dst int) {
	e.asm("VPXOR X%d, X%d, X%d", a, b, dst)
	e.emu("m.pxor(%d, %d, %d)", a, b, dst)
}
func (e *gen) aesenc(key, src, dst int) {
	e.asm("VAESENC X%d, X%d, X%d", key, src, dst)
	e.emu("m.aesenc(%d, %d, %d)", key, src, dst)
}
func (e *gen) aesenclast(key, src, dst int) {
	e.asm("VAESENCLAST X%d, X%d, X%d", key, src, dst)
	e.emu("m.aesenclast(%d, %d, %d)", key, src, dst)
}
func (e *gen) addImm(imm, dst int) {
	e.asm("ADDQ $%d, %s", imm, gpName[dst])
	e.emu("m.gp[%d] += %d", dst, imm)
}

// clearRegs zeroes X0 … X(n-1).
func (e *gen) clearRegs(n int) {
	e.comment("clear the registers that held keys and data")
	for i := 0; i < n; i++ {
		e.pxor(i, i, i)
	}
}

// blockLoop emits the loop over CX blocks: body, then the pointer
// increments, DECQ CX and JNZ (the emulation: a for loop on gp[CX]).
func (e *gen) blockLoop(label string, body func()) {
	e.asm("TESTQ CX, CX")
	e.asm("JZ %sdone", label)
	e.emu("for m.gp[%d] != 0 {", CX)
	fmt.Fprintf(e.s, "%sloop:\n", label)
	body()
	e.asm("DECQ CX")
	e.asm("JNZ %sloop", label)
	e.emu("m.gp[%d]--", CX)
	e.emu("}")
	fmt.Fprintf(e.s, "%sdone:\n", label)
}

// genCBC emits cbcEnc<R> (mac false) or cbcMAC<R> (mac true).
func (e *gen) genCBC(rounds int, mac bool) {
	name, args, frame := fmt.Sprintf("cbcEnc%d", rounds), "rk, iv, dst, src *byte, n int", 40
	if mac {
		name, args, frame = fmt.Sprintf("cbcMAC%d", rounds), "rk, x, src *byte, n int", 32
	}
	fmt.Fprintf(e.s, "// func %s(%s)\nTEXT ·%s(SB), NOSPLIT, $0-%d\n", name, args, name, frame)
	if mac {
		fmt.Fprintf(e.g, "\n// %sEmu is %s on the emulator: the same instructions.\nfunc %sEmu(m *aesMachine, rk, x, src, n int) {\n", name, name, name)
		e.arg("rk", 0, AX)
		e.arg("x", 8, BX)
		e.arg("src", 16, SI)
		e.arg("n", 24, CX)
	} else {
		fmt.Fprintf(e.g, "\n// %sEmu is %s on the emulator: the same instructions.\nfunc %sEmu(m *aesMachine, rk, iv, dst, src, n int) {\n", name, name, name)
		e.arg("rk", 0, AX)
		e.arg("iv", 8, BX)
		e.arg("dst", 16, DI)
		e.arg("src", 24, SI)
		e.arg("n", 32, CX)
	}
	e.comment(fmt.Sprintf("round keys 1 to %d in X2 to X%d, the chaining value in X0", rounds, rounds+1))
	for r := 1; r <= rounds; r++ {
		e.load(16*r, AX, r+1)
	}
	e.load(0, BX, 0)
	e.blockLoop(name, func() {
		e.comment("X1 = the block ⊕ round key 0, off the chain; X0 ⊕= X1")
		e.load(0, SI, 1)
		e.pxorMem(0, AX, 1, 1)
		e.pxor(1, 0, 0)
		for r := 1; r < rounds; r++ {
			e.aesenc(r+1, 0, 0)
		}
		e.aesenclast(rounds+1, 0, 0)
		if !mac {
			e.store(0, 0, DI)
			e.addImm(16, DI)
		}
		e.addImm(16, SI)
	})
	e.store(0, 0, BX)
	e.clearRegs(rounds + 2)
	e.asm("RET")
	fmt.Fprintln(e.s)
	fmt.Fprintln(e.g, "}")
}

// genSubWord emits subWord(w uint32) uint32: w in every dword of X0
// (PSHUFD), VAESKEYGENASSIST $0 (dword 0 of the result is SubWord of
// dword 1 of the source), dword 0 out.
func (e *gen) genSubWord() {
	fmt.Fprintf(e.s, "// func subWord(w uint32) uint32\nTEXT ·subWord(SB), NOSPLIT, $0-12\n")
	fmt.Fprintf(e.g, "\n// subWordEmu is subWord on the emulator: the same instructions.\nfunc subWordEmu(m *aesMachine, w uint32) uint32 {\n")
	e.asm("MOVL w+0(FP), AX")
	e.emu("m.gp[%d] = uint64(w)", AX)
	e.asm("MOVQ AX, X0")
	e.emu("m.movqToX(%d, %d)", AX, 0)
	e.asm("VPSHUFD $0, X0, X0")
	e.emu("m.pshufd(0, %d, %d)", 0, 0)
	e.asm("VAESKEYGENASSIST $0, X0, X1")
	e.emu("m.aeskeygenassist(0, %d, %d)", 0, 1)
	e.asm("MOVQ X1, AX")
	e.emu("m.movqFromX(%d, %d)", 1, AX)
	e.clearRegs(2)
	e.asm("MOVL AX, ret+8(FP)")
	e.asm("RET")
	e.emu("return uint32(m.gp[%d])", AX)
	fmt.Fprintln(e.g, "}")
}

// rounds are the kernels' round counts: AES-128, -192 and -256.
var rounds = []int{10, 12, 14}

func main() {
	dir := flag.String("dir", ".", "directory to write the generated files to")
	flag.Parse()
	var s, g, d bytes.Buffer
	s.WriteString(`// Code generated by gen_amd64.go; DO NOT EDIT.

//go:build amd64 && !purego

#include "textflag.h"

// AES-NI CBC kernels with the round keys held in registers; see
// gen_amd64.go.
`)
	g.WriteString(`// Code generated by gen_amd64.go; DO NOT EDIT.

package aesni

// The kernels of kernel_amd64.s, instruction for instruction, on the
// emulator of machine_test.go. Pointers are byte offsets into its memory.
`)
	d.WriteString(`// Code generated by gen_amd64.go; DO NOT EDIT.

//go:build amd64 && !purego

package aesni

// The kernels of kernel_amd64.s (gen_amd64.go). rk points at the round
// keys (16 bytes each, 11, 13 or 15 of them), iv and x at the 16-byte
// chaining value, which they update; n counts 16-byte blocks.
`)
	e := &gen{s: &s, g: &g}
	for _, r := range rounds {
		e.genCBC(r, false)
		e.genCBC(r, true)
		fmt.Fprintf(&d, "\n//go:noescape\nfunc cbcEnc%d(rk, iv, dst, src *byte, n int)\n", r)
		fmt.Fprintf(&d, "\n//go:noescape\nfunc cbcMAC%d(rk, x, src *byte, n int)\n", r)
	}
	e.genSubWord()
	fmt.Fprintf(&d, "\n// subWord is FIPS 197's SubWord (the S-box on each byte of w).\n//\n//go:noescape\nfunc subWord(w uint32) uint32\n")
	for name, b := range map[string]*bytes.Buffer{"kernel_amd64.s": &s, "emu_test.go": &g, "kernel_amd64.go": &d} {
		out := b.Bytes()
		if filepath.Ext(name) == ".go" {
			var err error
			if out, err = format.Source(out); err != nil {
				log.Fatalf("%s: %v", name, err)
			}
		}
		if err := os.WriteFile(filepath.Join(*dir, name), out, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
