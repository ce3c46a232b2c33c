package token

import "github.com/modexp-token/modexp-token/token/ck"

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

// describe names an attribute type for errors.
func describe(t uint64) string { return ck.Name("CKA_", t) }

// Attribute is one CK_ATTRIBUTE of a template.
type Attribute struct {
	Type  uint64
	Value []byte
}
