package ec

import "math/big"

// n256 is the order of the P-256 base point.
var n256, _ = new(big.Int).SetString("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551", 16)

// chainStep is one step of a fixed exponentiation schedule: sqr squarings,
// then a multiplication by table[idx] = x^(2·idx+1).
type chainStep struct{ sqr, idx uint8 }

// invN256Window is the window of the low half of n − 2: a table of the
// eight odd powers x … x¹⁵ (one squaring, seven multiplications).
const invN256Window = 4

// invN256Low, invN256Tail is the sliding-window schedule of the low 128
// bits of n − 2 (the P-256 order minus 2), derived once from the public
// constant: the schedule never depends on the base.
var invN256Low, invN256Tail = slidingSchedule(new(big.Int).Sub(n256, big.NewInt(2)), 128, invN256Window)

// slidingSchedule returns the left-to-right sliding-window schedule (odd
// windows of at most w bits) of the low nbits bits of e, and the squarings
// left after the last window.
func slidingSchedule(e *big.Int, nbits, w int) (steps []chainStep, tail int) {
	pending := 0
	for i := nbits - 1; i >= 0; {
		if e.Bit(i) == 0 {
			pending++
			i--
			continue
		}
		j := max(i-w+1, 0)
		for e.Bit(j) == 0 {
			j++
		}
		var v uint
		for k := i; k >= j; k-- {
			v = v<<1 | e.Bit(k)
		}
		pending += i - j + 1
		steps = append(steps, chainStep{sqr: uint8(pending), idx: uint8(v >> 1)})
		pending = 0
		i = j - 1
	}
	return steps, pending
}

// invN256 sets z = x^(n−2) = x⁻¹ (Montgomery form in and out; 0 gives 0)
// for g's modulus, the P-256 order n. The high half of n − 2 is ffffffff
// 00000000 ffffffff ffffffff (32-bit words): with a_k = x^(2^k − 1) and
// a_(2k) = a_k^(2^k)·a_k it takes a_32 from a_4 = x¹⁵ of the window table
// in three multiplications, then two more; the low half goes by the
// sliding window of invN256Low. In all 253 squarings and 39
// multiplications, against exp's 256 and about 58. Every count and index
// is a constant of n: the schedule is fixed, constant time in x.
func invN256(g *modulus[[4]uint64], z, x *[4]uint64) {
	sqrN := func(z, x *[4]uint64, n int) {
		g.sqr(z, x)
		for range n - 1 {
			g.sqr(z, z)
		}
	}
	var table [1 << (invN256Window - 1)][4]uint64 // table[i] = x^(2i+1)
	var x2, a8, a16, t [4]uint64
	table[0] = *x
	g.sqr(&x2, x)
	for i := 1; i < len(table); i++ {
		g.mul(&table[i], &table[i-1], &x2)
	}
	a4 := &table[len(table)-1] // x¹⁵ = x^(2⁴ − 1)
	sqrN(&t, a4, 4)
	g.mul(&a8, &t, a4)
	sqrN(&t, &a8, 8)
	g.mul(&a16, &t, &a8)
	sqrN(&t, &a16, 16)
	g.mul(&t, &t, &a16) // a32: ffffffff
	a32 := t
	sqrN(&t, &t, 64)
	g.mul(&t, &t, &a32) // ffffffff 00000000 ffffffff
	sqrN(&t, &t, 32)
	g.mul(&t, &t, &a32) // ffffffff 00000000 ffffffff ffffffff
	for _, s := range invN256Low {
		sqrN(&t, &t, int(s.sqr))
		g.mul(&t, &t, &table[s.idx])
	}
	if invN256Tail > 0 {
		sqrN(&t, &t, invN256Tail)
	}
	*z = t
}
