package token

import (
	"context"
	"crypto/rand"
	"math"
	"testing"

	"github.com/modexp-token/modexp-token/engine/backend/soft"
	"github.com/modexp-token/modexp-token/token/internal/dudect"
)

// TestP256BaseMultTiming is the dudect-style check of the software
// engine's P-256 k·G, the nonce point of every P-256 signature a soft slot
// makes (crypto/ecdh's assembly comb): the fixed scalar 1 against fresh
// random scalars, timed interleaved at random, Welch's t over the times
// cropped at the 90th percentile. MODEXP_DUDECT=1 (100,000 samples per
// class, or =N) runs it; it prints t and fails above 10. (engine/arith/ec's own
// routines have the operation-trace test: go test -tags ecoptrace
// -run ConstantTimeTrace ./engine/arith/ec.)
func TestP256BaseMultTiming(t *testing.T) {
	n := dudect.Samples(t, 100000)
	e := soft.New()
	ctx := context.Background()
	// 256 buffers per class, so that both classes read their scalars from
	// memory the same way.
	var ks [2][256][]byte
	for i := range 256 {
		one := make([]byte, 32)
		one[31] = 1
		k := make([]byte, 32)
		rand.Read(k)
		k[0] &= 0x7f // below n
		ks[0][i], ks[1][i] = one, k
	}
	var failed error
	tv, n0, n1 := dudect.Measure(n, func(c, i int) {
		if _, _, _, err := e.ScalarBaseMult(ctx, "P-256", ks[c][i%256]); err != nil {
			failed = err
		}
	})
	if failed != nil {
		t.Fatal(failed)
	}
	t.Logf("dudect: %d k·G with k = 1 and %d with random k, Welch t = %.2f (|t| < 4.5: no leak detected)", n0, n1, tv)
	if math.Abs(tv) > 10 {
		t.Fatalf("P-256 k·G time depends on k: t = %.2f", tv)
	}
}
