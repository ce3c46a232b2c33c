package token

import (
	"bytes"
	"testing"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// FuzzPQKeyImport feeds key values to the ML-DSA, SLH-DSA and Ed448
// import paths (completePrivate / completePublic through C_CreateObject's
// checks): never a panic, every refusal a CKR code of the template kind,
// and an accepted ML-DSA expanded key gives a public key whose SPKI the
// object carries.
func FuzzPQKeyImport(f *testing.F) {
	f.Add(uint8(0), uint64(ck.CKP_ML_DSA_44), bytes.Repeat([]byte{1}, 32))
	f.Add(uint8(1), uint64(ck.CKP_ML_DSA_65), make([]byte, 4032))
	f.Add(uint8(2), uint64(ck.CKP_ML_DSA_87), make([]byte, 2592))
	f.Add(uint8(3), uint64(ck.CKP_SLH_DSA_SHA2_128F), make([]byte, 64))
	f.Add(uint8(4), uint64(ck.CKP_SLH_DSA_SHAKE_128F), make([]byte, 32))
	f.Add(uint8(5), uint64(0), make([]byte, 57))
	f.Add(uint8(1), uint64(99), []byte{})
	f.Fuzz(func(t *testing.T, kind uint8, set uint64, value []byte) {
		a := attr.Map{ck.CKA_PARAMETER_SET: ck.ULong(set)}
		var complete func(attr.Map) error
		switch kind % 6 {
		case 0:
			a[ck.CKA_SEED], complete = value, mech.CompleteMLDSAPrivate
		case 1:
			a[ck.CKA_VALUE], complete = value, mech.CompleteMLDSAPrivate
		case 2:
			a[ck.CKA_VALUE], complete = value, mech.CompleteMLDSAPublic
		case 3:
			if s, ok := mech.SLHDSASets[set]; ok && s.N() > 16 {
				return // the larger sets' key generation is too slow to fuzz
			}
			a[ck.CKA_VALUE], complete = value, mech.CompleteSLHDSAPrivate
		case 4:
			a[ck.CKA_VALUE], complete = value, mech.CompleteSLHDSAPublic
		case 5:
			a = attr.Map{ck.CKA_EC_PARAMS: mech.Ed448OID, ck.CKA_VALUE: value}
			complete = mech.CompleteEdPrivate
		}
		err := complete(a)
		if err != nil {
			for _, code := range []ck.Error{ck.CKR_ATTRIBUTE_VALUE_INVALID, ck.CKR_PARAMETER_SET_NOT_SUPPORTED,
				ck.CKR_TEMPLATE_INCOMPLETE, ck.CKR_TEMPLATE_INCONSISTENT} {
				if isRV(err, code) {
					return
				}
			}
			t.Fatalf("refusal without a template code: %v", err)
		}
		if len(a[ck.CKA_PUBLIC_KEY_INFO]) == 0 {
			t.Fatal("accepted key without CKA_PUBLIC_KEY_INFO")
		}
	})
}
