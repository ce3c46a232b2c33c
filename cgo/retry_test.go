//go:build modexp_testhooks

package main

// The two-call convention through the C ABI (PKCS#11 3.0 §5.2): a call
// with a NULL output buffer answers CKR_OK and the length, one with too
// small a buffer CKR_BUFFER_TOO_SMALL and the length; neither ends the
// operation. The retry must answer for its own input: issue 26 found
// C_Encrypt(A, 1-byte buffer) then C_Encrypt(B, ...) answering CKR_OK with
// A's ciphertext, and a 15-byte AES-ECB encryption answering CKR_OK.

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/keywrap"
)

func ecbEncrypt(b cipher.Block, in []byte) []byte {
	out := make([]byte, len(in))
	for i := 0; i < len(in); i += aes.BlockSize {
		b.Encrypt(out[i:], in[i:i+aes.BlockSize])
	}
	return out
}

func cbcEncrypt(b cipher.Block, iv, in []byte) []byte {
	out := make([]byte, len(in))
	cipher.NewCBCEncrypter(b, iv).CryptBlocks(out, in)
	return out
}

func pad16(in []byte) []byte {
	n := aes.BlockSize - len(in)%aes.BlockSize
	return append(bytes.Clone(in), bytes.Repeat([]byte{byte(n)}, n)...)
}

// retryCase is one operation with the two-call convention.
type retryCase struct {
	name  string
	init  func() uint64                                                        // the Init call
	call  func(in []byte, query bool, capacity int) (rv, n uint64, out []byte) // the output call
	a, b  []byte                                                               // two inputs
	wantA []byte
	wantB []byte
}

func retryCases(t *testing.T, h uint64) []retryCase {
	kv := bytes.Repeat([]byte{0x5a}, 32)
	key := secretC(t, h, ck.CKK_AES, kv)
	blk, _ := aes.NewCipher(kv)
	iv := []byte("sixteen byte iv!")
	hkv := []byte("an HMAC key of some length")
	hkey := secretC(t, h, ck.CKK_GENERIC_SECRET, hkv)
	a, b := bytes.Repeat([]byte{'A'}, 16), bytes.Repeat([]byte{'B'}, 32)
	mac := func(m []byte) []byte { x := hmac.New(sha256.New, hkv); x.Write(m); return x.Sum(nil) }
	sum := func(m []byte) []byte { s := sha256.Sum256(m); return s[:] }
	call := func(c int) func([]byte, bool, int) (uint64, uint64, []byte) {
		return func(in []byte, q bool, n int) (uint64, uint64, []byte) { return tsCall(h, c, in, q, n) }
	}
	pa, pb := cbcEncrypt(blk, iv, pad16(a)), cbcEncrypt(blk, iv, pad16(b[:20]))
	return []retryCase{
		{"C_Encrypt AES-ECB", func() uint64 { return tsInit(h, tsKEncrypt, ck.CKM_AES_ECB, nil, nil, key) }, call(tsCEncrypt),
			a, b, ecbEncrypt(blk, a), ecbEncrypt(blk, b)},
		{"C_Encrypt AES-CBC", func() uint64 { return tsInit(h, tsKEncrypt, ck.CKM_AES_CBC, iv, nil, key) }, call(tsCEncrypt),
			a, b, cbcEncrypt(blk, iv, a), cbcEncrypt(blk, iv, b)},
		{"C_Encrypt AES-CBC-PAD", func() uint64 { return tsInit(h, tsKEncrypt, ck.CKM_AES_CBC_PAD, iv, nil, key) }, call(tsCEncrypt),
			a, b[:20], pa, pb},
		{"C_Decrypt AES-CBC-PAD", func() uint64 { return tsInit(h, tsKDecrypt, ck.CKM_AES_CBC_PAD, iv, nil, key) }, call(tsCDecrypt),
			pa, pb, a, b[:20]},
		{"C_Sign HMAC-SHA256", func() uint64 { return tsInit(h, tsKSign, ck.CKM_SHA256_HMAC, nil, nil, hkey) }, call(tsCSign),
			a, b, mac(a), mac(b)},
		{"C_Digest SHA-256", func() uint64 { return tsDigestInit(h, ck.CKM_SHA256) },
			func(in []byte, q bool, n int) (uint64, uint64, []byte) { return tsDigest(h, in, q, n) },
			a, b, sum(a), sum(b)},
	}
}

func TestTwoCallRetryC(t *testing.T) {
	h := readySession(t)
	for _, c := range retryCases(t, h) {
		for _, first := range []struct {
			name     string
			query    bool
			capacity int
			rv       ck.Error
		}{
			{"NULL buffer", true, 0, 0},
			{"short buffer", false, 1, ck.CKR_BUFFER_TOO_SMALL},
		} {
			t.Run(c.name+"/"+first.name, func(t *testing.T) {
				for _, retry := range []struct {
					name string
					in   []byte
					want []byte
				}{{"same input", c.a, c.wantA}, {"other input", c.b, c.wantB}} {
					if rv := c.init(); rv != 0 {
						t.Fatalf("Init = %v", ck.Error(rv))
					}
					rv, n, _ := c.call(c.a, first.query, first.capacity)
					if rv != uint64(first.rv) || n != uint64(len(c.wantA)) {
						t.Fatalf("first call = %v, %d; want %v, %d", ck.Error(rv), n, first.rv, len(c.wantA))
					}
					// Neither answer ends the operation: the retry finds it.
					rv, n, out := c.call(retry.in, false, 256)
					if rv != 0 || !bytes.Equal(out, retry.want) {
						t.Fatalf("retry with the %s = %v, %d bytes %x; want %x", retry.name, ck.Error(rv), n, out, retry.want)
					}
					// The answer that fits ends it.
					if rv, _, _ := c.call(retry.in, false, 256); rv != uint64(ck.CKR_OPERATION_NOT_INITIALIZED) {
						t.Fatalf("call after the result = %v, want CKR_OPERATION_NOT_INITIALIZED", ck.Error(rv))
					}
				}
			})
		}
	}
}

// TestBlockLengthC: AES-ECB and AES-CBC (no padding) take whole blocks
// only; the refusal comes before any result is kept, whatever the buffer,
// and ends the operation.
func TestBlockLengthC(t *testing.T) {
	h := readySession(t)
	kv := bytes.Repeat([]byte{7}, 16)
	key := secretC(t, h, ck.CKK_AES, kv)
	blk, _ := aes.NewCipher(kv)
	iv := make([]byte, 16)
	for _, c := range []struct {
		name string
		kind int
		mech uint64
		iv   []byte
		call int
		want ck.Error
	}{
		{"AES-ECB encrypt", tsKEncrypt, ck.CKM_AES_ECB, nil, tsCEncrypt, ck.CKR_DATA_LEN_RANGE},
		{"AES-CBC encrypt", tsKEncrypt, ck.CKM_AES_CBC, iv, tsCEncrypt, ck.CKR_DATA_LEN_RANGE},
		{"AES-ECB decrypt", tsKDecrypt, ck.CKM_AES_ECB, nil, tsCDecrypt, ck.CKR_ENCRYPTED_DATA_LEN_RANGE},
		{"AES-CBC decrypt", tsKDecrypt, ck.CKM_AES_CBC, iv, tsCDecrypt, ck.CKR_ENCRYPTED_DATA_LEN_RANGE},
		{"AES-CBC-PAD decrypt", tsKDecrypt, ck.CKM_AES_CBC_PAD, iv, tsCDecrypt, ck.CKR_ENCRYPTED_DATA_LEN_RANGE},
	} {
		for _, seq := range []struct {
			name       string
			first      []byte // a call with whole blocks first (nil: none)
			firstQuery bool   // with a NULL buffer (else a 1-byte one)
			query      bool
			cap        int
		}{
			{"direct", nil, false, false, 64},
			{"NULL buffer", nil, false, true, 0},
			{"short buffer", nil, false, false, 1},
			{"after a short-buffer call with 32 bytes", make([]byte, 32), false, false, 64},
			{"after a NULL-buffer call with 32 bytes", make([]byte, 32), true, false, 64},
		} {
			t.Run(c.name+"/"+seq.name, func(t *testing.T) {
				if rv := tsInit(h, c.kind, c.mech, c.iv, nil, key); rv != 0 {
					t.Fatalf("Init = %v", ck.Error(rv))
				}
				if seq.first != nil {
					query, first := seq.firstQuery, seq.first
					if c.mech == ck.CKM_AES_CBC_PAD { // a valid ciphertext of as many bytes
						first = cbcEncrypt(blk, iv, pad16(first[16:]))
					}
					rv, _, _ := tsCall(h, c.call, first, query, 1)
					if (query && rv != 0) || (!query && rv != uint64(ck.CKR_BUFFER_TOO_SMALL)) {
						t.Fatalf("first call = %v", ck.Error(rv))
					}
				}
				rv, _, out := tsCall(h, c.call, make([]byte, 15), seq.query, seq.cap)
				if rv != uint64(c.want) {
					t.Fatalf("15 bytes = %v, %x; want %v", ck.Error(rv), out, c.want)
				}
				if rv, _, _ := tsCall(h, c.call, make([]byte, 16), false, 64); rv != uint64(ck.CKR_OPERATION_NOT_INITIALIZED) {
					t.Fatalf("after the refusal = %v, want CKR_OPERATION_NOT_INITIALIZED", ck.Error(rv))
				}
			})
		}
	}
}

// TestSignFinalAfterSignLengthC: a C_Sign that reported its length made
// the operation single-part; C_SignFinal may not take its result.
func TestSignFinalAfterSignLengthC(t *testing.T) {
	h := readySession(t)
	key := secretC(t, h, ck.CKK_GENERIC_SECRET, []byte("k"))
	if rv := tsInit(h, tsKSign, ck.CKM_SHA256_HMAC, nil, nil, key); rv != 0 {
		t.Fatalf("C_SignInit = %v", ck.Error(rv))
	}
	if rv, n, _ := tsCall(h, tsCSign, []byte("data"), true, 0); rv != 0 || n != 32 {
		t.Fatalf("C_Sign(NULL) = %v, %d", ck.Error(rv), n)
	}
	if rv, _, out := tsCall(h, tsCSignFinal, nil, false, 64); rv != uint64(ck.CKR_OPERATION_ACTIVE) {
		t.Fatalf("C_SignFinal after C_Sign's length = %v, %x; want CKR_OPERATION_ACTIVE", ck.Error(rv), out)
	}
	// A C_SignFinal length query with no data, then C_Sign: computed for
	// C_Sign's data, not the empty message.
	if rv := tsInit(h, tsKSign, ck.CKM_SHA256_HMAC, nil, nil, key); rv != 0 {
		t.Fatalf("C_SignInit = %v", ck.Error(rv))
	}
	if rv, n, _ := tsCall(h, tsCSignFinal, nil, true, 0); rv != 0 || n != 32 {
		t.Fatalf("C_SignFinal(NULL) = %v, %d", ck.Error(rv), n)
	}
	x := hmac.New(sha256.New, []byte("k"))
	x.Write([]byte("data"))
	if rv, _, out := tsCall(h, tsCSign, []byte("data"), false, 64); rv != 0 || !bytes.Equal(out, x.Sum(nil)) {
		t.Fatalf("C_Sign after C_SignFinal(NULL) = %v, %x; want %x", ck.Error(rv), out, x.Sum(nil))
	}
}

// TestWrapKeyRetryC: C_WrapKey computes on every call, so a retry with
// another key to wrap gets that key's wrap.
func TestWrapKeyRetryC(t *testing.T) {
	h := readySession(t)
	kek := bytes.Repeat([]byte{3}, 32)
	blk, _ := aes.NewCipher(kek)
	wk := aesKey(t, h, kek, boolAttr(ck.CKA_WRAP, true), boolAttr(ck.CKA_ENCRYPT, false), boolAttr(ck.CKA_DECRYPT, false))
	va, vb := bytes.Repeat([]byte{1}, 16), bytes.Repeat([]byte{2}, 32)
	ka := aesKey(t, h, va, boolAttr(ck.CKA_EXTRACTABLE, true), boolAttr(ck.CKA_SENSITIVE, false))
	kb := aesKey(t, h, vb, boolAttr(ck.CKA_EXTRACTABLE, true), boolAttr(ck.CKA_SENSITIVE, false))
	want, err := keywrap.Wrap(blk, nil, vb)
	if err != nil {
		t.Fatal(err)
	}
	mech := tsMech{Type: ck.CKM_AES_KEY_WRAP}
	if rv, _, _ := tsWrapKey(h, mech, wk, ka, false, 1); rv != uint64(ck.CKR_BUFFER_TOO_SMALL) {
		t.Fatalf("C_WrapKey(A, 1 byte) = %v", ck.Error(rv))
	}
	if rv, _, out := tsWrapKey(h, mech, wk, kb, false, 64); rv != 0 || !bytes.Equal(out, want) {
		t.Fatalf("C_WrapKey(B) = %v, %x; want %x", ck.Error(rv), out, want)
	}
}
