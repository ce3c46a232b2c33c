package mech

// Edwards keys (CKK_EC_EDWARDS), Ed25519 and Ed448: the key type, its
// CKA_EC_PARAMS and CKA_EC_POINT encodings, and the private key prepared
// for signing. The mechanisms are in eddsa.go (see its comment for
// the encodings).

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/asn1"

	"github.com/cloudflare/circl/sign/ed448"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// Ed25519's CKA_EC_PARAMS encodings.
var (
	Ed25519OID       = []byte{0x06, 0x03, 0x2b, 0x65, 0x70}                                     // 1.3.101.112
	Ed25519Printable = append([]byte{0x13, 0x0c}, "edwards25519"...)                            // PrintableString
	Ed25519GnuPGOID  = []byte{0x06, 0x09, 0x2b, 0x06, 0x01, 0x04, 0x01, 0xda, 0x47, 0x0f, 0x01} // 1.3.6.1.4.1.11591.15.1
)

// Ed448's CKA_EC_PARAMS encodings.
var (
	Ed448OID       = []byte{0x06, 0x03, 0x2b, 0x65, 0x71}        // 1.3.101.113
	Ed448Printable = append([]byte{0x13, 0x0a}, "edwards448"...) // PrintableString
)

// edKeyBits is the key size of an Ed25519 key, ed448KeyBits of an Ed448
// key.
const (
	edKeyBits    = 256
	ed448KeyBits = 448
)

// edCurve is the curve of an Edwards key.
type edCurve int

const (
	// edwards25519 and Edwards448 are the curves of EdDSA (RFC 8032).
	edwards25519 edCurve = iota + 1
	Edwards448
)

// name is the signature scheme of the curve.
func (c edCurve) name() string {
	if c == Edwards448 {
		return "Ed448"
	}
	return "Ed25519"
}

// KeySize is the byte length of the curve's public and private keys.
func (c edCurve) KeySize() int {
	if c == Edwards448 {
		return ed448.PublicKeySize
	}
	return ed25519.PublicKeySize
}

// bits is the key size CK_MECHANISM_INFO counts.
func (c edCurve) bits() int {
	if c == Edwards448 {
		return ed448KeyBits
	}
	return edKeyBits
}

// ed448AlgOID is id-Ed448, the algorithm of an Ed448 SubjectPublicKeyInfo.
var ed448AlgOID = asn1.ObjectIdentifier{1, 3, 101, 113}

func init() {
	registerKeyType(&KeyType{
		typ:             ck.CKK_EC_EDWARDS,
		PublicSchema:    ecPublicSchema,
		PrivateSchema:   ecPrivateSchema,
		CompletePublic:  completeEdPublic,
		CompletePrivate: CompleteEdPrivate,
		Bits: func(a attr.Map) int {
			c, err := edCurveOf(a[ck.CKA_EC_PARAMS])
			if err != nil {
				return 0
			}
			return c.bits()
		},
	})
}

// EdCheckParams accepts the CKA_EC_PARAMS of Ed25519 and Ed448 (see the
// file comment).
func EdCheckParams(params []byte) error {
	_, err := edCurveOf(params)
	return err
}

// edCurveOf names the curve of a CKA_EC_PARAMS value.
func edCurveOf(params []byte) (edCurve, error) {
	switch {
	case bytes.Equal(params, Ed25519OID) || bytes.Equal(params, Ed25519Printable) || bytes.Equal(params, Ed25519GnuPGOID):
		return edwards25519, nil
	case bytes.Equal(params, Ed448OID) || bytes.Equal(params, Ed448Printable):
		return Edwards448, nil
	}
	var rv asn1.RawValue
	rest, err := asn1.Unmarshal(params, &rv)
	if err != nil || len(rest) != 0 {
		return 0, Invalid(ck.CKA_EC_PARAMS, "not one DER element")
	}
	if rv.Class == asn1.ClassUniversal && (rv.Tag == asn1.TagOID || rv.Tag == asn1.TagPrintableString) {
		return 0, ck.Errorf(ck.CKR_CURVE_NOT_SUPPORTED, "CKA_EC_PARAMS: Edwards curve %x not supported (Ed25519 and Ed448 only)", params)
	}
	return 0, ck.Errorf(ck.CKR_CURVE_NOT_SUPPORTED, "CKA_EC_PARAMS: an Edwards curve is named by an OID or a name")
}

// edPublicBytes decodes a CKA_EC_POINT of curve c: the DER OCTET STRING
// of the public key (32 bytes for Ed25519, 57 for Ed448), or the bare
// bytes.
func edPublicBytes(c edCurve, v []byte) ([]byte, error) {
	n := c.KeySize()
	if len(v) == 2+n && v[0] == 0x04 && int(v[1]) == n {
		return v[2:], nil
	}
	if len(v) == n {
		return v, nil
	}
	return nil, Invalid(ck.CKA_EC_POINT, "not an "+c.name()+" public key (bare or as a DER OCTET STRING)")
}

// EdPoint is the stored CKA_EC_POINT of an Edwards public key.
func EdPoint(pub []byte) []byte { return append([]byte{0x04, byte(len(pub))}, pub...) }

// edSPKI is the SubjectPublicKeyInfo of an Edwards public key of curve c.
func edSPKI(c edCurve, pub []byte) []byte {
	if c == Edwards448 {
		return pqSPKI(ed448AlgOID, pub)
	}
	der, err := x509.MarshalPKIXPublicKey(ed25519.PublicKey(pub))
	if err != nil {
		return []byte{}
	}
	return der
}

// edPublicOf is the public key of an Edwards private key (its seed).
func edPublicOf(c edCurve, seed []byte) []byte {
	if c == Edwards448 {
		k := ed448.NewKeyFromSeed(seed)
		pub := bytes.Clone(k.Public().(ed448.PublicKey))
		clear(k)
		return pub
	}
	k := ed25519.NewKeyFromSeed(seed)
	pub := bytes.Clone(k.Public().(ed25519.PublicKey))
	clear(k)
	return pub
}

func completeEdPublic(a attr.Map) error {
	c, err := edCurveOf(a[ck.CKA_EC_PARAMS])
	if err != nil {
		return err
	}
	pub, err := edPublicBytes(c, a[ck.CKA_EC_POINT])
	if err != nil {
		return err
	}
	a[ck.CKA_EC_POINT] = EdPoint(pub)
	a[ck.CKA_PUBLIC_KEY_INFO] = edSPKI(c, pub)
	return nil
}

// CompleteEdPrivate checks an EdDSA private key template and adds its
// public point.
func CompleteEdPrivate(a attr.Map) error {
	c, err := edCurveOf(a[ck.CKA_EC_PARAMS])
	if err != nil {
		return err
	}
	seed := a[ck.CKA_VALUE]
	if len(seed) != c.KeySize() {
		return Invalid(ck.CKA_VALUE, "not the length of an "+c.name()+" private key (32 bytes for Ed25519, 57 for Ed448)")
	}
	pub := edPublicOf(c, seed)
	if v, ok := a[ck.CKA_EC_POINT]; ok {
		given, err := edPublicBytes(c, v)
		if err != nil {
			return err
		}
		if !bytes.Equal(given, pub) {
			return Inconsistent("CKA_EC_POINT does not match CKA_VALUE")
		}
	}
	a[ck.CKA_VALUE] = bytes.Clone(seed)
	a[ck.CKA_EC_POINT] = EdPoint(pub)
	a[ck.CKA_PUBLIC_KEY_INFO] = edSPKI(c, pub)
	return nil
}

// preparedEd returns the Ed25519 private key of o, once per snapshot.
func preparedEd(s Slot, o Key) (ed25519.PrivateKey, error) {
	if k, ok := cachedKey[ed25519.PrivateKey](o); ok {
		return k, nil
	}
	return preparedKey(o, func() error { return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "private values of the key are sealed") }, func() (ed25519.PrivateKey, error) {
		seed := o.Attrs()[ck.CKA_VALUE]
		if len(seed) != ed25519.SeedSize {
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored Ed25519 key of %d bytes", len(seed))
		}
		k := ed25519.NewKeyFromSeed(seed)
		if v, ok := o.Attrs()[ck.CKA_EC_POINT]; ok && !bytes.Equal(v, EdPoint(k[32:])) {
			s.Log().Error("stored Ed25519 key inconsistent with its point", "object", o.Handle())
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored Ed25519 key does not match its CKA_EC_POINT")
		}
		return k, nil
	})
}

// preparedEd448 returns the Ed448 private key of o, once per snapshot.
func preparedEd448(s Slot, o Key) (ed448.PrivateKey, error) {
	return preparedKey(o, func() error { return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "private values of the key are sealed") }, func() (ed448.PrivateKey, error) {
		seed := o.Attrs()[ck.CKA_VALUE]
		if len(seed) != ed448.SeedSize {
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored Ed448 key of %d bytes", len(seed))
		}
		k := ed448.NewKeyFromSeed(seed)
		if v, ok := o.Attrs()[ck.CKA_EC_POINT]; ok && !bytes.Equal(v, EdPoint(k.Public().(ed448.PublicKey))) {
			s.Log().Error("stored Ed448 key inconsistent with its point", "object", o.Handle())
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored Ed448 key does not match its CKA_EC_POINT")
		}
		return k, nil
	})
}
