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
	"unsafe"
)

// threadCPU is the calling thread's CPU time from
// CLOCK_THREAD_CPUTIME_ID (nanosecond resolution; getrusage's is a tick).
func threadCPU() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3 /* CLOCK_THREAD_CPUTIME_ID */, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// minCPU runs f batches times (iters calls each) and returns the smallest
// thread CPU time per call: on a shared machine the minimum is the batch
// least disturbed by neighbours (cache and TLB evictions, preemption).
func minCPU(batches, iters int, f func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := time.Duration(1<<63 - 1)
	for range batches {
		c0 := threadCPU()
		for range iters {
			f()
		}
		if d := (threadCPU() - c0) / time.Duration(iters); d < best {
			best = d
		}
	}
	return best
}

// TestKernelCPUTime reports thread CPU time per multiplication and
// squaring for each kernel (the minimum over batches; opt-in:
// MODEXP_CPUTIME=1); on a shared machine wall-clock benchmarks mostly
// measure waiting.
func TestKernelCPUTime(t *testing.T) {
	if os.Getenv("MODEXP_CPUTIME") != "1" {
		t.Skip("set MODEXP_CPUTIME=1")
	}
	r := rand.New(rand.NewPCG(1, 1))
	for _, bits := range []int{1024, 1536, 2048, 4096} {
		n := randOdd(r, bits)
		m := mustModulus(t, n)
		x := natOf(m, new(big.Int).Mod(randBig(r, bits), n))
		y := natOf(m, new(big.Int).Mod(randBig(r, bits), n))
		tt := make([]uint64, m.ScratchLen())
		iters := 4096 * 1024 / (bits * bits / 1024)
		type op struct {
			name string
			f    func()
		}
		ops := []op{
			{"generic mul", func() { montMulGeneric(x, x, y, m.n, m.n0inv, tt) }},
			{"generic sqr", func() { montSqrGeneric(x, x, m.n, m.n0inv, tt) }},
		}
		if haveASM {
			ops = append(ops,
				op{"adx mul", func() { montMulASM(x, x, y, m.n, m.n0inv, tt) }},
				op{"adx sqr", func() { montSqrASM(x, x, m.n, m.n0inv, tt) }})
		}
		line := ""
		for _, o := range ops {
			line += o.name + " " + minCPU(15, iters, o.f).String() + ", "
		}
		t.Logf("%4d bits: %s(thread CPU per op, min of 15 batches of %d)", bits, line, iters)
	}
}
