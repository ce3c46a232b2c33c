package token

// Key types: the attributes and the consistency rules of each kind of key.
// Each key type is one entry in keyTypes, registered by its own file
// (rsa_key.go, ec_key.go, dsa_key.go, dh_key.go, secretkey.go ...) with its
// schemas and completion functions; mechanisms name the key types they
// accept.

import (
	"math/big"

	"github.com/modexp-token/modexp-token/token/ck"
)

// keyType is what the token knows of one kind of key: an asymmetric key
// type has a public and a private schema, a secret key type (secret true,
// secretkey.go) a secret schema.
type keyType struct {
	typ           uint64
	publicSchema  schema
	privateSchema schema
	// secret: a CKO_SECRET_KEY type, described by secretSchema and
	// completed by completeSecret.
	secret         bool
	secretSchema   schema
	completeSecret func(a attrMap) error
	// completePublic checks a public key template's values and adds the
	// attributes derived from them. Errors carry a CKR code.
	completePublic func(a attrMap) error
	// completePrivate does the same for a private key (computing missing
	// CRT values for RSA).
	completePrivate func(a attrMap) error
	// bits is the key size as CK_MECHANISM_INFO counts it.
	bits func(a attrMap) int
	// domainSchema, if not nil, describes CKO_DOMAIN_PARAMETERS objects of
	// this key type, checked and completed by completeDomain (domain.go).
	domainSchema   schema
	completeDomain func(a attrMap) error
}

// keyTypes is the registry of key types by CKK_ value.
var keyTypes = map[uint64]*keyType{}

func registerKeyType(kt *keyType) { keyTypes[kt.typ] = kt }

func invalid(t uint64, why string) error {
	return ck.Errorf(ck.CKR_ATTRIBUTE_VALUE_INVALID, "%s: %s", describe(t), why)
}

func inconsistent(why string) error { return ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "%s", why) }

// bigAttr reads an optional big-endian integer attribute.
func bigAttr(a attrMap, t uint64) (*big.Int, bool) {
	v, ok := a[t]
	if !ok {
		return nil, false
	}
	return new(big.Int).SetBytes(v), true
}
