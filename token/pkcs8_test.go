package token

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// TestPKCS8RoundTrip: a private key object's PKCS#8 form is crypto/x509's,
// and parsing it gives the object's values back, for RSA and the EC curves.
func TestPKCS8RoundTrip(t *testing.T) {
	rk, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	rk.Precompute()
	keys := []any{rk}
	for _, c := range []elliptic.Curve{elliptic.P256(), elliptic.P384(), elliptic.P521()} {
		k, err := ecdsa.GenerateKey(c, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	keys = append(keys, ed)
	for _, key := range keys {
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		vals, kt, err := mech.ParsePKCS8(der)
		if err != nil {
			t.Fatalf("%T: %v", key, err)
		}
		a := vals.Clone()
		a[ck.CKA_CLASS], a[ck.CKA_KEY_TYPE] = ck.ULong(ck.CKO_PRIVATE_KEY), ck.ULong(kt)
		if kt == ck.CKK_EC_EDWARDS {
			a[ck.CKA_EC_PARAMS] = mech.Ed25519OID
		}
		obj, _, err := buildObjectFrom(a, nil, keyOrigin{mode: modeCreate}, userLoggedIn)
		if err != nil {
			t.Fatalf("%T: build: %v", key, err)
		}
		back, err := mech.MarshalPKCS8(&object{attrs: obj, complete: true})
		if err != nil {
			t.Fatalf("%T: marshal: %v", key, err)
		}
		parsed, err := x509.ParsePKCS8PrivateKey(back)
		if err != nil {
			t.Fatal(err)
		}
		if !parsed.(interface{ Equal(crypto.PrivateKey) bool }).Equal(key) {
			t.Fatalf("%T: round trip gives another key", key)
		}
		if e, ok := key.(*ecdsa.PrivateKey); ok {
			d, _ := e.Bytes()
			if new(big.Int).SetBytes(obj[ck.CKA_VALUE]).Cmp(new(big.Int).SetBytes(d)) != 0 {
				t.Fatal("EC scalar differs")
			}
		}
	}
	if _, _, err := mech.ParsePKCS8([]byte{0x30, 0x03, 0x02, 0x01, 0x00}); ck.RV(err) != uint64(ck.CKR_WRAPPED_KEY_INVALID) {
		t.Fatalf("garbage: %v", err)
	}
}

// FuzzUnwrappedPrivate: the PKCS#8 parser and the object built from it
// never panic, and what parses builds a consistent private key or a clean
// CKR error.
func FuzzUnwrappedPrivate(f *testing.F) {
	rk, _ := rsa.GenerateKey(rand.Reader, 1024)
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for _, k := range []any{rk, ek} {
		der, _ := x509.MarshalPKCS8PrivateKey(k)
		f.Add(der)
		f.Add(der[:len(der)/2])
	}
	for _, name := range []string{"dsa_pkcs8.der", "dh_pkcs8.der"} { // OpenSSL's (pkcs8_ff.go)
		if der, err := os.ReadFile("testdata/" + name); err == nil {
			f.Add(der)
		}
	}
	// ML-DSA-44 in the seed form (pkcs8_mldsa.go).
	f.Add([]byte("\x30\x34\x02\x01\x00\x30\x0b\x06\x09\x60\x86\x48\x01\x65\x03\x04\x03\x11\x04\x22\x80\x20" +
		"BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"))
	// ML-KEM (seed, expanded) and X25519/X448 (pkcs8_pq.go).
	p := mech.MLKEMSets[ck.CKP_ML_KEM_512]
	seed := bytes.Repeat([]byte{5}, 64)
	inner, _ := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, Bytes: seed})
	der, _ := mech.MarshalOneAsymmetricKey(p.OID, inner)
	f.Add(der)
	if dk, err := p.Expanded(seed); err == nil {
		inner, _ = asn1.Marshal(dk)
		der, _ = mech.MarshalOneAsymmetricKey(p.OID, inner)
		f.Add(der)
	}
	for _, c := range []*mech.XDHCurve{mech.X25519Curve, mech.X448Curve} {
		inner, _ = asn1.Marshal(bytes.Repeat([]byte{9}, c.Size))
		der, _ = mech.MarshalOneAsymmetricKey(c.SPKIOID, inner)
		f.Add(der)
	}
	// Ed448 (RFC 8410) and SLH-DSA-SHA2-128s (pkcs8_sig.go).
	f.Add([]byte("\x30\x47\x02\x01\x00\x30\x05\x06\x03\x2b\x65\x71\x04\x3b\x04\x39" + strings.Repeat("E", 57)))
	f.Add([]byte("\x30\x52\x02\x01\x00\x30\x0b\x06\x09\x60\x86\x48\x01\x65\x03\x04\x03\x14\x04\x40" + strings.Repeat("S", 64)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, der []byte) {
		a, _, err := unwrappedPrivate(attr.Map{ck.CKA_CLASS: ck.ULong(ck.CKO_PRIVATE_KEY)}, der, userLoggedIn)
		if err != nil {
			if ck.RV(err) == uint64(ck.CKR_GENERAL_ERROR) || ck.RV(err) == 0 {
				t.Fatalf("error without a CKR code: %v", err)
			}
			return
		}
		if _, err := mech.MarshalPKCS8(&object{attrs: a, complete: true}); err != nil {
			t.Fatalf("an unwrapped key does not wrap again: %v", err)
		}
	})
}
