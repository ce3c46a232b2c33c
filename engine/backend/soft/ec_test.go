package soft

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"math/big"
	"slices"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/ecdsa"
	"github.com/modexp-token/modexp-token/engine/alg/ecdsa/ecdsatest"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
)

func TestECInfoCurves(t *testing.T) {
	got := New().Info().Curves
	for _, want := range []string{"P-256", "P-384", "P-521", "secp256k1"} {
		if !slices.Contains(got, want) {
			t.Errorf("Info().Curves = %v, missing %s", got, want)
		}
	}
}

// TestECAgainstECDH checks k·G and the Diffie–Hellman product k·Q against
// crypto/ecdh for the NIST curves.
func TestECAgainstECDH(t *testing.T) {
	e := New()
	ctx := context.Background()
	for name, curve := range map[string]ecdh.Curve{"P-256": ecdh.P256(), "P-384": ecdh.P384(), "P-521": ecdh.P521()} {
		c, err := ec.CurveByName(name)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			a, _ := curve.GenerateKey(nil)
			b, _ := curve.GenerateKey(nil)
			x, y, _, err := e.ScalarBaseMult(ctx, name, a.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(c.Marshal(x, y), a.PublicKey().Bytes()) {
				t.Fatalf("%s #%d: k·G differs from crypto/ecdh", name, i)
			}
			bx, by, err := c.Unmarshal(b.PublicKey().Bytes())
			if err != nil {
				t.Fatal(err)
			}
			sx, _, _, err := e.ScalarMult(ctx, name, a.Bytes(), bx, by)
			if err != nil {
				t.Fatal(err)
			}
			want, err := a.ECDH(b.PublicKey())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(sx, want) {
				t.Fatalf("%s #%d: shared x %x, crypto/ecdh %x", name, i, sx, want)
			}
		}
	}
}

// TestP256BaseMultAgainstEC: the engine's P-256 k·G (filippo.io/nistec) equals
// engine/arith/ec's comb for the edge scalars and random ones, 32-byte or
// shorter (which take engine/arith/ec's path), and refuses 0 and n as engine/ec
// does.
func TestP256BaseMultAgainstEC(t *testing.T) {
	e := New()
	ctx := context.Background()
	c, err := ec.CurveByName("P-256")
	if err != nil {
		t.Fatal(err)
	}
	n := c.Params().N
	fixed := func(v *big.Int) []byte { return v.FillBytes(make([]byte, 32)) }
	ks := [][]byte{{1}, {2}, fixed(big.NewInt(1)), fixed(big.NewInt(2)), fixed(new(big.Int).Sub(n, big.NewInt(1))),
		fixed(new(big.Int).Sub(n, big.NewInt(2))), fixed(new(big.Int).Rsh(n, 1)), bytes.Repeat([]byte{0x7f}, 32)}
	for range 16 {
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			t.Fatal(err)
		}
		k[0] &= 0x7f
		ks = append(ks, k)
	}
	for _, k := range ks {
		x, y, _, err := e.ScalarBaseMult(ctx, "P-256", k)
		if err != nil {
			t.Fatalf("k = %x: %v", k, err)
		}
		wx, wy, err := c.ScalarBaseMult(k)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, wx) || !bytes.Equal(y, wy) {
			t.Fatalf("k = %x: the engine's k·G differs from engine/arith/ec's", k)
		}
	}
	for _, k := range [][]byte{make([]byte, 32), fixed(n)} {
		if _, _, _, err := e.ScalarBaseMult(ctx, "P-256", k); !errors.Is(err, ec.ErrInvalidScalar) {
			t.Errorf("k = %x: err = %v, want ErrInvalidScalar", k, err)
		}
	}
}

func TestECErrors(t *testing.T) {
	e := New()
	ctx := context.Background()
	if _, _, _, err := e.ScalarBaseMult(ctx, "brainpoolP384r1", []byte{1}); !errors.Is(err, engine.ErrUnsupported) {
		t.Errorf("unknown curve: %v", err)
	}
	if _, _, _, err := e.ScalarMult(ctx, "brainpoolP256r1", []byte{1}, nil, nil); !errors.Is(err, engine.ErrUnsupported) {
		t.Errorf("unknown curve: %v", err)
	}
	c, _ := ec.CurveByName("secp256k1")
	x, y, _, err := e.ScalarBaseMult(ctx, "secp256k1", []byte{3})
	if err != nil {
		t.Fatal(err)
	}
	y[0] ^= 1
	if _, _, _, err := e.ScalarMult(ctx, "secp256k1", []byte{1}, x, y); !errors.Is(err, ec.ErrInvalidPoint) {
		t.Errorf("off-curve point: %v", err)
	}
	if _, _, _, err := e.ScalarBaseMult(ctx, "secp256k1", c.Order()); !errors.Is(err, ec.ErrInvalidScalar) {
		t.Errorf("k = n: %v", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, _, err := e.ScalarBaseMult(canceled, "P-256", []byte{1}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

// TestECDSAThroughSoft signs through the engine on every curve and checks
// that 3·G from ScalarBaseMult equals 3·G from ScalarMult.
func TestECDSAThroughSoft(t *testing.T) {
	e := New()
	ctx := context.Background()
	for _, name := range e.Info().Curves {
		d, x, y, err := ecdsa.GenerateKey(ctx, e, name, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		h := sha256.Sum256([]byte("through the soft engine"))
		k, err := ecdsa.NewPrivateKey(name, d)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rs, err := k.Sign(ctx, e, h[:], nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := ecdsatest.Verify(name, x, y, h[:], rs); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c, _ := ec.CurveByName(name)
		p := c.Params()
		gx, gy := p.Gx.FillBytes(make([]byte, c.ByteLen())), p.Gy.FillBytes(make([]byte, c.ByteLen()))
		ax, ay, _, err1 := e.ScalarBaseMult(ctx, name, []byte{3})
		bx, by, _, err2 := e.ScalarMult(ctx, name, []byte{3}, gx, gy)
		if err1 != nil || err2 != nil || !bytes.Equal(ax, bx) || !bytes.Equal(ay, by) {
			t.Fatalf("%s: 3·G differs between ScalarBaseMult and ScalarMult (%v, %v)", name, err1, err2)
		}
	}
}

// BenchmarkScalarBaseMult is k·G through the engine on P-256
// (filippo.io/nistec) and P-384 (engine/arith/ec), and engine/arith/ec's own P-256 comb for
// comparison.
func BenchmarkScalarBaseMult(b *testing.B) {
	e := New()
	ctx := context.Background()
	for _, name := range []string{"P-256", "P-384"} {
		c, err := ec.CurveByName(name)
		if err != nil {
			b.Fatal(err)
		}
		c.Precompute()
		k := make([]byte, c.OrderByteLen())
		k[len(k)-1] = 0x5a
		k[1] = 0xc3
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, _, err := e.ScalarBaseMult(ctx, name, k); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/engine-ec", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := c.ScalarBaseMult(k); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
