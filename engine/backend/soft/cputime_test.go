//go:build linux

package soft_test

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine/arith/mont"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
	"github.com/modexp-token/modexp-token/engine/internal/cputime"
)

// TestExpCPUTime reports the CPU time (not wall time, which on a shared
// machine mostly measures waiting) of a secret full-length exponentiation
// on the engine and of math/big's Exp, the minimum over batches, the two
// measured alternately. Opt-in: MODEXP_CPUTIME=1.
func TestExpCPUTime(t *testing.T) {
	cputime.OptIn(t)
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
		iters := max(1, 1024*1024*8/(bits*bits))
		ours, theirs := time.Duration(1<<63-1), time.Duration(1<<63-1)
		z := new(big.Int)
		for range 5 {
			ours = min(ours, cputime.MinProcess(1, iters, func() {
				if _, _, err := e.Exp(ctx, m, base.Bytes(), expB); err != nil {
					t.Fatal(err)
				}
			}))
			theirs = min(theirs, cputime.MinProcess(1, iters, func() { z.Exp(base, exp, n) }))
		}
		t.Logf("%4d bits: soft secret Exp %7.3f ms, math/big Exp %7.3f ms, ratio %.2f (CPU per op, min of 5 batches of %d; kernel %s)",
			bits, ms(ours), ms(theirs), float64(theirs)/float64(ours), iters, mont.Kernel())
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
