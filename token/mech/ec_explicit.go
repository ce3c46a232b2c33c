package mech

// Explicit EC domain parameters in CKA_EC_PARAMS (the specifiedCurve
// choice of X9.62 ECParameters, RFC 3279 §2.3.5): OpenSSL writes them for
// a key saved with explicit parameters, and clients (python-pkcs11's
// suite, pkcs11-provider's) import such keys. They are accepted when they
// describe, field element for field element, a curve this token has: the
// key then works on that named curve, and its CKA_EC_PARAMS keeps the bytes
// the client gave.

import (
	"encoding/asn1"
	"math/big"

	"github.com/modexp-token/modexp-token/engine/arith/ec"
)

// oidPrimeField is prime-field (X9.62 §E.1, 1.2.840.10045.1.1).
var oidPrimeField = asn1.ObjectIdentifier{1, 2, 840, 10045, 1, 1}

// explicitECParams is X9.62 ECParameters with a prime field.
type explicitECParams struct {
	Version int
	FieldID struct {
		FieldType asn1.ObjectIdentifier
		Prime     *big.Int
	}
	Curve struct {
		A, B []byte
		Seed asn1.BitString `asn1:"optional"`
	}
	Base     []byte
	Order    *big.Int
	Cofactor *big.Int `asn1:"optional"`
}

// curveByExplicitParams returns the named curve whose domain parameters
// der spells out, or nil when der is not well-formed explicit parameters
// of a prime-field curve this token has. All the values are public.
func curveByExplicitParams(der []byte) *ec.Curve {
	var e explicitECParams
	rest, err := asn1.Unmarshal(der, &e)
	if err != nil || len(rest) != 0 || e.Version != 1 || !e.FieldID.FieldType.Equal(oidPrimeField) ||
		e.FieldID.Prime == nil || e.Order == nil {
		return nil
	}
	if e.Cofactor != nil && e.Cofactor.Cmp(big.NewInt(1)) != 0 {
		return nil
	}
	for _, c := range ec.Curves() {
		p := c.Params()
		if p.P.Cmp(e.FieldID.Prime) != 0 || p.N.Cmp(e.Order) != 0 {
			continue
		}
		a := new(big.Int).Mod(big.NewInt(p.A), p.P)
		if new(big.Int).SetBytes(e.Curve.A).Cmp(a) != 0 || new(big.Int).SetBytes(e.Curve.B).Cmp(p.B) != 0 {
			return nil
		}
		x, y, err := c.Unmarshal(e.Base)
		if err != nil || new(big.Int).SetBytes(x).Cmp(p.Gx) != 0 || new(big.Int).SetBytes(y).Cmp(p.Gy) != 0 {
			return nil
		}
		return c
	}
	return nil
}
