package mont

import (
	"errors"
	"math/bits"
)

// ErrInvalidModulus: the modulus is even, zero or one.
var ErrInvalidModulus = errors.New("mont: modulus must be odd and greater than one")

// Modulus is an odd modulus n > 1 with its Montgomery constants. It is
// immutable and safe for concurrent use. Its limb count and bit length are
// public; its value is not (RSA primes are moduli too).
type Modulus struct {
	n      []uint64 // little-endian limbs, top limb non-zero
	n0inv  uint64   // −n⁻¹ mod 2⁶⁴
	rr     []uint64 // R² mod n, R = 2^(64·len(n))
	one    []uint64 // R mod n (1 in Montgomery form)
	bitLen int
	size   int    // byte length of n
	bytes  []byte // n big-endian, no leading zeros

	// The radix-2^52 form for the IFMA kernels (ifma.go); l52 is 0 when
	// there is no kernel for this size.
	l52       int
	n52, rr52 []uint64 // n and R52² mod n, l52 digits
	k052      uint64   // −n⁻¹ mod 2^52

	// The same for the 8-lane batch kernels (ifma8.go), l8 digits.
	l8      int
	n8, rr8 []uint64
}

// NewModulus prepares the big-endian modulus b. Leading zero bytes are
// ignored (the length of a modulus is public). Apart from the length of b
// and of n, the time does not depend on the value.
func NewModulus(b []byte) (*Modulus, error) {
	settleKernels()
	return newModulus(b)
}

// newModulus is NewModulus without settling the kernels (the self-tests
// that settle them build moduli of their own).
func newModulus(b []byte) (*Modulus, error) {
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	if len(b) == 0 || b[len(b)-1]&1 == 0 || (len(b) == 1 && b[0] == 1) {
		return nil, ErrInvalidModulus
	}
	k := Limbs(len(b))
	m := &Modulus{
		n:     make([]uint64, k),
		rr:    make([]uint64, k),
		one:   make([]uint64, k),
		size:  len(b),
		bytes: append([]byte(nil), b...),
	}
	SetBytes(m.n, b)
	m.bitLen = (k-1)*64 + bits.Len64(m.n[k-1])

	// n0inv by Newton iteration: each step doubles the correct low bits.
	inv := m.n[0] // correct mod 2³ for odd n
	for i := 0; i < 5; i++ {
		inv *= 2 - m.n[0]*inv
	}
	m.n0inv = -inv

	m.computeRR()
	t := make([]uint64, m.ScratchLen())
	oneP := make([]uint64, k)
	oneP[0] = 1
	montMul(m.one, m.rr, oneP, m.n, m.n0inv, t)
	m.prepare52()
	m.prepare8()
	return m, nil
}

// computeRR sets rr = R² mod n without math/big and in constant time:
// start from 2^(bitLen−1) < n, double modulo n up to 2^(K+j0) with
// K = 64·k and j0 the odd part of k, then square in Montgomery form s
// times (each squaring maps 2^(K+j) to 2^(K+2j)) until j = K.
func (m *Modulus) computeRR() {
	k := len(m.n)
	K := 64 * k
	tz := bits.TrailingZeros(uint(k))
	j0 := k >> tz
	s := 6 + tz
	x := m.rr
	clear(x)
	x[(m.bitLen-1)/64] = 1 << ((m.bitLen - 1) % 64)
	m.doubleMod(x, K+j0-(m.bitLen-1))
	t := make([]uint64, m.ScratchLen())
	for i := 0; i < s; i++ {
		// The kernel directly (not montSqr): no trace event, since a
		// modulus is often prepared while a trace is being recorded.
		if useASM {
			montSqrASM(x, x, m.n, m.n0inv, t)
		} else {
			montMulGeneric(x, x, x, m.n, m.n0inv, t)
		}
	}
}

// doubleMod sets x = 2^times·x mod n for x < n by constant-time modular
// doublings (the time depends on times and the limb count only).
func (m *Modulus) doubleMod(x []uint64, times int) {
	sh := make([]uint64, len(m.n))
	for range times {
		var top uint64
		for i := range x {
			w := x[i]
			sh[i] = w<<1 | top
			top = w >> 63
		}
		finalSub(x, sh, top, m.n)
	}
}

// Limbs is the number of 64-bit limbs of n.
func (m *Modulus) Limbs() int { return len(m.n) }

// BitLen is the bit length of n.
func (m *Modulus) BitLen() int { return m.bitLen }

// Size is the byte length of n.
func (m *Modulus) Size() int { return m.size }

// Bytes returns n big-endian without leading zeros (a copy).
func (m *Modulus) Bytes() []byte { return append([]byte(nil), m.bytes...) }

// Nat returns the limbs of n (do not modify).
func (m *Modulus) Nat() []uint64 { return m.n }

// ScratchLen is the scratch length, in limbs, that MontMul, ToMont and
// FromMont need.
func (m *Modulus) ScratchLen() int { return 3*len(m.n) + 2 }

// MontMul sets z = x·y·R⁻¹ mod n. x, y < n; t has ScratchLen limbs. z may
// alias x or y. Constant time.
func (m *Modulus) MontMul(z, x, y, t []uint64) { montMul(z, x, y, m.n, m.n0inv, t) }

// MontSqr sets z = x²·R⁻¹ mod n. Constant time.
func (m *Modulus) MontSqr(z, x, t []uint64) { montSqr(z, x, m.n, m.n0inv, t) }

// ToMont sets z = x·R mod n for x < n. Constant time.
func (m *Modulus) ToMont(z, x, t []uint64) { montMul(z, x, m.rr, m.n, m.n0inv, t) }

// FromMont sets z = x·R⁻¹ mod n. Constant time.
func (m *Modulus) FromMont(z, x, t []uint64) {
	k := len(m.n)
	u := t[2*k+2 : 3*k+2]
	clear(u)
	u[0] = 1
	montMul(z, x, u, m.n, m.n0inv, t[:2*k+2])
}

// Less reports (1/0) whether x < n, for x of Limbs() limbs. Constant time.
func (m *Modulus) Less(x []uint64) uint64 { return Less(x, m.n) }

// ModAdd sets z = x + y mod n for x, y < n. Constant time.
func (m *Modulus) ModAdd(z, x, y []uint64) {
	k := len(m.n)
	s := make([]uint64, k)
	c := addVV(s, x[:k], y[:k])
	finalSub(z[:k], s, c, m.n)
}

// ModSub sets z = x − y mod n for x, y < n. Constant time.
func (m *Modulus) ModSub(z, x, y []uint64) {
	k := len(m.n)
	b := subVV(z[:k], x[:k], y[:k])
	mask := ctMask(b)
	var c uint64
	for i := range z[:k] {
		z[i], c = bits.Add64(z[i], m.n[i]&mask, c)
	}
}

// Reduce sets z = b mod n for the big-endian b of any length. The time
// depends only on len(b) and the limb count of n. z has Limbs() limbs.
func (m *Modulus) Reduce(z []uint64, b []byte) {
	k := len(m.n)
	J := (Limbs(len(b)) + k - 1) / k
	if J == 0 {
		J = 1
	}
	// One slab from the pool for x, the scratch and the accumulators;
	// putSlab clears it (x is often a secret) before it goes back.
	st := m.ScratchLen()
	raw := getSlab(J*k + st + 4*k)
	defer putSlab(raw)
	w := *raw
	x, w := w[:J*k], w[J*k:]
	t, w := w[:st], w[st:]
	pw, acc, part, sum := w[:k], w[k:2*k], w[2*k:3*k], w[3*k:4*k] // pw: R^(j+1) mod n
	SetBytes(x, b)
	copy(pw, m.one)
	for j := 0; j < J; j++ {
		if j > 0 {
			montMul(pw, pw, m.rr, m.n, m.n0inv, t)
		}
		// x_j·R^(j+1)·R⁻¹ = x_j·R^j; x_j < R is allowed as the first operand.
		montMul(part, x[j*k:(j+1)*k], pw, m.n, m.n0inv, t)
		c := addVV(sum, acc, part) // acc + part mod n, as ModAdd
		finalSub(acc, sum, c, m.n)
	}
	copy(z[:k], acc)
}
