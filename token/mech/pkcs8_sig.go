package mech

// SLH-DSA and Ed448 private keys as PKCS#8.
//
//   - SLH-DSA (the IETF LAMPS format for SLH-DSA in X.509): the parameter
//     set's id-slh-dsa-* OID (no parameters); the privateKey OCTET STRING
//     holds the raw private key SK.seed ‖ SK.prf ‖ PK.seed ‖ PK.root (4n
//     bytes), with no further wrapping.
//   - Ed448 (RFC 8410): id-Ed448 (1.3.101.113, no parameters); the
//     privateKey OCTET STRING holds CurvePrivateKey, itself an OCTET STRING
//     of the 57-byte private key.
//
// The keys unwrapped are checked as on import (an SLH-DSA PK.root that is
// not its seeds' is refused there).

import (
	"bytes"
	"crypto/x509/pkix"
	"encoding/asn1"

	"github.com/cloudflare/circl/sign/ed448"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// OIDEd448 is id-Ed448.
var OIDEd448 = asn1.ObjectIdentifier{1, 3, 101, 113}

// marshalSigPKCS8 encodes an SLH-DSA or Ed448 private key object (ok false
// for other keys).
func marshalSigPKCS8(k Key) (der []byte, ok bool, err error) {
	var algo asn1.ObjectIdentifier
	var inner []byte
	switch k.KeyType() {
	case ck.CKK_SLH_DSA:
		set, err := slhdsaSetOf(k.Attrs())
		if err != nil {
			return nil, true, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "SLH-DSA key: %v", err)
		}
		v, ok := k.Attrs()[ck.CKA_VALUE]
		if !ok {
			return nil, true, ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "SLH-DSA key value is sealed")
		}
		algo, inner = set.OID, v
	case ck.CKK_EC_EDWARDS:
		if c, err := edCurveOf(k.Attrs()[ck.CKA_EC_PARAMS]); err != nil || c != Edwards448 {
			return nil, false, nil
		}
		v, ok := k.Attrs()[ck.CKA_VALUE]
		if !ok {
			return nil, true, ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "Ed448 key value is sealed")
		}
		if len(v) != ed448.SeedSize {
			return nil, true, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "Ed448 key of %d bytes", len(v))
		}
		if inner, err = asn1.Marshal(v); err != nil {
			return nil, true, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "PKCS#8 Ed448: %v", err)
		}
		algo = OIDEd448
	default:
		return nil, false, nil
	}
	der, err = asn1.Marshal(PKCS8Info{Algo: pkix.AlgorithmIdentifier{Algorithm: algo}, PrivateKey: inner})
	if err != nil {
		return nil, true, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "PKCS#8: %v", err)
	}
	return der, true, nil
}

// parseSigPKCS8 decodes a PKCS#8 SLH-DSA or Ed448 private key into its
// attribute values (ok false when der is neither). An Ed448 key's
// CKA_EC_PARAMS is the OID unless the template names the curve.
func parseSigPKCS8(der []byte) (vals attr.Map, kt uint64, ok bool, err error) {
	var info PKCS8Info
	if rest, err := asn1.Unmarshal(der, &info); err != nil || len(rest) != 0 {
		return nil, 0, false, nil
	}
	if info.Algo.Algorithm.Equal(OIDEd448) {
		if info.Version != 0 || len(info.Algo.Parameters.FullBytes) != 0 {
			return nil, 0, true, ck.Errorf(ck.CKR_WRAPPED_KEY_INVALID, "PKCS#8 Ed448 key: version or parameters")
		}
		var seed []byte
		if rest, err := asn1.Unmarshal(info.PrivateKey, &seed); err != nil || len(rest) != 0 || len(seed) != ed448.SeedSize {
			return nil, 0, true, ck.Errorf(ck.CKR_WRAPPED_KEY_INVALID, "PKCS#8 Ed448 key: not an OCTET STRING of %d bytes", ed448.SeedSize)
		}
		return attr.Map{ck.CKA_VALUE: bytes.Clone(seed)}, ck.CKK_EC_EDWARDS, true, nil
	}
	for _, set := range SLHDSASets {
		if !info.Algo.Algorithm.Equal(set.OID) {
			continue
		}
		if info.Version != 0 || len(info.Algo.Parameters.FullBytes) != 0 {
			return nil, 0, true, ck.Errorf(ck.CKR_WRAPPED_KEY_INVALID, "PKCS#8 %s key: version or parameters", set.Name)
		}
		if len(info.PrivateKey) != 4*set.N() {
			return nil, 0, true, ck.Errorf(ck.CKR_WRAPPED_KEY_INVALID, "PKCS#8 %s key: %d bytes, want %d", set.Name, len(info.PrivateKey), 4*set.N())
		}
		return attr.Map{ck.CKA_PARAMETER_SET: ck.ULong(set.ckp), ck.CKA_VALUE: bytes.Clone(info.PrivateKey)}, ck.CKK_SLH_DSA, true, nil
	}
	return nil, 0, false, nil
}
