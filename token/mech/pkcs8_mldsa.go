package mech

// ML-DSA private keys as PKCS#8 (the IETF LAMPS format of
// draft-ietf-lamps-dilithium-certificates): PrivateKeyInfo with the
// parameter set's id-ml-dsa-* OID (no parameters) and, in its privateKey
// OCTET STRING, one of
//
//	seed        [0] IMPLICIT OCTET STRING (SIZE (32))
//	expandedKey OCTET STRING
//	both        SEQUENCE { seed OCTET STRING (SIZE (32)), expandedKey OCTET STRING }
//
// Wrapping writes the seed when the key has one, else the expanded key.
// Unwrapping takes all three; the key is checked as on import (an
// expanded key that is not the seed's is CKR_TEMPLATE_INCONSISTENT there).

import (
	"crypto/x509/pkix"
	"encoding/asn1"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// marshalMLDSAPKCS8 encodes an ML-DSA private key object (ok false for
// other key types).
func marshalMLDSAPKCS8(k Key) (der []byte, ok bool, err error) {
	if k.KeyType() != ck.CKK_ML_DSA {
		return nil, false, nil
	}
	set, err := mldsaSetOf(k.Attrs())
	if err != nil {
		return nil, true, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "ML-DSA key: %v", err)
	}
	var inner []byte
	if seed, ok := k.Attrs()[ck.CKA_SEED]; ok {
		inner, err = asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, Bytes: seed})
	} else if expanded, ok := k.Attrs()[ck.CKA_VALUE]; ok {
		inner, err = asn1.Marshal(expanded)
	} else {
		return nil, true, ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "ML-DSA key values are sealed")
	}
	if err == nil {
		der, err = asn1.Marshal(PKCS8Info{Algo: pkix.AlgorithmIdentifier{Algorithm: set.OID}, PrivateKey: inner})
	}
	if err != nil {
		return nil, true, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "PKCS#8 %s: %v", set.name, err)
	}
	return der, true, nil
}

// parseMLDSAPKCS8 decodes a PKCS#8 ML-DSA private key into its attribute
// values (ok false when der is not one).
func parseMLDSAPKCS8(der []byte) (vals attr.Map, kt uint64, ok bool, err error) {
	var info PKCS8Info
	if rest, err := asn1.Unmarshal(der, &info); err != nil || len(rest) != 0 {
		return nil, 0, false, nil
	}
	var set *mldsaSet
	for _, s := range MLDSASets {
		if info.Algo.Algorithm.Equal(s.OID) {
			set = s
		}
	}
	if set == nil {
		return nil, 0, false, nil
	}
	bad := func(what string) (attr.Map, uint64, bool, error) {
		return nil, 0, true, ck.Errorf(ck.CKR_WRAPPED_KEY_INVALID, "PKCS#8 %s key: %s", set.name, what)
	}
	if info.Version != 0 || len(info.Algo.Parameters.FullBytes) != 0 {
		return bad("version or parameters")
	}
	vals = attr.Map{ck.CKA_PARAMETER_SET: ck.ULong(set.ckp)}
	if why := parseSeedChoice(info.PrivateKey, vals); why != "" {
		return bad(why)
	}
	if s, ok := vals[ck.CKA_SEED]; ok && len(s) != mldsaSeedSize {
		return bad("seed not of 32 bytes")
	}
	return vals, ck.CKK_ML_DSA, true, nil
}
