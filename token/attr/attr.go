// Package attr is the token's attribute model: the value kinds of
// attributes, their policy flags, the schemas of the object classes, and
// Map, an object's attributes by type. The state (package token) and the
// key types (token/mech) both build on it; it depends on nothing but the
// constants of token/ck.
package attr

import "github.com/modexp-token/modexp-token/token/ck"

// Kind is the value type of an attribute, used to validate lengths.
type Kind uint8

const (
	KindBytes Kind = iota // any byte string
	KindBool              // CK_BBOOL: 1 byte, 0 or 1
	KindULong             // CK_ULONG: 8 bytes
	KindDate              // CK_DATE: empty or 8 ASCII digits
	KindMechs             // CK_MECHANISM_TYPE_PTR: a multiple of 8 bytes
	KindAttrs             // CK_ATTRIBUTE_PTR: an attribute array (attrarray.go)
)

// Flag is a policy bit of an attribute.
type Flag uint16

const (
	// Required: must be given to C_CreateObject (CKR_TEMPLATE_INCOMPLETE).
	Required Flag = 1 << iota
	// TokenSet: set by the token only; a template naming it is
	// CKR_ATTRIBUTE_READ_ONLY (CKA_LOCAL, CKA_ALWAYS_SENSITIVE, ...).
	TokenSet
	// Fixed: cannot change after creation (C_SetAttributeValue answers
	// CKR_ATTRIBUTE_READ_ONLY).
	Fixed
	// CopyChange: fixed for C_SetAttributeValue but may be given in the
	// template of C_CopyObject (CKA_TOKEN, CKA_PRIVATE, CKA_MODIFIABLE).
	CopyChange
	// Secret: a private value of a key: stored sealed, and readable only if
	// the key is not sensitive and extractable.
	Secret
	// Generated: given by the token on key generation (CKA_MODULUS);
	// C_GenerateKeyPair templates naming it are CKR_ATTRIBUTE_READ_ONLY,
	// C_CreateObject templates must give it.
	Generated
)

// Spec is one attribute of a schema.
type Spec struct {
	Kind    Kind
	Flags   Flag
	Default []byte // default value when absent at creation (nil: no default)
}

// Has reports whether the attribute has flag f.
func (a Spec) Has(f Flag) bool { return a.Flags&f != 0 }

// Schema is the set of attributes an object type has.
type Schema map[uint64]Spec

// With is s with the attributes of layers added (a later layer wins).
func (s Schema) With(layers ...Schema) Schema {
	out := Schema{}
	for _, l := range append([]Schema{s}, layers...) {
		for k, v := range l {
			out[k] = v
		}
	}
	return out
}

var (
	// True, False and Empty are attribute values.
	True  = ck.Bool(true)
	False = ck.Bool(false)
	Empty = []byte{}
)

// StorageSchema is common to every object (PKCS#11 3.0 §4.4).
var StorageSchema = Schema{
	ck.CKA_CLASS:       {Kind: KindULong, Flags: Required | Fixed},
	ck.CKA_TOKEN:       {Kind: KindBool, Flags: Fixed | CopyChange, Default: False},
	ck.CKA_PRIVATE:     {Kind: KindBool, Flags: Fixed | CopyChange, Default: False},
	ck.CKA_MODIFIABLE:  {Kind: KindBool, Flags: Fixed | CopyChange, Default: True},
	ck.CKA_LABEL:       {Kind: KindBytes, Default: Empty},
	ck.CKA_COPYABLE:    {Kind: KindBool, Default: True},
	ck.CKA_DESTROYABLE: {Kind: KindBool, Default: True},
}

// DataSchema: CKO_DATA (§4.5).
var DataSchema = StorageSchema.With(Schema{
	ck.CKA_APPLICATION: {Kind: KindBytes, Default: Empty},
	ck.CKA_OBJECT_ID:   {Kind: KindBytes, Default: Empty},
	ck.CKA_VALUE:       {Kind: KindBytes, Default: Empty},
})

// certSchema: CKO_CERTIFICATE common attributes (§4.6.2) with the X.509
// public key certificate attributes (§4.6.3).
var CertX509Schema = StorageSchema.With(Schema{
	ck.CKA_CERTIFICATE_TYPE:           {Kind: KindULong, Flags: Required | Fixed},
	ck.CKA_TRUSTED:                    {Kind: KindBool, Default: False},
	ck.CKA_CERTIFICATE_CATEGORY:       {Kind: KindULong, Default: ck.ULong(0)}, // CK_CERTIFICATE_CATEGORY_UNSPECIFIED
	ck.CKA_CHECK_VALUE:                {Kind: KindBytes, Flags: TokenSet | Fixed},
	ck.CKA_START_DATE:                 {Kind: KindDate, Default: Empty},
	ck.CKA_END_DATE:                   {Kind: KindDate, Default: Empty},
	ck.CKA_PUBLIC_KEY_INFO:            {Kind: KindBytes, Default: Empty},
	ck.CKA_SUBJECT:                    {Kind: KindBytes, Flags: Required},
	ck.CKA_ID:                         {Kind: KindBytes, Default: Empty},
	ck.CKA_ISSUER:                     {Kind: KindBytes, Default: Empty},
	ck.CKA_SERIAL_NUMBER:              {Kind: KindBytes, Default: Empty},
	ck.CKA_VALUE:                      {Kind: KindBytes, Flags: Required | Fixed},
	ck.CKA_URL:                        {Kind: KindBytes, Default: Empty},
	ck.CKA_HASH_OF_SUBJECT_PUBLIC_KEY: {Kind: KindBytes, Default: Empty},
	ck.CKA_HASH_OF_ISSUER_PUBLIC_KEY:  {Kind: KindBytes, Default: Empty},
	ck.CKA_JAVA_MIDP_SECURITY_DOMAIN:  {Kind: KindULong, Default: ck.ULong(0)},
	ck.CKA_NAME_HASH_ALGORITHM:        {Kind: KindULong, Default: ck.ULong(ck.CKM_SHA_1)},
})

// keySchema: common key attributes (§4.7).
var keySchema = StorageSchema.With(Schema{
	ck.CKA_KEY_TYPE:           {Kind: KindULong, Flags: Required | Fixed},
	ck.CKA_ID:                 {Kind: KindBytes, Default: Empty},
	ck.CKA_START_DATE:         {Kind: KindDate, Default: Empty},
	ck.CKA_END_DATE:           {Kind: KindDate, Default: Empty},
	ck.CKA_DERIVE:             {Kind: KindBool, Default: False},
	ck.CKA_LOCAL:              {Kind: KindBool, Flags: TokenSet | Fixed},
	ck.CKA_KEY_GEN_MECHANISM:  {Kind: KindULong, Flags: TokenSet | Fixed},
	ck.CKA_ALLOWED_MECHANISMS: {Kind: KindMechs, Flags: Fixed, Default: Empty},
})

// PublicKeySchema: public key attributes (§4.8), key-type attributes added
// by the key type.
var PublicKeySchema = keySchema.With(Schema{
	ck.CKA_SUBJECT:         {Kind: KindBytes, Default: Empty},
	ck.CKA_ENCRYPT:         {Kind: KindBool, Default: True},
	ck.CKA_VERIFY:          {Kind: KindBool, Default: True},
	ck.CKA_VERIFY_RECOVER:  {Kind: KindBool, Default: False},
	ck.CKA_WRAP:            {Kind: KindBool, Default: False},
	ck.CKA_TRUSTED:         {Kind: KindBool, Default: False},
	ck.CKA_WRAP_TEMPLATE:   {Kind: KindAttrs, Default: Empty},
	ck.CKA_PUBLIC_KEY_INFO: {Kind: KindBytes, Flags: TokenSet | Fixed},
})

// PrivateKeySchema: private key attributes (§4.9).
var PrivateKeySchema = keySchema.With(Schema{
	ck.CKA_PRIVATE:             {Kind: KindBool, Flags: Fixed | CopyChange, Default: True},
	ck.CKA_SUBJECT:             {Kind: KindBytes, Default: Empty},
	ck.CKA_SENSITIVE:           {Kind: KindBool, Default: True},
	ck.CKA_DECRYPT:             {Kind: KindBool, Default: True},
	ck.CKA_SIGN:                {Kind: KindBool, Default: True},
	ck.CKA_SIGN_RECOVER:        {Kind: KindBool, Default: False},
	ck.CKA_UNWRAP:              {Kind: KindBool, Default: False},
	ck.CKA_EXTRACTABLE:         {Kind: KindBool, Default: False},
	ck.CKA_ALWAYS_SENSITIVE:    {Kind: KindBool, Flags: TokenSet | Fixed},
	ck.CKA_NEVER_EXTRACTABLE:   {Kind: KindBool, Flags: TokenSet | Fixed},
	ck.CKA_WRAP_WITH_TRUSTED:   {Kind: KindBool, Default: False},
	ck.CKA_ALWAYS_AUTHENTICATE: {Kind: KindBool, Flags: Fixed, Default: False},
	ck.CKA_UNWRAP_TEMPLATE:     {Kind: KindAttrs, Default: Empty},
	ck.CKA_DERIVE_TEMPLATE:     {Kind: KindAttrs, Default: Empty},
	ck.CKA_PUBLIC_KEY_INFO:     {Kind: KindBytes, Flags: TokenSet | Fixed},
})

// SecretKeySchema: secret key attributes (§4.10), CKA_VALUE and its length
// added by the key type (secretkey.go).
var SecretKeySchema = keySchema.With(Schema{
	ck.CKA_PRIVATE:           {Kind: KindBool, Flags: Fixed | CopyChange, Default: True},
	ck.CKA_SENSITIVE:         {Kind: KindBool, Default: True},
	ck.CKA_ENCRYPT:           {Kind: KindBool, Default: True},
	ck.CKA_DECRYPT:           {Kind: KindBool, Default: True},
	ck.CKA_SIGN:              {Kind: KindBool, Default: True},
	ck.CKA_VERIFY:            {Kind: KindBool, Default: True},
	ck.CKA_WRAP:              {Kind: KindBool, Default: False},
	ck.CKA_UNWRAP:            {Kind: KindBool, Default: False},
	ck.CKA_EXTRACTABLE:       {Kind: KindBool, Default: False},
	ck.CKA_ALWAYS_SENSITIVE:  {Kind: KindBool, Flags: TokenSet | Fixed},
	ck.CKA_NEVER_EXTRACTABLE: {Kind: KindBool, Flags: TokenSet | Fixed},
	ck.CKA_CHECK_VALUE:       {Kind: KindBytes, Flags: Fixed},
	ck.CKA_WRAP_WITH_TRUSTED: {Kind: KindBool, Default: False},
	ck.CKA_TRUSTED:           {Kind: KindBool, Default: False},
	ck.CKA_WRAP_TEMPLATE:     {Kind: KindAttrs, Default: Empty},
	ck.CKA_UNWRAP_TEMPLATE:   {Kind: KindAttrs, Default: Empty},
	ck.CKA_DERIVE_TEMPLATE:   {Kind: KindAttrs, Default: Empty},
})

// Map is an object's attributes by type.
type Map map[uint64][]byte

// Clone is a shallow copy of a.
func (a Map) Clone() Map {
	out := make(Map, len(a))
	for k, v := range a {
		out[k] = v
	}
	return out
}

// Bool reads a CK_BBOOL attribute (false when absent or malformed).
func (a Map) Bool(t uint64) bool {
	v := a[t]
	return len(v) == 1 && v[0] != 0
}

// ULong reads a CK_ULONG attribute.
func (a Map) ULong(t uint64) (uint64, bool) { return ck.ParseULong(a[t]) }

// Describe names an attribute type for errors.
func Describe(t uint64) string { return ck.Name("CKA_", t) }

// Attribute is one CK_ATTRIBUTE of a template.
type Attribute struct {
	Type  uint64
	Value []byte
}
