//go:build linux

package ecdsa

import (
	"context"
	stdecdsa "crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine/arith/ec"
	"github.com/modexp-token/modexp-token/engine/internal/cputime"
)

// TestCPUTime reports per-thread CPU time of ScalarBaseMult, Sign (with a
// prepared key: nonce, k·G, s, and the verification before release) and
// Verify on every NIST curve, beside crypto/ecdsa measured alternately in
// the same run. Opt-in: MODEXP_CPUTIME=1 (go test -run CPUTime -v).
func TestCPUTime(t *testing.T) {
	cputime.OptIn(t)
	ctx := context.Background()
	std := map[string]elliptic.Curve{"P-256": elliptic.P256(), "P-384": elliptic.P384(), "P-521": elliptic.P521()}
	h := sha256.Sum256([]byte("cpu time"))
	for _, name := range []string{"P-256", "P-384", "P-521", "secp256k1"} {
		c, err := ec.CurveByName(name)
		if err != nil {
			t.Fatal(err)
		}
		c.Precompute()
		d, x, y, err := GenerateKey(ctx, nil, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		key, err := NewPrivateKey(name, d)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := key.Sign(ctx, nil, h[:], nil) // builds the key's table
		if err != nil {
			t.Fatal(err)
		}
		iters := 200
		if name == "P-521" {
			iters = 50
		}
		const rounds = 5
		best := func(cur *time.Duration, f func()) {
			*cur = min(*cur, cputime.MinThread(1, iters, f))
		}
		inf := time.Duration(1<<63 - 1)
		base, sign, verify := inf, inf, inf
		sbase, ssign, sverify := inf, inf, inf
		sk, hasStd := std[name]
		var skey *stdecdsa.PrivateKey
		var sig []byte
		if hasStd {
			if skey, err = stdecdsa.GenerateKey(sk, rand.Reader); err != nil {
				t.Fatal(err)
			}
			if sig, err = stdecdsa.SignASN1(rand.Reader, skey, h[:]); err != nil {
				t.Fatal(err)
			}
		}
		for range rounds {
			best(&base, func() {
				if _, _, err := c.ScalarBaseMult(d); err != nil {
					t.Fatal(err)
				}
			})
			best(&sign, func() {
				if _, err := key.Sign(ctx, nil, h[:], nil); err != nil {
					t.Fatal(err)
				}
			})
			best(&verify, func() {
				if err := Verify(name, x, y, h[:], rs); err != nil {
					t.Fatal(err)
				}
			})
			if !hasStd {
				continue
			}
			best(&sbase, func() { sk.ScalarBaseMult(d) }) //nolint:staticcheck // a reference figure
			best(&ssign, func() {
				if _, err := stdecdsa.SignASN1(rand.Reader, skey, h[:]); err != nil {
					t.Fatal(err)
				}
			})
			best(&sverify, func() {
				if !stdecdsa.VerifyASN1(&skey.PublicKey, h[:], sig) {
					t.Fatal("crypto/ecdsa verify failed")
				}
			})
		}
		us := func(d time.Duration) float64 { return float64(d) / 1e3 }
		if hasStd {
			t.Logf("%-9s ScalarBaseMult %7.1f µs (crypto/elliptic %7.1f) | Sign %7.1f µs (crypto/ecdsa %7.1f) | Verify %7.1f µs (crypto/ecdsa %7.1f)",
				name, us(base), us(sbase), us(sign), us(ssign), us(verify), us(sverify))
		} else {
			t.Logf("%-9s ScalarBaseMult %7.1f µs | Sign %7.1f µs | Verify %7.1f µs", name, us(base), us(sign), us(verify))
		}
	}
}
