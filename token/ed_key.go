package token

// Ed25519 keys (CKK_EC_EDWARDS): the key type, its CKA_EC_PARAMS and
// CKA_EC_POINT encodings, and the private key prepared for signing. The
// mechanisms are in mech_eddsa.go (see its comment for the encodings).

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/asn1"

	"github.com/modexp-token/modexp-token/token/ck"
)

// Ed25519's CKA_EC_PARAMS encodings.
var (
	ed25519OID       = []byte{0x06, 0x03, 0x2b, 0x65, 0x70}                                     // 1.3.101.112
	ed25519Printable = append([]byte{0x13, 0x0c}, "edwards25519"...)                            // PrintableString
	ed25519GnuPGOID  = []byte{0x06, 0x09, 0x2b, 0x06, 0x01, 0x04, 0x01, 0xda, 0x47, 0x0f, 0x01} // 1.3.6.1.4.1.11591.15.1
)

// edKeyBits is the key size of an Ed25519 key.
const edKeyBits = 256

func init() {
	registerKeyType(&keyType{
		typ:             ck.CKK_EC_EDWARDS,
		publicSchema:    ecPublicSchema,
		privateSchema:   ecPrivateSchema,
		completePublic:  completeEdPublic,
		completePrivate: completeEdPrivate,
		bits: func(a attrMap) int {
			if edCheckParams(a[ck.CKA_EC_PARAMS]) != nil {
				return 0
			}
			return edKeyBits
		},
	})
}

// edCheckParams accepts Ed25519's CKA_EC_PARAMS (see the file comment).
func edCheckParams(params []byte) error {
	if bytes.Equal(params, ed25519OID) || bytes.Equal(params, ed25519Printable) || bytes.Equal(params, ed25519GnuPGOID) {
		return nil
	}
	var rv asn1.RawValue
	rest, err := asn1.Unmarshal(params, &rv)
	if err != nil || len(rest) != 0 {
		return invalid(ck.CKA_EC_PARAMS, "not one DER element")
	}
	if rv.Class == asn1.ClassUniversal && (rv.Tag == asn1.TagOID || rv.Tag == asn1.TagPrintableString) {
		return ck.Errorf(ck.CKR_CURVE_NOT_SUPPORTED, "CKA_EC_PARAMS: Edwards curve %x not supported (Ed25519 only)", params)
	}
	return ck.Errorf(ck.CKR_CURVE_NOT_SUPPORTED, "CKA_EC_PARAMS: an Edwards curve is named by an OID or a name")
}

// edPublicBytes decodes an Ed25519 CKA_EC_POINT: the DER OCTET STRING of
// 32 bytes, or the bare 32 bytes.
func edPublicBytes(v []byte) ([]byte, error) {
	if len(v) == 2+ed25519.PublicKeySize && v[0] == 0x04 && v[1] == ed25519.PublicKeySize {
		return v[2:], nil
	}
	if len(v) == ed25519.PublicKeySize {
		return v, nil
	}
	return nil, invalid(ck.CKA_EC_POINT, "not an Ed25519 public key (32 bytes, bare or as a DER OCTET STRING)")
}

// edPoint is the stored CKA_EC_POINT of an Ed25519 public key.
func edPoint(pub []byte) []byte { return append([]byte{0x04, ed25519.PublicKeySize}, pub...) }

// edSPKI is the SubjectPublicKeyInfo of an Ed25519 public key.
func edSPKI(pub []byte) []byte {
	der, err := x509.MarshalPKIXPublicKey(ed25519.PublicKey(pub))
	if err != nil {
		return []byte{}
	}
	return der
}

func completeEdPublic(a attrMap) error {
	if err := edCheckParams(a[ck.CKA_EC_PARAMS]); err != nil {
		return err
	}
	pub, err := edPublicBytes(a[ck.CKA_EC_POINT])
	if err != nil {
		return err
	}
	a[ck.CKA_EC_POINT] = edPoint(pub)
	a[ck.CKA_PUBLIC_KEY_INFO] = edSPKI(pub)
	return nil
}

func completeEdPrivate(a attrMap) error {
	if err := edCheckParams(a[ck.CKA_EC_PARAMS]); err != nil {
		return err
	}
	seed := a[ck.CKA_VALUE]
	if len(seed) != ed25519.SeedSize {
		return invalid(ck.CKA_VALUE, "an Ed25519 private key has 32 bytes")
	}
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	clear(priv)
	if v, ok := a[ck.CKA_EC_POINT]; ok {
		given, err := edPublicBytes(v)
		if err != nil {
			return err
		}
		if !bytes.Equal(given, pub) {
			return inconsistent("CKA_EC_POINT does not match CKA_VALUE")
		}
	}
	a[ck.CKA_VALUE] = bytes.Clone(seed)
	a[ck.CKA_EC_POINT] = edPoint(pub)
	a[ck.CKA_PUBLIC_KEY_INFO] = edSPKI(pub)
	return nil
}

// preparedEd returns the Ed25519 private key of o, once per snapshot.
func (s *slot) preparedEd(o *object) (ed25519.PrivateKey, error) {
	o.prepOnce.Lock()
	defer o.prepOnce.Unlock()
	if k, ok := o.prepared.(ed25519.PrivateKey); ok {
		return k, nil
	}
	if !o.complete {
		return nil, ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "private values of the key are sealed")
	}
	seed := o.attrs[ck.CKA_VALUE]
	if len(seed) != ed25519.SeedSize {
		return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored Ed25519 key of %d bytes", len(seed))
	}
	k := ed25519.NewKeyFromSeed(seed)
	if v, ok := o.attrs[ck.CKA_EC_POINT]; ok && !bytes.Equal(v, edPoint(k[32:])) {
		s.log.Error("stored Ed25519 key inconsistent with its point", "object", o.handle)
		return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored Ed25519 key does not match its CKA_EC_POINT")
	}
	o.prepared = k
	return k, nil
}
