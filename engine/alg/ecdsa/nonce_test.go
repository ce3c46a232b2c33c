package ecdsa

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"hash"
	"testing"

	"github.com/modexp-token/modexp-token/engine/arith/ec"
)

// hmac returns HMAC_key(msg) into out (reused) with a fresh state.
func (h drbgHash) hmac(out, key, msg []byte) []byte {
	var s hmacState
	s.setKey(h, key)
	return s.mac(out, msg)
}

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

// TestDRBGSequence checks the nonce DRBG's successive candidates (the
// retries after r = 0 or s = 0) against RFC 6979 §3.2 written plainly
// with crypto/hmac, on P-256 with SHA-256, with and without additional
// data.
func TestDRBGSequence(t *testing.T) {
	c, err := ec.CurveByName("P-256")
	if err != nil {
		t.Fatal(err)
	}
	d := bytes.Repeat([]byte{0x5a}, 32)
	h := sha256.Sum256([]byte("sequence"))
	mac := func(key []byte, parts ...[]byte) []byte {
		m := hmac.New(sha256.New, key)
		for _, p := range parts {
			m.Write(p)
		}
		return m.Sum(nil)
	}
	for _, extra := range [][]byte{nil, bytes.Repeat([]byte{7}, 32)} {
		// Reference: h1 = bits2octets(h); n > h here for this hash.
		h1 := bits2octets(c, nil, h[:])
		k, v := make([]byte, 32), bytes.Repeat([]byte{1}, 32)
		k = mac(k, v, []byte{0}, d, h1, extra)
		v = mac(k, v)
		k = mac(k, v, []byte{1}, d, h1, extra)
		v = mac(k, v)
		var want [][]byte
		for len(want) < 3 {
			v = mac(k, v)
			if c.IsValidScalar(v) {
				want = append(want, bytes.Clone(v))
			}
			k = mac(k, v, []byte{0})
			v = mac(k, v)
		}
		var g nonceDRBG
		g.init(c, d, h[:], extra)
		for i, w := range want {
			if got := g.next(nil); !bytes.Equal(got, w) {
				t.Fatalf("extra %x: nonce %d = %x, want %x", extra, i, got, w)
			}
		}
	}
}

func TestSignAllocations(t *testing.T) {
	if raceBuild {
		// sync.Pool drops a quarter of what it is given under the race
		// detector, and a new working memory (the relation check's
		// numbers among it) is several allocations.
		t.Skip("the race detector's sync.Pool drops the working memory")
	}
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
