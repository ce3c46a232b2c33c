package token

// Attribute schema and policy: which attributes an object of a class (and
// key or certificate type) has, their value kinds, defaults, and who may
// set them when. The rules follow PKCS#11 3.0 §4 (the footnotes of the
// common attribute tables).

import (
	"bytes"

	"github.com/modexp-token/modexp-token/token/ck"
)

// schemaFor returns the schema of an object of class (and sub-type: key
// type or certificate type), or the CKR code that rejects the template.
func schemaFor(class uint64, sub uint64) (schema, *keyType, error) {
	switch class {
	case ck.CKO_DATA:
		return dataSchema, nil, nil
	case ck.CKO_CERTIFICATE:
		if sub != ck.CKC_X_509 {
			return nil, nil, ck.Errorf(ck.CKR_ATTRIBUTE_VALUE_INVALID, "certificate type 0x%X not supported", sub)
		}
		return certX509Schema, nil, nil
	case ck.CKO_PUBLIC_KEY, ck.CKO_PRIVATE_KEY, ck.CKO_SECRET_KEY:
		kt, ok := keyTypes[sub]
		if !ok || (class == ck.CKO_SECRET_KEY) != kt.secret {
			return nil, nil, ck.Errorf(ck.CKR_ATTRIBUTE_VALUE_INVALID, "key type %s not supported for %s", ck.Name("CKK_", sub), ck.Name("CKO_", class))
		}
		switch class {
		case ck.CKO_PUBLIC_KEY:
			return kt.publicSchema, kt, nil
		case ck.CKO_SECRET_KEY:
			return kt.secretSchema, kt, nil
		}
		return kt.privateSchema, kt, nil
	case ck.CKO_DOMAIN_PARAMETERS:
		kt, ok := keyTypes[sub]
		if !ok || kt.domainSchema == nil {
			return nil, nil, ck.Errorf(ck.CKR_ATTRIBUTE_VALUE_INVALID, "no domain parameters of key type %s", ck.Name("CKK_", sub))
		}
		return kt.domainSchema, kt, nil
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
func parseTemplate(tmpl []Attribute) (attrMap, error) {
	m := make(attrMap, len(tmpl))
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
func checkValue(t uint64, kind attrKind, v []byte) error {
	bad := false
	switch kind {
	case kindBool:
		bad = len(v) != 1 || v[0] > 1
	case kindULong:
		bad = len(v) != 8
	case kindDate:
		if len(v) != 0 {
			bad = len(v) != 8
			for _, c := range v {
				if c < '0' || c > '9' {
					bad = true
				}
			}
		}
	case kindMechs:
		bad = len(v)%8 != 0
	case kindAttrs:
		_, err := DecodeAttributes(v)
		bad = err != nil
	}
	if bad {
		return ck.Errorf(ck.CKR_ATTRIBUTE_VALUE_INVALID, "%s: malformed value of %d bytes", ck.Name("CKA_", t), len(v))
	}
	return nil
}

// usageAttr maps a key function to the attribute that permits it.
var usageAttr = map[opKind]uint64{
	opSign:    ck.CKA_SIGN,
	opVerify:  ck.CKA_VERIFY,
	opEncrypt: ck.CKA_ENCRYPT,
	opDecrypt: ck.CKA_DECRYPT,
	opDerive:  ck.CKA_DERIVE,

	opMessageSign:    ck.CKA_SIGN,
	opMessageVerify:  ck.CKA_VERIFY,
	opMessageEncrypt: ck.CKA_ENCRYPT,
	opMessageDecrypt: ck.CKA_DECRYPT,
}

// allowsMechanism reports whether the key's CKA_ALLOWED_MECHANISMS (empty:
// any) lists mech.
func (a attrMap) allowsMechanism(mech uint64) bool {
	list := a[ck.CKA_ALLOWED_MECHANISMS]
	if len(list) == 0 {
		return true
	}
	for i := 0; i+8 <= len(list); i += 8 {
		if v, _ := ck.ParseULong(list[i : i+8]); v == mech {
			return true
		}
	}
	return false
}

// readable reports whether attribute t of an object with attrs may be
// revealed: private values only of non-sensitive, extractable keys.
func readable(spec attrSpec, a attrMap) bool {
	if !spec.has(fSecret) {
		return true
	}
	return !a.bool(ck.CKA_SENSITIVE) && a.bool(ck.CKA_EXTRACTABLE)
}

// objectSchema returns the schema of an existing object.
func objectSchema(a attrMap) (schema, *keyType) {
	class, _ := a.ulong(ck.CKA_CLASS)
	var sub uint64
	if t, ok := subTypeAttr(class); ok {
		sub, _ = a.ulong(t)
	}
	s, kt, err := schemaFor(class, sub)
	if err != nil {
		return storageSchema, nil
	}
	return s, kt
}

// sealedTypes returns the attribute types stored sealed for an object: all
// but CKA_CLASS, CKA_TOKEN and CKA_PRIVATE of a private object, and the
// secret values of any key.
func sealedTypes(a attrMap, s schema) map[uint64]bool {
	sealed := map[uint64]bool{}
	priv := a.bool(ck.CKA_PRIVATE)
	for t := range a {
		switch {
		case priv && t != ck.CKA_CLASS && t != ck.CKA_TOKEN && t != ck.CKA_PRIVATE:
			sealed[t] = true
		case s[t].has(fSecret):
			sealed[t] = true
		}
	}
	return sealed
}
