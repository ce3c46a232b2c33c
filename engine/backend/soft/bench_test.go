package soft_test

import (
	"context"
	"crypto"
	"crypto/rand"
	gorsa "crypto/rsa"
	"crypto/sha256"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"testing"

	"github.com/modexp-token/modexp-token/engine/arith/mont"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
)

var benchSizes = []int{1024, 1536, 2048, 3072, 4096}

func benchModulus(b testing.TB, bits int) (*big.Int, *mont.Modulus, *mrand.Rand) {
	r := mrand.New(mrand.NewPCG(uint64(bits), 1))
	nb := make([]byte, bits/8)
	for i := range nb {
		nb[i] = byte(r.Uint32())
	}
	nb[0] |= 0x80
	nb[len(nb)-1] |= 1
	m, err := mont.NewModulus(nb)
	if err != nil {
		b.Fatal(err)
	}
	return new(big.Int).SetBytes(nb), m, r
}

func randBelow(r *mrand.Rand, n *big.Int) *big.Int {
	b := make([]byte, len(n.Bytes())+8)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return new(big.Int).Mod(new(big.Int).SetBytes(b), n)
}

func limbs(m *mont.Modulus, x *big.Int) []uint64 {
	z := make([]uint64, m.Limbs())
	mont.SetBytes(z, x.Bytes())
	return z
}

// BenchmarkMontMul is one Montgomery multiplication (ns/op).
func BenchmarkMontMul(b *testing.B) {
	for _, bits := range benchSizes {
		b.Run(fmt.Sprint(bits), func(b *testing.B) {
			n, m, r := benchModulus(b, bits)
			x, y := limbs(m, randBelow(r, n)), limbs(m, randBelow(r, n))
			t := make([]uint64, m.ScratchLen())
			b.ReportAllocs()
			for b.Loop() {
				m.MontMul(x, x, y, t)
			}
		})
	}
}

// BenchmarkMontSqr is one Montgomery squaring (ns/op).
func BenchmarkMontSqr(b *testing.B) {
	for _, bits := range benchSizes {
		b.Run(fmt.Sprint(bits), func(b *testing.B) {
			n, m, r := benchModulus(b, bits)
			x := limbs(m, randBelow(r, n))
			t := make([]uint64, m.ScratchLen())
			b.ReportAllocs()
			for b.Loop() {
				m.MontSqr(x, x, t)
			}
		})
	}
}

// BenchmarkExp compares, per modulus size, the engine's secret (constant-
// time) and public (e = 65537) exponentiation with math/big's Exp on the
// same full-length exponent, and crypto/rsa's SignPKCS1v15 on a key of the
// same size (which does two half-size exponentiations with CRT).
// BenchmarkNewModulus is the preparation of a modulus (Montgomery
// constants), which modexpd caches per modulus.
func BenchmarkNewModulus(b *testing.B) {
	e := soft.New()
	for _, bits := range []int{1024, 2048} {
		n, _, _ := benchModulus(b, bits)
		nb := n.Bytes()
		b.Run(fmt.Sprint(bits), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.NewModulus(nb); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkExp(b *testing.B) {
	ctx := context.Background()
	e := soft.New()
	for _, bits := range benchSizes {
		n, _, r := benchModulus(b, bits)
		m, err := e.NewModulus(n.Bytes())
		if err != nil {
			b.Fatal(err)
		}
		base := randBelow(r, n)
		exp := randBelow(r, n)
		baseB, expB := base.Bytes(), exp.FillBytes(make([]byte, bits/8))
		b.Run(fmt.Sprintf("%d/soft-secret", bits), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := e.Exp(ctx, m, baseB, expB); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%d/soft-public-65537", bits), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := e.ExpVarTime(ctx, m, baseB, []byte{1, 0, 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%d/mathbig", bits), func(b *testing.B) {
			b.ReportAllocs()
			z := new(big.Int)
			for b.Loop() {
				z.Exp(base, exp, n)
			}
		})
		b.Run(fmt.Sprintf("%d/cryptorsa-sign", bits), func(b *testing.B) {
			k, err := gorsa.GenerateKey(rand.Reader, bits)
			if err != nil {
				b.Fatal(err)
			}
			d := sha256.Sum256([]byte("bench"))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := gorsa.SignPKCS1v15(nil, k, crypto.SHA256, d[:]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
