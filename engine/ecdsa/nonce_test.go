package ecdsa

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"hash"
	"testing"
)

// TestDRBGHMAC checks the allocation-free HMAC of the nonce DRBG against
// crypto/hmac for each hash and a range of key and message lengths.
func TestDRBGHMAC(t *testing.T) {
	for h, newH := range map[drbgHash]func() hash.Hash{drbgSHA256: sha256.New, drbgSHA384: sha512.New384, drbgSHA512: sha512.New} {
		for _, klen := range []int{0, 1, h.size()} {
			for _, mlen := range []int{0, 1, 63, 64, 65, 127, 128, maxDRBGMsg} {
				key := bytes.Repeat([]byte{byte(klen + 1)}, klen)
				msg := bytes.Repeat([]byte{byte(mlen)}, mlen)
				m := hmac.New(newH, key)
				m.Write(msg)
				if got, want := h.hmac(nil, key, msg), m.Sum(nil); !bytes.Equal(got, want) {
					t.Errorf("hash %d key %d msg %d: %x, want %x", h, klen, mlen, got, want)
				}
			}
		}
	}
}

func TestSignAllocations(t *testing.T) {
	key, err := NewPrivateKey("P-256", []byte{42})
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte("allocations"))
	if _, err := key.Sign(t.Context(), nil, h[:], nil); err != nil { // builds the table
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := key.Sign(t.Context(), nil, h[:], nil); err != nil {
			t.Fatal(err)
		}
	})
	// The signature and the point from ScalarBaseMult, plus small change.
	if allocs > 6 {
		t.Errorf("Sign allocates %.0f times, want at most 6", allocs)
	}
}
