package dsa

import (
	"bytes"
	"context"
	"crypto/dsa" //nolint:staticcheck // deprecated, used here only as an independent reference
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/asn1"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
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

// loadParams reads testdata/params_L_N.pem (made by `openssl genpkey
// -genparam -algorithm DSA`).
func loadParams(t testing.TB, sz Size) *Parameters {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("testdata/params_%d_%d.pem", sz.L, sz.N))
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "DSA PARAMETERS" {
		t.Fatal("no DSA PARAMETERS block")
	}
	var p struct{ P, Q, G *big.Int }
	if _, err := asn1.Unmarshal(blk.Bytes, &p); err != nil {
		t.Fatal(err)
	}
	return &Parameters{P: p.P, Q: p.Q, G: p.G}
}

func newKey(t testing.TB, eng engine.Engine, params *Parameters) (*Key, []byte) {
	t.Helper()
	x, _, _, err := GenerateKey(ctx, soft.New(), params, nil)
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewKey(eng, params, x)
	if err != nil {
		t.Fatal(err)
	}
	return k, x
}

func stdKey(k *Key, x []byte) *dsa.PrivateKey {
	p := k.Parameters()
	return &dsa.PrivateKey{
		PublicKey: dsa.PublicKey{Parameters: dsa.Parameters{P: p.P, Q: p.Q, G: p.G}, Y: k.Y()},
		X:         new(big.Int).SetBytes(x),
	}
}

func TestParametersFromOpenSSL(t *testing.T) {
	for _, sz := range Sizes {
		p := loadParams(t, sz)
		if err := CheckParameters(p); err != nil {
			t.Errorf("%v: %v", sz, err)
		}
		if p.Size() != sz {
			t.Errorf("size %v, want %v", p.Size(), sz)
		}
	}
}

func TestCheckParametersRejects(t *testing.T) {
	good := loadParams(t, Size{1024, 160})
	one := big.NewInt(1)
	cases := map[string]*Parameters{
		"nil g":                 {P: good.P, Q: good.Q},
		"g = 1":                 {P: good.P, Q: good.Q, G: one},
		"g = p":                 {P: good.P, Q: good.Q, G: good.P},
		"g of order ≠ q":        {P: good.P, Q: good.Q, G: big.NewInt(2)},
		"q ∤ p−1":               {P: good.P, Q: new(big.Int).Add(good.Q, big.NewInt(2)), G: good.G},
		"p composite":           {P: new(big.Int).Add(new(big.Int).Mul(good.Q, new(big.Int).Lsh(one, 863)), one), Q: good.Q, G: good.G},
		"N = 256 with L = 1024": {P: good.P, Q: new(big.Int).Lsh(one, 255), G: good.G},
		"negative":              {P: new(big.Int).Neg(good.P), Q: good.Q, G: good.G},
	}
	for name, p := range cases {
		if err := CheckParameters(p); !errors.Is(err, ErrInvalidParameters) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := CheckParameters(nil); !errors.Is(err, ErrInvalidParameters) {
		t.Errorf("nil: %v", err)
	}
}

type wycheproofFile struct {
	TestGroups []struct {
		SHA       string `json:"sha"`
		PublicKey struct {
			P, Q, G, Y string
		} `json:"publicKey"`
		Tests []struct {
			TcID   int    `json:"tcId"`
			Msg    string `json:"msg"`
			Sig    string `json:"sig"`
			Result string `json:"result"`
		} `json:"tests"`
	} `json:"testGroups"`
}

func hexBig(t *testing.T, s string) *big.Int {
	t.Helper()
	v, ok := new(big.Int).SetString(s, 16)
	if !ok {
		t.Fatalf("bad hex %q", s)
	}
	return v
}

// TestWycheproof runs the subset of Wycheproof's DSA P1363 vectors kept in
// testdata (the source and licence are named there).
func TestWycheproof(t *testing.T) {
	b, err := os.ReadFile("testdata/dsa_2048_256_sha256_p1363_subset.json")
	if err != nil {
		t.Fatal(err)
	}
	var f wycheproofFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range f.TestGroups {
		if g.SHA != "SHA-256" {
			t.Fatalf("hash %s", g.SHA)
		}
		params := &Parameters{P: hexBig(t, g.PublicKey.P), Q: hexBig(t, g.PublicKey.Q), G: hexBig(t, g.PublicKey.G)}
		if err := CheckParameters(params); err != nil {
			t.Fatal(err)
		}
		y := hexBig(t, g.PublicKey.Y)
		if err := CheckPublic(params, y); err != nil {
			t.Fatal(err)
		}
		for _, tc := range g.Tests {
			msg, _ := hex.DecodeString(tc.Msg)
			sig, _ := hex.DecodeString(tc.Sig)
			h := sha256.Sum256(msg)
			err := verify(params, y, h[:], sig)
			if (err == nil) != (tc.Result == "valid") {
				t.Errorf("tcId %d (%s): %v", tc.TcID, tc.Result, err)
			}
			if err != nil && !errors.Is(err, ErrInvalidSignature) {
				t.Errorf("tcId %d: error %v does not wrap ErrInvalidSignature", tc.TcID, err)
			}
			n++
		}
	}
	if n < 20 {
		t.Fatalf("only %d vectors", n)
	}
}

// TestSignAllSizes signs at every FIPS size with hashes shorter than,
// equal to and longer than q, and checks each signature with Verify and
// with crypto/dsa; crypto/dsa's signatures must pass Verify too.
func TestSignAllSizes(t *testing.T) {
	eng := soft.New()
	for _, sz := range Sizes {
		params := loadParams(t, sz)
		k, x := newKey(t, eng, params)
		std := stdKey(k, x)
		msg := []byte("DSA at " + fmt.Sprint(sz))
		h1 := sha1.Sum(msg)
		h256 := sha256.Sum256(msg)
		h512 := sha512.Sum512(msg)
		for _, h := range [][]byte{h1[:], h256[:], h512[:]} {
			sig, _, err := k.Sign(ctx, h, nil)
			if err != nil {
				t.Fatalf("%v: %v", sz, err)
			}
			if len(sig) != 2*(sz.N/8) {
				t.Fatalf("%v: signature of %d bytes", sz, len(sig))
			}
			if err := verify(params, k.Y(), h, sig); err != nil {
				t.Fatalf("%v: own signature: %v", sz, err)
			}
			r := new(big.Int).SetBytes(sig[:sz.N/8])
			s := new(big.Int).SetBytes(sig[sz.N/8:])
			// crypto/dsa leaves the truncation to q's byte length (FIPS
			// 186-4 §4.6; N is byte-aligned at every FIPS size) to its caller.
			ht := h[:min(len(h), sz.N/8)]
			if !dsa.Verify(&std.PublicKey, ht, r, s) {
				t.Fatalf("%v: crypto/dsa rejects our signature (hash of %d bytes)", sz, len(h))
			}
			r2, s2, err := dsa.Sign(rand.Reader, std, ht)
			if err != nil {
				t.Fatal(err)
			}
			sig2 := append(r2.FillBytes(make([]byte, sz.N/8)), s2.FillBytes(make([]byte, sz.N/8))...)
			if err := verify(params, k.Y(), h, sig2); err != nil {
				t.Fatalf("%v: crypto/dsa's signature rejected: %v", sz, err)
			}
			bad := bytes.Clone(sig)
			bad[len(bad)-1] ^= 1
			if err := verify(params, k.Y(), h, bad); !errors.Is(err, ErrInvalidSignature) {
				t.Fatalf("%v: altered signature: %v", sz, err)
			}
		}
	}
}

// TestNonces: without additional data the nonce is deterministic (RFC
// 6979), so two signatures of one hash are equal; hedged signatures differ.
func TestNonces(t *testing.T) {
	params := loadParams(t, Size{2048, 256})
	k, _ := newKey(t, soft.New(), params)
	h := sha256.Sum256([]byte("nonce"))
	a, _, err := k.signOn(ctx, k.pr, h[:], nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := k.signOn(ctx, k.pr, h[:], nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("deterministic nonces differ")
	}
	c, _, err := k.Sign(ctx, h[:], nil)
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := k.Sign(ctx, h[:], nil)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(c, d) || bytes.Equal(c, a) {
		t.Fatal("hedged signatures repeat")
	}
}

func TestNewKeyRejects(t *testing.T) {
	params := loadParams(t, Size{1024, 160})
	eng := soft.New()
	for name, x := range map[string][]byte{
		"zero":  {0},
		"empty": nil,
		"q":     params.Q.Bytes(),
		"q+1":   new(big.Int).Add(params.Q, big.NewInt(1)).Bytes(),
		"long":  append([]byte{1}, make([]byte, 20)...),
		"2^160": new(big.Int).Lsh(big.NewInt(1), 160).Bytes(),
	} {
		if _, err := NewKey(eng, params, x); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("x %s: %v", name, err)
		}
	}
	qm1 := new(big.Int).Sub(params.Q, big.NewInt(1)).Bytes()
	if _, err := NewKey(eng, params, append([]byte{0, 0}, qm1...)); err != nil {
		t.Errorf("x = q−1 with leading zeros: %v", err)
	}
}

// TestBlindedExponent: the engine sees k + m·q: of fixed length, different
// for two signatures with the same (deterministic) nonce, and ≡ k (mod q).
func TestBlindedExponent(t *testing.T) {
	for _, sz := range Sizes[:2] {
		params := loadParams(t, sz)
		rec := &enginetest.Recorder{Engine: soft.New()}
		k, _ := newKey(t, rec, params)
		h := sha256.Sum256([]byte("blind"))
		for range 2 {
			if _, _, err := k.signOn(ctx, k.pr, h[:], nil); err != nil {
				t.Fatal(err)
			}
		}
		if len(rec.Exps()) != 2 {
			t.Fatalf("%d exponentiations", len(rec.Exps()))
		}
		a, b := rec.Exps()[0], rec.Exps()[1]
		if want := 8 * (mont.Limbs(sz.N/8) + 1); len(a) != want || len(b) != want {
			t.Fatalf("exponent lengths %d, %d, want %d", len(a), len(b), want)
		}
		if bytes.Equal(a, b) {
			t.Fatal("the engine saw the same exponent twice")
		}
		ka := new(big.Int).Mod(new(big.Int).SetBytes(a), params.Q)
		kb := new(big.Int).Mod(new(big.Int).SetBytes(b), params.Q)
		if ka.Cmp(kb) != 0 {
			t.Fatal("blinded exponents are not the same nonce mod q")
		}
		if new(big.Int).SetBytes(a).Cmp(params.Q) < 0 {
			t.Fatal("exponent not blinded")
		}
	}
}

// TestFaultyEngineNeverReleases: every corrupted result is caught before
// release (an error wrapping engine.ErrDevice and ErrFault); the same key
// on the software engine ([Key.On]) signs right.
func TestFaultyEngineNeverReleases(t *testing.T) {
	params := loadParams(t, Size{1024, 160})
	_, x := newKey(t, soft.New(), params)
	h := sha256.Sum256([]byte("fault"))
	for _, mode := range []string{"flip", "zero", "long", "device-error"} {
		rec := &enginetest.Recorder{Engine: soft.New(), Mode: mode}
		k, err := NewKey(rec, params, x)
		if err != nil {
			t.Fatal(err)
		}
		sig, _, err := k.Sign(ctx, h[:], nil)
		if sig != nil || !errors.Is(err, engine.ErrDevice) {
			t.Fatalf("%s: released %x, err %v", mode, sig, err)
		}
		if mode != "device-error" && !errors.Is(err, ErrFault) {
			t.Fatalf("%s: %v does not wrap ErrFault", mode, err)
		}
		// The same key on the software engine (engine/guard's fallback).
		k, err = k.On(soft.New())
		if err != nil {
			t.Fatal(err)
		}
		sig, _, err = k.Sign(ctx, h[:], nil)
		if err != nil {
			t.Fatalf("%s on the software engine: %v", mode, err)
		}
		if err := verify(params, k.Y(), h[:], sig); err != nil {
			t.Fatalf("%s on the software engine: %v", mode, err)
		}
		// A faulty engine also cannot make a key.
		if _, _, _, err := GenerateKey(ctx, rec, params, nil); !errors.Is(err, engine.ErrDevice) {
			t.Fatalf("%s: GenerateKey: %v", mode, err)
		}
	}
}

// TestChipEngines: the chip simulators serve DSA (their results are
// checked like any engine's), and a chip with injected faults releases no
// wrong signature.
func TestChipEngines(t *testing.T) {
	params := loadParams(t, Size{1024, 160})
	_, x := newKey(t, soft.New(), params)
	h := sha256.Sum256([]byte("chip"))
	for _, spec := range []string{"chip:orup561,scaled", "chip:pukcc", "chip:cryptech", "chip:cryptech,core=modexpa7"} {
		eng, err := engine.Open(spec)
		if err != nil {
			t.Fatal(err)
		}
		k, err := NewKey(eng, params, x)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		sig, cost, err := k.Sign(ctx, h[:], nil)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if err := verify(params, k.Y(), h[:], sig); err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if cost.Cycles == 0 {
			t.Errorf("%s: no cost reported", spec)
		}
		if _, y, _, err := GenerateKey(ctx, eng, params, nil); err != nil || len(y) != 128 {
			t.Fatalf("%s: GenerateKey: %v", spec, err)
		}
		eng.Close()
	}
	// orup561 without "scaled" takes 561-bit moduli at most.
	eng, err := engine.Open("chip:orup561")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewKey(eng, params, x); !errors.Is(err, engine.ErrOperandTooLarge) {
		t.Fatalf("orup561 with a 1024-bit p: %v", err)
	}
	for _, spec := range []string{"chip:orup561,scaled,fault=bitflip", "chip:pukcc,fault=zero", "chip:cryptech,fault=bitflip"} {
		eng, err := engine.Open(spec)
		if err != nil {
			t.Fatal(err)
		}
		k, err := NewKey(eng, params, x)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			sig, _, err := k.Sign(ctx, h[:], nil)
			if err == nil {
				if verr := verify(params, k.Y(), h[:], sig); verr != nil {
					t.Fatalf("%s released a wrong signature", spec)
				}
				continue
			}
			if !errors.Is(err, engine.ErrDevice) {
				t.Fatalf("%s: %v", spec, err)
			}
		}
		eng.Close()
	}
}

func TestGenerateParameters(t *testing.T) {
	sizes := []Size{{1024, 160}}
	if !testing.Short() {
		sizes = append(sizes, Size{2048, 256})
	}
	for _, sz := range sizes {
		p, err := GenerateParameters(ctx, nil, sz)
		if err != nil {
			t.Fatal(err)
		}
		if p.Size() != sz {
			t.Fatalf("size %v, want %v", p.Size(), sz)
		}
		// crypto/dsa signs and verifies with them too.
		std := &dsa.PrivateKey{PublicKey: dsa.PublicKey{Parameters: dsa.Parameters{P: p.P, Q: p.Q, G: p.G}}}
		if err := dsa.GenerateKey(std, rand.Reader); err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256([]byte("params"))
		r, s, err := dsa.Sign(rand.Reader, std, h[:sz.N/8])
		if err != nil {
			t.Fatal(err)
		}
		sig := append(r.FillBytes(make([]byte, sz.N/8)), s.FillBytes(make([]byte, sz.N/8))...)
		if err := verify(p, std.Y, h[:], sig); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := GenerateParameters(ctx, nil, Size{2048, 160}); !errors.Is(err, ErrInvalidParameters) {
		t.Fatalf("(2048, 160): %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := GenerateParameters(cctx, nil, Size{3072, 256}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// traceSign records the Montgomery kernel calls and table lookups of one
// deterministic signature on the software engine.
func traceSign(t *testing.T, k *Key, hash []byte) string {
	var ops strings.Builder
	mont.SetTrace(func(op byte) { ops.WriteByte(op) })
	beforeCheck = func() { mont.SetTrace(nil) }
	defer func() { mont.SetTrace(nil); beforeCheck = nil }()
	if _, _, err := k.signOn(ctx, k.pr, hash, nil); err != nil {
		t.Fatal(err)
	}
	return ops.String()
}

// TestSignTraceIndependentOfSecrets: the sequence of kernel calls and
// table lookups of a signature on the software engine (g^k with the
// blinded exponent, the reductions, and the blinded mod-q arithmetic with
// the inversion by Fermat) is the same for different private values,
// hashes and nonces. The check before release (public values, variable
// time) is left out of the trace.
func TestSignTraceIndependentOfSecrets(t *testing.T) {
	params := loadParams(t, Size{2048, 256})
	eng := soft.New()
	var ref string
	for i := range 4 {
		k, _ := newKey(t, eng, params)
		h := sha256.Sum256([]byte{byte(i)})
		if i == 3 {
			h = [32]byte{} // a hash of zeros
		}
		got := traceSign(t, k, h[:])
		if len(got) == 0 {
			t.Fatal("trace hook recorded nothing")
		}
		if ref == "" {
			ref = got
			continue
		}
		if got != ref {
			t.Fatalf("kernel trace differs for key %d (%d vs %d events)", i, len(got), len(ref))
		}
	}
}

func FuzzVerify(f *testing.F) {
	params := loadParams(f, Size{1024, 160})
	k, _ := newKey(f, soft.New(), params)
	h := sha256.Sum256([]byte("fuzz"))
	sig, _, err := k.Sign(ctx, h[:], nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(h[:], sig)
	f.Add([]byte{}, make([]byte, 40))
	f.Add(h[:20], bytes.Repeat([]byte{0xff}, 40))
	y := k.Y()
	f.Fuzz(func(t *testing.T, hash, sig []byte) {
		err := verify(params, y, hash, sig)
		if err != nil && !errors.Is(err, ErrInvalidSignature) {
			t.Fatalf("unexpected error %v", err)
		}
	})
}

// TestMultiExp compares the simultaneous exponentiation with math/big for
// exponents of different lengths, zero and one.
func TestMultiExp(t *testing.T) {
	p := loadParams(t, Size{2048, 256}).P
	m, err := mont.NewModulus(p.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	rb := func(n int) []byte {
		b := make([]byte, n)
		rand.Read(b)
		return b
	}
	for i, c := range [][2][]byte{
		{rb(32), rb(32)}, {rb(32), rb(20)}, {rb(3), rb(32)}, {{0}, rb(32)}, {rb(32), nil}, {{0}, {0}}, {{1}, {1}},
	} {
		a := new(big.Int).Mod(new(big.Int).SetBytes(rb(256)), p)
		b := new(big.Int).Mod(new(big.Int).SetBytes(rb(256)), p)
		al, bl := make([]uint64, m.Limbs()), make([]uint64, m.Limbs())
		mont.SetBytes(al, a.Bytes())
		mont.SetBytes(bl, b.Bytes())
		got := make([]byte, m.Size())
		mont.FillBytes(got, multiExpVarTime(m, al, bl, c[0], c[1]))
		want := new(big.Int).Exp(a, new(big.Int).SetBytes(c[0]), p)
		want.Mul(want, new(big.Int).Exp(b, new(big.Int).SetBytes(c[1]), p))
		want.Mod(want, p)
		if !bytes.Equal(got, want.FillBytes(make([]byte, m.Size()))) {
			t.Fatalf("case %d: a^e1·b^e2 wrong", i)
		}
	}
}

func BenchmarkSign2048(b *testing.B) {
	params := loadParams(b, Size{2048, 256})
	k, _ := newKey(b, soft.New(), params)
	h := sha256.Sum256([]byte("bench"))
	for b.Loop() {
		if _, _, err := k.Sign(ctx, h[:], nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify2048(b *testing.B) {
	params := loadParams(b, Size{2048, 256})
	k, _ := newKey(b, soft.New(), params)
	h := sha256.Sum256([]byte("bench"))
	sig, _, err := k.Sign(ctx, h[:], nil)
	if err != nil {
		b.Fatal(err)
	}
	pub, err := NewPublicKey(params, k.Y())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := pub.Verify(h[:], sig); err != nil {
			b.Fatal(err)
		}
	}
}

// verify checks sig under y with the product's API: NewPublicKey, then
// PublicKey.Verify.
func verify(params *Parameters, y *big.Int, hash, sig []byte) error {
	k, err := NewPublicKey(params, y)
	if err != nil {
		return err
	}
	return k.Verify(hash, sig)
}
