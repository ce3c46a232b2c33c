//go:build amd64 && !purego

#include "textflag.h"

// Montgomery multiplication rows with MULX/ADCX/ADOX (BMI2 + ADX).
//
// Every loop below runs a number of times fixed by k (public); nothing
// branches on, or indexes memory by, the values of x, y, n or t.
//
// Each row is two passes over the accumulator t (k+2 words, zero on entry):
//
//	pass 1: t += x[i]·y
//	pass 2: t = (t + m·n) / 2⁶⁴ with m = t[0]·n0inv mod 2⁶⁴
//
// In a pass the low halves of the products ride the CF chain (ADCX) and
// the high halves of the previous column the OF chain (ADOX), so the two
// carry chains run side by side; MULX leaves the flags alone. Loop control
// uses LEAQ and JCXZ, which do not touch the flags either, so both chains
// survive across unrolled blocks.
//
// JCXZ reaches only 127 bytes, less than an unrolled block of eight
// columns, so the exit goes through a trampoline (with a flag-neutral LEAQ
// so that the assembler does not thread the jump past it).
//
// Registers: DX multiplier (x[i] or m), AX column sum, R8/R9 high halves
// (alternating), SI operand pointer (y or n), DI accumulator pointer, CX
// loop counter, BX x pointer, R10 y, R11 n, R12 t, R13 k.
// Frame: 0(SP) k/8, 8(SP) k%8, 16(SP) end of x.

// One column of pass 1 at byte offset off: t[j] += lo(DX·op[j]) + prev hi.
#define COL1(off, prev, hi) \
	MULXQ off(SI), AX, hi; \
	ADCXQ off(DI), AX;     \
	ADOXQ prev, AX;        \
	MOVQ  AX, off(DI)

// One column of pass 2: the sum goes one word down (the division by 2⁶⁴).
#define COL2(off, prev, hi) \
	MULXQ off(SI), AX, hi; \
	ADCXQ off(DI), AX;     \
	ADOXQ prev, AX;        \
	MOVQ  AX, off-8(DI)

// PASS runs COL over k columns (XORQ R8, R8 zeroes the previous high
// half and clears CF and OF): k/8 unrolled blocks, then k%8 single
// columns. On exit DI points at t[k], R8 holds the last high half and CF,
// OF the two pending carries.
#define PASS(COL, blk, blkout, blkbody, blkdone, rem, remdone) \
	MOVQ  0(SP), CX;       \
	XORQ  R8, R8;          \
blk:                       \
	JCXZQ blkout;          \
	JMP   blkbody;         \
blkout:                    \
	LEAQ  0(CX), CX;       \
	JMP   blkdone;         \
blkbody:                   \
	COL(0, R8, R9);        \
	COL(8, R9, R8);        \
	COL(16, R8, R9);       \
	COL(24, R9, R8);       \
	COL(32, R8, R9);       \
	COL(40, R9, R8);       \
	COL(48, R8, R9);       \
	COL(56, R9, R8);       \
	LEAQ  64(SI), SI;      \
	LEAQ  64(DI), DI;      \
	LEAQ  -1(CX), CX;      \
	JMP   blk;             \
blkdone:                   \
	MOVQ  8(SP), CX;       \
rem:                       \
	JCXZQ remdone;         \
	COL(0, R8, R9);        \
	MOVQ  R9, R8;          \
	LEAQ  8(SI), SI;       \
	LEAQ  8(DI), DI;       \
	LEAQ  -1(CX), CX;      \
	JMP   rem;             \
remdone:

// One column of the subtraction z = t − n (borrow on CF).
#define SUBCOL(off) \
	MOVQ off(SI), AX;   \
	SBBQ off(R11), AX;  \
	MOVQ AX, off(DI)

// FINALSUB sets z = t − n if hi·2^(64k) + t ≥ n, else z = t, for DI = z,
// SI = t, R11 = n, R10 = hi (0 or 1), R13 = k, 0(SP) = k/8, 8(SP) = k%8.
// Both candidates are computed and the choice is a mask: the subtraction
// (a borrow chain through LEAQ/JCXZ loops like PASS), then a masked select
// over all k words.
#define FINALSUB(blk, blkout, blkbody, blkdone, rem, remdone, sel) \
	MOVQ  DI, R8;          \
	MOVQ  SI, R9;          \
	MOVQ  0(SP), CX;       \
	XORQ  AX, AX;          \
blk:                       \
	JCXZQ blkout;          \
	JMP   blkbody;         \
blkout:                    \
	LEAQ  0(CX), CX;       \
	JMP   blkdone;         \
blkbody:                   \
	SUBCOL(0);             \
	SUBCOL(8);             \
	SUBCOL(16);            \
	SUBCOL(24);            \
	SUBCOL(32);            \
	SUBCOL(40);            \
	SUBCOL(48);            \
	SUBCOL(56);            \
	LEAQ  64(SI), SI;      \
	LEAQ  64(R11), R11;    \
	LEAQ  64(DI), DI;      \
	LEAQ  -1(CX), CX;      \
	JMP   blk;             \
blkdone:                   \
	MOVQ  8(SP), CX;       \
rem:                       \
	JCXZQ remdone;         \
	SUBCOL(0);             \
	LEAQ  8(SI), SI;       \
	LEAQ  8(R11), R11;     \
	LEAQ  8(DI), DI;       \
	LEAQ  -1(CX), CX;      \
	JMP   rem;             \
remdone:                   \
	SBBQ  BX, BX;          \
	SUBQ  $1, R10;         \
	ANDQ  R10, BX;         \
	MOVQ  R8, DI;          \
	MOVQ  R9, SI;          \
	MOVQ  R13, CX;         \
sel:                       \
	MOVQ  (DI), AX;        \
	MOVQ  (SI), DX;        \
	XORQ  AX, DX;          \
	ANDQ  BX, DX;          \
	XORQ  DX, AX;          \
	MOVQ  AX, (DI);        \
	ADDQ  $8, DI;          \
	ADDQ  $8, SI;          \
	DECQ  CX;              \
	JNZ   sel

// func montRowsADX(z, t, x, y, n *uint64, k int, n0inv uint64)
//
// Sets z = x·y·2^(−64k) mod n (k words). t points one word into a scratch
// buffer of at least k+3 words (t[-1] is written with a dummy zero by
// pass 2's first column) whose words t[0..k+1] are zero. z may alias x or
// y (they are read only before z is written) but not the scratch.
TEXT ·montRowsADX(SB), NOSPLIT, $24-56
	MOVQ t+8(FP), R12
	MOVQ x+16(FP), BX
	MOVQ y+24(FP), R10
	MOVQ n+32(FP), R11
	MOVQ k+40(FP), R13
	MOVQ R13, AX
	SHRQ $3, AX
	MOVQ AX, 0(SP)
	MOVQ R13, AX
	ANDQ $7, AX
	MOVQ AX, 8(SP)
	LEAQ (BX)(R13*8), AX
	MOVQ AX, 16(SP)

row:
	// Pass 1: t += x[i]·y.
	MOVQ (BX), DX
	MOVQ R10, SI
	MOVQ R12, DI
	PASS(COL1, p1blk, p1blkout, p1blkbody, p1blkdone, p1rem, p1remdone)
	// Column k: t[k] += last high half + CF + OF; the carries go to t[k+1].
	MOVQ  $0, AX
	ADCXQ 0(DI), R8
	ADOXQ AX, R8
	MOVQ  R8, 0(DI)
	MOVQ  8(DI), R9
	ADCXQ AX, R9
	ADOXQ AX, R9
	MOVQ  R9, 8(DI)

	// Pass 2: m = t[0]·n0inv; t = (t + m·n) / 2⁶⁴.
	MOVQ  (R12), DX
	IMULQ n0inv+48(FP), DX
	MOVQ  R11, SI
	MOVQ  R12, DI
	PASS(COL2, p2blk, p2blkout, p2blkbody, p2blkdone, p2rem, p2remdone)
	// Column k goes to t[k−1]; column k+1 (t[k+1] + carries) to t[k].
	MOVQ  $0, AX
	ADCXQ 0(DI), R8
	ADOXQ AX, R8
	MOVQ  R8, -8(DI)
	MOVQ  8(DI), R9
	ADCXQ AX, R9
	ADOXQ AX, R9
	MOVQ  R9, 0(DI)
	MOVQ  AX, 8(DI)

	LEAQ 8(BX), BX
	CMPQ BX, 16(SP)
	JNE  row

	// t[0..k) + t[k]·2^(64k) < 2n: subtract n or not, into z.
	MOVQ z+0(FP), DI
	MOVQ R12, SI
	MOVQ n+32(FP), R11
	MOVQ (R12)(R13*8), R10
	FINALSUB(m3blk, m3blkout, m3blkbody, m3blkdone, m3rem, m3remdone, m3sel)
	RET

// func montSqrRowsADX(z, T, x, n *uint64, k int, n0inv uint64)
//
// Sets z = x²·2^(−64k) mod n (k words). T is scratch of 2k words, zero on
// entry. Squares x into T — the off-diagonal products once, then doubled
// with the diagonal squares added in one pass (doubling on the CF chain,
// squares on the OF chain) — reduces T by n in place (k rows of
// T[i..i+k) += m·n, leaving T[k..2k) + topc·2^(64k) < 2n) and subtracts n
// or not into z. z may alias x. Loop counts depend on k only. Frame:
// 0(SP) blocks, 8(SP) remainder, 16(SP) topc.
TEXT ·montSqrRowsADX(SB), NOSPLIT, $24-48
	MOVQ T+8(FP), R12
	MOVQ x+16(FP), R10
	MOVQ n+24(FP), R11
	MOVQ k+32(FP), R13

	// Off-diagonal rows: T[2i+1 .. i+k) += x[i]·x[i+1..k), carry to T[i+k].
	XORQ BX, BX
offrow:
	MOVQ R13, AX
	SUBQ BX, AX
	SUBQ $1, AX
	JLE  offdone
	MOVQ AX, CX
	SHRQ $3, CX
	MOVQ CX, 0(SP)
	ANDQ $7, AX
	MOVQ AX, 8(SP)
	MOVQ (R10)(BX*8), DX
	LEAQ 8(R10)(BX*8), SI
	LEAQ (BX)(BX*1), AX
	LEAQ 8(R12)(AX*8), DI
	PASS(COL1, s1blk, s1blkout, s1blkbody, s1blkdone, s1rem, s1remdone)
	MOVQ  $0, AX
	ADCXQ AX, R8
	ADOXQ AX, R8
	MOVQ  R8, 0(DI)
	INCQ  BX
	JMP   offrow

offdone:
	// T = 2T + Σ x[i]²·2^(128i).
	MOVQ  R12, DI
	MOVQ  R10, SI
	MOVQ  R13, CX
	XORQ  AX, AX
diag:
	JCXZQ diagdone
	MOVQ  (SI), DX
	MULXQ DX, AX, R9
	MOVQ  0(DI), R8
	ADCXQ R8, R8
	ADOXQ AX, R8
	MOVQ  R8, 0(DI)
	MOVQ  8(DI), R8
	ADCXQ R8, R8
	ADOXQ R9, R8
	MOVQ  R8, 8(DI)
	LEAQ  8(SI), SI
	LEAQ  16(DI), DI
	LEAQ  -1(CX), CX
	JMP   diag

diagdone:
	// Reduction: for each i, m = T[i]·n0inv; T[i..i+k) += m·n; the carry
	// and the running topc go into T[i+k].
	MOVQ R13, AX
	SHRQ $3, AX
	MOVQ AX, 0(SP)
	MOVQ R13, AX
	ANDQ $7, AX
	MOVQ AX, 8(SP)
	MOVQ $0, 16(SP)
	XORQ BX, BX
red:
	CMPQ  BX, R13
	JEQ   reddone
	LEAQ  (R12)(BX*8), DI
	MOVQ  (DI), DX
	IMULQ n0inv+40(FP), DX
	MOVQ  R11, SI
	PASS(COL1, s2blk, s2blkout, s2blkbody, s2blkdone, s2rem, s2remdone)
	MOVQ  16(SP), AX
	ADCXQ 0(DI), R8
	ADOXQ AX, R8
	MOVQ  R8, 0(DI)
	MOVQ  $0, AX
	MOVQ  $0, R9
	ADCXQ R9, AX
	ADOXQ R9, AX
	MOVQ  AX, 16(SP)
	INCQ  BX
	JMP   red

reddone:
	// The reduction left 0(SP) and 8(SP) at k/8 and k%8.
	MOVQ z+0(FP), DI
	LEAQ (R12)(R13*8), SI
	MOVQ n+24(FP), R11
	MOVQ 16(SP), R10
	FINALSUB(s3blk, s3blkout, s3blkbody, s3blkdone, s3rem, s3remdone, s3sel)
	RET

// func tableSelectAVX2(out, table *uint64, k, entries int, idx uint64)
//
// Sets out (k words, k a multiple of 4) to entry idx of table (entries
// entries of k words), reading every entry and keeping the wanted one with
// an all-ones or all-zero mask: the addresses and instructions do not
// depend on idx.
TEXT ·tableSelectAVX2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ table+8(FP), SI
	MOVQ k+16(FP), CX
	MOVQ entries+24(FP), R8
	MOVQ idx+32(FP), R9
	SHLQ $3, CX // entry stride in bytes
	MOVQ CX, R12
	SHRQ $5, R12 // 4-word lanes per entry

tslane:
	// One lane (4 words) of out: OR of every entry's lane under its mask.
	VPXOR Y0, Y0, Y0
	MOVQ  SI, R11
	XORQ  BX, BX // entry number
tsentry:
	// mask = all ones if BX == idx, else zero, without a branch.
	MOVQ         BX, AX
	XORQ         R9, AX
	NEGQ         AX
	SBBQ         AX, AX
	NOTQ         AX
	VMOVQ        AX, X1
	VPBROADCASTQ X1, Y1
	VPAND        (R11), Y1, Y2
	VPOR         Y2, Y0, Y0
	ADDQ         CX, R11
	INCQ         BX
	CMPQ         BX, R8
	JNE          tsentry
	VMOVDQU      Y0, (DI)
	ADDQ         $32, DI
	ADDQ         $32, SI
	DECQ         R12
	JNZ          tslane
	VZEROUPPER
	RET
