//go:build linux

package ecdsa

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"io"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine/arith/ec"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
	"github.com/modexp-token/modexp-token/engine/internal/cputime"
)

// TestSignBreakdownCPUTime splits a P-256 signature (prepared key, software
// k·G) into its pieces, in thread CPU time per call (minimum over batches,
// the pieces measured in turn): the randomness and the hedged RFC 6979
// nonce (HMAC-DRBG), k·G (the affine conversion included), the mod-n
// arithmetic (s and s⁻¹), the verification before release (with s⁻¹), and
// the whole Sign; then k·G and Sign on the software engine (filippo.io/nistec's
// k·G on P-256), the relation check of P-256 (checkRelation) and Sign on
// the software engine with the full verification (CheckVerify). Opt-in:
// MODEXP_CPUTIME=1 go test -run SignBreakdown -v ./engine/alg/ecdsa.
func TestSignBreakdownCPUTime(t *testing.T) {
	cputime.OptIn(t)
	ctx := context.Background()
	for _, name := range []string{"P-256", "P-384"} {
		c, err := ec.CurveByName(name)
		if err != nil {
			t.Fatal(err)
		}
		c.Precompute()
		d, _, _, err := GenerateKey(ctx, nil, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		key, err := NewPrivateKey(name, d)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256([]byte("breakdown"))
		rs, err := key.Sign(ctx, nil, h[:], nil) // builds the key's table
		if err != nil {
			t.Fatal(err)
		}
		olen := c.OrderByteLen()
		extra := make([]byte, olen)
		var kBuf [66]byte
		var drbg nonceDRBG
		drbg.init(c, key.d, h[:], extra)
		nonce := append([]byte(nil), drbg.next(kBuf[:0])...)
		rx, ry, err := c.ScalarBaseMult(nonce)
		if err != nil {
			t.Fatal(err)
		}
		sig := make([]byte, 2*olen)
		sinv := make([]byte, olen)
		if err := c.ECDSASignatureInverse(sig, sinv, nonce, key.d, h[:], rx); err != nil {
			t.Fatal(err)
		}
		if err := key.pub.ECDSAVerifyInverseVarTime(h[:], sig, sinv); err != nil {
			t.Fatal(err)
		}
		inf := time.Duration(1<<63 - 1)
		eng := soft.New()
		var times [11]time.Duration
		rel := newRelScratch()
		for i := range times {
			times[i] = inf
		}
		pieces := []func(){
			func() { _, _ = io.ReadFull(rand.Reader, extra) },
			func() { // the generator reused, as Sign's working memory is
				drbg.init(c, key.d, h[:], extra)
				drbg.next(kBuf[:0])
			},
			func() { _, _, _ = c.ScalarBaseMult(nonce) },
			func() {
				if err := c.ECDSASignatureInverse(sig, sinv, nonce, key.d, h[:], rx); err != nil {
					t.Fatal(err)
				}
			},
			func() {
				if err := key.pub.ECDSAVerifyInverseVarTime(h[:], sig, sinv); err != nil {
					t.Fatal(err)
				}
			},
			func() {
				if _, err := key.Sign(ctx, nil, h[:], nil); err != nil {
					t.Fatal(err)
				}
			},
			func() { // the verification of any signature (s⁻¹ computed)
				if err := key.pub.ECDSAVerifyVarTime(h[:], rs); err != nil {
					t.Fatal(err)
				}
			},
			func() { _, _, _, _ = eng.ScalarBaseMult(ctx, name, nonce) },
			func() {
				if _, err := key.Sign(ctx, eng, h[:], nil); err != nil {
					t.Fatal(err)
				}
			},
			func() {
				if key.dn != nil {
					if err := checkRelation(rel, nonce, key.d, key.dn, h[:], sig, rx, ry); err != nil {
						t.Fatal(err)
					}
				}
			},
			func() {
				if _, err := key.SignToCheck(ctx, eng, nil, h[:], nil, CheckVerify); err != nil {
					t.Fatal(err)
				}
			},
		}
		for range 5 {
			for i, f := range pieces {
				times[i] = min(times[i], cputime.MinThread(1, 300, f))
			}
		}
		us := func(d time.Duration) float64 { return float64(d) / 1e3 }
		sum := times[0] + times[1] + times[2] + times[3] + times[4]
		t.Logf("%s: rand %.1f µs, nonce (HMAC-DRBG) %.1f µs, k·G %.1f µs, mod-n (s, s⁻¹) %.1f µs, verify with s⁻¹ %.1f µs; sum %.1f µs, Sign %.1f µs (a verify inverting s: %.1f µs); on the soft engine: k·G %.1f µs, Sign %.1f µs; the relation check %.1f µs (0: not on this curve), Sign with the full verification %.1f µs",
			name, us(times[0]), us(times[1]), us(times[2]), us(times[3]), us(times[4]), us(sum), us(times[5]), us(times[6]), us(times[7]), us(times[8]), us(times[9]), us(times[10]))
	}
}
