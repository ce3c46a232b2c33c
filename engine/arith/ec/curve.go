package ec

import (
	"fmt"
	"math/big"
	"math/bits"
	"sync"
	"unsafe"
)

// curve is a short Weierstrass curve y² = x³ + a·x + b over GF(p) with a
// prime order n, a ∈ {−3, 0}, for one limb array type.
type curve[E limbs] struct {
	fp, fn  modulus[E]
	aMinus3 bool // a = −3 (NIST); otherwise a = 0 (secp256k1)
	b, b3   E    // b and 3·b, Montgomery form
	g       affine[E]
	pMinusN E // p − n (plain), for comparing x(R) mod n with r

	tablesOnce sync.Once
	comb       [][baseRow]affine[E] // comb[i][j-1] = j·64^i·G, for ScalarBaseMult
	gOdd       [32]affine[E]        // (2j+1)·G, for the variable-time wNAF

	varOnce sync.Once
	gVar    *varComb[E] // wide comb of G for verification (variable time)
}

// gVarWidth is the window of the generator's signed verification table:
// 8 bits, so u1·G is at most 33 additions for the 256-bit curves (a table
// of 264 KiB for them, 588 KiB for P-384, 1.2 MiB for P-521, built on the
// first verification by a PublicKey).
const gVarWidth = 8

// pubVarWidth is the window of a PublicKey's signed table: 6 bits, at most
// 43 additions for the 256-bit curves (a table of 86 KiB for them,
// 195 KiB for P-384, 401 KiB for P-521 with 88 additions: 17 fewer than
// 5 bits, about 4 % of a P-521 signature's verification before release).
func pubVarWidth(nbits int) uint {
	_ = nbits // the same width for every size
	return 6
}

// wnafWidthG and wnafWidthP are the wNAF widths of DoubleScalarMultVarTime
// for the generator (a precomputed table) and for the other point (a table
// made per call).
const (
	wnafWidthG = 7
	wnafWidthP = 5
)

// newCurve builds a curve from its parameters (public precomputation).
func newCurve[E limbs](p, n, b, gx, gy *big.Int, aMinus3 bool) *curve[E] {
	c := &curve[E]{fp: *newModulus[E](p), fn: *newModulus[E](n), aMinus3: aMinus3}
	if p.Cmp(n) <= 0 || p.Cmp(new(big.Int).Lsh(n, 1)) >= 0 {
		// x mod n for x < p needs at most one subtraction (reduceOnce).
		panic("ec: curve needs n < p < 2n")
	}
	bigToLimbs(&c.pMinusN, new(big.Int).Sub(p, n))
	var t E
	bigToLimbs(&t, b)
	c.fp.toMont(&c.b, &t)
	c.fp.add(&c.b3, &c.b, &c.b)
	c.fp.add(&c.b3, &c.b3, &c.b)
	bigToLimbs(&t, gx)
	c.fp.toMont(&c.g.x, &t)
	bigToLimbs(&t, gy)
	c.fp.toMont(&c.g.y, &t)
	if !c.isOnCurve(&c.g) {
		panic("ec: generator not on curve")
	}
	return c
}

// precompute builds the generator tables once, on first use. They hold
// public points only.
func (c *curve[E]) precompute() {
	c.tablesOnce.Do(func() {
		c.comb = c.buildBaseComb()
		var g, g2 point[E]
		c.fromAffine(&g, &c.g)
		c.double(&g2, &g)
		odd := make([]point[E], len(c.gOdd))
		odd[0] = g
		for j := 1; j < len(odd); j++ {
			c.add(&odd[j], &odd[j-1], &g2)
		}
		c.batchToAffine(c.gOdd[:], odd)
	})
}

// baseWidth is the width of ScalarBaseMult's signed windows: 6 bits,
// digits in [−32, 32], 43 mixed additions for the 256-bit curves (5 bits
// took 52) and a comb row of baseRow = 32 points read in full per digit.
// The comb is 86 KiB for the 256-bit curves, 195 KiB for P-384, 396 KiB
// for P-521.
const (
	baseWidth = 6
	baseRow   = 1 << (baseWidth - 1)
)

// baseWindows is the number of baseWidth-bit signed windows of a scalar
// < n: one more bit than n has, for the carry of the signed recoding.
func (c *curve[E]) baseWindows() int { return (c.fn.bits + baseWidth) / baseWidth }

// buildBaseComb returns the generator's comb table: row i holds
// j·64^i·G for j = 1..32, affine. Public points only (variable time).
func (c *curve[E]) buildBaseComb() [][baseRow]affine[E] {
	windows := c.baseWindows()
	table := make([][baseRow]affine[E], windows)
	pts := make([]point[E], baseRow*windows)
	var base point[E]
	c.fromAffine(&base, &c.g)
	for w := range windows {
		row := pts[baseRow*w : baseRow*(w+1)]
		row[0] = base
		for j := 1; j < baseRow; j++ {
			c.add(&row[j], &row[j-1], &base)
		}
		c.double(&base, &row[baseRow-1]) // 2·(32·base) = 64·base
	}
	flat := make([]affine[E], len(pts))
	c.batchToAffine(flat, pts)
	for w := range table {
		copy(table[w][:], flat[baseRow*w:baseRow*(w+1)])
	}
	return table
}

// batchToAffine converts points that are not the identity with one
// inversion (Montgomery's trick). Public data only.
func (c *curve[E]) batchToAffine(out []affine[E], in []point[E]) {
	f := &c.fp
	prod := make([]E, len(in))
	prod[0] = in[0].z
	for i := 1; i < len(in); i++ {
		f.mul(&prod[i], &prod[i-1], &in[i].z)
	}
	var acc, zinv E
	f.inv(&acc, &prod[len(in)-1])
	for i := len(in) - 1; i >= 0; i-- {
		if i > 0 {
			f.mul(&zinv, &acc, &prod[i-1])
			f.mul(&acc, &acc, &in[i].z)
		} else {
			zinv = acc
		}
		f.mul(&out[i].x, &in[i].x, &zinv)
		f.mul(&out[i].y, &in[i].y, &zinv)
	}
}

// nibble returns bits 4i..4i+3 of the plain integer k. The address read
// depends on i only.
func nibble[E limbs](k *E, i int) uint64 {
	return ((*k)[i/16] >> (4 * uint(i%16))) & 15
}

// baseMult sets r = k·G for a plain scalar k < n, in constant time: k is
// recoded into signed 6-bit digits in [−32, 32] (Booth), and each digit
// adds ±row[|d|] of the comb table with one mixed addition, no doubling.
// Each lookup reads all 32 entries of the window's row; the negation and
// the skipping of a zero digit are masked selections.
func (c *curve[E]) baseMult(r *point[E], k *E) {
	c.precompute()
	c.setIdentity(r)
	var t affine[E]
	var ny E
	var s point[E]
	for w := range c.comb {
		d, neg := boothDigit(k, w)
		lookupAffine(&t, &c.comb[w], d)
		c.fp.neg(&ny, &t.y)
		sel(&t.y, &ny, &t.y, neg)
		c.addAffine(&s, r, &t)
		// A zero digit adds nothing (t is then not a point; s is dropped).
		selectPoint(r, &s, r, 1^ctEq(d, 0))
	}
}

// boothDigit returns the w-th signed 6-bit digit of k as a magnitude in
// [0, 32] and a sign (1 for negative), without branching on k: the window
// is bits 6w−1 .. 6w+5 of k (bit −1 and bits past the end are 0). Which
// words are read depends on w only.
func boothDigit[E limbs](k *E, w int) (d, neg uint64) {
	const mask = 1<<(baseWidth+1) - 1
	var in uint64
	if w == 0 {
		in = ((*k)[0] << 1) & mask
	} else {
		pos := baseWidth*w - 1
		li, sh := pos/64, uint(pos%64)
		if li < len(*k) {
			in = (*k)[li] >> sh
			if sh > 64-(baseWidth+1) && li+1 < len(*k) {
				in |= (*k)[li+1] << (64 - sh)
			}
		}
		in &= mask
	}
	s := -(in >> baseWidth) // all ones when the top bit is set: a negative digit
	v := (mask - in) & s
	v |= in &^ s
	d = (v >> 1) + (v & 1)
	return d, s & 1
}

// scalarMult sets r = k·p for a plain scalar k < n, in constant time: a
// fixed window of 4 bits, every window 4 doublings and one complete
// addition of an entry read from a 16-entry table by touching every entry.
func (c *curve[E]) scalarMult(r *point[E], p *affine[E], k *E) {
	var table [16]point[E]
	c.setIdentity(&table[0])
	c.fromAffine(&table[1], p)
	for i := 2; i < 16; i++ {
		if i%2 == 0 {
			c.double(&table[i], &table[i/2])
		} else {
			c.add(&table[i], &table[i-1], &table[1])
		}
	}
	windows := (c.fn.bits + 3) / 4
	c.setIdentity(r)
	var t point[E]
	for w := windows - 1; w >= 0; w-- {
		if w != windows-1 {
			c.double(r, r)
			c.double(r, r)
			c.double(r, r)
			c.double(r, r)
		}
		lookupPoint(&t, &table, nibble(k, w))
		c.add(r, r, &t)
	}
}

// wnaf writes the width-w non-adjacent form of the plain integer k into
// out (least significant digit first; odd digits in (−2^(w−1), 2^(w−1)))
// and returns the number of digits. Variable time.
func wnaf[E limbs](out *[64*9 + 2]int8, k *E, w uint) int {
	var t [9 + 1]uint64
	n := len(*k)
	for i := range n {
		t[i] = (*k)[i]
	}
	nonzero := func() bool {
		for i := range n + 1 {
			if t[i] != 0 {
				return true
			}
		}
		return false
	}
	mask := uint64(1)<<w - 1
	i := 0
	for nonzero() {
		var d int64
		if t[0]&1 == 1 {
			d = int64(t[0] & mask)
			if d >= 1<<(w-1) {
				d -= 1 << w
			}
			if d > 0 { // t -= d
				var b uint64
				t[0], b = bits.Sub64(t[0], uint64(d), 0)
				for j := 1; j <= n; j++ {
					t[j], b = bits.Sub64(t[j], 0, b)
				}
			} else { // t += −d
				var cy uint64
				t[0], cy = bits.Add64(t[0], uint64(-d), 0)
				for j := 1; j <= n; j++ {
					t[j], cy = bits.Add64(t[j], 0, cy)
				}
			}
		}
		out[i] = int8(d)
		i++
		for j := range n {
			t[j] = t[j]>>1 | t[j+1]<<63
		}
		t[n] >>= 1
	}
	return i
}

// doubleMultVarTime sets r = u1·G + u2·p with interleaved wNAFs (Shamir's
// trick) in Jacobian coordinates. Variable time: for public scalars only
// (verification).
func (c *curve[E]) doubleMultVarTime(r *point[E], u1, u2 *E, p *affine[E]) {
	c.precompute()
	var proj [1 << (wnafWidthP - 2)]point[E] // p, 3p, 5p, ...
	var p2 point[E]
	c.fromAffine(&proj[0], p)
	c.double(&p2, &proj[0])
	for j := 1; j < len(proj); j++ {
		c.add(&proj[j], &proj[j-1], &p2)
	}
	var table [len(proj)]affine[E]
	c.batchToAffine(table[:], proj[:]) // odd multiples of a point of prime order are never the identity
	var naf1, naf2 [64*9 + 2]int8
	n1 := wnaf(&naf1, u1, wnafWidthG)
	n2 := wnaf(&naf2, u2, wnafWidthP)
	acc := jacobian[E]{inf: true}
	for i := max(n1, n2) - 1; i >= 0; i-- {
		c.jDouble(&acc)
		if d := naf1[i]; d > 0 {
			c.jAddAffine(&acc, &c.gOdd[d/2])
		} else if d < 0 {
			c.jSubAffine(&acc, &c.gOdd[-d/2])
		}
		if d := naf2[i]; d > 0 {
			c.jAddAffine(&acc, &table[d/2])
		} else if d < 0 {
			c.jSubAffine(&acc, &table[-d/2])
		}
	}
	c.toProjective(r, &acc)
}

// decodePoint parses affine coordinates (big-endian, exactly the field's
// byte length each, < p) and checks that the point is on the curve.
func (c *curve[E]) decodePoint(a *affine[E], x, y []byte) error {
	var t E
	if !c.fp.setCanonical(&t, x) {
		return fmt.Errorf("%w: x coordinate not a %d-byte field element", ErrInvalidPoint, c.fp.size)
	}
	c.fp.toMont(&a.x, &t)
	if !c.fp.setCanonical(&t, y) {
		return fmt.Errorf("%w: y coordinate not a %d-byte field element", ErrInvalidPoint, c.fp.size)
	}
	c.fp.toMont(&a.y, &t)
	if !c.isOnCurve(a) {
		return fmt.Errorf("%w: not on the curve", ErrInvalidPoint)
	}
	return nil
}

// encodePoint returns p's affine coordinates, or ErrInvalidScalar when p is
// the identity (the scalar was a multiple of n).
func (c *curve[E]) encodePoint(p *point[E]) (x, y []byte, err error) {
	return c.appendPoint(nil, nil, p)
}

// appendPoint is encodePoint with the coordinates appended to dx and dy
// (both nil: one allocation for the two).
func (c *curve[E]) appendPoint(dx, dy []byte, p *point[E]) (x, y []byte, err error) {
	var a affine[E]
	ok := c.toAffine(&a, p)
	if ok == 0 {
		return nil, nil, fmt.Errorf("%w: result is the point at infinity", ErrInvalidScalar)
	}
	var t E
	n := c.fp.size
	if dx == nil && dy == nil {
		buf := make([]byte, 2*n)
		x, y = buf[:n:n], buf[n:]
	} else {
		x, y = append(dx, make([]byte, n)...)[len(dx):], append(dy, make([]byte, n)...)[len(dy):]
	}
	c.fp.fromMont(&t, &a.x)
	putBytes(x, &t)
	c.fp.fromMont(&t, &a.y)
	putBytes(y, &t)
	return x, y, nil
}

// scalar reduces the big-endian k modulo n (constant time in k's value).
func (c *curve[E]) scalar(s *E, k []byte) error {
	if len(k) == 0 || !c.fn.reduceBytes(s, k) {
		return fmt.Errorf("%w: %d bytes (want 1 to %d)", ErrInvalidScalar, len(k), 16*len(*s))
	}
	return nil
}

func (c *curve[E]) scalarBaseMult(dx, dy, k []byte) (x, y []byte, err error) {
	var s E
	if err := c.scalar(&s, k); err != nil {
		return nil, nil, err
	}
	var r point[E]
	c.baseMult(&r, &s)
	return c.appendPoint(dx, dy, &r)
}

func (c *curve[E]) scalarMultBytes(k, px, py []byte) (x, y []byte, err error) {
	var s E
	if err := c.scalar(&s, k); err != nil {
		return nil, nil, err
	}
	var p affine[E]
	if err := c.decodePoint(&p, px, py); err != nil {
		return nil, nil, err
	}
	var r point[E]
	c.scalarMult(&r, &p, &s)
	return c.encodePoint(&r)
}

func (c *curve[E]) doubleScalarMultVarTime(u1, u2, px, py []byte) (x, y []byte, err error) {
	var s1, s2 E
	if err := c.scalar(&s1, u1); err != nil {
		return nil, nil, err
	}
	if err := c.scalar(&s2, u2); err != nil {
		return nil, nil, err
	}
	var p affine[E]
	if err := c.decodePoint(&p, px, py); err != nil {
		return nil, nil, err
	}
	var r point[E]
	c.doubleMultVarTime(&r, &s1, &s2, &p)
	return c.encodePoint(&r)
}

func (c *curve[E]) isOnCurveBytes(x, y []byte) bool {
	var a affine[E]
	return c.decodePoint(&a, x, y) == nil
}

// validScalar reports (in constant time in k's value) whether k is
// exactly the order's byte length and 0 < k < n.
func (c *curve[E]) validScalar(k []byte) bool {
	if len(k) != c.fn.size {
		return false
	}
	var s E
	setBytes(&s, k)
	return less(&s, &c.fn.m)&(1^isZero(&s)) == 1
}

// decompress returns the y coordinate (big-endian) of the point with the
// given x whose y has the given parity: y = (x³ + a·x + b)^((p+1)/4) when
// p ≡ 3 (mod 4), Tonelli–Shanks otherwise (P-224). Public data only.
func (c *curve[E]) decompress(xb []byte, odd bool) ([]byte, error) {
	f := &c.fp
	var x, xm, r, y, y2 E
	if !f.setCanonical(&x, xb) {
		return nil, fmt.Errorf("%w: x coordinate not a %d-byte field element", ErrInvalidPoint, f.size)
	}
	f.toMont(&xm, &x)
	c.rhs(&r, &xm)
	var yp E
	if f.m[0]&3 == 3 {
		var e E
		bigToLimbs(&e, new(big.Int).Rsh(new(big.Int).Add(limbsToBig(&f.m), big.NewInt(1)), 2))
		f.exp(&y, &r, &e)
		f.sqr(&y2, &y)
		if equal(&y2, &r) == 0 {
			return nil, fmt.Errorf("%w: x has no point on the curve", ErrInvalidPoint)
		}
		f.fromMont(&yp, &y)
	} else {
		// p ≡ 1 mod 4 (P-224): Tonelli–Shanks through math/big, fine for
		// a public point.
		var rp E
		f.fromMont(&rp, &r)
		root := new(big.Int).ModSqrt(limbsToBig(&rp), limbsToBig(&f.m))
		if root == nil {
			return nil, fmt.Errorf("%w: x has no point on the curve", ErrInvalidPoint)
		}
		bigToLimbs(&yp, root)
	}
	if (yp[0]&1 == 1) != odd {
		f.neg(&yp, &yp)
	}
	out := make([]byte, f.size)
	putBytes(out, &yp)
	return out, nil
}

// reduceOnce sets z = z mod n for z < 2n.
func (c *curve[E]) reduceOnce(z *E) {
	var d E
	var b uint64
	for i := range len(d) {
		d[i], b = bits.Sub64((*z)[i], c.fn.m[i], b)
	}
	sel(z, z, &d, b)
}

// hashToInt sets e to the hash as an integer mod n: its leftmost bits, as
// many as n has (SEC 1 §4.1.3 step 5, FIPS 186-5 §6.4.1), reduced mod n.
func (c *curve[E]) hashToInt(e *E, hash []byte) {
	if len(hash) > c.fn.size {
		hash = hash[:c.fn.size]
	}
	setBytes(e, hash)
	if excess := 8*len(hash) - c.fn.bits; excess > 0 {
		shiftRight(e, e, uint(excess))
	}
	c.reduceOnce(e)
}

// ecdsaSignature computes r = rx mod n and s = k⁻¹·(e + r·d) mod n and
// writes r‖s into dst (2 × the order's byte length), and s⁻¹ mod n into
// sinv when it is not nil (the order's byte length). Constant time in k and
// d; rx, the hash, the output and s⁻¹ (a function of s) are public.
//
// One inversion gives both inverses: with t = e + r·d and i = (k·t)⁻¹,
// s = t²·i and s⁻¹ = k²·i (t = 0 makes i = 0 and s = 0, refused below).
func (c *curve[E]) ecdsaSignature(dst, sinv, k, d, hash, rx []byte) error {
	fn := &c.fn
	if len(dst) != 2*fn.size {
		return fmt.Errorf("ec: signature buffer of %d bytes, want %d", len(dst), 2*fn.size)
	}
	if sinv != nil && len(sinv) != fn.size {
		return fmt.Errorf("ec: inverse buffer of %d bytes, want %d", len(sinv), fn.size)
	}
	if !c.validScalar(k) {
		return fmt.Errorf("%w: nonce not in [1, n-1]", ErrInvalidScalar)
	}
	if !c.validScalar(d) {
		return fmt.Errorf("%w: private key not in [1, n-1]", ErrInvalidScalar)
	}
	var kk, dd, r, e E
	setBytes(&kk, k)
	setBytes(&dd, d)
	if !c.fp.setCanonical(&r, rx) {
		return fmt.Errorf("%w: x coordinate of k·G not a field element", ErrInvalidPoint)
	}
	c.reduceOnce(&r)
	if isZero(&r) == 1 {
		return fmt.Errorf("%w: r = 0", ErrInvalidScalar)
	}
	c.hashToInt(&e, hash)
	var km, dm, rm, em, t, kt, i, s, w E
	fn.toMont(&km, &kk)
	fn.toMont(&dm, &dd)
	fn.toMont(&rm, &r)
	fn.toMont(&em, &e)
	fn.mul(&t, &rm, &dm)
	fn.add(&t, &t, &em) // t = e + r·d
	fn.mul(&kt, &km, &t)
	fn.inv(&i, &kt) // (k·t)⁻¹
	fn.mul(&s, &t, &t)
	fn.mul(&s, &s, &i)
	fn.fromMont(&s, &s)
	fn.mul(&w, &km, &km)
	fn.mul(&w, &w, &i)
	fn.fromMont(&w, &w)
	if isZero(&s) == 1 {
		return fmt.Errorf("%w: s = 0", ErrInvalidScalar)
	}
	putBytes(dst[:fn.size], &r)
	putBytes(dst[fn.size:], &s)
	if sinv != nil {
		putBytes(sinv, &w)
	}
	return nil
}

// lookupAffine sets t = row[d−1] (t = 0 when d = 0), reading every entry
// of the row: constant time in d.
func lookupAffine[E limbs](t *affine[E], row *[baseRow]affine[E], d uint64) {
	if len(t.x) == 4 { // the limb count is a compile-time constant
		lookupAffine4((*affine[[4]uint64])(unsafe.Pointer(t)), (*[baseRow]affine[[4]uint64])(unsafe.Pointer(row)), d)
		return
	}
	*t = affine[E]{}
	n := len(t.x)
	for j := range row {
		mask := -ctEq(uint64(j+1), d)
		for i := range n {
			t.x[i] |= row[j].x[i] & mask
			t.y[i] |= row[j].y[i] & mask
		}
	}
}

// lookupAffine4 is lookupAffine for four limbs, the selection kept in
// registers (the generic loop stores into t for every entry): every entry
// is read, constant time in d.
func lookupAffine4(t *affine[[4]uint64], row *[baseRow]affine[[4]uint64], d uint64) {
	var x0, x1, x2, x3, y0, y1, y2, y3 uint64
	for j := range row {
		mask := -ctEq(uint64(j+1), d)
		e := &row[j]
		x0 |= e.x[0] & mask
		x1 |= e.x[1] & mask
		x2 |= e.x[2] & mask
		x3 |= e.x[3] & mask
		y0 |= e.y[0] & mask
		y1 |= e.y[1] & mask
		y2 |= e.y[2] & mask
		y3 |= e.y[3] & mask
	}
	t.x = [4]uint64{x0, x1, x2, x3}
	t.y = [4]uint64{y0, y1, y2, y3}
}

// lookupPoint sets t = table[d], reading every entry: constant time in d.
func lookupPoint[E limbs](t *point[E], table *[16]point[E], d uint64) {
	*t = point[E]{}
	n := len(t.x)
	for j := range table {
		mask := -ctEq(uint64(j), d)
		for i := range n {
			t.x[i] |= table[j].x[i] & mask
			t.y[i] |= table[j].y[i] & mask
			t.z[i] |= table[j].z[i] & mask
		}
	}
}

// varComb is a signed comb table for variable-time use: row i holds
// j·2^(w·i)·b for j = 1..2^(w−1), affine, rows back to back. A scalar is
// recoded into signed w-bit digits in [−2^(w−1), 2^(w−1)], so a row needs
// only half the multiples (the other half are negations, free in affine
// form) and the table is half the size of an unsigned one of that width.
type varComb[E limbs] struct {
	w    uint
	rows int
	pts  []affine[E]
}

// varCombRows is the number of signed w-bit digits of a scalar < n: one
// bit more than n has, for the final carry of the recoding.
func varCombRows(nbits int, w uint) int { return (nbits + int(w)) / int(w) }

// buildVarComb makes the signed w-bit comb table of the point b (public
// data).
func (c *curve[E]) buildVarComb(b *affine[E], w uint) *varComb[E] {
	rows := varCombRows(c.fn.bits, w)
	per := 1 << (w - 1)
	pts := make([]point[E], per*rows)
	var base point[E]
	c.fromAffine(&base, b)
	for i := range rows {
		row := pts[per*i : per*(i+1)]
		row[0] = base
		for j := 1; j < per; j++ {
			c.add(&row[j], &row[j-1], &base)
		}
		c.double(&base, &row[per-1]) // 2·2^(w−1)·base
	}
	flat := make([]affine[E], len(pts))
	c.batchToAffine(flat, pts)
	return &varComb[E]{w: w, rows: rows, pts: flat}
}

// digit returns bits pos..pos+w−1 of the plain integer k (bits past its
// end are 0).
func digit[E limbs](k *E, pos int, w uint) uint64 {
	li, sh := pos/64, uint(pos%64)
	if li >= len(*k) {
		return 0
	}
	v := (*k)[li] >> sh
	if sh+w > 64 && li+1 < len(*k) {
		v |= (*k)[li+1] << (64 - sh)
	}
	return v & (1<<w - 1)
}

// add adds k·b to r, k < n. Variable time.
func (t *varComb[E]) add(c *curve[E], r *jacobian[E], k *E) {
	per := 1 << (t.w - 1)
	half := uint64(per)
	var carry uint64
	for i := range t.rows {
		d := digit(k, i*int(t.w), t.w) + carry
		carry = 0
		switch {
		case d == 0:
		case d <= half:
			c.jAddAffine(r, &t.pts[i*per+int(d)-1])
		default: // d − 2^w < 0: subtract, carry one into the next digit
			carry = 1
			if d != 2*half { // a digit of 2^w is 0 with a carry
				c.jSubAffine(r, &t.pts[i*per+int(2*half-d)-1])
			}
		}
	}
}

// generatorVarComb returns G's verification table, built on first use.
func (c *curve[E]) generatorVarComb() *varComb[E] {
	c.varOnce.Do(func() { c.gVar = c.buildVarComb(&c.g, gVarWidth) })
	return c.gVar
}

// ecdsaVerify checks r‖s on the hash under the public point (px, py).
// Variable time (public inputs only).
func (c *curve[E]) ecdsaVerify(px, py, hash, rs []byte) error {
	var q affine[E]
	if err := c.decodePoint(&q, px, py); err != nil {
		return fmt.Errorf("ec: public key: %w", err)
	}
	return c.verifyPoint(&q, nil, hash, rs, nil)
}

// verifyPoint checks r‖s on the hash under the public point q, using q's
// comb table when it has one (then both products are table sums and no
// doubling is needed) and interleaved wNAFs otherwise.
//
// sinv, when not nil, is s⁻¹ mod n as the signer computed it
// (ecdsaSignature): it saves the inversion of s once s·sinv ≡ 1 (mod n) is
// checked, so the verification is the same as with an inverse computed
// here; a wrong sinv makes it fail.
func (c *curve[E]) verifyPoint(q *affine[E], qComb *varComb[E], hash, rs, sinv []byte) error {
	fn := &c.fn
	if len(rs) != 2*fn.size {
		return fmt.Errorf("%w: %d bytes, want %d", ErrInvalidSignature, len(rs), 2*fn.size)
	}
	var r, s E
	if !fn.setCanonical(&r, rs[:fn.size]) || isZero(&r) == 1 {
		return fmt.Errorf("%w: r not in [1, n-1]", ErrInvalidSignature)
	}
	if !fn.setCanonical(&s, rs[fn.size:]) || isZero(&s) == 1 {
		return fmt.Errorf("%w: s not in [1, n-1]", ErrInvalidSignature)
	}
	var e, si, w, u1, u2 E
	c.hashToInt(&e, hash)
	if sinv != nil {
		var one, chk E
		one[0] = 1
		if len(sinv) != fn.size || !fn.setCanonical(&si, sinv) {
			return fmt.Errorf("%w: s⁻¹ not a %d-byte scalar", ErrInvalidSignature, fn.size)
		}
		fn.toMont(&w, &si)   // s⁻¹·R
		fn.mul(&chk, &s, &w) // s·s⁻¹
		if equal(&chk, &one) != 1 {
			return fmt.Errorf("%w: s·s⁻¹ ≠ 1 mod n", ErrInvalidSignature)
		}
	} else {
		fn.invVarTime(&si, &s) // s is public
		fn.toMont(&w, &si)     // s⁻¹·R
	}
	fn.mul(&u1, &e, &w) // e·s⁻¹, plain
	fn.mul(&u2, &r, &w) // r·s⁻¹, plain
	var p point[E]
	if qComb != nil {
		acc := jacobian[E]{inf: true}
		c.generatorVarComb().add(c, &acc, &u1)
		qComb.add(c, &acc, &u2)
		c.toProjective(&p, &acc)
	} else {
		c.doubleMultVarTime(&p, &u1, &u2, q)
	}
	if isZero(&p.z) == 1 {
		return fmt.Errorf("%w: u1·G + u2·Q is the point at infinity", ErrInvalidSignature)
	}
	// x(p) mod n = r, with x(p) = X/Z < p < 2n: X = r·Z or X = (r+n)·Z.
	// Comparing projectively saves an inversion.
	f := &c.fp
	var rm, t E
	f.toMont(&rm, &r)
	f.mul(&t, &rm, &p.z)
	if equal(&t, &p.x) == 1 {
		return nil
	}
	if less(&r, &c.pMinusN) == 1 {
		var rn E
		addPlain(&rn, &r, &fn.m)
		f.toMont(&rm, &rn)
		f.mul(&t, &rm, &p.z)
		if equal(&t, &p.x) == 1 {
			return nil
		}
	}
	return ErrInvalidSignature
}

// addPlain sets z = x + y, for sums that fit.
func addPlain[E limbs](z, x, y *E) {
	var c uint64
	for i := range len(*z) {
		(*z)[i], c = bits.Add64((*x)[i], (*y)[i], c)
	}
}

// pubKey is a validated public point with its comb table (public data),
// for verifying many signatures by one key.
type pubKey[E limbs] struct {
	c    *curve[E]
	q    affine[E]
	once sync.Once
	comb *varComb[E]
}

func (c *curve[E]) newPublicKey(px, py []byte) (verifier, error) {
	k := &pubKey[E]{c: c}
	if err := c.decodePoint(&k.q, px, py); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *pubKey[E]) precompute() {
	k.once.Do(func() {
		k.comb = k.c.buildVarComb(&k.q, pubVarWidth(k.c.fn.bits))
		k.c.generatorVarComb()
	})
}

func (k *pubKey[E]) verify(hash, rs, sinv []byte, fast bool) error {
	if fast {
		k.precompute()
		return k.c.verifyPoint(&k.q, k.comb, hash, rs, sinv)
	}
	return k.c.verifyPoint(&k.q, nil, hash, rs, sinv)
}
