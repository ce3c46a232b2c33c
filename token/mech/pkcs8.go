package mech

// Private keys as wrapped key material: PKCS#8 PrivateKeyInfo (RFC 5208),
// DER, as SoftHSMv2, OpenSSL and crypto/x509 write it. RSA keys carry
// n, e, d, p, q and the CRT values; EC keys the named curve, the scalar and
// the public point; Ed25519 keys (RFC 8410) the 32-byte private key; ML-DSA keys (pkcs8_mldsa.go) the IETF LAMPS
// forms; SLH-DSA and Ed448 keys are in pkcs8_pq.go. Encoding goes through crypto/x509 (big.Int: not
// constant time, as every DER encoder of a key; the values are the
// caller's to take, and no operation depends on them here).

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"math/big"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// ecCurveOIDs are the named curves a wrapped EC key may use (those of
// crypto/ecdsa; CKA_EC_PARAMS is the DER OID).
var ecCurveOIDs = []struct {
	oid   asn1.ObjectIdentifier
	curve elliptic.Curve
}{
	{asn1.ObjectIdentifier{1, 2, 840, 10045, 3, 1, 7}, elliptic.P256()},
	{asn1.ObjectIdentifier{1, 3, 132, 0, 34}, elliptic.P384()},
	{asn1.ObjectIdentifier{1, 3, 132, 0, 35}, elliptic.P521()},
	{asn1.ObjectIdentifier{1, 3, 132, 0, 33}, elliptic.P224()},
}

// MarshalPKCS8 encodes a private key object's values as PKCS#8.
func MarshalPKCS8(k Key) ([]byte, error) {
	if der, ok, err := marshalSigPKCS8(k); ok { // SLH-DSA, Ed448 (pkcs8_sig.go)
		return der, err
	}
	var key any
	switch k.KeyType() {
	case ck.CKK_RSA:
		priv, err := rsaPrivateKey(k)
		if err != nil {
			return nil, err
		}
		rk := &rsa.PrivateKey{PublicKey: rsa.PublicKey{N: priv.N, E: priv.E}, D: priv.D, Primes: []*big.Int{priv.P, priv.Q}}
		if priv.P == nil || priv.Q == nil {
			return nil, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "RSA key without its primes")
		}
		rk.Precompute()
		key = rk
	case ck.CKK_EC:
		der, ok := k.Attrs()[ck.CKA_EC_PARAMS]
		v, ok2 := k.Attrs()[ck.CKA_VALUE]
		if !ok || !ok2 {
			return nil, ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "EC key values are sealed")
		}
		curve := curveOfParams(der)
		if curve == nil {
			return nil, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "EC key on a curve PKCS#8 wrapping does not know")
		}
		size := (curve.Params().BitSize + 7) / 8
		if len(v) > size {
			return nil, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "EC key: scalar of %d bytes", len(v))
		}
		ek, err := ecdsa.ParseRawPrivateKey(curve, leftPad(v, size))
		if err != nil {
			return nil, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "EC key: %v", err)
		}
		key = ek
	case ck.CKK_EC_EDWARDS:
		seed, ok := k.Attrs()[ck.CKA_VALUE]
		if !ok {
			return nil, ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "Ed25519 key value is sealed")
		}
		if len(seed) != ed25519.SeedSize {
			return nil, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "Ed25519 key of %d bytes", len(seed))
		}
		key = ed25519.NewKeyFromSeed(seed)
	default:
		if der, ok, err := marshalFFPKCS8(k); ok { // DSA, DH (pkcs8_ff.go)
			return der, err
		}
		if der, ok, err := marshalMLDSAPKCS8(k); ok { // pkcs8_mldsa.go
			return der, err
		}
		if der, ok, err := marshalPQPKCS8(k); ok { // ML-KEM, X25519, X448 (pkcs8_pq.go)
			return der, err
		}
		return nil, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "%s private keys are not wrapped (RSA, EC, Ed25519, Ed448, DSA, DH, ML-DSA, SLH-DSA, ML-KEM, X25519 and X448 keys are)", ck.Name("CKK_", k.KeyType()))
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "PKCS#8: %v", err)
	}
	return der, nil
}

// curveOfParams returns the curve named by a CKA_EC_PARAMS OID (nil if
// unknown).
func curveOfParams(der []byte) elliptic.Curve {
	var oid asn1.ObjectIdentifier
	rest, err := asn1.Unmarshal(der, &oid)
	if err != nil || len(rest) != 0 {
		return nil
	}
	for _, c := range ecCurveOIDs {
		if c.oid.Equal(oid) {
			return c.curve
		}
	}
	return nil
}

func paramsOfCurve(curve elliptic.Curve) []byte {
	for _, c := range ecCurveOIDs {
		if c.curve == curve {
			der, _ := asn1.Marshal(c.oid)
			return der
		}
	}
	return nil
}

// ParsePKCS8 decodes unwrapped key material as a PKCS#8 RSA, EC, DSA or DH
// private key and returns its attribute values and key type
// (CKR_WRAPPED_KEY_INVALID when it is not one).
func ParsePKCS8(der []byte) (attr.Map, uint64, error) {
	if vals, kt, ok, err := parseFFPKCS8(der); ok { // DSA, DH (pkcs8_ff.go)
		return vals, kt, err
	}
	if vals, kt, ok, err := parseMLDSAPKCS8(der); ok { // pkcs8_mldsa.go
		return vals, kt, err
	}
	if vals, kt, ok, err := parsePQPKCS8(der); ok { // ML-KEM, X25519, X448 (pkcs8_pq.go)
		return vals, kt, err
	}
	if vals, kt, ok, err := parseSigPKCS8(der); ok { // SLH-DSA, Ed448 (pkcs8_sig.go)
		return vals, kt, err
	}
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, 0, ck.Errorf(ck.CKR_WRAPPED_KEY_INVALID, "not a PKCS#8 RSA or EC private key: %v", err)
	}
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if len(k.Primes) != 2 {
			return nil, 0, ck.Errorf(ck.CKR_WRAPPED_KEY_INVALID, "RSA key with %d primes", len(k.Primes))
		}
		return attr.Map{
			ck.CKA_MODULUS:          k.N.Bytes(),
			ck.CKA_PUBLIC_EXPONENT:  big.NewInt(int64(k.E)).Bytes(),
			ck.CKA_PRIVATE_EXPONENT: k.D.Bytes(),
			ck.CKA_PRIME_1:          k.Primes[0].Bytes(),
			ck.CKA_PRIME_2:          k.Primes[1].Bytes(),
			ck.CKA_EXPONENT_1:       k.Precomputed.Dp.Bytes(),
			ck.CKA_EXPONENT_2:       k.Precomputed.Dq.Bytes(),
			ck.CKA_COEFFICIENT:      k.Precomputed.Qinv.Bytes(),
		}, ck.CKK_RSA, nil
	case *ecdsa.PrivateKey:
		params := paramsOfCurve(k.Curve)
		if params == nil {
			return nil, 0, ck.Errorf(ck.CKR_WRAPPED_KEY_INVALID, "EC key on an unknown curve")
		}
		d, err := k.Bytes()
		if err != nil {
			return nil, 0, ck.Errorf(ck.CKR_WRAPPED_KEY_INVALID, "EC key: %v", err)
		}
		return attr.Map{ck.CKA_EC_PARAMS: params, ck.CKA_VALUE: d}, ck.CKK_EC, nil
	case ed25519.PrivateKey:
		// CKA_EC_PARAMS is left to the template (any of Ed25519's
		// encodings); unwrappedPrivate defaults it.
		return attr.Map{ck.CKA_VALUE: bytes.Clone(k.Seed())}, ck.CKK_EC_EDWARDS, nil
	}
	return nil, 0, ck.Errorf(ck.CKR_WRAPPED_KEY_INVALID, "PKCS#8 key of type %T is not supported", key)
}

// SameValues reports the first attribute of vals that t gives with
// another value (CKR_TEMPLATE_INCONSISTENT): an unwrap template may name
// the key's values only as they are.
func SameValues(t, vals attr.Map) error {
	for typ, v := range vals {
		if w, ok := t[typ]; ok && !bytes.Equal(w, v) {
			return Inconsistent(attr.Describe(typ) + " of the template differs from the wrapped key's")
		}
	}
	return nil
}
