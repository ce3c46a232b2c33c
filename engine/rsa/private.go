package rsa

import (
	"context"
	"errors"
	"fmt"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/internal/mont"
)

// Private returns c^d mod n (big-endian, modulus length), computed with CRT
// and blinding on the engine and checked with the public key before release.
// c must be below n and not longer than the modulus (Size bytes): a longer
// input, even with leading zeros, is ErrInputRange.
func (k *Key) Private(ctx context.Context, c []byte) ([]byte, engine.Cost, error) {
	kn := k.n.Limbs()
	x := make([]uint64, kn)
	if len(c) > k.n.Size() || mont.SetBytes(x, c)&k.n.Less(x) != 1 {
		return nil, engine.Cost{}, fmt.Errorf("rsa: private: %w", ErrInputRange)
	}
	out := make([]byte, k.n.Size())
	cost, err := k.privateOn(ctx, k.primary, x, out)
	if err == nil {
		return out, cost, nil
	}
	if !(errors.Is(err, ErrFault) || errors.Is(err, engine.ErrDevice)) {
		return nil, cost, err
	}
	if k.opts.OnFault != nil {
		k.opts.OnFault(err)
	}
	if k.fallback == nil {
		return nil, cost, err
	}
	fcost, ferr := k.privateOn(ctx, k.fallback, x, out)
	cost = cost.Add(fcost)
	if ferr != nil {
		return nil, cost, fmt.Errorf("rsa: private: fallback engine failed too (%w) after: %w", ferr, err)
	}
	return out, cost, nil
}

// privateOn computes and checks c^d mod n on one engine, writing the
// result to out only if it passes the check.
func (k *Key) privateOn(ctx context.Context, pr *prepared, x []uint64, out []byte) (engine.Cost, error) {
	kn := k.n.Limbs()
	t := make([]uint64, k.n.ScratchLen())
	rE, rInv, err := k.blind.take(k)
	if err != nil {
		return engine.Cost{}, err
	}
	blinded := make([]uint64, kn)
	k.n.MontMul(blinded, x, rE, t) // c·rᵉ mod n
	s, cost, err := k.crtExp(ctx, pr, blinded)
	if err != nil {
		return cost, err
	}
	k.n.MontMul(s, s, rInv, t) // unblind
	// Check before release: sᵉ mod n must be the input.
	v := make([]uint64, kn)
	k.n.ExpVarTime(v, s, k.eBytes)
	if mont.Equal(v, x) != 1 {
		clear(s) // never keep a faulty result around
		return cost, fmt.Errorf("rsa: private on engine %s: %w (%w)", pr.name, ErrFault, engine.ErrDevice)
	}
	mont.FillBytes(out, s)
	return cost, nil
}
