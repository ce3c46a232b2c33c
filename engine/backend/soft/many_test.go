package soft

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/mont"
	"github.com/modexp-token/modexp-token/engine/arith/randop"
)

// TestExpMany: batches of 1 to 11 secret exponentiations (none, one full
// and a partial 8-lane pass) give math/big's results, alone and while
// other goroutines' ExpPair calls are in flight; mixed sizes and public
// exponents are declined with ErrUnsupported.
func TestExpMany(t *testing.T) {
	if !mont.Batching() {
		if _, _, err := New().ExpMany(context.Background(), nil); !errors.Is(err, engine.ErrUnsupported) {
			t.Fatalf("without a batching kernel: %v, want ErrUnsupported", err)
		}
		t.Skip("no batching kernel on this machine")
	}
	ctx := context.Background()
	e := New()
	r := rand.New(rand.NewPCG(5, 6))
	op := func(bits int) (engine.ExpOp, []byte) {
		n := randop.Odd(r, bits)
		m, err := e.NewModulus(n.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		x := new(big.Int).Mod(randop.Bits(r, bits), n)
		ex := randop.Bits(r, bits)
		return engine.ExpOp{M: m, Base: x.Bytes(), Exp: ex.Bytes()}, new(big.Int).Exp(x, ex, n).FillBytes(make([]byte, bits/8))
	}
	check := func(ops []engine.ExpOp, want [][]byte) {
		t.Helper()
		got, _, err := e.ExpMany(ctx, ops)
		if err != nil {
			t.Fatalf("%d operations: %v", len(ops), err)
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%d operations: result %d differs from math/big", len(ops), i)
			}
		}
	}
	for _, n := range []int{1, 2, 3, 8, 11} {
		var ops []engine.ExpOp
		var want [][]byte
		for range n {
			o, w := op(1024)
			ops, want = append(ops, o), append(want, w)
		}
		check(ops, want)
		// Again with other callers in flight: through the scheduler's queue.
		var wg sync.WaitGroup
		for range 3 {
			a, wa := op(1024)
			b, wb := op(1024)
			wg.Go(func() {
				ra, rb, _, err := e.ExpPair(ctx, a, b)
				if err != nil || !bytes.Equal(ra, wa) || !bytes.Equal(rb, wb) {
					t.Errorf("ExpPair beside ExpMany: %v", err)
				}
			})
		}
		check(ops, want)
		wg.Wait()
	}
	a, _ := op(1024)
	b, _ := op(2048)
	if _, _, err := e.ExpMany(ctx, []engine.ExpOp{a, b}); !errors.Is(err, engine.ErrUnsupported) {
		t.Errorf("mixed sizes: %v, want ErrUnsupported", err)
	}
	a.Public = true
	if _, _, err := e.ExpMany(ctx, []engine.ExpOp{a}); !errors.Is(err, engine.ErrUnsupported) {
		t.Errorf("public exponent: %v, want ErrUnsupported", err)
	}
}
