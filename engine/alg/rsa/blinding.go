package rsa

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/modexp-token/modexp-token/engine/arith/mont"
)

// blindingRenewal is the number of uses after which the blinding pair is
// drawn afresh (between renewals it is squared on each use).
const blindingRenewal = 32

// exponents returns the CRT exponents as given to the engine: d_p and d_q
// padded to the primes' lengths, or, with exponent blinding,
// d_p + k·(p−1) and d_q + k'·(q−1) for fresh random 64-bit k, k'.
func (k *secret) exponents(sc *scratch) (dp, dq []byte, err error) {
	if !k.opts.ExponentBlinding {
		// Copies: an engine must not be able to corrupt the key.
		dp, dq = sc.dp[:len(k.crt.DP)], sc.dq[:len(k.crt.DQ)]
		copy(dp, k.crt.DP)
		copy(dq, k.crt.DQ)
		return dp, dq, nil
	}
	var rnd [16]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, nil, fmt.Errorf("rsa: exponent blinding: %w", err)
	}
	blindExp := func(out []byte, d, m1 []uint64, r uint64) []byte {
		z := sc.z[:len(d)+1]
		mont.AddMulWord(z, d, m1, r)
		b := out[:8*len(z)]
		mont.FillBytes(b, z)
		clear(z)
		return b
	}
	return blindExp(sc.dp, k.dp, k.pm1, binary.LittleEndian.Uint64(rnd[:8])),
		blindExp(sc.dq, k.dq, k.qm1, binary.LittleEndian.Uint64(rnd[8:])), nil
}

// blindingAhead is the number of blinding pairs drawn at once: their r⁻¹
// come from one inversion (Montgomery's trick), which costs what a single
// one does, and the renewals use them one after the other.
const blindingAhead = 8

// blinder holds the base-blinding pair (rᵉ, r⁻¹) mod n in Montgomery form.
type blinder struct {
	mu       sync.Mutex
	rE, rInv []uint64
	uses     int
	renewing bool       // a caller draws the next pairs, outside mu
	ahead    [][]uint64 // pairs drawn for the next renewals: rᵉ, r⁻¹, rᵉ, r⁻¹ ...
}

// take copies the current pair into rE and rInv (limbs of n; t is n's
// Montgomery scratch) and advances the state: the pair is squared (rᵉ²
// and r⁻², still a valid pair) or, every blindingRenewal uses, replaced
// by a fresh one. Each call gets a different pair.
//
// Fresh pairs are drawn blindingAhead at a time, by one caller, without
// holding the lock (newBlindingPairs); the others meanwhile go on
// squaring the current pair, so that a crowd of signers at the renewal
// does not draw pairs each and keep only the last (with 8 signing
// threads that was a tenth of their CPU).
func (b *blinder) take(k *secret, rE, rInv, t []uint64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rE == nil || b.uses >= blindingRenewal {
		if len(b.ahead) == 0 && (b.rE == nil || !b.renewing) {
			b.renewing = true
			b.mu.Unlock()
			pairs, err := k.newBlindingPairs(blindingAhead)
			b.mu.Lock()
			b.renewing = false
			if err != nil {
				return err
			}
			b.ahead = append(b.ahead, pairs...)
		}
		if len(b.ahead) > 0 {
			b.rE, b.rInv, b.uses = b.ahead[0], b.ahead[1], 0
			b.ahead = b.ahead[2:]
		}
	}
	copy(rE, b.rE)
	copy(rInv, b.rInv)
	k.n.MontSqr(b.rE, b.rE, t)
	k.n.MontSqr(b.rInv, b.rInv, t)
	b.uses++
	return nil
}

// newBlindingPairs draws count values r uniformly (near enough) from
// [1, n) and returns rᵉ·R and r⁻¹·R mod n of each, in that order. The
// inverses come from one inversion of the product of the r (Montgomery's
// trick: 3(count−1) products besides), computed in constant time by
// Fermat's little theorem mod p and q and Garner, all in software.
func (k *secret) newBlindingPairs(count int) ([][]uint64, error) {
	kn := k.n.Limbs()
	t := make([]uint64, k.n.ScratchLen())
	one := make([]uint64, kn)
	one[0] = 1
	buf := make([]byte, k.n.Size()+16)
	limbs := make([]uint64, 4*count*kn) // the pairs, then r·R and the prefix products
	vec := func(i int) []uint64 { return limbs[i*kn : (i+1)*kn : (i+1)*kn] }
	pairs := make([][]uint64, 2*count)
	for i := range pairs {
		pairs[i] = vec(i)
	}
	rm := func(i int) []uint64 { return vec(2*count + i) }  // rᵢ·R
	pre := func(i int) []uint64 { return vec(3*count + i) } // r₀⋯rᵢ·R
	r, inv := make([]uint64, kn), make([]uint64, kn)
	for range 10 {
		for i := range count {
			if _, err := rand.Read(buf); err != nil {
				return nil, fmt.Errorf("rsa: blinding: %w", err)
			}
			k.n.Reduce(r, buf)
			k.n.ExpVarTime(pairs[2*i], r, k.eBytes) // e is public; time depends on e only
			k.n.ToMont(pairs[2*i], pairs[2*i], t)
			k.n.ToMont(rm(i), r, t)
			if i == 0 {
				copy(pre(0), rm(0))
			} else {
				k.n.MontMul(pre(i), pre(i-1), rm(i), t)
			}
		}
		k.n.FromMont(r, pre(count-1), t) // the product
		k.invert(inv, r)
		// Check the product's inverse (fails only if an r shares a
		// factor with n).
		chk := r
		k.n.MontMul(chk, pre(count-1), inv, t)
		if mont.Equal(chk, one) != 1 {
			continue
		}
		cur := inv
		k.n.ToMont(cur, cur, t) // (r₀⋯rᵢ)⁻¹·R, from i = count−1 down
		for i := count - 1; i > 0; i-- {
			k.n.MontMul(pairs[2*i+1], pre(i-1), cur, t) // rᵢ⁻¹·R
			k.n.MontMul(cur, cur, rm(i), t)
		}
		copy(pairs[1], cur)
		clear(limbs[2*count*kn:])
		clear(r)
		clear(inv)
		return pairs, nil
	}
	return nil, fmt.Errorf("rsa: blinding: no invertible r found: %w", ErrInvalidKey)
}

// invert sets inv = x⁻¹ mod n for x (plain limbs of n) invertible mod n:
// x^(p−2) mod p and x^(q−2) mod q, together where the kernel pairs them,
// and Garner. Constant time.
func (k *secret) invert(inv, x []uint64) {
	rp := make([]uint64, k.p.Limbs())
	rq := make([]uint64, k.q.Limbs())
	xb := make([]byte, k.n.Size())
	mont.FillBytes(xb, x)
	k.p.Reduce(rp, xb)
	k.q.Reduce(rq, xb)
	if !mont.ExpPair(k.p, k.q, rp, rp, k.pm2, rq, rq, k.qm2) {
		k.p.Exp(rp, rp, k.pm2)
		k.q.Exp(rq, rq, k.qm2)
	}
	rqb := make([]byte, k.q.Size())
	mont.FillBytes(rqb, rq)
	k.garner(inv, rp, rqb, rq, k.newScratch())
	clear(xb)
	clear(rp)
	clear(rq)
	clear(rqb)
}
