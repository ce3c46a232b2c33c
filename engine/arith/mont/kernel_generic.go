package mont

import "math/bits"

// montMulGeneric is CIOS Montgomery multiplication with the two inner
// products (x_i·y and m·n) fused in one pass over the limbs, followed by a
// masked conditional subtraction. Every loop runs len(n) times.
func montMulGeneric(z, x, y, n []uint64, n0inv uint64, t []uint64) {
	k := len(n)
	x = x[:k]
	y = y[:k]
	z = z[:k]
	t = t[:k+1]
	clear(t)
	for i := 0; i < k; i++ {
		xi := x[i]
		// j = 0: compute m so that t + xi·y + m·n ≡ 0 mod 2^64.
		hi, lo := bits.Mul64(xi, y[0])
		var c uint64
		lo, c = bits.Add64(lo, t[0], 0)
		c1 := hi + c
		m := lo * n0inv
		hi2, lo2 := bits.Mul64(m, n[0])
		_, c = bits.Add64(lo2, lo, 0)
		c2 := hi2 + c
		for j := 1; j < k; j++ {
			var l1 uint64
			c1, l1 = madd2(xi, y[j], t[j], c1)
			c2, t[j-1] = madd2(m, n[j], l1, c2)
		}
		s, ca := bits.Add64(t[k], c1, 0)
		s, cb := bits.Add64(s, c2, 0)
		t[k-1] = s
		t[k] = ca + cb
	}
	finalSub(z, t[:k], t[k], n)
}

// finalSub sets z = t − n if (hi:t) ≥ n, else z = t, where hi is 0 or 1
// and (hi:t) < 2n. Both candidates are computed; the choice is a mask.
func finalSub(z, t []uint64, hi uint64, n []uint64) {
	b := subVV(z, t, n)
	// keep t when hi == 0 and the subtraction borrowed.
	keep := b &^ hi
	m := ctMask(keep)
	for i := range z {
		z[i] ^= (z[i] ^ t[i]) & m
	}
}

// montSqrGeneric squares with the off-diagonal products computed once and
// doubled, then does a separate Montgomery reduction of the 2k-limb square.
func montSqrGeneric(z, x, n []uint64, n0inv uint64, t []uint64) {
	k := len(n)
	x = x[:k]
	T := t[:2*k]
	clear(T)
	// Off-diagonal products x_i·x_j, i < j.
	for i := 0; i < k-1; i++ {
		T[i+k] = addMulVVW(T[2*i+1:i+k], x[i+1:], x[i])
	}
	// Double.
	var top uint64
	for i := range T {
		w := T[i]
		T[i] = w<<1 | top
		top = w >> 63
	}
	// Add the diagonal squares.
	var c uint64
	for i := 0; i < k; i++ {
		hi, lo := bits.Mul64(x[i], x[i])
		T[2*i], c = bits.Add64(T[2*i], lo, c)
		T[2*i+1], c = bits.Add64(T[2*i+1], hi, c)
	}
	// Montgomery reduction of T (< n·R).
	var topc uint64
	for i := 0; i < k; i++ {
		m := T[i] * n0inv
		cw := addMulVVW(T[i:i+k], n, m)
		T[i+k], topc = bits.Add64(T[i+k], cw, topc)
	}
	finalSub(z[:k], T[k:2*k], topc, n)
}

// madd2 returns a·b + c + d as (hi, lo); it cannot overflow 128 bits.
func madd2(a, b, c, d uint64) (hi, lo uint64) {
	hi, lo = bits.Mul64(a, b)
	var carry uint64
	lo, carry = bits.Add64(lo, c, 0)
	hi += carry
	lo, carry = bits.Add64(lo, d, 0)
	hi += carry
	return hi, lo
}
