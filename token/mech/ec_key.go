package mech

// EC keys (CKK_EC): the schemas, the checks on import and generation, and
// the prepared forms kept per object snapshot.
//
//   - CKA_EC_PARAMS is the DER of a named-curve OBJECT IDENTIFIER (P-192,
//     P-224, P-256, P-384, P-521, secp256k1), or explicit parameters (a
//     SEQUENCE) that spell out one of these curves (ec_explicit.go; the
//     bytes are kept as given). An unknown OID, explicit parameters of
//     another curve, implicitlyCA (NULL) or a curve name (PrintableString)
//     are CKR_CURVE_NOT_SUPPORTED; bytes that are not one DER element are
//     CKR_ATTRIBUTE_VALUE_INVALID.
//   - CKA_EC_POINT is stored as a DER OCTET STRING holding the uncompressed
//     point. On import the bare point (as some clients send it) and the
//     compressed form are accepted too; the stored value is always the DER
//     of the uncompressed point. A point not on the curve (or a coordinate
//     not below p, or the point at infinity) is CKR_ATTRIBUTE_VALUE_INVALID.
//   - CKA_VALUE of a private key is the scalar d, stored sealed and
//     normalised to the order's byte length; d must be in [1, n−1]
//     (CKR_ATTRIBUTE_VALUE_INVALID). The public point is computed from d in
//     software and kept in the private object's CKA_EC_POINT (an extension
//     many tokens share: clients look there for the public key of a lone
//     private key); a CKA_EC_POINT given with the private key must equal it
//     (CKR_TEMPLATE_INCONSISTENT).
//   - Both keys get CKA_PUBLIC_KEY_INFO, the DER SubjectPublicKeyInfo
//     (id-ecPublicKey with the named curve).
//
// The key size in bits (CK_MECHANISM_INFO) of an EC key is the bit length
// of its curve's order: 192, 224, 256, 384, 521 (and 256 for secp256k1).

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"sync/atomic"

	"github.com/modexp-token/modexp-token/engine/alg/ecdsa"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
	"github.com/modexp-token/modexp-token/engine/guard"
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// ecPublicSchema and ecPrivateSchema are the attributes of the keys named
// by CKA_EC_PARAMS with a point in CKA_EC_POINT: CKK_EC and CKK_EC_EDWARDS.
var (
	ecPublicSchema = attr.PublicKeySchema.With(attr.Schema{
		ck.CKA_EC_PARAMS: {Kind: attr.KindBytes, Flags: attr.Required | attr.Fixed},
		ck.CKA_EC_POINT:  {Kind: attr.KindBytes, Flags: attr.Required | attr.Fixed | attr.Generated},
	})
	ecPrivateSchema = attr.PrivateKeySchema.With(attr.Schema{
		// Required on import; on generation taken from the public
		// template (given here too, it must be the same).
		ck.CKA_EC_PARAMS: {Kind: attr.KindBytes, Flags: attr.Required | attr.Fixed},
		ck.CKA_VALUE:     {Kind: attr.KindBytes, Flags: attr.Required | attr.Fixed | attr.Generated | attr.Secret},
		// Not in the standard's table: the public point, computed.
		ck.CKA_EC_POINT: {Kind: attr.KindBytes, Flags: attr.Fixed | attr.Generated},
	})
)

func init() {
	registerKeyType(&KeyType{
		typ:             ck.CKK_EC,
		PublicSchema:    ecPublicSchema,
		PrivateSchema:   ecPrivateSchema,
		CompletePublic:  CompleteECPublic,
		CompletePrivate: completeECPrivate,
		Bits: func(a attr.Map) int {
			c, err := ecCurveOf(a)
			if err != nil {
				return 0
			}
			return c.OrderBits()
		},
	})
}

// ecCurveOf returns the curve named by a key's CKA_EC_PARAMS.
func ecCurveOf(a attr.Map) (*ec.Curve, error) {
	params, ok := a[ck.CKA_EC_PARAMS]
	if !ok {
		return nil, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "CKA_EC_PARAMS missing")
	}
	return ecCurveByParams(params)
}

// ecCurveByParams decodes a CKA_EC_PARAMS value (see the file comment for
// the answers).
func ecCurveByParams(params []byte) (*ec.Curve, error) {
	if c, err := ec.CurveByOID(params); err == nil {
		return c, nil
	}
	var rv asn1.RawValue
	rest, err := asn1.Unmarshal(params, &rv)
	if err != nil || len(rest) != 0 {
		return nil, Invalid(ck.CKA_EC_PARAMS, "not one DER element")
	}
	switch {
	case rv.Class == asn1.ClassUniversal && rv.Tag == asn1.TagOID:
		return nil, ck.Errorf(ck.CKR_CURVE_NOT_SUPPORTED, "CKA_EC_PARAMS: curve OID %x not supported", params)
	case rv.Class == asn1.ClassUniversal && rv.Tag == asn1.TagSequence:
		if c := curveByExplicitParams(params); c != nil {
			return c, nil
		}
		return nil, ck.Errorf(ck.CKR_CURVE_NOT_SUPPORTED, "CKA_EC_PARAMS: explicit curve parameters of no curve this token has")
	case rv.Class == asn1.ClassUniversal && rv.Tag == asn1.TagNull:
		return nil, ck.Errorf(ck.CKR_CURVE_NOT_SUPPORTED, "CKA_EC_PARAMS: implicitlyCA not supported (named curves only)")
	case rv.Class == asn1.ClassUniversal && rv.Tag == asn1.TagPrintableString:
		return nil, ck.Errorf(ck.CKR_CURVE_NOT_SUPPORTED, "CKA_EC_PARAMS: curve %q not supported", rv.Bytes)
	}
	return nil, Invalid(ck.CKA_EC_PARAMS, "neither a named-curve OID nor curve parameters")
}

// ecPoint decodes a CKA_EC_POINT value on curve c.
func ecPoint(c *ec.Curve, v []byte) (x, y []byte, err error) {
	x, y, err = c.UnmarshalECPoint(v)
	if err != nil {
		return nil, nil, ck.Errorf(ck.CKR_ATTRIBUTE_VALUE_INVALID, "CKA_EC_POINT: not a point of %s: %v", c.Name(), err)
	}
	return x, y, nil
}

// OIDECPublicKey is id-ecPublicKey (RFC 5480).
var OIDECPublicKey = asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}

// ecSPKI is the DER SubjectPublicKeyInfo of a point on a named curve.
func ecSPKI(c *ec.Curve, x, y []byte) []byte {
	point := c.Marshal(x, y)
	der, err := asn1.Marshal(struct {
		Algorithm pkix.AlgorithmIdentifier
		PublicKey asn1.BitString
	}{
		Algorithm: pkix.AlgorithmIdentifier{Algorithm: OIDECPublicKey, Parameters: asn1.RawValue{FullBytes: c.OID()}},
		PublicKey: asn1.BitString{Bytes: point, BitLength: 8 * len(point)},
	})
	if err != nil {
		return []byte{}
	}
	return der
}

// CompleteECPublic checks the curve and the point of an EC public key and
// stores the point in its canonical form.
func CompleteECPublic(a attr.Map) error {
	c, err := ecCurveOf(a)
	if err != nil {
		return err
	}
	x, y, err := ecPoint(c, a[ck.CKA_EC_POINT])
	if err != nil {
		return err
	}
	a[ck.CKA_EC_POINT] = c.MarshalECPoint(x, y)
	a[ck.CKA_PUBLIC_KEY_INFO] = ecSPKI(c, x, y)
	return nil
}

// completeECPrivate checks the curve and the scalar of an EC private key,
// computes its public point (checking a given one against it) and stores
// the scalar at the order's byte length.
func completeECPrivate(a attr.Map) error {
	c, err := ecCurveOf(a)
	if err != nil {
		return err
	}
	d, err := ecScalar(c, a[ck.CKA_VALUE])
	if err != nil {
		return err
	}
	k, err := ecdsa.NewPrivateKey(c.Name(), d)
	clear(d)
	if err != nil {
		return Invalid(ck.CKA_VALUE, "not a private scalar of "+c.Name())
	}
	x, y := k.Public()
	if v, ok := a[ck.CKA_EC_POINT]; ok {
		gx, gy, err := ecPoint(c, v)
		if err != nil {
			return err
		}
		if !EqualCT(gx, x) || !EqualCT(gy, y) {
			return Inconsistent("CKA_EC_POINT does not match CKA_VALUE")
		}
	}
	a[ck.CKA_VALUE] = ecScalarBytes(c, a[ck.CKA_VALUE])
	a[ck.CKA_EC_POINT] = c.MarshalECPoint(x, y)
	a[ck.CKA_PUBLIC_KEY_INFO] = ecSPKI(c, x, y)
	return nil
}

// ecScalar returns a copy of v without its leading zero bytes, checking
// that it fits the order's byte length (the range check is
// ecdsa.NewPrivateKey's).
func ecScalar(c *ec.Curve, v []byte) ([]byte, error) {
	i := 0
	for i < len(v) && v[i] == 0 {
		i++
	}
	if i == len(v) || len(v)-i > c.OrderByteLen() {
		return nil, Invalid(ck.CKA_VALUE, "not a private scalar of "+c.Name())
	}
	return append([]byte(nil), v[i:]...), nil
}

// ecScalarBytes is v (a checked scalar) left-padded to the order's length.
func ecScalarBytes(c *ec.Curve, v []byte) []byte {
	n := c.OrderByteLen()
	out := make([]byte, n)
	for len(v) > n && v[0] == 0 {
		v = v[1:]
	}
	copy(out[n-len(v):], v)
	return out
}

// ecPrivateKey is an EC private key object prepared for signing: the
// checked key (with its public point and, after the first signature, the
// point's comb table) and the engines that compute k·G for its curve.
type ecPrivateKey struct {
	curve *ec.Curve
	key   *ecdsa.PrivateKey
	route guard.ECRoute // the engines of its curve
}

// ecPublicKey is an EC public key object prepared for verification.
type ecPublicKey struct {
	curve *ec.Curve
	x, y  []byte
	pub   *ec.PublicKey
	uses  atomic.Uint64 // verifications so far: the comb table pays from the second
}

// ecPublicTableAfter is the number of verifications done without the
// public point's comb table (building it costs about two verifications;
// keys imported to verify once, like Wycheproof's, never pay for it).
const ecPublicTableAfter = 1

// errCurveNotServed reports a key on a curve the slot cannot sign on.
var errCurveNotServed = errors.New("curve not served by the slot's engine")

// preparedECPrivate returns the EC private key of o prepared for the
// slot's engines, preparing it once per snapshot.
func preparedECPrivate(s Slot, o Key) (*ecPrivateKey, error) {
	if k, ok := cachedKey[*ecPrivateKey](o); ok {
		return k, nil
	}
	return preparedKey(o, func() error { return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "private values of the key are sealed") }, func() (*ecPrivateKey, error) {
		c, err := ecCurveOf(o.Attrs())
		if err != nil {
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored EC key without a usable curve: %v", err)
		}
		rt, ok := s.Guard().EC(c.Name())
		if !ok {
			return nil, ck.Errorf(ck.CKR_MECHANISM_INVALID, "ECDSA on %s: %v (%s, fallback %s)", c.Name(), errCurveNotServed,
				s.EngineName(), s.Policy().Fallback)
		}
		key, err := ecdsa.NewPrivateKey(c.Name(), o.Attrs()[ck.CKA_VALUE])
		if err != nil {
			s.Log().Error("stored EC key rejected by engine/alg/ecdsa", "object", o.Handle(), "err", err)
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored EC key: %v", err)
		}
		if v, ok := o.Attrs()[ck.CKA_EC_POINT]; ok {
			x, y := key.Public()
			if string(v) != string(c.MarshalECPoint(x, y)) {
				s.Log().Error("stored EC key inconsistent with its point", "object", o.Handle())
				return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored EC key does not match its CKA_EC_POINT")
			}
		}
		k := &ecPrivateKey{curve: c, key: key, route: rt}
		return k, nil
	})
}

// preparedECPublic returns the EC public key of o prepared for
// verification, once per snapshot.
func preparedECPublic(s Slot, o Key) (*ecPublicKey, error) {
	return preparedKey(o, nil, func() (*ecPublicKey, error) {
		c, err := ecCurveOf(o.Attrs())
		if err != nil {
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored EC key without a usable curve: %v", err)
		}
		x, y, err := c.UnmarshalECPoint(o.Attrs()[ck.CKA_EC_POINT])
		if err != nil {
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored EC key without a usable point: %v", err)
		}
		pub, err := c.NewPublicKey(x, y)
		if err != nil {
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored EC key: %v", err)
		}
		k := &ecPublicKey{curve: c, x: x, y: y, pub: pub}
		return k, nil
	})
}

// Verify checks a raw r‖s signature of hash (CKR_SIGNATURE_LEN_RANGE,
// CKR_SIGNATURE_INVALID).
func (k *ecPublicKey) Verify(hash, sig []byte) error {
	if want := 2 * k.curve.OrderByteLen(); len(sig) != want {
		return ck.Errorf(ck.CKR_SIGNATURE_LEN_RANGE, "ECDSA signature of %d bytes, %s needs %d", len(sig), k.curve.Name(), want)
	}
	var err error
	if k.uses.Add(1) > ecPublicTableAfter {
		err = k.pub.ECDSAVerifyVarTime(hash, sig)
	} else {
		err = k.curve.ECDSAVerifyVarTime(k.x, k.y, hash, sig)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ec.ErrInvalidSignature):
		return ck.Errorf(ck.CKR_SIGNATURE_INVALID, "ECDSA signature does not verify")
	}
	return ck.Errorf(ck.CKR_FUNCTION_FAILED, "ECDSA verify: %v", err)
}
