package chip

import (
	"crypto/elliptic"
	"math/big"
)

// curve is a short-Weierstrass prime curve with a = −3 (the NIST curves).
// The simulator does its own point arithmetic with math/big: variable
// time, which is acceptable for a simulator (Info says ConstantTime false).
type curve struct {
	name              string
	p, n, b, gx, gy   *big.Int
	bits, size, words int // field bits, bytes, 32-bit words
}

var curves = map[string]*curve{}

func init() {
	for _, c := range []elliptic.Curve{elliptic.P256(), elliptic.P384(), elliptic.P521()} {
		pr := c.Params()
		curves[pr.Name] = &curve{name: pr.Name, p: pr.P, n: pr.N, b: pr.B, gx: pr.Gx, gy: pr.Gy,
			bits: pr.BitSize, size: (pr.BitSize + 7) / 8, words: (pr.BitSize + 31) / 32}
	}
}

// jac is a point in Jacobian coordinates (X/Z², Y/Z³); Z = 0 is infinity.
type jac struct{ x, y, z *big.Int }

func (c *curve) onCurve(x, y *big.Int) bool {
	if x.Sign() < 0 || y.Sign() < 0 || x.Cmp(c.p) >= 0 || y.Cmp(c.p) >= 0 {
		return false
	}
	y2 := new(big.Int).Mul(y, y)
	y2.Mod(y2, c.p)
	x3 := new(big.Int).Mul(x, x)
	x3.Mul(x3, x)
	x3.Sub(x3, new(big.Int).Lsh(x, 1))
	x3.Sub(x3, x)
	x3.Add(x3, c.b)
	x3.Mod(x3, c.p)
	return x3.Cmp(y2) == 0
}

func (c *curve) mod(x *big.Int) *big.Int { return x.Mod(x, c.p) }

func (c *curve) double(a jac) jac {
	if a.z.Sign() == 0 || a.y.Sign() == 0 {
		return jac{big.NewInt(1), big.NewInt(1), new(big.Int)}
	}
	delta := c.mod(new(big.Int).Mul(a.z, a.z))
	gamma := c.mod(new(big.Int).Mul(a.y, a.y))
	beta := c.mod(new(big.Int).Mul(a.x, gamma))
	t1 := new(big.Int).Sub(a.x, delta)
	t2 := new(big.Int).Add(a.x, delta)
	alpha := c.mod(new(big.Int).Mul(t1, t2))
	alpha.Mul(alpha, big.NewInt(3))
	c.mod(alpha)
	x3 := new(big.Int).Mul(alpha, alpha)
	x3.Sub(x3, new(big.Int).Lsh(beta, 3))
	c.mod(x3)
	z3 := new(big.Int).Add(a.y, a.z)
	z3.Mul(z3, z3)
	z3.Sub(z3, gamma)
	z3.Sub(z3, delta)
	c.mod(z3)
	y3 := new(big.Int).Lsh(beta, 2)
	y3.Sub(y3, x3)
	y3.Mul(y3, alpha)
	g2 := new(big.Int).Mul(gamma, gamma)
	y3.Sub(y3, g2.Lsh(g2, 3))
	c.mod(y3)
	return jac{x3, y3, z3}
}

func (c *curve) add(a, b jac) jac {
	if a.z.Sign() == 0 {
		return b
	}
	if b.z.Sign() == 0 {
		return a
	}
	z1z1 := c.mod(new(big.Int).Mul(a.z, a.z))
	z2z2 := c.mod(new(big.Int).Mul(b.z, b.z))
	u1 := c.mod(new(big.Int).Mul(a.x, z2z2))
	u2 := c.mod(new(big.Int).Mul(b.x, z1z1))
	s1 := c.mod(new(big.Int).Mul(a.y, new(big.Int).Mul(b.z, z2z2)))
	s2 := c.mod(new(big.Int).Mul(b.y, new(big.Int).Mul(a.z, z1z1)))
	h := c.mod(new(big.Int).Sub(u2, u1))
	r := c.mod(new(big.Int).Sub(s2, s1))
	if h.Sign() == 0 {
		if r.Sign() == 0 {
			return c.double(a)
		}
		return jac{big.NewInt(1), big.NewInt(1), new(big.Int)}
	}
	hh := c.mod(new(big.Int).Mul(h, h))
	hhh := c.mod(new(big.Int).Mul(hh, h))
	v := c.mod(new(big.Int).Mul(u1, hh))
	x3 := new(big.Int).Mul(r, r)
	x3.Sub(x3, hhh)
	x3.Sub(x3, new(big.Int).Lsh(v, 1))
	c.mod(x3)
	y3 := new(big.Int).Sub(v, x3)
	y3.Mul(y3, r)
	y3.Sub(y3, new(big.Int).Mul(s1, hhh))
	c.mod(y3)
	z3 := new(big.Int).Mul(a.z, b.z)
	z3.Mul(z3, h)
	c.mod(z3)
	return jac{x3, y3, z3}
}

// mul returns k·(x, y), left to right, double and add.
func (c *curve) mul(k, x, y *big.Int) jac {
	p := jac{new(big.Int).Set(x), new(big.Int).Set(y), big.NewInt(1)}
	acc := jac{big.NewInt(1), big.NewInt(1), new(big.Int)}
	for i := k.BitLen() - 1; i >= 0; i-- {
		acc = c.double(acc)
		if k.Bit(i) == 1 {
			acc = c.add(acc, p)
		}
	}
	return acc
}

// affine converts a finite point; ok is false at infinity.
func (c *curve) affine(a jac) (x, y *big.Int, ok bool) {
	if a.z.Sign() == 0 {
		return nil, nil, false
	}
	zi := new(big.Int).ModInverse(a.z, c.p)
	zi2 := c.mod(new(big.Int).Mul(zi, zi))
	x = c.mod(new(big.Int).Mul(a.x, zi2))
	y = c.mod(new(big.Int).Mul(a.y, c.mod(zi2.Mul(zi2, zi))))
	return x, y, true
}

// hashInt converts a message hash to an integer mod-n candidate, keeping
// its leftmost bitlen(n) bits (FIPS 186-5, SEC 1).
func (c *curve) hashInt(hash []byte) *big.Int {
	e := new(big.Int).SetBytes(hash)
	if excess := len(hash)*8 - c.n.BitLen(); excess > 0 {
		e.Rsh(e, uint(excess))
	}
	return e
}
