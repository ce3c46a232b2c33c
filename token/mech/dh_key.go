package mech

// Diffie–Hellman keys (CKK_DH, PKCS #3) and, in dh.go, the
// mechanisms: CKM_DH_PKCS_KEY_PAIR_GEN and CKM_DH_PKCS_DERIVE.
//
//   - Both keys carry CKA_PRIME and CKA_BASE, checked by engine/alg/dh: the
//     RFC 7919 groups ffdhe2048/3072/4096 are recognised by their prime
//     (with g = 2), and so is any safe prime whose base has order q; other
//     primes of 1024 to 8192 bits are accepted without a known q. A bad
//     group is CKR_ATTRIBUTE_VALUE_INVALID on import,
//     CKR_DOMAIN_PARAMS_INVALID at generation.
//   - The public key's CKA_VALUE is y: 1 < y < p−1, and in the subgroup of
//     order q when q is known. The private key's CKA_VALUE is x (sealed),
//     in [1, q−1] (or [1, p−2]); its CKA_VALUE_BITS is x's bit length. At
//     generation CKA_VALUE_BITS in the private template asks for an x of
//     exactly that many bits; otherwise x has twice the group's strength
//     in bits for an RFC 7919 group (225 for ffdhe2048, RFC 7919 §5.2 and
//     OpenSSL's default) and is uniform in the range for other groups.
//   - Both keys get CKA_PUBLIC_KEY_INFO (dhKeyAgreement, PKCS #3).
//   - CKM_DH_PKCS_DERIVE takes the peer's public value as its parameter
//     (big-endian bytes), checks it like an imported y (a bad one is
//     CKR_MECHANISM_PARAM_INVALID), and makes a secret key (C_DeriveKey's
//     rules, token/derive.go) from Z = y^x mod p, given at the length of p.
//     A shorter key (CKA_VALUE_LEN, or an AES key type) takes the last
//     bytes of Z (the least significant ones), as SoftHSMv2 does.
//
// Both exponentiations with x (g^x at generation, y^x at derivation) run on
// the slot's engine through engine/alg/dh, blinded and checked before release
// (a wrong result: a fault, CKR_DEVICE_ERROR or the software fallback).

import (
	"encoding/asn1"
	"math/big"

	"github.com/modexp-token/modexp-token/engine/alg/dh"
	"github.com/modexp-token/modexp-token/engine/guard"
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// DH key sizes of the mechanisms (bits of p).
const (
	dhMinBits = dh.MinBits
	dhMaxBits = dh.MaxBits
)

func init() {
	domain := attr.Spec{Kind: attr.KindBytes, Flags: attr.Required | attr.Fixed}
	registerKeyType(&KeyType{
		typ: ck.CKK_DH,
		PublicSchema: attr.PublicKeySchema.With(attr.Schema{
			ck.CKA_PRIME: domain, ck.CKA_BASE: domain,
			ck.CKA_VALUE: {Kind: attr.KindBytes, Flags: attr.Required | attr.Fixed | attr.Generated},
		}),
		PrivateSchema: attr.PrivateKeySchema.With(attr.Schema{
			ck.CKA_PRIME: domain, ck.CKA_BASE: domain,
			ck.CKA_VALUE:      {Kind: attr.KindBytes, Flags: attr.Required | attr.Fixed | attr.Generated | attr.Secret},
			ck.CKA_VALUE_BITS: {Kind: attr.KindULong, Flags: attr.Fixed},
		}),
		CompletePublic:  CompleteDHPublic,
		CompletePrivate: completeDHPrivate,
		DomainSchema:    dhDomainSchema,
		CompleteDomain:  completeDHDomain,
		Bits:            func(a attr.Map) int { return new(big.Int).SetBytes(a[ck.CKA_PRIME]).BitLen() },
	})
}

// dhGroupOf reads and checks CKA_PRIME and CKA_BASE; a bad group is
// answered with code.
func dhGroupOf(a attr.Map, code ck.Error) (*dh.Group, error) {
	var v [2]*big.Int
	for i, t := range []uint64{ck.CKA_PRIME, ck.CKA_BASE} {
		b, ok := a[t]
		if !ok {
			return nil, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "%s missing", attr.Describe(t))
		}
		v[i] = new(big.Int).SetBytes(b)
	}
	g, err := dh.LookupGroup(v[0], v[1])
	if err != nil {
		return nil, ck.Errorf(code, "DH domain parameters: %v", err)
	}
	return g, nil
}

// oidDHKeyAgreement is dhKeyAgreement (PKCS #3).
var oidDHKeyAgreement = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 3, 1}

// dhSPKI is the DER SubjectPublicKeyInfo of a DH public value.
func dhSPKI(g *dh.Group, y []byte) []byte {
	return integerSPKI(oidDHKeyAgreement, struct{ P, G *big.Int }{g.P, g.G}, new(big.Int).SetBytes(y))
}

// CompleteDHPublic checks a DH public key template against its group.
func CompleteDHPublic(a attr.Map) error {
	g, err := dhGroupOf(a, ck.CKR_ATTRIBUTE_VALUE_INVALID)
	if err != nil {
		return err
	}
	if err := dh.CheckPublic(g, a[ck.CKA_VALUE]); err != nil {
		return Invalid(ck.CKA_VALUE, err.Error())
	}
	y := new(big.Int).SetBytes(a[ck.CKA_VALUE]).Bytes()
	a[ck.CKA_VALUE] = y
	a[ck.CKA_PUBLIC_KEY_INFO] = dhSPKI(g, y)
	return nil
}

func completeDHPrivate(a attr.Map) error {
	g, err := dhGroupOf(a, ck.CKR_ATTRIBUTE_VALUE_INVALID)
	if err != nil {
		return err
	}
	y, err := dh.PublicValue(g, a[ck.CKA_VALUE])
	if err != nil {
		return Invalid(ck.CKA_VALUE, "private value out of range")
	}
	x := new(big.Int).SetBytes(a[ck.CKA_VALUE]) // range-checked above; the length is public
	if v, ok := a[ck.CKA_VALUE_BITS]; ok {
		if bits, _ := ck.ParseULong(v); bits != uint64(x.BitLen()) {
			return Inconsistent("CKA_VALUE_BITS does not match CKA_VALUE")
		}
	}
	a[ck.CKA_VALUE_BITS] = ck.ULong(uint64(x.BitLen()))
	a[ck.CKA_PUBLIC_KEY_INFO] = dhSPKI(g, y)
	return nil
}

// dhPrivateKey is a DH private key object prepared for derivation.
type dhPrivateKey struct {
	key  *guard.DHKey
	bits int
}

// preparedDHPrivate returns the DH key of o prepared for the slot's
// engines, once per object snapshot.
func preparedDHPrivate(s Slot, o Key) (*dhPrivateKey, error) {
	var g *dh.Group
	return prepareExpKey(s, o, "DH", func() (int, error) {
		var err error
		g, err = dhGroupOf(o.Attrs(), ck.CKR_KEY_TYPE_INCONSISTENT)
		if err != nil {
			return 0, err
		}
		return g.P.BitLen(), nil
	}, func(rt guard.ExpRoute) (*dhPrivateKey, error) {
		// CKA_VALUE_BITS (x's bit length, public) lets a short x take
		// engine/alg/dh's split exponents.
		vb, _ := ck.ParseULong(o.Attrs()[ck.CKA_VALUE_BITS])
		key, err := rt.DHKey(g, o.Attrs()[ck.CKA_VALUE], dh.Options{ValueBits: int(min(vb, dhMaxBits))})
		if err != nil {
			return nil, err
		}
		return &dhPrivateKey{key: key, bits: g.P.BitLen()}, nil
	}, dh.ErrInvalidKey, dh.ErrInvalidParameters)
}
