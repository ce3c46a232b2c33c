package ec

// jAddAffineP256 is jAddAffine for the P-256 prime on a CPU with the
// assembly products: the same formulas (madd-2007-bl, with Z3 = 2·Z1·H),
// the field operations called directly rather than through modulus's
// generic methods, which the compiler does not inline (two calls per
// operation; the verification before release is about 75 of these
// additions). Variable time, public data only, as jAddAffine.
func jAddAffineP256(c *curve[[4]uint64], r *jacobian[[4]uint64], q *affine[[4]uint64]) {
	f := &c.fp
	if r.inf {
		r.x, r.y, r.z, r.inf = q.x, q.y, f.one, false
		return
	}
	m := &f.m
	var z1z1, u2, s2, h, rr [4]uint64
	montSqrP256ADX(&z1z1, &r.z, m)
	montMulP256ADX(&u2, &q.x, &z1z1, m)
	montMulP256ADX(&s2, &q.y, &r.z, m)
	montMulP256ADX(&s2, &s2, &z1z1, m)
	modSub4(&h, &u2, &r.x, m)
	modSub4(&rr, &s2, &r.y, m)
	if isZero(&h) == 1 {
		c.jSameX(r, &rr)
		return
	}
	var hh, i, j, v, t, x3, y3, z3 [4]uint64
	montSqrP256ADX(&hh, &h, m)
	modAdd4(&i, &hh, &hh, m)
	modAdd4(&i, &i, &i, m)          // I = 4·H²
	montMulP256ADX(&j, &h, &i, m)   // J = H·I
	modAdd4(&rr, &rr, &rr, m)       // r = 2·(S2 − Y1)
	montMulP256ADX(&v, &r.x, &i, m) // V = X1·I
	montSqrP256ADX(&x3, &rr, m)     // X3 = r² − J − 2V
	modSub4(&x3, &x3, &j, m)
	modSub4(&x3, &x3, &v, m)
	modSub4(&x3, &x3, &v, m)
	modSub4(&t, &v, &x3, m) // Y3 = r·(V − X3) − 2·Y1·J
	montMulP256ADX(&y3, &rr, &t, m)
	montMulP256ADX(&t, &r.y, &j, m)
	modAdd4(&t, &t, &t, m)
	modSub4(&y3, &y3, &t, m)
	montMulP256ADX(&z3, &r.z, &h, m) // Z3 = (Z1 + H)² − Z1² − H² = 2·Z1·H
	modAdd4(&z3, &z3, &z3, m)
	r.x, r.y, r.z = x3, y3, z3
}
