package ec

import "math/bits"

// Nine-limb addition and subtraction, unrolled: modulo the P-521 prime
// p = 2⁵²¹ − 1 (modAddP521, modSubP521) and modulo any m (modAdd9,
// modSub9, for the P-521 order). The generic nine-limb loops of
// modulus.add and modulus.sub were a third of a P-521 signature's time.
// All are constant time.

// modAddP521 sets z = x + y mod p for x, y < p. The sum s is below
// 2p < 2⁵²²; s ≥ p exactly when s + 1 reaches 2⁵²¹, and then
// s − p = (s + 1) mod 2⁵²¹.
//
//go:norace
func modAddP521(z, x, y *[9]uint64) {
	var c uint64
	s0, c := bits.Add64(x[0], y[0], 0)
	s1, c := bits.Add64(x[1], y[1], c)
	s2, c := bits.Add64(x[2], y[2], c)
	s3, c := bits.Add64(x[3], y[3], c)
	s4, c := bits.Add64(x[4], y[4], c)
	s5, c := bits.Add64(x[5], y[5], c)
	s6, c := bits.Add64(x[6], y[6], c)
	s7, c := bits.Add64(x[7], y[7], c)
	s8, _ := bits.Add64(x[8], y[8], c)
	u0, c := bits.Add64(s0, 1, 0)
	u1, c := bits.Add64(s1, 0, c)
	u2, c := bits.Add64(s2, 0, c)
	u3, c := bits.Add64(s3, 0, c)
	u4, c := bits.Add64(s4, 0, c)
	u5, c := bits.Add64(s5, 0, c)
	u6, c := bits.Add64(s6, 0, c)
	u7, c := bits.Add64(s7, 0, c)
	u8, _ := bits.Add64(s8, 0, c)
	mask := -(u8 >> 9) // all ones: s ≥ p, take s − p
	z[0] = u0&mask | s0&^mask
	z[1] = u1&mask | s1&^mask
	z[2] = u2&mask | s2&^mask
	z[3] = u3&mask | s3&^mask
	z[4] = u4&mask | s4&^mask
	z[5] = u5&mask | s5&^mask
	z[6] = u6&mask | s6&^mask
	z[7] = u7&mask | s7&^mask
	z[8] = (u8&0x1ff)&mask | s8&^mask
}

// modSubP521 sets z = x − y mod p for x, y < p. When x − y borrows, the
// wrapped difference is x − y + 2⁵⁷⁶ and x − y + p = (x − y + 2⁵⁷⁶ − 1)
// mod 2⁵²¹: subtract the borrow and keep the low 521 bits (which changes
// nothing when there was no borrow, the difference being below 2⁵²¹).
//
//go:norace
func modSubP521(z, x, y *[9]uint64) {
	var b uint64
	d0, b := bits.Sub64(x[0], y[0], 0)
	d1, b := bits.Sub64(x[1], y[1], b)
	d2, b := bits.Sub64(x[2], y[2], b)
	d3, b := bits.Sub64(x[3], y[3], b)
	d4, b := bits.Sub64(x[4], y[4], b)
	d5, b := bits.Sub64(x[5], y[5], b)
	d6, b := bits.Sub64(x[6], y[6], b)
	d7, b := bits.Sub64(x[7], y[7], b)
	d8, b := bits.Sub64(x[8], y[8], b)
	z[0], b = bits.Sub64(d0, 0, b)
	z[1], b = bits.Sub64(d1, 0, b)
	z[2], b = bits.Sub64(d2, 0, b)
	z[3], b = bits.Sub64(d3, 0, b)
	z[4], b = bits.Sub64(d4, 0, b)
	z[5], b = bits.Sub64(d5, 0, b)
	z[6], b = bits.Sub64(d6, 0, b)
	z[7], b = bits.Sub64(d7, 0, b)
	z[8], _ = bits.Sub64(d8, 0, b)
	z[8] &= 0x1ff
}

// modAdd9 sets z = x + y mod m for x, y < m (the P-521 order), unrolled
// like modAdd6. Constant time.
//
//go:norace
func modAdd9(z, x, y, m *[9]uint64) {
	var c, b uint64
	s0, c := bits.Add64(x[0], y[0], c)
	s1, c := bits.Add64(x[1], y[1], c)
	s2, c := bits.Add64(x[2], y[2], c)
	s3, c := bits.Add64(x[3], y[3], c)
	s4, c := bits.Add64(x[4], y[4], c)
	s5, c := bits.Add64(x[5], y[5], c)
	s6, c := bits.Add64(x[6], y[6], c)
	s7, c := bits.Add64(x[7], y[7], c)
	s8, c := bits.Add64(x[8], y[8], c)
	d0, b := bits.Sub64(s0, m[0], b)
	d1, b := bits.Sub64(s1, m[1], b)
	d2, b := bits.Sub64(s2, m[2], b)
	d3, b := bits.Sub64(s3, m[3], b)
	d4, b := bits.Sub64(s4, m[4], b)
	d5, b := bits.Sub64(s5, m[5], b)
	d6, b := bits.Sub64(s6, m[6], b)
	d7, b := bits.Sub64(s7, m[7], b)
	d8, b := bits.Sub64(s8, m[8], b)
	// Keep the sum when it did not carry and is below m.
	mask := -(c | (b ^ 1))
	z[0] = d0&mask | s0&^mask
	z[1] = d1&mask | s1&^mask
	z[2] = d2&mask | s2&^mask
	z[3] = d3&mask | s3&^mask
	z[4] = d4&mask | s4&^mask
	z[5] = d5&mask | s5&^mask
	z[6] = d6&mask | s6&^mask
	z[7] = d7&mask | s7&^mask
	z[8] = d8&mask | s8&^mask
}

// modSub9 sets z = x − y mod m for x, y < m, unrolled like modSub6.
// Constant time.
//
//go:norace
func modSub9(z, x, y, m *[9]uint64) {
	var b, c uint64
	d0, b := bits.Sub64(x[0], y[0], b)
	d1, b := bits.Sub64(x[1], y[1], b)
	d2, b := bits.Sub64(x[2], y[2], b)
	d3, b := bits.Sub64(x[3], y[3], b)
	d4, b := bits.Sub64(x[4], y[4], b)
	d5, b := bits.Sub64(x[5], y[5], b)
	d6, b := bits.Sub64(x[6], y[6], b)
	d7, b := bits.Sub64(x[7], y[7], b)
	d8, b := bits.Sub64(x[8], y[8], b)
	mask := -b
	z[0], c = bits.Add64(d0, m[0]&mask, c)
	z[1], c = bits.Add64(d1, m[1]&mask, c)
	z[2], c = bits.Add64(d2, m[2]&mask, c)
	z[3], c = bits.Add64(d3, m[3]&mask, c)
	z[4], c = bits.Add64(d4, m[4]&mask, c)
	z[5], c = bits.Add64(d5, m[5]&mask, c)
	z[6], c = bits.Add64(d6, m[6]&mask, c)
	z[7], c = bits.Add64(d7, m[7]&mask, c)
	z[8], c = bits.Add64(d8, m[8]&mask, c)
}
