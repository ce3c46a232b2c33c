//go:build modexp_testhooks

package main

import (
	"bytes"
	"crypto/aes"
	"testing"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// readySession initialises the module and the token and returns a R/W
// user session.
func readySession(t *testing.T) uint64 {
	t.Helper()
	return readySessionWith(t, "")
}

// readySessionWith is readySession with extra keys of the slot.
func readySessionWith(t *testing.T, extra string) uint64 {
	t.Helper()
	rv, h := tsReadySession(firstSlotWith(t, extra))
	if rv != 0 {
		t.Fatalf("token setup = %v", ck.Error(rv))
	}
	return h
}

func ulongAttr(t, v uint64) token.Attribute { return token.Attribute{Type: t, Value: ck.ULong(v)} }
func boolAttr(t uint64, v bool) token.Attribute {
	return token.Attribute{Type: t, Value: ck.Bool(v)}
}

func TestSecretKeyGenerateC(t *testing.T) {
	h := readySession(t)
	rv, k := tsGenKey(h, ck.CKM_AES_KEY_GEN, nil, []token.Attribute{
		ulongAttr(ck.CKA_VALUE_LEN, 32), boolAttr(ck.CKA_SENSITIVE, false), boolAttr(ck.CKA_EXTRACTABLE, true),
		boolAttr(ck.CKA_TOKEN, true),
	})
	if rv != 0 {
		t.Fatalf("C_GenerateKey = %v", ck.Error(rv))
	}
	rv, n, value := tsGetAttr(h, k, ck.CKA_VALUE, 64)
	if rv != 0 || n != 32 {
		t.Fatalf("CKA_VALUE = %v, %d bytes", ck.Error(rv), n)
	}
	b, _ := aes.NewCipher(value)
	var blk [16]byte
	b.Encrypt(blk[:], blk[:])
	if rv, _, kcv := tsGetAttr(h, k, ck.CKA_CHECK_VALUE, 3); rv != 0 || !bytes.Equal(kcv, blk[:3]) {
		t.Fatalf("CKA_CHECK_VALUE = %v, %x; want %x", ck.Error(rv), kcv, blk[:3])
	}
	if rv, _, v := tsGetAttr(h, k, ck.CKA_LOCAL, 1); rv != 0 || !bytes.Equal(v, []byte{1}) {
		t.Fatalf("CKA_LOCAL = %v, %x", ck.Error(rv), v)
	}
	// A sensitive key: CKA_VALUE is CK_UNAVAILABLE_INFORMATION.
	rv, k2 := tsGenKey(h, ck.CKM_GENERIC_SECRET_KEY_GEN, nil, []token.Attribute{
		ulongAttr(ck.CKA_VALUE_LEN, 48), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_SHA384_HMAC),
	})
	if rv != 0 {
		t.Fatalf("C_GenerateKey(generic) = %v", ck.Error(rv))
	}
	if rv, n, _ := tsGetAttr(h, k2, ck.CKA_VALUE, 64); rv != uint64(ck.CKR_ATTRIBUTE_SENSITIVE) || n != uint64(ck.CK_UNAVAILABLE_INFORMATION) {
		t.Fatalf("sensitive CKA_VALUE = %v, len %#x", ck.Error(rv), n)
	}
	if rv, _, v := tsGetAttr(h, k2, ck.CKA_VALUE_LEN, 8); rv != 0 || !bytes.Equal(v, ck.ULong(48)) {
		t.Fatalf("CKA_VALUE_LEN = %v, %x", ck.Error(rv), v)
	}
	for _, c := range []struct {
		name  string
		mech  uint64
		param []byte
		tmpl  []token.Attribute
		rv    ck.Error
	}{
		{"no length", ck.CKM_AES_KEY_GEN, nil, nil, ck.CKR_TEMPLATE_INCOMPLETE},
		{"bad length", ck.CKM_AES_KEY_GEN, nil, []token.Attribute{ulongAttr(ck.CKA_VALUE_LEN, 17)}, ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"parameter", ck.CKM_AES_KEY_GEN, []byte{1, 2}, []token.Attribute{ulongAttr(ck.CKA_VALUE_LEN, 16)}, ck.CKR_MECHANISM_PARAM_INVALID},
		{"key pair mechanism", ck.CKM_RSA_PKCS_KEY_PAIR_GEN, nil, []token.Attribute{ulongAttr(ck.CKA_VALUE_LEN, 16)}, ck.CKR_MECHANISM_INVALID},
	} {
		if rv, _ := tsGenKey(h, c.mech, c.param, c.tmpl); rv != uint64(c.rv) {
			t.Errorf("%s: C_GenerateKey = %v, want %v", c.name, ck.Error(rv), c.rv)
		}
	}
	// Copy and destroy through C.
	rv, c := tsCopyObject(h, k, []token.Attribute{boolAttr(ck.CKA_SENSITIVE, true), boolAttr(ck.CKA_TOKEN, false)})
	if rv != 0 {
		t.Fatalf("C_CopyObject = %v", ck.Error(rv))
	}
	if rv, _, _ := tsGetAttr(h, c, ck.CKA_VALUE, 64); rv != uint64(ck.CKR_ATTRIBUTE_SENSITIVE) {
		t.Fatalf("copied sensitive CKA_VALUE = %v", ck.Error(rv))
	}
	for _, o := range []uint64{c, k, k2} {
		if rv := tsDestroyObject(h, o); rv != 0 {
			t.Fatalf("C_DestroyObject = %v", ck.Error(rv))
		}
	}
}

func TestAttributeArraysC(t *testing.T) {
	h := readySession(t)
	inner := []token.Attribute{ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_AES), boolAttr(ck.CKA_EXTRACTABLE, true), {Type: ck.CKA_LABEL, Value: []byte("wrapped")}}
	rv, k := tsCreate(h, []token.Attribute{
		ulongAttr(ck.CKA_CLASS, ck.CKO_SECRET_KEY), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_AES),
		{Type: ck.CKA_VALUE, Value: make([]byte, 16)}, boolAttr(ck.CKA_UNWRAP, true),
		{Type: ck.CKA_UNWRAP_TEMPLATE, Value: token.EncodeAttributes(inner)},
	})
	if rv != 0 {
		t.Fatalf("C_CreateObject with CKA_UNWRAP_TEMPLATE = %v", ck.Error(rv))
	}
	s := tsGetArray(h, k, ck.CKA_UNWRAP_TEMPLATE, 0, ck.CKA_MODULUS)
	size := uint64(len(inner)) * uint64(sizeofAttr)
	if s[0].RV != 0 || s[0].Length != size {
		t.Fatalf("size query = %v, %d; want %d", ck.Error(s[0].RV), s[0].Length, size)
	}
	if s[1].RV != 0 || len(s[1].Types) != 3 || s[1].Types[2] != ck.CKA_LABEL || s[1].Lens[2] != 7 || s[1].Lens[0] != 8 {
		t.Fatalf("types query = %+v", s[1])
	}
	if s[2].RV != 0 || !bytes.Equal(s[2].Values[0], ck.ULong(ck.CKK_AES)) || !bytes.Equal(s[2].Values[2], []byte("wrapped")) {
		t.Fatalf("values = %+v", s[2])
	}
	if s[3].RV != uint64(ck.CKR_ATTRIBUTE_TYPE_INVALID) || s[3].Lens[0] != uint64(ck.CK_UNAVAILABLE_INFORMATION) {
		t.Fatalf("unknown inner type = %+v", s[3])
	}
	s = tsGetArray(h, k, ck.CKA_UNWRAP_TEMPLATE, 1, ck.CKA_LABEL)
	if s[2].RV != uint64(ck.CKR_BUFFER_TOO_SMALL) || s[2].Lens[0] != uint64(ck.CK_UNAVAILABLE_INFORMATION) {
		t.Fatalf("short inner buffer = %+v", s[2])
	}
	// An empty template reads as an empty array.
	s = tsGetArray(h, k, ck.CKA_WRAP_TEMPLATE, 0, 0)
	if s[0].RV != 0 || s[0].Length != 0 {
		t.Fatalf("empty CKA_WRAP_TEMPLATE = %+v", s[0])
	}
	// A short outer buffer.
	if rv, n, _ := tsGetAttr(h, k, ck.CKA_UNWRAP_TEMPLATE, int(size)-1); rv != uint64(ck.CKR_BUFFER_TOO_SMALL) || n != uint64(ck.CK_UNAVAILABLE_INFORMATION) {
		t.Fatalf("short array buffer = %v, %#x", ck.Error(rv), n)
	}
}

func TestAttributeArrayTemplateIn(t *testing.T) {
	inner := token.EncodeAttributes([]token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_SECRET_KEY)})
	tp := tsNewTemplate([]token.Attribute{{Type: ck.CKA_WRAP_TEMPLATE, Value: inner}, {Type: ck.CKA_LABEL, Value: []byte("x")}})
	got, rv := tp.in()
	tp.free()
	if rv != 0 || len(got) != 2 || !bytes.Equal(got[0].Value, inner) || string(got[1].Value) != "x" {
		t.Fatalf("templateIn = %v, %+v", rv, got)
	}
	if rv := tsNestedArray(); rv != uint64(ck.CKR_ATTRIBUTE_VALUE_INVALID) {
		t.Fatalf("nested array = %v", ck.Error(rv))
	}
	// Not a whole number of CK_ATTRIBUTEs.
	if got, rv := tsTemplate([]tsAttr{{Type: ck.CKA_WRAP_TEMPLATE, Value: make([]byte, 5)}}, false); rv != uint64(ck.CKR_ATTRIBUTE_VALUE_INVALID) {
		t.Fatalf("odd array = %v, %+v", ck.Error(rv), got)
	}
	// CKA_ALLOWED_MECHANISMS is not an attribute array.
	if got, rv := tsTemplate([]tsAttr{{Type: ck.CKA_ALLOWED_MECHANISMS, Value: ck.ULong(ck.CKM_AES_CBC)}}, false); rv != 0 || !bytes.Equal(got[0].Value, ck.ULong(ck.CKM_AES_CBC)) {
		t.Fatalf("allowed mechanisms = %v, %+v", ck.Error(rv), got)
	}
}
