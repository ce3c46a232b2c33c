//go:build modexp_testhooks

package main

import (
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// BenchmarkFindSign is the sequence of C calls libp11's engine makes per
// TLS handshake when nginx loads the key for every handshake (make
// bench-nginx, worker mode), from a C loop: a search for every private key
// (CKA_CLASS only, one handle per C_FindObjects), then C_SignInit and
// C_Sign (CKM_ECDSA, P-256); "find" is the search alone. Two token key
// pairs are on the token, as in the nginx benchmark.
//
//	go test -tags modexp_testhooks ./cgo -run '^$' -bench FindSign -cpuprofile /tmp/cpu.out
func BenchmarkFindSign(b *testing.B) {
	for _, sign := range []bool{false, true} {
		name := "find"
		if sign {
			name = "find+sign"
		}
		b.Run(name, func(b *testing.B) {
			h, key := findSignSetup(b)
			b.ResetTimer()
			if rv := tsFindSignLoop(h, key, ck.CKM_ECDSA, !sign, b.N); rv != 0 {
				b.Fatalf("loop: %v", ck.Error(rv))
			}
		})
	}
}

// TestFindSignLoop: the benchmark's loop works (the search returns the
// key, the signatures are made).
func TestFindSignLoop(t *testing.T) {
	h, key := findSignSetup(t)
	for _, noSign := range []bool{true, false} {
		if rv := tsFindSignLoop(h, key, ck.CKM_ECDSA, noSign, 20); rv != 0 {
			t.Fatalf("loop (noSign %v): %v", noSign, ck.Error(rv))
		}
	}
}

// findSignSetup makes a token with a user PIN, logs in and generates two
// token key pairs (P-256); it returns the session and the private key of
// the second.
func findSignSetup(tb testing.TB) (h, key uint64) {
	tb.Helper()
	h = openSession(tb, initToken(tb), true)
	if rv := tsLogin(h, ck.CKU_USER, []byte(confUserPIN), false, uint64(len(confUserPIN))); rv != 0 {
		tb.Fatalf("C_Login = %v", ck.Error(rv))
	}
	for i := range 2 {
		pub, priv := ecTemplates(true)
		pub[0].Value, priv[0].Value = tsBool(true), tsBool(true)
		id := []byte{byte(i + 1)}
		pub = append(pub, tsAttr{Type: ck.CKA_ID, Value: id})
		priv = append(priv, tsAttr{Type: ck.CKA_ID, Value: id})
		rv, _, k := tsGenerateKeyPair(h, tsMech{Type: ck.CKM_EC_KEY_PAIR_GEN}, pub, priv)
		if rv != 0 {
			tb.Fatalf("C_GenerateKeyPair = %v", ck.Error(rv))
		}
		key = k
	}
	return h, key
}
