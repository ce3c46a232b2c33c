//go:build linux

package dsa

import (
	"crypto/dsa" //nolint:staticcheck // deprecated; the reference in the same run
	"crypto/rand"
	"crypto/sha256"
	"math/big"
	"testing"

	"github.com/modexp-token/modexp-token/engine/backend/soft"
	"github.com/modexp-token/modexp-token/engine/internal/cputime"
)

// TestCPUTime reports the thread CPU time of Sign (on the software engine:
// nonce, blinded g^k, blinded s, the check before release) and of
// PublicKey.Verify at each FIPS size, beside crypto/dsa (math/big, not
// constant time, no check) in the same run. Opt-in: MODEXP_CPUTIME=1
// (go test -run CPUTime -v ./engine/alg/dsa).
func TestCPUTime(t *testing.T) {
	cputime.OptIn(t)
	h := sha256.Sum256([]byte("cpu time"))
	for _, sz := range Sizes {
		params := loadParams(t, sz)
		k, x := newKey(t, soft.New(), params)
		sig, _, err := k.Sign(ctx, h[:], nil)
		if err != nil {
			t.Fatal(err)
		}
		pub, err := NewPublicKey(params, k.Y())
		if err != nil {
			t.Fatal(err)
		}
		std := stdKey(k, x)
		ht := h[:min(32, sz.N/8)]
		r, s, _ := dsa.Sign(rand.Reader, std, ht)
		sign := cputime.MinThread(5, 40, func() { k.Sign(ctx, h[:], nil) })
		verify := cputime.MinThread(5, 40, func() { pub.Verify(h[:], sig) })
		stdSign := cputime.MinThread(5, 40, func() { dsa.Sign(rand.Reader, std, ht) })
		stdVerify := cputime.MinThread(5, 40, func() { dsa.Verify(&std.PublicKey, ht, new(big.Int).Set(r), new(big.Int).Set(s)) })
		t.Logf("DSA-%d/%d: Sign %v (crypto/dsa %v), Verify %v (crypto/dsa %v)", sz.L, sz.N, sign, stdSign, verify, stdVerify)
	}
}
