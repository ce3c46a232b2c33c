package main

// The post-quantum and Montgomery key types of 'keys generate --type':
// ml-kem-512, ml-kem-768, ml-kem-1024 (key encapsulation), x25519 and
// x448 (key agreement). Kept apart from the RSA and EC table in keys.go.

import (
	"sort"
	"strings"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// pqKeyType is one --type of this file.
type pqKeyType struct {
	mech uint64
	pub  []token.Attribute // the type's attributes of the public template
	use  uint64            // the private key's usage attribute
}

// pqKeyTypes are the --type values, by name.
var pqKeyTypes = map[string]pqKeyType{
	"ml-kem-512":  {ck.CKM_ML_KEM_KEY_PAIR_GEN, []token.Attribute{ulong(ck.CKA_PARAMETER_SET, ck.CKP_ML_KEM_512)}, ck.CKA_DECAPSULATE},
	"ml-kem-768":  {ck.CKM_ML_KEM_KEY_PAIR_GEN, []token.Attribute{ulong(ck.CKA_PARAMETER_SET, ck.CKP_ML_KEM_768)}, ck.CKA_DECAPSULATE},
	"ml-kem-1024": {ck.CKM_ML_KEM_KEY_PAIR_GEN, []token.Attribute{ulong(ck.CKA_PARAMETER_SET, ck.CKP_ML_KEM_1024)}, ck.CKA_DECAPSULATE},
	"x25519":      {ck.CKM_EC_MONTGOMERY_KEY_PAIR_GEN, []token.Attribute{attr(ck.CKA_EC_PARAMS, []byte{0x06, 0x03, 0x2b, 0x65, 0x6e})}, ck.CKA_DERIVE},
	"x448":        {ck.CKM_EC_MONTGOMERY_KEY_PAIR_GEN, []token.Attribute{attr(ck.CKA_EC_PARAMS, []byte{0x06, 0x03, 0x2b, 0x65, 0x6f})}, ck.CKA_DERIVE},
}

// pqTypeNames lists the --type values of this file.
func pqTypeNames() string {
	var n []string
	for k := range pqKeyTypes {
		n = append(n, k)
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}

// pqTemplates are the mechanism and templates of a --type of this file
// (ok false: another type).
func pqTemplates(spec, label string, id []byte) (mech token.Mechanism, pub, priv []token.Attribute, ok bool) {
	t, ok := pqKeyTypes[spec]
	if !ok {
		return mech, nil, nil, false
	}
	pub = append(common(ck.CKO_PUBLIC_KEY, label, id), t.pub...)
	priv = append(common(ck.CKO_PRIVATE_KEY, label, id), boolAttr(ck.CKA_PRIVATE, true), boolAttr(ck.CKA_SENSITIVE, true),
		boolAttr(t.use, true))
	return token.Mechanism{Type: t.mech}, pub, priv, true
}

// pqDescribe is the type column of 'keys list' for these keys: the
// parameter set or the curve (ok false: another key type).
func pqDescribe(kt uint64, a map[uint64][]byte) (string, bool) {
	switch kt {
	case ck.CKK_ML_KEM:
		v, _ := ck.ParseULong(a[ck.CKA_PARAMETER_SET])
		switch v {
		case ck.CKP_ML_KEM_512:
			return "ml-kem-512", true
		case ck.CKP_ML_KEM_768:
			return "ml-kem-768", true
		case ck.CKP_ML_KEM_1024:
			return "ml-kem-1024", true
		}
		return "ml-kem:unknown", true
	case ck.CKK_EC_MONTGOMERY:
		for name, t := range pqKeyTypes {
			if t.mech == ck.CKM_EC_MONTGOMERY_KEY_PAIR_GEN && string(t.pub[0].Value) == string(a[ck.CKA_EC_PARAMS]) {
				return name, true
			}
		}
		switch string(a[ck.CKA_EC_PARAMS]) {
		case "\x13\x0acurve25519":
			return "x25519", true
		case "\x13\x08curve448":
			return "x448", true
		}
		return "montgomery:unknown", true
	}
	return "", false
}
