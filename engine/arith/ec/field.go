package ec

//go:generate go run gen_mul.go

import (
	"math/big"
	"math/bits"
	"unsafe"
)

// as4, as6 and as9 view an element as its concrete limb array. They are
// only called where len(*p) (a constant of each stenciled shape) is the
// array's length, E then being exactly that array type; unlike the
// any(p).(type) switches they replace, they compile to nothing.
func as4[E limbs](p *E) *[4]uint64 { return (*[4]uint64)(unsafe.Pointer(p)) }
func as6[E limbs](p *E) *[6]uint64 { return (*[6]uint64)(unsafe.Pointer(p)) }
func as9[E limbs](p *E) *[9]uint64 { return (*[9]uint64)(unsafe.Pointer(p)) }

// limbs is the set of limb arrays the arithmetic is instantiated for:
// little-endian 64-bit words, four for the 256-bit curves, six for P-384
// and nine for P-521. Each array length compiles to its own code (Go
// stencils generics per shape), so loop bounds are constants.
type limbs interface {
	[4]uint64 | [6]uint64 | [9]uint64
}

// modulus is Montgomery arithmetic modulo an odd m < 2^(64·L), with
// R = 2^(64·L). Elements handled by its methods are fully reduced (< m).
// Every method runs in time independent of the values of its operands;
// only the exponent of exp (always a public constant) and the lengths of
// byte strings may influence timing.
type modulus[E limbs] struct {
	m     E
	m0inv uint64 // −m⁻¹ mod 2⁶⁴
	rr    E      // R² mod m
	one   E      // R mod m: 1 in Montgomery form
	plain E      // 1, as a plain integer (for leaving Montgomery form)
	mm2   E      // m − 2: the exponent of Fermat inversion
	bits  int    // bit length of m
	size  int    // byte length of m
	p256  bool   // m is the P-256 prime: use montMulP256
	p521  bool   // m is the P-521 prime 2⁵²¹ − 1: use montMulP521
	// Four limbs (every modulus below 2^256): the divstep inversion
	// (safegcd.go) and R³ mod m, which takes its inverse of x·R back to
	// Montgomery form.
	sg *invModulus
	r3 E
}

// newModulus derives the Montgomery constants of m (public precomputation,
// math/big is fine here).
func newModulus[E limbs](m *big.Int) *modulus[E] {
	f := &modulus[E]{bits: m.BitLen(), size: (m.BitLen() + 7) / 8}
	bigToLimbs(&f.m, m)
	L := len(f.m)
	r := new(big.Int).Lsh(big.NewInt(1), uint(64*L))
	bigToLimbs(&f.one, new(big.Int).Mod(r, m))
	bigToLimbs(&f.rr, new(big.Int).Mod(new(big.Int).Mul(r, r), m))
	bigToLimbs(&f.mm2, new(big.Int).Sub(m, big.NewInt(2)))
	f.plain[0] = 1
	// Newton iteration for m⁻¹ mod 2⁶⁴.
	inv := uint64(1)
	for range 6 {
		inv *= 2 - f.m[0]*inv
	}
	f.m0inv = -inv
	p256, _ := new(big.Int).SetString("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff", 16)
	f.p256 = m.Cmp(p256) == 0
	p521 := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 521), big.NewInt(1))
	f.p521 = m.Cmp(p521) == 0
	if L == 4 {
		f.sg = newInvModulus(m)
		bigToLimbs(&f.r3, new(big.Int).Exp(r, big.NewInt(3), m))
	}
	return f
}

// bigToLimbs sets z to x (which must fit).
func bigToLimbs[E limbs](z *E, x *big.Int) {
	*z = *new(E)
	for i, w := range x.Bits() {
		(*z)[i] = uint64(w)
	}
}

// limbsToBig returns x as a big.Int (tests and precomputation only).
func limbsToBig[E limbs](x *E) *big.Int {
	b := make([]byte, 8*len(*x))
	putBytes(b, x)
	return new(big.Int).SetBytes(b)
}

// ctEq returns 1 if a == b and 0 otherwise, without branching.
func ctEq(a, b uint64) uint64 {
	x := a ^ b
	return 1 ^ ((x | -x) >> 63)
}

// add sets z = x + y mod m.
//
//go:norace
func (f *modulus[E]) add(z, x, y *E) {
	if traceOps {
		traceOp(1)
	}
	switch len(*z) { // a constant per shape: the switch compiles away
	case 4:
		modAdd4(as4(z), as4(x), as4(y), as4(&f.m))
		return
	case 6:
		modAdd6(as6(z), as6(x), as6(y), as6(&f.m))
		return
	case 9:
		if f.p521 { // which modulus is public
			modAddP521(as9(z), as9(x), as9(y))
			return
		}
		modAdd9(as9(z), as9(x), as9(y), as9(&f.m))
		return
	}
	var s, d E
	var c, b uint64
	for i := range len(s) {
		s[i], c = bits.Add64((*x)[i], (*y)[i], c)
	}
	for i := range len(s) {
		d[i], b = bits.Sub64(s[i], f.m[i], b)
	}
	// The reduced sum is d when the addition carried or the subtraction
	// did not borrow.
	mask := -(c | (b ^ 1))
	for i := range len(s) {
		(*z)[i] = d[i]&mask | s[i]&^mask
	}
}

// sub sets z = x − y mod m.
//
//go:norace
func (f *modulus[E]) sub(z, x, y *E) {
	if traceOps {
		traceOp(2)
	}
	switch len(*z) { // a constant per shape: the switch compiles away
	case 4:
		modSub4(as4(z), as4(x), as4(y), as4(&f.m))
		return
	case 6:
		modSub6(as6(z), as6(x), as6(y), as6(&f.m))
		return
	case 9:
		if f.p521 { // which modulus is public
			modSubP521(as9(z), as9(x), as9(y))
			return
		}
		modSub9(as9(z), as9(x), as9(y), as9(&f.m))
		return
	}
	var d E
	var b, c uint64
	for i := range len(d) {
		d[i], b = bits.Sub64((*x)[i], (*y)[i], b)
	}
	mask := -b
	for i := range len(d) {
		(*z)[i], c = bits.Add64(d[i], f.m[i]&mask, c)
	}
}

// neg sets z = −x mod m.
func (f *modulus[E]) neg(z, x *E) {
	var zero E
	f.sub(z, &zero, x)
}

// mul sets z = x·y·R⁻¹ mod m (Montgomery product, CIOS). It needs
// x·y < m·R, which holds when one operand is < m and the other < R.
// The products are unrolled per limb count (mul_generated.go).
//
//go:norace
func (f *modulus[E]) mul(z, x, y *E) {
	if traceOps {
		traceOp(3)
	}
	switch len(*z) { // a constant per shape: the switch compiles away
	case 4:
		zz, xx, yy, mm := as4(z), as4(x), as4(y), as4(&f.m)
		switch { // the CPU and which modulus are public
		case haveADX && f.p256:
			montMulP256ADX(zz, xx, yy, mm)
		case haveADX:
			montMul4ADX(zz, xx, yy, mm, f.m0inv)
		case f.p256:
			montMulP256(zz, xx, yy)
		default:
			montMul4(zz, xx, yy, mm, f.m0inv)
		}
	case 6:
		montMul6(as6(z), as6(x), as6(y), as6(&f.m), f.m0inv)
	case 9:
		zz, xx, yy := as9(z), as9(x), as9(y)
		switch { // the CPU and which modulus are public
		case haveADX && f.p521:
			montMulP521ADX(zz, xx, yy)
		case haveADX:
			montMul9ADX(zz, xx, yy, as9(&f.m), f.m0inv)
		case f.p521:
			montMulP521(zz, xx, yy)
		default:
			f.mulLoop(z, x, y) // nine limbs: unrolling spills and is slower
		}
	}
}

// montMulP521 is mulLoop for the P-521 prime p = 2⁵²¹ − 1. There
// −p⁻¹ ≡ 1 mod 2⁶⁴, so each row's q is the low word t0, and
// t + q·p = (t − t0) + t0·2⁵²¹: the low word becomes zero without a
// product, and after the shift by one word t0 is added at bit 457
// (bit 9 of word 7). Half the multiplications of mulLoop.
//
//go:norace
func montMulP521(z, x, y *[9]uint64) {
	const n = 9
	var t [n + 2]uint64
	for i := range n {
		yi := y[i]
		var c uint64
		for j := range n {
			hi, lo := bits.Mul64(x[j], yi)
			var cc uint64
			lo, cc = bits.Add64(lo, t[j], 0)
			hi += cc
			lo, cc = bits.Add64(lo, c, 0)
			hi += cc
			t[j], c = lo, hi
		}
		var cc uint64
		t[n], cc = bits.Add64(t[n], c, 0)
		t[n+1] = cc
		q := t[0]
		for j := 1; j <= n+1; j++ {
			t[j-1] = t[j]
		}
		t[n+1] = 0
		t[7], cc = bits.Add64(t[7], q<<9, 0)
		t[8], cc = bits.Add64(t[8], q>>55, cc)
		t[9], _ = bits.Add64(t[9], 0, cc)
	}
	// t < 2p: subtract p once if t ≥ p.
	var d [n]uint64
	var b uint64
	for i := range n - 1 {
		d[i], b = bits.Sub64(t[i], ^uint64(0), b)
	}
	d[n-1], b = bits.Sub64(t[n-1], 0x1ff, b)
	_, b = bits.Sub64(t[n], 0, b)
	mask := -b // all ones: t < p, keep t
	for i := range n {
		z[i] = t[i]&mask | d[i]&^mask
	}
}

// mulLoop is mul as loops, for any limb count.
//
//go:norace
func (f *modulus[E]) mulLoop(z, x, y *E) {
	var e0 E
	n := len(e0)
	var t [9 + 2]uint64
	for i := range n {
		yi := (*y)[i]
		var c uint64
		for j := range n {
			hi, lo := bits.Mul64((*x)[j], yi)
			var cc uint64
			lo, cc = bits.Add64(lo, t[j], 0)
			hi += cc
			lo, cc = bits.Add64(lo, c, 0)
			hi += cc
			t[j], c = lo, hi
		}
		var cc uint64
		t[n], cc = bits.Add64(t[n], c, 0)
		t[n+1] = cc

		q := t[0] * f.m0inv
		hi, lo := bits.Mul64(q, f.m[0])
		_, cc = bits.Add64(lo, t[0], 0)
		c = hi + cc
		for j := 1; j < n; j++ {
			hi, lo = bits.Mul64(q, f.m[j])
			lo, cc = bits.Add64(lo, t[j], 0)
			hi += cc
			lo, cc = bits.Add64(lo, c, 0)
			hi += cc
			t[j-1], c = lo, hi
		}
		t[n-1], cc = bits.Add64(t[n], c, 0)
		t[n] = t[n+1] + cc
	}
	// t < 2m: subtract m once if t ≥ m.
	var d E
	var b uint64
	for i := range n {
		d[i], b = bits.Sub64(t[i], f.m[i], b)
	}
	_, b = bits.Sub64(t[n], 0, b)
	mask := -b // all ones: t < m, keep t
	for i := range n {
		(*z)[i] = t[i]&mask | d[i]&^mask
	}
}

// sqr sets z = x²·R⁻¹ mod m, for x < m.
//
//go:norace
func (f *modulus[E]) sqr(z, x *E) {
	if len(*z) == 4 { // a constant per shape
		if traceOps {
			traceOp(5)
		}
		zz, xx, mm := as4(z), as4(x), as4(&f.m)
		switch {
		case haveADX && f.p256:
			montSqrP256ADX(zz, xx, mm)
		case haveADX:
			montSqr4ADX(zz, xx, mm, f.m0inv)
		case f.p256:
			montSqrP256(zz, xx)
		default:
			montSqr4(zz, xx, mm, f.m0inv)
		}
		return
	}
	if len(*z) == 9 && haveADX && f.p521 {
		if traceOps {
			traceOp(5)
		}
		montSqrP521ADX(as9(z), as9(x))
		return
	}
	f.mul(z, x, x)
}

// toMont sets z = x·R mod m, for any x < R.
func (f *modulus[E]) toMont(z, x *E) { f.mul(z, x, &f.rr) }

// fromMont sets z = x·R⁻¹ mod m.
func (f *modulus[E]) fromMont(z, x *E) { f.mul(z, x, &f.plain) }

// expWindow is the width of exp's sliding window: a table of the 16 odd
// powers x, x³, …, x³¹ and about one multiplication per six exponent bits.
const expWindow = 5

// exp sets z = x^e (Montgomery form in and out). The exponent e is public:
// the schedule (a sliding window of odd powers) depends on it, never on x.
func (f *modulus[E]) exp(z, x, e *E) {
	var table [1 << (expWindow - 1)]E // table[i] = x^(2i+1)
	var x2 E
	table[0] = *x
	f.sqr(&x2, x)
	for i := 1; i < len(table); i++ {
		f.mul(&table[i], &table[i-1], &x2)
	}
	bit := func(i int) uint64 { return ((*e)[i/64] >> uint(i%64)) & 1 }
	acc := f.one
	started := false
	for i := 64*len(*e) - 1; i >= 0; { // branches on the public exponent only
		if bit(i) == 0 {
			if started {
				f.sqr(&acc, &acc)
			}
			i--
			continue
		}
		// The longest window e[i..j] of at most expWindow bits ending in a 1.
		j := max(i-expWindow+1, 0)
		for bit(j) == 0 {
			j++
		}
		var w uint64
		for k := i; k >= j; k-- {
			w = w<<1 | bit(k)
			if started {
				f.sqr(&acc, &acc)
			}
		}
		if started {
			f.mul(&acc, &acc, &table[w>>1])
		} else {
			acc = table[w>>1]
			started = true
		}
		i = j - 1
	}
	*z = acc
}

// inv sets z = x⁻¹ (Montgomery form in and out), m being prime; the
// inverse of 0 is 0. Four limbs by divsteps (safegcd.go: x·R's plain
// inverse x⁻¹·R⁻¹, times R³ in Montgomery form), the P-521 prime by its
// addition chain, the others by Fermat's little theorem. Constant time in
// x; which path runs depends only on the modulus.
func (f *modulus[E]) inv(z, x *E) {
	if zz, ok := any(z).(*[9]uint64); ok && f.p521 {
		invP521(any(f).(*modulus[[9]uint64]), zz, any(x).(*[9]uint64))
		return
	}
	if len(*z) == 4 { // a compile-time constant of the shape
		var t E
		f.sg.inv(as4(&t), as4(x))
		f.mul(z, &t, &f.r3)
		return
	}
	f.exp(z, x, &f.mm2)
}

// invP521 sets z = x^(p−2) (Montgomery form in and out) for g's modulus p = 2⁵²¹ − 1, where p − 2 = (2⁵¹⁹ − 1)·4 + 1,
// by an addition chain through a_k = x^(2^k − 1) (a_(j+k) = a_j^(2^k)·a_k):
// 524 squarings and 13 multiplications instead of exp's 521 and about 100.
// The schedule is fixed.
func invP521(g *modulus[[9]uint64], z, x *[9]uint64) {
	sqrN := func(z, x *[9]uint64, n int) {
		g.sqr(z, x)
		for range n - 1 {
			g.sqr(z, z)
		}
	}
	var b2, b3, b4, b7, b8, tt, acc [9]uint64
	sqrN(&tt, x, 1)
	g.mul(&b2, &tt, x) // 2² − 1
	sqrN(&tt, &b2, 1)
	g.mul(&b3, &tt, x) // 2³ − 1
	sqrN(&tt, &b2, 2)
	g.mul(&b4, &tt, &b2) // 2⁴ − 1
	sqrN(&tt, &b4, 3)
	g.mul(&b7, &tt, &b3) // 2⁷ − 1
	sqrN(&tt, &b4, 4)
	g.mul(&b8, &tt, &b4) // 2⁸ − 1
	acc = b8
	for k := 8; k < 512; k *= 2 { // 2¹⁶ − 1, …, 2⁵¹² − 1
		sqrN(&tt, &acc, k)
		g.mul(&acc, &tt, &acc)
	}
	sqrN(&tt, &acc, 7)
	g.mul(&acc, &tt, &b7) // 2⁵¹⁹ − 1
	sqrN(&tt, &acc, 2)
	g.mul(z, &tt, x) // (2⁵¹⁹ − 1)·4 + 1
}

// isZero returns 1 if x == 0 and 0 otherwise.
func isZero[E limbs](x *E) uint64 {
	var acc uint64
	for i := range len(*x) {
		acc |= (*x)[i]
	}
	return ctEq(acc, 0)
}

// equal returns 1 if x == y and 0 otherwise.
func equal[E limbs](x, y *E) uint64 {
	var acc uint64
	for i := range len(*x) {
		acc |= (*x)[i] ^ (*y)[i]
	}
	return ctEq(acc, 0)
}

// sel sets z = x if cond == 1 and z = y if cond == 0.
//
//go:norace
func sel[E limbs](z, x, y *E, cond uint64) {
	if traceOps {
		traceOp(4)
	}
	mask := -cond
	for i := range len(*z) {
		(*z)[i] = (*x)[i]&mask | (*y)[i]&^mask
	}
}

// less returns 1 if x < y and 0 otherwise.
func less[E limbs](x, y *E) uint64 {
	var b uint64
	for i := range len(*x) {
		_, b = bits.Sub64((*x)[i], (*y)[i], b)
	}
	return b
}

// setBytes sets z to the big-endian b, which must hold at most 8·L bytes.
func setBytes[E limbs](z *E, b []byte) {
	*z = *new(E)
	for i := range len(b) {
		j := len(b) - 1 - i // byte i from the little end
		(*z)[i/8] |= uint64(b[j]) << (8 * uint(i%8))
	}
}

// putBytes writes x big-endian into all of out, truncating high bytes that
// do not fit (callers size out to hold the value).
func putBytes[E limbs](out []byte, x *E) {
	for i := range len(out) {
		j := len(out) - 1 - i
		if i/8 < len(*x) {
			out[j] = byte((*x)[i/8] >> (8 * uint(i%8)))
		} else {
			out[j] = 0
		}
	}
}

// setCanonical sets z (plain, not Montgomery) to the big-endian b of
// exactly f.size bytes and reports whether the value is < m.
func (f *modulus[E]) setCanonical(z *E, b []byte) bool {
	if len(b) != f.size {
		return false
	}
	setBytes(z, b)
	return less(z, &f.m) == 1
}

// reduceBytes sets z (plain) to the big-endian b mod m, for len(b) up to
// 16·L bytes, in time independent of the value of b.
func (f *modulus[E]) reduceBytes(z *E, b []byte) bool {
	L := 8 * len(*z)
	if len(b) > 2*L {
		return false
	}
	var hi, lo E
	if len(b) > L {
		setBytes(&hi, b[:len(b)-L])
		setBytes(&lo, b[len(b)-L:])
	} else {
		setBytes(&lo, b)
	}
	var t E
	f.toMont(&t, &lo)   // lo·R mod m, valid for lo < R
	f.fromMont(&lo, &t) // lo mod m
	f.toMont(&hi, &hi)  // hi·R mod m, as a plain value
	f.add(z, &lo, &hi)
	return true
}

// shiftRight sets z = x >> s for 0 ≤ s < 64.
func shiftRight[E limbs](z, x *E, s uint) {
	if s == 0 {
		*z = *x
		return
	}
	n := len(*x)
	for i := range n - 1 {
		(*z)[i] = (*x)[i]>>s | (*x)[i+1]<<(64-s)
	}
	(*z)[n-1] = (*x)[n-1] >> s
}

// invVarTime sets z = x⁻¹ mod m for a plain x in [1, m−1] (plain in and
// out), by the binary extended Euclidean algorithm (0 gives 0). Variable
// time: for public values only (the s of a signature being verified).
func (f *modulus[E]) invVarTime(z, x *E) {
	// Invariants: a·x ≡ u and b·x ≡ v (mod m), u, v > 0 and v odd until
	// u reaches 0; then v = gcd(x, m) = 1 and b = x⁻¹.
	u, v := *x, f.m
	var a, b E
	if isZero(&u) == 1 {
		*z = b // 0 has no inverse; callers exclude it
		return
	}
	a[0] = 1
	n := len(u)
	for {
		// u ← u / 2^t and a ← a / 2^t mod m, t the trailing zeros of u.
		for u[0] == 0 {
			shiftRight(&u, &u, 32)
			shiftRight(&u, &u, 32)
			f.divPow2(&a, 32)
			f.divPow2(&a, 32)
		}
		if t := uint(bits.TrailingZeros64(u[0])); t > 0 {
			shiftRight(&u, &u, t)
			f.divPow2(&a, t)
		}
		// Both odd: subtract the smaller from the larger.
		var d E
		var bw uint64
		for i := range n {
			d[i], bw = bits.Sub64(u[i], v[i], bw)
		}
		if bw == 0 { // u ≥ v
			if isZero(&d) == 1 {
				break // u = v = gcd = 1
			}
			u = d
			f.sub(&a, &a, &b)
		} else { // v > u: v ← v − u, and swap so that u is the even one
			bw = 0
			for i := range n {
				d[i], bw = bits.Sub64(v[i], u[i], bw)
			}
			v, u = u, d
			var nb E
			f.sub(&nb, &b, &a)
			b, a = a, nb
		}
	}
	*z = b
}

// divPow2 sets z = z / 2^t mod m, 0 < t < 64, with one word-by-m
// multiplication: z + q·m with q = −z·m⁻¹ mod 2^t is divisible by 2^t and
// below 2^t·m.
func (f *modulus[E]) divPow2(z *E, t uint) {
	q := ((*z)[0] * f.m0inv) & (1<<t - 1)
	var c uint64
	for i := range len(*z) {
		hi, lo := bits.Mul64(q, f.m[i])
		var cc uint64
		lo, cc = bits.Add64(lo, (*z)[i], 0)
		hi += cc
		(*z)[i], cc = bits.Add64(lo, c, 0)
		c = hi + cc
	}
	shiftRight(z, z, t)
	(*z)[len(*z)-1] |= c << (64 - t)
}
