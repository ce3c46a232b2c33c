package token

import (
	"bytes"
	"crypto"
	stdecdsa "crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"fmt"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/engine/alg/ecdsa"
	"github.com/modexp-token/modexp-token/engine/alg/ecdsa/ecdsatest"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// ecCurves are the curves of the token with their crypto/elliptic twin
// (nil for secp256k1, checked against engine/alg/ecdsa instead).
var ecCurves = []struct {
	name string
	std  elliptic.Curve
	hash crypto.Hash
	mech uint64
}{
	{"P-224", elliptic.P224(), crypto.SHA224, ck.CKM_ECDSA_SHA224},
	{"P-256", elliptic.P256(), crypto.SHA256, ck.CKM_ECDSA_SHA256},
	{"P-384", elliptic.P384(), crypto.SHA384, ck.CKM_ECDSA_SHA384},
	{"P-521", elliptic.P521(), crypto.SHA512, ck.CKM_ECDSA_SHA512},
	{"secp256k1", nil, crypto.SHA256, ck.CKM_ECDSA_SHA256},
}

func curveOf(t testing.TB, name string) *ec.Curve {
	t.Helper()
	c, err := ec.CurveByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// genEC generates a session EC key pair on curve.
func genEC(t testing.TB, m *Module, sh uint64, curve string, token bool) (pub, priv uint64) {
	t.Helper()
	c := curveOf(t, curve)
	pub, priv, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_EC_KEY_PAIR_GEN},
		[]Attribute{aBytes(ck.CKA_EC_PARAMS, c.OID()), aBool(ck.CKA_TOKEN, token), aBool(ck.CKA_VERIFY, true)},
		[]Attribute{aBool(ck.CKA_TOKEN, token), aBool(ck.CKA_SIGN, true)})
	if err != nil {
		t.Fatalf("generate %s: %v", curve, err)
	}
	return pub, priv
}

// signWith signs in on the token in one part.
func signWith(t testing.TB, m *Module, sh, key, mc uint64, in []byte) ([]byte, error) {
	t.Helper()
	if err := m.SignInit(sh, &Mechanism{Type: mc}, key); err != nil {
		return nil, err
	}
	sig, _, err := m.Sign(sh, in, Out{Cap: 1024})
	return sig, err
}

func verifyWith(t testing.TB, m *Module, sh, key, mc uint64, in, sig []byte) error {
	t.Helper()
	if err := m.VerifyInit(sh, &Mechanism{Type: mc}, key); err != nil {
		return err
	}
	return m.Verify(sh, in, sig)
}

// tokenPoint reads an EC key object's CKA_EC_POINT, requiring the DER
// OCTET STRING of the uncompressed point.
func tokenPoint(t *testing.T, m *Module, sh, obj uint64, c *ec.Curve) (x, y []byte) {
	t.Helper()
	v := attrValue(t, m, sh, obj, ck.CKA_EC_POINT)
	var inner []byte
	if rest, err := asn1.Unmarshal(v, &inner); err != nil || len(rest) != 0 {
		t.Fatalf("CKA_EC_POINT %x is not a DER OCTET STRING: %v", v, err)
	}
	if len(inner) != 1+2*c.ByteLen() || inner[0] != 4 {
		t.Fatalf("CKA_EC_POINT holds %x, not an uncompressed %s point", inner, c.Name())
	}
	return inner[1 : 1+c.ByteLen()], inner[1+c.ByteLen():]
}

func stdPub(c elliptic.Curve, x, y []byte) *stdecdsa.PublicKey {
	return &stdecdsa.PublicKey{Curve: c, X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
}

func digest(h crypto.Hash, msg []byte) []byte {
	hh := h.New()
	hh.Write(msg)
	return hh.Sum(nil)
}

func TestECMechanismsOnSoft(t *testing.T) {
	m, slot := newModule(t)
	list, err := m.MechanismList(slot)
	must(t, err)
	want := []uint64{ck.CKM_EC_KEY_PAIR_GEN, ck.CKM_ECDSA, ck.CKM_ECDSA_SHA1, ck.CKM_ECDSA_SHA224,
		ck.CKM_ECDSA_SHA256, ck.CKM_ECDSA_SHA384, ck.CKM_ECDSA_SHA512}
	for _, w := range want {
		found := false
		for _, l := range list {
			found = found || l == w
		}
		if !found {
			t.Errorf("%s not listed", ck.Name("CKM_", w))
		}
		info, err := m.MechanismInfo(slot, w)
		must(t, err)
		if info.MinKeySize != 192 || info.MaxKeySize != 521 {
			t.Errorf("%s: sizes %d..%d, want 192..521", ck.Name("CKM_", w), info.MinKeySize, info.MaxKeySize)
		}
		flags := uint64(ck.CKF_SIGN | ck.CKF_VERIFY | ck.CKF_MESSAGE_SIGN | ck.CKF_MESSAGE_VERIFY | ck.CKF_MULTI_MESSAGE)
		if w == ck.CKM_EC_KEY_PAIR_GEN {
			flags = ck.CKF_GENERATE_KEY_PAIR
		}
		flags |= ck.CKF_EC_F_P | ck.CKF_EC_NAMEDCURVE | ck.CKF_EC_UNCOMPRESS
		if info.Flags != flags {
			t.Errorf("%s: flags %#x, want %#x", ck.Name("CKM_", w), info.Flags, flags)
		}
	}
}

// TestECDSAKeyGenAndCrossCheck generates a key pair on every curve, checks
// the objects' attributes, and cross-checks signatures with crypto/ecdsa
// (engine/alg/ecdsa's reference for secp256k1) in both directions, single- and
// multi-part.
func TestECDSAKeyGenAndCrossCheck(t *testing.T) {
	m, _, sh := readyToken(t)
	for _, cv := range ecCurves {
		t.Run(cv.name, func(t *testing.T) {
			c := curveOf(t, cv.name)
			pub, priv := genEC(t, m, sh, cv.name, false)
			for _, h := range []uint64{pub, priv} {
				if v := attrValue(t, m, sh, h, ck.CKA_LOCAL); !bytes.Equal(v, ck.Bool(true)) {
					t.Errorf("CKA_LOCAL = %x", v)
				}
				if v := attrValue(t, m, sh, h, ck.CKA_KEY_GEN_MECHANISM); !bytes.Equal(v, ck.ULong(ck.CKM_EC_KEY_PAIR_GEN)) {
					t.Errorf("CKA_KEY_GEN_MECHANISM = %x", v)
				}
				if v := attrValue(t, m, sh, h, ck.CKA_DERIVE); !bytes.Equal(v, ck.Bool(false)) {
					t.Errorf("CKA_DERIVE = %x", v)
				}
				if v := attrValue(t, m, sh, h, ck.CKA_EC_PARAMS); !bytes.Equal(v, c.OID()) {
					t.Errorf("CKA_EC_PARAMS = %x", v)
				}
			}
			res, err := m.GetAttributeValue(sh, priv, []uint64{ck.CKA_VALUE})
			if res[0].Err != uint64(ck.CKR_ATTRIBUTE_SENSITIVE) {
				t.Errorf("CKA_VALUE of a generated key readable: %v %v", err, res)
			}
			x, y := tokenPoint(t, m, sh, pub, c)
			px, py := tokenPoint(t, m, sh, priv, c)
			if !bytes.Equal(x, px) || !bytes.Equal(y, py) {
				t.Fatal("public and private objects hold different points")
			}
			spki := attrValue(t, m, sh, pub, ck.CKA_PUBLIC_KEY_INFO)
			if cv.std != nil {
				k, err := x509.ParsePKIXPublicKey(spki)
				if err != nil {
					t.Fatalf("CKA_PUBLIC_KEY_INFO: %v", err)
				}
				if !k.(*stdecdsa.PublicKey).Equal(stdPub(cv.std, x, y)) {
					t.Fatal("CKA_PUBLIC_KEY_INFO differs from CKA_EC_POINT")
				}
			}

			msg := []byte("cross-check " + cv.name)
			d := digest(cv.hash, msg)
			checkStd := func(sig []byte) {
				t.Helper()
				if len(sig) != 2*c.OrderByteLen() {
					t.Fatalf("signature of %d bytes", len(sig))
				}
				if cv.std != nil {
					r, s := new(big.Int).SetBytes(sig[:len(sig)/2]), new(big.Int).SetBytes(sig[len(sig)/2:])
					if !stdecdsa.Verify(stdPub(cv.std, x, y), d, r, s) {
						t.Fatal("crypto/ecdsa rejects the token's signature")
					}
				} else if err := ecdsatest.Verify(cv.name, x, y, d, sig); err != nil {
					t.Fatalf("engine/alg/ecdsa rejects the token's signature: %v", err)
				}
			}
			// Hash-then-sign, single part.
			sig, err := signWith(t, m, sh, priv, cv.mech, msg)
			must(t, err)
			checkStd(sig)
			must(t, verifyWith(t, m, sh, pub, cv.mech, msg, sig))
			// Multi-part.
			must(t, m.SignInit(sh, &Mechanism{Type: cv.mech}, priv))
			must(t, m.SignUpdate(sh, msg[:5]))
			must(t, m.SignUpdate(sh, msg[5:]))
			sig2, _, err := m.SignFinal(sh, Out{Cap: 1024})
			must(t, err)
			checkStd(sig2)
			if bytes.Equal(sig, sig2) {
				t.Error("two signatures of one message are equal: nonces not hedged")
			}
			must(t, m.VerifyInit(sh, &Mechanism{Type: cv.mech}, pub))
			must(t, m.VerifyUpdate(sh, msg[:3]))
			must(t, m.VerifyUpdate(sh, msg[3:]))
			must(t, m.VerifyFinal(sh, sig2))
			// CKM_ECDSA on the digest.
			sig3, err := signWith(t, m, sh, priv, ck.CKM_ECDSA, d)
			must(t, err)
			checkStd(sig3)
			must(t, verifyWith(t, m, sh, pub, ck.CKM_ECDSA, d, sig3))

			// The other way: a reference signature verified by the token.
			var ref []byte
			if cv.std != nil {
				sk, err := stdecdsa.GenerateKey(cv.std, rand.Reader)
				must(t, err)
				hp := importECPublic(t, m, sh, c, sk.X.FillBytes(make([]byte, c.ByteLen())), sk.Y.FillBytes(make([]byte, c.ByteLen())))
				r, s, err := stdecdsa.Sign(rand.Reader, sk, d)
				must(t, err)
				n := c.OrderByteLen()
				ref = append(r.FillBytes(make([]byte, n)), s.FillBytes(make([]byte, n))...)
				must(t, verifyWith(t, m, sh, hp, cv.mech, msg, ref))
				must(t, verifyWith(t, m, sh, hp, ck.CKM_ECDSA, d, ref))
				ref[len(ref)-1] ^= 1
				wantRV(t, verifyWith(t, m, sh, hp, cv.mech, msg, ref), ck.CKR_SIGNATURE_INVALID)
			} else {
				dk, rx, ry, err := ecdsa.GenerateKey(t.Context(), nil, cv.name, nil)
				must(t, err)
				sk, err := ecdsa.NewPrivateKey(cv.name, dk)
				must(t, err)
				ref, err = sk.Sign(t.Context(), nil, d, nil)
				must(t, err)
				hp := importECPublic(t, m, sh, c, rx, ry)
				must(t, verifyWith(t, m, sh, hp, cv.mech, msg, ref))
				ref[0] ^= 0x80
				wantRV(t, verifyWith(t, m, sh, hp, cv.mech, msg, ref), ck.CKR_SIGNATURE_INVALID)
			}
			// Lengths.
			wantRV(t, verifyWith(t, m, sh, pub, cv.mech, msg, sig[1:]), ck.CKR_SIGNATURE_LEN_RANGE)
			wantRV(t, verifyWith(t, m, sh, pub, cv.mech, msg, append(sig, 0)), ck.CKR_SIGNATURE_LEN_RANGE)
			wantRV(t, verifyWith(t, m, sh, pub, cv.mech, []byte("other message"), sig), ck.CKR_SIGNATURE_INVALID)
		})
	}
}

// importECPublic creates a session EC public key object.
func importECPublic(t testing.TB, m *Module, sh uint64, c *ec.Curve, x, y []byte) uint64 {
	t.Helper()
	h, err := m.CreateObject(sh, []Attribute{
		aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_EC),
		aBytes(ck.CKA_EC_PARAMS, c.OID()), aBytes(ck.CKA_EC_POINT, c.MarshalECPoint(x, y)),
	})
	if err != nil {
		t.Fatalf("import %s public key: %v", c.Name(), err)
	}
	return h
}

// ecPrivateTemplate is the import template of private scalar d (as
// OpenSSL's BN_bn2bin gives it: no leading zeros).
func ecPrivateTemplate(c *ec.Curve, d []byte, extra ...Attribute) []Attribute {
	return append([]Attribute{
		aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_EC),
		aBool(ck.CKA_SIGN, true), aBytes(ck.CKA_EC_PARAMS, c.OID()), aBytes(ck.CKA_VALUE, d),
	}, extra...)
}

// TestECImport imports crypto/ecdsa keys (the private one without its
// point: the token computes it) and checks the answers to malformed
// templates.
func TestECImport(t *testing.T) {
	m, _, sh := readyToken(t)
	p256 := curveOf(t, "P-256")
	sk, err := stdecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	x, y := sk.X.FillBytes(make([]byte, 32)), sk.Y.FillBytes(make([]byte, 32))
	priv, err := m.CreateObject(sh, ecPrivateTemplate(p256, sk.D.Bytes()))
	must(t, err)
	px, py := tokenPoint(t, m, sh, priv, p256)
	if !bytes.Equal(px, x) || !bytes.Equal(py, y) {
		t.Fatal("computed public point differs from crypto/ecdsa's")
	}
	if v := attrValue(t, m, sh, priv, ck.CKA_LOCAL); !bytes.Equal(v, ck.Bool(false)) {
		t.Errorf("imported key CKA_LOCAL = %x", v)
	}
	if v := attrValue(t, m, sh, priv, ck.CKA_KEY_GEN_MECHANISM); !bytes.Equal(v, ck.ULong(ck.CK_UNAVAILABLE_INFORMATION)) {
		t.Errorf("imported key CKA_KEY_GEN_MECHANISM = %x", v)
	}
	msg := []byte("imported")
	sig, err := signWith(t, m, sh, priv, ck.CKM_ECDSA_SHA256, msg)
	must(t, err)
	d := sha256.Sum256(msg)
	if !stdecdsa.Verify(&sk.PublicKey, d[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("signature of the imported key does not verify")
	}

	// A raw (bare) uncompressed point and a compressed one are accepted and
	// stored as the DER OCTET STRING of the uncompressed point.
	der := p256.MarshalECPoint(x, y)
	for _, form := range [][]byte{p256.Marshal(x, y), p256.MarshalCompressed(x, y)} {
		h, err := m.CreateObject(sh, []Attribute{
			aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_EC),
			aBytes(ck.CKA_EC_PARAMS, p256.OID()), aBytes(ck.CKA_EC_POINT, form),
		})
		must(t, err)
		if v := attrValue(t, m, sh, h, ck.CKA_EC_POINT); !bytes.Equal(v, der) {
			t.Errorf("point %x stored as %x, want %x", form, v, der)
		}
		must(t, verifyWith(t, m, sh, h, ck.CKM_ECDSA_SHA256, msg, sig))
	}

	offCurve := bytes.Clone(y)
	offCurve[31] ^= 1
	explicit, _ := asn1.Marshal(struct{ V int }{1})
	unknownOID, _ := asn1.Marshal(asn1.ObjectIdentifier{1, 3, 132, 0, 10, 99})
	brainpool, _ := asn1.Marshal(asn1.ObjectIdentifier{1, 3, 36, 3, 3, 2, 8, 1, 1, 7})
	null, _ := asn1.Marshal(asn1.NullRawValue)
	n := p256.Order()
	nPlus := new(big.Int).Add(new(big.Int).SetBytes(n), big.NewInt(1)).Bytes()
	pub := func(params, point []byte) []Attribute {
		return []Attribute{
			aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_EC),
			aBytes(ck.CKA_EC_PARAMS, params), aBytes(ck.CKA_EC_POINT, point),
		}
	}
	other, _ := stdecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherPoint := p256.MarshalECPoint(other.X.FillBytes(make([]byte, 32)), other.Y.FillBytes(make([]byte, 32)))
	cases := []struct {
		name string
		tmpl []Attribute
		want ck.Error
	}{
		{"point not on curve", pub(p256.OID(), p256.MarshalECPoint(x, offCurve)), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"point of another curve's size", pub(p256.OID(), curveOf(t, "P-384").MarshalECPoint(make([]byte, 48), make([]byte, 48))), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"point at infinity", pub(p256.OID(), []byte{4, 1, 0}), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"empty point", pub(p256.OID(), nil), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"explicit parameters", pub(explicit, der), ck.CKR_CURVE_NOT_SUPPORTED},
		{"unknown OID", pub(unknownOID, der), ck.CKR_CURVE_NOT_SUPPORTED},
		{"brainpoolP256r1", pub(brainpool, der), ck.CKR_CURVE_NOT_SUPPORTED},
		{"implicitlyCA", pub(null, der), ck.CKR_CURVE_NOT_SUPPORTED},
		{"garbage params", pub([]byte{0x06, 0x05, 1}, der), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"public without point", pub(p256.OID(), der)[:3], ck.CKR_TEMPLATE_INCOMPLETE},
		{"private d = 0", ecPrivateTemplate(p256, []byte{0}), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"private d = n", ecPrivateTemplate(p256, n), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"private d = n+1", ecPrivateTemplate(p256, nPlus), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"private d too long", ecPrivateTemplate(p256, append([]byte{1}, sk.D.FillBytes(make([]byte, 32))...)), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"private with another point", ecPrivateTemplate(p256, sk.D.Bytes(), aBytes(ck.CKA_EC_POINT, otherPoint)), ck.CKR_TEMPLATE_INCONSISTENT},
		{"private with a bad point", ecPrivateTemplate(p256, sk.D.Bytes(), aBytes(ck.CKA_EC_POINT, []byte{4, 4, 4})), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"private without curve", ecPrivateTemplate(p256, sk.D.Bytes())[:3], ck.CKR_TEMPLATE_INCOMPLETE},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := m.CreateObject(sh, c.tmpl)
			wantRV(t, err, c.want)
		})
	}
	// A private key given with its own (matching, bare) point is accepted
	// with leading zeros in CKA_VALUE.
	h, err := m.CreateObject(sh, ecPrivateTemplate(p256, append([]byte{0, 0}, sk.D.Bytes()...), aBytes(ck.CKA_EC_POINT, p256.Marshal(x, y))))
	must(t, err)
	if v := attrValue(t, m, sh, h, ck.CKA_EC_POINT); !bytes.Equal(v, der) {
		t.Errorf("private key point stored as %x", v)
	}
}

// TestECDSAOperationRules: the two-call convention, CKM_ECDSA's
// truncation of long inputs and single-part rule, and keys of the wrong
// kind.
func TestECDSAOperationRules(t *testing.T) {
	m, _, sh := readyToken(t)
	c := curveOf(t, "P-256")
	pub, priv := genEC(t, m, sh, "P-256", false)
	x, y := tokenPoint(t, m, sh, pub, c)

	// Two-call convention: the length, then too small, then the signature.
	in := bytes.Repeat([]byte{0xa5}, 32)
	must(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_ECDSA}, priv))
	_, need, err := m.Sign(sh, in, Out{Query: true})
	must(t, err)
	if need != 64 {
		t.Fatalf("need = %d, want 64", need)
	}
	_, need, err = m.Sign(sh, in, Out{Cap: 63})
	wantRV(t, err, ck.CKR_BUFFER_TOO_SMALL)
	sig, need2, err := m.Sign(sh, in, Out{Cap: need})
	must(t, err)
	if need2 != 64 || len(sig) != 64 || need != 64 {
		t.Fatalf("lengths %d %d %d", need, need2, len(sig))
	}
	must(t, ecdsatest.Verify("P-256", x, y, in, sig))

	// CKM_ECDSA over 64 bytes: the leftmost 256 bits count (crypto/ecdsa
	// truncates the same way).
	long := make([]byte, 64)
	rand.Read(long)
	sig, err = signWith(t, m, sh, priv, ck.CKM_ECDSA, long)
	must(t, err)
	if !stdecdsa.Verify(stdPub(elliptic.P256(), x, y), long, new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("signature of a 64-byte input does not verify as truncated")
	}
	must(t, verifyWith(t, m, sh, pub, ck.CKM_ECDSA, long[:32], sig)) // the same value once truncated

	// CKM_ECDSA is single-part.
	must(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_ECDSA}, priv))
	wantRV(t, m.SignUpdate(sh, in), ck.CKR_FUNCTION_NOT_SUPPORTED)
	must(t, m.VerifyInit(sh, &Mechanism{Type: ck.CKM_ECDSA}, pub))
	wantRV(t, m.VerifyUpdate(sh, in), ck.CKR_FUNCTION_NOT_SUPPORTED)

	// A parameter is refused; keys of the wrong class or type too.
	wantRV(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_ECDSA, Param: []byte{1}}, priv), ck.CKR_MECHANISM_PARAM_INVALID)
	wantRV(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_ECDSA}, pub), ck.CKR_KEY_TYPE_INCONSISTENT)
	wantRV(t, m.VerifyInit(sh, &Mechanism{Type: ck.CKM_ECDSA}, priv), ck.CKR_KEY_TYPE_INCONSISTENT)
	wantRV(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_ECDSA}, pub), ck.CKR_MECHANISM_INVALID)
	rsaPub, _, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_RSA_PKCS_KEY_PAIR_GEN},
		[]Attribute{aULong(ck.CKA_MODULUS_BITS, 1024)}, nil)
	must(t, err)
	wantRV(t, m.VerifyInit(sh, &Mechanism{Type: ck.CKM_ECDSA_SHA256}, rsaPub), ck.CKR_KEY_TYPE_INCONSISTENT)
	wantRV(t, m.VerifyInit(sh, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, pub), ck.CKR_KEY_TYPE_INCONSISTENT)

	// Key generation templates.
	gen := func(pubT, privT []Attribute) error {
		_, _, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_EC_KEY_PAIR_GEN}, pubT, privT)
		return err
	}
	unknownOID, _ := asn1.Marshal(asn1.ObjectIdentifier{1, 3, 132, 0, 10, 99})
	wantRV(t, gen(nil, nil), ck.CKR_TEMPLATE_INCOMPLETE)
	wantRV(t, gen([]Attribute{aBytes(ck.CKA_EC_PARAMS, unknownOID)}, nil), ck.CKR_CURVE_NOT_SUPPORTED)
	wantRV(t, gen([]Attribute{aBytes(ck.CKA_EC_PARAMS, c.OID())}, []Attribute{aBytes(ck.CKA_EC_PARAMS, curveOf(t, "P-384").OID())}), ck.CKR_TEMPLATE_INCONSISTENT)
	wantRV(t, gen([]Attribute{aBytes(ck.CKA_EC_PARAMS, c.OID()), aBytes(ck.CKA_EC_POINT, []byte{4})}, nil), ck.CKR_ATTRIBUTE_READ_ONLY)
	wantRV(t, gen([]Attribute{aBytes(ck.CKA_EC_PARAMS, c.OID())}, []Attribute{aBytes(ck.CKA_VALUE, []byte{1})}), ck.CKR_ATTRIBUTE_READ_ONLY)
	wantRV(t, gen([]Attribute{aBytes(ck.CKA_EC_PARAMS, c.OID())}, []Attribute{aBytes(ck.CKA_EC_PARAMS, c.OID())}), ck.CKR_OK)
}

// TestECDSATokenKeyPersists: a token key pair generated, the module
// reloaded, the key found and used after login; its CKA_VALUE is stored
// sealed (absent from the cache until login).
func TestECDSATokenKeyPersists(t *testing.T) {
	testConfig(t, "")
	m := load(t)
	slot := m.SlotList(true)[0]
	initToken(t, m, slot)
	sh := openRW(t, m, slot)
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	pub, _ := genEC(t, m, sh, "P-384", true)
	c := curveOf(t, "P-384")
	x, y := tokenPoint(t, m, sh, pub, c)
	m.Close()

	m2 := load(t)
	sh2 := openRW(t, m2, slot)
	if hs := find(t, m2, sh2, aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY)); len(hs) != 0 {
		t.Fatalf("private key visible before login: %v", hs)
	}
	must(t, m2.Login(sh2, ck.CKU_USER, []byte(testUserPIN)))
	hs := find(t, m2, sh2, aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_EC))
	if len(hs) != 1 {
		t.Fatalf("private EC keys: %v", hs)
	}
	msg := []byte("after reload")
	sig, err := signWith(t, m2, sh2, hs[0], ck.CKM_ECDSA_SHA384, msg)
	must(t, err)
	must(t, ecdsatest.Verify("P-384", x, y, digest(crypto.SHA384, msg), sig))
}

// TestECDSAEngines: what the slot offers and does on engines with and
// without curves, under both fallback policies; a faulty engine's
// signatures are never released.
func TestECDSAEngines(t *testing.T) {
	cases := []struct {
		engine, fallback string
		genCurves        []string // curves key generation must serve
		noCurves         []string // curves it must refuse
		wantDeviceError  bool
		wantFaults       bool
		logEngine        string
	}{
		{"chip:pukcc", "fail", []string{"P-256", "P-384", "P-521"}, []string{"secp256k1"}, false, false, "chip:pukcc"},
		{"chip:pukcc", "soft", []string{"P-256", "P-384", "P-521", "secp256k1"}, nil, false, false, "chip:pukcc"},
		{"chip:orup561", "fail", nil, []string{"P-256", "secp256k1"}, false, false, ""},
		{"chip:orup561", "soft", []string{"P-256", "secp256k1"}, nil, false, false, "chip:orup561"},
		{"chip:pukcc,fault=bitflip", "fail", nil, nil, true, true, "chip:pukcc"},
		{"chip:pukcc,fault=bitflip", "soft", []string{"P-256"}, nil, false, true, "chip:pukcc"},
	}
	for _, c := range cases {
		t.Run(c.engine+"/"+c.fallback, func(t *testing.T) {
			logPath := engineConfig(t, c.engine, c.fallback)
			m := load(t)
			slot := m.SlotList(true)[0]
			initToken(t, m, slot)
			sh := openRW(t, m, slot)
			must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
			genInfo, genErr := m.MechanismInfo(slot, ck.CKM_EC_KEY_PAIR_GEN)
			signInfo, err := m.MechanismInfo(slot, ck.CKM_ECDSA_SHA256)
			must(t, err)
			canSign := len(c.genCurves) > 0 || c.wantDeviceError
			if canSign != (genErr == nil) || canSign != (signInfo.Flags&ck.CKF_SIGN != 0) {
				t.Fatalf("keygen info %v (%v), sign flags %#x; want signing %v", genInfo, genErr, signInfo.Flags, canSign)
			}
			if signInfo.Flags&ck.CKF_VERIFY == 0 || signInfo.MinKeySize != 192 || signInfo.MaxKeySize != 521 {
				t.Fatalf("ECDSA-SHA256 info %+v: verification is always offered on 192..521", signInfo)
			}
			if c.engine == "chip:pukcc" && c.fallback == "fail" && (genInfo.MinKeySize != 256 || genInfo.MaxKeySize != 521) {
				t.Fatalf("keygen info %+v", genInfo)
			}
			for _, cv := range c.genCurves {
				msg := []byte("engine " + c.engine + " " + cv)
				pub, priv := genEC(t, m, sh, cv, false)
				x, y := tokenPoint(t, m, sh, pub, curveOf(t, cv))
				before := len(readFile(t, logPath))
				sig, err := signWith(t, m, sh, priv, ck.CKM_ECDSA_SHA256, msg)
				must(t, err)
				must(t, ecdsatest.Verify(cv, x, y, digest(crypto.SHA256, msg), sig))
				logged := readFile(t, logPath)[before:]
				line := ""
				for l := range strings.SplitSeq(logged, "\n") {
					if strings.Contains(l, `msg="private operation"`) {
						line = l
					}
				}
				if !strings.Contains(strings.ReplaceAll(line, `"`, ""), "engine="+c.logEngine) || !strings.Contains(line, "key_bits="+fmt.Sprint(curveOf(t, cv).OrderBits())) {
					t.Fatalf("no private operation line for %s on %s:\n%s", cv, c.logEngine, logged)
				}
				if c.engine == "chip:pukcc" && cv != "secp256k1" && strings.Contains(line, "device_time=0s") {
					t.Fatalf("no device time for pukcc: %s", line)
				}
			}
			for _, cv := range c.noCurves {
				_, _, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_EC_KEY_PAIR_GEN},
					[]Attribute{aBytes(ck.CKA_EC_PARAMS, curveOf(t, cv).OID())}, nil)
				want := ck.CKR_CURVE_NOT_SUPPORTED
				if genErr != nil {
					want = ck.CKR_MECHANISM_INVALID
				}
				wantRV(t, err, want)
				// An imported key on that curve verifies but cannot sign.
				d, x, y, err := ecdsa.GenerateKey(t.Context(), nil, cv, nil)
				must(t, err)
				cc := curveOf(t, cv)
				priv, err := m.CreateObject(sh, ecPrivateTemplate(cc, d))
				must(t, err)
				wantRV(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_ECDSA}, priv), ck.CKR_MECHANISM_INVALID)
				sk, err := ecdsa.NewPrivateKey(cv, d)
				must(t, err)
				ref, err := sk.Sign(t.Context(), nil, make([]byte, 32), nil)
				must(t, err)
				must(t, verifyWith(t, m, sh, importECPublic(t, m, sh, cc, x, y), ck.CKM_ECDSA, make([]byte, 32), ref))
			}
			if c.wantDeviceError {
				// Keys made elsewhere: generation on this engine fails too.
				_, _, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_EC_KEY_PAIR_GEN},
					[]Attribute{aBytes(ck.CKA_EC_PARAMS, curveOf(t, "P-256").OID())}, nil)
				wantRV(t, err, ck.CKR_DEVICE_ERROR)
				d, _, _, err := ecdsa.GenerateKey(t.Context(), nil, "P-256", nil)
				must(t, err)
				priv, err := m.CreateObject(sh, ecPrivateTemplate(curveOf(t, "P-256"), d))
				must(t, err)
				sig, err := signWith(t, m, sh, priv, ck.CKM_ECDSA_SHA256, []byte("faulty"))
				wantRV(t, err, ck.CKR_DEVICE_ERROR)
				if sig != nil {
					t.Fatal("a signature was released with CKR_DEVICE_ERROR")
				}
			}
			st, err := m.EngineStatus(slot)
			must(t, err)
			if c.wantFaults != (st.Faults > 0) || c.wantDeviceError != (st.DeviceErrors > 0) {
				t.Fatalf("engine status %+v", st)
			}
			// A chip wrong on every result fails its curve's known-answer
			// test first; either line names the fault.
			if logged := readFile(t, logPath); c.wantFaults && !strings.Contains(logged, "engine fault detected") &&
				!strings.Contains(logged, "engine known-answer test failed") {
				t.Fatal("faults not logged")
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// FuzzECPublicImport: any CKA_EC_PARAMS and CKA_EC_POINT either fail with a
// CKR code or give a key whose stored point is on its curve, in DER form.
func FuzzECPublicImport(f *testing.F) {
	p256, _ := ec.CurveByName("P-256")
	x, y, _ := p256.ScalarBaseMult([]byte{7})
	f.Add(p256.OID(), p256.MarshalECPoint(x, y))
	f.Add(p256.OID(), p256.Marshal(x, y))
	f.Add(p256.OID(), p256.MarshalCompressed(x, y))
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x01}, []byte{4, 0})
	f.Add([]byte{0x06, 0x00}, []byte{})
	f.Fuzz(func(t *testing.T, params, point []byte) {
		a := attr.Map{ck.CKA_EC_PARAMS: params, ck.CKA_EC_POINT: point}
		err := mech.CompleteECPublic(a)
		if err != nil {
			if ck.RV(err) == uint64(ck.CKR_GENERAL_ERROR) || ck.RV(err) == 0 {
				t.Fatalf("error without a CKR code: %v", err)
			}
			return
		}
		c, err := ec.CurveByOID(params)
		if err != nil {
			t.Fatalf("accepted unknown params %x", params)
		}
		var inner []byte
		if rest, err := asn1.Unmarshal(a[ck.CKA_EC_POINT], &inner); err != nil || len(rest) != 0 {
			t.Fatalf("stored point not DER: %x", a[ck.CKA_EC_POINT])
		}
		px, py, err := c.Unmarshal(inner)
		if err != nil || len(inner) != 1+2*c.ByteLen() || !c.IsOnCurve(px, py) {
			t.Fatalf("stored point %x invalid: %v", inner, err)
		}
	})
}

// BenchmarkECDSASignP256 is C_SignInit + C_Sign with CKM_ECDSA on P-256
// through the Module (what a PKCS#11 caller pays above the C layer).
func BenchmarkECDSASignP256(b *testing.B) {
	m, slot := benchModule(b)
	must2(b, m.InitToken(slot, []byte(testSOPIN), "Bench"))
	sh, err := m.OpenSession(slot, ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
	must2(b, err)
	must2(b, m.Login(sh, ck.CKU_SO, []byte(testSOPIN)))
	must2(b, m.InitPIN(sh, []byte(testUserPIN)))
	must2(b, m.Logout(sh))
	must2(b, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	_, priv := genEC(b, m, sh, "P-256", false)
	hash := make([]byte, 32)
	mc := &Mechanism{Type: ck.CKM_ECDSA}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := m.SignInit(sh, mc, priv); err != nil {
			b.Fatal(err)
		}
		if _, _, err := m.Sign(sh, hash, Out{Cap: 64}); err != nil {
			b.Fatal(err)
		}
	}
}

func must2(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

// testConfigB is testConfig for benchmarks.
func testConfigB(b *testing.B) {
	b.Helper()
	writeConfig(b, "label = \"Bench\"\nengine = \"soft\"\n")
}
