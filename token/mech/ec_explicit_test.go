package mech

import (
	"crypto/elliptic"
	"encoding/asn1"
	"math/big"
	"os"
	"path/filepath"
	"testing"
)

// explicitDER writes X9.62 explicit parameters from crypto/elliptic's
// constants (an independent source) with a = −3; edit changes them first.
func explicitDER(t *testing.T, c elliptic.Curve, edit func(e *explicitECParams)) []byte {
	t.Helper()
	p := c.Params()
	size := (p.BitSize + 7) / 8
	var e explicitECParams
	e.Version = 1
	e.FieldID.FieldType = oidPrimeField
	e.FieldID.Prime = p.P
	e.Curve.A = new(big.Int).Sub(p.P, big.NewInt(3)).FillBytes(make([]byte, size))
	e.Curve.B = p.B.FillBytes(make([]byte, size))
	e.Base = elliptic.Marshal(c, p.Gx, p.Gy)
	e.Order = p.N
	e.Cofactor = big.NewInt(1)
	if edit != nil {
		edit(&e)
	}
	der, err := asn1.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func TestECExplicitParams(t *testing.T) {
	for _, tc := range []struct {
		curve elliptic.Curve
		name  string
	}{{elliptic.P224(), "P-224"}, {elliptic.P256(), "P-256"}, {elliptic.P384(), "P-384"}, {elliptic.P521(), "P-521"}} {
		c, err := ecCurveByParams(explicitDER(t, tc.curve, nil))
		if err != nil || c.Name() != tc.name {
			t.Errorf("%s explicit: %v, %v", tc.name, c, err)
		}
		// Compressed base point, and no cofactor: the same curve.
		der := explicitDER(t, tc.curve, func(e *explicitECParams) {
			p := tc.curve.Params()
			e.Base = elliptic.MarshalCompressed(tc.curve, p.Gx, p.Gy)
			e.Cofactor = nil
		})
		if c, err := ecCurveByParams(der); err != nil || c.Name() != tc.name {
			t.Errorf("%s explicit, compressed G: %v, %v", tc.name, c, err)
		}
	}
	bad := map[string]func(e *explicitECParams){
		"b":        func(e *explicitECParams) { e.Curve.B[len(e.Curve.B)-1] ^= 1 },
		"a":        func(e *explicitECParams) { e.Curve.A = []byte{0} },
		"order":    func(e *explicitECParams) { e.Order = new(big.Int).Add(e.Order, big.NewInt(2)) },
		"cofactor": func(e *explicitECParams) { e.Cofactor = big.NewInt(4) },
		"version":  func(e *explicitECParams) { e.Version = 2 },
		"field":    func(e *explicitECParams) { e.FieldID.FieldType = asn1.ObjectIdentifier{1, 2, 840, 10045, 1, 2} },
		"base": func(e *explicitECParams) {
			e.Base = elliptic.Marshal(elliptic.P256(), elliptic.P256().Params().Gx, elliptic.P256().Params().Gy)[:10]
		},
	}
	for name, edit := range bad {
		if c, err := ecCurveByParams(explicitDER(t, elliptic.P256(), edit)); err == nil {
			t.Errorf("explicit P-256 with a wrong %s: accepted as %s", name, c.Name())
		}
	}
}

// TestECExplicitParamsOpenSSL: the explicit parameters OpenSSL writes
// (testdata/explicit_ec, made by `openssl ecparam -name NAME -param_enc
// explicit -outform DER`, with the curve's seed) name the token's curves.
func TestECExplicitParamsOpenSSL(t *testing.T) {
	for file, want := range map[string]string{"prime192v1": "P-192", "secp224r1": "P-224", "prime256v1": "P-256",
		"secp384r1": "P-384", "secp521r1": "P-521", "secp256k1": "secp256k1"} {
		der, err := os.ReadFile(filepath.Join("testdata", "explicit_ec", file+".der"))
		if err != nil {
			t.Fatal(err)
		}
		if c, err := ecCurveByParams(der); err != nil || c.Name() != want {
			t.Errorf("%s: %v, %v; want %s", file, c, err, want)
		}
	}
}
