package mech

// PKCS#8 (OneAsymmetricKey, RFC 5958) for the keys crypto/x509 does not
// know: ML-KEM (the IETF LAMPS format, draft-ietf-lamps-kyber-certificates:
// the privateKey OCTET STRING holds the CHOICE seed [0] OCTET STRING (64
// bytes), expandedKey OCTET STRING, or both SEQUENCE { seed, expandedKey })
// and X25519/X448 (RFC 8410: an OCTET STRING holding the scalar).
//
// A seed-kept ML-KEM key is wrapped as its seed, one kept expanded as its
// expanded key; all three forms unwrap (both: they must agree, as on
// import). The algorithm identifier carries no parameters; a version other
// than 0 or 1 is CKR_WRAPPED_KEY_INVALID.

import (
	"bytes"
	"crypto/x509/pkix"
	"encoding/asn1"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// OneAsymmetricKey is RFC 5958's OneAsymmetricKey (attributes and the
// public key are read and ignored).
type OneAsymmetricKey struct {
	Version    int
	Algorithm  pkix.AlgorithmIdentifier
	PrivateKey []byte
	Attributes asn1.RawValue `asn1:"optional,tag:0"`
	PublicKey  asn1.RawValue `asn1:"optional,tag:1"`
}

// SeedExpanded is the "both" form of an ML-KEM or ML-DSA private key in
// PKCS#8: the seed and the expanded key.
type SeedExpanded struct {
	Seed, Expanded []byte
}

// parseSeedChoice reads the private key CHOICE of the ML-KEM and ML-DSA
// PKCS#8 forms (a [0] seed, an OCTET STRING expanded key, or a SEQUENCE
// of both) into vals' CKA_SEED and CKA_VALUE; a non-empty why says what
// is malformed.
func parseSeedChoice(der []byte, vals attr.Map) (why string) {
	var rv asn1.RawValue
	if rest, err := asn1.Unmarshal(der, &rv); err != nil || len(rest) != 0 {
		return "not one DER element"
	}
	switch {
	case rv.Class == asn1.ClassContextSpecific && rv.Tag == 0 && !rv.IsCompound:
		vals[ck.CKA_SEED] = bytes.Clone(rv.Bytes)
	case rv.Class == asn1.ClassUniversal && rv.Tag == asn1.TagOctetString && !rv.IsCompound:
		vals[ck.CKA_VALUE] = bytes.Clone(rv.Bytes)
	case rv.Class == asn1.ClassUniversal && rv.Tag == asn1.TagSequence:
		var both SeedExpanded
		if rest, err := asn1.Unmarshal(rv.FullBytes, &both); err != nil || len(rest) != 0 {
			return "malformed seed and expanded key"
		}
		vals[ck.CKA_SEED], vals[ck.CKA_VALUE] = both.Seed, both.Expanded
	default:
		return "neither seed, expanded key nor both"
	}
	return ""
}

// MarshalOneAsymmetricKey encodes priv as a PKCS#8 OneAsymmetricKey of
// algorithm oid.
func MarshalOneAsymmetricKey(oid asn1.ObjectIdentifier, priv []byte) ([]byte, error) {
	der, err := asn1.Marshal(struct {
		Version    int
		Algorithm  pkix.AlgorithmIdentifier
		PrivateKey []byte
	}{0, pkix.AlgorithmIdentifier{Algorithm: oid}, priv})
	if err != nil {
		return nil, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "PKCS#8: %v", err)
	}
	return der, nil
}

// marshalPQPKCS8 encodes an ML-KEM, X25519 or X448 private key (ok false:
// another key type).
func marshalPQPKCS8(k Key) (der []byte, ok bool, err error) {
	switch k.KeyType() {
	case ck.CKK_ML_KEM:
		p, err := mlkemParamsOf(k.Attrs())
		if err != nil {
			return nil, true, err
		}
		var inner []byte
		if seed, ok := k.Attrs()[ck.CKA_SEED]; ok {
			inner, err = asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, Bytes: seed})
		} else if dk, ok := k.Attrs()[ck.CKA_VALUE]; ok {
			inner, err = asn1.Marshal(dk)
		} else {
			return nil, true, ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "ML-KEM key values are sealed")
		}
		if err != nil {
			return nil, true, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "PKCS#8: %v", err)
		}
		der, err = MarshalOneAsymmetricKey(p.OID, inner)
		clear(inner)
		return der, true, err
	case ck.CKK_EC_MONTGOMERY:
		c, err := XDHCurveOf(k.Attrs()[ck.CKA_EC_PARAMS])
		if err != nil {
			return nil, true, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "Montgomery key: %v", err)
		}
		v, ok := k.Attrs()[ck.CKA_VALUE]
		if !ok {
			return nil, true, ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "%s key value is sealed", c.Name)
		}
		inner, err := asn1.Marshal(v)
		if err != nil {
			return nil, true, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "PKCS#8: %v", err)
		}
		der, err = MarshalOneAsymmetricKey(c.SPKIOID, inner)
		clear(inner)
		return der, true, err
	}
	return nil, false, nil
}

// parsePQPKCS8 decodes an ML-KEM, X25519 or X448 PKCS#8 key (ok false:
// another algorithm, or not a OneAsymmetricKey at all).
func parsePQPKCS8(der []byte) (vals attr.Map, kt uint64, ok bool, err error) {
	var key OneAsymmetricKey
	if rest, err := asn1.Unmarshal(der, &key); err != nil || len(rest) != 0 {
		return nil, 0, false, nil
	}
	bad := func(why string) (attr.Map, uint64, bool, error) {
		return nil, 0, true, ck.Errorf(ck.CKR_WRAPPED_KEY_INVALID, "PKCS#8 %s", why)
	}
	for _, p := range MLKEMSets {
		if !key.Algorithm.Algorithm.Equal(p.OID) {
			continue
		}
		if key.Version != 0 && key.Version != 1 || len(key.Algorithm.Parameters.FullBytes) != 0 {
			return bad(p.Name + " key: bad version or parameters")
		}
		vals := attr.Map{ck.CKA_PARAMETER_SET: ck.ULong(p.set)}
		if why := parseSeedChoice(key.PrivateKey, vals); why != "" {
			return bad(p.Name + " private key: " + why)
		}
		return vals, ck.CKK_ML_KEM, true, nil
	}
	for _, c := range []*XDHCurve{X25519Curve, X448Curve} {
		if !key.Algorithm.Algorithm.Equal(c.SPKIOID) {
			continue
		}
		var scalar []byte
		if rest, err := asn1.Unmarshal(key.PrivateKey, &scalar); err != nil || len(rest) != 0 || len(scalar) != c.Size {
			return bad(c.Name + " private key: not an OCTET STRING of the scalar")
		}
		return attr.Map{ck.CKA_EC_PARAMS: bytes.Clone(c.OID), ck.CKA_VALUE: scalar}, ck.CKK_EC_MONTGOMERY, true, nil
	}
	return nil, 0, false, nil
}

// MontgomeryUnwrapParams lets an unwrap template name an X25519/X448
// key's curve by either of its CKA_EC_PARAMS forms: the template's form is
// kept when it names the wrapped key's curve.
func MontgomeryUnwrapParams(t, vals attr.Map) {
	given, ok := t[ck.CKA_EC_PARAMS]
	if !ok {
		return
	}
	a, errA := XDHCurveOf(given)
	b, errB := XDHCurveOf(vals[ck.CKA_EC_PARAMS])
	if errA == nil && errB == nil && a == b {
		delete(vals, ck.CKA_EC_PARAMS)
	}
}
