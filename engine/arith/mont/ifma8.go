package mont

import (
	"fmt"
	"maps"
	"slices"
)

// The 8-lane batch path: up to BatchLanes secret exponentiations with
// different moduli, exponents and bases at once on the AVX-512 IFMA
// kernels of kernel_ifma8_amd64.s (generated with their Go emulation by
// gen_ifma8_amd64.go), each lane of a ZMM register carrying one
// operation. Same rules as expIFMA: fixed windows of 5 bits over the
// longest exponent's byte length (public), the same sequence of kernel
// calls whatever the values, every table entry read on each lookup; the
// lanes run the same instructions, so what one lane computes does not
// change what the others take.
//
// Layout: a number of L digits for the 8 lanes is 8L words, digit-major
// (digit i of lane l at word 8i+l), every number on a 64-byte boundary.

// BatchLanes is the number of exponentiations ExpBatch runs together.
const BatchLanes = 8

// batchShape maps limb counts to the digit counts of the batch kernels
// (4n ≤ 2^(52L): 52L ≥ 64k + 2; no multiple of a register width needed).
var batchShape = map[int]int{16: 20, 24: 30, 32: 40, 48: 60, 64: 80}

// batchAMMFunc runs the 8-lane multiplication on the slab s: z = a·b
// (each lane modulo its own m, with its k0), t scratch; word offsets.
type batchAMMFunc func(s []uint64, z, a, b, m, k0, t int)

// batchAMSFunc runs the 8-lane squaring on the slab s: z = a·a, the
// same digits as batchAMMFunc(s, z, a, a, m, k0, t) with fewer
// multiplications; word offsets.
type batchAMSFunc func(s []uint64, z, a, m, k0 int)

// batchSelFunc sets out to each lane's entry s[idx+l] of the table of
// 32 entries of 8L words at word offset table, reading every entry.
type batchSelFunc func(s []uint64, out, table, idx int)

// batchKernelsFor returns the batch kernels in use for L digits: the
// assembly ones (tests may substitute the emulated ones or the model).
var batchKernelsFor = batchASMKernels

// batchSquareFor returns the squaring kernel in use for L digits, nil
// where there is none (the multiplication then squares): the assembly
// one (tests may substitute the emulated one or none).
var batchSquareFor = batchASMSquare

// prepare8 sets the radix-2^52 constants of m for the batch kernels if
// they handle its size (for most sizes those of prepare52).
func (m *Modulus) prepare8() {
	L := batchShape[len(m.n)]
	switch {
	case L == 0:
		return
	case L == m.l52:
		m.l8, m.n8, m.rr8 = L, m.n52, m.rr52
	default:
		m.l8 = L
		m.n8, m.rr8 = m.radix52(L)
	}
}

// radix52 returns n and R52² mod n (R52 = 2^(52L)) in L digits, in
// constant time (doublings and Montgomery products on the 64-bit
// kernels).
func (m *Modulus) radix52(L int) (n52, rr52 []uint64) {
	k := len(m.n)
	x := make([]uint64, k)
	copy(x, m.one)
	m.doubleMod(x, 52*L-64*k) // R52 mod n from R64 mod n
	t := make([]uint64, m.ScratchLen())
	y := make([]uint64, k)
	montMulNoTrace(y, x, x, m.n, m.n0inv, t)
	montMulNoTrace(y, y, m.rr, m.n, m.n0inv, t)
	return to52(make([]uint64, L), m.n), to52(make([]uint64, L), y)
}

// Batching reports whether the kernel in use has batch kernels (the IFMA
// one): whether CanBatch can hold for some modulus.
func Batching() bool { settleKernels(); return useIFMA }

// CanBatch reports whether ExpBatch takes exponentiations modulo m (it
// depends on m's size and the kernel in use only).
func CanBatch(m *Modulus) bool {
	if !useIFMA || m.l8 == 0 {
		return false
	}
	_, _, ok := batchKernelsFor(m.l8)
	return ok
}

// ExpBatch sets zs[i] = xs[i]^es[i] mod ms[i] (xs[i] < ms[i], secret
// exponents as for Exp) for the up to BatchLanes operations, in one pass
// of the 8-lane kernel, when CanBatch holds for every modulus and they
// all have the same limb count. It reports whether it did; if not, it did
// nothing. The time depends only on the moduli's size and the longest
// exponent's byte length. zs[i] may alias xs[i].
func ExpBatch(ms []*Modulus, zs, xs [][]uint64, es [][]byte) bool {
	if len(ms) == 0 || len(ms) > BatchLanes || len(zs) != len(ms) || len(xs) != len(ms) || len(es) != len(ms) {
		return false
	}
	for _, m := range ms {
		if len(m.n) != len(ms[0].n) || !CanBatch(m) {
			return false
		}
	}
	amm, sel, _ := batchKernelsFor(ms[0].l8)
	expBatch(ms, zs, xs, es, amm, batchSquareFor(ms[0].l8), sel)
	return true
}

// expBatch is ExpBatch on the kernels amm, ams (squarings; nil: amm) and
// sel. Lanes beyond len(ms) compute 0^0 modulo ms[0], discarded.
func expBatch(ms []*Modulus, zs, xs [][]uint64, es [][]byte, amm batchAMMFunc, ams batchAMSFunc, sel batchSelFunc) {
	const W = BatchLanes
	L := ms[0].l8
	N := W * L
	nbytes := 1 // an empty exponent is one zero window
	for _, e := range es {
		nbytes = max(nbytes, len(e))
	}
	// Slab: table | acc | sel | m | one | rr | t | k0 | idx.
	const offTable = 0
	offAcc := ifmaEntries * N
	offSel := offAcc + N
	offM := offSel + N
	offOne := offM + N
	offRR := offOne + N
	offT := offRR + N
	offK0 := offT + N
	offIdx := offK0 + W
	size := offIdx + W
	raw := getSlab(size + 8)
	defer putSlab(raw)
	s := (*raw)[align64(*raw):][:size]
	var d [80]uint64
	for l := 0; l < W; l++ {
		m := ms[min(l, len(ms)-1)]
		scatter8(s[offM:], l, m.n8)
		scatter8(s[offRR:], l, m.rr8)
		s[offOne+l] = 1
		s[offK0+l] = m.k052
		if l < len(ms) {
			scatter8(s[offSel:], l, to52(d[:L], xs[l][:len(m.n)]))
		}
	}
	var sqr func(z, a int)
	if ams != nil {
		sqr = func(z, a int) { ams(s, z, a, offM, offK0) }
	}
	expWindows52(exp52Plan{
		amm:    func(z, a, b int) { amm(s, z, a, b, offM, offK0, offT) },
		sqr:    sqr,
		sel:    func(out int) { sel(s, out, offTable, offIdx) },
		setIdx: func(l int, w uint64) { s[offIdx+l] = w },
		es:     es, nbytes: nbytes, entry: N,
		table: offTable, acc: offAcc, x: offSel, rr: offRR, one: offOne,
	})
	t := make([]uint64, len(ms[0].n))
	for l, m := range ms {
		from52(t, gather8(d[:L], s[offAcc:], l))
		finalSub(zs[l][:len(m.n)], t, 0, m.n)
	}
	clear(d[:])
	clear(t)
}

// scatter8 sets lane l of the 8-lane number s (digit-major) to the
// digits d.
func scatter8(s []uint64, l int, d []uint64) {
	for i, v := range d {
		s[BatchLanes*i+l] = v
	}
}

// gather8 sets d to the digits of lane l of the 8-lane number s and
// returns d.
func gather8(d, s []uint64, l int) []uint64 {
	for i := range d {
		d[i] = s[BatchLanes*i+l]
	}
	return d
}

// refBatchKernels returns the pure-Go model of the batch kernels for L
// digits: ammRef lane by lane, and a masked lookup reading every entry.
func refBatchKernels(L int) (batchAMMFunc, batchSelFunc) {
	const W = BatchLanes
	N := W * L
	amm := func(s []uint64, z, a, b, m, k0, _ int) {
		var da, db, dm [80]uint64
		for l := 0; l < W; l++ {
			gather8(da[:L], s[a:], l)
			gather8(db[:L], s[b:], l)
			gather8(dm[:L], s[m:], l)
			ammRef(da[:L], da[:L], db[:L], dm[:L], s[k0+l])
			scatter8(s[z:], l, da[:L])
		}
	}
	sel := func(s []uint64, out, table, idx int) {
		clear(s[out : out+N])
		for j := 0; j < ifmaEntries; j++ {
			ent := s[table+j*N : table+j*N+N]
			for l := 0; l < W; l++ {
				mask := ctMask(ctEq(uint64(j), s[idx+l]))
				for i := 0; i < L; i++ {
					s[out+W*i+l] |= ent[W*i+l] & mask
				}
			}
		}
	}
	return amm, sel
}

// batchSelfTest compares the batch kernels in use with the model on
// pseudo-random operands from next (every digit count, 8 lanes of
// different moduli, chained products, lookups of different entries in
// each lane); part of ifmaSelfTest.
func batchSelfTest(next func() uint64) error {
	const W = BatchLanes
	for _, L := range slices.Sorted(maps.Values(batchShape)) {
		amm, sel, ok := batchASMKernels(L)
		if !ok {
			return fmt.Errorf("no batch kernel for %d digits", L)
		}
		ramm, rsel := refBatchKernels(L)
		N := W * L
		// s: a | b | m | t | z (kernel) | z (model) | k0 | table | out | out | idx
		a, b, m, t, z1, z2, k0 := 0, N, 2*N, 3*N, 4*N, 5*N, 6*N
		table := 6*N + W
		out1, out2 := table+ifmaEntries*N, table+ifmaEntries*N+N
		idx := out2 + N
		s := make([]uint64, idx+W)
		var d [80]uint64
		for l := 0; l < W; l++ {
			for i := 0; i < L; i++ {
				d[i] = next() & mask52
			}
			d[0] |= 1
			d[L-1] = d[L-1]>>3 | 1<<48 // 4m ≤ 2^(52L)
			scatter8(s[m:], l, d[:L])
			inv := d[0]
			for range 6 {
				inv *= 2 - d[0]*inv
			}
			s[k0+l] = -inv & mask52
			top := d[L-1]
			for i := 0; i < L; i++ {
				d[i] = next() & mask52
			}
			d[L-1] = top - 1 // below m
			scatter8(s[a:], l, d[:L])
			d[L-1] = top >> 1
			scatter8(s[b:], l, d[:L])
		}
		for it := 0; it < 3; it++ {
			amm(s, z1, a, b, m, k0, t)
			ramm(s, z2, a, b, m, k0, t)
			if !slices.Equal(s[z1:z1+N], s[z2:z2+N]) {
				return fmt.Errorf("batch kernel, %d digits: product %d differs from the model", L, it)
			}
			copy(s[b:b+N], s[a:a+N])
			copy(s[a:a+N], s[z1:z1+N])
		}
		for i := 0; i < ifmaEntries*N; i++ {
			s[table+i] = next()
		}
		for _, j := range []int{0, 17, ifmaEntries - 1} {
			for l := 0; l < W; l++ {
				s[idx+l] = uint64((j + 3*l) % ifmaEntries)
			}
			sel(s, out1, table, idx)
			rsel(s, out2, table, idx)
			if !slices.Equal(s[out1:out1+N], s[out2:out2+N]) {
				return fmt.Errorf("batch kernel, %d digits: lookup %d differs from the model", L, j)
			}
		}
	}
	return nil
}
