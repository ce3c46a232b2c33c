package rsa

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
)

// faultyEngine wraps the software engine and corrupts its results the way
// broken hardware does. It also records what the engine was given.
type faultyEngine struct {
	*soft.Engine
	mode   string // "", "zero", "flip", "short", "modulus", "device-error"
	target []byte // if set, only exponentiations modulo this modulus fail
	cores  int

	mu    sync.Mutex
	bases [][]byte
	exps  [][]byte
	calls int
}

func newFaulty(mode string) *faultyEngine {
	return &faultyEngine{Engine: soft.New(), mode: mode, cores: 2}
}

func (f *faultyEngine) Info() engine.Info {
	i := f.Engine.Info()
	i.Name = "faulty:" + f.mode
	i.Cores = f.cores
	return i
}

func (f *faultyEngine) expMode(ctx context.Context, m engine.Modulus, base, exp []byte, public bool) ([]byte, engine.Cost, error) {
	f.mu.Lock()
	f.calls++
	f.bases = append(f.bases, append([]byte(nil), base...))
	f.exps = append(f.exps, append([]byte(nil), exp...))
	f.mu.Unlock()
	r, c, err := engine.ExpMode(ctx, f.Engine, m, base, exp, public)
	if err != nil || (f.target != nil && !bytes.Equal(m.Bytes(), f.target)) {
		return r, c, err
	}
	return corrupt(f.mode, r, m.Bytes(), c)
}

// Exp is [engine.Engine]'s: the exponent is secret.
func (f *faultyEngine) Exp(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return f.expMode(ctx, m, base, exp, false)
}

// ExpVarTime is [engine.Engine]'s: the exponent is public.
func (f *faultyEngine) ExpVarTime(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return f.expMode(ctx, m, base, exp, true)
}

func corrupt(mode string, r, mod []byte, c engine.Cost) ([]byte, engine.Cost, error) {
	switch mode {
	case "zero":
		return make([]byte, len(r)), c, nil
	case "flip":
		r[len(r)/2] ^= 0x10
	case "short":
		r = r[1:]
	case "modulus": // out of range: the modulus itself
		r = append([]byte(nil), mod...)
	case "device-error":
		return nil, c, fmt.Errorf("fake device: %w", engine.ErrDevice)
	}
	return r, c, nil
}

// crtFake is a CRTEngine computing ExpCRT with math/big, with the
// same fault modes, to exercise the CRTEngine path.
type crtFake struct {
	*soft.Engine
	mode  string
	mu    sync.Mutex
	calls int
	dps   [][]byte
}

func (f *crtFake) Info() engine.Info {
	i := f.Engine.Info()
	i.Name, i.ConstantTime = "crt-fake:"+f.mode, false
	return i
}

func (f *crtFake) ExpCRT(ctx context.Context, k *engine.CRTKey, base []byte) ([]byte, engine.Cost, error) {
	f.mu.Lock()
	f.calls++
	f.dps = append(f.dps, append([]byte(nil), k.DP...))
	f.mu.Unlock()
	p, q := new(big.Int).SetBytes(k.P), new(big.Int).SetBytes(k.Q)
	c := new(big.Int).SetBytes(base)
	m1 := new(big.Int).Exp(c, new(big.Int).SetBytes(k.DP), p)
	m2 := new(big.Int).Exp(c, new(big.Int).SetBytes(k.DQ), q)
	h := new(big.Int).Sub(m1, m2)
	h.Mul(h, new(big.Int).SetBytes(k.QInv)).Mod(h, p)
	m := h.Mul(h, q).Add(h, m2)
	n := new(big.Int).Mul(p, q)
	r := m.FillBytes(make([]byte, (n.BitLen()+7)/8))
	return corrupt(f.mode, r, n.Bytes(), engine.Cost{})
}

var _ engine.CRTEngine = (*crtFake)(nil)

// pairFake is a faultyEngine that also takes both CRT halves in one
// ExpPair call (as the device engine does), with the same fault modes
// applied to both results.
type pairFake struct {
	*faultyEngine
	pairs int
}

func (f *pairFake) ExpPair(ctx context.Context, a, b engine.ExpOp) (ra, rb []byte, c engine.Cost, err error) {
	f.mu.Lock()
	f.pairs++
	f.mu.Unlock()
	ra, ca, err := engine.ExpMode(ctx, f, a.M, a.Base, a.Exp, a.Public)
	if err != nil {
		return nil, nil, ca, err
	}
	rb, cb, err := engine.ExpMode(ctx, f, b.M, b.Base, b.Exp, b.Public)
	return ra, rb, ca.Add(cb), err
}

var _ engine.PairEngine = (*pairFake)(nil)

// TestFaultyEngineNeverReleases checks that every kind of wrong result
// gives an error wrapping ErrFault (or the device error) and
// engine.ErrDevice, never an output; and that the key prepared on the
// software engine ([Key.On], engine/guard's fallback) gives the right result.
func TestFaultyEngineNeverReleases(t *testing.T) {
	gk := testKey(t, 1024)
	priv := privOf(gk)
	ctx := context.Background()
	c := big.NewInt(123456789)
	want := new(big.Int).Exp(c, priv.D, priv.N).FillBytes(make([]byte, 128))
	type engCase struct {
		name string
		eng  func() engine.Engine
	}
	var cases []engCase
	for _, mode := range []string{"zero", "flip", "short", "modulus", "device-error"} {
		cases = append(cases,
			engCase{"exp/" + mode, func() engine.Engine { return newFaulty(mode) }},
			engCase{"exp-serial/" + mode, func() engine.Engine { f := newFaulty(mode); f.cores = 1; return f }},
			engCase{"crt/" + mode, func() engine.Engine { return &crtFake{Engine: soft.New(), mode: mode} }},
			engCase{"pair/" + mode, func() engine.Engine { return &pairFake{faultyEngine: newFaulty(mode)} }},
		)
	}
	// Bellcore: only the half mod p is wrong (also with both halves in one
	// ExpPair call).
	cases = append(cases, engCase{"pair/flip-only-p", func() engine.Engine {
		f := &pairFake{faultyEngine: newFaulty("flip")}
		f.target = priv.P.Bytes()
		return f
	}})
	cases = append(cases, engCase{"exp/flip-only-p", func() engine.Engine {
		f := newFaulty("flip")
		f.target = priv.P.Bytes()
		return f
	}})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, blind := range []bool{false, true} {
				k, err := NewKey(tc.eng(), priv, Options{ExponentBlinding: blind})
				if err != nil {
					t.Fatal(err)
				}
				out, _, err := k.Private(ctx, c.Bytes())
				if out != nil {
					t.Fatalf("faulty engine: output released (%x…)", out[:8])
				}
				if !errors.Is(err, engine.ErrDevice) {
					t.Fatalf("error %v does not wrap engine.ErrDevice", err)
				}
				if !strings.HasSuffix(tc.name, "device-error") && !errors.Is(err, ErrFault) {
					t.Fatalf("error %v does not wrap ErrFault", err)
				}

				// The same key on the software engine (engine/guard's
				// fallback) shares the blinding state and is right.
				k, err = k.On(soft.New())
				if err != nil {
					t.Fatal(err)
				}
				for range 3 {
					out, _, err = k.Private(ctx, c.Bytes())
					if err != nil {
						t.Fatalf("on the software engine: %v", err)
					}
					if !bytes.Equal(out, want) {
						t.Fatal("on the software engine: wrong result")
					}
				}
			}
		})
	}
}

// TestPairEngineCorrect: with an engine.PairEngine both halves go in one
// ExpPair call per private operation, and the results are right.
func TestPairEngineCorrect(t *testing.T) {
	priv := privOf(testKey(t, 1024))
	f := &pairFake{faultyEngine: newFaulty("")}
	k, err := NewKey(f, priv, Options{ExponentBlinding: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		c := big.NewInt(int64(1000 + i))
		out, _, err := k.Private(context.Background(), c.Bytes())
		if err != nil || !bytes.Equal(out, new(big.Int).Exp(c, priv.D, priv.N).FillBytes(make([]byte, 128))) {
			t.Fatalf("private %d: %v", i, err)
		}
	}
	if f.pairs != 5 || f.calls != 10 {
		t.Fatalf("%d ExpPair calls, %d exponentiations; want 5 and 10", f.pairs, f.calls)
	}
}

// TestCRTEngineCorrect runs the CRTEngine path with a correct engine.
func TestCRTEngineCorrect(t *testing.T) {
	priv := privOf(testKey(t, 1024))
	for _, blind := range []bool{false, true} {
		f := &crtFake{Engine: soft.New()}
		k, err := NewKey(f, priv, Options{ExponentBlinding: blind})
		if err != nil {
			t.Fatal(err)
		}
		c := big.NewInt(987654321)
		for range 2 {
			out, _, err := k.Private(context.Background(), c.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if new(big.Int).SetBytes(out).Cmp(new(big.Int).Exp(c, priv.D, priv.N)) != 0 {
				t.Fatal("wrong result")
			}
		}
		if f.calls != 2 {
			t.Fatalf("ExpCRT called %d times, want 2", f.calls)
		}
		if blind == bytes.Equal(f.dps[0], f.dps[1]) {
			t.Fatalf("exponent blinding %v but DP sent twice equal = %v", blind, bytes.Equal(f.dps[0], f.dps[1]))
		}
	}
}

// TestBlindingSeenByEngine checks what the engine sees: the base is
// blinded (never c mod p, different on each use of the same input), the
// base is reduced below p or q, and with exponent blinding the exponent
// differs on each use but is ≡ d_p mod (p−1).
func TestBlindingSeenByEngine(t *testing.T) {
	priv := privOf(testKey(t, 1024))
	f := newFaulty("")
	k, err := NewKey(f, priv, Options{ExponentBlinding: true})
	if err != nil {
		t.Fatal(err)
	}
	c := big.NewInt(31337)
	for range 3 {
		if _, _, err := k.Private(context.Background(), c.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	if f.calls != 6 {
		t.Fatalf("engine called %d times, want 6", f.calls)
	}
	one := big.NewInt(1)
	pm1 := new(big.Int).Sub(priv.P, one)
	qm1 := new(big.Int).Sub(priv.Q, one)
	dp := new(big.Int).Mod(priv.D, pm1)
	dq := new(big.Int).Mod(priv.D, qm1)
	seenBase := map[string]bool{}
	seenExp := map[string]bool{}
	for i := range f.calls {
		b := new(big.Int).SetBytes(f.bases[i])
		e := new(big.Int).SetBytes(f.exps[i])
		if b.Cmp(c) == 0 {
			t.Error("engine saw the unblinded input")
		}
		if seenBase[string(f.bases[i])] || seenExp[string(f.exps[i])] {
			t.Error("engine saw the same base or exponent twice")
		}
		seenBase[string(f.bases[i])] = true
		seenExp[string(f.exps[i])] = true
		okP := b.Cmp(priv.P) < 0 && new(big.Int).Mod(e, pm1).Cmp(dp) == 0 && e.Cmp(dp) != 0
		okQ := b.Cmp(priv.Q) < 0 && new(big.Int).Mod(e, qm1).Cmp(dq) == 0 && e.Cmp(dq) != 0
		if !okP && !okQ {
			t.Errorf("call %d: base not reduced or exponent not a blinded d_p/d_q", i)
		}
		if len(f.exps[i]) != 8*((priv.P.BitLen()+63)/64)+8 {
			t.Errorf("call %d: blinded exponent of %d bytes", i, len(f.exps[i]))
		}
	}
}

// TestBlindingRenewal drives a key past several renewals: the pair stays
// consistent (every result right).
func TestBlindingRenewal(t *testing.T) {
	priv := privOf(testKey(t, 1024))
	k, err := NewKey(soft.New(), priv, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2*blindingRenewal + 3 {
		c := big.NewInt(int64(i + 5))
		out, _, err := k.Private(context.Background(), c.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if new(big.Int).SetBytes(out).Cmp(new(big.Int).Exp(c, priv.D, priv.N)) != 0 {
			t.Fatalf("use %d: wrong result", i)
		}
	}
}
