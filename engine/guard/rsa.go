package guard

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/rsa"
)

// RSAKey is an RSA private key prepared on a guard's engines: on the
// primary and, when the guard has a fallback, on the software engine
// behind it (the same key: [rsa.Key.On]). Safe for concurrent use.
type RSAKey struct{ keys[*rsa.Key] }

// RSAKey prepares priv for private operations on the primary, with the
// software engine behind it when the guard has a fallback. The first key
// of each size runs the known-answer test first (see the package
// comment). Errors: the key's own (wrapping rsa.ErrInvalidKey), a size the
// primary cannot take (wrapping engine.ErrOperandTooLarge or
// engine.ErrUnsupported), a failed test without fallback (wrapping
// engine.ErrDevice). A key is prepared on the way to its first
// operation, so a refusal is accounted as a failed operation.
func (g *Guard) RSAKey(priv *rsa.PrivateKey) (*RSAKey, error) {
	const op = "rsa private"
	start, bits := time.Now(), 0
	if priv.N != nil {
		bits = priv.N.BitLen()
	}
	opts, err := g.rsaOptions(priv)
	if err != nil {
		return nil, g.refused(op, bits, start, err)
	}
	k, err := rsa.NewKey(g.primary, priv, opts)
	ks, err := newKeys(g, op, bits, k, err, g.fallback)
	if err != nil {
		return nil, g.refused(op, bits, start, err)
	}
	return &RSAKey{ks}, nil
}

// Size is the byte length of the modulus (and of every result).
func (k *RSAKey) Size() int { return k.primary.Size() }

// Private is [rsa.Key.Private] through the guard: on the primary, checked
// before release; a wrong result or a device failure is counted
// and the operation redone on the software engine with a
// fresh blinding pair, when the guard has a fallback. The cost is that of
// both attempts.
func (k *RSAKey) Private(ctx context.Context, c []byte) ([]byte, engine.Cost, error) {
	return k.do(func(key *rsa.Key) ([]byte, engine.Cost, error) { return key.Private(ctx, c) })
}

// MaxRSAKeyBits is the largest RSA key the primary takes (0: no limit):
// twice its largest modulus, since the private operation runs CRT halves,
// unless it does the whole CRT natively.
func (g *Guard) MaxRSAKeyBits() int {
	in := g.primary.Info()
	if _, native := engine.As[engine.CRTEngine](g.primary); in.MaxModulusBits == 0 || native {
		return in.MaxModulusBits
	}
	return 2 * in.MaxModulusBits
}

// rsaOptions returns the RSA options for priv's size: whether its
// exponents are blinded on the primary (the probe, once per size, when
// blinding is on), after the known-answer test of the RSA test key that
// vouches for that size (katSize; run once per guard).
func (g *Guard) rsaOptions(priv *rsa.PrivateKey) (rsa.Options, error) {
	bits := priv.N.BitLen()
	opts := rsa.Options{ExponentBlinding: g.opts.ExponentBlinding}
	if opts.ExponentBlinding {
		blind, err := g.blindingProbe(priv)
		if err != nil {
			return opts, err
		}
		opts.ExponentBlinding = blind
	}
	size := katSize(katRSASizes, bits, g.MaxRSAKeyBits())
	if size == 0 {
		g.log.Warn("no RSA known-answer test for this key size on this engine", "engine", g.name(), "key_bits", bits)
		return opts, nil
	}
	err := g.katRun(katRSAName(size, opts.ExponentBlinding), func(ctx context.Context) error {
		return katRSA(ctx, g.primary, size, opts.ExponentBlinding)
	})
	switch {
	case err == nil:
		return opts, nil
	case errors.Is(err, engine.ErrOperandTooLarge), errors.Is(err, engine.ErrUnsupported):
		return opts, err
	case g.fallback != nil:
		return opts, nil // every result is checked and redone in software if wrong
	}
	return opts, fmt.Errorf("guard: RSA key of %d bits: %w", bits, err)
}

// blindingProbe reports whether keys of priv's size run with exponent
// blinding on the primary: one private operation of priv on a fixed
// input, blinded, once per size. Only the engine's refusal of the longer
// exponent (ErrOperandTooLarge) counts: with blinding as the default the
// size then runs unblinded (with a warning) if the unblinded operation is
// not refused too; configured, the key is refused. The operation is an
// ordinary one: checked before release like every other (rsa.Key), its
// result discarded, a fault counted; any other error is left to the
// known-answer test and the key's own operations.
func (g *Guard) blindingProbe(priv *rsa.PrivateKey) (bool, error) {
	bits := priv.N.BitLen()
	g.mu.Lock()
	blind, probed := !g.noExpBlind[bits], g.blindProbed[bits]
	g.mu.Unlock()
	if probed {
		return blind, nil
	}
	try := func(expBlind bool) error {
		k, err := rsa.NewKey(g.primary, priv, rsa.Options{ExponentBlinding: expBlind})
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), katTimeout)
		defer cancel()
		_, _, err = k.Private(ctx, katRSAInput(bits))
		if err != nil && (errors.Is(err, engine.ErrDevice) || errors.Is(err, rsa.ErrFault)) {
			g.fault(err) // a wrong result, caught: counted like any other
		}
		return err
	}
	err := try(true)
	if errors.Is(err, engine.ErrOperandTooLarge) {
		if !g.opts.BlindingDefault {
			return false, fmt.Errorf("guard: exponent blinding at %d bits: %w", bits, err)
		}
		if err2 := try(false); errors.Is(err2, engine.ErrOperandTooLarge) {
			return false, fmt.Errorf("guard: RSA key of %d bits: %w", bits, err2)
		}
		g.log.Warn("exponent blinding off for this key size: the engine refuses the longer exponent",
			"engine", g.name(), "key_bits", bits)
		blind = false
	}
	g.mu.Lock()
	if g.blindProbed == nil {
		g.blindProbed, g.noExpBlind = map[int]bool{}, map[int]bool{}
	}
	g.blindProbed[bits] = true
	g.noExpBlind[bits] = !blind
	g.mu.Unlock()
	return blind, nil
}
