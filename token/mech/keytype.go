package mech

// Key types: the attributes and the consistency rules of each kind of key.
// Each key type is one entry in keyTypes, registered by its own file
// (rsa_key.go, ec_key.go, dsa_key.go, dh_key.go, token/secretkey.go ...) with its
// schemas and completion functions; mechanisms name the key types they
// accept.

import (
	"math/big"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// KeyType is what the token knows of one kind of key: an asymmetric key
// type has a public and a private schema, a secret key type (secret true,
// token/secretkey.go) a secret schema.
type KeyType struct {
	typ           uint64
	PublicSchema  attr.Schema
	PrivateSchema attr.Schema
	// Secret: a CKO_SECRET_KEY type, described by secretSchema and
	// completed by completeSecret.
	Secret         bool
	SecretSchema   attr.Schema
	CompleteSecret func(a attr.Map) error
	// CompletePublic checks a public key template's values and adds the
	// attributes derived from them. Errors carry a CKR code.
	CompletePublic func(a attr.Map) error
	// CompletePrivate does the same for a private key (computing missing
	// CRT values for RSA).
	CompletePrivate func(a attr.Map) error
	// Bits is the key size as CK_MECHANISM_INFO counts it.
	Bits func(a attr.Map) int
	// DomainSchema, if not nil, describes CKO_DOMAIN_PARAMETERS objects of
	// this key type, checked and completed by completeDomain (token/domain.go).
	DomainSchema   attr.Schema
	CompleteDomain func(a attr.Map) error
}

// KeyTypes is the registry of key types by CKK_ value.
var KeyTypes = map[uint64]*KeyType{}

func registerKeyType(kt *KeyType) { KeyTypes[kt.typ] = kt }

// Invalid is CKR_ATTRIBUTE_VALUE_INVALID for attribute t.
func Invalid(t uint64, why string) error {
	return ck.Errorf(ck.CKR_ATTRIBUTE_VALUE_INVALID, "%s: %s", attr.Describe(t), why)
}

// Inconsistent is CKR_TEMPLATE_INCONSISTENT.
func Inconsistent(why string) error { return ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "%s", why) }

// bigAttr reads an optional big-endian integer attribute.
func bigAttr(a attr.Map, t uint64) (*big.Int, bool) {
	v, ok := a[t]
	if !ok {
		return nil, false
	}
	return new(big.Int).SetBytes(v), true
}
