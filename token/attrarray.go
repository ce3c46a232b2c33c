package token

// Attribute arrays: the values of CKA_WRAP_TEMPLATE, CKA_UNWRAP_TEMPLATE
// and CKA_DERIVE_TEMPLATE are themselves templates (CK_ATTRIBUTE arrays in
// C). Between the C layer and the token, and in the keystore, such a value
// travels as one byte string: for each attribute, its type and its value
// length as two CK_ULONGs in the encoding of ck.ULong, then the value.
// The C layer turns a caller's array into this form (EncodeAttributes) and
// back (DecodeAttributes) when it answers C_GetAttributeValue.

import (
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// maxArrayAttrs bounds the attributes of one attribute array.
const maxArrayAttrs = 256

// IsAttributeArray reports whether values of attribute type t are
// attribute arrays (CKA_WRAP_TEMPLATE, CKA_UNWRAP_TEMPLATE,
// CKA_DERIVE_TEMPLATE). CKA_ALLOWED_MECHANISMS carries CKF_ARRAY_ATTRIBUTE
// too but is a list of mechanism types, not of attributes: false.
func IsAttributeArray(t uint64) bool {
	switch t {
	case ck.CKA_WRAP_TEMPLATE, ck.CKA_UNWRAP_TEMPLATE, ck.CKA_DERIVE_TEMPLATE:
		return true
	}
	return false
}

// EncodeAttributes is the byte-string form of an attribute array.
func EncodeAttributes(attrs []Attribute) []byte {
	n := 0
	for _, a := range attrs {
		n += 16 + len(a.Value)
	}
	out := make([]byte, 0, n)
	for _, a := range attrs {
		out = append(out, ck.ULong(a.Type)...)
		out = append(out, ck.ULong(uint64(len(a.Value)))...)
		out = append(out, a.Value...)
	}
	return out
}

// DecodeAttributes parses the form EncodeAttributes makes; the values are
// views of b. Malformed input, more than 256 attributes or a nested
// attribute array is CKR_ATTRIBUTE_VALUE_INVALID.
func DecodeAttributes(b []byte) ([]Attribute, error) {
	var out []Attribute
	for len(b) > 0 {
		if len(b) < 16 || len(out) == maxArrayAttrs {
			return nil, ck.Errorf(ck.CKR_ATTRIBUTE_VALUE_INVALID, "malformed attribute array")
		}
		t, _ := ck.ParseULong(b[:8])
		n, _ := ck.ParseULong(b[8:16])
		b = b[16:]
		if n > uint64(len(b)) || IsAttributeArray(t) {
			return nil, ck.Errorf(ck.CKR_ATTRIBUTE_VALUE_INVALID, "malformed attribute array")
		}
		out = append(out, Attribute{Type: t, Value: b[:n:n]})
		b = b[n:]
	}
	return out, nil
}

// templateAttr returns the attribute array value t of a as a map (empty
// when absent or empty).
func templateAttr(a attr.Map, t uint64) (attr.Map, error) {
	list, err := DecodeAttributes(a[t])
	if err != nil {
		return nil, err
	}
	return parseTemplate(list)
}

// satisfies reports whether the attributes a hold every value of the
// template tmpl (the CKA_WRAP_TEMPLATE and CKA_UNWRAP_TEMPLATE rule: a key
// may be wrapped, an unwrapped key made, only if it matches).
func satisfies(a attr.Map, tmpl attr.Map) bool {
	for t, v := range tmpl {
		if w, ok := a[t]; !ok || string(w) != string(v) {
			return false
		}
	}
	return true
}
