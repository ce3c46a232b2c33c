package token

// Behaviours google/pkcs11test checks that the token once answered
// differently (test/cclient/p11conf.c probes them all through the C ABI,
// beside SoftHSMv2: test/p11conf_test.go).

import (
	"bytes"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// TestConformanceDigestFinalAfterDigest: once C_Digest has reported the
// length of its result the operation is single-part; C_DigestFinal is
// refused with CKR_OPERATION_ACTIVE and, failing, ends it (pkcs11test's
// DigestFinalIntersperse). A Final's own length query still leaves the
// Final to collect its result, and C_Digest its own.
func TestConformanceDigestFinalAfterDigest(t *testing.T) {
	m, _, sh := readyToken(t)
	sha := &Mechanism{Type: ck.CKM_SHA256}
	data := []byte("pkcs11test")

	must(t, m.DigestInit(sh, sha))
	_, need, err := m.Digest(sh, data, Out{Query: true})
	must(t, err)
	if need != 32 {
		t.Fatalf("C_Digest announces %d bytes", need)
	}
	_, _, err = m.DigestFinal(sh, Out{Cap: 64})
	wantRV(t, err, ck.CKR_OPERATION_ACTIVE)
	_, _, err = m.Digest(sh, data, Out{Cap: 64})
	wantRV(t, err, ck.CKR_OPERATION_NOT_INITIALIZED)

	must(t, m.DigestInit(sh, sha))
	_, _, err = m.Digest(sh, data, Out{Query: true})
	must(t, err)
	_, _, err = m.Digest(sh, data, Out{Cap: 31})
	wantRV(t, err, ck.CKR_BUFFER_TOO_SMALL)
	one, _, err := m.Digest(sh, data, Out{Cap: 32})
	must(t, err)

	must(t, m.DigestInit(sh, sha))
	must(t, m.DigestUpdate(sh, data))
	_, _, err = m.DigestFinal(sh, Out{Query: true})
	must(t, err)
	multi, _, err := m.DigestFinal(sh, Out{Cap: 32})
	must(t, err)
	if string(one) != string(multi) {
		t.Fatal("single- and multi-part digests differ")
	}

	// A Final with no Update (the digest of nothing) after its own query.
	must(t, m.DigestInit(sh, sha))
	_, _, err = m.DigestFinal(sh, Out{Query: true})
	must(t, err)
	_, _, err = m.DigestFinal(sh, Out{Cap: 32})
	must(t, err)
}

// TestInitKeyHandleBeforeParam: an invalid key handle is
// CKR_KEY_HANDLE_INVALID even with a bad mechanism parameter (pkcs11test's
// EncryptDecryptInitInvalid gives CKM_AES_CBC no IV).
func TestInitKeyHandleBeforeParam(t *testing.T) {
	m, _, sh := readyToken(t)
	noIV := &Mechanism{Type: ck.CKM_AES_CBC}
	wantRV(t, m.EncryptInit(sh, noIV, 0xdead), ck.CKR_KEY_HANDLE_INVALID)
	wantRV(t, m.DecryptInit(sh, noIV, 0xdead), ck.CKR_KEY_HANDLE_INVALID)
	k := mustSecret(t, m, sh, ck.CKK_AES, make([]byte, 16))
	wantRV(t, m.EncryptInit(sh, noIV, k), ck.CKR_MECHANISM_PARAM_INVALID)
}

// TestWrapWithBlockModes: CKM_AES_ECB, CKM_AES_CBC and the Triple DES
// modes wrap a secret key's value (pkcs11test's WrapUnwrap with its -w
// mechanism): the wrapped bytes are the value encrypted by the mechanism,
// unwrapping gives the value back; ECB and CBC take whole blocks, and no
// private key.
func TestWrapWithBlockModes(t *testing.T) {
	m, _, sh := readyTokenWith(t, standardPolicy)
	secret := func(kt uint64, v []byte, extra ...Attribute) uint64 {
		h, err := m.CreateObject(sh, append([]Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_KEY_TYPE, kt),
			aBytes(ck.CKA_VALUE, v), aBool(ck.CKA_PRIVATE, false)}, extra...))
		must(t, err)
		return h
	}
	use := []Attribute{aBool(ck.CKA_WRAP, true), aBool(ck.CKA_UNWRAP, true), aBool(ck.CKA_DECRYPT, true), aBool(ck.CKA_ENCRYPT, true)}
	aesKEK := secret(ck.CKK_AES, []byte("0123456789abcdef"), use...)
	desKEK := secret(ck.CKK_DES3, []byte("0123456789abcdefghijklmn"), use...)
	value := []byte("a 32-byte AES key to be wrapped!")
	key := secret(ck.CKK_AES, value, aBool(ck.CKA_EXTRACTABLE, true))
	for _, c := range []struct {
		name string
		mech *Mechanism
		kek  uint64
	}{
		{"AES-ECB", &Mechanism{Type: ck.CKM_AES_ECB}, aesKEK},
		{"AES-CBC", &Mechanism{Type: ck.CKM_AES_CBC, Param: make([]byte, 16)}, aesKEK},
		{"AES-CBC-PAD", &Mechanism{Type: ck.CKM_AES_CBC_PAD, Param: make([]byte, 16)}, aesKEK},
		{"DES3-ECB", &Mechanism{Type: ck.CKM_DES3_ECB}, desKEK},
		{"DES3-CBC", &Mechanism{Type: ck.CKM_DES3_CBC, Param: make([]byte, 8)}, desKEK},
		{"DES3-CBC-PAD", &Mechanism{Type: ck.CKM_DES3_CBC_PAD, Param: make([]byte, 8)}, desKEK},
	} {
		t.Run(c.name, func(t *testing.T) {
			wrapped, _, err := m.WrapKey(sh, c.mech, c.kek, key, Out{Cap: 64})
			must(t, err)
			enc, err := cryptOnce(m, sh, mech.OpEncrypt, c.mech, c.kek, value)
			must(t, err)
			if !bytes.Equal(wrapped, enc) {
				t.Fatalf("wrapped %x, the value encrypted %x", wrapped, enc)
			}
			h, err := m.UnwrapKey(sh, c.mech, c.kek, wrapped, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY),
				aULong(ck.CKA_KEY_TYPE, ck.CKK_AES), aBool(ck.CKA_PRIVATE, false), aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true)})
			must(t, err)
			if got := attrValue(t, m, sh, h, ck.CKA_VALUE); !bytes.Equal(got, value) {
				t.Fatalf("unwrapped %x", got)
			}
		})
	}
	// Whole blocks only, without padding; secret keys only.
	odd := secret(ck.CKK_GENERIC_SECRET, make([]byte, 20), aBool(ck.CKA_EXTRACTABLE, true))
	_, _, err := m.WrapKey(sh, &Mechanism{Type: ck.CKM_AES_ECB}, aesKEK, odd, Out{Cap: 64})
	wantRV(t, err, ck.CKR_KEY_SIZE_RANGE)
	_, _, err = m.WrapKey(sh, &Mechanism{Type: ck.CKM_AES_CBC_PAD, Param: make([]byte, 16)}, aesKEK, odd, Out{Cap: 64})
	must(t, err)
	_, err = m.UnwrapKey(sh, &Mechanism{Type: ck.CKM_AES_ECB}, aesKEK, make([]byte, 20),
		[]Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aBool(ck.CKA_PRIVATE, false)})
	wantRV(t, err, ck.CKR_WRAPPED_KEY_LEN_RANGE)
	_, sk := genKey(t, m, sh, 1024, false, aBool(ck.CKA_EXTRACTABLE, true))
	_, _, err = m.WrapKey(sh, &Mechanism{Type: ck.CKM_AES_ECB}, aesKEK, sk, Out{Cap: 4096})
	wantRV(t, err, ck.CKR_KEY_NOT_WRAPPABLE)
}
