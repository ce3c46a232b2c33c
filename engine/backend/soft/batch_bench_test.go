//go:build linux

package soft

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/randop"
	"github.com/modexp-token/modexp-token/engine/internal/cputime"
)

// BenchmarkExpPairThreads runs ExpPair on two 1024-bit moduli (the CRT
// halves of RSA-2048) from 1, 2 and 8 goroutines; it reports pairs a
// second, the process CPU time a pair (so the figure does not depend on
// what else the machine runs) and the mean lanes a batch.
func BenchmarkExpPairThreads(b *testing.B) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(99, 100))
	e := New()
	var ops [2]engine.ExpOp
	for i := range ops {
		n := randop.Odd(r, 1024)
		m, err := e.NewModulus(n.Bytes())
		if err != nil {
			b.Fatal(err)
		}
		ops[i] = engine.ExpOp{M: m, Base: randop.Bits(r, 1000).Bytes(), Exp: randop.Bits(r, 1024).FillBytes(make([]byte, 128))}
	}
	for _, threads := range []int{1, 2, 8} {
		b.Run(fmt.Sprintf("%dthreads", threads), func(b *testing.B) {
			var b0, l0 int64
			if e.batch != nil {
				b0, l0 = e.batch.batches.Load(), e.batch.lanes.Load()
			}
			c0 := cputime.Process()
			runThreads(b, threads, func() error {
				_, _, _, err := e.ExpPair(ctx, ops[0], ops[1])
				return err
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
			b.ReportMetric(float64((cputime.Process()-c0).Microseconds())/float64(b.N), "cpu-µs/pair")
			if e.batch != nil {
				if n := e.batch.batches.Load() - b0; n > 0 {
					b.ReportMetric(float64(e.batch.lanes.Load()-l0)/float64(n), "lanes/batch")
				}
			}
		})
	}
}

// runThreads runs f b.N times from threads goroutines (a plain loop for
// one).
func runThreads(b *testing.B, threads int, f func() error) {
	if threads == 1 {
		for b.Loop() {
			if err := f(); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	b.SetParallelism((threads + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := f(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
