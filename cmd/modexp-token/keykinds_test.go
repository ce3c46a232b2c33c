package main

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/hex"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestParseKeyType: this tool's spellings and pkcs11-tool's name the same
// kinds; every kind of the table parses under its own name with its default.
func TestParseKeyType(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"rsa:2048", "rsa:2048"}, {"RSA:4096", "rsa:4096"}, {"rsa", "rsa:2048"},
		{"EC:P-256", "ec:P-256"}, {"ec:prime256v1", "ec:P-256"}, {"EC:secp384r1", "ec:P-384"},
		{"ec:secp521r1", "ec:P-521"}, {"EC:secp224r1", "ec:P-224"}, {"ec:secp256k1", "ec:secp256k1"},
		{"ecdsa:P-384", "ec:P-384"}, {"ec", "ec:P-256"},
		{"ed25519", "ed25519"}, {"EC:edwards25519", "ed25519"}, {"EdDSA", "ed25519"},
		{"dsa:3072", "dsa:3072"}, {"DSA", "dsa:2048"},
		{"dh", "dh:ffdhe2048"}, {"DH:ffdhe4096", "dh:ffdhe4096"}, {"dh:2048", "dh:2048"},
		{"AES:32", "aes:256"}, {"aes:16", "aes:128"}, {"aes:192", "aes:192"}, {"aes", "aes:256"},
		{"GENERIC:64", "generic:64"}, {"hmac:48", "generic:48"}, {"hmac", "generic:32"},
		{"DES3", "des3"}, {"des3:24", "des3"},
		{"ml-dsa-65", "ml-dsa-65"}, {"ML-DSA-44", "ml-dsa-44"}, {"ml-dsa", "ml-dsa-65"}, {"slh-dsa-shake-256f", "slh-dsa-shake-256f"},
		{"ed448", "ed448"}, {"EC:edwards448", "ed448"},
	} {
		got, err := parseKeyType(tc.in)
		if err != nil {
			t.Errorf("parseKeyType(%q): %v", tc.in, err)
			continue
		}
		if got.String() != tc.want {
			t.Errorf("parseKeyType(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{"", "rsa:abc", "rsa:512", "ec:P-999", "ed25519:1", "dsa:1536", "dh:modp", "aes:20",
		"generic:0", "des3:16", "blowfish", "ml-dsa-66", "ml-dsa:65"} {
		if got, err := parseKeyType(bad); err == nil {
			t.Errorf("parseKeyType(%q) = %s, want an error", bad, got)
		}
	}
	for _, k := range keyKinds {
		spec, err := parseKeyType(k.name)
		if err != nil || spec.kind != k {
			t.Errorf("kind %s does not parse under its own name: %v", k.name, err)
		}
		if kindByType(k.keyType) == nil {
			t.Errorf("kind %s: kindByType(%s) finds none", k.name, ck.Name("CKK_", k.keyType))
		}
		if k.plan == nil || k.describe == nil || k.help == "" {
			t.Errorf("kind %s lacks plan, describe or help", k.name)
		}
	}
}

// TestParsePrivateKeyGo: keys Go writes (PKCS#1, SEC 1, PKCS#8) parse, and
// their SubjectPublicKeyInfo is the one crypto/x509 writes (the ID).
func TestParsePrivateKeyGo(t *testing.T) {
	rk, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, edk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p8 := func(k any) []byte {
		b, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	sec1, err := x509.MarshalECPrivateKey(ek)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		der  []byte
		pub  any
		what string
	}{
		{"PKCS#1 RSA", x509.MarshalPKCS1PrivateKey(rk), rk.Public(), "RSA-1024 private key"},
		{"PKCS#8 RSA", p8(rk), rk.Public(), "RSA-1024 private key"},
		{"SEC 1 P-224", sec1, ek.Public(), "EC P-224 private key"},
		{"PKCS#8 P-224", p8(ek), ek.Public(), "EC P-224 private key"},
		{"PKCS#8 Ed25519", p8(edk), edk.Public(), "Ed25519 private key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := parsePrivateKey(tc.der)
			if err != nil {
				t.Fatal(err)
			}
			want, err := x509.MarshalPKIXPublicKey(tc.pub)
			if err != nil {
				t.Fatal(err)
			}
			if k.what != tc.what {
				t.Errorf("what = %q, want %q", k.what, tc.what)
			}
			if g, w := sha1.Sum(k.spki), sha1.Sum(want); g != w {
				t.Errorf("SPKI ID %s, want %s", hex.EncodeToString(g[:]), hex.EncodeToString(w[:]))
			}
			if len(k.priv) == 0 || len(k.pub) == 0 {
				t.Errorf("no templates")
			}
		})
	}
}

// FuzzParsePrivateKey: any input is parsed or refused, never a panic; a
// parsed key has both templates, a name and a SubjectPublicKeyInfo.
func FuzzParsePrivateKey(f *testing.F) {
	rk, _ := rsa.GenerateKey(rand.Reader, 1024)
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, edk, _ := ed25519.GenerateKey(rand.Reader)
	for _, k := range []any{rk, ek, edk} {
		b, _ := x509.MarshalPKCS8PrivateKey(k)
		f.Add(b)
	}
	b, _ := x509.MarshalECPrivateKey(ek)
	f.Add(b)
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x00})
	f.Fuzz(func(t *testing.T, der []byte) {
		k, err := parsePrivateKey(der)
		if err != nil {
			return
		}
		if len(k.priv) == 0 || len(k.pub) == 0 || len(k.spki) == 0 || k.what == "" {
			t.Fatalf("parsed key without templates: %+v", k)
		}
	})
}
