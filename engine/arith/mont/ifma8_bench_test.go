package mont

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/modexp-token/modexp-token/engine/arith/randop"
)

// BenchmarkExpBatch times ExpBatch on full batches (8 lanes) against
// ExpPair on the same operations two by two (the single-buffer path), at
// the sizes of the RSA CRT halves, and, where there is a squaring kernel,
// against ExpBatch squaring with the multiplication (nosquare); ns/exp is
// per exponentiation.
func BenchmarkExpBatch(b *testing.B) {
	skipWithoutIFMA(b)
	r := rand.New(rand.NewPCG(89, 90))
	for _, bits := range []int{1024, 1536, 2048} {
		ms := make([]*Modulus, BatchLanes)
		zs, xs, es := make([][]uint64, BatchLanes), make([][]uint64, BatchLanes), make([][]byte, BatchLanes)
		for l := range ms {
			n := randop.Odd(r, bits)
			ms[l] = mustModulus(b, n)
			xs[l] = natOf(ms[l], randop.Bits(r, bits-1))
			zs[l] = make([]uint64, ms[l].Limbs())
			es[l] = randop.Bits(r, bits).Bytes()
		}
		b.Run(fmt.Sprintf("%d/batch8", bits), func(b *testing.B) {
			for b.Loop() {
				ExpBatch(ms, zs, xs, es)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*BatchLanes), "ns/exp")
		})
		if batchSquareFor(ms[0].l8) != nil {
			b.Run(fmt.Sprintf("%d/batch8-nosquare", bits), func(b *testing.B) {
				defer func(f func(int) batchAMSFunc) { batchSquareFor = f }(batchSquareFor)
				batchSquareFor = func(int) batchAMSFunc { return nil }
				for b.Loop() {
					ExpBatch(ms, zs, xs, es)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*BatchLanes), "ns/exp")
			})
		}
		b.Run(fmt.Sprintf("%d/pair", bits), func(b *testing.B) {
			for b.Loop() {
				for l := 0; l < BatchLanes; l += 2 {
					ExpPair(ms[l], ms[l+1], zs[l], xs[l], es[l], zs[l+1], xs[l+1], es[l+1])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*BatchLanes), "ns/exp")
		})
	}
}
