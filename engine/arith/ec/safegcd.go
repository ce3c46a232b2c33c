package ec

import (
	"math/big"
	"math/bits"
)

// Constant-time modular inversion by Bernstein and Yang's divsteps
// ("Fast constant-time gcd computation and modular inversion", 2019), in
// the form of libsecp256k1's modinv64 (src/modinv64_impl.h, its
// constant-time secp256k1_modinv64, MIT licence; doc/safegcd_implementation.md
// explains every step): numbers in five signed limbs of 62 bits, batches
// of 59 divsteps on the low limbs giving a 2×2 transition matrix, which is
// then applied to the full f, g (the gcd pair) and d, e (the Bézout
// coefficients, kept in (−2m, m) by adding multiples of m that zero the
// low 62 bits). Ten batches, 590 divsteps, suffice for any odd modulus
// below 2²⁵⁶ and any input in [0, m) (the bound of that document); the
// count is fixed, every step is masks and shifts, so the time depends on
// neither the input nor the modulus' value. For the P-256 order and prime
// it replaces the Fermat chains (253 and 255 squarings): about a third of
// their time (BenchmarkInvN256).

// m62 masks a limb's 62 bits.
const m62 = 1<<62 - 1

// signed62 is a number in signed 62-bit limbs, least significant first:
// Σ v[i]·2^(62·i), each limb in (−2⁶², 2⁶²) between the steps, v[4] (the
// top) carrying the sign.
type signed62 [5]int64

// invModulus is an odd modulus below 2²⁵⁶ prepared for safegcdInv.
type invModulus struct {
	m    signed62
	minv uint64 // m⁻¹ mod 2⁶²
}

// newInvModulus prepares the odd m < 2²⁵⁶ (public precomputation).
func newInvModulus(m *big.Int) *invModulus {
	if m.Bit(0) == 0 || m.BitLen() > 256 {
		panic("ec: safegcd modulus must be odd and below 2^256")
	}
	var l [4]uint64
	bigToLimbs(&l, m)
	im := &invModulus{m: toSigned62(&l)}
	two62 := new(big.Int).Lsh(big.NewInt(1), 62)
	im.minv = new(big.Int).ModInverse(new(big.Int).Mod(m, two62), two62).Uint64()
	return im
}

// toSigned62 converts a 256-bit little-endian number to signed62.
func toSigned62(a *[4]uint64) signed62 {
	return signed62{
		int64(a[0] & m62),
		int64((a[0]>>62 | a[1]<<2) & m62),
		int64((a[1]>>60 | a[2]<<4) & m62),
		int64((a[2]>>58 | a[3]<<6) & m62),
		int64(a[3] >> 56),
	}
}

// fromSigned62 converts a normalised signed62 (limbs in [0, 2⁶²), the top
// one below 2⁸) back to four 64-bit limbs.
func fromSigned62(z *[4]uint64, v *signed62) {
	z[0] = uint64(v[0]) | uint64(v[1])<<62
	z[1] = uint64(v[1])>>2 | uint64(v[2])<<60
	z[2] = uint64(v[2])>>4 | uint64(v[3])<<58
	z[3] = uint64(v[3])>>6 | uint64(v[4])<<56
}

// trans2x2 is the transition matrix of a batch of divsteps, scaled by 2⁶².
type trans2x2 struct{ u, v, q, r int64 }

// divsteps59 runs 59 divsteps on the low 64 bits of f (odd) and g, from
// zeta = −(δ + ½), and returns the new zeta and the matrix t such that
// t·[f, g] = 2⁶²·[f', g']. Masks only: no branch, no index depends on f,
// g or zeta.
func divsteps59(zeta int64, f0, g0 uint64, t *trans2x2) int64 {
	// u, v, q, r start as the identity times 8 (2⁶² / 2⁵⁹), as uint64
	// (two's complement, in (−2⁶², 2⁶²)).
	u, v, q, r := uint64(8), uint64(0), uint64(0), uint64(8)
	f, g := f0, g0
	for range 59 {
		c1 := uint64(zeta >> 63) // zeta < 0
		c2 := -(g & 1)           // g odd
		x := (f ^ c1) - c1
		y := (u ^ c1) - c1
		z := (v ^ c1) - c1
		g += x & c2
		q += y & c2
		r += z & c2
		c1 &= c2
		zeta = (zeta ^ int64(c1)) - 1
		f += g & c1
		u += q & c1
		v += r & c1
		g >>= 1
		u <<= 1
		v <<= 1
	}
	t.u, t.v, t.q, t.r = int64(u), int64(v), int64(q), int64(r)
	return zeta
}

// i128 is a signed 128-bit accumulator.
type i128 struct {
	hi int64
	lo uint64
}

// mac adds a·b (signed 64 × 64 bits) to c.
func (c *i128) mac(a, b int64) {
	h, l := bits.Mul64(uint64(a), uint64(b))
	h -= uint64(a>>63)&uint64(b) + uint64(b>>63)&uint64(a) // signed product
	var carry uint64
	c.lo, carry = bits.Add64(c.lo, l, 0)
	c.hi += int64(h + carry)
}

// shr62 shifts c right by 62 bits, arithmetically.
func (c *i128) shr62() {
	c.lo = c.lo>>62 | uint64(c.hi)<<2
	c.hi >>= 62
}

// updateDE sets [d, e] = (t·[d, e] + m·[md, me]) / 2⁶², md and me chosen
// so that the division is exact and d, e stay in (−2m, m). Written out
// like updateFG, whose steps it shares: a helper per limb is a call the
// compiler does not inline (6–15 % slower, in thread CPU time).
func (im *invModulus) updateDE(d, e *signed62, t *trans2x2) {
	u, v, q, r := t.u, t.v, t.q, t.r
	sd, se := d[4]>>63, e[4]>>63
	md := (u & sd) + (v & se)
	me := (q & sd) + (r & se)
	var cd, ce i128
	cd.mac(u, d[0])
	cd.mac(v, e[0])
	ce.mac(q, d[0])
	ce.mac(r, e[0])
	md -= int64((im.minv*cd.lo + uint64(md)) & m62)
	me -= int64((im.minv*ce.lo + uint64(me)) & m62)
	cd.mac(im.m[0], md)
	ce.mac(im.m[0], me)
	cd.shr62() // the low 62 bits are zero
	ce.shr62()
	for i := 1; i < 5; i++ {
		cd.mac(u, d[i])
		cd.mac(v, e[i])
		ce.mac(q, d[i])
		ce.mac(r, e[i])
		cd.mac(im.m[i], md)
		ce.mac(im.m[i], me)
		d[i-1] = int64(cd.lo & m62)
		e[i-1] = int64(ce.lo & m62)
		cd.shr62()
		ce.shr62()
	}
	d[4] = int64(cd.lo)
	e[4] = int64(ce.lo)
}

// updateFG sets [f, g] = t·[f, g] / 2⁶² (exact).
func updateFG(f, g *signed62, t *trans2x2) {
	u, v, q, r := t.u, t.v, t.q, t.r
	var cf, cg i128
	cf.mac(u, f[0])
	cf.mac(v, g[0])
	cg.mac(q, f[0])
	cg.mac(r, g[0])
	cf.shr62() // the low 62 bits are zero
	cg.shr62()
	for i := 1; i < 5; i++ {
		cf.mac(u, f[i])
		cf.mac(v, g[i])
		cg.mac(q, f[i])
		cg.mac(r, g[i])
		f[i-1] = int64(cf.lo & m62)
		g[i-1] = int64(cg.lo & m62)
		cf.shr62()
		cg.shr62()
	}
	f[4] = int64(cf.lo)
	g[4] = int64(cg.lo)
}

// normalize brings d from (−2m, m) to [0, m), negated first when sign
// (f's top limb: f = ±1 at the end) is negative.
func (im *invModulus) normalize(d *signed62, sign int64) {
	m := &im.m
	add := d[4] >> 63
	for i := range d {
		d[i] += m[i] & add
	}
	neg := sign >> 63
	for i := range d {
		d[i] = (d[i] ^ neg) - neg
	}
	for i := range 4 {
		d[i+1] += d[i] >> 62
		d[i] &= m62
	}
	add = d[4] >> 63
	for i := range d {
		d[i] += m[i] & add
	}
	for i := range 4 {
		d[i+1] += d[i] >> 62
		d[i] &= m62
	}
}

// inv sets z = x⁻¹ mod m for the plain x in [0, m); the inverse of 0 is
// 0. Constant time in x.
func (im *invModulus) inv(z, x *[4]uint64) {
	if traceOps {
		traceOp(6)
	}
	d := signed62{}
	e := signed62{1}
	f := im.m
	g := toSigned62(x)
	zeta := int64(-1)
	var t trans2x2
	for range 10 {
		zeta = divsteps59(zeta, uint64(f[0]), uint64(g[0]), &t)
		im.updateDE(&d, &e, &t)
		updateFG(&f, &g, &t)
	}
	// g = 0 and f = ±gcd = ±1 (for x ≠ 0): d is ±x⁻¹.
	im.normalize(&d, f[4])
	fromSigned62(z, &d)
}

// n256 is the order of the P-256 base point.
var n256, _ = new(big.Int).SetString("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551", 16)
