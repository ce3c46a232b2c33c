//go:build linux

package dh

import (
	"math/big"
	"os"
	"testing"

	"github.com/modexp-token/modexp-token/engine/internal/cputime"
	"github.com/modexp-token/modexp-token/engine/soft"
)

// TestCPUTime reports the thread CPU time of Derive on the software engine
// (peer check, the two blinded exponentiations and the check) for the RFC
// 7919 groups, beside one math/big Exp of the unblinded x in the same run.
// Opt-in: MODEXP_CPUTIME=1 (go test -run CPUTime -v ./engine/dh).
func TestCPUTime(t *testing.T) {
	if os.Getenv("MODEXP_CPUTIME") != "1" {
		t.Skip("set MODEXP_CPUTIME=1")
	}
	for _, g := range KnownGroups() {
		k, _ := pair(t, soft.New(), &g, 0)
		x, peer, _, err := GenerateKey(ctx, soft.New(), &g, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		derive := cputime.MinProcess(3, 10, func() { k.Derive(ctx, peer) })
		xv, yv := new(big.Int).SetBytes(x), new(big.Int).SetBytes(peer)
		ref := cputime.MinThread(3, 10, func() { new(big.Int).Exp(yv, xv, g.P) })
		t.Logf("%s: Derive %v (process CPU), math/big y^x %v", g.Name, derive, ref)
	}
}
