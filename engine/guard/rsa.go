package guard

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/rsa"
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
// engine.ErrDevice).
func (g *Guard) RSAKey(priv *rsa.PrivateKey) (*RSAKey, error) {
	opts, err := g.rsaOptions(priv)
	if err != nil {
		return nil, err
	}
	k, err := rsa.NewKey(g.primary, priv, opts)
	ks, err := newKeys(g, k, err, g.fallback)
	if err != nil {
		return nil, err
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

// rsaOptions returns the RSA options for priv's size after the
// known-answer test at that size (run once per size).
func (g *Guard) rsaOptions(priv *rsa.PrivateKey) (rsa.Options, error) {
	bits := priv.N.BitLen()
	opts := rsa.Options{ExponentBlinding: g.opts.ExponentBlinding}
	g.mu.Lock()
	passed, noBlind := g.katPassed[bits], g.noExpBlind[bits]
	g.mu.Unlock()
	if noBlind {
		opts.ExponentBlinding = false
	}
	if passed {
		return opts, nil
	}
	start := time.Now()
	err := kat(g.primary, priv, opts.ExponentBlinding)
	if err != nil && opts.ExponentBlinding && g.opts.BlindingDefault && errors.Is(err, engine.ErrOperandTooLarge) {
		// Without blinding the exponent fits: the key runs unblinded on
		// this engine, and the test's verdict is that of the unblinded run.
		if err2 := kat(g.primary, priv, false); !errors.Is(err2, engine.ErrOperandTooLarge) {
			g.log.Warn("exponent blinding off for this key size: the engine refuses the longer exponent",
				"engine", g.name(), "key_bits", bits)
			opts.ExponentBlinding, err = false, err2
			g.mu.Lock()
			if g.noExpBlind == nil {
				g.noExpBlind = map[int]bool{}
			}
			g.noExpBlind[bits] = true
			g.mu.Unlock()
		}
	}
	switch {
	case err == nil:
		g.mu.Lock()
		if g.katPassed == nil {
			g.katPassed = map[int]bool{}
		}
		g.katPassed[bits] = true
		g.mu.Unlock()
		g.log.Info("engine known-answer test passed", "engine", g.name(), "key_bits", bits,
			"duration", time.Since(start))
		return opts, nil
	case errors.Is(err, engine.ErrOperandTooLarge), errors.Is(err, engine.ErrUnsupported):
		return opts, err
	}
	g.katFailures.Add(1)
	g.faults.Add(1)
	g.log.Error("engine known-answer test failed", "engine", g.name(), "key_bits", bits,
		"fallback", g.fallback != nil, "err", err)
	if g.fallback != nil {
		return opts, nil // every result is checked and redone in software if wrong
	}
	return opts, fmt.Errorf("guard: known-answer test at %d bits: %w (%w)", bits, err, engine.ErrDevice)
}

// katInput is the fixed input of the known-answer test.
func katInput(n *big.Int) *big.Int {
	c := new(big.Int).Lsh(big.NewInt(0x4b4154), uint(n.BitLen()-32)) // "KAT" in the top bits
	c.Add(c, big.NewInt(0x1234567))
	return c.Mod(c, n)
}

// kat runs the private operation of priv on eng alone on a fixed
// input and compares it with c^d mod n computed by math/big. math/big is
// variable time in d: this runs once per key size, like the key's
// preparation (which also uses math/big on the key).
func kat(eng engine.Engine, priv *rsa.PrivateKey, expBlind bool) error {
	k, err := rsa.NewKey(eng, priv, rsa.Options{ExponentBlinding: expBlind})
	if err != nil {
		return fmt.Errorf("guard: known-answer test: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), katTimeout)
	defer cancel()
	c := katInput(priv.N)
	size := (priv.N.BitLen() + 7) / 8
	got, _, err := k.Private(ctx, c.FillBytes(make([]byte, size)))
	if err != nil {
		return fmt.Errorf("guard: known-answer test: %w", err)
	}
	want := new(big.Int).Exp(c, priv.D, priv.N).FillBytes(make([]byte, size))
	if subtle.ConstantTimeCompare(got, want) != 1 {
		return fmt.Errorf("guard: known-answer test at %d bits: wrong answer: %w (%w)", priv.N.BitLen(), rsa.ErrFault, engine.ErrDevice)
	}
	return nil
}
