package main

// 'keys import' of the key types whose PKCS#8 forms the token reads for
// C_UnwrapKey (token.ParsePrivateKeyInfo): ML-DSA (seed, expanded key or
// both), SLH-DSA, ML-KEM (seed, expanded key or both), Ed448, X25519 and
// X448. The private object gets what the file holds; the public object is
// made from the SubjectPublicKeyInfo the token derives from it.

import (
	"encoding/asn1"
	"errors"
	"fmt"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// tokenPKCS8 reads der with the token's PKCS#8 reader.
func tokenPKCS8(der []byte) (*parsedKey, error) {
	kt, priv, info, err := token.ParsePrivateKeyInfo(der)
	if err != nil {
		return nil, err // the token's error names PKCS#8 and the key type
	}
	var k spki
	if rest, err := asn1.Unmarshal(info, &k); err != nil || len(rest) > 0 {
		return nil, errors.New("PKCS#8 key: the token's SubjectPublicKeyInfo does not decode")
	}
	vals := map[uint64][]byte{}
	for _, a := range priv {
		vals[a.Type] = a.Value
	}
	pub := []token.Attribute{ulong(ck.CKA_KEY_TYPE, kt)}
	switch kt {
	case ck.CKK_ML_DSA, ck.CKK_SLH_DSA:
		pub = append(pub, attr(ck.CKA_PARAMETER_SET, vals[ck.CKA_PARAMETER_SET]), attr(ck.CKA_VALUE, k.Key.Bytes), boolAttr(ck.CKA_VERIFY, true))
		priv = append(priv, boolAttr(ck.CKA_SIGN, true))
	case ck.CKK_ML_KEM:
		pub = append(pub, attr(ck.CKA_PARAMETER_SET, vals[ck.CKA_PARAMETER_SET]), attr(ck.CKA_VALUE, k.Key.Bytes), boolAttr(ck.CKA_ENCAPSULATE, true))
		priv = append(priv, boolAttr(ck.CKA_DECAPSULATE, true))
	case ck.CKK_EC_EDWARDS:
		pub = append(pub, attr(ck.CKA_EC_PARAMS, vals[ck.CKA_EC_PARAMS]), attr(ck.CKA_EC_POINT, mustMarshal(k.Key.Bytes)), boolAttr(ck.CKA_VERIFY, true))
		priv = append(priv, boolAttr(ck.CKA_SIGN, true))
	case ck.CKK_EC_MONTGOMERY:
		pub = append(pub, attr(ck.CKA_EC_PARAMS, vals[ck.CKA_EC_PARAMS]), attr(ck.CKA_EC_POINT, mustMarshal(k.Key.Bytes)))
		priv = append(priv, boolAttr(ck.CKA_DERIVE, true))
	default:
		return nil, fmt.Errorf("PKCS#8 %s key: import it as PKCS#1, SEC 1 or PKCS#8 of its own kind", ck.Name("CKK_", kt))
	}
	what := ck.Name("CKK_", kt)
	if kind := kindByType(kt); kind != nil {
		what = kind.describe(vals)
	}
	return &parsedKey{what: what + " private key", spki: info, priv: priv, pub: pub}, nil
}
