package token

// Behaviours google/pkcs11test checks that the token once answered
// differently (test/cclient/p11conf.c probes them all through the C ABI,
// beside SoftHSMv2: test/p11conf_test.go).

import (
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
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
