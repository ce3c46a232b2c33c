package chip

import (
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/asn1"
	"errors"
	"math/big"
	mrand "math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/enginetest"
	"github.com/modexp-token/modexp-token/test/vectors/testkeys"
)

func TestSpecErrors(t *testing.T) {
	for _, spec := range []string{
		"chip:", "chip:nosuch", "chip:orup561,", "chip:orup561,f=abc", "chip:orup561,f=1e12",
		"chip:orup561,nw=6,nw=7", "chip:orup561,vdd=6", "chip:orup561,ni=116", "chip:orup561,nj=600",
		"chip:orup561,bogus=1", "chip:orup561,w=4", "chip:pukcc,w=5", "chip:pukcc,expram=flash",
		"chip:cryptech,core=modexp9", "chip:cryptech,cores=2", "chip:cryptech,core=modexpa7,pad=false",
		"chip:pukcc,fault=melt", "chip:pukcc,zero-above:x", "chip:orup561,time_scale=-1", "chip:orup561,scaled=maybe",
	} {
		if e, err := engine.Open(spec); err == nil {
			e.Close()
			t.Errorf("Open(%q) succeeded", spec)
		}
	}
	for _, spec := range []string{
		"chip:orup561,f=30e6,nw=5,vdd=4.5,scaled", "chip:orup561,ni=115,nj=561", "chip:pukcc,w=2,expram=other",
		"chip:cryptech,zero-above:1024", "chip:cryptech,pad=false,clock=50e6", "chip:cryptech,core=modexpa7,cores=1,array=5",
		"chip:orup561,time_scale=0.5,seed=42",
	} {
		e, err := engine.Open(spec)
		if err != nil {
			t.Errorf("Open(%q): %v", spec, err)
			continue
		}
		if got := e.Info().Name; got != "chip:"+strings.TrimPrefix(spec, "chip:") && !strings.Contains(spec, "zero-above") {
			t.Errorf("Info().Name = %q for %q", got, spec)
		}
		e.Close()
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"orup561,f=30e6,nw=5,vdd=4.5,scaled", "pukcc,w=4", "cryptech,zero-above:1024", ",", "a=b=c", "x,,y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseSpec(s)
		if err != nil {
			return
		}
		again, err := ParseSpec(sp.String())
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", sp.String(), s, err)
		}
		if again.String() != sp.String() {
			t.Fatalf("canonical form unstable: %q → %q", sp.String(), again.String())
		}
		if e, err := New(s); err == nil {
			e.Close()
		}
	})
}

func wantTooLarge(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, engine.ErrOperandTooLarge) {
		t.Errorf("%s: error = %v, want engine.ErrOperandTooLarge", what, err)
	}
}

func TestOrupLimits(t *testing.T) {
	r := mrand.New(mrand.NewPCG(10, 10))
	e := enginetest.Open(t, "chip:orup561")
	_, err := e.NewModulus(randOdd(r, 562).Bytes())
	wantTooLarge(t, "562-bit modulus", err)
	if err == nil || !strings.Contains(err.Error(), "scaled") {
		t.Errorf("the refusal should name the scaled mode: %v", err)
	}
	m := randOdd(r, 561)
	mod, err := e.NewModulus(m.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = e.Exp(context.Background(), mod, []byte{2}, randBits(r, 600).Bytes())
	wantTooLarge(t, "600-bit exponent", err)
	_, _, err = e.Exp(context.Background(), mod, m.Bytes(), []byte{3})
	wantTooLarge(t, "base = modulus", err)

	small := enginetest.Open(t, "chip:orup561,ni=100")
	mod, _ = small.NewModulus(m.Bytes())
	_, _, err = small.Exp(context.Background(), mod, []byte{2}, []byte{3})
	wantTooLarge(t, "ni=100 for 561 bits", err)

	short := enginetest.Open(t, "chip:orup561,nj=64")
	mod, _ = short.NewModulus(m.Bytes())
	_, _, err = short.Exp(context.Background(), mod, []byte{2}, randBits(r, 100).Bytes())
	wantTooLarge(t, "100-bit exponent with nj=64", err)

	scaled := enginetest.Open(t, "chip:orup561,scaled")
	if scaled.Info().MaxModulusBits != orupScaledMax || !strings.Contains(scaled.Info().Model, "scaled") {
		t.Errorf("scaled Info = %+v", scaled.Info())
	}
	_, err = scaled.NewModulus(randOdd(r, orupScaledMax+1).Bytes())
	wantTooLarge(t, "scaled beyond 8192", err)
}

func TestPUKCCLimits(t *testing.T) {
	r := mrand.New(mrand.NewPCG(11, 11))
	ctx := context.Background()
	statusOf := func(err error) Status {
		var se *StatusError
		if !errors.As(err, &se) {
			t.Fatalf("error %v is not a StatusError", err)
		}
		return se.Status
	}
	for _, c := range []struct {
		spec string
		bits int
		ok   bool
	}{
		{"chip:pukcc,w=4", 2272, true}, {"chip:pukcc,w=4", 2304, false},
		{"chip:pukcc,w=4,expram=other", 2464, true}, {"chip:pukcc,w=4,expram=other", 2496, false},
		{"chip:pukcc,w=2", 4032, true}, {"chip:pukcc,w=2", 4064, false},
		{"chip:pukcc", 4608, true}, {"chip:pukcc", 4640, false},
	} {
		e := enginetest.Open(t, c.spec)
		mod, err := e.NewModulus(randOdd(r, c.bits).Bytes())
		if err != nil {
			t.Fatalf("%s %d: %v", c.spec, c.bits, err)
		}
		// A short exponent keeps the big sizes fast; the limit is on the modulus.
		_, _, err = e.Exp(ctx, mod, []byte{2}, []byte{0x81, 0x23})
		if c.ok && err != nil {
			t.Errorf("%s, %d bits: %v", c.spec, c.bits, err)
		}
		if !c.ok {
			wantTooLarge(t, c.spec, err)
			if s := statusOf(err); s != StatusParamWrongLength || !s.Severe() {
				t.Errorf("%s: status %v", c.spec, s)
			}
		}
	}
	e := enginetest.Open(t, "chip:pukcc").(*PUKCC)
	_, err := e.NewModulus(randOdd(r, 95).Bytes())
	if !errors.Is(err, engine.ErrUnsupported) || statusOf(err) != StatusParamWrongLength {
		t.Errorf("95-bit modulus: %v", err)
	}
	// CRT: 6000 bits exceed W=1's 5824 with the exponent in Crypto RAM.
	p, q := randOdd(r, 3000), randOdd(r, 3000)
	_, _, err = e.ExpCRT(ctx, &engine.CRTKey{P: p.Bytes(), Q: q.Bytes(), DP: []byte{3}, DQ: []byte{3}, QInv: []byte{1}}, []byte{2})
	wantTooLarge(t, "6000-bit CRT", err)
	// EC errors.
	if _, _, _, err := e.ScalarBaseMult(ctx, "secp256k1", []byte{1}); !errors.Is(err, engine.ErrUnsupported) {
		t.Errorf("unknown curve: %v", err)
	}
	if _, _, _, err := e.ScalarMult(ctx, "P-256", []byte{1}, []byte{1}, []byte{2}); !errors.Is(err, ErrInvalidPoint) || statusOf(err) != StatusPointIsNotOnCurve {
		t.Errorf("point off the curve: %v", err)
	}
	if _, _, _, err := e.ScalarBaseMult(ctx, "P-256", curves["P-256"].n.Bytes()); statusOf(err) != StatusPointAtInfinity {
		t.Errorf("n·G: %v", err)
	}
	_, _, _, err = e.ScalarBaseMult(ctx, "P-256", make([]byte, 33))
	wantTooLarge(t, "33-byte scalar", err)
}

func TestCryptechLimits(t *testing.T) {
	r := mrand.New(mrand.NewPCG(12, 12))
	_, err := enginetest.Open(t, "chip:cryptech").NewModulus(randOdd(r, 8161).Bytes())
	wantTooLarge(t, "8161-bit modulus on the 2015 core", err)
	a7 := enginetest.Open(t, "chip:cryptech,core=modexpa7")
	_, err = a7.NewModulus(randOdd(r, 4097).Bytes())
	wantTooLarge(t, "4097-bit modulus on modexpa7", err)
	p := randOdd(r, 2049)
	_, _, err = enginetest.As[engine.CRTEngine](t, a7).ExpCRT(context.Background(), &engine.CRTKey{P: p.Bytes(), Q: p.Bytes(), DP: []byte{3}, DQ: []byte{3}, QInv: []byte{1}}, []byte{2})
	wantTooLarge(t, "2049-bit CRT prime", err)
	if _, ok := engine.As[engine.CRTEngine](enginetest.Open(t, "chip:cryptech")); ok {
		t.Error("the 2015 core has no CRT mode, but implements engine.CRTEngine")
	}
}

// TestCRT compares the native CRT services with math/big.
func TestCRT(t *testing.T) {
	for _, bits := range []int{1024, 2048} {
		k, err := testkeys.Load(bits)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range []string{"chip:pukcc", "chip:pukcc,w=1", "chip:cryptech,core=modexpa7", "chip:cryptech,core=modexpa7,cores=1"} {
			e := enginetest.As[engine.CRTEngine](t, enginetest.Open(t, spec))
			x := new(big.Int).Sub(k.N, big.NewInt(12345))
			got, cost, err := e.ExpCRT(context.Background(), &engine.CRTKey{P: k.P.Bytes(), Q: k.Q.Bytes(), DP: k.Dp.Bytes(), DQ: k.Dq.Bytes(), QInv: k.Qinv.Bytes()}, x.Bytes())
			if err != nil {
				t.Fatalf("%s: %v", spec, err)
			}
			if new(big.Int).SetBytes(got).Cmp(new(big.Int).Exp(x, k.D, k.N)) != 0 || len(got) != len(k.N.Bytes()) {
				t.Fatalf("%s %d: wrong CRT result", spec, bits)
			}
			if cost.Cycles == 0 {
				t.Fatalf("%s: no cost", spec)
			}
		}
	}
}

func TestCosts(t *testing.T) {
	r := mrand.New(mrand.NewPCG(13, 13))
	// orup: eq. 4.5 and the busy power.
	o := enginetest.Open(t, "chip:orup561,f=20e6,nw=8")
	m := randOdd(r, 300)
	c := checkExp(t, o, m, big.NewInt(5), randBits(r, 300), false)
	ni := orupAutoNi(300)
	if c.Cycles != 2*uint64(ni+8)*300 || c.Device != seconds(float64(c.Cycles), 20e6) {
		t.Errorf("orup cost %+v", c)
	}
	if w := c.Energy / c.Device.Seconds(); w < 1.999 || w > 2.001 { // 2.5 W × 20/25
		t.Errorf("orup power %.4f W, want 2.0", w)
	}
	pub := checkExp(t, o, m, big.NewInt(5), big.NewInt(65537), true)
	if pub.Cycles != 2*uint64(ni+8)*17 {
		t.Errorf("public exponent slots: %d cycles", pub.Cycles)
	}
	// cryptech 2015: padded, encrypt costs what decrypt costs; unpadded it is cheaper.
	cr := enginetest.Open(t, "chip:cryptech")
	m = randOdd(r, 512)
	enc := checkExp(t, cr, m, big.NewInt(7), big.NewInt(65537), true)
	dec := checkExp(t, cr, m, big.NewInt(7), randBits(r, 512), false)
	if enc != dec {
		t.Errorf("padded encrypt %+v != decrypt %+v", enc, dec)
	}
	fast := checkExp(t, enginetest.Open(t, "chip:cryptech,pad=false"), m, big.NewInt(7), big.NewInt(65537), true)
	if fast.Cycles != cryptech2015Cycles(17, 1) || fast.Cycles >= enc.Cycles {
		t.Errorf("unpadded encrypt %d cycles", fast.Cycles)
	}
	// pukcc: the cost is the counted operations times m(L).
	pk := enginetest.Open(t, "chip:pukcc,w=4")
	m = randOdd(r, 1024)
	got := checkExp(t, pk, m, big.NewInt(3), randBits(r, 1024), false)
	model := (1024 + 1024/5.0 + 8 + 2) * pukccMM(32)
	if d := (float64(got.Cycles) - model) / model; d > 0.02 || d < -0.02 {
		t.Errorf("pukcc 1024/W4 %d cycles, model %.0f", got.Cycles, model)
	}
}

func TestTimeScale(t *testing.T) {
	r := mrand.New(mrand.NewPCG(14, 14))
	e := enginetest.Open(t, "chip:orup561,time_scale=2")
	m := randOdd(r, 561)
	start := time.Now()
	c := checkExp(t, e, m, big.NewInt(2), randBits(r, 561), false)
	if el := time.Since(start); el < 2*c.Device {
		t.Errorf("elapsed %v, want at least 2 × %v", el, c.Device)
	}
	slow := enginetest.Open(t, "chip:orup561,time_scale=1e5") // ~9 minutes of demo
	mod, _ := slow.NewModulus(m.Bytes())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, _, err := slow.Exp(ctx, mod, []byte{2}, []byte{3}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled sleep: %v", err)
	}
}

func TestEC(t *testing.T) {
	ctx := context.Background()
	e := enginetest.As[engine.ECEngine](t, enginetest.Open(t, "chip:pukcc"))
	for _, c := range []struct {
		name string
		ec   ecdh.Curve
		ell  elliptic.Curve
	}{{"P-256", ecdh.P256(), elliptic.P256()}, {"P-384", ecdh.P384(), elliptic.P384()}, {"P-521", ecdh.P521(), elliptic.P521()}} {
		cv := curves[c.name]
		for range 3 {
			k, err := c.ec.GenerateKey(rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			x, y, cost, err := e.ScalarBaseMult(ctx, c.name, k.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if pub := k.PublicKey().Bytes(); string(pub[1:]) != string(append(x, y...)) {
				t.Fatalf("%s: k·G differs from crypto/ecdh", c.name)
			}
			if cost.Cycles == 0 {
				t.Fatal("no cost")
			}
			// ECDH: k2·(k·G) against crypto/ecdh.
			k2, _ := c.ec.GenerateKey(rand.Reader)
			sx, _, _, err := e.ScalarMult(ctx, c.name, k2.Bytes(), x, y)
			if err != nil {
				t.Fatal(err)
			}
			secret, err := k2.ECDH(k.PublicKey())
			if err != nil {
				t.Fatal(err)
			}
			if string(secret) != string(sx) {
				t.Fatalf("%s: ScalarMult differs from crypto/ecdh", c.name)
			}
		}
		// ECDSA both ways with crypto/ecdsa.
		p := e.(*PUKCC)
		priv, err := ecdsa.GenerateKey(c.ell, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := priv.Bytes()
		pub, _ := priv.PublicKey.Bytes()
		h := sha256.Sum256([]byte(c.name))
		nonce := new(big.Int).Mod(randBits(mrand.New(mrand.NewPCG(15, 15)), cv.n.BitLen()), cv.n)
		r, s, _, err := p.SignECDSA(ctx, c.name, raw, h[:], nonce.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if !ecdsa.Verify(&priv.PublicKey, h[:], new(big.Int).SetBytes(r), new(big.Int).SetBytes(s)) {
			t.Fatalf("%s: crypto/ecdsa rejects the simulator's signature", c.name)
		}
		sig, _ := ecdsa.SignASN1(rand.Reader, priv, h[:])
		var rs struct{ R, S *big.Int }
		if _, err := asn1.Unmarshal(sig, &rs); err != nil {
			t.Fatal(err)
		}
		qx, qy := pub[1:1+cv.size], pub[1+cv.size:]
		if _, err := p.VerifyECDSA(ctx, c.name, qx, qy, h[:], rs.R.Bytes(), rs.S.Bytes()); err != nil {
			t.Fatalf("%s: the simulator rejects a crypto/ecdsa signature: %v", c.name, err)
		}
		bad := new(big.Int).Add(rs.S, big.NewInt(1))
		_, err = p.VerifyECDSA(ctx, c.name, qx, qy, h[:], rs.R.Bytes(), bad.Bytes())
		var se *StatusError
		if !errors.As(err, &se) || se.Status != StatusWrongSignature {
			t.Fatalf("%s: a bad signature gave %v, want PUKCL_WRONG_SIGNATURE", c.name, err)
		}
	}
}
