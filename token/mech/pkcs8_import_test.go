package mech

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"testing"

	"github.com/cloudflare/circl/sign/ed448"
	"github.com/cloudflare/circl/sign/mldsa/mldsa44"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// TestParsePrivateKeyInfo: the key type, the template's values and the
// public key's SPKI of the forms 'keys import' reads, checked against the
// libraries' own public keys; malformed and inconsistent keys get their
// CKR_ codes.
func TestParsePrivateKeyInfo(t *testing.T) {
	seed := bytes.Repeat([]byte{7}, 32)
	p8 := func(oid asn1.ObjectIdentifier, inner []byte) []byte {
		der, err := asn1.Marshal(PKCS8Info{Algo: pkix.AlgorithmIdentifier{Algorithm: oid}, PrivateKey: inner})
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	mldsaSeed, _ := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, Bytes: seed})
	var s32 [32]byte
	copy(s32[:], seed)
	pk44, _ := mldsa44.NewKeyFromSeed(&s32)
	ed25519DER, err := x509.MarshalPKCS8PrivateKey(ed25519.NewKeyFromSeed(seed))
	if err != nil {
		t.Fatal(err)
	}
	ed448Seed := bytes.Repeat([]byte{9}, ed448.SeedSize)
	ed448Inner, _ := asn1.Marshal(ed448Seed)
	ed448Pub := ed448.NewKeyFromSeed(ed448Seed).Public().(ed448.PublicKey)
	mldsa44OID := MLDSASets[ck.CKP_ML_DSA_44].OID

	for _, tc := range []struct {
		name     string
		der      []byte
		kt       uint64
		has      []uint64 // attributes the template must carry
		spki     []byte
		wantCode ck.Error
	}{
		{name: "ML-DSA-44 seed", der: p8(mldsa44OID, mldsaSeed), kt: ck.CKK_ML_DSA,
			has: []uint64{ck.CKA_PARAMETER_SET, ck.CKA_SEED}, spki: mldsaSPKI(MLDSASets[ck.CKP_ML_DSA_44], pk44.Bytes())},
		{name: "Ed448", der: p8(OIDEd448, ed448Inner), kt: ck.CKK_EC_EDWARDS,
			has: []uint64{ck.CKA_EC_PARAMS, ck.CKA_VALUE}, spki: edSPKI(Edwards448, ed448Pub)},
		{name: "Ed25519", der: ed25519DER, kt: ck.CKK_EC_EDWARDS, has: []uint64{ck.CKA_EC_PARAMS, ck.CKA_VALUE},
			spki: edSPKI(edwards25519, ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey))},
		{name: "not DER", der: []byte{0x30, 0x03, 0x02}, wantCode: ck.CKR_WRAPPED_KEY_INVALID},
		{name: "ML-DSA-44 short seed", der: p8(mldsa44OID, append([]byte{0x80, 31}, seed[:31]...)), wantCode: ck.CKR_WRAPPED_KEY_INVALID},
		{name: "ML-DSA-44 expanded key of garbage", der: p8(mldsa44OID, append([]byte{0x04, 0x20}, seed...)), wantCode: ck.CKR_ATTRIBUTE_VALUE_INVALID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kt, priv, spki, err := ParsePrivateKeyInfo(tc.der)
			if tc.wantCode != 0 {
				if ck.RV(err) != uint64(tc.wantCode) {
					t.Fatalf("err = %v, want %s", err, ck.Name("CKR_", uint64(tc.wantCode)))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if kt != tc.kt {
				t.Errorf("key type %s, want %s", ck.Name("CKK_", kt), ck.Name("CKK_", tc.kt))
			}
			got := map[uint64][]byte{}
			for _, a := range priv {
				got[a.Type] = a.Value
			}
			if v, _ := ck.ParseULong(got[ck.CKA_KEY_TYPE]); v != tc.kt {
				t.Errorf("CKA_KEY_TYPE %x in the template", got[ck.CKA_KEY_TYPE])
			}
			for _, typ := range tc.has {
				if len(got[typ]) == 0 {
					t.Errorf("template lacks %s", attr.Describe(typ))
				}
			}
			if _, ok := got[ck.CKA_PUBLIC_KEY_INFO]; ok {
				t.Error("template carries the derived CKA_PUBLIC_KEY_INFO")
			}
			if !bytes.Equal(spki, tc.spki) {
				t.Errorf("SPKI %x, want %x", spki, tc.spki)
			}
		})
	}
}
