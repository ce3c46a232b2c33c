package ec

import (
	"math/big"
)

// A plain math/big reference of the curve arithmetic (affine formulas with
// modular inverses), written straight from the textbook definitions, to
// compare the constant-time code against. Test use only.

type refPoint struct{ x, y *big.Int } // x == nil: the point at infinity

func (p Params) refAdd(a, b refPoint) refPoint {
	if a.x == nil {
		return b
	}
	if b.x == nil {
		return a
	}
	if a.x.Cmp(b.x) == 0 {
		sum := new(big.Int).Add(a.y, b.y)
		if sum.Mod(sum, p.P).Sign() == 0 {
			return refPoint{}
		}
		return p.refDouble(a)
	}
	num := new(big.Int).Sub(b.y, a.y)
	den := new(big.Int).Sub(b.x, a.x)
	den.Mod(den, p.P).ModInverse(den, p.P)
	l := num.Mul(num, den)
	l.Mod(l, p.P)
	return p.refFinish(l, a, b.x)
}

func (p Params) refDouble(a refPoint) refPoint {
	if a.x == nil || a.y.Sign() == 0 {
		return refPoint{}
	}
	num := new(big.Int).Mul(a.x, a.x)
	num.Mul(num, big.NewInt(3)).Add(num, big.NewInt(p.A))
	den := new(big.Int).Lsh(a.y, 1)
	den.Mod(den, p.P).ModInverse(den, p.P)
	l := num.Mul(num, den)
	l.Mod(l, p.P)
	return p.refFinish(l, a, a.x)
}

// refFinish returns (λ² − x1 − x2, λ·(x1 − x3) − y1).
func (p Params) refFinish(l *big.Int, a refPoint, x2 *big.Int) refPoint {
	x3 := new(big.Int).Mul(l, l)
	x3.Sub(x3, a.x).Sub(x3, x2).Mod(x3, p.P)
	y3 := new(big.Int).Sub(a.x, x3)
	y3.Mul(y3, l).Sub(y3, a.y).Mod(y3, p.P)
	return refPoint{x3, y3}
}

// refMult is double-and-add in Jacobian coordinates (x = X/Z², y = Y/Z³;
// Z = 0 is the identity) with the textbook formulas, then one inversion.
func (p Params) refMult(k *big.Int, a refPoint) refPoint {
	if a.x == nil {
		return refPoint{}
	}
	m := func(v *big.Int) *big.Int { return v.Mod(v, p.P) }
	mul := func(x, y *big.Int) *big.Int { return m(new(big.Int).Mul(x, y)) }
	type jp struct{ x, y, z *big.Int }
	inf := jp{big.NewInt(1), big.NewInt(1), big.NewInt(0)}
	dbl := func(q jp) jp {
		if q.z.Sign() == 0 || q.y.Sign() == 0 {
			return inf
		}
		yy := mul(q.y, q.y)
		s := mul(big.NewInt(4), mul(q.x, yy))
		zz := mul(q.z, q.z)
		mm := m(new(big.Int).Add(mul(big.NewInt(3), mul(q.x, q.x)), mul(big.NewInt(p.A), mul(zz, zz))))
		x3 := m(new(big.Int).Sub(mul(mm, mm), new(big.Int).Lsh(s, 1)))
		y3 := m(new(big.Int).Sub(mul(mm, new(big.Int).Sub(s, x3)), mul(big.NewInt(8), mul(yy, yy))))
		return jp{x3, y3, mul(big.NewInt(2), mul(q.y, q.z))}
	}
	add := func(a, b jp) jp {
		if a.z.Sign() == 0 {
			return b
		}
		if b.z.Sign() == 0 {
			return a
		}
		z1z1, z2z2 := mul(a.z, a.z), mul(b.z, b.z)
		u1, u2 := mul(a.x, z2z2), mul(b.x, z1z1)
		s1, s2 := mul(a.y, mul(b.z, z2z2)), mul(b.y, mul(a.z, z1z1))
		if u1.Cmp(u2) == 0 {
			if s1.Cmp(s2) == 0 {
				return dbl(a)
			}
			return inf
		}
		h := m(new(big.Int).Sub(u2, u1))
		r := m(new(big.Int).Sub(s2, s1))
		hh := mul(h, h)
		hhh := mul(h, hh)
		v := mul(u1, hh)
		x3 := m(new(big.Int).Sub(new(big.Int).Sub(mul(r, r), hhh), new(big.Int).Lsh(v, 1)))
		y3 := m(new(big.Int).Sub(mul(r, new(big.Int).Sub(v, x3)), mul(s1, hhh)))
		return jp{x3, y3, mul(mul(a.z, b.z), h)}
	}
	base := jp{a.x, a.y, big.NewInt(1)}
	acc := inf
	for i := k.BitLen() - 1; i >= 0; i-- {
		acc = dbl(acc)
		if k.Bit(i) == 1 {
			acc = add(acc, base)
		}
	}
	if acc.z.Sign() == 0 {
		return refPoint{}
	}
	zi := new(big.Int).ModInverse(acc.z, p.P)
	zi2 := mul(zi, zi)
	return refPoint{mul(acc.x, zi2), mul(acc.y, mul(zi2, zi))}
}

// refMultAffine is double-and-add with the affine formulas, a second
// reference for refMult.
func (p Params) refMultAffine(k *big.Int, a refPoint) refPoint {
	r := refPoint{}
	for i := k.BitLen() - 1; i >= 0; i-- {
		r = p.refDouble(r)
		if k.Bit(i) == 1 {
			r = p.refAdd(r, a)
		}
	}
	return r
}

func (p Params) refG() refPoint { return refPoint{p.Gx, p.Gy} }

func (p Params) refOnCurve(a refPoint) bool {
	l := new(big.Int).Mul(a.y, a.y)
	r := new(big.Int).Exp(a.x, big.NewInt(3), nil)
	r.Add(r, new(big.Int).Mul(big.NewInt(p.A), a.x)).Add(r, p.B)
	return new(big.Int).Sub(l, r).Mod(new(big.Int).Sub(l, r), p.P).Sign() == 0
}

// refHashToInt is e of FIPS 186-5 §6.4.1 (leftmost bits of the hash).
func (p Params) refHashToInt(hash []byte) *big.Int {
	e := new(big.Int).SetBytes(hash)
	if excess := 8*len(hash) - p.N.BitLen(); excess > 0 {
		e.Rsh(e, uint(excess))
	}
	return e.Mod(e, p.N)
}

// refVerify is ECDSA verification by the book.
func (p Params) refVerify(q refPoint, hash []byte, r, s *big.Int) bool {
	if r.Sign() <= 0 || s.Sign() <= 0 || r.Cmp(p.N) >= 0 || s.Cmp(p.N) >= 0 {
		return false
	}
	w := new(big.Int).ModInverse(s, p.N)
	u1 := new(big.Int).Mul(p.refHashToInt(hash), w)
	u1.Mod(u1, p.N)
	u2 := new(big.Int).Mul(r, w)
	u2.Mod(u2, p.N)
	pt := p.refAdd(p.refMult(u1, p.refG()), p.refMult(u2, q))
	if pt.x == nil {
		return false
	}
	return new(big.Int).Mod(pt.x, p.N).Cmp(r) == 0
}

func (c *Curve) pad(v *big.Int) []byte { return v.FillBytes(make([]byte, c.size)) }
