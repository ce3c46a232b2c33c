package token

// Attribute schema and policy: which attributes an object of a class (and
// key or certificate type) has, their value kinds, defaults, and who may
// set them when. The rules follow PKCS#11 3.0 §4 (the footnotes of the
// common attribute tables).

import (
	"bytes"

	"github.com/modexp-token/modexp-token/token/ck"
)

// attrKind is the value type of an attribute, used to validate lengths.
type attrKind uint8

const (
	kindBytes attrKind = iota // any byte string
	kindBool                  // CK_BBOOL: 1 byte, 0 or 1
	kindULong                 // CK_ULONG: 8 bytes
	kindDate                  // CK_DATE: empty or 8 ASCII digits
	kindMechs                 // CK_MECHANISM_TYPE_PTR: a multiple of 8 bytes
	kindAttrs                 // CK_ATTRIBUTE_PTR: an attribute array (attrarray.go)
)

// attrFlag is a policy bit of an attribute.
type attrFlag uint16

const (
	// fRequired: must be given to C_CreateObject (CKR_TEMPLATE_INCOMPLETE).
	fRequired attrFlag = 1 << iota
	// fTokenSet: set by the token only; a template naming it is
	// CKR_ATTRIBUTE_READ_ONLY (CKA_LOCAL, CKA_ALWAYS_SENSITIVE, ...).
	fTokenSet
	// fFixed: cannot change after creation (C_SetAttributeValue answers
	// CKR_ATTRIBUTE_READ_ONLY).
	fFixed
	// fCopyChange: fixed for C_SetAttributeValue but may be given in the
	// template of C_CopyObject (CKA_TOKEN, CKA_PRIVATE, CKA_MODIFIABLE).
	fCopyChange
	// fSecret: a private value of a key: stored sealed, and readable only if
	// the key is not sensitive and extractable.
	fSecret
	// fGenerated: given by the token on key generation (CKA_MODULUS);
	// C_GenerateKeyPair templates naming it are CKR_ATTRIBUTE_READ_ONLY,
	// C_CreateObject templates must give it.
	fGenerated
)

// attrSpec is one attribute of a schema.
type attrSpec struct {
	kind  attrKind
	flags attrFlag
	def   []byte // default value when absent at creation (nil: no default)
}

func (a attrSpec) has(f attrFlag) bool { return a.flags&f != 0 }

// schema is the set of attributes an object type has.
type schema map[uint64]attrSpec

func (s schema) with(layers ...schema) schema {
	out := schema{}
	for _, l := range append([]schema{s}, layers...) {
		for k, v := range l {
			out[k] = v
		}
	}
	return out
}

var (
	vTrue  = ck.Bool(true)
	vFalse = ck.Bool(false)
	vEmpty = []byte{}
)

// storageSchema is common to every object (PKCS#11 3.0 §4.4).
var storageSchema = schema{
	ck.CKA_CLASS:       {kind: kindULong, flags: fRequired | fFixed},
	ck.CKA_TOKEN:       {kind: kindBool, flags: fFixed | fCopyChange, def: vFalse},
	ck.CKA_PRIVATE:     {kind: kindBool, flags: fFixed | fCopyChange, def: vFalse},
	ck.CKA_MODIFIABLE:  {kind: kindBool, flags: fFixed | fCopyChange, def: vTrue},
	ck.CKA_LABEL:       {kind: kindBytes, def: vEmpty},
	ck.CKA_COPYABLE:    {kind: kindBool, def: vTrue},
	ck.CKA_DESTROYABLE: {kind: kindBool, def: vTrue},
}

// dataSchema: CKO_DATA (§4.5).
var dataSchema = storageSchema.with(schema{
	ck.CKA_APPLICATION: {kind: kindBytes, def: vEmpty},
	ck.CKA_OBJECT_ID:   {kind: kindBytes, def: vEmpty},
	ck.CKA_VALUE:       {kind: kindBytes, def: vEmpty},
})

// certSchema: CKO_CERTIFICATE common attributes (§4.6.2) with the X.509
// public key certificate attributes (§4.6.3).
var certX509Schema = storageSchema.with(schema{
	ck.CKA_CERTIFICATE_TYPE:           {kind: kindULong, flags: fRequired | fFixed},
	ck.CKA_TRUSTED:                    {kind: kindBool, def: vFalse},
	ck.CKA_CERTIFICATE_CATEGORY:       {kind: kindULong, def: ck.ULong(0)}, // CK_CERTIFICATE_CATEGORY_UNSPECIFIED
	ck.CKA_CHECK_VALUE:                {kind: kindBytes, flags: fTokenSet | fFixed},
	ck.CKA_START_DATE:                 {kind: kindDate, def: vEmpty},
	ck.CKA_END_DATE:                   {kind: kindDate, def: vEmpty},
	ck.CKA_PUBLIC_KEY_INFO:            {kind: kindBytes, def: vEmpty},
	ck.CKA_SUBJECT:                    {kind: kindBytes, flags: fRequired},
	ck.CKA_ID:                         {kind: kindBytes, def: vEmpty},
	ck.CKA_ISSUER:                     {kind: kindBytes, def: vEmpty},
	ck.CKA_SERIAL_NUMBER:              {kind: kindBytes, def: vEmpty},
	ck.CKA_VALUE:                      {kind: kindBytes, flags: fRequired | fFixed},
	ck.CKA_URL:                        {kind: kindBytes, def: vEmpty},
	ck.CKA_HASH_OF_SUBJECT_PUBLIC_KEY: {kind: kindBytes, def: vEmpty},
	ck.CKA_HASH_OF_ISSUER_PUBLIC_KEY:  {kind: kindBytes, def: vEmpty},
	ck.CKA_JAVA_MIDP_SECURITY_DOMAIN:  {kind: kindULong, def: ck.ULong(0)},
	ck.CKA_NAME_HASH_ALGORITHM:        {kind: kindULong, def: ck.ULong(ck.CKM_SHA_1)},
})

// keySchema: common key attributes (§4.7).
var keySchema = storageSchema.with(schema{
	ck.CKA_KEY_TYPE:           {kind: kindULong, flags: fRequired | fFixed},
	ck.CKA_ID:                 {kind: kindBytes, def: vEmpty},
	ck.CKA_START_DATE:         {kind: kindDate, def: vEmpty},
	ck.CKA_END_DATE:           {kind: kindDate, def: vEmpty},
	ck.CKA_DERIVE:             {kind: kindBool, def: vFalse},
	ck.CKA_LOCAL:              {kind: kindBool, flags: fTokenSet | fFixed},
	ck.CKA_KEY_GEN_MECHANISM:  {kind: kindULong, flags: fTokenSet | fFixed},
	ck.CKA_ALLOWED_MECHANISMS: {kind: kindMechs, flags: fFixed, def: vEmpty},
})

// publicKeySchema: public key attributes (§4.8), key-type attributes added
// by the key type.
var publicKeySchema = keySchema.with(schema{
	ck.CKA_SUBJECT:         {kind: kindBytes, def: vEmpty},
	ck.CKA_ENCRYPT:         {kind: kindBool, def: vTrue},
	ck.CKA_VERIFY:          {kind: kindBool, def: vTrue},
	ck.CKA_VERIFY_RECOVER:  {kind: kindBool, def: vFalse},
	ck.CKA_WRAP:            {kind: kindBool, def: vFalse},
	ck.CKA_TRUSTED:         {kind: kindBool, def: vFalse},
	ck.CKA_WRAP_TEMPLATE:   {kind: kindAttrs, def: vEmpty},
	ck.CKA_PUBLIC_KEY_INFO: {kind: kindBytes, flags: fTokenSet | fFixed},
})

// privateKeySchema: private key attributes (§4.9).
var privateKeySchema = keySchema.with(schema{
	ck.CKA_PRIVATE:             {kind: kindBool, flags: fFixed | fCopyChange, def: vTrue},
	ck.CKA_SUBJECT:             {kind: kindBytes, def: vEmpty},
	ck.CKA_SENSITIVE:           {kind: kindBool, def: vTrue},
	ck.CKA_DECRYPT:             {kind: kindBool, def: vTrue},
	ck.CKA_SIGN:                {kind: kindBool, def: vTrue},
	ck.CKA_SIGN_RECOVER:        {kind: kindBool, def: vFalse},
	ck.CKA_UNWRAP:              {kind: kindBool, def: vFalse},
	ck.CKA_EXTRACTABLE:         {kind: kindBool, def: vFalse},
	ck.CKA_ALWAYS_SENSITIVE:    {kind: kindBool, flags: fTokenSet | fFixed},
	ck.CKA_NEVER_EXTRACTABLE:   {kind: kindBool, flags: fTokenSet | fFixed},
	ck.CKA_WRAP_WITH_TRUSTED:   {kind: kindBool, def: vFalse},
	ck.CKA_ALWAYS_AUTHENTICATE: {kind: kindBool, flags: fFixed, def: vFalse},
	ck.CKA_UNWRAP_TEMPLATE:     {kind: kindAttrs, def: vEmpty},
	ck.CKA_DERIVE_TEMPLATE:     {kind: kindAttrs, def: vEmpty},
	ck.CKA_PUBLIC_KEY_INFO:     {kind: kindBytes, flags: fTokenSet | fFixed},
})

// secretKeySchema: secret key attributes (§4.10), CKA_VALUE and its length
// added by the key type (secretkey.go).
var secretKeySchema = keySchema.with(schema{
	ck.CKA_PRIVATE:           {kind: kindBool, flags: fFixed | fCopyChange, def: vTrue},
	ck.CKA_SENSITIVE:         {kind: kindBool, def: vTrue},
	ck.CKA_ENCRYPT:           {kind: kindBool, def: vTrue},
	ck.CKA_DECRYPT:           {kind: kindBool, def: vTrue},
	ck.CKA_SIGN:              {kind: kindBool, def: vTrue},
	ck.CKA_VERIFY:            {kind: kindBool, def: vTrue},
	ck.CKA_WRAP:              {kind: kindBool, def: vFalse},
	ck.CKA_UNWRAP:            {kind: kindBool, def: vFalse},
	ck.CKA_EXTRACTABLE:       {kind: kindBool, def: vFalse},
	ck.CKA_ALWAYS_SENSITIVE:  {kind: kindBool, flags: fTokenSet | fFixed},
	ck.CKA_NEVER_EXTRACTABLE: {kind: kindBool, flags: fTokenSet | fFixed},
	ck.CKA_CHECK_VALUE:       {kind: kindBytes, flags: fFixed},
	ck.CKA_WRAP_WITH_TRUSTED: {kind: kindBool, def: vFalse},
	ck.CKA_TRUSTED:           {kind: kindBool, def: vFalse},
	ck.CKA_WRAP_TEMPLATE:     {kind: kindAttrs, def: vEmpty},
	ck.CKA_UNWRAP_TEMPLATE:   {kind: kindAttrs, def: vEmpty},
	ck.CKA_DERIVE_TEMPLATE:   {kind: kindAttrs, def: vEmpty},
})

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

// attrMap is an object's attributes by type.
type attrMap map[uint64][]byte

func (a attrMap) clone() attrMap {
	out := make(attrMap, len(a))
	for k, v := range a {
		out[k] = v
	}
	return out
}

// bool reads a CK_BBOOL attribute (false when absent or malformed).
func (a attrMap) bool(t uint64) bool {
	v := a[t]
	return len(v) == 1 && v[0] != 0
}

// ulong reads a CK_ULONG attribute.
func (a attrMap) ulong(t uint64) (uint64, bool) { return ck.ParseULong(a[t]) }

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

// describe names an attribute type for errors.
func describe(t uint64) string { return ck.Name("CKA_", t) }
