package ec

import "unsafe"

// Variable-time point arithmetic for verification: Jacobian coordinates
// (x = X/Z², y = Y/Z³) with the cheaper incomplete formulas of the
// Explicit-Formulas Database (madd-2007-bl: 7M + 4S; dbl-2001-b for
// a = −3: 3M + 5S, dbl-2007-bl for a = 0), whose
// exceptional cases (the identity, P = Q, P = −Q) are handled by branches.
// Only public data goes through here.

// jacobian is a Jacobian point in Montgomery form; inf marks the identity.
type jacobian[E limbs] struct {
	x, y, z E
	inf     bool
}

// jAddAffine sets r = r + q. Variable time.
func (c *curve[E]) jAddAffine(r *jacobian[E], q *affine[E]) {
	f := &c.fp
	if len(r.x) == 4 && haveADX && f.p256 && !traceOps { // the shape, CPU and modulus are public
		jAddAffineP256((*curve[[4]uint64])(unsafe.Pointer(c)), (*jacobian[[4]uint64])(unsafe.Pointer(r)), (*affine[[4]uint64])(unsafe.Pointer(q)))
		return
	}
	if r.inf {
		r.x, r.y, r.z, r.inf = q.x, q.y, f.one, false
		return
	}
	var z1z1, u2, s2, h, rr E
	f.sqr(&z1z1, &r.z)
	f.mul(&u2, &q.x, &z1z1)
	f.mul(&s2, &q.y, &r.z)
	f.mul(&s2, &s2, &z1z1)
	f.sub(&h, &u2, &r.x)
	f.sub(&rr, &s2, &r.y)
	if isZero(&h) == 1 {
		c.jSameX(r, &rr)
		return
	}
	var hh, i, j, v, t, x3, y3, z3 E
	f.sqr(&hh, &h)
	f.add(&i, &hh, &hh)
	f.add(&i, &i, &i) // I = 4·H²
	f.mul(&j, &h, &i) // J = H·I
	f.add(&rr, &rr, &rr)
	f.mul(&v, &r.x, &i)
	f.sqr(&x3, &rr) // X3 = r² − J − 2V
	f.sub(&x3, &x3, &j)
	f.sub(&x3, &x3, &v)
	f.sub(&x3, &x3, &v)
	f.sub(&t, &v, &x3) // Y3 = r·(V − X3) − 2·Y1·J
	f.mul(&y3, &rr, &t)
	f.mul(&t, &r.y, &j)
	f.add(&t, &t, &t)
	f.sub(&y3, &y3, &t)
	f.add(&z3, &r.z, &h) // Z3 = (Z1 + H)² − Z1² − H²
	f.sqr(&z3, &z3)
	f.sub(&z3, &z3, &z1z1)
	f.sub(&z3, &z3, &hh)
	r.x, r.y, r.z = x3, y3, z3
}

// jSameX finishes r + q when q has r's x: r = q (doubled) when rr, the
// difference of their y, is zero, else r = −q (the identity).
func (c *curve[E]) jSameX(r *jacobian[E], rr *E) {
	if isZero(rr) == 1 {
		c.jDouble(r)
		return
	}
	r.inf = true
}

// jSubAffine sets r = r − q. Variable time.
func (c *curve[E]) jSubAffine(r *jacobian[E], q *affine[E]) {
	n := affine[E]{x: q.x}
	c.fp.neg(&n.y, &q.y)
	c.jAddAffine(r, &n)
}

// jDouble sets r = 2·r (dbl-2007-bl with a = −3 or 0). Variable time.
func (c *curve[E]) jDouble(r *jacobian[E]) {
	f := &c.fp
	if r.inf {
		return
	}
	if isZero(&r.y) == 1 { // a point of order 2 (none on these curves)
		r.inf = true
		return
	}
	if c.aMinus3 {
		c.jDoubleMinus3(r)
		return
	}
	var xx, yy, yyyy, zz, s, m, t, x3, y3, z3 E
	f.sqr(&xx, &r.x)
	f.sqr(&yy, &r.y)
	f.sqr(&yyyy, &yy)
	f.sqr(&zz, &r.z)
	f.add(&s, &r.x, &yy) // S = 2·((X + YY)² − XX − YYYY)
	f.sqr(&s, &s)
	f.sub(&s, &s, &xx)
	f.sub(&s, &s, &yyyy)
	f.add(&s, &s, &s)
	f.add(&m, &xx, &xx) // M = 3·XX + a·ZZ²
	f.add(&m, &m, &xx)
	if c.aMinus3 {
		f.sqr(&t, &zz)
		f.sub(&m, &m, &t)
		f.sub(&m, &m, &t)
		f.sub(&m, &m, &t)
	}
	f.sqr(&x3, &m) // X3 = M² − 2S
	f.sub(&x3, &x3, &s)
	f.sub(&x3, &x3, &s)
	f.add(&z3, &r.y, &r.z) // Z3 = (Y + Z)² − YY − ZZ
	f.sqr(&z3, &z3)
	f.sub(&z3, &z3, &yy)
	f.sub(&z3, &z3, &zz)
	f.sub(&t, &s, &x3) // Y3 = M·(S − X3) − 8·YYYY
	f.mul(&y3, &m, &t)
	f.add(&yyyy, &yyyy, &yyyy)
	f.add(&yyyy, &yyyy, &yyyy)
	f.add(&yyyy, &yyyy, &yyyy)
	f.sub(&y3, &y3, &yyyy)
	r.x, r.y, r.z = x3, y3, z3
}

// jDoubleMinus3 sets r = 2·r for a = −3 and r neither the identity nor of
// order 2 (dbl-2001-b: 3M + 5S). Variable time.
func (c *curve[E]) jDoubleMinus3(r *jacobian[E]) {
	f := &c.fp
	var delta, gamma, beta, alpha, t, x3, y3, z3 E
	f.sqr(&delta, &r.z)
	f.sqr(&gamma, &r.y)
	f.mul(&beta, &r.x, &gamma)
	f.sub(&t, &r.x, &delta) // alpha = 3·(X − delta)·(X + delta)
	f.add(&alpha, &r.x, &delta)
	f.mul(&alpha, &alpha, &t)
	f.add(&t, &alpha, &alpha)
	f.add(&alpha, &alpha, &t)
	f.add(&beta, &beta, &beta) // beta = 4·X·gamma from here on
	f.add(&beta, &beta, &beta)
	f.sqr(&x3, &alpha) // X3 = alpha² − 8·X·gamma
	f.sub(&x3, &x3, &beta)
	f.sub(&x3, &x3, &beta)
	f.add(&z3, &r.y, &r.z) // Z3 = (Y + Z)² − gamma − delta
	f.sqr(&z3, &z3)
	f.sub(&z3, &z3, &gamma)
	f.sub(&z3, &z3, &delta)
	f.sub(&t, &beta, &x3) // Y3 = alpha·(4·X·gamma − X3) − 8·gamma²
	f.mul(&y3, &alpha, &t)
	f.sqr(&gamma, &gamma)
	f.add(&gamma, &gamma, &gamma)
	f.add(&gamma, &gamma, &gamma)
	f.add(&gamma, &gamma, &gamma)
	f.sub(&y3, &y3, &gamma)
	r.x, r.y, r.z = x3, y3, z3
}

// toProjective sets p to r in projective coordinates: (X·Z : Y : Z³).
func (c *curve[E]) toProjective(p *point[E], r *jacobian[E]) {
	if r.inf {
		c.setIdentity(p)
		return
	}
	f := &c.fp
	f.mul(&p.x, &r.x, &r.z)
	p.y = r.y
	f.sqr(&p.z, &r.z)
	f.mul(&p.z, &p.z, &r.z)
}
