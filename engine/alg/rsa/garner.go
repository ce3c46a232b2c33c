package rsa

import "github.com/modexp-token/modexp-token/engine/arith/mont"

// garner sets s = m2 + q·(qInv·(m1 − m2) mod p), limbs of n, in constant
// time, on sc's scratch. m1 < p and m2 < q (m2b is m2 as bytes).
func (k *secret) garner(s, m1 []uint64, m2b []byte, m2 []uint64, sc *scratch) {
	h, prod, m2ext := sc.h, sc.prod, sc.m2ext
	k.p.Reduce(h, m2b)                   // m2 mod p
	k.p.ModSub(h, m1, h)                 // m1 − m2 mod p
	k.p.MontMul(h, h, k.qinvMont, sc.gt) // ·qInv mod p
	mont.Mul(prod, h, k.qPlain)
	clear(m2ext)
	copy(m2ext, m2)
	mont.Add(prod, prod, m2ext) // < n: no carry
	clear(s)
	copy(s, prod) // the limbs above n's are zero
}
