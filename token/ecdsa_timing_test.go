package token

import (
	"context"
	"crypto/rand"
	"math"
	"testing"

	"github.com/modexp-token/modexp-token/engine/alg/ecdsa"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
	"github.com/modexp-token/modexp-token/token/internal/dudect"
)

// TestP256BaseMultTiming is the dudect-style check of the software
// engine's P-256 k·G, the nonce point of every P-256 signature a soft slot
// makes (filippo.io/nistec's assembly comb): the fixed scalar 1 against fresh
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
	timingTest(t, n, "k·G with k = 1", "with random k", func(c, i int) error {
		_, _, _, err := e.ScalarBaseMult(ctx, "P-256", ks[c][i%256])
		return err
	})
}

// timingTest measures f on its two classes (dudect.Measure), logs Welch's
// t and fails above 10; an error of f fails the test.
func timingTest(t *testing.T, n int, class0, class1 string, f func(c, i int) error) {
	t.Helper()
	var failed error
	tv, n0, n1 := dudect.Measure(n, func(c, i int) {
		if err := f(c, i); err != nil {
			failed = err
		}
	})
	if failed != nil {
		t.Fatal(failed)
	}
	t.Logf("dudect: %d %s and %d %s, Welch t = %.2f (|t| < 4.5: no leak detected)", n0, class0, n1, class1, tv)
	if math.Abs(tv) > 10 {
		t.Fatalf("the time depends on the secret: t = %.2f", tv)
	}
}

// TestP256SignTiming is dudect on a whole P-256 signature of a prepared
// key on the software engine, the relation check before release included
// (engine/alg/ecdsa checkRelation: nistec's (n−k)·G, bigmod's s·k ≡ e + r·d
// and d + (n − d) ≡ 0): the key d = 1 against random keys, the nonces
// random in both classes. Opt-in like the others: MODEXP_DUDECT=1 go test
// -run P256SignTiming -v ./token.
func TestP256SignTiming(t *testing.T) {
	n := dudect.Samples(t, 50000)
	e := soft.New()
	ctx := context.Background()
	var keys [2][16]*ecdsa.PrivateKey
	for i := range 16 {
		one := make([]byte, 32)
		one[31] = 1
		d := make([]byte, 32)
		rand.Read(d)
		d[0] &= 0x7f // below n
		for c, v := range [][]byte{one, d} {
			k, err := ecdsa.NewPrivateKey("P-256", v)
			if err != nil {
				t.Fatal(err)
			}
			keys[c][i] = k
		}
	}
	h := make([]byte, 32)
	sig := make([]byte, 0, 64)
	timingTest(t, n, "signatures with d = 1", "with random d", func(c, i int) error {
		_, err := keys[c][i%16].SignTo(ctx, e, sig, h, nil)
		return err
	})
}
