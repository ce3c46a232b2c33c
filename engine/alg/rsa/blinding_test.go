package rsa

import (
	"math/big"
	"testing"

	"github.com/modexp-token/modexp-token/engine/arith/mont"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
)

// TestBlindingPairs: every pair newBlindingPairs draws at once (the
// inverses from one inversion of their product) is a blinding pair,
// rᵉ·(r⁻¹)ᵉ = 1 mod n, and the pairs differ.
func TestBlindingPairs(t *testing.T) {
	priv := privOf(testKey(t, 2048))
	k, err := NewKey(soft.New(), priv, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := k.newBlindingPairs(blindingAhead)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 2*blindingAhead {
		t.Fatalf("%d values, want %d", len(pairs), 2*blindingAhead)
	}
	n := priv.N
	tt := make([]uint64, k.n.ScratchLen())
	plain := func(x []uint64) *big.Int {
		z := make([]uint64, len(x))
		k.n.FromMont(z, x, tt)
		b := make([]byte, k.n.Size())
		mont.FillBytes(b, z)
		return new(big.Int).SetBytes(b)
	}
	seen := map[string]bool{}
	for i := 0; i < len(pairs); i += 2 {
		rE, rInv := plain(pairs[i]), plain(pairs[i+1])
		got := new(big.Int).Mul(rE, new(big.Int).Exp(rInv, big.NewInt(int64(priv.E)), n))
		if got.Mod(got, n).Cmp(big.NewInt(1)) != 0 {
			t.Fatalf("pair %d: rᵉ·(r⁻¹)ᵉ ≠ 1 mod n", i/2)
		}
		if seen[rE.String()] {
			t.Fatalf("pair %d repeats an earlier one", i/2)
		}
		seen[rE.String()] = true
	}
}
