package token

import (
	"bytes"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestRSAVerifySmallKeys: C_VerifyInit takes RSA public keys from 512 bits
// (rsaVerifyMinBits); every verification mechanism then refuses a wrong
// signature with a clean CK_RV (a 512-bit modulus is too short for
// SHA-512's DigestInfo: CKR_KEY_SIZE_RANGE; PSS parameters that do not fit
// it: CKR_MECHANISM_PARAM_INVALID at Init); encryption still needs 1024
// bits.
func TestRSAVerifySmallKeys(t *testing.T) {
	m, _, sh := readyToken(t)
	n := unhex(t, "B3F2957851416FF72731FCE064A4F1A53C34964E12403830512F206D3FA33886D4A85FBF29795FDAC92EE221F48D3A0CC7F9581EDE0EA38D35C1E0E2650ACF21")
	pub, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_RSA),
		aBytes(ck.CKA_MODULUS, n), aBytes(ck.CKA_PUBLIC_EXPONENT, []byte{1, 0, 1}), aBool(ck.CKA_TOKEN, false)})
	must(t, err)
	for _, c := range []struct {
		mech             *Mechanism
		initRV, verifyRV ck.Error
	}{
		{&Mechanism{Type: ck.CKM_RSA_PKCS}, ck.CKR_OK, ck.CKR_SIGNATURE_INVALID},
		{&Mechanism{Type: ck.CKM_RSA_X_509}, ck.CKR_OK, ck.CKR_SIGNATURE_INVALID},
		{&Mechanism{Type: ck.CKM_SHA1_RSA_PKCS}, ck.CKR_OK, ck.CKR_SIGNATURE_INVALID},
		{&Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, ck.CKR_OK, ck.CKR_SIGNATURE_INVALID},
		{&Mechanism{Type: ck.CKM_SHA512_RSA_PKCS}, ck.CKR_OK, ck.CKR_KEY_SIZE_RANGE},
		{pssMech(ck.CKM_SHA1_RSA_PKCS_PSS, ck.CKM_SHA_1, ck.CKG_MGF1_SHA1, 20), ck.CKR_OK, ck.CKR_SIGNATURE_INVALID},
		{pssMech(ck.CKM_RSA_PKCS_PSS, ck.CKM_SHA256, ck.CKG_MGF1_SHA256, 0), ck.CKR_OK, ck.CKR_SIGNATURE_INVALID},
		{pssMech(ck.CKM_SHA512_RSA_PKCS_PSS, ck.CKM_SHA512, ck.CKG_MGF1_SHA512, 64), ck.CKR_MECHANISM_PARAM_INVALID, 0},
	} {
		name := ck.Name("CKM_", c.mech.Type)
		err := m.VerifyInit(sh, c.mech, pub)
		if c.initRV != ck.CKR_OK {
			if !isRV(err, c.initRV) {
				t.Errorf("%s: VerifyInit: %v, want %s", name, err, ck.Name("CKR_", uint64(c.initRV)))
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: VerifyInit: %v", name, err)
			continue
		}
		data := bytes.Repeat([]byte{1}, 20)
		if c.mech.Type == ck.CKM_RSA_PKCS_PSS {
			data = bytes.Repeat([]byte{1}, 32)
		}
		if err := m.Verify(sh, data, bytes.Repeat([]byte{0x5a}, len(n))); !isRV(err, c.verifyRV) {
			t.Errorf("%s: a wrong signature: %v, want %s", name, err, ck.Name("CKR_", uint64(c.verifyRV)))
		}
	}
	err = m.EncryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, pub)
	wantRV(t, err, ck.CKR_KEY_SIZE_RANGE)
}
