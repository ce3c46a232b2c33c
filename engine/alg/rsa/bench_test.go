package rsa

import (
	"context"
	"crypto"
	gorsa "crypto/rsa"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/modexp-token/modexp-token/engine/backend/soft"
)

// benchInput returns the fixed test key of bits bits, a digest and the
// encoded message whose private operation is its PKCS#1 v1.5 signature.
func benchInput(b *testing.B, bits int) (*gorsa.PrivateKey, [32]byte, []byte) {
	gk := testKey(b, bits)
	digest := sha256.Sum256([]byte("bench"))
	sig, err := gorsa.SignPKCS1v15(nil, gk, crypto.SHA256, digest[:])
	if err != nil {
		b.Fatal(err)
	}
	em, err := Public(gk.N, gk.E, sig)
	if err != nil {
		b.Fatal(err)
	}
	return gk, digest, em
}

// BenchmarkPrivate is one private operation (blinding, CRT on the software
// engine, Garner, check) beside crypto/rsa's SignPKCS1v15 on the same key.
func BenchmarkPrivate(b *testing.B) {
	ctx := context.Background()
	for _, bits := range []int{2048, 3072, 4096} {
		gk, digest, em := benchInput(b, bits)
		for _, opt := range []struct {
			name string
			o    Options
		}{{"soft", Options{}}, {"soft-expblind", Options{ExponentBlinding: true}}} {
			b.Run(fmt.Sprintf("%d/%s", bits, opt.name), func(b *testing.B) {
				k, err := NewKey(soft.New(), privOf(gk), opt.o)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := k.Private(ctx, em); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(fmt.Sprintf("%d/cryptorsa-sign", bits), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := gorsa.SignPKCS1v15(nil, gk, crypto.SHA256, digest[:]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNewKey is a key's preparation: its checks and CRT values
// (crypto/rsa's constant-time Precompute) and the engine's moduli.
func BenchmarkNewKey(b *testing.B) {
	for _, bits := range []int{2048, 4096} {
		priv := privOf(testKey(b, bits))
		b.Run(fmt.Sprint(bits), func(b *testing.B) {
			eng := soft.New()
			for b.Loop() {
				if _, err := NewKey(eng, priv, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
