package mech

// X25519 and X448 keys (CKK_EC_MONTGOMERY, RFC 7748): the key type, its
// CKA_EC_PARAMS and CKA_EC_POINT encodings, and the private key prepared
// for agreement. The mechanisms are CKM_EC_MONTGOMERY_KEY_PAIR_GEN
// (xdh.go) and CKM_ECDH1_DERIVE (ecdh.go, which hands these keys
// to xdhShared).
//
//   - CKA_EC_PARAMS names the curve by OID (id-X25519 1.3.101.110,
//     id-X448 1.3.101.111) or by the PrintableString "curve25519" /
//     "curve448", as PKCS#11 3.0 allows; the value is kept as given.
//     pkcs11-tool 0.23 (OpenSC) sends the name with a length one byte too
//     long (13 0b "curve25519", 13 09 "curve448"): that exact encoding is
//     taken as the name too. Other
//     curves are CKR_CURVE_NOT_SUPPORTED, bytes that are not one DER
//     element CKR_ATTRIBUTE_VALUE_INVALID.
//   - CKA_EC_POINT is the DER OCTET STRING of the u-coordinate (32 or 56
//     bytes, little-endian); the bare bytes are accepted on import and
//     stored wrapped.
//   - CKA_VALUE of a private key is the RFC 7748 scalar (32 or 56 bytes,
//     clamped when used); its public key is computed and kept in the
//     private object's CKA_EC_POINT.
//   - Both keys get CKA_PUBLIC_KEY_INFO (SubjectPublicKeyInfo).
//   - The key size is 256 bits for X25519 (as for Ed25519) and 448 for
//     X448.
//
// # Libraries
//
// X25519 is Go's crypto/ecdh, X448 github.com/cloudflare/circl's dh/x448;
// both are constant-time in the scalar, and both refuse a low-order peer
// point (the all-zero shared secret).

import (
	"bytes"
	"crypto/ecdh"
	"crypto/subtle"
	"encoding/asn1"
	"errors"
	"fmt"

	"github.com/cloudflare/circl/dh/x448"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// XDHCurve is one Montgomery curve.
type XDHCurve struct {
	Name      string
	Size      int // bytes of a scalar and of a u-coordinate
	bits      int
	OID       []byte // DER
	Printable []byte // DER PrintableString
	// OpenSC is pkcs11-tool 0.23's PrintableString, its length one too
	// long (see the file comment).
	OpenSC  []byte
	SPKIOID asn1.ObjectIdentifier
}

var (
	// X25519Curve is the X25519 curve of RFC 7748.
	X25519Curve = &XDHCurve{Name: "X25519", Size: 32, bits: 256,
		OID: []byte{0x06, 0x03, 0x2b, 0x65, 0x6e}, Printable: append([]byte{0x13, 0x0a}, "curve25519"...),
		OpenSC:  append([]byte{0x13, 0x0b}, "curve25519"...),
		SPKIOID: asn1.ObjectIdentifier{1, 3, 101, 110}}
	// X448Curve is the X448 curve of RFC 7748.
	X448Curve = &XDHCurve{Name: "X448", Size: x448.Size, bits: 448,
		OID: []byte{0x06, 0x03, 0x2b, 0x65, 0x6f}, Printable: append([]byte{0x13, 0x08}, "curve448"...),
		OpenSC:  append([]byte{0x13, 0x09}, "curve448"...),
		SPKIOID: asn1.ObjectIdentifier{1, 3, 101, 111}}
)

func init() {
	registerKeyType(&KeyType{
		typ:             ck.CKK_EC_MONTGOMERY,
		PublicSchema:    ecPublicSchema,
		PrivateSchema:   ecPrivateSchema,
		CompletePublic:  completeXDHPublic,
		CompletePrivate: completeXDHPrivate,
		Bits: func(a attr.Map) int {
			c, err := XDHCurveOf(a[ck.CKA_EC_PARAMS])
			if err != nil {
				return 0
			}
			return c.bits
		},
	})
}

// XDHCurveOf reads a Montgomery key's CKA_EC_PARAMS (see the file comment).
func XDHCurveOf(params []byte) (*XDHCurve, error) {
	for _, c := range []*XDHCurve{X25519Curve, X448Curve} {
		if bytes.Equal(params, c.OID) || bytes.Equal(params, c.Printable) || bytes.Equal(params, c.OpenSC) {
			return c, nil
		}
	}
	var rv asn1.RawValue
	rest, err := asn1.Unmarshal(params, &rv)
	if err != nil || len(rest) != 0 {
		return nil, Invalid(ck.CKA_EC_PARAMS, fmt.Sprintf("%x is not one DER element", params))
	}
	return nil, ck.Errorf(ck.CKR_CURVE_NOT_SUPPORTED, "CKA_EC_PARAMS: Montgomery curve %x not supported (X25519, X448)", params)
}

// publicBytes decodes a u-coordinate given as a DER OCTET STRING or bare.
func (c *XDHCurve) publicBytes(v []byte) ([]byte, error) {
	if len(v) == 2+c.Size && v[0] == 0x04 && int(v[1]) == c.Size {
		return v[2:], nil
	}
	if len(v) == c.Size {
		return v, nil
	}
	return nil, fmt.Errorf("not an %s public key (%d bytes, bare or as a DER OCTET STRING)", c.Name, c.Size)
}

// point is the stored CKA_EC_POINT of a u-coordinate.
func (c *XDHCurve) point(u []byte) []byte { return append([]byte{0x04, byte(c.Size)}, u...) }

// spki is the SubjectPublicKeyInfo of a u-coordinate (RFC 8410).
func (c *XDHCurve) spki(u []byte) []byte {
	der, err := asn1.Marshal(struct {
		Alg struct{ OID asn1.ObjectIdentifier }
		Key asn1.BitString
	}{Alg: struct{ OID asn1.ObjectIdentifier }{c.SPKIOID}, Key: asn1.BitString{Bytes: u, BitLength: 8 * len(u)}})
	if err != nil {
		return []byte{}
	}
	return der
}

// xdhPrivate is a Montgomery private key ready for agreement.
type xdhPrivate struct {
	c      *XDHCurve
	x25519 *ecdh.PrivateKey
	x448   x448.Key
	pub    []byte
}

// newXDHPrivate checks a scalar and computes its public key.
func newXDHPrivate(c *XDHCurve, scalar []byte) (*xdhPrivate, error) {
	if len(scalar) != c.Size {
		return nil, fmt.Errorf("an %s private key has %d bytes, not %d", c.Name, c.Size, len(scalar))
	}
	k := &xdhPrivate{c: c}
	if c == X25519Curve {
		sk, err := ecdh.X25519().NewPrivateKey(scalar)
		if err != nil {
			return nil, err
		}
		k.x25519, k.pub = sk, sk.PublicKey().Bytes()
		return k, nil
	}
	copy(k.x448[:], scalar)
	var pub x448.Key
	x448.KeyGen(&pub, &k.x448)
	k.pub = bytes.Clone(pub[:])
	return k, nil
}

// errLowOrder is the refusal of a low-order peer point.
var errLowOrder = errors.New("low-order point (all-zero shared secret)")

// shared is the agreement with the peer's u-coordinate.
func (k *xdhPrivate) shared(peer []byte) ([]byte, error) {
	if k.c == X25519Curve {
		pk, err := ecdh.X25519().NewPublicKey(peer)
		if err != nil {
			return nil, err
		}
		z, err := k.x25519.ECDH(pk)
		if err != nil {
			return nil, errLowOrder
		}
		return z, nil
	}
	if len(peer) != x448.Size {
		return nil, fmt.Errorf("X448 public key of %d bytes", len(peer))
	}
	var pub, z x448.Key
	copy(pub[:], peer)
	ok := x448.Shared(&z, &k.x448, &pub)
	var zero x448.Key
	if !ok || subtle.ConstantTimeCompare(z[:], zero[:]) == 1 {
		return nil, errLowOrder
	}
	return bytes.Clone(z[:]), nil
}

func completeXDHPublic(a attr.Map) error {
	c, err := XDHCurveOf(a[ck.CKA_EC_PARAMS])
	if err != nil {
		return err
	}
	u, err := c.publicBytes(a[ck.CKA_EC_POINT])
	if err != nil {
		return Invalid(ck.CKA_EC_POINT, err.Error())
	}
	a[ck.CKA_EC_POINT] = c.point(u)
	a[ck.CKA_PUBLIC_KEY_INFO] = c.spki(u)
	return nil
}

func completeXDHPrivate(a attr.Map) error {
	c, err := XDHCurveOf(a[ck.CKA_EC_PARAMS])
	if err != nil {
		return err
	}
	k, err := newXDHPrivate(c, a[ck.CKA_VALUE])
	if err != nil {
		return Invalid(ck.CKA_VALUE, err.Error())
	}
	if v, ok := a[ck.CKA_EC_POINT]; ok {
		given, err := c.publicBytes(v)
		if err != nil {
			return Invalid(ck.CKA_EC_POINT, err.Error())
		}
		if !bytes.Equal(given, k.pub) {
			return Inconsistent("CKA_EC_POINT does not match CKA_VALUE")
		}
	}
	a[ck.CKA_VALUE] = bytes.Clone(a[ck.CKA_VALUE])
	a[ck.CKA_EC_POINT] = c.point(k.pub)
	a[ck.CKA_PUBLIC_KEY_INFO] = c.spki(k.pub)
	return nil
}

// preparedXDH returns the Montgomery private key of o, once per snapshot.
func preparedXDH(s Slot, o Key) (*xdhPrivate, error) {
	return preparedKey(o, func() error { return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "private values of the key are sealed") }, func() (*xdhPrivate, error) {
		c, err := XDHCurveOf(o.Attrs()[ck.CKA_EC_PARAMS])
		if err != nil {
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "Montgomery key without a usable curve: %v", err)
		}
		k, err := newXDHPrivate(c, o.Attrs()[ck.CKA_VALUE])
		if err != nil {
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored %s key: %v", c.Name, err)
		}
		if v, ok := o.Attrs()[ck.CKA_EC_POINT]; ok && !bytes.Equal(v, c.point(k.pub)) {
			s.Log().Error("stored Montgomery key inconsistent with its point", "object", o.Handle())
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored %s key does not match its CKA_EC_POINT", c.Name)
		}
		return k, nil
	})
}
