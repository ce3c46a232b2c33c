package rsa

import "github.com/modexp-token/modexp-token/engine/arith/mont"

// garner returns m2 + q·(qInv·(m1 − m2) mod p) as limbs of n, in constant
// time. m1 < p and m2 < q (m2b is m2 as bytes).
func (k *secret) garner(m1 []uint64, m2b []byte, m2 []uint64) []uint64 {
	kp, kq := k.p.Limbs(), k.q.Limbs()
	t := make([]uint64, k.p.ScratchLen())
	h := make([]uint64, kp)
	k.p.Reduce(h, m2b)               // m2 mod p
	k.p.ModSub(h, m1, h)             // m1 − m2 mod p
	k.p.MontMul(h, h, k.qinvMont, t) // ·qInv mod p
	prod := make([]uint64, kp+kq)
	mont.Mul(prod, h, k.qPlain)
	m2ext := make([]uint64, kp+kq)
	copy(m2ext, m2)
	mont.Add(prod, prod, m2ext) // < n: no carry
	s := make([]uint64, k.n.Limbs())
	copy(s, prod) // the limbs above n's are zero
	return s
}
