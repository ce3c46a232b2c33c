package token

import (
	"bytes"
	"crypto"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rsa"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestMD5Digest: the RFC 1321 §A.5 test suite through CKM_MD5, in one
// part and in parts, and a cross-check with crypto/md5.
func TestMD5Digest(t *testing.T) {
	m, slot := newModule(t)
	sh := openRO(t, m, slot)
	for in, want := range map[string]string{
		"":                           "d41d8cd98f00b204e9800998ecf8427e",
		"a":                          "0cc175b9c0f1b6a831c399e269772661",
		"abc":                        "900150983cd24fb0d6963f7d28e17f72",
		"message digest":             "f96b697d7cb7938d525a2f31aaf161d0",
		"abcdefghijklmnopqrstuvwxyz": "c3fcd3d76192e4007dfb496cca67e13b",
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789": "d174ab98d277d9f5a5611c2c9f419d9f",
		strings.Repeat("1234567890", 8):                                  "57edf4a22be3c955ac49da2e2107b67a",
	} {
		got, parts := digestTwice(t, m, sh, ck.CKM_MD5, []byte(in), 7)
		ref := md5.Sum([]byte(in))
		if hex.EncodeToString(got) != want || !bytes.Equal(parts, got) || !bytes.Equal(got, ref[:]) {
			t.Fatalf("MD5(%q) = %x / %x (parts), want %s (crypto/md5 %x)", in, got, parts, want, ref)
		}
	}
}

// TestMD5HMAC: RFC 2202 §2's HMAC-MD5 test cases 1 to 7 through
// CKM_MD5_HMAC (with a CKK_GENERIC_SECRET and a CKK_MD5_HMAC key), case
// 5's 96-bit truncation through CKM_MD5_HMAC_GENERAL, a cross-check with
// crypto/hmac, and the refusal of another hash's HMAC key.
func TestMD5HMAC(t *testing.T) {
	m, _, sh := readyToken(t)
	rep := func(b byte, n int) []byte { return bytes.Repeat([]byte{b}, n) }
	cases := []struct {
		key, data []byte
		want      string
	}{
		{rep(0x0b, 16), []byte("Hi There"), "9294727a3638bb1c13f48ef8158bfc9d"},
		{[]byte("Jefe"), []byte("what do ya want for nothing?"), "750c783e6ab0b503eaa86e310a5db738"},
		{rep(0xaa, 16), rep(0xdd, 50), "56be34521d144c88dbb8c733f0e8b3f6"},
		{mustHex("0102030405060708090a0b0c0d0e0f10111213141516171819"), rep(0xcd, 50), "697eaf0aca3a3aea3a75164746ffaa79"},
		{rep(0x0c, 16), []byte("Test With Truncation"), "56461ef2342edc00f9bab995690efd4c"},
		{rep(0xaa, 80), []byte("Test Using Larger Than Block-Size Key - Hash Key First"), "6b1ab7fe4bd7bf8f0b62e6ce61b9d0cd"},
		{rep(0xaa, 80), []byte("Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data"), "6f630fad67cda0ee1fb1f562db3aa53e"},
	}
	mc := &Mechanism{Type: ck.CKM_MD5_HMAC}
	for i, c := range cases {
		want := mustHex(c.want)
		ref := hmac.New(md5.New, c.key)
		ref.Write(c.data)
		if !bytes.Equal(ref.Sum(nil), want) {
			t.Fatalf("case %d: crypto/hmac disagrees with RFC 2202", i+1)
		}
		for _, kt := range []uint64{ck.CKK_GENERIC_SECRET, ck.CKK_MD5_HMAC} {
			key := mustSecret(t, m, sh, kt, c.key)
			got, err := signOnce(m, sh, mc, key, c.data)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("case %d, %s: %x, %v; want %x", i+1, ck.Name("CKK_", kt), got, err, want)
			}
			got, err = signParts(m, sh, mc, key, c.data, []int{1, 9})
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("case %d in parts: %x, %v", i+1, got, err)
			}
			must(t, verifyParts(m, sh, mc, key, c.data, want))
			bad := bytes.Clone(want)
			bad[15] ^= 1
			wantRV(t, verifyOnce(m, sh, mc, key, c.data, bad), ck.CKR_SIGNATURE_INVALID)
			if i == 4 { // HMAC-MD5-96
				got, err = signOnce(m, sh, generalMech(ck.CKM_MD5_HMAC_GENERAL, 12), key, c.data)
				if err != nil || hex.EncodeToString(got) != "56461ef2342edc00f9bab995" {
					t.Fatalf("HMAC-MD5-96: %x, %v", got, err)
				}
				must(t, verifyOnce(m, sh, generalMech(ck.CKM_MD5_HMAC_GENERAL, 12), key, c.data, got))
				wantRV(t, m.SignInit(sh, generalMech(ck.CKM_MD5_HMAC_GENERAL, 17), key), ck.CKR_MECHANISM_PARAM_INVALID)
			}
		}
	}
	sha := mustSecret(t, m, sh, ck.CKK_SHA256_HMAC, []byte("Jefe"))
	wantRV(t, m.SignInit(sh, mc, sha), ck.CKR_KEY_TYPE_INCONSISTENT)
	md := mustSecret(t, m, sh, ck.CKK_MD5_HMAC, []byte("Jefe"))
	wantRV(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_SHA256_HMAC}, md), ck.CKR_KEY_TYPE_INCONSISTENT)
}

// TestMD5RSAPKCS: CKM_MD5_RSA_PKCS signatures (DigestInfo with id-md5,
// RFC 8017 §9.2), in one part and in parts, verified by crypto/rsa and by
// the token; a tampered one and one over other data are refused.
func TestMD5RSAPKCS(t *testing.T) {
	m, _, sh := readyToken(t)
	priv, pub := rsaKeyTemplates(fuzzRSAKey)
	rsaPriv, err := m.CreateObject(sh, priv)
	must(t, err)
	rsaPub, err := m.CreateObject(sh, pub)
	must(t, err)
	msg := []byte("an old signature, made with MD5")
	sig, err := signWith(t, m, sh, rsaPriv, ck.CKM_MD5_RSA_PKCS, msg)
	must(t, err)
	d := md5.Sum(msg)
	must(t, rsa.VerifyPKCS1v15(&fuzzRSAKey.PublicKey, crypto.MD5, d[:], sig))
	parts, err := signParts(m, sh, &Mechanism{Type: ck.CKM_MD5_RSA_PKCS}, rsaPriv, msg, []int{3, 10})
	must(t, err)
	if !bytes.Equal(parts, sig) {
		t.Fatalf("in parts: %x, in one: %x", parts, sig)
	}
	must(t, verifyWith(t, m, sh, rsaPub, ck.CKM_MD5_RSA_PKCS, msg, sig))
	// A signature Go made.
	goSig, err := rsa.SignPKCS1v15(nil, fuzzRSAKey, crypto.MD5, d[:])
	must(t, err)
	must(t, verifyParts(m, sh, &Mechanism{Type: ck.CKM_MD5_RSA_PKCS}, rsaPub, msg, goSig))
	bad := bytes.Clone(sig)
	bad[len(bad)/2] ^= 1
	wantRV(t, verifyWith(t, m, sh, rsaPub, ck.CKM_MD5_RSA_PKCS, msg, bad), ck.CKR_SIGNATURE_INVALID)
	wantRV(t, verifyWith(t, m, sh, rsaPub, ck.CKM_MD5_RSA_PKCS, append(msg, '!'), sig), ck.CKR_SIGNATURE_INVALID)
}
