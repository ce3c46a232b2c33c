package token

// Attribute schema and policy: which attributes an object of a class (and
// key or certificate type) has, their value kinds, defaults, and who may
// set them when. The rules follow PKCS#11 3.0 §4 (the footnotes of the
// common attribute tables).

import (
	"bytes"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// schemaFor returns the schema of an object of class (and sub-type: key
// type or certificate type), or the CKR code that rejects the template.
func schemaFor(class uint64, sub uint64) (attr.Schema, *mech.KeyType, error) {
	switch class {
	case ck.CKO_DATA:
		return attr.DataSchema, nil, nil
	case ck.CKO_CERTIFICATE:
		if sub != ck.CKC_X_509 {
			return nil, nil, ck.Errorf(ck.CKR_ATTRIBUTE_VALUE_INVALID, "certificate type 0x%X not supported", sub)
		}
		return attr.CertX509Schema, nil, nil
	case ck.CKO_PUBLIC_KEY, ck.CKO_PRIVATE_KEY, ck.CKO_SECRET_KEY:
		kt, ok := mech.KeyTypes[sub]
		if !ok || (class == ck.CKO_SECRET_KEY) != kt.Secret {
			return nil, nil, ck.Errorf(ck.CKR_ATTRIBUTE_VALUE_INVALID, "key type %s not supported for %s", ck.Name("CKK_", sub), ck.Name("CKO_", class))
		}
		switch class {
		case ck.CKO_PUBLIC_KEY:
			return kt.PublicSchema, kt, nil
		case ck.CKO_SECRET_KEY:
			return kt.SecretSchema, kt, nil
		}
		return kt.PrivateSchema, kt, nil
	case ck.CKO_DOMAIN_PARAMETERS:
		kt, ok := mech.KeyTypes[sub]
		if !ok || kt.DomainSchema == nil {
			return nil, nil, ck.Errorf(ck.CKR_ATTRIBUTE_VALUE_INVALID, "no domain parameters of key type %s", ck.Name("CKK_", sub))
		}
		return kt.DomainSchema, kt, nil
	}
	return nil, nil, ck.Errorf(ck.CKR_ATTRIBUTE_VALUE_INVALID, "object class %s not supported", ck.Name("CKO_", class))
}

// subTypeAttr is the attribute that selects the schema within a class.
func subTypeAttr(class uint64) (uint64, bool) {
	switch class {
	case ck.CKO_CERTIFICATE:
		return ck.CKA_CERTIFICATE_TYPE, true
	case ck.CKO_PUBLIC_KEY, ck.CKO_PRIVATE_KEY, ck.CKO_SECRET_KEY, ck.CKO_DOMAIN_PARAMETERS:
		return ck.CKA_KEY_TYPE, true
	}
	return 0, false
}

// parseTemplate turns a template into a map, validating nothing but
// duplicates: a type given twice with different values is
// CKR_TEMPLATE_INCONSISTENT.
func parseTemplate(tmpl []Attribute) (attr.Map, error) {
	m := make(attr.Map, len(tmpl))
	for _, a := range tmpl {
		if old, dup := m[a.Type]; dup && !bytes.Equal(old, a.Value) {
			return nil, ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "%s given twice", ck.Name("CKA_", a.Type))
		}
		m[a.Type] = bytes.Clone(a.Value)
		if m[a.Type] == nil {
			m[a.Type] = []byte{}
		}
	}
	return m, nil
}

// checkValue validates v as a value of kind (CKR_ATTRIBUTE_VALUE_INVALID).
func checkValue(t uint64, kind attr.Kind, v []byte) error {
	bad := false
	switch kind {
	case attr.KindBool:
		bad = len(v) != 1 || v[0] > 1
	case attr.KindULong:
		bad = len(v) != 8
	case attr.KindDate:
		if len(v) != 0 {
			bad = len(v) != 8
			for _, c := range v {
				if c < '0' || c > '9' {
					bad = true
				}
			}
		}
	case attr.KindMechs:
		bad = len(v)%8 != 0
	case attr.KindAttrs:
		_, err := DecodeAttributes(v)
		bad = err != nil
	}
	if bad {
		return ck.Errorf(ck.CKR_ATTRIBUTE_VALUE_INVALID, "%s: malformed value of %d bytes", ck.Name("CKA_", t), len(v))
	}
	return nil
}

// usageAttr maps a key function to the attribute that permits it.
var usageAttr = map[mech.OpKind]uint64{
	mech.OpSign:    ck.CKA_SIGN,
	mech.OpVerify:  ck.CKA_VERIFY,
	mech.OpEncrypt: ck.CKA_ENCRYPT,
	mech.OpDecrypt: ck.CKA_DECRYPT,
	mech.OpDerive:  ck.CKA_DERIVE,

	mech.OpMessageSign:    ck.CKA_SIGN,
	mech.OpMessageVerify:  ck.CKA_VERIFY,
	mech.OpMessageEncrypt: ck.CKA_ENCRYPT,
	mech.OpMessageDecrypt: ck.CKA_DECRYPT,
}

// allowsMechanism reports whether the key's CKA_ALLOWED_MECHANISMS (empty:
// any) lists mech.
func allowsMechanism(a attr.Map, mc uint64) bool {
	list := a[ck.CKA_ALLOWED_MECHANISMS]
	if len(list) == 0 {
		return true
	}
	for i := 0; i+8 <= len(list); i += 8 {
		if v, _ := ck.ParseULong(list[i : i+8]); v == mc {
			return true
		}
	}
	return false
}

// readable reports whether attribute t of an object with attrs may be
// revealed: private values only of non-sensitive, extractable keys.
func readable(spec attr.Spec, a attr.Map) bool {
	if !spec.Has(attr.Secret) {
		return true
	}
	return !a.Bool(ck.CKA_SENSITIVE) && a.Bool(ck.CKA_EXTRACTABLE)
}

// objectSchema returns the schema of an existing object.
func objectSchema(a attr.Map) (attr.Schema, *mech.KeyType) {
	class, _ := a.ULong(ck.CKA_CLASS)
	var sub uint64
	if t, ok := subTypeAttr(class); ok {
		sub, _ = a.ULong(t)
	}
	s, kt, err := schemaFor(class, sub)
	if err != nil {
		return attr.StorageSchema, nil
	}
	return s, kt
}

// sealedTypes returns the attribute types stored sealed for an object: all
// but CKA_CLASS, CKA_TOKEN and CKA_PRIVATE of a private object, and the
// secret values of any key.
func sealedTypes(a attr.Map, s attr.Schema) map[uint64]bool {
	sealed := map[uint64]bool{}
	priv := a.Bool(ck.CKA_PRIVATE)
	for t := range a {
		switch {
		case priv && t != ck.CKA_CLASS && t != ck.CKA_TOKEN && t != ck.CKA_PRIVATE:
			sealed[t] = true
		case s[t].Has(attr.Secret):
			sealed[t] = true
		}
	}
	return sealed
}
