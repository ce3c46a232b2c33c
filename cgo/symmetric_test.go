//go:build modexp_testhooks

package main

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/symtest"
)

// secretC imports a session secret key through C_CreateObject.
func secretC(t *testing.T, h, kt uint64, v []byte) uint64 {
	t.Helper()
	rv, k := tsCreate(h, []token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_SECRET_KEY), ulongAttr(ck.CKA_KEY_TYPE, kt),
		{Type: ck.CKA_VALUE, Value: v}})
	if rv != 0 {
		t.Fatalf("C_CreateObject(secret key) = %v", ck.Error(rv))
	}
	return k
}

// onceC runs Init and the single-part call with the two-call convention.
func onceC(h uint64, kind int, mech uint64, raw []byte, gcm *tsGCM, key uint64, in []byte) (uint64, []byte) {
	if rv := tsInit(h, kind, mech, raw, gcm, key); rv != 0 {
		return rv, nil
	}
	call := tsCEncrypt
	if kind == tsKDecrypt {
		call = tsCDecrypt
	}
	rv, need, _ := tsCall(h, call, in, true, 0)
	if rv != 0 {
		return rv, nil
	}
	rv, _, out := tsCall(h, call, in, false, int(need))
	return rv, out
}

func TestGCMParamsC(t *testing.T) {
	h := readySession(t)
	k := bytes.Repeat([]byte{9}, 16)
	iv, aad, msg := []byte("twelve bytes"), []byte("header"), []byte("GCM through the C ABI")
	b, _ := aes.NewCipher(k)
	g, _ := cipher.NewGCM(b)
	want := g.Seal(nil, iv, msg, aad)
	for _, form := range []int{3, 2} {
		// A key object per form: one IV encrypts once under one key.
		key := secretC(t, h, ck.CKK_AES, k)
		p := &tsGCM{Form: form, IV: iv, AAD: aad, IVBits: 96, TagBits: 128}
		rv, ct := onceC(h, tsKEncrypt, ck.CKM_AES_GCM, nil, p, key, msg)
		if rv != 0 || !bytes.Equal(ct, want) {
			t.Fatalf("form %d: C_Encrypt = %v, %x; want %x", form, ck.Error(rv), ct, want)
		}
		// The IV again on this key is refused at C_EncryptInit.
		if rv := tsInit(h, tsKEncrypt, ck.CKM_AES_GCM, nil, p, key); rv != uint64(ck.CKR_MECHANISM_PARAM_INVALID) {
			t.Fatalf("form %d: repeated IV: C_EncryptInit = %v, want CKR_MECHANISM_PARAM_INVALID", form, ck.Error(rv))
		}
		rv, pt := onceC(h, tsKDecrypt, ck.CKM_AES_GCM, nil, p, key, ct)
		if rv != 0 || !bytes.Equal(pt, msg) {
			t.Fatalf("form %d: C_Decrypt = %v, %q", form, ck.Error(rv), pt)
		}
		ct[0] ^= 1
		if rv, _ := onceC(h, tsKDecrypt, ck.CKM_AES_GCM, nil, p, key, ct); rv != uint64(ck.CKR_ENCRYPTED_DATA_INVALID) {
			t.Fatalf("form %d: tampered C_Decrypt = %v", form, ck.Error(rv))
		}
	}
	for _, c := range []struct {
		name string
		p    *tsGCM
		rv   ck.Error
	}{
		{"3.0 form, ulIvBits 0", &tsGCM{Form: 3, IV: iv, TagBits: 128}, 0},
		{"3.0 form, ulIvBits garbage (ignored, as pkcs11js sends it)", &tsGCM{Form: 3, IV: iv, IVBits: 0x7f3a_1c20_0000, TagBits: 128}, 0},
		{"2.40 form, 96-bit tag", &tsGCM{Form: 2, IV: iv, TagBits: 96}, 0},
		{"length one short", &tsGCM{Form: 3, IV: iv, IVBits: 96, TagBits: 128, LenDelta: -1}, ck.CKR_MECHANISM_PARAM_INVALID},
		{"length one long", &tsGCM{Form: 3, IV: iv, IVBits: 96, TagBits: 128, LenDelta: 1}, ck.CKR_MECHANISM_PARAM_INVALID},
		{"NULL pIv with a length", &tsGCM{Form: 3, IV: iv, IVBits: 96, TagBits: 128, NullIV: true}, ck.CKR_MECHANISM_PARAM_INVALID},
		{"no IV", &tsGCM{Form: 3, TagBits: 128}, ck.CKR_MECHANISM_PARAM_INVALID},
		{"tag 0", &tsGCM{Form: 2, IV: iv, TagBits: 0}, ck.CKR_MECHANISM_PARAM_INVALID},
	} {
		key := secretC(t, h, ck.CKK_AES, k) // a fresh key: the cases share the IV
		rv := tsInit(h, tsKEncrypt, ck.CKM_AES_GCM, nil, c.p, key)
		if rv != uint64(c.rv) {
			t.Errorf("%s: C_EncryptInit = %v, want %v", c.name, ck.Error(rv), c.rv)
		}
		if rv == 0 {
			tsCall(h, tsCEncrypt, nil, false, 64) // end it
		}
	}
	if rv := tsInit(h, tsKEncrypt, ck.CKM_AES_GCM, nil, nil, secretC(t, h, ck.CKK_AES, k)); rv != uint64(ck.CKR_MECHANISM_PARAM_INVALID) {
		t.Errorf("GCM without parameter: %v", ck.Error(rv))
	}
}

func TestWycheproofAESGCMThroughC(t *testing.T) {
	h := readySession(t)
	vs, err := symtest.Load(symtest.GCM)
	if err != nil || len(vs) == 0 {
		t.Fatalf("vectors: %v", err)
	}
	var valid, rejected int
	for _, v := range vs {
		name := fmt.Sprintf("tcId %d (%s)", v.TcID, v.Comment)
		rv, key := tsCreate(h, []token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_SECRET_KEY), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_AES),
			{Type: ck.CKA_VALUE, Value: v.Key}})
		if rv != 0 {
			if v.Valid {
				t.Fatalf("%s: key refused: %v", name, ck.Error(rv))
			}
			rejected++
			continue
		}
		p := &tsGCM{Form: 3, IV: v.IV, AAD: v.AAD, IVBits: uint64(8 * len(v.IV)), TagBits: uint64(8 * len(v.Tag))}
		ct := append(append([]byte{}, v.CT...), v.Tag...)
		rv, pt := onceC(h, tsKDecrypt, ck.CKM_AES_GCM, nil, p, key, ct)
		switch {
		case v.Acceptable:
		case v.Valid:
			if rv != 0 || !bytes.Equal(pt, v.Msg) {
				t.Fatalf("%s: C_Decrypt = %v, %x", name, ck.Error(rv), pt)
			}
			rv, enc := onceC(h, tsKEncrypt, ck.CKM_AES_GCM, nil, p, key, v.Msg)
			if rv != 0 || !bytes.Equal(enc, ct) {
				t.Fatalf("%s: C_Encrypt = %v, %x", name, ck.Error(rv), enc)
			}
			valid++
		default:
			if rv != uint64(ck.CKR_ENCRYPTED_DATA_INVALID) && rv != uint64(ck.CKR_MECHANISM_PARAM_INVALID) {
				t.Fatalf("%s: invalid case: %v", name, ck.Error(rv))
			}
			rejected++
		}
		tsDestroyObject(h, key)
	}
	t.Logf("through C: %d valid, %d invalid rejected", valid, rejected)
}

// TestMultiPartC: the Update and Final calls' two-call convention through
// C (CBC_PAD decryption holds the last block back), CTR with its raw
// CK_AES_CTR_PARAMS, and an error that ends the operation.
func TestMultiPartC(t *testing.T) {
	h := readySession(t)
	k := bytes.Repeat([]byte{3}, 32)
	key := secretC(t, h, ck.CKK_AES, k)
	iv := bytes.Repeat([]byte{5}, 16)
	msg := bytes.Repeat([]byte("0123456789"), 5) // 50 bytes
	if rv := tsInit(h, tsKEncrypt, ck.CKM_AES_CBC_PAD, iv, nil, key); rv != 0 {
		t.Fatalf("C_EncryptInit = %v", ck.Error(rv))
	}
	var ct []byte
	for _, part := range [][]byte{msg[:7], msg[7:40], msg[40:]} {
		rv, need, _ := tsCall(h, tsCEncryptUpdate, part, true, 0)
		if rv != 0 {
			t.Fatalf("C_EncryptUpdate(NULL) = %v", ck.Error(rv))
		}
		if need > 0 {
			if rv, n, _ := tsCall(h, tsCEncryptUpdate, part, false, int(need)-1); rv != uint64(ck.CKR_BUFFER_TOO_SMALL) || n != need {
				t.Fatalf("short C_EncryptUpdate = %v, %d", ck.Error(rv), n)
			}
		}
		rv, n, out := tsCall(h, tsCEncryptUpdate, part, false, int(need))
		if rv != 0 || n != need {
			t.Fatalf("C_EncryptUpdate = %v, %d of %d", ck.Error(rv), n, need)
		}
		ct = append(ct, out...)
	}
	rv, need, _ := tsCall(h, tsCEncryptFinal, nil, true, 0)
	if rv != 0 || need != 16 {
		t.Fatalf("C_EncryptFinal(NULL) = %v, %d", ck.Error(rv), need)
	}
	rv, _, out := tsCall(h, tsCEncryptFinal, nil, false, 16)
	if rv != 0 {
		t.Fatalf("C_EncryptFinal = %v", ck.Error(rv))
	}
	ct = append(ct, out...)
	b, _ := aes.NewCipher(k)
	padded := append(append([]byte{}, msg...), bytes.Repeat([]byte{14}, 14)...)
	want := make([]byte, 64)
	cipher.NewCBCEncrypter(b, iv).CryptBlocks(want, padded)
	if !bytes.Equal(ct, want) {
		t.Fatalf("CBC_PAD through C: %x, want %x", ct, want)
	}
	// Decrypt: 16 in → 0 out (held back), 48 in → 48 out, Final 2 bytes.
	if rv := tsInit(h, tsKDecrypt, ck.CKM_AES_CBC_PAD, iv, nil, key); rv != 0 {
		t.Fatalf("C_DecryptInit = %v", ck.Error(rv))
	}
	var pt []byte
	for _, c := range []struct {
		in   []byte
		want uint64
	}{{ct[:16], 0}, {ct[16:], 48}} {
		rv, need, _ := tsCall(h, tsCDecryptUpdate, c.in, true, 0)
		if rv != 0 || need != c.want {
			t.Fatalf("C_DecryptUpdate(NULL) = %v, %d; want %d", ck.Error(rv), need, c.want)
		}
		rv, _, out := tsCall(h, tsCDecryptUpdate, c.in, false, int(need))
		if rv != 0 {
			t.Fatalf("C_DecryptUpdate = %v", ck.Error(rv))
		}
		pt = append(pt, out...)
	}
	rv, _, out = tsCall(h, tsCDecryptFinal, nil, false, 16)
	if rv != 0 || !bytes.Equal(append(pt, out...), msg) {
		t.Fatalf("C_DecryptFinal = %v, %q", ck.Error(rv), append(pt, out...))
	}
	// CTR with CK_AES_CTR_PARAMS as raw bytes; an 8-bit counter at 0xff
	// has one block: 17 bytes are CKR_DATA_LEN_RANGE, which ends the
	// operation.
	cb := append(bytes.Repeat([]byte{0}, 15), 0xff)
	ctr := append(ck.ULong(8), cb...)
	rv, got := onceC(h, tsKEncrypt, ck.CKM_AES_CTR, ctr, nil, key, msg[:16])
	want = make([]byte, 16)
	cipher.NewCTR(b, cb).XORKeyStream(want, msg[:16])
	if rv != 0 || !bytes.Equal(got, want) {
		t.Fatalf("CTR = %v, %x; want %x", ck.Error(rv), got, want)
	}
	if rv, _ := onceC(h, tsKEncrypt, ck.CKM_AES_CTR, ctr, nil, key, msg[:17]); rv != uint64(ck.CKR_DATA_LEN_RANGE) {
		t.Fatalf("CTR past its counter = %v", ck.Error(rv))
	}
	if rv, _, _ := tsCall(h, tsCEncrypt, msg, true, 0); rv != uint64(ck.CKR_OPERATION_NOT_INITIALIZED) {
		t.Fatalf("after the error: %v", ck.Error(rv))
	}
	if rv := tsInit(h, tsKEncrypt, ck.CKM_AES_CTR, ctr[:20], nil, key); rv != uint64(ck.CKR_MECHANISM_PARAM_INVALID) {
		t.Fatalf("short CK_AES_CTR_PARAMS = %v", ck.Error(rv))
	}
}

func TestHMACThroughC(t *testing.T) {
	h := readySession(t)
	k := []byte("an HMAC key through C")
	key := secretC(t, h, ck.CKK_GENERIC_SECRET, k)
	msg := []byte("message authenticated through the C ABI")
	mac := hmac.New(sha256.New, k)
	mac.Write(msg)
	want := mac.Sum(nil)
	if rv := tsInit(h, tsKSign, ck.CKM_SHA256_HMAC, nil, nil, key); rv != 0 {
		t.Fatalf("C_SignInit = %v", ck.Error(rv))
	}
	if rv, n, _ := tsCall(h, tsCSign, msg, true, 0); rv != 0 || n != 32 {
		t.Fatalf("C_Sign(NULL) = %v, %d", ck.Error(rv), n)
	}
	if rv, _, sig := tsCall(h, tsCSign, msg, false, 32); rv != 0 || !bytes.Equal(sig, want) {
		t.Fatalf("C_Sign = %v, %x", ck.Error(rv), sig)
	}
	// Multi-part, and the _GENERAL form with CK_MAC_GENERAL_PARAMS.
	tsInit(h, tsKSign, ck.CKM_SHA256_HMAC_GENERAL, ck.ULong(12), nil, key)
	tsUpdate(h, true, msg[:10])
	tsUpdate(h, true, msg[10:])
	if rv, _, sig := tsCall(h, tsCSignFinal, nil, false, 32); rv != 0 || !bytes.Equal(sig, want[:12]) {
		t.Fatalf("C_SignFinal(GENERAL 12) = %v, %x", ck.Error(rv), sig)
	}
	for _, c := range []struct {
		name  string
		mech  uint64
		param []byte
		sig   []byte
		final bool
		rv    ck.Error
	}{
		{"good", ck.CKM_SHA256_HMAC, nil, want, false, 0},
		{"good, multi-part", ck.CKM_SHA256_HMAC, nil, want, true, 0},
		{"short", ck.CKM_SHA256_HMAC, nil, want[:31], false, ck.CKR_SIGNATURE_LEN_RANGE},
		{"flipped", ck.CKM_SHA256_HMAC, nil, append([]byte{want[0] ^ 1}, want[1:]...), true, ck.CKR_SIGNATURE_INVALID},
		{"general 12", ck.CKM_SHA256_HMAC_GENERAL, ck.ULong(12), want[:12], false, 0},
		{"general 12, 13 given", ck.CKM_SHA256_HMAC_GENERAL, ck.ULong(12), want[:13], false, ck.CKR_SIGNATURE_LEN_RANGE},
	} {
		if rv := tsInit(h, tsKVerify, c.mech, c.param, nil, key); rv != 0 {
			t.Fatalf("%s: C_VerifyInit = %v", c.name, ck.Error(rv))
		}
		var rv uint64
		if c.final {
			tsUpdate(h, false, msg[:5])
			tsUpdate(h, false, msg[5:])
			rv = tsVerifyCall(h, nil, c.sig, true)
		} else {
			rv = tsVerifyCall(h, msg, c.sig, false)
		}
		if rv != uint64(c.rv) {
			t.Errorf("%s: verify = %v, want %v", c.name, ck.Error(rv), c.rv)
		}
	}
	if rv := tsInit(h, tsKSign, ck.CKM_SHA256_HMAC_GENERAL, ck.ULong(33), nil, key); rv != uint64(ck.CKR_MECHANISM_PARAM_INVALID) {
		t.Errorf("GENERAL 33 = %v", ck.Error(rv))
	}
	// C_DigestKey: the key's value is digested.
	rv, d := tsDigestKey(h, ck.CKM_SHA256, key)
	if sum := sha256.Sum256(k); rv != 0 || !bytes.Equal(d, sum[:]) {
		t.Fatalf("C_DigestKey = %v, %x", ck.Error(rv), d)
	}
}

// TestOpenSSLCrossCheck compares the C ABI's AES-CTR, AES-CBC-PAD, AES-ECB,
// AES-CMAC and HMAC-SHA256 with `openssl enc` and `openssl mac` on random
// keys and messages.
func TestOpenSSLCrossCheck(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatalf("openssl not installed (make deps): %v", err)
	}
	h := readySession(t)
	dir := t.TempDir()
	for i, n := range []int{0, 1, 16, 33, 100} {
		k := make([]byte, []int{16, 24, 32}[i%3])
		rand.Read(k)
		iv := make([]byte, 16)
		rand.Read(iv)
		msg := make([]byte, n)
		rand.Read(msg)
		in := filepath.Join(dir, "msg")
		if err := os.WriteFile(in, msg, 0o600); err != nil {
			t.Fatal(err)
		}
		key := secretC(t, h, ck.CKK_AES, k)
		bits := fmt.Sprint(8 * len(k))
		openssl := func(args ...string) []byte {
			out, err := exec.Command("openssl", args...).Output()
			if err != nil {
				t.Fatalf("openssl %v: %v", args, err)
			}
			return out
		}
		enc := func(cipher string, extra ...string) []byte {
			return openssl(append([]string{"enc", "-" + cipher, "-K", hex.EncodeToString(k), "-in", in}, extra...)...)
		}
		for _, c := range []struct {
			name string
			mech uint64
			raw  []byte
			want []byte
		}{
			{"CTR", ck.CKM_AES_CTR, append(ck.ULong(128), iv...), enc("aes-"+bits+"-ctr", "-iv", hex.EncodeToString(iv))},
			{"CBC_PAD", ck.CKM_AES_CBC_PAD, iv, enc("aes-"+bits+"-cbc", "-iv", hex.EncodeToString(iv))},
		} {
			rv, got := onceC(h, tsKEncrypt, c.mech, c.raw, nil, key, msg)
			if rv != 0 || !bytes.Equal(got, c.want) {
				t.Fatalf("%s, %d-byte key, %d bytes: %v, %x; openssl %x", c.name, len(k), n, ck.Error(rv), got, c.want)
			}
		}
		if n%16 == 0 {
			want := enc("aes-"+bits+"-ecb", "-nopad")
			if rv, got := onceC(h, tsKEncrypt, ck.CKM_AES_ECB, nil, nil, key, msg); rv != 0 || !bytes.Equal(got, want) {
				t.Fatalf("ECB: %v, %x; openssl %x", ck.Error(rv), got, want)
			}
		}
		mac := func(args ...string) []byte {
			b, err := hex.DecodeString(strings.TrimSpace(string(openssl(append([]string{"mac"}, args...)...))))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		want := mac("-cipher", "AES-"+bits+"-CBC", "-macopt", "hexkey:"+hex.EncodeToString(k), "-in", in, "CMAC")
		tsInit(h, tsKSign, ck.CKM_AES_CMAC, nil, nil, key)
		if rv, _, got := tsCall(h, tsCSign, msg, false, 16); rv != 0 || !bytes.Equal(got, want) {
			t.Fatalf("CMAC: %v, %x; openssl %x", ck.Error(rv), got, want)
		}
		hkey := secretC(t, h, ck.CKK_SHA256_HMAC, k)
		want = mac("-digest", "SHA256", "-macopt", "hexkey:"+hex.EncodeToString(k), "-in", in, "HMAC")
		tsInit(h, tsKSign, ck.CKM_SHA256_HMAC, nil, nil, hkey)
		if rv, _, got := tsCall(h, tsCSign, msg, false, 32); rv != 0 || !bytes.Equal(got, want) {
			t.Fatalf("HMAC: %v, %x; openssl %x", ck.Error(rv), got, want)
		}
	}
}
