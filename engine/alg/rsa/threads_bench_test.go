//go:build linux

package rsa

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/modexp-token/modexp-token/engine/backend/soft"
	"github.com/modexp-token/modexp-token/engine/internal/cputime"
)

// BenchmarkPrivateThreads is RSA-2048 private operations from 1, 2 and 8
// goroutines at once on one key of the software engine (the batch
// scheduler gathers them on the IFMA kernel; MODEXP_BATCH=off compares
// without); ns/op is wall time per operation over all goroutines.
func BenchmarkPrivateThreads(b *testing.B) {
	ctx := context.Background()
	gk, _, em := benchInput(b, 2048)
	k, err := NewKey(soft.New(), privOf(gk), Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, threads := range []int{1, 2, 8} {
		b.Run(fmt.Sprintf("2048/%dthreads", threads), func(b *testing.B) {
			c0 := cputime.Process()
			if threads == 1 {
				for b.Loop() {
					if _, _, err := k.Private(ctx, em); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				b.SetParallelism((threads + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, _, err := k.Private(ctx, em); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
			b.ReportMetric(float64((cputime.Process()-c0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
