package guard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/dh"
	"github.com/modexp-token/modexp-token/engine/alg/dsa"
)

// ExpRoute is how a guard runs modular exponentiations of one modulus
// size (DSA, DH): the engine that computes and the one behind it.
type ExpRoute struct {
	g        *Guard
	bits     int // the modulus size the route serves
	Primary  engine.Engine
	Fallback engine.Engine // the software engine behind it, or nil
}

// Run runs op on the primary; when op's error wraps engine.ErrDevice the
// fault is counted and op runs again on the fallback, if any. op must check
// what the engine returns and release nothing before it returns nil. (Key
// generation uses it; keys are prepared with [ExpRoute.DSAKey] and
// [ExpRoute.DHKey].)
func (rt ExpRoute) Run(op func(e engine.Engine) error) error {
	primary, err := rt.tested()
	if err != nil {
		return err
	}
	if primary == nil {
		return op(rt.Fallback)
	}
	return run(rt.g, rt.Primary, rt.Fallback, op)
}

// tested runs the exponentiation known-answer test that vouches for the
// route's size on its primary (once per guard) and returns the engine to
// prepare keys on: the primary, or nil when the test stands failed and
// the fallback must serve alone. Without a fallback a failed test is an
// error wrapping engine.ErrDevice.
func (rt ExpRoute) tested() (engine.Engine, error) {
	size := katSize(katExpSizes, rt.bits, rt.Primary.Info().MaxModulusBits)
	if size == 0 {
		return rt.Primary, nil
	}
	err := rt.g.katRun(fmt.Sprintf("exp-%d", size), func(ctx context.Context) error {
		return katExp(ctx, rt.Primary, size)
	})
	switch {
	case err == nil:
		return rt.Primary, nil
	case errors.Is(err, engine.ErrOperandTooLarge), errors.Is(err, engine.ErrUnsupported):
		return rt.Primary, nil // the engine's own limits refuse what it cannot take
	case rt.Fallback != nil:
		return nil, nil
	}
	return nil, fmt.Errorf("guard: modulus of %d bits: %w", rt.bits, err)
}

// keyEngines are the engines a route's keys are prepared on, after its
// known-answer test: the primary and the fallback, or the fallback alone.
func (rt ExpRoute) keyEngines() (primary, fallback engine.Engine, err error) {
	p, err := rt.tested()
	if err != nil {
		return nil, nil, err
	}
	if p == nil {
		return rt.Fallback, nil, nil
	}
	return rt.Primary, rt.Fallback, nil
}

// DSAKey is a DSA private key prepared on a route's engines: on the
// primary and on the fallback, if any ([dsa.Key.On]).
type DSAKey struct{ keys[*dsa.Key] }

// DSAKey checks and prepares the DSA private value x of params on the
// route's engines (errors: dsa.NewKey's, or the route's known-answer
// test's). A refusal is accounted as a failed operation, like RSAKey's.
func (rt ExpRoute) DSAKey(params *dsa.Parameters, x []byte) (*DSAKey, error) {
	const op = "dsa sign"
	start := time.Now()
	primary, fallback, err := rt.keyEngines()
	if err != nil {
		return nil, rt.g.refused(op, rt.bits, start, err)
	}
	k, err := dsa.NewKey(primary, params, x)
	ks, err := newKeys(rt.g, op, rt.bits, k, err, fallback)
	if err != nil {
		return nil, rt.g.refused(op, rt.bits, start, err)
	}
	return &DSAKey{ks}, nil
}

// Sign is [dsa.Key.Sign] through the guard: a signature that fails the
// check, or a device failure, is counted and the signature
// made again on the fallback (fresh randomness: a fresh nonce). The cost
// is that of both attempts.
func (k *DSAKey) Sign(ctx context.Context, hash []byte, rnd io.Reader) ([]byte, engine.Cost, error) {
	return k.do(func(key *dsa.Key) ([]byte, engine.Cost, error) { return key.Sign(ctx, hash, rnd) })
}

// DHKey is a DH private key prepared on a route's engines: on the primary
// and on the fallback, if any ([dh.Key.On]).
type DHKey struct{ keys[*dh.Key] }

// DHKey checks and prepares the DH private value x of group on the
// route's engines (errors: dh.NewKey's, or the route's known-answer
// test's). A refusal is accounted as a failed operation, like RSAKey's.
func (rt ExpRoute) DHKey(group *dh.Group, x []byte, opts dh.Options) (*DHKey, error) {
	const op = "dh derive"
	start := time.Now()
	primary, fallback, err := rt.keyEngines()
	if err != nil {
		return nil, rt.g.refused(op, rt.bits, start, err)
	}
	k, err := dh.NewKey(primary, group, x, opts)
	ks, err := newKeys(rt.g, op, rt.bits, k, err, fallback)
	if err != nil {
		return nil, rt.g.refused(op, rt.bits, start, err)
	}
	return &DHKey{ks}, nil
}

// Derive is [dh.Key.Derive] through the guard: a secret that fails the
// check, or a device failure, is counted and the agreement
// redone on the fallback with fresh blinding. The cost is that of both
// attempts.
func (k *DHKey) Derive(ctx context.Context, y []byte) ([]byte, engine.Cost, error) {
	return k.do(func(key *dh.Key) ([]byte, engine.Cost, error) { return key.Derive(ctx, y) })
}

// Exp returns how the guard runs exponentiations of a modulus of bits: on
// the primary (with the software engine behind it under fallback) when it
// takes that size; else on the software engine under fallback; else not at
// all (false).
func (g *Guard) Exp(bits int) (ExpRoute, bool) {
	if max := g.primary.Info().MaxModulusBits; max == 0 || bits <= max {
		return ExpRoute{g: g, bits: bits, Primary: g.primary, Fallback: g.fallback}, true
	}
	if g.fallback != nil {
		return ExpRoute{g: g, bits: bits, Primary: g.fallback}, true
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
