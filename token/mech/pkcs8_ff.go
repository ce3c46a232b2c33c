package mech

// DSA and DH private keys as PKCS#8 PrivateKeyInfo (crypto/x509 has
// neither), in OpenSSL's form: id-dsa (RFC 3279) with Dss-Parms (p, q, g),
// dhKeyAgreement (PKCS #3) with DHParameter (p, g); the private key is
// the DER INTEGER x. marshalPKCS8 and parsePKCS8 (pkcs8.go) hand these two
// key types here.

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// PKCS8Info is PrivateKeyInfo without its optional attributes.
type PKCS8Info struct {
	Version    int
	Algo       pkix.AlgorithmIdentifier
	PrivateKey []byte
}

// marshalFFPKCS8 encodes a DSA or DH private key object (ok false for
// other key types).
func marshalFFPKCS8(k Key) (der []byte, ok bool, err error) {
	kt := k.KeyType()
	if kt != ck.CKK_DSA && kt != ck.CKK_DH {
		return nil, false, nil
	}
	a := k.Attrs()
	x, hasX := a[ck.CKA_VALUE]
	if !hasX {
		return nil, true, ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "%s key values are sealed", ck.Name("CKK_", kt))
	}
	n := func(t uint64) *big.Int { return new(big.Int).SetBytes(a[t]) }
	var oid asn1.ObjectIdentifier
	var params any
	if kt == ck.CKK_DSA {
		oid, params = oidDSA, struct{ P, Q, G *big.Int }{n(ck.CKA_PRIME), n(ck.CKA_SUBPRIME), n(ck.CKA_BASE)}
	} else {
		oid, params = oidDHKeyAgreement, struct{ P, G *big.Int }{n(ck.CKA_PRIME), n(ck.CKA_BASE)}
	}
	pDER, err := asn1.Marshal(params)
	if err != nil {
		return nil, true, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "PKCS#8: %v", err)
	}
	xDER, err := asn1.Marshal(new(big.Int).SetBytes(x))
	if err != nil {
		return nil, true, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "PKCS#8: %v", err)
	}
	der, err = asn1.Marshal(PKCS8Info{
		Algo:       pkix.AlgorithmIdentifier{Algorithm: oid, Parameters: asn1.RawValue{FullBytes: pDER}},
		PrivateKey: xDER,
	})
	clear(xDER)
	if err != nil {
		return nil, true, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "PKCS#8: %v", err)
	}
	return der, true, nil
}

// parseFFPKCS8 decodes a PKCS#8 DSA or DH private key into its attribute
// values (ok false when der is not PKCS#8 of one of these algorithms). The
// values are checked when the object is built (completeDSAPrivate,
// completeDHPrivate).
func parseFFPKCS8(der []byte) (vals attr.Map, kt uint64, ok bool, err error) {
	var info PKCS8Info
	if rest, err := asn1.Unmarshal(der, &info); err != nil || len(rest) != 0 {
		return nil, 0, false, nil
	}
	isDSA := info.Algo.Algorithm.Equal(oidDSA)
	if !isDSA && !info.Algo.Algorithm.Equal(oidDHKeyAgreement) {
		return nil, 0, false, nil
	}
	bad := func(what string) (attr.Map, uint64, bool, error) {
		return nil, 0, true, ck.Errorf(ck.CKR_WRAPPED_KEY_INVALID, "PKCS#8 %s key: %s", map[bool]string{true: "DSA", false: "DH"}[isDSA], what)
	}
	if info.Version != 0 {
		return bad("version not 0")
	}
	x := new(big.Int)
	if rest, err := asn1.Unmarshal(info.PrivateKey, &x); err != nil || len(rest) != 0 || x.Sign() <= 0 {
		return bad("private key not a positive INTEGER")
	}
	pb := info.Algo.Parameters.FullBytes
	if isDSA {
		var p struct{ P, Q, G *big.Int }
		if rest, err := asn1.Unmarshal(pb, &p); err != nil || len(rest) != 0 {
			return bad("parameters not Dss-Parms")
		}
		return attr.Map{ck.CKA_PRIME: p.P.Bytes(), ck.CKA_SUBPRIME: p.Q.Bytes(), ck.CKA_BASE: p.G.Bytes(), ck.CKA_VALUE: x.Bytes()},
			ck.CKK_DSA, true, nil
	}
	// DHParameter: prime, base, privateValueLength OPTIONAL.
	var p struct {
		P, G *big.Int
		L    int `asn1:"optional"`
	}
	if rest, err := asn1.Unmarshal(pb, &p); err != nil || len(rest) != 0 {
		return bad("parameters not DHParameter")
	}
	return attr.Map{ck.CKA_PRIME: p.P.Bytes(), ck.CKA_BASE: p.G.Bytes(), ck.CKA_VALUE: x.Bytes()}, ck.CKK_DH, true, nil
}
