package mech

// DSA keys (CKK_DSA) and, in dsa.go, the mechanisms:
// CKM_DSA_KEY_PAIR_GEN, CKM_DSA and CKM_DSA_SHA1..SHA512.
//
//   - Both keys carry the domain parameters CKA_PRIME, CKA_SUBPRIME and
//     CKA_BASE, checked by engine/alg/dsa (a FIPS 186-4 size (L, N) = (1024,
//     160), (2048, 224), (2048, 256) or (3072, 256), primes, q | p−1, g of
//     order q): a bad set is CKR_ATTRIBUTE_VALUE_INVALID on import and
//     CKR_DOMAIN_PARAMS_INVALID at generation.
//   - The public key's CKA_VALUE is y, which must be in the subgroup of
//     order q; the private key's CKA_VALUE is x in [1, q−1], stored sealed
//     (fSecret) like the RSA private values, at q's byte length.
//   - Both keys get CKA_PUBLIC_KEY_INFO, the DER SubjectPublicKeyInfo
//     (id-dsa with Dss-Parms, RFC 3279).
//   - The key size (CK_MECHANISM_INFO) is the bit length of p.
//
// Signatures are r‖s, each half the byte length of q (40, 56 or 64
// bytes). CKM_DSA signs its input as the hash (1 to 64 bytes, truncated to
// q's bit length) and is single-part; CKM_DSA_SHA* hash the data.
//
// The secret exponentiation g^k of every signature, and g^x at key
// generation, run on the slot's engine through engine/alg/dsa (exponent
// blinded, every signature verified with y before release). A wrong
// result counts as a fault (EngineStatus.Faults) and answers
// CKR_DEVICE_ERROR or, with fallback "soft", is redone in software. An
// engine whose MaxModulusBits is below p's length serves the key only
// with fallback "soft" (which then signs); otherwise CKR_KEY_SIZE_RANGE.

import (
	"bytes"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"math/big"

	"github.com/modexp-token/modexp-token/engine/alg/dsa"
	"github.com/modexp-token/modexp-token/engine/guard"
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// DSA key sizes of the mechanisms (bits of p).
const (
	dsaMinBits = 1024
	dsaMaxBits = 3072
)

func init() {
	domain := attr.Spec{Kind: attr.KindBytes, Flags: attr.Required | attr.Fixed}
	registerKeyType(&KeyType{
		typ: ck.CKK_DSA,
		PublicSchema: attr.PublicKeySchema.With(attr.Schema{
			ck.CKA_PRIME: domain, ck.CKA_SUBPRIME: domain, ck.CKA_BASE: domain,
			ck.CKA_VALUE: {Kind: attr.KindBytes, Flags: attr.Required | attr.Fixed | attr.Generated},
		}),
		PrivateSchema: attr.PrivateKeySchema.With(attr.Schema{
			// Required on import; on generation taken from the public
			// template (given here too, they must be the same).
			ck.CKA_PRIME: domain, ck.CKA_SUBPRIME: domain, ck.CKA_BASE: domain,
			ck.CKA_VALUE: {Kind: attr.KindBytes, Flags: attr.Required | attr.Fixed | attr.Generated | attr.Secret},
		}),
		CompletePublic:  CompleteDSAPublic,
		CompletePrivate: completeDSAPrivate,
		DomainSchema:    dsaDomainSchema,
		CompleteDomain:  completeDSADomain,
		Bits:            func(a attr.Map) int { return new(big.Int).SetBytes(a[ck.CKA_PRIME]).BitLen() },
	})
}

// dsaParamsOf reads the domain parameters of a template or object
// (CKR_TEMPLATE_INCOMPLETE if one is missing) and checks them; a bad set
// is answered with code.
func dsaParamsOf(a attr.Map, code ck.Error) (*dsa.Parameters, error) {
	var v [3]*big.Int
	for i, t := range []uint64{ck.CKA_PRIME, ck.CKA_SUBPRIME, ck.CKA_BASE} {
		b, ok := a[t]
		if !ok {
			return nil, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "%s missing", attr.Describe(t))
		}
		v[i] = new(big.Int).SetBytes(b)
	}
	p := &dsa.Parameters{P: v[0], Q: v[1], G: v[2]}
	if err := dsa.CheckParameters(p); err != nil {
		return nil, ck.Errorf(code, "DSA domain parameters: %v", err)
	}
	return p, nil
}

// oidDSA is id-dsa (RFC 3279).
var oidDSA = asn1.ObjectIdentifier{1, 2, 840, 10040, 4, 1}

// dsaSPKI is the DER SubjectPublicKeyInfo of a DSA public key.
func dsaSPKI(p *dsa.Parameters, y *big.Int) []byte {
	return integerSPKI(oidDSA, struct{ P, Q, G *big.Int }{p.P, p.Q, p.G}, y)
}

// integerSPKI is the DER SubjectPublicKeyInfo of a public value y that is
// an INTEGER (DSA, DH), with the algorithm's parameters (a structure for
// encoding/asn1); empty if they cannot be encoded.
func integerSPKI(oid asn1.ObjectIdentifier, params any, y *big.Int) []byte {
	pDER, err := asn1.Marshal(params)
	if err != nil {
		return []byte{}
	}
	yDER, err := asn1.Marshal(y)
	if err != nil {
		return []byte{}
	}
	der, err := asn1.Marshal(struct {
		Algorithm pkix.AlgorithmIdentifier
		PublicKey asn1.BitString
	}{
		Algorithm: pkix.AlgorithmIdentifier{Algorithm: oid, Parameters: asn1.RawValue{FullBytes: pDER}},
		PublicKey: asn1.BitString{Bytes: yDER, BitLength: 8 * len(yDER)},
	})
	if err != nil {
		return []byte{}
	}
	return der
}

// CompleteDSAPublic checks a DSA public key template against its
// parameters.
func CompleteDSAPublic(a attr.Map) error {
	p, err := dsaParamsOf(a, ck.CKR_ATTRIBUTE_VALUE_INVALID)
	if err != nil {
		return err
	}
	y := new(big.Int).SetBytes(a[ck.CKA_VALUE])
	if err := dsa.CheckPublic(p, y); err != nil {
		return Invalid(ck.CKA_VALUE, err.Error())
	}
	a[ck.CKA_VALUE] = y.Bytes()
	a[ck.CKA_PUBLIC_KEY_INFO] = dsaSPKI(p, y)
	return nil
}

func completeDSAPrivate(a attr.Map) error {
	p, err := dsaParamsOf(a, ck.CKR_ATTRIBUTE_VALUE_INVALID)
	if err != nil {
		return err
	}
	y, err := dsa.PublicValue(p, a[ck.CKA_VALUE])
	if err != nil {
		return Invalid(ck.CKA_VALUE, "not a private value in [1, q−1]")
	}
	x := a[ck.CKA_VALUE]
	qLen := (p.Q.BitLen() + 7) / 8
	for len(x) > qLen && x[0] == 0 {
		x = x[1:]
	}
	a[ck.CKA_VALUE] = leftPad(bytes.Clone(x), qLen)
	a[ck.CKA_PUBLIC_KEY_INFO] = dsaSPKI(p, y)
	return nil
}

// dsaPrivateKey is a DSA private key object prepared for signing.
type dsaPrivateKey struct {
	key  *guard.DSAKey
	bits int
}

// dsaPublicKey is a checked DSA public key object, prepared for
// verification.
type dsaPublicKey struct {
	params *dsa.Parameters
	pub    *dsa.PublicKey
}

// preparedDSAPrivate returns the DSA key of o prepared for the slot's
// engines, once per object snapshot.
func preparedDSAPrivate(s Slot, o Key) (*dsaPrivateKey, error) {
	var p *dsa.Parameters
	return prepareExpKey(s, o, "DSA", func() (int, error) {
		var err error
		p, err = dsaParamsOf(o.Attrs(), ck.CKR_KEY_TYPE_INCONSISTENT)
		if err != nil {
			return 0, err
		}
		return p.P.BitLen(), nil
	}, func(rt guard.ExpRoute) (*dsaPrivateKey, error) {
		key, err := rt.DSAKey(p, o.Attrs()[ck.CKA_VALUE])
		if err != nil {
			return nil, err
		}
		return &dsaPrivateKey{key: key, bits: p.P.BitLen()}, nil
	}, dsa.ErrInvalidKey, dsa.ErrInvalidParameters)
}

// prepareExpKey returns o's DSA or DH private key (K) prepared once per
// object snapshot: the private values must be unsealed, params reads the
// key's parameters and returns p's bit length, the slot's guard gives the
// route for that size (CKR_KEY_SIZE_RANGE without one) and build makes the
// key on it. A key that build rejects with one of the rejected errors is
// CKR_KEY_TYPE_INCONSISTENT (logged: a stored key engine/alg/dsa or engine/alg/dh
// refuses); other errors are the engine's.
func prepareExpKey[K any](s Slot, o Key, kind string, params func() (int, error),
	build func(rt guard.ExpRoute) (K, error), rejected ...error) (K, error) {
	var zero K
	return preparedKey(o, func() error {
		return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "private values of the key are sealed")
	}, func() (K, error) {
		bits, err := params()
		if err != nil {
			return zero, err
		}
		rt, ok := s.Guard().Exp(bits)
		if !ok {
			return zero, ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "%d-bit %s key: the engine %s takes at most %d bits (fallback %s)",
				bits, kind, s.EngineName(), s.Guard().MaxExpBits(), s.Policy().Fallback)
		}
		k, err := build(rt)
		if err != nil {
			for _, r := range rejected {
				if errors.Is(err, r) {
					s.Log().Error("stored "+kind+" key rejected", "object", o.Handle(), "err", err)
					return zero, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored %s key: %v", kind, err)
				}
			}
			return zero, s.EngineErr("prepare "+kind+" key", err)
		}
		return k, nil
	})
}

// preparedDSAPublic returns the checked public key of o, once per
// snapshot.
func preparedDSAPublic(s Slot, o Key) (*dsaPublicKey, error) {
	return preparedKey(o, nil, func() (*dsaPublicKey, error) {
		p, err := dsaParamsOf(o.Attrs(), ck.CKR_KEY_TYPE_INCONSISTENT)
		if err != nil {
			return nil, err
		}
		pub, err := dsa.NewPublicKey(p, new(big.Int).SetBytes(o.Attrs()[ck.CKA_VALUE]))
		if err != nil {
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored DSA public key: %v", err)
		}
		k := &dsaPublicKey{params: p, pub: pub}
		return k, nil
	})
}
