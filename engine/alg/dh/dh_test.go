package dh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/mont"
	_ "github.com/modexp-token/modexp-token/engine/backend/chip"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
	"github.com/modexp-token/modexp-token/engine/enginetest"
)

var ctx = context.Background()

// eBits returns ⌊2^k·e⌋ from the series e = Σ 1/n!, with 64 guard bits.
func eBits(k int) *big.Int {
	scale := new(big.Int).Lsh(big.NewInt(1), uint(k+64))
	sum := new(big.Int)
	term := new(big.Int).Set(scale)
	for n := int64(1); term.Sign() > 0; n++ {
		sum.Add(sum, term)
		term.Div(term, big.NewInt(n))
	}
	return sum.Rsh(sum, 64)
}

// TestKnownGroupsFormula checks the RFC 7919 primes against their
// definition p = 2^b − 2^(b−64) + (⌊2^(b−130)·e⌋ + X)·2^64 − 1 with the X
// the RFC gives, and that they are safe primes with 2 of order q.
func TestKnownGroupsFormula(t *testing.T) {
	xs := map[string]int64{"ffdhe2048": 560316, "ffdhe3072": 2625351, "ffdhe4096": 5736041}
	groups := knownGroups()
	if len(groups) != 3 {
		t.Fatalf("%d groups", len(groups))
	}
	for _, g := range groups {
		b := g.P.BitLen()
		one := big.NewInt(1)
		p := new(big.Int).Lsh(one, uint(b))
		p.Sub(p, new(big.Int).Lsh(one, uint(b-64)))
		mid := eBits(b - 130)
		mid.Add(mid, big.NewInt(xs[g.Name]))
		p.Add(p, mid.Lsh(mid, 64))
		p.Sub(p, one)
		if p.Cmp(g.P) != 0 {
			t.Errorf("%s: constant differs from the formula", g.Name)
		}
		if g.Name != fmt.Sprintf("ffdhe%d", b) {
			t.Errorf("%s has %d bits", g.Name, b)
		}
		if testing.Short() {
			continue
		}
		if !g.Q.ProbablyPrime(4) || new(big.Int).Exp(g.G, g.Q, g.P).Cmp(one) != 0 {
			t.Errorf("%s: q not prime or 2 not of order q", g.Name)
		}
	}
}

func ffdhe(t testing.TB, name string) *Group {
	t.Helper()
	for _, g := range knownGroups() {
		if g.Name == name {
			grp, err := LookupGroup(g.P, g.G)
			if err != nil || grp.Q == nil || grp.Name != name {
				t.Fatalf("LookupGroup(%s): %v", name, err)
			}
			return grp
		}
	}
	t.Fatalf("no group %s", name)
	return nil
}

func pair(t testing.TB, eng engine.Engine, g *Group, bits int) (*Key, []byte) {
	t.Helper()
	x, y, _, err := GenerateKey(ctx, eng, g, bits, nil)
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewKey(eng, g, x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return k, y
}

// TestAgreement: both sides derive the same secret, equal to math/big's
// y^x mod p, padded to the length of p; with CKA_VALUE_BITS-style private
// values too.
func TestAgreement(t *testing.T) {
	eng := soft.New()
	for _, name := range []string{"ffdhe2048", "ffdhe3072"} {
		g := ffdhe(t, name)
		for _, bits := range []int{0, 256} {
			xa, ya, _, err := GenerateKey(ctx, eng, g, bits, nil)
			if err != nil {
				t.Fatal(err)
			}
			if bits != 0 && new(big.Int).SetBytes(xa).BitLen() != bits {
				t.Fatalf("x of %d bits, want %d", new(big.Int).SetBytes(xa).BitLen(), bits)
			}
			a, err := NewKey(eng, g, xa, Options{})
			if err != nil {
				t.Fatal(err)
			}
			b, yb := pair(t, eng, g, bits)
			za, _, err := a.Derive(ctx, yb)
			if err != nil {
				t.Fatal(err)
			}
			zb, _, err := b.Derive(ctx, ya)
			if err != nil {
				t.Fatal(err)
			}
			want := new(big.Int).Exp(new(big.Int).SetBytes(yb), new(big.Int).SetBytes(xa), g.P).FillBytes(make([]byte, len(g.P.Bytes())))
			if !bytes.Equal(za, zb) || !bytes.Equal(za, want) {
				t.Fatalf("%s: secrets differ", name)
			}
			if !bytes.Equal(ya, new(big.Int).Exp(g.G, new(big.Int).SetBytes(xa), g.P).FillBytes(make([]byte, len(g.P.Bytes())))) {
				t.Fatalf("%s: wrong public value", name)
			}
		}
	}
}

func TestCheckPublicRejects(t *testing.T) {
	g := ffdhe(t, "ffdhe2048")
	k, _ := pair(t, soft.New(), g, 0)
	one := big.NewInt(1)
	pm1 := new(big.Int).Sub(g.P, one)
	// A value outside the subgroup of order q: a non-residue.
	var nonRes *big.Int
	for c := int64(3); ; c++ {
		v := big.NewInt(c)
		if new(big.Int).Exp(v, g.Q, g.P).Cmp(one) != 0 {
			nonRes = v
			break
		}
	}
	for name, y := range map[string][]byte{
		"0": {0}, "1": {1}, "p−1": pm1.Bytes(), "p": g.P.Bytes(), "p+1": new(big.Int).Add(g.P, one).Bytes(),
		"empty": nil, "non-residue": nonRes.Bytes(), "long": append([]byte{1}, make([]byte, 256)...),
	} {
		if _, _, err := k.Derive(ctx, y); !errors.Is(err, ErrInvalidPublic) {
			t.Errorf("peer %s: %v", name, err)
		}
	}
}

// TestCheckPublicJacobi: for the RFC 7919 groups CheckPublic tests the
// subgroup of order q with the Jacobi symbol; it must accept exactly the
// values y with y^q ≡ 1 (mod p) (math/big), for random values, public
// values of generated keys, and their negations (non-residues: −1 is not
// a square modulo these primes, p ≡ 3 mod 4).
func TestCheckPublicJacobi(t *testing.T) {
	r := mrand.New(mrand.NewPCG(31, 32))
	one := big.NewInt(1)
	for _, g := range knownGroups()[:2] { // ffdhe2048, ffdhe3072: keeps it fast
		pm1 := new(big.Int).Sub(g.P, one)
		var ys []*big.Int
		for range 20 {
			b := make([]byte, len(g.P.Bytes()))
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			ys = append(ys, new(big.Int).Mod(new(big.Int).SetBytes(b), g.P))
		}
		for range 2 {
			_, y, _, err := GenerateKey(ctx, soft.New(), &g, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			yv := new(big.Int).SetBytes(y)
			ys = append(ys, yv, new(big.Int).Sub(g.P, yv))
		}
		ys = append(ys, big.NewInt(2), big.NewInt(3), big.NewInt(4), new(big.Int).Sub(pm1, one))
		accepted, rejected := 0, 0
		for _, y := range ys {
			want := y.Cmp(one) > 0 && y.Cmp(pm1) < 0 && new(big.Int).Exp(y, g.Q, g.P).Cmp(one) == 0
			err := CheckPublic(&g, y.Bytes())
			if (err == nil) != want {
				t.Fatalf("%s: CheckPublic(%x…) = %v, y^q = 1: %v", g.Name, y.Bytes()[:4], err, want)
			}
			if want {
				accepted++
			} else {
				rejected++
			}
		}
		if accepted < 5 || rejected < 5 {
			t.Fatalf("%s: %d accepted, %d rejected: the sample does not exercise both sides", g.Name, accepted, rejected)
		}
	}
}

func TestLookupGroup(t *testing.T) {
	g := ffdhe(t, "ffdhe2048")
	// Another base with the known prime: a group without its name.
	if grp, err := LookupGroup(g.P, big.NewInt(4)); err != nil || grp.Name != "" || grp.Q == nil {
		t.Fatalf("ffdhe2048 prime with g = 4: %+v, %v", grp, err)
	}
	for name, c := range map[string][2]*big.Int{
		"small":     {big.NewInt(23), big.NewInt(5)},
		"composite": {new(big.Int).Add(g.P, big.NewInt(2)), big.NewInt(2)},
		"g = 1":     {g.P, big.NewInt(1)},
		"g = p−1":   {g.P, new(big.Int).Sub(g.P, big.NewInt(1))},
		"nil":       {nil, big.NewInt(2)},
	} {
		if _, err := LookupGroup(c[0], c[1]); !errors.Is(err, ErrInvalidParameters) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestNewKeyRange(t *testing.T) {
	g := ffdhe(t, "ffdhe2048")
	eng := soft.New()
	for name, x := range map[string][]byte{"0": {0}, "q": g.Q.Bytes(), "p": g.P.Bytes(), "empty": nil} {
		if _, err := NewKey(eng, g, x, Options{}); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("x = %s: %v", name, err)
		}
	}
	for _, bits := range []int{1, 2048, -1} {
		if _, _, _, err := GenerateKey(ctx, eng, g, bits, nil); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("%d value bits: %v", bits, err)
		}
	}
}

// pairRecorder adds ExpPair (one call for both exponentiations).
type pairRecorder struct {
	*enginetest.Recorder
	pairs int
}

func (p *pairRecorder) ExpPair(ctx context.Context, a, b engine.ExpOp) (ra, rb []byte, c engine.Cost, err error) {
	p.pairs++
	ra, c, err = engine.ExpMode(ctx, p, a.M, a.Base, a.Exp, a.Public)
	if err != nil {
		return nil, nil, c, err
	}
	rb, c2, err := engine.ExpMode(ctx, p, b.M, b.Base, b.Exp, b.Public)
	return ra, rb, c.Add(c2), err
}

// agreement draws a private value x on g and a peer's public value, and
// returns them with the secret they agree on, by math/big.
func agreement(t *testing.T, g *Group) (x, peer, want []byte) {
	t.Helper()
	x, _, _, err := GenerateKey(ctx, soft.New(), g, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, peer = pair(t, soft.New(), g, 0)
	want = new(big.Int).Exp(new(big.Int).SetBytes(peer), new(big.Int).SetBytes(x), g.P).FillBytes(make([]byte, len(g.P.Bytes())))
	return x, peer, want
}

func TestFaultyEngineNeverReleases(t *testing.T) {
	g := ffdhe(t, "ffdhe2048")
	x, peer, want := agreement(t, g)
	for _, mode := range []string{"flip-second", "flip", "zero", "device-error", "identity"} {
		rec := &enginetest.Recorder{Engine: soft.New(), Mode: mode}
		k, err := NewKey(rec, g, x, Options{})
		if err != nil {
			t.Fatal(err)
		}
		z, _, err := k.Derive(ctx, peer)
		if z != nil || !errors.Is(err, engine.ErrDevice) {
			t.Fatalf("%s: released %x…, err %v", mode, z[:min(len(z), 4)], err)
		}
		// The same key on the software engine (engine/guard's fallback).
		if k, err = k.On(soft.New()); err != nil {
			t.Fatal(err)
		}
		z, _, err = k.Derive(ctx, peer)
		if err != nil || !bytes.Equal(z, want) {
			t.Fatalf("%s on the software engine: %v", mode, err)
		}
		if mode != "flip-second" {
			if _, _, _, err := GenerateKey(ctx, rec, g, 0, nil); !errors.Is(err, engine.ErrDevice) {
				t.Fatalf("%s: GenerateKey: %v", mode, err)
			}
		}
	}
}

// TestBlinding: the engine sees two different exponents per agreement,
// of fixed length, both ≡ x (mod q); a pair engine gets them in one call.
func TestBlinding(t *testing.T) {
	g := ffdhe(t, "ffdhe2048")
	x, _, _, err := GenerateKey(ctx, soft.New(), g, 224, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, peer := pair(t, soft.New(), g, 0)
	pr := &pairRecorder{Recorder: &enginetest.Recorder{Engine: soft.New()}}
	k, err := NewKey(pr, g, x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := k.Derive(ctx, peer); err != nil {
		t.Fatal(err)
	}
	if pr.pairs != 1 || len(pr.Exps()) != 2 {
		t.Fatalf("%d pair calls, %d exponentiations", pr.pairs, len(pr.Exps()))
	}
	a, b := pr.Exps()[0], pr.Exps()[1]
	if len(a) != 8*(256/8+1) || len(b) != len(a) || bytes.Equal(a, b) {
		t.Fatalf("exponents of %d and %d bytes, equal %v", len(a), len(b), bytes.Equal(a, b))
	}
	xv := new(big.Int).SetBytes(x)
	for _, e := range [][]byte{a, b} {
		if new(big.Int).Mod(new(big.Int).SetBytes(e), g.Q).Cmp(xv) != 0 {
			t.Fatal("exponent not ≡ x (mod q)")
		}
	}
}

// TestChipEngines: chips serve DH; faulty chips release nothing wrong.
func TestChipEngines(t *testing.T) {
	g := ffdhe(t, "ffdhe2048")
	x, peer, want := agreement(t, g)
	for _, spec := range []string{"chip:pukcc", "chip:cryptech", "chip:cryptech,core=modexpa7"} {
		eng, err := engine.Open(spec)
		if err != nil {
			t.Fatal(err)
		}
		k, err := NewKey(eng, g, x, Options{})
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		z, cost, err := k.Derive(ctx, peer)
		if err != nil || !bytes.Equal(z, want) {
			t.Fatalf("%s: %v", spec, err)
		}
		if cost.Cycles == 0 {
			t.Errorf("%s: no cost", spec)
		}
		eng.Close()
	}
	for _, spec := range []string{"chip:pukcc,fault=bitflip", "chip:cryptech,fault=zero"} {
		eng, err := engine.Open(spec)
		if err != nil {
			t.Fatal(err)
		}
		k, err := NewKey(eng, g, x, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			z, _, err := k.Derive(ctx, peer)
			if err == nil && !bytes.Equal(z, want) {
				t.Fatalf("%s released a wrong secret", spec)
			}
			if err != nil && !errors.Is(err, engine.ErrDevice) {
				t.Fatalf("%s: %v", spec, err)
			}
		}
		eng.Close()
	}
}

// TestDeriveTraceIndependentOfSecrets: on the software engine, the
// sequence of kernel calls of an agreement is the same for different
// private values (full-range and short) and peers.
func TestDeriveTraceIndependentOfSecrets(t *testing.T) {
	bits := []int{0, 0, 256, 1000}
	sameTraces(t, len(bits), func(eng engine.Engine, g *Group, i int) *Key {
		k, _ := pair(t, eng, g, bits[i])
		return k
	})
}

// sameTraces derives with n keys of ffdhe2048 on the software engine
// (key(i) makes the i-th), each with a peer of its own, and fails t
// unless the kernel calls are the same for all.
func sameTraces(t *testing.T, n int, key func(eng engine.Engine, g *Group, i int) *Key) {
	t.Helper()
	g := ffdhe(t, "ffdhe2048")
	eng := soft.New()
	var ref string
	for i := range n {
		k := key(eng, g, i)
		_, peer := pair(t, eng, g, 0)
		got := traceDerive(t, k, peer)
		if i == 0 {
			ref = got
		} else if got != ref {
			t.Fatalf("kernel trace differs for key %d", i)
		}
	}
}

// shortKey returns a key with x of exactly bits bits and Options.ValueBits
// = bits (the split path when bits is at most a quarter of q's), and x.
func shortKey(t testing.TB, eng engine.Engine, g *Group, bits int, opts Options) (*Key, []byte) {
	t.Helper()
	x, _, _, err := GenerateKey(ctx, soft.New(), g, bits, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts.ValueBits = bits
	k, err := NewKey(eng, g, x, opts)
	if err != nil {
		t.Fatal(err)
	}
	return k, x
}

// TestSplitAgreement: keys with a short private value declared in
// Options.ValueBits derive math/big's y^x through the split exponents,
// for the sizes where the split is used; NewKey refuses a value bound x
// does not meet.
func TestSplitAgreement(t *testing.T) {
	eng := soft.New()
	for _, g := range knownGroups()[:2] {
		_, peer := pair(t, eng, &g, 0)
		for _, bits := range []int{2, 225, 256, 275, g.Q.BitLen() / 4} {
			k, x := shortKey(t, eng, &g, bits, Options{})
			if k.short == 0 || k.short != (bits+65+7)/8 {
				t.Fatalf("%s, %d bits: split exponents of %d bytes", g.Name, bits, k.short)
			}
			want := new(big.Int).Exp(new(big.Int).SetBytes(peer), new(big.Int).SetBytes(x), g.P).FillBytes(make([]byte, len(g.P.Bytes())))
			for range 3 {
				z, _, err := k.Derive(ctx, peer)
				if err != nil || !bytes.Equal(z, want) {
					t.Fatalf("%s, %d bits: derive wrong (%v)", g.Name, bits, err)
				}
			}
		}
		// Above a quarter of q's bits: the blinded path.
		k, _ := shortKey(t, eng, &g, g.Q.BitLen()/4+1, Options{})
		if k.short != 0 {
			t.Fatalf("%s: split used above a quarter of q", g.Name)
		}
		// x = 1 without a declared length (the blinded path) gives y: not
		// taken for an engine that ignores the exponent.
		if k, err := NewKey(eng, &g, []byte{1}, Options{}); err != nil || k.short != 0 {
			t.Fatalf("%s: x = 1: %v", g.Name, err)
		} else if z, _, err := k.Derive(ctx, peer); err != nil || !bytes.Equal(z, peer) {
			t.Fatalf("%s: x = 1, blinded: %v", g.Name, err)
		}
		// x = 1 declared as 1 bit; a full-range x declared at q's length.
		if k, err := NewKey(eng, &g, []byte{1}, Options{ValueBits: 1}); err != nil || k.short == 0 {
			t.Fatalf("%s: x = 1 with ValueBits 1: %v", g.Name, err)
		} else if z, _, err := k.Derive(ctx, peer); err != nil || !bytes.Equal(z, peer) {
			t.Fatalf("%s: x = 1: %v", g.Name, err)
		}
		xf, _, _, err := GenerateKey(ctx, eng, &g, g.Q.BitLen()-1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if k, err := NewKey(eng, &g, xf, Options{ValueBits: g.Q.BitLen()}); err != nil || k.short != 0 {
			t.Fatalf("%s: ValueBits = q's length: %v", g.Name, err)
		}
	}
	g := ffdhe(t, "ffdhe2048")
	x, _, _, err := GenerateKey(ctx, eng, g, 300, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, vb := range []int{299, 1, g.Q.BitLen() + 1, -1} {
		if _, err := NewKey(eng, g, x, Options{ValueBits: vb}); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("a 300-bit x with ValueBits %d: %v", vb, err)
		}
	}
}

// TestSplitExponents: on the split path the engine gets four
// exponentiations in two pair calls, each exponent of the fixed split
// length, e0 − e1 = e2 − e3 = x, and fresh randomness each time.
func TestSplitExponents(t *testing.T) {
	g := ffdhe(t, "ffdhe2048")
	_, peer := pair(t, soft.New(), g, 0)
	pr := &pairRecorder{Recorder: &enginetest.Recorder{Engine: soft.New()}}
	k, x := shortKey(t, pr, g, 225, Options{})
	if _, _, err := k.Derive(ctx, peer); err != nil {
		t.Fatal(err)
	}
	if pr.pairs != 2 || len(pr.Exps()) != 4 {
		t.Fatalf("%d pair calls, %d exponentiations", pr.pairs, len(pr.Exps()))
	}
	xv := new(big.Int).SetBytes(x)
	e := make([]*big.Int, 4)
	for i, b := range pr.Exps() {
		if len(b) != (225+65+7)/8 {
			t.Fatalf("exponent %d of %d bytes", i, len(b))
		}
		e[i] = new(big.Int).SetBytes(b)
	}
	if new(big.Int).Sub(e[0], e[1]).Cmp(xv) != 0 || new(big.Int).Sub(e[2], e[3]).Cmp(xv) != 0 || e[1].Cmp(e[3]) == 0 {
		t.Fatal("split exponents are not x + r, r with fresh r")
	}
}

// TestSplitFaultyEngineNeverReleases: the faults of
// TestFaultyEngineNeverReleases, and an engine that ignores the exponent,
// on the split path: no wrong secret, an error wrapping engine.ErrDevice,
// and the right answer from the key on the software engine.
func TestSplitFaultyEngineNeverReleases(t *testing.T) {
	g := ffdhe(t, "ffdhe2048")
	_, peer := pair(t, soft.New(), g, 0)
	for _, mode := range []string{"flip-second", "flip", "zero", "device-error", "identity"} {
		rec := &enginetest.Recorder{Engine: soft.New(), Mode: mode}
		k, x := shortKey(t, rec, g, 225, Options{})
		want := new(big.Int).Exp(new(big.Int).SetBytes(peer), new(big.Int).SetBytes(x), g.P).FillBytes(make([]byte, 256))
		z, _, err := k.Derive(ctx, peer)
		if z != nil || err == nil {
			t.Fatalf("%s: released %x…", mode, z[:min(len(z), 4)])
		}
		if mode == "identity" {
			continue // z1 = y·y⁻¹ = 1: refused as a secret of 1
		}
		if !errors.Is(err, engine.ErrDevice) {
			t.Fatalf("%s: err %v", mode, err)
		}
		k, err = k.On(soft.New())
		if err != nil {
			t.Fatal(err)
		}
		if z, _, err = k.Derive(ctx, peer); err != nil || !bytes.Equal(z, want) {
			t.Fatalf("%s on the software engine: %v", mode, err)
		}
	}
}

// traceDerive returns the kernel calls of one Derive (not empty).
func traceDerive(t *testing.T, k *Key, peer []byte) string {
	t.Helper()
	var ops strings.Builder
	mont.SetTrace(func(op byte) { ops.WriteByte(op) })
	_, _, err := k.Derive(ctx, peer)
	mont.SetTrace(nil)
	if err != nil {
		t.Fatal(err)
	}
	if ops.Len() == 0 {
		t.Fatal("no trace")
	}
	return ops.String()
}

// TestSplitTraceIndependentOfSecrets: on the software engine the kernel
// calls of a split agreement are the same for different private values of
// one declared length and different peers.
func TestSplitTraceIndependentOfSecrets(t *testing.T) {
	sameTraces(t, 4, func(eng engine.Engine, g *Group, _ int) *Key {
		k, _ := shortKey(t, eng, g, 225, Options{})
		return k
	})
}

// TestGenerateGroup makes safe-prime groups with the search of
// GenerateGroup: at 256 and 384 bits always (fast), at 1024 bits (the
// smallest size GenerateGroup itself makes; seconds to a minute) with
// MODEXP_SLOW=1. It agrees on the 1024-bit group.
func TestGenerateGroup(t *testing.T) {
	for _, bits := range []int{256, 384} {
		g, err := generateGroup(ctx, nil, bits)
		if err != nil {
			t.Fatal(err)
		}
		one := big.NewInt(1)
		if g.P.BitLen() != bits || !g.P.ProbablyPrime(20) || !g.Q.ProbablyPrime(20) ||
			new(big.Int).Add(new(big.Int).Lsh(g.Q, 1), one).Cmp(g.P) != 0 || new(big.Int).Exp(g.G, g.Q, g.P).Cmp(one) != 0 {
			t.Fatalf("%d bits: not a safe-prime group with g of order q", bits)
		}
	}
	if _, err := GenerateGroup(ctx, nil, 512); !errors.Is(err, ErrInvalidParameters) {
		t.Fatalf("512 bits: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := GenerateGroup(cctx, nil, 2048); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if os.Getenv("MODEXP_SLOW") != "1" {
		t.Skip("1024-bit generation: set MODEXP_SLOW=1")
	}
	g, err := GenerateGroup(ctx, nil, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if g.P.BitLen() != 1024 || g.Q == nil || !g.P.ProbablyPrime(20) || !g.Q.ProbablyPrime(20) {
		t.Fatal("not a 1024-bit safe prime")
	}
	grp, err := LookupGroup(g.P, g.G)
	if err != nil || grp.Q == nil || grp.Q.Cmp(g.Q) != 0 {
		t.Fatalf("LookupGroup does not recognise the safe prime: %v", err)
	}
	a, ya := pair(t, soft.New(), grp, 0)
	b, yb := pair(t, soft.New(), grp, 0)
	za, _, err := a.Derive(ctx, yb)
	if err != nil {
		t.Fatal(err)
	}
	zb, _, err := b.Derive(ctx, ya)
	if err != nil || !bytes.Equal(za, zb) {
		t.Fatal("secrets differ")
	}
}
