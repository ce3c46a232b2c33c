//go:build linux

package rsa

import (
	"context"
	"fmt"
	"runtime"
	"sync"
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

// BenchmarkPrivateThreadsLocked is BenchmarkPrivateThreads with each
// signer a goroutine locked to its own OS thread, as the C threads calling
// into the module are (a cgo callback's goroutine never leaves its thread,
// so every wake-up of a waiting signer moves a P to that thread): the
// token's 8-thread case without the C client. ops/s is over all threads;
// cpu-µs/op is the process's CPU time, and cpus its CPUs in use.
func BenchmarkPrivateThreadsLocked(b *testing.B) {
	ctx := context.Background()
	gk, _, em := benchInput(b, 2048)
	eng := soft.New()
	k, err := NewKey(eng, privOf(gk), Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, threads := range []int{1, 2, 8} {
		b.Run(fmt.Sprintf("2048/%dthreads", threads), func(b *testing.B) {
			b0, l0 := eng.BatchStats()
			c0 := cputime.Process()
			b.ResetTimer()
			var wg sync.WaitGroup
			for t := range threads {
				n := b.N / threads
				if t < b.N%threads {
					n++
				}
				wg.Go(func() {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					for range n {
						if _, _, err := k.Private(ctx, em); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			cpu := (cputime.Process() - c0).Seconds()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
			b.ReportMetric(cpu*1e6/float64(b.N), "cpu-µs/op")
			b.ReportMetric(cpu/b.Elapsed().Seconds(), "cpus")
			if b1, l1 := eng.BatchStats(); b1 > b0 {
				b.ReportMetric(float64(l1-l0)/float64(b1-b0), "lanes/batch")
			}
		})
	}
}
