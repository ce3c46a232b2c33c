package rsa

import (
	"context"
	"fmt"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/mont"
)

// Private returns c^d mod n (big-endian, modulus length), computed with CRT
// and blinding on the engine and checked with the public key before release.
// c must be below n and not longer than the modulus (Size bytes): a longer
// input, even with leading zeros, is ErrInputRange. A result that fails the
// check, or an engine failure, is an error wrapping [ErrFault] (for a wrong
// result) and engine.ErrDevice; nothing is returned with it. Redoing the
// operation elsewhere is the caller's policy (engine/guard).
func (k *Key) Private(ctx context.Context, c []byte) ([]byte, engine.Cost, error) {
	kn := k.n.Limbs()
	x := make([]uint64, kn)
	if len(c) > k.n.Size() || mont.SetBytes(x, c)&k.n.Less(x) != 1 {
		return nil, engine.Cost{}, fmt.Errorf("rsa: private: %w", ErrInputRange)
	}
	pr := k.pr
	t := make([]uint64, k.n.ScratchLen())
	rE, rInv, err := k.blind.take(k.secret)
	if err != nil {
		return nil, engine.Cost{}, err
	}
	blinded := make([]uint64, kn)
	k.n.MontMul(blinded, x, rE, t) // c·rᵉ mod n
	s, cost, err := k.crtExp(ctx, pr, blinded)
	if err != nil {
		return nil, cost, err
	}
	k.n.MontMul(s, s, rInv, t) // unblind
	// Check before release: sᵉ mod n must be the input.
	v := make([]uint64, kn)
	k.n.ExpVarTime(v, s, k.eBytes)
	if mont.Equal(v, x) != 1 {
		clear(s) // never keep a faulty result around
		return nil, cost, fmt.Errorf("rsa: private on engine %s: %w (%w)", pr.name, ErrFault, engine.ErrDevice)
	}
	out := make([]byte, k.n.Size())
	mont.FillBytes(out, s)
	return out, cost, nil
}
