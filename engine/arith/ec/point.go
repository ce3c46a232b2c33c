package ec

// point is a projective point (X:Y:Z) with coordinates in Montgomery
// form, standing for the affine (X/Z, Y/Z); the identity is (0:1:0).
type point[E limbs] struct{ x, y, z E }

// affine is an affine point (x, y) in Montgomery form; it cannot be the
// identity.
type affine[E limbs] struct{ x, y E }

// setIdentity sets p to the point at infinity.
func (c *curve[E]) setIdentity(p *point[E]) {
	p.x = *new(E)
	p.y = c.fp.one
	p.z = *new(E)
}

// fromAffine sets p to the projective form of a.
func (c *curve[E]) fromAffine(p *point[E], a *affine[E]) {
	p.x, p.y, p.z = a.x, a.y, c.fp.one
}

// selectPoint sets z = a if cond == 1 and z = b if cond == 0.
func selectPoint[E limbs](z, a, b *point[E], cond uint64) {
	sel(&z.x, &a.x, &b.x, cond)
	sel(&z.y, &a.y, &b.y, cond)
	sel(&z.z, &a.z, &b.z, cond)
}

// The formulas below are the complete ones of Renes, Costello and Batina,
// "Complete addition formulas for prime order elliptic curves" (2016):
// algorithms 4, 5, 6 for a = −3 and 7, 8, 9 for a = 0, step by step. They
// have no exceptional cases (doubling through add, the identity, P + (−P)),
// hence no branches: the only branch is on the curve's a, a public
// constant. Results are computed into locals first, so r may alias p or q.

// add sets r = p + q.
func (c *curve[E]) add(r, p, q *point[E]) {
	f := &c.fp
	var t0, t1, t2, t3, t4, x3, y3, z3 E
	f.mul(&t0, &p.x, &q.x)
	f.mul(&t1, &p.y, &q.y)
	f.mul(&t2, &p.z, &q.z)
	f.add(&t3, &p.x, &p.y)
	f.add(&t4, &q.x, &q.y)
	f.mul(&t3, &t3, &t4)
	f.add(&t4, &t0, &t1)
	f.sub(&t3, &t3, &t4)
	f.add(&t4, &p.y, &p.z)
	f.add(&x3, &q.y, &q.z)
	f.mul(&t4, &t4, &x3)
	f.add(&x3, &t1, &t2)
	f.sub(&t4, &t4, &x3)
	f.add(&x3, &p.x, &p.z)
	f.add(&y3, &q.x, &q.z)
	f.mul(&x3, &x3, &y3)
	f.add(&y3, &t0, &t2)
	f.sub(&y3, &x3, &y3)
	if c.aMinus3 {
		f.mul(&z3, &c.b, &t2)
		f.sub(&x3, &y3, &z3)
		f.add(&z3, &x3, &x3)
		f.add(&x3, &x3, &z3)
		f.sub(&z3, &t1, &x3)
		f.add(&x3, &t1, &x3)
		f.mul(&y3, &c.b, &y3)
		f.add(&t1, &t2, &t2)
		f.add(&t2, &t1, &t2)
		f.sub(&y3, &y3, &t2)
		f.sub(&y3, &y3, &t0)
		f.add(&t1, &y3, &y3)
		f.add(&y3, &t1, &y3)
		f.add(&t1, &t0, &t0)
		f.add(&t0, &t1, &t0)
		f.sub(&t0, &t0, &t2)
		f.mul(&t1, &t4, &y3)
		f.mul(&t2, &t0, &y3)
		f.mul(&y3, &x3, &z3)
		f.add(&y3, &y3, &t2)
		f.mul(&x3, &x3, &t3)
		f.sub(&x3, &x3, &t1)
		f.mul(&z3, &t4, &z3)
		f.mul(&t1, &t3, &t0)
		f.add(&z3, &z3, &t1)
	} else {
		f.add(&x3, &t0, &t0)
		f.add(&t0, &x3, &t0)
		f.mul(&t2, &c.b3, &t2)
		f.add(&z3, &t1, &t2)
		f.sub(&t1, &t1, &t2)
		f.mul(&y3, &c.b3, &y3)
		f.mul(&x3, &t4, &y3)
		f.mul(&t2, &t3, &t1)
		f.sub(&x3, &t2, &x3)
		f.mul(&y3, &y3, &t0)
		f.mul(&t1, &t1, &z3)
		f.add(&y3, &t1, &y3)
		f.mul(&t0, &t0, &t3)
		f.mul(&z3, &z3, &t4)
		f.add(&z3, &z3, &t0)
	}
	r.x, r.y, r.z = x3, y3, z3
}

// addAffine sets r = p + q for an affine q (mixed addition). It is
// complete for every p, the identity included; q cannot be the identity.
func (c *curve[E]) addAffine(r, p *point[E], q *affine[E]) {
	f := &c.fp
	var t0, t1, t2, t3, t4, x3, y3, z3 E
	f.mul(&t0, &p.x, &q.x)
	f.mul(&t1, &p.y, &q.y)
	f.add(&t3, &q.x, &q.y)
	f.add(&t4, &p.x, &p.y)
	f.mul(&t3, &t3, &t4)
	f.add(&t4, &t0, &t1)
	f.sub(&t3, &t3, &t4)
	f.mul(&t4, &q.y, &p.z)
	f.add(&t4, &t4, &p.y)
	f.mul(&y3, &q.x, &p.z)
	f.add(&y3, &y3, &p.x)
	if c.aMinus3 {
		f.mul(&z3, &c.b, &p.z)
		f.sub(&x3, &y3, &z3)
		f.add(&z3, &x3, &x3)
		f.add(&x3, &x3, &z3)
		f.sub(&z3, &t1, &x3)
		f.add(&x3, &t1, &x3)
		f.mul(&y3, &c.b, &y3)
		f.add(&t1, &p.z, &p.z)
		f.add(&t2, &t1, &p.z)
		f.sub(&y3, &y3, &t2)
		f.sub(&y3, &y3, &t0)
		f.add(&t1, &y3, &y3)
		f.add(&y3, &t1, &y3)
		f.add(&t1, &t0, &t0)
		f.add(&t0, &t1, &t0)
		f.sub(&t0, &t0, &t2)
		f.mul(&t1, &t4, &y3)
		f.mul(&t2, &t0, &y3)
		f.mul(&y3, &x3, &z3)
		f.add(&y3, &y3, &t2)
		f.mul(&x3, &x3, &t3)
		f.sub(&x3, &x3, &t1)
		f.mul(&z3, &t4, &z3)
		f.mul(&t1, &t3, &t0)
		f.add(&z3, &z3, &t1)
	} else {
		f.add(&x3, &t0, &t0)
		f.add(&t0, &x3, &t0)
		f.mul(&t2, &c.b3, &p.z)
		f.add(&z3, &t1, &t2)
		f.sub(&t1, &t1, &t2)
		f.mul(&y3, &c.b3, &y3)
		f.mul(&x3, &t4, &y3)
		f.mul(&t2, &t3, &t1)
		f.sub(&x3, &t2, &x3)
		f.mul(&y3, &y3, &t0)
		f.mul(&t1, &t1, &z3)
		f.add(&y3, &t1, &y3)
		f.mul(&t0, &t0, &t3)
		f.mul(&z3, &z3, &t4)
		f.add(&z3, &z3, &t0)
	}
	r.x, r.y, r.z = x3, y3, z3
}

// double sets r = 2·p.
func (c *curve[E]) double(r, p *point[E]) {
	f := &c.fp
	var t0, t1, t2, t3, x3, y3, z3 E
	if c.aMinus3 {
		f.sqr(&t0, &p.x)
		f.sqr(&t1, &p.y)
		f.sqr(&t2, &p.z)
		f.mul(&t3, &p.x, &p.y)
		f.add(&t3, &t3, &t3)
		f.mul(&z3, &p.x, &p.z)
		f.add(&z3, &z3, &z3)
		f.mul(&y3, &c.b, &t2)
		f.sub(&y3, &y3, &z3)
		f.add(&x3, &y3, &y3)
		f.add(&y3, &x3, &y3)
		f.sub(&x3, &t1, &y3)
		f.add(&y3, &t1, &y3)
		f.mul(&y3, &x3, &y3)
		f.mul(&x3, &x3, &t3)
		f.add(&t3, &t2, &t2)
		f.add(&t2, &t2, &t3)
		f.mul(&z3, &c.b, &z3)
		f.sub(&z3, &z3, &t2)
		f.sub(&z3, &z3, &t0)
		f.add(&t3, &z3, &z3)
		f.add(&z3, &z3, &t3)
		f.add(&t3, &t0, &t0)
		f.add(&t0, &t3, &t0)
		f.sub(&t0, &t0, &t2)
		f.mul(&t0, &t0, &z3)
		f.add(&y3, &y3, &t0)
		f.mul(&t0, &p.y, &p.z)
		f.add(&t0, &t0, &t0)
		f.mul(&z3, &t0, &z3)
		f.sub(&x3, &x3, &z3)
		f.mul(&z3, &t0, &t1)
		f.add(&z3, &z3, &z3)
		f.add(&z3, &z3, &z3)
	} else {
		f.sqr(&t0, &p.y)
		f.add(&z3, &t0, &t0)
		f.add(&z3, &z3, &z3)
		f.add(&z3, &z3, &z3)
		f.mul(&t1, &p.y, &p.z)
		f.sqr(&t2, &p.z)
		f.mul(&t2, &c.b3, &t2)
		f.mul(&x3, &t2, &z3)
		f.add(&y3, &t0, &t2)
		f.mul(&z3, &t1, &z3)
		f.add(&t1, &t2, &t2)
		f.add(&t2, &t1, &t2)
		f.sub(&t0, &t0, &t2)
		f.mul(&y3, &t0, &y3)
		f.add(&y3, &x3, &y3)
		f.mul(&t1, &p.x, &p.y)
		f.mul(&x3, &t0, &t1)
		f.add(&x3, &x3, &x3)
	}
	r.x, r.y, r.z = x3, y3, z3
}

// toAffine sets a to p's affine form and returns 1, or returns 0 (and an
// unspecified a) when p is the identity. Constant time.
func (c *curve[E]) toAffine(a *affine[E], p *point[E]) uint64 {
	f := &c.fp
	var zinv E
	f.inv(&zinv, &p.z)
	f.mul(&a.x, &p.x, &zinv)
	f.mul(&a.y, &p.y, &zinv)
	return 1 ^ isZero(&p.z)
}

// isOnCurve reports whether the affine a satisfies y² = x³ + a·x + b.
func (c *curve[E]) isOnCurve(a *affine[E]) bool {
	var lhs, rhs E
	c.fp.sqr(&lhs, &a.y)
	c.rhs(&rhs, &a.x)
	return equal(&lhs, &rhs) == 1
}

// rhs sets z = x³ + a·x + b.
func (c *curve[E]) rhs(z, x *E) {
	f := &c.fp
	var t E
	f.sqr(&t, x)
	f.mul(&t, &t, x)
	if c.aMinus3 {
		var x3 E
		f.add(&x3, x, x)
		f.add(&x3, &x3, x)
		f.sub(&t, &t, &x3)
	}
	f.add(z, &t, &c.b)
}
