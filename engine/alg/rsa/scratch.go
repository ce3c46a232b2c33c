package rsa

// scratch is the working memory of one private operation: the blinded
// input, the CRT halves, Garner's products, the exponents given to the
// engine and the check. A key keeps its scratch in a pool (secret.scratch)
// so that an operation allocates none of it; each operation takes its own
// (concurrent signers of one key never share one) and clears it before
// it goes back, since most of it held secrets. A scratch whose buffers
// an engine may still read (an engine error: a device that gave up on a
// call it had not finished) is not reused (dropScratch).
type scratch struct {
	x, blinded, rE, rInv, s, v, t []uint64 // limbs of n; t: n's Montgomery scratch
	yp, m1, gt, h                 []uint64 // limbs of p; gt: p's Montgomery scratch
	yq, m2                        []uint64 // limbs of q
	prod, m2ext                   []uint64 // limbs of p and q
	z                             []uint64 // a blinded exponent, limbs of p or q plus one
	yb                            []byte   // bytes of n
	ypb, yqb, dp, dq              []byte   // bytes of p, q and the exponents

	words []uint64 // every word above, cleared at once
	bytes []byte
}

// newScratch carves one scratch for k out of two allocations.
func (k *secret) newScratch() *scratch {
	kn, kp, kq := k.n.Limbs(), k.p.Limbs(), k.q.Limbs()
	tn, tp := k.n.ScratchLen(), k.p.ScratchLen()
	kz := max(kp, kq) + 1
	sc := &scratch{}
	sc.words = make([]uint64, 6*kn+tn+3*kp+tp+2*kq+2*(kp+kq)+kz)
	w := sc.words
	take := func(n int) []uint64 { r := w[:n:n]; w = w[n:]; return r }
	sc.x, sc.blinded, sc.rE, sc.rInv, sc.s, sc.v, sc.t = take(kn), take(kn), take(kn), take(kn), take(kn), take(kn), take(tn)
	sc.yp, sc.m1, sc.h, sc.gt = take(kp), take(kp), take(kp), take(tp)
	sc.yq, sc.m2 = take(kq), take(kq)
	sc.prod, sc.m2ext = take(kp+kq), take(kp+kq)
	sc.z = take(kz)
	// The exponents: d_p, d_q at the primes' lengths or, blinded, 8 bytes
	// a limb plus one (exponents).
	ld := max(len(k.crt.DP), len(k.crt.DQ), 8*kz)
	sc.bytes = make([]byte, k.n.Size()+k.p.Size()+k.q.Size()+2*ld)
	b := sc.bytes
	takeB := func(n int) []byte { r := b[:n:n]; b = b[n:]; return r }
	sc.yb, sc.ypb, sc.yqb, sc.dp, sc.dq = takeB(k.n.Size()), takeB(k.p.Size()), takeB(k.q.Size()), takeB(ld), takeB(ld)
	return sc
}

// getScratch returns a scratch for one operation of k, zeroed.
func (k *secret) getScratch() *scratch {
	if sc, ok := k.scratchPool.Get().(*scratch); ok {
		return sc
	}
	return k.newScratch()
}

// putScratch clears sc (it held the blinded input, the halves, the
// result) and returns it to k's pool.
func (k *secret) putScratch(sc *scratch) {
	clear(sc.words)
	clear(sc.bytes)
	k.scratchPool.Put(sc)
}
