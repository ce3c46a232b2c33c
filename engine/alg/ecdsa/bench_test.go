package ecdsa

import (
	"context"
	stdecdsa "crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"math/big"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
)

// BenchmarkSign signs a SHA-256 digest with a prepared key, nonce
// generation and verification before release included: in software (eng
// nil) into a buffer of the caller's, and on the software engine (k·G by
// filippo.io/nistec on P-256) as the token does.
func BenchmarkSign(b *testing.B) {
	eng := soft.New()
	for _, c := range ec.Curves() {
		c.Precompute()
		key := newTestKey(b, c.Name())
		h := sha256.Sum256([]byte("benchmark"))
		buf := make([]byte, 0, 2*c.OrderByteLen())
		for _, e := range []struct {
			name string
			eng  engine.ECEngine
		}{{"", nil}, {"/soft", eng}} {
			b.Run(c.Name()+e.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := key.SignTo(context.Background(), e.eng, buf, h[:], nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	for _, c := range ec.Curves() {
		b.Run(c.Name(), func(b *testing.B) {
			c.Precompute()
			d, x, y, err := GenerateKey(context.Background(), nil, c.Name(), nil)
			if err != nil {
				b.Fatal(err)
			}
			h := sha256.Sum256([]byte("benchmark"))
			rs, err := Sign(context.Background(), nil, c.Name(), d, h[:], nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := Verify(c.Name(), x, y, h[:], rs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStdlib is crypto/ecdsa on the same machine, for comparison.
func BenchmarkStdlib(b *testing.B) {
	for name, sc := range nistCurves {
		key, err := stdecdsa.GenerateKey(sc, rand.Reader)
		if err != nil {
			b.Fatal(err)
		}
		h := sha256.Sum256([]byte("benchmark"))
		b.Run("Sign/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := stdecdsa.Sign(rand.Reader, key, h[:]); err != nil {
					b.Fatal(err)
				}
			}
		})
		r, s, _ := stdecdsa.Sign(rand.Reader, key, h[:])
		b.Run("Verify/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !stdecdsa.Verify(&key.PublicKey, h[:], r, s) {
					b.Fatal("verify failed")
				}
			}
		})
	}
	_ = big.NewInt
}

// TestSignAllocs: with the working memory reused and room for the
// signature, a software signature (eng nil) allocates nothing, on every
// curve.
func TestSignAllocs(t *testing.T) {
	if raceBuild {
		t.Skip("the race detector allocates")
	}
	for _, c := range ec.Curves() {
		t.Run(c.Name(), func(t *testing.T) {
			key := newTestKey(t, c.Name())
			h := sha256.Sum256([]byte("allocs"))
			buf := make([]byte, 0, 2*c.OrderByteLen())
			sign := func() {
				if _, err := key.SignTo(context.Background(), nil, buf, h[:], nil); err != nil {
					t.Fatal(err)
				}
			}
			sign() // the key's table, the first working memory
			if n := testing.AllocsPerRun(100, sign); n != 0 {
				t.Fatalf("%v allocations per signature, want 0", n)
			}
		})
	}
}

// newTestKey is a fresh prepared key on the curve.
func newTestKey(tb testing.TB, curve string) *PrivateKey {
	tb.Helper()
	d, _, _, err := GenerateKey(context.Background(), nil, curve, nil)
	if err != nil {
		tb.Fatal(err)
	}
	key, err := NewPrivateKey(curve, d)
	if err != nil {
		tb.Fatal(err)
	}
	return key
}
