package mont

import "math/bits"

// ctMask returns all ones if b == 1 and zero if b == 0. b must be 0 or 1.
func ctMask(b uint64) uint64 { return -b }

// ctEq returns 1 if x == y and 0 otherwise, without branching.
func ctEq(x, y uint64) uint64 {
	d := x ^ y
	return 1 ^ ((d | -d) >> 63)
}

// IsZero returns 1 if x is zero and 0 otherwise, in constant time.
func IsZero(x []uint64) uint64 {
	var acc uint64
	for _, w := range x {
		acc |= w
	}
	return ctEq(acc, 0)
}

// Equal returns 1 if x == y (same length) and 0 otherwise, in constant time.
func Equal(x, y []uint64) uint64 {
	var acc uint64
	y = y[:len(x)]
	for i := range x {
		acc |= x[i] ^ y[i]
	}
	return ctEq(acc, 0)
}

// Less returns 1 if x < y and 0 otherwise. x and y have the same length.
// Constant time.
func Less(x, y []uint64) uint64 {
	var b uint64
	y = y[:len(x)]
	for i := range x {
		_, b = bits.Sub64(x[i], y[i], b)
	}
	return b
}

// addVV sets z = x + y and returns the carry. All have the same length.
func addVV(z, x, y []uint64) uint64 {
	var c uint64
	x = x[:len(z)]
	y = y[:len(z)]
	for i := range z {
		z[i], c = bits.Add64(x[i], y[i], c)
	}
	return c
}

// subVV sets z = x − y and returns the borrow. All have the same length.
func subVV(z, x, y []uint64) uint64 {
	var b uint64
	x = x[:len(z)]
	y = y[:len(z)]
	for i := range z {
		z[i], b = bits.Sub64(x[i], y[i], b)
	}
	return b
}

// addMulVVW sets z += x·y and returns the carry word. len(z) == len(x).
func addMulVVW(z, x []uint64, y uint64) uint64 {
	var c uint64
	x = x[:len(z)]
	for i := range z {
		hi, lo := bits.Mul64(x[i], y)
		var cc uint64
		lo, cc = bits.Add64(lo, z[i], 0)
		hi += cc
		lo, cc = bits.Add64(lo, c, 0)
		hi += cc
		z[i] = lo
		c = hi
	}
	return c
}

// Mul sets z = x·y (plain product, no reduction). len(z) must be
// len(x)+len(y); z must not alias x or y. Constant time.
func Mul(z, x, y []uint64) {
	clear(z)
	for i, yi := range y {
		z[i+len(x)] = addMulVVW(z[i:i+len(x)], x, yi)
	}
}

// AddMulWord sets z = x + y·w (plain, no reduction). len(x) == len(y),
// len(z) == len(x)+1; z may alias x only if it is x extended by one limb.
// Constant time.
func AddMulWord(z, x, y []uint64, w uint64) {
	copy(z, x)
	z[len(x)] = 0
	z[len(x)] = addMulVVW(z[:len(x)], y, w)
}

// Add sets z = x + y and returns the carry (plain, same lengths).
// Constant time.
func Add(z, x, y []uint64) uint64 { return addVV(z, x, y) }

// SetBytes sets z to the big-endian value b and returns 1 if it fits in
// len(z) limbs, 0 otherwise (z then holds the value truncated). The time
// depends only on len(b) and len(z).
func SetBytes(z []uint64, b []byte) uint64 {
	clear(z)
	var over uint64
	for i := 0; i < len(b); i++ {
		v := uint64(b[len(b)-1-i])
		if li := i / 8; li < len(z) {
			z[li] |= v << (8 * (i % 8))
		} else {
			over |= v
		}
	}
	return ctEq(over, 0)
}

// FillBytes writes x big-endian into b, zero-padded on the left, and
// returns 1 if x fits in len(b) bytes, 0 otherwise. The time depends only
// on len(b) and len(x).
func FillBytes(b []byte, x []uint64) uint64 {
	clear(b)
	var over uint64
	for li, w := range x {
		for j := 0; j < 8; j++ {
			i := li*8 + j
			v := byte(w >> (8 * j))
			if i < len(b) {
				b[len(b)-1-i] = v
			} else {
				over |= uint64(v)
			}
		}
	}
	return ctEq(over, 0)
}

// Limbs returns the number of 64-bit limbs needed for n bytes.
func Limbs(nbytes int) int { return (nbytes + 7) / 8 }
