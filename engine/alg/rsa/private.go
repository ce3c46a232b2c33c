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
	sc := k.getScratch()
	out, cost, err, reuse := k.private(ctx, c, sc)
	if reuse {
		k.putScratch(sc)
	}
	return out, cost, err
}

// private is Private on the scratch sc. reuse is false when an engine
// failed: it may still read the buffers it was given, and sc is left to
// the garbage collector rather than cleared under it or reused.
func (k *Key) private(ctx context.Context, c []byte, sc *scratch) (_ []byte, _ engine.Cost, _ error, reuse bool) {
	x := sc.x
	if len(c) > k.n.Size() || mont.SetBytes(x, c)&k.n.Less(x) != 1 {
		return nil, engine.Cost{}, fmt.Errorf("rsa: private: %w", ErrInputRange), true
	}
	pr := k.pr
	if err := k.blind.take(k.secret, sc.rE, sc.rInv, sc.t); err != nil {
		return nil, engine.Cost{}, err, true
	}
	k.n.MontMul(sc.blinded, x, sc.rE, sc.t) // c·rᵉ mod n
	s, cost, err := k.crtExp(ctx, pr, sc.blinded, sc)
	if err != nil {
		return nil, cost, err, false
	}
	k.n.MontMul(s, s, sc.rInv, sc.t) // unblind
	// Check before release: sᵉ mod n must be the input.
	k.n.ExpVarTime(sc.v, s, k.eBytes)
	if mont.Equal(sc.v, x) != 1 {
		clear(s) // never keep a faulty result around
		return nil, cost, fmt.Errorf("rsa: private on engine %s: %w (%w)", pr.name, ErrFault, engine.ErrDevice), true
	}
	out := make([]byte, k.n.Size())
	mont.FillBytes(out, s)
	return out, cost, nil, true
}
