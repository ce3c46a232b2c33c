//go:build linux

package dh

import (
	"math/big"
	"testing"

	"github.com/modexp-token/modexp-token/engine/backend/soft"
	"github.com/modexp-token/modexp-token/engine/internal/cputime"
)

// TestCPUTime reports the thread CPU time of Derive on the software engine
// (peer check, the two blinded exponentiations and the check; and, for a
// short x, the four split ones) for the RFC 7919 groups, beside one
// math/big Exp of the unblinded x in the same run.
// Opt-in: MODEXP_CPUTIME=1 (go test -run CPUTime -v ./engine/alg/dh).
func TestCPUTime(t *testing.T) {
	cputime.OptIn(t)
	for _, g := range knownGroups() {
		k, _ := pair(t, soft.New(), &g, 0)
		x, peer, _, err := GenerateKey(ctx, soft.New(), &g, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		derive := cputime.MinProcess(3, 10, func() { k.Derive(ctx, peer) })
		xv, yv := new(big.Int).SetBytes(x), new(big.Int).SetBytes(peer)
		ref := cputime.MinThread(3, 10, func() { new(big.Int).Exp(yv, xv, g.P) })
		bits := 2 * map[int]int{2048: 112, 3072: 128, 4096: 152}[g.P.BitLen()] // ≈ twice the strength
		short, _ := shortKey(t, soft.New(), &g, bits, Options{})
		split := cputime.MinProcess(3, 10, func() { short.Derive(ctx, peer) })
		t.Logf("%s: Derive %v (process CPU; a %d-bit x split: %v), math/big y^x %v", g.Name, derive, bits, split, ref)
	}
}
