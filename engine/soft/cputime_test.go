//go:build linux

package soft_test

import (
	"context"
	"math/big"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine/soft"
)

// processCPU is the CPU time of the whole process (all threads).
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestExpCPUTime reports the CPU time (not wall time, which on a shared
// machine mostly measures waiting) of a secret full-length exponentiation
// on the engine and of math/big's Exp. Opt-in: MODEXP_CPUTIME=1.
func TestExpCPUTime(t *testing.T) {
	if os.Getenv("MODEXP_CPUTIME") != "1" {
		t.Skip("set MODEXP_CPUTIME=1")
	}
	e := soft.New()
	ctx := context.Background()
	for _, bits := range benchSizes {
		n, _, r := benchModulus(t, bits)
		m, err := e.NewModulus(n.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		base, exp := randBelow(r, n), randBelow(r, n)
		expB := exp.FillBytes(make([]byte, bits/8))
		iters := max(2, 4096*4096*4/(bits*bits))
		c0 := processCPU()
		for range iters {
			if _, _, err := e.Exp(ctx, m, base.Bytes(), expB, false); err != nil {
				t.Fatal(err)
			}
		}
		c1 := processCPU()
		z := new(big.Int)
		for range iters {
			z.Exp(base, exp, n)
		}
		c2 := processCPU()
		t.Logf("%4d bits: soft secret Exp %8.2f ms, math/big Exp %8.2f ms (CPU time per op, %d ops)",
			bits, ms((c1-c0)/time.Duration(iters)), ms((c2-c1)/time.Duration(iters)), iters)
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
