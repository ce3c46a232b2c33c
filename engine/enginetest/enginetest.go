// Package enginetest is the conformance suite every engine must pass: the
// software engine, the chip simulators and the device client all call
// [Run] from their tests.
//
// It checks Exp against math/big on random and edge operands (base 0, 1,
// n−1; exponent 0, 1, 2, 65537, full-length and zero-padded) for moduli of
// 512 to 4096 bits within the engine's limits, in public and secret mode;
// the refusal of invalid moduli and of operands beyond the limits;
// concurrent use; and the RSA private operation through engine/alg/rsa, cross-
// checked with crypto/rsa. Engines that multiply curve points are checked
// by runEC.
//
// # Errors the suite requires
//
//   - NewModulus of an even modulus, 0 or 1: an error wrapping
//     engine.ErrInvalidModulus.
//   - A modulus beyond Info().MaxModulusBits: an error wrapping
//     engine.ErrOperandTooLarge, from NewModulus or from Exp.
//   - A base not below the modulus: an error wrapping
//     engine.ErrOperandTooLarge.
package enginetest

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	gorsa "crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"sync"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/rsa"
	"github.com/modexp-token/modexp-token/engine/arith/randop"
)

// Options limit what the suite does, for slow engines.
type Options struct {
	// MaxBits is the largest modulus tested (0: 4096, or 2048 under the
	// race detector; capped by Info().MaxModulusBits).
	MaxBits int
	// MinBits is the smallest modulus tested (0: 512).
	MinBits int
	// Short skips the slow parts: fewer operand combinations per size (in
	// secret mode at every size), no zero-padded exponent, RSA at 1024
	// bits only. It is forced under the race detector.
	Short bool
	// SkipConcurrency skips the concurrent-use test.
	SkipConcurrency bool
	// SkipRSA skips the RSA private operation through engine/alg/rsa.
	SkipRSA bool
	// SkipKeyGen skips rsa.GenerateKey on the engine.
	SkipKeyGen bool
	// Seed makes the random operands reproducible (0: a fixed default).
	Seed uint64
}

// Sizes are the modulus sizes the suite tests, when within limits.
var Sizes = []int{512, 1024, 1536, 2048, 3072, 4096}

// Run runs the conformance suite on e.
func Run(t *testing.T, e engine.Engine, opts Options) {
	t.Helper()
	info := e.Info()
	maxBits := opts.MaxBits
	if maxBits == 0 {
		maxBits = 4096
		if raceEnabled {
			maxBits = 2048
		}
	}
	if raceEnabled {
		opts.Short = true
	}
	if info.MaxModulusBits > 0 && info.MaxModulusBits < maxBits {
		maxBits = info.MaxModulusBits
	}
	minBits := opts.MinBits
	if minBits == 0 {
		minBits = 512
	}
	var sizes []int
	for _, s := range Sizes {
		if s >= minBits && s <= maxBits {
			sizes = append(sizes, s)
		}
	}
	if len(sizes) == 0 && maxBits >= minBits {
		sizes = []int{maxBits} // an engine limited to a size between the standard ones
	}
	if len(sizes) == 0 {
		t.Fatalf("enginetest: no modulus size in [%d, %d] to test", minBits, maxBits)
	}
	seed := opts.Seed
	if seed == 0 {
		seed = 0x6d6f646578703031
	}
	s := &suite{e: e, info: info, opts: opts, sizes: sizes, seed: seed}

	t.Run("Info", s.testInfo)
	t.Run("SelfTest", func(t *testing.T) {
		if err := e.SelfTest(context.Background()); err != nil {
			t.Fatalf("SelfTest: %v", err)
		}
	})
	t.Run("InvalidModulus", s.testInvalidModulus)
	t.Run("Limits", s.testLimits)
	for _, bits := range sizes {
		t.Run(fmt.Sprintf("Exp/%d", bits), func(t *testing.T) { s.testExp(t, bits) })
	}
	if !opts.SkipConcurrency {
		t.Run("Concurrent", s.testConcurrent)
	}
	if !opts.SkipRSA {
		t.Run("RSA", s.testRSA)
	}
	if !opts.SkipKeyGen {
		t.Run("GenerateKey", s.testGenerateKey)
	}
	t.Run("EC", func(t *testing.T) { runEC(t, e, opts) })
}

type suite struct {
	e     engine.Engine
	info  engine.Info
	opts  Options
	sizes []int
	seed  uint64
}

func (s *suite) rng(salt uint64) *mrand.Rand { return mrand.New(mrand.NewPCG(s.seed, salt)) }

// The suite's random operands (engine/arith/randop).
var (
	randBits    = randop.Bits
	randModulus = randop.Odd
)

func (s *suite) testInfo(t *testing.T) {
	if s.info.Name == "" {
		t.Error("Info().Name is empty")
	}
	if s.info.Model == "" {
		t.Error("Info().Model is empty")
	}
	if s.info.Cores < 1 {
		t.Errorf("Info().Cores = %d, want >= 1", s.info.Cores)
	}
	if s.info.MaxModulusBits < 0 {
		t.Errorf("Info().MaxModulusBits = %d", s.info.MaxModulusBits)
	}
	switch _, ec := engine.As[engine.ECEngine](s.e); {
	case len(s.info.Curves) > 0 && !ec:
		t.Error("Info().Curves is not empty but the engine has no engine.ECEngine ability (engine.As)")
	case len(s.info.Curves) == 0 && ec:
		t.Error("the engine has the engine.ECEngine ability (engine.As) but Info().Curves is empty")
	}
}

func (s *suite) testInvalidModulus(t *testing.T) {
	for _, n := range [][]byte{nil, {0}, {0, 0}, {1}, {0, 1}, {2}, {0x10, 0x00}, bytes.Repeat([]byte{0xfe}, 64)} {
		if _, err := s.e.NewModulus(n); !errors.Is(err, engine.ErrInvalidModulus) {
			t.Errorf("NewModulus(%x) error = %v, want engine.ErrInvalidModulus", n, err)
		}
	}
}

func (s *suite) testLimits(t *testing.T) {
	ctx := context.Background()
	r := s.rng(1)
	if max := s.info.MaxModulusBits; max > 0 {
		n := randModulus(r, max+64)
		m, err := s.e.NewModulus(n.Bytes())
		if err == nil {
			_, _, err = s.e.ExpVarTime(ctx, m, []byte{2}, []byte{3})
		}
		if !errors.Is(err, engine.ErrOperandTooLarge) {
			t.Errorf("%d-bit modulus beyond MaxModulusBits %d: error = %v, want engine.ErrOperandTooLarge", max+64, max, err)
		}
	}
	bits := s.sizes[0]
	n := randModulus(r, bits)
	m, err := s.e.NewModulus(n.Bytes())
	if err != nil {
		t.Fatalf("NewModulus(%d bits): %v", bits, err)
	}
	for _, base := range []*big.Int{n, new(big.Int).Add(n, big.NewInt(1)), new(big.Int).Lsh(n, 8)} {
		for _, public := range []bool{false, true} {
			if _, _, err := engine.ExpMode(ctx, s.e, m, base.Bytes(), []byte{1, 0, 1}, public); !errors.Is(err, engine.ErrOperandTooLarge) {
				t.Errorf("Exp with base ≥ modulus (public=%v): error = %v, want engine.ErrOperandTooLarge", public, err)
			}
		}
	}
}

// checkExp compares one Exp with math/big.
func (s *suite) checkExp(t *testing.T, m engine.Modulus, n, base *big.Int, exp []byte, public bool) {
	t.Helper()
	size := (n.BitLen() + 7) / 8
	got, _, err := engine.ExpMode(context.Background(), s.e, m, base.FillBytes(make([]byte, size)), exp, public)
	if err != nil {
		t.Fatalf("Exp(%d bits, public=%v, exp %d bytes): %v", n.BitLen(), public, len(exp), err)
	}
	want := new(big.Int).Exp(base, new(big.Int).SetBytes(exp), n).FillBytes(make([]byte, size))
	if !bytes.Equal(got, want) {
		t.Fatalf("Exp(%d bits, public=%v): base %x…, exp %x…: got %x…, want %x…",
			n.BitLen(), public, head(base.Bytes()), head(exp), head(got), head(want))
	}
}

func head(b []byte) []byte {
	if len(b) > 8 {
		return b[:8]
	}
	return b
}

func (s *suite) testExp(t *testing.T, bits int) {
	r := s.rng(uint64(bits))
	moduli := 2
	if s.opts.Short || bits > 2048 {
		moduli = 1
	}
	for range moduli {
		n := randModulus(r, bits)
		m, err := s.e.NewModulus(n.Bytes())
		if err != nil {
			t.Fatalf("NewModulus(%d bits): %v", bits, err)
		}
		if m.BitLen() != bits || !bytes.Equal(m.Bytes(), n.Bytes()) {
			t.Fatalf("Modulus BitLen/Bytes = %d/%x…, want %d/%x…", m.BitLen(), head(m.Bytes()), bits, head(n.Bytes()))
		}
		// Leading zero bytes in the modulus are ignored.
		if m2, err := s.e.NewModulus(append([]byte{0, 0}, n.Bytes()...)); err != nil || m2.BitLen() != bits {
			t.Fatalf("NewModulus with leading zeros: %v", err)
		}
		nm1 := new(big.Int).Sub(n, big.NewInt(1))
		rnd := new(big.Int).Mod(randBits(r, bits), n)
		edgeBases := []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(2), nm1, rnd}
		edgeExps := [][]byte{{}, {0}, {1}, {2}, {1, 0, 1}}
		longExps := [][]byte{
			randBits(r, bits).FillBytes(make([]byte, (bits+7)/8)), // full length
			randBits(r, bits+64).Bytes(),                          // longer than the modulus (blinded CRT exponents)
		}
		if !s.opts.Short {
			longExps = append(longExps, append(make([]byte, 3), randBits(r, bits/2).Bytes()...)) // zero-padded
		}
		// Small sizes: every base with every exponent, both modes. Larger
		// sizes: edge operands together in public mode (cheap), and in
		// secret mode (where engines may pad the exponent to full length,
		// making every call a full exponentiation) fewer combinations.
		large := bits > 1024 || s.opts.Short
		for _, public := range []bool{false, true} {
			for _, exp := range edgeExps {
				bs := edgeBases
				if large && !public {
					bs = []*big.Int{big.NewInt(0), nm1}
					if len(exp) == 1 && exp[0] == 1 {
						bs = edgeBases
					}
				}
				for _, base := range bs {
					s.checkExp(t, m, n, base, exp, public)
				}
			}
			for i, exp := range longExps {
				bs := []*big.Int{rnd, nm1, big.NewInt(1)}
				if large {
					bs = bs[:1]
					if i == 0 && bits <= 2048 {
						bs = []*big.Int{rnd, nm1}
					}
				}
				if public && bits > 2048 && i > 0 {
					continue // the variable-time path is the same code at every size
				}
				for _, base := range bs {
					s.checkExp(t, m, n, base, exp, public)
				}
			}
		}
	}
}

func (s *suite) testConcurrent(t *testing.T) {
	bits := min(1024, s.sizes[len(s.sizes)-1])
	const workers, ops = 4, 3
	var wg sync.WaitGroup
	errs := make(chan error, workers*ops)
	shared, err := s.e.NewModulus(randModulus(s.rng(77), bits).Bytes())
	if err != nil {
		t.Fatalf("NewModulus: %v", err)
	}
	for w := range workers {
		wg.Go(func() {
			r := s.rng(uint64(100 + w))
			for i := range ops {
				var n *big.Int
				m := shared
				if i%2 == 0 { // alternate a private modulus and the shared one
					n = randModulus(r, bits)
					var err error
					if m, err = s.e.NewModulus(n.Bytes()); err != nil {
						errs <- err
						return
					}
				} else {
					n = new(big.Int).SetBytes(shared.Bytes())
				}
				base := new(big.Int).Mod(randBits(r, bits), n)
				exp := randBits(r, bits).Bytes()
				got, _, err := engine.ExpMode(context.Background(), s.e, m, base.Bytes(), exp, i%3 == 0)
				if err != nil {
					errs <- err
					return
				}
				want := new(big.Int).Exp(base, new(big.Int).SetBytes(exp), n)
				if new(big.Int).SetBytes(got).Cmp(want) != 0 {
					errs <- fmt.Errorf("worker %d op %d: wrong result", w, i)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// rsaKeyOf converts a crypto/rsa key.
func rsaKeyOf(k *gorsa.PrivateKey) *rsa.PrivateKey {
	return &rsa.PrivateKey{N: k.N, E: k.E, D: k.D, P: k.Primes[0], Q: k.Primes[1]}
}

func (s *suite) testRSA(t *testing.T) {
	ctx := context.Background()
	keySizes := []int{1024, 2048}
	if s.opts.Short {
		keySizes = []int{1024}
	}
	for _, bits := range keySizes {
		if bits > s.sizes[len(s.sizes)-1]*2 {
			continue
		}
		t.Run(fmt.Sprint(bits), func(t *testing.T) {
			gk, err := gorsa.GenerateKey(rand.Reader, bits)
			if err != nil {
				t.Fatal(err)
			}
			digest := sha256.Sum256([]byte(fmt.Sprintf("enginetest %s %d", s.info.Name, bits)))
			want, err := gorsa.SignPKCS1v15(nil, gk, crypto.SHA256, digest[:])
			if err != nil {
				t.Fatal(err)
			}
			// The encoded message is the signature raised to e.
			em, err := rsa.Public(gk.N, gk.E, want)
			if err != nil {
				t.Fatal(err)
			}
			for _, blind := range []bool{false, true} {
				k, err := rsa.NewKey(s.e, rsaKeyOf(gk), rsa.Options{ExponentBlinding: blind})
				if err != nil {
					t.Fatalf("NewKey: %v", err)
				}
				for i := range 3 { // several uses: the blinding pair is refreshed
					got, _, err := k.Private(ctx, em)
					if err != nil {
						t.Fatalf("Private (exponent blinding %v, use %d): %v", blind, i, err)
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("Private (exponent blinding %v) differs from crypto/rsa", blind)
					}
				}
				if err := gorsa.VerifyPKCS1v15(&gk.PublicKey, crypto.SHA256, digest[:], want); err != nil {
					t.Fatalf("crypto/rsa rejects the signature: %v", err)
				}
			}
		})
	}
}

func (s *suite) testGenerateKey(t *testing.T) {
	if s.sizes[len(s.sizes)-1] < 512 {
		t.Skip("engine limited below 512-bit moduli")
	}
	priv, err := rsa.GenerateKey(context.Background(), s.e, rand.Reader, 1024, 65537)
	if err != nil {
		t.Fatalf("GenerateKey: %v", err)
	}
	if priv.N.BitLen() != 1024 || !priv.P.ProbablyPrime(20) || !priv.Q.ProbablyPrime(20) {
		t.Fatalf("GenerateKey: bad key (%d bits)", priv.N.BitLen())
	}
}

// runEC is the hook for engines that multiply curve points
// (engine.ECEngine). The ECDSA issue fills it with scalar-multiplication
// checks against crypto/ecdh and crypto/ecdsa; until then it only checks
// that an engine without ECEngine announces no curves.
func runEC(t *testing.T, e engine.Engine, _ Options) {
	if _, ok := engine.As[engine.ECEngine](e); ok {
		t.Skip("ECEngine conformance checks are added by the ECDSA issue (engine/alg/ecdsa scalar multiplication)")
	}
	if c := e.Info().Curves; len(c) != 0 {
		t.Fatalf("Info().Curves = %v, but the engine does not implement engine.ECEngine", c)
	}
}

// Open opens the engine of spec ([engine.Open]), failing the test on an
// error, and closes it when the test ends.
func Open(t testing.TB, spec string) engine.Engine {
	t.Helper()
	e, err := engine.Open(spec)
	if err != nil {
		t.Fatalf("engine.Open(%q): %v", spec, err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// As returns e as the optional interface T ([engine.As]), failing the test
// when e does not have that ability.
func As[T engine.Engine](t testing.TB, e engine.Engine) T {
	t.Helper()
	a, ok := engine.As[T](e)
	if !ok {
		var none T
		t.Fatalf("engine %s does not have the ability %T", e.Info().Name, &none)
	}
	return a
}
