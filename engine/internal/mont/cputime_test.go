//go:build linux

package mont

import (
	"math/big"
	"math/rand/v2"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

func threadCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestKernelCPUTime reports thread CPU time per multiplication and
// squaring (opt-in: MODEXP_CPUTIME=1); on a shared machine wall-clock
// benchmarks mostly measure waiting.
func TestKernelCPUTime(t *testing.T) {
	if os.Getenv("MODEXP_CPUTIME") != "1" {
		t.Skip("set MODEXP_CPUTIME=1")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := rand.New(rand.NewPCG(1, 1))
	for _, bits := range []int{1024, 2048, 4096} {
		n := randOdd(r, bits)
		m := mustModulus(t, n)
		x := natOf(m, new(big.Int).Mod(randBig(r, bits), n))
		y := natOf(m, new(big.Int).Mod(randBig(r, bits), n))
		tt := make([]uint64, m.ScratchLen())
		const iters = 20000
		c0 := threadCPU()
		for range iters {
			montMulGeneric(x, x, y, m.n, m.n0inv, tt)
		}
		c1 := threadCPU()
		for range iters {
			montSqrGeneric(x, x, m.n, m.n0inv, tt)
		}
		c2 := threadCPU()
		for range iters {
			montMulGeneric(x, x, x, m.n, m.n0inv, tt)
		}
		c3 := threadCPU()
		t.Logf("%d bits: mul %v, sqr %v, mul-as-sqr %v (CPU time per op)", bits, (c1-c0)/iters, (c2-c1)/iters, (c3-c2)/iters)
	}
}
