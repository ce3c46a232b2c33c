package ecdsa

import (
	"context"
	stdecdsa "crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"math/big"
	"testing"

	"github.com/modexp-token/modexp-token/engine/arith/ec"
)

// BenchmarkSign signs a SHA-256 digest with a prepared key, in software
// (eng nil), nonce generation and verification before release included.
func BenchmarkSign(b *testing.B) {
	for _, c := range ec.Curves() {
		b.Run(c.Name(), func(b *testing.B) {
			c.Precompute()
			d, _, _, err := GenerateKey(context.Background(), nil, c.Name(), nil)
			if err != nil {
				b.Fatal(err)
			}
			key, err := NewPrivateKey(c.Name(), d)
			if err != nil {
				b.Fatal(err)
			}
			h := sha256.Sum256([]byte("benchmark"))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := key.Sign(context.Background(), nil, h[:], nil); err != nil {
					b.Fatal(err)
				}
			}
		})
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
