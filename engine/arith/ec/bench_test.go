package ec

import (
	"testing"
)

func benchCurves(b *testing.B, f func(b *testing.B, c *Curve, k []byte)) {
	for _, c := range Curves() {
		b.Run(c.Name(), func(b *testing.B) {
			c.Precompute()
			k := randInt(testRand(b), c.Params().N).FillBytes(make([]byte, c.OrderByteLen()))
			b.ReportAllocs()
			f(b, c, k)
		})
	}
}

func BenchmarkScalarBaseMult(b *testing.B) {
	benchCurves(b, func(b *testing.B, c *Curve, k []byte) {
		for b.Loop() {
			if _, _, err := c.ScalarBaseMult(k); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkScalarMult(b *testing.B) {
	benchCurves(b, func(b *testing.B, c *Curve, k []byte) {
		x, y, _ := c.ScalarBaseMult(k)
		for b.Loop() {
			if _, _, err := c.ScalarMult(k, x, y); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkDoubleScalarMultVarTime(b *testing.B) {
	benchCurves(b, func(b *testing.B, c *Curve, k []byte) {
		x, y, _ := c.ScalarBaseMult(k)
		u2 := randInt(testRand(b), c.Params().N).Bytes()
		for b.Loop() {
			if _, _, err := c.DoubleScalarMultVarTime(k, u2, x, y); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkScalarInverse times the inversions mod n of the signing path:
// the constant-time one (Fermat, the nonce) and the variable-time one
// (binary Euclid, the s of the verification before release).
func BenchmarkScalarInverse(b *testing.B) {
	for _, c := range Curves() {
		ci, ok := c.impl.(*curve[[9]uint64])
		if !ok {
			continue
		}
		var x, xm, z [9]uint64
		bigToLimbs(&x, randInt(testRand(b), c.Params().N))
		ci.fn.toMont(&xm, &x)
		b.Run(c.Name()+"/Fermat", func(b *testing.B) {
			for b.Loop() {
				ci.fn.inv(&z, &xm)
			}
		})
		b.Run(c.Name()+"/VarTime", func(b *testing.B) {
			for b.Loop() {
				ci.fn.invVarTime(&z, &x)
			}
		})
	}
}
