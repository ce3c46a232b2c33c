package rsa

import (
	"bytes"
	"context"
	"crypto"
	gorsa "crypto/rsa"
	"crypto/sha256"
	"fmt"
	"sync"
	"testing"

	"github.com/modexp-token/modexp-token/engine/backend/soft"
)

// TestPrivateAllocs holds a private operation on the software engine at
// what it must allocate: its result and the engine's two CRT halves
// (engine.Engine returns them); the blinding, the halves' reduction,
// Garner, the exponents and the check run on the key's pooled scratch.
func TestPrivateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	// The split CRT's goroutine allocates (its closure and what it
	// shares): held one after the other here.
	defer func(p int) { crtPolicy = p }(crtPolicy)
	crtPolicy = crtNever
	ctx := context.Background()
	for _, c := range []struct {
		bits   int
		opts   Options
		allocs float64
	}{
		{2048, Options{}, 3},
		{2048, Options{ExponentBlinding: true}, 3},
		{3072, Options{}, 3},
		{4096, Options{ExponentBlinding: true}, 3},
	} {
		t.Run(fmt.Sprintf("%d/expblind=%v", c.bits, c.opts.ExponentBlinding), func(t *testing.T) {
			gk := testKey(t, c.bits)
			k, err := NewKey(soft.New(), privOf(gk), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			em := make([]byte, k.Size())
			em[len(em)-1] = 7
			sign := func() {
				if _, _, err := k.Private(ctx, em); err != nil {
					t.Fatal(err)
				}
			}
			sign()
			// Every blindingRenewal operations the pair is drawn afresh
			// (allocating); the run spans several renewals.
			n := testing.AllocsPerRun(4*blindingRenewal, sign)
			if n > c.allocs {
				t.Fatalf("%v allocations per private operation, want at most %v", n, c.allocs)
			}
		})
	}
}

// TestPrivateConcurrentScratch: signers of one key at once, each on its
// own scratch from the key's pool, each get the signature of its own
// input (crypto/rsa's), and the scratch that goes back is cleared.
func TestPrivateConcurrentScratch(t *testing.T) {
	ctx := context.Background()
	gk := testKey(t, 2048)
	k, err := NewKey(soft.New(), privOf(gk), Options{ExponentBlinding: true})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 8 {
				d := sha256.Sum256([]byte{byte(g), byte(i)})
				want, err := gorsa.SignPKCS1v15(nil, gk, crypto.SHA256, d[:])
				if err != nil {
					t.Error(err)
					return
				}
				em, err := Public(gk.N, gk.E, want)
				if err != nil {
					t.Error(err)
					return
				}
				got, _, err := k.Private(ctx, em)
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("signer %d, op %d: %x, %v; want %x", g, i, got, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
	sc := k.getScratch()
	for _, w := range sc.words {
		if w != 0 {
			t.Fatal("a pooled scratch was not cleared")
		}
	}
	for _, b := range sc.bytes {
		if b != 0 {
			t.Fatal("a pooled scratch was not cleared")
		}
	}
}
