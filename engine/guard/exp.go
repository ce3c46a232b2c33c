package guard

import (
	"context"
	"io"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/dh"
	"github.com/modexp-token/modexp-token/engine/dsa"
)

// ExpRoute is how a guard runs modular exponentiations of one modulus
// size (DSA, DH): the engine that computes and the one behind it.
type ExpRoute struct {
	g        *Guard
	Primary  engine.Engine
	Fallback engine.Engine // the software engine behind it, or nil
}

// Run runs op on the primary; when op's error wraps engine.ErrDevice the
// fault is counted and op runs again on the fallback, if any. op must check
// what the engine returns and release nothing before it returns nil. (Key
// generation uses it; keys are prepared with [ExpRoute.DSAKey] and
// [ExpRoute.DHKey].)
func (rt ExpRoute) Run(op func(e engine.Engine) error) error {
	return run(rt.g, rt.Primary, rt.Fallback, op)
}

// DSAKey is a DSA private key prepared on a route's engines: on the
// primary and on the fallback, if any ([dsa.Key.On]).
type DSAKey struct {
	g                 *Guard
	primary, fallback *dsa.Key
}

// DSAKey checks and prepares the DSA private value x of params on the
// route's engines (errors: dsa.NewKey's).
func (rt ExpRoute) DSAKey(params *dsa.Parameters, x []byte) (*DSAKey, error) {
	k, err := dsa.NewKey(rt.Primary, params, x)
	if err != nil {
		return nil, err
	}
	fk, err := on(k, rt.Fallback)
	if err != nil {
		return nil, err
	}
	return &DSAKey{g: rt.g, primary: k, fallback: fk}, nil
}

// Sign is [dsa.Key.Sign] through the guard: a signature that fails the
// check, or a device failure, is counted and the signature
// made again on the fallback (fresh randomness: a fresh nonce). The cost
// is that of both attempts.
func (k *DSAKey) Sign(ctx context.Context, hash []byte, rnd io.Reader) (sig []byte, cost engine.Cost, err error) {
	err = run(k.g, k.primary, k.fallback, func(key *dsa.Key) error {
		s, c, err := key.Sign(ctx, hash, rnd)
		cost = cost.Add(c)
		sig = s
		return err
	})
	return sig, cost, err
}

// DHKey is a DH private key prepared on a route's engines: on the primary
// and on the fallback, if any ([dh.Key.On]).
type DHKey struct {
	g                 *Guard
	primary, fallback *dh.Key
}

// DHKey checks and prepares the DH private value x of group on the
// route's engines (errors: dh.NewKey's).
func (rt ExpRoute) DHKey(group *dh.Group, x []byte, opts dh.Options) (*DHKey, error) {
	k, err := dh.NewKey(rt.Primary, group, x, opts)
	if err != nil {
		return nil, err
	}
	fk, err := on(k, rt.Fallback)
	if err != nil {
		return nil, err
	}
	return &DHKey{g: rt.g, primary: k, fallback: fk}, nil
}

// Derive is [dh.Key.Derive] through the guard: a secret that fails the
// check, or a device failure, is counted and the agreement
// redone on the fallback with fresh blinding. The cost is that of both
// attempts.
func (k *DHKey) Derive(ctx context.Context, y []byte) (z []byte, cost engine.Cost, err error) {
	err = run(k.g, k.primary, k.fallback, func(key *dh.Key) error {
		r, c, err := key.Derive(ctx, y)
		cost = cost.Add(c)
		z = r
		return err
	})
	return z, cost, err
}

// Exp returns how the guard runs exponentiations of a modulus of bits: on
// the primary (with the software engine behind it under fallback) when it
// takes that size; else on the software engine under fallback; else not at
// all (false).
func (g *Guard) Exp(bits int) (ExpRoute, bool) {
	if max := g.primary.Info().MaxModulusBits; max == 0 || bits <= max {
		return ExpRoute{g: g, Primary: g.primary, Fallback: g.fallback}, true
	}
	if g.fallback != nil {
		return ExpRoute{g: g, Primary: g.fallback}, true
	}
	return ExpRoute{}, false
}

// MaxExpBits is the largest modulus [Guard.Exp] serves (0: any).
func (g *Guard) MaxExpBits() int {
	if g.fallback != nil {
		return 0
	}
	return g.primary.Info().MaxModulusBits
}
