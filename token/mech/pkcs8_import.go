package mech

// The PKCS#8 reader of C_UnwrapKey offered to the CLI's 'keys import', so
// that the key formats are read in one place.

import (
	"slices"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// ParsePrivateKeyInfo reads an unencrypted PKCS#8 private key as
// C_UnwrapKey does (RSA, EC, Ed25519, Ed448, DSA, DH, ML-DSA in its three
// IETF forms, SLH-DSA, ML-KEM, X25519, X448) and checks it as
// C_CreateObject would. It returns the key type, the private key's value
// attributes (CKA_KEY_TYPE and what the file holds: a C_CreateObject
// template without class, label or usage) and the DER SubjectPublicKeyInfo
// of its public key. A malformed key is CKR_WRAPPED_KEY_INVALID; one that
// fails the checks of its type has that type's CKR_ code.
func ParsePrivateKeyInfo(der []byte) (keyType uint64, priv []attr.Attribute, spki []byte, err error) {
	vals, kt, err := ParsePKCS8(der)
	if err != nil {
		return 0, nil, nil, err
	}
	if kt == ck.CKK_EC_EDWARDS {
		vals[ck.CKA_EC_PARAMS] = Ed25519Printable // as unwrappedPrivate names them
		if len(vals[ck.CKA_VALUE]) == Edwards448.KeySize() {
			vals[ck.CKA_EC_PARAMS] = Ed448OID
		}
	}
	typ, ok := KeyTypes[kt]
	if !ok || typ.CompletePrivate == nil {
		return 0, nil, nil, ck.Errorf(ck.CKR_WRAPPED_KEY_INVALID, "%s keys are not imported", ck.Name("CKK_", kt))
	}
	checked := vals.Clone() // completePrivate adds derived values: not for the template
	if err := typ.CompletePrivate(checked); err != nil {
		return 0, nil, nil, err
	}
	spki = checked[ck.CKA_PUBLIC_KEY_INFO]
	if len(spki) == 0 {
		return 0, nil, nil, ck.Errorf(ck.CKR_WRAPPED_KEY_INVALID, "%s key without a public key", ck.Name("CKK_", kt))
	}
	priv = []attr.Attribute{{Type: ck.CKA_KEY_TYPE, Value: ck.ULong(kt)}}
	types := make([]uint64, 0, len(vals))
	for t := range vals {
		types = append(types, t)
	}
	slices.Sort(types)
	for _, t := range types {
		priv = append(priv, attr.Attribute{Type: t, Value: vals[t]})
	}
	return kt, priv, spki, nil
}
