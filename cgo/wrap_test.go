//go:build modexp_testhooks

package main

// C_WrapKey and C_UnwrapKey through the C entry points: AES key wrap
// (RFC 3394, RFC 5649 as CKM_AES_KEY_WRAP_PAD and _KWP) of secret keys and
// of RSA and EC private keys as PKCS#8, RSA OAEP and PKCS#1 v1.5 wraps of
// secret keys, the two-call convention, and the rules (CKA_EXTRACTABLE,
// CKA_WRAP/CKA_UNWRAP, CKA_WRAP_WITH_TRUSTED and CKA_TRUSTED, the wrap and
// unwrap templates, the attributes of unwrapped keys). Every wrap is
// checked against Go: token/keywrap (itself checked against the RFCs,
// Wycheproof and openssl), crypto/rsa and crypto/x509. They run under
// key_policy = "standard": checking a wrap against Go needs a wrapping key
// of a known value, and reading an unwrapped value back, both of which the
// safe policy refuses for sensitive keys (policy_test.go).

import (
	"bytes"
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/keywrap"
)

const ckmKWP = 0x210B // CKM_AES_KEY_WRAP_KWP

func bytesAttr(t uint64, v []byte) token.Attribute { return token.Attribute{Type: t, Value: v} }

// toTS converts a template for the tsAttr helpers.
func toTS(attrs []token.Attribute) []tsAttr {
	out := make([]tsAttr, len(attrs))
	for i, a := range attrs {
		out[i] = tsAttr{Type: a.Type, Value: a.Value}
	}
	return out
}

// aesKey creates a session AES key with value v and the extra attributes.
func aesKey(t *testing.T, h uint64, v []byte, extra ...token.Attribute) uint64 {
	t.Helper()
	attrs := append([]token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_SECRET_KEY), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_AES),
		bytesAttr(ck.CKA_VALUE, v)}, extra...)
	rv, k := tsCreate(h, attrs)
	if rv != 0 {
		t.Fatalf("C_CreateObject(AES key) = %v", ck.Error(rv))
	}
	return k
}

func randBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// unwrapTemplate is a template for an unwrapped, readable secret key.
func unwrapTemplate(kt uint64) []tsAttr {
	return toTS([]token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_SECRET_KEY), ulongAttr(ck.CKA_KEY_TYPE, kt),
		boolAttr(ck.CKA_SENSITIVE, false), boolAttr(ck.CKA_EXTRACTABLE, true)})
}

func attrIs(t *testing.T, h, obj, typ uint64, want []byte) {
	t.Helper()
	rv, _, v := tsGetAttr(h, obj, typ, 4096)
	if rv != 0 || !bytes.Equal(v, want) {
		t.Errorf("%s = %v, %x; want %x", ck.Name("CKA_", typ), ck.Error(rv), v, want)
	}
}

func TestWrapAESKeyWrap(t *testing.T) {
	h := readySessionWith(t, standardPolicy)
	kek := randBytes(32)
	b, _ := aes.NewCipher(kek)
	wk := aesKey(t, h, kek, boolAttr(ck.CKA_WRAP, true), boolAttr(ck.CKA_UNWRAP, true))
	target := randBytes(24)
	k := aesKey(t, h, target, boolAttr(ck.CKA_EXTRACTABLE, true))
	for _, c := range []struct {
		name  string
		mech  tsMech
		wrap  func() ([]byte, error)
		unwrp func([]byte) ([]byte, error)
	}{
		{"CKM_AES_KEY_WRAP", tsMech{Type: ck.CKM_AES_KEY_WRAP},
			func() ([]byte, error) { return keywrap.Wrap(b, nil, target) },
			func(w []byte) ([]byte, error) { return keywrap.Unwrap(b, nil, w) }},
		{"CKM_AES_KEY_WRAP with an IV", tsMech{Type: ck.CKM_AES_KEY_WRAP, Raw: []byte("8 bytes!")},
			func() ([]byte, error) { return keywrap.Wrap(b, []byte("8 bytes!"), target) }, nil},
		{"CKM_AES_KEY_WRAP_PAD", tsMech{Type: ck.CKM_AES_KEY_WRAP_PAD},
			func() ([]byte, error) { return keywrap.WrapPad(b, nil, target) }, nil},
		{"CKM_AES_KEY_WRAP_KWP", tsMech{Type: ckmKWP},
			func() ([]byte, error) { return keywrap.WrapPad(b, nil, target) }, nil},
		{"CKM_AES_KEY_WRAP_KWP with an IV", tsMech{Type: ckmKWP, Raw: []byte{1, 2, 3, 4}},
			func() ([]byte, error) { return keywrap.WrapPad(b, []byte{1, 2, 3, 4}, target) }, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, err := c.wrap()
			if err != nil {
				t.Fatal(err)
			}
			// Two-call convention: the length, then a short buffer, then the wrap.
			rv, n, _ := tsWrapKey(h, c.mech, wk, k, true, 0)
			if rv != 0 || n != uint64(len(want)) {
				t.Fatalf("C_WrapKey(NULL) = %v, %d; want %d bytes", ck.Error(rv), n, len(want))
			}
			rv, n, _ = tsWrapKey(h, c.mech, wk, k, false, len(want)-1)
			if rv != uint64(ck.CKR_BUFFER_TOO_SMALL) || n != uint64(len(want)) {
				t.Fatalf("C_WrapKey(short) = %v, %d", ck.Error(rv), n)
			}
			rv, _, got := tsWrapKey(h, c.mech, wk, k, false, 1024)
			if rv != 0 || !bytes.Equal(got, want) {
				t.Fatalf("C_WrapKey = %v, %x; want %x", ck.Error(rv), got, want)
			}
			rv, nk := tsUnwrapKey(h, c.mech, wk, got, unwrapTemplate(ck.CKK_AES))
			if rv != 0 {
				t.Fatalf("C_UnwrapKey = %v", ck.Error(rv))
			}
			attrIs(t, h, nk, ck.CKA_VALUE, target)
			attrIs(t, h, nk, ck.CKA_LOCAL, []byte{0})
			attrIs(t, h, nk, ck.CKA_ALWAYS_SENSITIVE, []byte{0})
			attrIs(t, h, nk, ck.CKA_NEVER_EXTRACTABLE, []byte{0})
			attrIs(t, h, nk, ck.CKA_KEY_GEN_MECHANISM, ck.ULong(ck.CK_UNAVAILABLE_INFORMATION))
			// Any changed bit: CKR_WRAPPED_KEY_INVALID; a length no wrap
			// has: CKR_WRAPPED_KEY_LEN_RANGE.
			for i := range got {
				bad := bytes.Clone(got)
				bad[i] ^= 1 << (i % 8)
				if rv, _ := tsUnwrapKey(h, c.mech, wk, bad, unwrapTemplate(ck.CKK_AES)); rv != uint64(ck.CKR_WRAPPED_KEY_INVALID) {
					t.Fatalf("C_UnwrapKey(bit %d flipped) = %v", i, ck.Error(rv))
				}
			}
			for _, l := range []int{len(got) - 1, 7, 0} {
				if rv, _ := tsUnwrapKey(h, c.mech, wk, got[:l], unwrapTemplate(ck.CKK_AES)); rv != uint64(ck.CKR_WRAPPED_KEY_LEN_RANGE) {
					t.Fatalf("C_UnwrapKey(%d bytes) = %v", l, ck.Error(rv))
				}
			}
			if c.unwrp != nil {
				if p, err := c.unwrp(got); err != nil || !bytes.Equal(p, target) {
					t.Fatalf("Go unwrap: %x, %v", p, err)
				}
			}
		})
	}
	// Parameters.
	for _, m := range []tsMech{{Type: ck.CKM_AES_KEY_WRAP, Raw: []byte{1, 2, 3}}, {Type: ck.CKM_AES_KEY_WRAP_PAD, Raw: []byte{1, 2, 3, 4}},
		{Type: ckmKWP, Raw: make([]byte, 8)}} {
		if rv, _, _ := tsWrapKey(h, m, wk, k, true, 0); rv != uint64(ck.CKR_MECHANISM_PARAM_INVALID) {
			t.Errorf("C_WrapKey(%s, %d-byte parameter) = %v", ck.Name("CKM_", m.Type), len(m.Raw), ck.Error(rv))
		}
	}
	// RFC 3394 wraps multiples of 8 bytes only; RFC 5649 any length.
	g := tsGenericKey(t, h, randBytes(20))
	if rv, _, _ := tsWrapKey(h, tsMech{Type: ck.CKM_AES_KEY_WRAP}, wk, g, true, 0); rv != uint64(ck.CKR_KEY_SIZE_RANGE) {
		t.Errorf("C_WrapKey(KW, 20-byte key) = %v", ck.Error(rv))
	}
	rv, _, w := tsWrapKey(h, tsMech{Type: ckmKWP}, wk, g, false, 1024)
	if rv != 0 || len(w) != 32 {
		t.Fatalf("C_WrapKey(KWP, 20-byte key) = %v, %d bytes", ck.Error(rv), len(w))
	}
	// Unwrapped as an AES key, 20 bytes are no AES key.
	if rv, _ := tsUnwrapKey(h, tsMech{Type: ckmKWP}, wk, w, unwrapTemplate(ck.CKK_AES)); rv != uint64(ck.CKR_WRAPPED_KEY_INVALID) {
		t.Errorf("C_UnwrapKey(20 bytes as CKK_AES) = %v", ck.Error(rv))
	}
	if rv, nk := tsUnwrapKey(h, tsMech{Type: ckmKWP}, wk, w, unwrapTemplate(ck.CKK_GENERIC_SECRET)); rv != 0 {
		t.Errorf("C_UnwrapKey(20 bytes as CKK_GENERIC_SECRET) = %v", ck.Error(rv))
	} else {
		attrIs(t, h, nk, ck.CKA_VALUE_LEN, ck.ULong(20))
	}
}

func tsGenericKey(t *testing.T, h uint64, v []byte, extra ...token.Attribute) uint64 {
	t.Helper()
	attrs := append([]token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_SECRET_KEY), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_GENERIC_SECRET),
		bytesAttr(ck.CKA_VALUE, v), boolAttr(ck.CKA_EXTRACTABLE, true)}, extra...)
	rv, k := tsCreate(h, attrs)
	if rv != 0 {
		t.Fatalf("C_CreateObject(generic secret) = %v", ck.Error(rv))
	}
	return k
}

// TestWrapRules: the attributes that allow or forbid a wrap or an unwrap.
func TestWrapRules(t *testing.T) {
	h := readySessionWith(t, standardPolicy)
	kek := randBytes(16)
	kw := tsMech{Type: ckmKWP}
	wk := aesKey(t, h, kek, boolAttr(ck.CKA_WRAP, true), boolAttr(ck.CKA_UNWRAP, true))
	noWrap := aesKey(t, h, kek, boolAttr(ck.CKA_WRAP, false), boolAttr(ck.CKA_UNWRAP, false))
	k := aesKey(t, h, randBytes(16), boolAttr(ck.CKA_EXTRACTABLE, true))
	stuck := aesKey(t, h, randBytes(16), boolAttr(ck.CKA_EXTRACTABLE, false))
	trustedOnly := aesKey(t, h, randBytes(16), boolAttr(ck.CKA_EXTRACTABLE, true), boolAttr(ck.CKA_WRAP_WITH_TRUSTED, true))
	rv, _, w := tsWrapKey(h, kw, wk, k, false, 64)
	wantRV(t, "C_WrapKey", rv, ck.CKR_OK)

	check := func(what string, got uint64, want ck.Error) {
		t.Helper()
		if got != uint64(want) {
			t.Errorf("%s = %v, want %v", what, ck.Error(got), want)
		}
	}
	wrapRV := func(m tsMech, wrapping, key uint64) uint64 {
		rv, _, _ := tsWrapKey(h, m, wrapping, key, true, 0)
		return rv
	}
	check("C_WrapKey(CKA_EXTRACTABLE false)", wrapRV(kw, wk, stuck), ck.CKR_KEY_UNEXTRACTABLE)
	check("C_WrapKey(wrapping key CKA_WRAP false)", wrapRV(kw, noWrap, k), ck.CKR_KEY_FUNCTION_NOT_PERMITTED)
	check("C_WrapKey(CKA_WRAP_WITH_TRUSTED, untrusted wrapping key)", wrapRV(kw, wk, trustedOnly), ck.CKR_KEY_NOT_WRAPPABLE)
	check("C_WrapKey(bad wrapping key handle)", wrapRV(kw, 0xdead, k), ck.CKR_WRAPPING_KEY_HANDLE_INVALID)
	check("C_WrapKey(bad key handle)", wrapRV(kw, wk, 0xdead), ck.CKR_KEY_HANDLE_INVALID)
	check("C_WrapKey(a mechanism that does not wrap)", wrapRV(tsMech{Type: ck.CKM_SHA256}, wk, k), ck.CKR_MECHANISM_INVALID)
	rv, _ = tsUnwrapKey(h, kw, noWrap, w, unwrapTemplate(ck.CKK_AES))
	check("C_UnwrapKey(unwrapping key CKA_UNWRAP false)", rv, ck.CKR_KEY_FUNCTION_NOT_PERMITTED)
	rv, _ = tsUnwrapKey(h, kw, 0xdead, w, unwrapTemplate(ck.CKK_AES))
	check("C_UnwrapKey(bad unwrapping key)", rv, ck.CKR_UNWRAPPING_KEY_HANDLE_INVALID)
	rv, _ = tsUnwrapKey(h, kw, wk, w, toTS([]token.Attribute{ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_AES)}))
	check("C_UnwrapKey(no CKA_CLASS)", rv, ck.CKR_TEMPLATE_INCOMPLETE)
	rv, _ = tsUnwrapKey(h, kw, wk, w, toTS([]token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_RSA)}))
	check("C_UnwrapKey(CKO_PUBLIC_KEY)", rv, ck.CKR_TEMPLATE_INCONSISTENT)
	rv, _ = tsUnwrapKey(h, kw, wk, w, append(unwrapTemplate(ck.CKK_AES), tsAttr{Type: ck.CKA_VALUE, Value: make([]byte, 16)}))
	check("C_UnwrapKey(CKA_VALUE in the template)", rv, ck.CKR_ATTRIBUTE_READ_ONLY)
	rv, _ = tsUnwrapKey(h, kw, wk, w, append(unwrapTemplate(ck.CKK_AES), tsAttr{Type: ck.CKA_LOCAL, Value: []byte{1}}))
	check("C_UnwrapKey(CKA_LOCAL in the template)", rv, ck.CKR_ATTRIBUTE_READ_ONLY)
	// A sensitive wrapping key still wraps; an unwrapped key keeps a
	// CKA_SENSITIVE true asked for, and is never "always sensitive".
	rv, nk := tsUnwrapKey(h, kw, wk, w, toTS([]token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_SECRET_KEY), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_AES)}))
	wantRV(t, "C_UnwrapKey(defaults)", rv, ck.CKR_OK)
	attrIs(t, h, nk, ck.CKA_SENSITIVE, []byte{1})
	attrIs(t, h, nk, ck.CKA_ALWAYS_SENSITIVE, []byte{0})
	attrIs(t, h, nk, ck.CKA_EXTRACTABLE, []byte{0})
	attrIs(t, h, nk, ck.CKA_NEVER_EXTRACTABLE, []byte{0})
	if rv, _, _ := tsGetAttr(h, nk, ck.CKA_VALUE, 64); rv != uint64(ck.CKR_ATTRIBUTE_SENSITIVE) {
		t.Errorf("CKA_VALUE of a sensitive unwrapped key = %v", ck.Error(rv))
	}

	// CKA_WRAP_TEMPLATE: only AES keys with CKA_LABEL "ok" may be wrapped.
	wt := token.EncodeAttributes([]token.Attribute{ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_AES), bytesAttr(ck.CKA_LABEL, []byte("ok"))})
	picky := aesKey(t, h, kek, boolAttr(ck.CKA_WRAP, true), bytesAttr(ck.CKA_WRAP_TEMPLATE, wt))
	okKey := aesKey(t, h, randBytes(32), boolAttr(ck.CKA_EXTRACTABLE, true), bytesAttr(ck.CKA_LABEL, []byte("ok")))
	check("C_WrapKey(key not matching CKA_WRAP_TEMPLATE)", wrapRV(kw, picky, k), ck.CKR_KEY_NOT_WRAPPABLE)
	check("C_WrapKey(generic key, template wants AES)", wrapRV(kw, picky, tsGenericKey(t, h, randBytes(16), bytesAttr(ck.CKA_LABEL, []byte("ok")))), ck.CKR_KEY_NOT_WRAPPABLE)
	check("C_WrapKey(key matching CKA_WRAP_TEMPLATE)", wrapRV(kw, picky, okKey), ck.CKR_OK)

	// CKA_UNWRAP_TEMPLATE: unwrapped keys are not extractable, labelled "in".
	ut := token.EncodeAttributes([]token.Attribute{boolAttr(ck.CKA_EXTRACTABLE, false), bytesAttr(ck.CKA_LABEL, []byte("in"))})
	strict := aesKey(t, h, kek, boolAttr(ck.CKA_UNWRAP, true), bytesAttr(ck.CKA_UNWRAP_TEMPLATE, ut))
	rv, _ = tsUnwrapKey(h, kw, strict, w, unwrapTemplate(ck.CKK_AES)) // asks CKA_EXTRACTABLE true
	check("C_UnwrapKey(template conflicting with CKA_UNWRAP_TEMPLATE)", rv, ck.CKR_TEMPLATE_INCONSISTENT)
	rv, nk = tsUnwrapKey(h, kw, strict, w, toTS([]token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_SECRET_KEY), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_AES),
		bytesAttr(ck.CKA_LABEL, []byte("in"))}))
	wantRV(t, "C_UnwrapKey(CKA_UNWRAP_TEMPLATE merged)", rv, ck.CKR_OK)
	attrIs(t, h, nk, ck.CKA_EXTRACTABLE, []byte{0})
	attrIs(t, h, nk, ck.CKA_LABEL, []byte("in"))

	// CKA_WRAP_WITH_TRUSTED: a wrapping key the SO made trusted may wrap it.
	wantRV(t, "C_Logout", tsLogout(h), ck.CKR_OK)
	wantRV(t, "C_Login(SO)", tsLogin(h, ck.CKU_SO, []byte("so-pin-1"), false, 8), ck.CKR_OK)
	trusted := aesKey(t, h, kek, boolAttr(ck.CKA_PRIVATE, false), boolAttr(ck.CKA_WRAP, true), boolAttr(ck.CKA_TRUSTED, true))
	wantRV(t, "C_Logout", tsLogout(h), ck.CKR_OK)
	wantRV(t, "C_Login(USER)", tsLogin(h, ck.CKU_USER, []byte("user-pin"), false, 8), ck.CKR_OK)
	trustedOnly = aesKey(t, h, randBytes(16), boolAttr(ck.CKA_EXTRACTABLE, true), boolAttr(ck.CKA_WRAP_WITH_TRUSTED, true))
	check("C_WrapKey(CKA_WRAP_WITH_TRUSTED, trusted wrapping key)", wrapRV(kw, trusted, trustedOnly), ck.CKR_OK)
	// (wk was a private session object: the logout destroyed it.)
	untrusted := aesKey(t, h, kek, boolAttr(ck.CKA_WRAP, true))
	check("C_WrapKey(CKA_WRAP_WITH_TRUSTED, untrusted wrapping key)", wrapRV(kw, untrusted, trustedOnly), ck.CKR_KEY_NOT_WRAPPABLE)
	// Only the SO sets CKA_TRUSTED.
	if rv, _ := tsCreate(h, []token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_SECRET_KEY), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_AES),
		bytesAttr(ck.CKA_VALUE, kek), boolAttr(ck.CKA_TRUSTED, true)}); rv != uint64(ck.CKR_ATTRIBUTE_READ_ONLY) {
		t.Errorf("C_CreateObject(CKA_TRUSTED) as the user = %v", ck.Error(rv))
	}
}

// rsaPrivateAttrs is the template importing k.
func rsaPrivateAttrs(k *rsa.PrivateKey, extra ...token.Attribute) []token.Attribute {
	return append([]token.Attribute{
		ulongAttr(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_RSA),
		bytesAttr(ck.CKA_MODULUS, k.N.Bytes()), bytesAttr(ck.CKA_PUBLIC_EXPONENT, big.NewInt(int64(k.E)).Bytes()),
		bytesAttr(ck.CKA_PRIVATE_EXPONENT, k.D.Bytes()),
		bytesAttr(ck.CKA_PRIME_1, k.Primes[0].Bytes()), bytesAttr(ck.CKA_PRIME_2, k.Primes[1].Bytes()),
		bytesAttr(ck.CKA_EXPONENT_1, k.Precomputed.Dp.Bytes()), bytesAttr(ck.CKA_EXPONENT_2, k.Precomputed.Dq.Bytes()),
		bytesAttr(ck.CKA_COEFFICIENT, k.Precomputed.Qinv.Bytes()),
	}, extra...)
}

var testRSAKey = func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	k.Precompute()
	return k
}()

// TestWrapPrivateKeys: RSA and EC private keys wrapped as PKCS#8 under
// AES key wrap with padding, unwrapped into keys that sign.
func TestWrapPrivateKeys(t *testing.T) {
	h := readySessionWith(t, standardPolicy)
	kek := randBytes(32)
	b, _ := aes.NewCipher(kek)
	wk := aesKey(t, h, kek, boolAttr(ck.CKA_WRAP, true), boolAttr(ck.CKA_UNWRAP, true))
	ecKey, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	d, _ := ecKey.Bytes()
	p384 := []byte{0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22}
	rv, hRSA := tsCreate(h, rsaPrivateAttrs(testRSAKey, boolAttr(ck.CKA_EXTRACTABLE, true)))
	wantRV(t, "C_CreateObject(RSA)", rv, ck.CKR_OK)
	rv, hEC := tsCreate(h, []token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_EC),
		bytesAttr(ck.CKA_EC_PARAMS, p384), bytesAttr(ck.CKA_VALUE, d), boolAttr(ck.CKA_EXTRACTABLE, true)})
	wantRV(t, "C_CreateObject(EC)", rv, ck.CKR_OK)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	rv, hEd := tsCreate(h, []token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_EC_EDWARDS),
		bytesAttr(ck.CKA_EC_PARAMS, []byte{0x06, 0x03, 0x2b, 0x65, 0x70}), bytesAttr(ck.CKA_VALUE, edKey.Seed()), boolAttr(ck.CKA_EXTRACTABLE, true)})
	wantRV(t, "C_CreateObject(Ed25519)", rv, ck.CKR_OK)
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		key  uint64
		want any
		mech tsMech
		kt   uint64
	}{
		{"RSA-2048", hRSA, testRSAKey, tsMech{Type: ck.CKM_SHA256_RSA_PKCS}, ck.CKK_RSA},
		{"P-384", hEC, ecKey, tsMech{Type: ck.CKM_ECDSA}, ck.CKK_EC},
		{"Ed25519", hEd, edKey, tsMech{Type: ck.CKM_EDDSA}, ck.CKK_EC_EDWARDS},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, m := range []uint64{ck.CKM_AES_KEY_WRAP_PAD, ckmKWP} {
				rv, _, w := tsWrapKey(h, tsMech{Type: m}, wk, c.key, false, 8192)
				wantRV(t, "C_WrapKey", rv, ck.CKR_OK)
				der, err := keywrap.UnwrapPad(b, nil, w)
				if err != nil {
					t.Fatalf("Go unwrap: %v", err)
				}
				got, err := x509.ParsePKCS8PrivateKey(der)
				if err != nil {
					t.Fatalf("the wrapped key is no PKCS#8: %v", err)
				}
				if !got.(interface{ Equal(crypto.PrivateKey) bool }).Equal(c.want) {
					t.Fatalf("the wrapped key is another key")
				}
				// openssl reads it too.
				f := filepath.Join(dir, c.name+".der")
				if err := os.WriteFile(f, der, 0o600); err != nil {
					t.Fatal(err)
				}
				if out, err := exec.Command("openssl", "pkey", "-inform", "DER", "-in", f, "-noout", "-check").CombinedOutput(); err != nil {
					t.Fatalf("openssl pkey -check: %v\n%s", err, out)
				}
				// Unwrapped without CKA_KEY_TYPE (taken from PKCS#8): a key that signs.
				rv, nk := tsUnwrapKey(h, tsMech{Type: m}, wk, w, toTS([]token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY),
					boolAttr(ck.CKA_SIGN, true), bytesAttr(ck.CKA_LABEL, []byte("moved"))}))
				wantRV(t, "C_UnwrapKey(private)", rv, ck.CKR_OK)
				attrIs(t, h, nk, ck.CKA_KEY_TYPE, ck.ULong(c.kt))
				attrIs(t, h, nk, ck.CKA_LOCAL, []byte{0})
				attrIs(t, h, nk, ck.CKA_ALWAYS_SENSITIVE, []byte{0})
				attrIs(t, h, nk, ck.CKA_NEVER_EXTRACTABLE, []byte{0})
				msg := []byte("signed by an unwrapped key")
				dg := sha256.Sum256(msg)
				in := msg
				if c.kt == ck.CKK_EC {
					in = dg[:]
				}
				if c.kt == ck.CKK_EC_EDWARDS {
					attrIs(t, h, nk, ck.CKA_EC_PARAMS, append([]byte{0x13, 0x0c}, "edwards25519"...))
				}
				rv, sig := tsSign(h, c.mech, nk, in)
				wantRV(t, "C_Sign with the unwrapped key", rv, ck.CKR_OK)
				switch k := c.want.(type) {
				case *rsa.PrivateKey:
					if err := rsa.VerifyPKCS1v15(&k.PublicKey, crypto.SHA256, dg[:], sig); err != nil {
						t.Fatalf("signature: %v", err)
					}
				case *ecdsa.PrivateKey:
					n := len(sig) / 2
					if !ecdsa.Verify(&k.PublicKey, dg[:], new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])) {
						t.Fatal("signature does not verify")
					}
				case ed25519.PrivateKey:
					if !ed25519.Verify(k.Public().(ed25519.PublicKey), msg, sig) {
						t.Fatal("Ed25519 signature does not verify")
					}
				}
				// The template's key type must be the wrapped key's.
				other := uint64(ck.CKK_EC)
				if c.kt == ck.CKK_EC {
					other = ck.CKK_RSA
				}
				rv, _ = tsUnwrapKey(h, tsMech{Type: m}, wk, w, toTS([]token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), ulongAttr(ck.CKA_KEY_TYPE, uint64(other))}))
				wantRV(t, "C_UnwrapKey(another key type)", rv, ck.CKR_TEMPLATE_INCONSISTENT)
			}
			// RFC 3394 does not wrap private keys.
			rv, _, _ := tsWrapKey(h, tsMech{Type: ck.CKM_AES_KEY_WRAP}, wk, c.key, true, 0)
			wantRV(t, "C_WrapKey(KW, private key)", rv, ck.CKR_KEY_NOT_WRAPPABLE)
		})
	}
	// A secret key's bytes unwrapped as a private key: not PKCS#8.
	k := aesKey(t, h, randBytes(32), boolAttr(ck.CKA_EXTRACTABLE, true))
	_, _, w := tsWrapKey(h, tsMech{Type: ckmKWP}, wk, k, false, 64)
	rv, _ = tsUnwrapKey(h, tsMech{Type: ckmKWP}, wk, w, toTS([]token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY)}))
	wantRV(t, "C_UnwrapKey(an AES key as a private key)", rv, ck.CKR_WRAPPED_KEY_INVALID)
	// A public key is no key to wrap.
	rv, pub := tsCreate(h, []token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_RSA),
		bytesAttr(ck.CKA_MODULUS, testRSAKey.N.Bytes()), bytesAttr(ck.CKA_PUBLIC_EXPONENT, []byte{1, 0, 1})})
	wantRV(t, "C_CreateObject(public)", rv, ck.CKR_OK)
	rv, _, _ = tsWrapKey(h, tsMech{Type: ckmKWP}, wk, pub, true, 0)
	wantRV(t, "C_WrapKey(public key)", rv, ck.CKR_KEY_NOT_WRAPPABLE)
}

// TestWrapRSA: secret keys wrapped under RSA OAEP and PKCS#1 v1.5, checked
// with crypto/rsa, and unwrapped with the private key.
func TestWrapRSA(t *testing.T) {
	h := readySessionWith(t, standardPolicy)
	rv, priv := tsCreate(h, rsaPrivateAttrs(testRSAKey, boolAttr(ck.CKA_UNWRAP, true)))
	wantRV(t, "C_CreateObject(RSA private)", rv, ck.CKR_OK)
	rv, pub := tsCreate(h, []token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_RSA),
		bytesAttr(ck.CKA_MODULUS, testRSAKey.N.Bytes()), bytesAttr(ck.CKA_PUBLIC_EXPONENT, []byte{1, 0, 1}), boolAttr(ck.CKA_WRAP, true)})
	wantRV(t, "C_CreateObject(RSA public)", rv, ck.CKR_OK)
	target := randBytes(32)
	k := aesKey(t, h, target, boolAttr(ck.CKA_EXTRACTABLE, true))
	oaep := tsMech{Type: ck.CKM_RSA_PKCS_OAEP, Kind: 2, OAEP: token.OAEPParams{Hash: ck.CKM_SHA256, MGF: ck.CKG_MGF1_SHA256, Source: ck.CKZ_DATA_SPECIFIED}}
	for _, c := range []struct {
		name   string
		mech   tsMech
		unwrap func([]byte) ([]byte, error)
	}{
		{"OAEP-SHA256", oaep, func(w []byte) ([]byte, error) { return rsa.DecryptOAEP(sha256.New(), nil, testRSAKey, w, nil) }},
		{"PKCS1v15", tsMech{Type: ck.CKM_RSA_PKCS}, func(w []byte) ([]byte, error) {
			return rsa.DecryptPKCS1v15(nil, testRSAKey, w) //nolint:staticcheck // checking our output
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rv, n, _ := tsWrapKey(h, c.mech, pub, k, true, 0)
			if rv != 0 || n != 256 {
				t.Fatalf("C_WrapKey(NULL) = %v, %d", ck.Error(rv), n)
			}
			rv, _, w := tsWrapKey(h, c.mech, pub, k, false, 256)
			wantRV(t, "C_WrapKey", rv, ck.CKR_OK)
			if p, err := c.unwrap(w); err != nil || !bytes.Equal(p, target) {
				t.Fatalf("crypto/rsa: %x, %v", p, err)
			}
			rv, nk := tsUnwrapKey(h, c.mech, priv, w, unwrapTemplate(ck.CKK_AES))
			wantRV(t, "C_UnwrapKey", rv, ck.CKR_OK)
			attrIs(t, h, nk, ck.CKA_VALUE, target)
			rv, _ = tsUnwrapKey(h, c.mech, priv, w[:255], unwrapTemplate(ck.CKK_AES))
			wantRV(t, "C_UnwrapKey(255 bytes)", rv, ck.CKR_WRAPPED_KEY_LEN_RANGE)
			// The public key does not unwrap, the private key does not wrap.
			rv, _ = tsUnwrapKey(h, c.mech, pub, w, unwrapTemplate(ck.CKK_AES))
			wantRV(t, "C_UnwrapKey(public key)", rv, ck.CKR_UNWRAPPING_KEY_TYPE_INCONSISTENT)
			rv, _, _ = tsWrapKey(h, c.mech, priv, k, true, 0)
			wantRV(t, "C_WrapKey(private key)", rv, ck.CKR_WRAPPING_KEY_TYPE_INCONSISTENT)
		})
	}
	// OAEP damage: CKR_WRAPPED_KEY_INVALID.
	_, _, w := tsWrapKey(h, oaep, pub, k, false, 256)
	w[10] ^= 1
	rv, _ = tsUnwrapKey(h, oaep, priv, w, unwrapTemplate(ck.CKK_AES))
	wantRV(t, "C_UnwrapKey(OAEP, damaged)", rv, ck.CKR_WRAPPED_KEY_INVALID)
	// RSA wraps secret keys only.
	rv, hp := tsCreate(h, rsaPrivateAttrs(testRSAKey, boolAttr(ck.CKA_EXTRACTABLE, true)))
	wantRV(t, "C_CreateObject", rv, ck.CKR_OK)
	rv, _, _ = tsWrapKey(h, oaep, pub, hp, true, 0)
	wantRV(t, "C_WrapKey(OAEP, private key)", rv, ck.CKR_KEY_NOT_WRAPPABLE)
}

// TestWrapAESCBCPad: CKM_AES_CBC_PAD wraps a secret key as Go's CBC with
// PKCS#7 padding does, and a private key as PKCS#8.
func TestWrapAESCBCPad(t *testing.T) {
	h := readySessionWith(t, standardPolicy)
	kek, iv := randBytes(16), randBytes(16)
	wk := aesKey(t, h, kek, boolAttr(ck.CKA_WRAP, true), boolAttr(ck.CKA_UNWRAP, true))
	target := randBytes(32)
	k := aesKey(t, h, target, boolAttr(ck.CKA_EXTRACTABLE, true))
	mech := tsMech{Type: ck.CKM_AES_CBC_PAD, Raw: iv}
	b, _ := aes.NewCipher(kek)
	padded := append(bytes.Clone(target), bytes.Repeat([]byte{16}, 16)...)
	want := make([]byte, len(padded))
	cipher.NewCBCEncrypter(b, iv).CryptBlocks(want, padded)
	rv, n, _ := tsWrapKey(h, mech, wk, k, true, 0)
	if rv != 0 || n != 48 {
		t.Fatalf("C_WrapKey(NULL) = %v, %d", ck.Error(rv), n)
	}
	rv, _, w := tsWrapKey(h, mech, wk, k, false, 64)
	if rv != 0 || !bytes.Equal(w, want) {
		t.Fatalf("C_WrapKey = %v, %x; want %x", ck.Error(rv), w, want)
	}
	rv, nk := tsUnwrapKey(h, mech, wk, w, unwrapTemplate(ck.CKK_AES))
	wantRV(t, "C_UnwrapKey", rv, ck.CKR_OK)
	attrIs(t, h, nk, ck.CKA_VALUE, target)
	rv, _ = tsUnwrapKey(h, mech, wk, w[:40], unwrapTemplate(ck.CKK_AES))
	wantRV(t, "C_UnwrapKey(40 bytes)", rv, ck.CKR_WRAPPED_KEY_LEN_RANGE)
	bad := bytes.Clone(w)
	bad[len(bad)-17] ^= 0x01 // the last padding byte becomes 17
	rv, _ = tsUnwrapKey(h, mech, wk, bad, unwrapTemplate(ck.CKK_AES))
	wantRV(t, "C_UnwrapKey(bad padding)", rv, ck.CKR_WRAPPED_KEY_INVALID)
	rv, _, _ = tsWrapKey(h, tsMech{Type: ck.CKM_AES_CBC_PAD, Raw: iv[:8]}, wk, k, true, 0)
	wantRV(t, "C_WrapKey(8-byte IV)", rv, ck.CKR_MECHANISM_PARAM_INVALID)
	// A private key round trip.
	rv, hp := tsCreate(h, rsaPrivateAttrs(testRSAKey, boolAttr(ck.CKA_EXTRACTABLE, true)))
	wantRV(t, "C_CreateObject(RSA)", rv, ck.CKR_OK)
	rv, _, w = tsWrapKey(h, mech, wk, hp, false, 4096)
	wantRV(t, "C_WrapKey(RSA private key)", rv, ck.CKR_OK)
	rv, nk = tsUnwrapKey(h, mech, wk, w, toTS([]token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_RSA)}))
	wantRV(t, "C_UnwrapKey(RSA private key)", rv, ck.CKR_OK)
	attrIs(t, h, nk, ck.CKA_MODULUS, testRSAKey.N.Bytes())
}

// TestWrapWycheproofC runs Wycheproof's AES key wrap vectors (kw_test.json,
// kwp_test.json in token/keywrap/testdata) through C_WrapKey and
// C_UnwrapKey: each valid message, as a generic secret key, wraps to its
// ciphertext; each valid ciphertext unwraps to a key holding the message;
// each invalid one is refused (CKR_WRAPPED_KEY_INVALID or
// CKR_WRAPPED_KEY_LEN_RANGE) and makes no object.
func TestWrapWycheproofC(t *testing.T) {
	h := readySessionWith(t, standardPolicy)
	for _, f := range []struct {
		file string
		mech tsMech
	}{
		{"kw_test.json", tsMech{Type: ck.CKM_AES_KEY_WRAP}},
		{"kwp_test.json", tsMech{Type: ckmKWP}},
	} {
		raw, err := os.ReadFile(filepath.Join("..", "token", "keywrap", "testdata", f.file))
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			TestGroups []struct {
				Tests []struct {
					TcID            int
					Key, Msg, Ct    string
					Result, Comment string
				}
			}
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, g := range v.TestGroups {
			for _, c := range g.Tests {
				key, msg, ct := mustHex(t, c.Key), mustHex(t, c.Msg), mustHex(t, c.Ct)
				if len(key) != 16 && len(key) != 24 && len(key) != 32 {
					continue
				}
				n++
				wk := aesKey(t, h, key, boolAttr(ck.CKA_WRAP, true), boolAttr(ck.CKA_UNWRAP, true))
				rv, nk := tsUnwrapKey(h, f.mech, wk, ct, unwrapTemplate(ck.CKK_GENERIC_SECRET))
				switch {
				case c.Result == "valid":
					if rv != 0 {
						t.Fatalf("%s #%d (%s): C_UnwrapKey = %v", f.file, c.TcID, c.Comment, ck.Error(rv))
					}
					attrIs(t, h, nk, ck.CKA_VALUE, msg)
					k := tsGenericKey(t, h, msg)
					rv, _, w := tsWrapKey(h, f.mech, wk, k, false, len(ct)+64)
					if rv != 0 || !bytes.Equal(w, ct) {
						t.Fatalf("%s #%d: C_WrapKey = %v, %x; want %x", f.file, c.TcID, ck.Error(rv), w, ct)
					}
					tsDestroyObject(h, k)
					tsDestroyObject(h, nk)
				case c.Result == "invalid":
					if rv != uint64(ck.CKR_WRAPPED_KEY_INVALID) && rv != uint64(ck.CKR_WRAPPED_KEY_LEN_RANGE) {
						t.Fatalf("%s #%d (%s): C_UnwrapKey of an invalid wrap = %v", f.file, c.TcID, c.Comment, ck.Error(rv))
					}
				default: // "acceptable": an empty key, refused here
					if rv == 0 {
						tsDestroyObject(h, nk)
					}
				}
				tsDestroyObject(h, wk)
			}
		}
		if n < 150 {
			t.Errorf("%s: %d vectors", f.file, n)
		}
		t.Logf("%s: %d vectors through C_WrapKey/C_UnwrapKey", f.file, n)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
