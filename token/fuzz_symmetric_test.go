package token

import (
	"bytes"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// FuzzSymmetricParams feeds arbitrary parameters to the symmetric
// mechanisms' decoders (CK_GCM_PARAMS, CK_AES_CTR_PARAMS, IVs,
// CK_MAC_GENERAL_PARAMS) with AES, generic secret and DES keys: no panic, every refusal carries a CK_RV, and
// whatever is accepted round-trips (encrypt then decrypt; sign then
// verify), single-part and split at a fuzzed point.
func FuzzSymmetricParams(f *testing.F) {
	f.Add(uint64(ck.CKM_AES_GCM), make([]byte, 12), []byte("aad"), uint64(96), uint64(128), []byte{}, []byte("message"), uint8(3))
	f.Add(uint64(ck.CKM_AES_GCM), make([]byte, 1), []byte{}, uint64(0), uint64(32), []byte{}, []byte("m"), uint8(0))
	f.Add(uint64(ck.CKM_AES_GCM), make([]byte, 300), []byte{}, uint64(2400), uint64(104), []byte{}, []byte{}, uint8(0))
	f.Add(uint64(ck.CKM_AES_CTR), []byte{}, []byte{}, uint64(0), uint64(0), append(ck.ULong(16), bytes.Repeat([]byte{0xff}, 16)...), make([]byte, 40), uint8(17))
	f.Add(uint64(ck.CKM_AES_CTR), []byte{}, []byte{}, uint64(0), uint64(0), append(ck.ULong(128), make([]byte, 16)...), []byte("x"), uint8(1))
	f.Add(uint64(ck.CKM_AES_CBC_PAD), []byte{}, []byte{}, uint64(0), uint64(0), make([]byte, 16), []byte("seventeen bytes!!"), uint8(16))
	f.Add(uint64(ck.CKM_AES_CBC), []byte{}, []byte{}, uint64(0), uint64(0), make([]byte, 16), make([]byte, 32), uint8(5))
	f.Add(uint64(ck.CKM_AES_ECB), []byte{}, []byte{}, uint64(0), uint64(0), []byte{}, make([]byte, 16), uint8(0))
	f.Add(uint64(ck.CKM_AES_CMAC_GENERAL), []byte{}, []byte{}, uint64(0), uint64(0), ck.ULong(8), []byte("data"), uint8(2))
	f.Add(uint64(ck.CKM_SHA384_HMAC_GENERAL), []byte{}, []byte{}, uint64(0), uint64(0), ck.ULong(48), []byte("data"), uint8(2))
	f.Add(uint64(ck.CKM_SHA_1_HMAC), []byte{}, []byte{}, uint64(0), uint64(0), []byte{}, []byte("data"), uint8(0))
	f.Add(uint64(ck.CKM_DES3_CBC_PAD), []byte{}, []byte{}, uint64(0), uint64(0), make([]byte, 8), []byte("nine byte"), uint8(8))
	f.Add(uint64(ck.CKM_DES_CBC), []byte{}, []byte{}, uint64(0), uint64(0), make([]byte, 8), make([]byte, 24), uint8(3))
	f.Add(uint64(ck.CKM_DES3_ECB), []byte{}, []byte{}, uint64(0), uint64(0), []byte{}, make([]byte, 16), uint8(9))
	f.Add(uint64(ck.CKM_DES3_CMAC_GENERAL), []byte{}, []byte{}, uint64(0), uint64(0), ck.ULong(4), []byte("data"), uint8(2))
	m, sh := fuzzToken(f)
	aesKey, err := secretKeyOf(m, sh, ck.CKK_AES, bytes.Repeat([]byte{7}, 32))
	if err != nil {
		f.Fatal(err)
	}
	macKey, err := secretKeyOf(m, sh, ck.CKK_GENERIC_SECRET, []byte("fuzz key"))
	if err != nil {
		f.Fatal(err)
	}
	desKey, err := secretKeyOf(m, sh, ck.CKK_DES, bytes.Repeat([]byte{3}, 8))
	if err != nil {
		f.Fatal(err)
	}
	des3Key, err := secretKeyOf(m, sh, ck.CKK_DES3, []byte("twenty-four byte DES key"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, mc uint64, iv, aad []byte, ivBits, tagBits uint64, param, data []byte, split uint8) {
		if len(data) > 4096 || len(iv) > 8192 || len(aad) > 4096 {
			return
		}
		cms := []*Mechanism{{Type: mc, Param: param}}
		if mc == ck.CKM_AES_GCM {
			cms = append(cms, &Mechanism{Type: mc, GCM: &GCMParams{IV: iv, AAD: aad, IVBits: ivBits, TagBits: tagBits}})
		}
		parts := []int{int(split)}
		for _, cm := range cms {
			for _, key := range []uint64{aesKey, macKey, desKey, des3Key} {
				err := m.EncryptInit(sh, cm, key)
				checkRV(t, "EncryptInit", err)
				if err == nil {
					_ = m.SessionCancel(sh, ck.CKF_ENCRYPT)
					ct, err := cryptOnce(m, sh, mech.OpEncrypt, cm, key, data)
					checkRV(t, "Encrypt", err)
					ct2, err2 := cryptParts(m, sh, mech.OpEncrypt, cm, key, data, parts)
					checkRV(t, "EncryptUpdate", err2)
					if (err == nil) != (err2 == nil) || !bytes.Equal(ct, ct2) {
						t.Fatalf("single-part %x %v, multi-part %x %v", ct, err, ct2, err2)
					}
					if err == nil {
						pt, err := cryptOnce(m, sh, mech.OpDecrypt, cm, key, ct)
						pt2, err2 := cryptParts(m, sh, mech.OpDecrypt, cm, key, ct, parts)
						if err != nil || err2 != nil || !bytes.Equal(pt, data) || !bytes.Equal(pt2, data) {
							t.Fatalf("round trip: %x %v / %x %v", pt, err, pt2, err2)
						}
					}
				}
				err = m.SignInit(sh, cm, key)
				checkRV(t, "SignInit", err)
				if err == nil {
					_ = m.SessionCancel(sh, ck.CKF_SIGN)
					sig, err := signOnce(m, sh, cm, key, data)
					sig2, err2 := signParts(m, sh, cm, key, data, parts)
					if err != nil || err2 != nil || !bytes.Equal(sig, sig2) {
						t.Fatalf("MAC %x %v / %x %v", sig, err, sig2, err2)
					}
					if err := verifyParts(m, sh, cm, key, data, sig); err != nil {
						t.Fatalf("verify: %v", err)
					}
				}
			}
		}
	})
}

// FuzzDecodeAttributes: the attribute-array parser never panics, refuses
// with CKR_ATTRIBUTE_VALUE_INVALID, and what it accepts encodes back to
// the same bytes.
func FuzzDecodeAttributes(f *testing.F) {
	f.Add([]byte{})
	f.Add(EncodeAttributes([]Attribute{aBool(ck.CKA_SENSITIVE, true), aULong(ck.CKA_KEY_TYPE, ck.CKK_AES)}))
	f.Add(EncodeAttributes([]Attribute{{Type: ck.CKA_LABEL, Value: []byte{}}, {Type: ck.CKA_ID, Value: []byte("id")}}))
	f.Add(EncodeAttributes([]Attribute{{Type: ck.CKA_WRAP_TEMPLATE, Value: []byte{}}}))
	f.Add(append(ck.ULong(ck.CKA_LABEL), ck.ULong(1<<62)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		list, err := DecodeAttributes(b)
		if err != nil {
			if !isRV(err, ck.CKR_ATTRIBUTE_VALUE_INVALID) {
				t.Fatalf("refusal %v", err)
			}
			return
		}
		if !bytes.Equal(EncodeAttributes(list), b) {
			t.Fatalf("%x decodes to %+v, which encodes differently", b, list)
		}
	})
}
