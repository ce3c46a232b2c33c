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

// blinder holds the base-blinding pair (rᵉ, r⁻¹) mod n in Montgomery form.
type blinder struct {
	mu       sync.Mutex
	rE, rInv []uint64
	uses     int
}

// take copies the current pair into rE and rInv (limbs of n; t is n's
// Montgomery scratch) and advances the state: the pair is squared (rᵉ²
// and r⁻², still a valid pair) or, every blindingRenewal uses, drawn
// afresh. Each call gets a different pair.
func (b *blinder) take(k *secret, rE, rInv, t []uint64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rE == nil || b.uses >= blindingRenewal {
		// Draw the new pair without holding the lock (it costs two
		// half-size exponentiations); if another goroutine renewed
		// meanwhile, keep theirs.
		b.mu.Unlock()
		nE, nInv, err := k.newBlindingPair()
		b.mu.Lock()
		if err != nil {
			return err
		}
		if b.rE == nil || b.uses >= blindingRenewal {
			b.rE, b.rInv, b.uses = nE, nInv, 0
		}
	}
	copy(rE, b.rE)
	copy(rInv, b.rInv)
	k.n.MontSqr(b.rE, b.rE, t)
	k.n.MontSqr(b.rInv, b.rInv, t)
	b.uses++
	return nil
}

// newBlindingPair draws r uniformly (near enough) from [1, n) and returns
// rᵉ·R and r⁻¹·R mod n. r⁻¹ is computed in constant time by Fermat's
// little theorem mod p and q and Garner, all in software.
func (k *secret) newBlindingPair() (rE, rInv []uint64, err error) {
	kn := k.n.Limbs()
	t := make([]uint64, k.n.ScratchLen())
	one := make([]uint64, kn)
	one[0] = 1
	for range 10 {
		buf := make([]byte, k.n.Size()+16)
		if _, err := rand.Read(buf); err != nil {
			return nil, nil, fmt.Errorf("rsa: blinding: %w", err)
		}
		r := make([]uint64, kn)
		k.n.Reduce(r, buf)
		rp := make([]uint64, k.p.Limbs())
		rq := make([]uint64, k.q.Limbs())
		rb := make([]byte, k.n.Size())
		mont.FillBytes(rb, r)
		k.p.Reduce(rp, rb)
		k.q.Reduce(rq, rb)
		k.p.Exp(rp, rp, k.pm2)
		k.q.Exp(rq, rq, k.qm2)
		rqb := make([]byte, k.q.Size())
		mont.FillBytes(rqb, rq)
		inv := make([]uint64, kn)
		k.garner(inv, rp, rqb, rq, k.newScratch())
		// Check r·r⁻¹ = 1 (fails only if r shares a factor with n).
		rm := make([]uint64, kn)
		k.n.ToMont(rm, r, t)
		chk := make([]uint64, kn)
		k.n.MontMul(chk, rm, inv, t)
		if mont.Equal(chk, one) != 1 {
			continue
		}
		rE = make([]uint64, kn)
		k.n.ExpVarTime(rE, r, k.eBytes) // e is public; time depends on e only
		k.n.ToMont(rE, rE, t)
		rInv = make([]uint64, kn)
		k.n.ToMont(rInv, inv, t)
		return rE, rInv, nil
	}
	return nil, nil, fmt.Errorf("rsa: blinding: no invertible r found: %w", ErrInvalidKey)
}
