//go:build modexp_testhooks

package main

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

func TestPad(t *testing.T) {
	cases := []struct {
		n    int
		in   string
		want string
	}{
		{8, "", "        "},
		{8, "abc", "abc     "},
		{8, "abcdefgh", "abcdefgh"},
		{8, "abcdefghij", "abcdefgh"},
		{3, "abé", "ab "}, // é (2 bytes) would straddle the end: dropped whole
		{4, "abé", "abé"}, // it fits exactly
		{3, "€uro", "€"},  // a 3-byte character exactly fills the field
		{2, "€uro", "  "}, // it does not fit at all
		{16, "ModExp Token", "ModExp Token    "},
	}
	for _, c := range cases {
		got := tsPad(c.n, c.in)
		if string(got) != c.want {
			t.Errorf("pad(%d, %q) = %q, want %q", c.n, c.in, got, c.want)
		}
	}
}

func TestOutOf(t *testing.T) {
	if _, ok, _ := tsOutOf(false, true, 0); ok {
		t.Error("outOf with a NULL length pointer is ok")
	}
	if out, ok, _ := tsOutOf(true, false, 77); !ok || !out.Query || out.Buf != nil {
		t.Errorf("outOf(NULL buffer) = %+v, %v; want a query without a buffer", out, ok)
	}
	if out, ok, aliased := tsOutOf(false, false, 77); !ok || out.Query || out.Cap != 77 || !aliased {
		t.Errorf("outOf(buffer, 77) = Query %v Cap %d len(Buf) %d, %v; aliased %v", out.Query, out.Cap, len(out.Buf), ok, aliased)
	}
	if out, ok, _ := tsOutOf(false, false, 0); !ok || out.Query || out.Cap != 0 || out.Buf != nil {
		t.Errorf("outOf(buffer, 0) = %+v, %v; want no room and no view", out, ok)
	}
	// A length beyond maxLen is clamped (NULL buffer: no caller owns 2^64 bytes).
	if out, _, _ := tsOutOf(true, false, math.MaxUint64); out.Cap != maxLen {
		t.Errorf("outOf(huge) Cap = %d, want %d", out.Cap, maxLen)
	}
}

func TestPutOut(t *testing.T) {
	data := []byte("signature bytes")
	tooSmall := ck.Errorf(ck.CKR_BUFFER_TOO_SMALL, "need %d", len(data))
	cases := []struct {
		name      string
		null      bool
		capacity  uint64
		data      []byte
		need      int
		err       error
		want      ck.Error
		wantLen   uint64
		wantBytes []byte
	}{
		{"query", true, 0, nil, len(data), nil, ck.CKR_OK, uint64(len(data)), nil},
		{"too small", false, 3, nil, len(data), tooSmall, ck.CKR_BUFFER_TOO_SMALL, uint64(len(data)), nil},
		{"exact", false, uint64(len(data)), data, len(data), nil, ck.CKR_OK, uint64(len(data)), data},
		{"larger", false, 100, data, len(data), nil, ck.CKR_OK, uint64(len(data)), data},
		{"token error leaves length", false, 100, nil, 0, ck.CKR_KEY_HANDLE_INVALID, ck.CKR_KEY_HANDLE_INVALID, 100, nil},
		{"wrapped error", false, 100, nil, 0, fmt.Errorf("token: sign: %w", ck.CKR_DEVICE_ERROR), ck.CKR_DEVICE_ERROR, 100, nil},
		{"plain error", false, 100, nil, 0, errToken, ck.CKR_GENERAL_ERROR, 100, nil},
		{"token overflows buffer", false, 4, data, len(data), nil, ck.CKR_GENERAL_ERROR, 4, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rv, l, got := tsPutOut(c.null, c.capacity, c.data, c.need, c.err)
			if rv != uint64(c.want) || l != c.wantLen || !bytes.Equal(got, c.wantBytes) {
				t.Fatalf("putOut = %v, len %d, %q; want %v, %d, %q", ck.Error(rv), l, got, c.want, c.wantLen, c.wantBytes)
			}
		})
	}
}

func TestTemplateIn(t *testing.T) {
	class := []byte{3, 0, 0, 0, 0, 0, 0, 0}
	t.Run("values copied", func(t *testing.T) {
		spec := []tsAttr{
			{Type: ck.CKA_CLASS, Value: class},
			{Type: ck.CKA_LABEL, Value: []byte("my key")},
			{Type: ck.CKA_ID, Value: nil}, // empty value, NULL pointer
			{Type: ck.CKA_TOKEN, Value: []byte{1}},
		}
		got, rv := tsTemplate(spec, false)
		if rv != 0 || len(got) != len(spec) {
			t.Fatalf("templateIn = %v, %d attributes", ck.Error(rv), len(got))
		}
		for i, a := range got {
			if a.Type != spec[i].Type || !bytes.Equal(a.Value, spec[i].Value) {
				t.Errorf("attribute %d = %#x %x, want %#x %x (C memory was overwritten after the call)",
					i, a.Type, a.Value, spec[i].Type, spec[i].Value)
			}
		}
		// Values share a backing array but must not overlap on append.
		got[0].Value = append(got[0].Value, 0xFF)
		if !bytes.Equal(got[1].Value, []byte("my key")) {
			t.Error("appending to one value changed the next")
		}
	})
	bad := []struct {
		name string
		spec []tsAttr
		null bool
	}{
		{"NULL template with count", []tsAttr{{Type: ck.CKA_LABEL, Value: []byte("x")}}, true},
		{"NULL pValue with length", []tsAttr{{Type: ck.CKA_LABEL, NullPtr: true, Len: 5}}, false},
		{"unavailable length", []tsAttr{{Type: ck.CKA_LABEL, Value: []byte("x"), Len: math.MaxUint64}}, false},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			if _, rv := tsTemplate(c.spec, c.null); rv != uint64(ck.CKR_ARGUMENTS_BAD) {
				t.Fatalf("templateIn = %v, want CKR_ARGUMENTS_BAD", ck.Error(rv))
			}
		})
	}
	if got, rv := tsTemplate(nil, true); rv != 0 || got != nil {
		t.Errorf("empty NULL template = %v, %v", got, ck.Error(rv))
	}
}

func TestMechanismIn(t *testing.T) {
	pss := token.PSSParams{Hash: ck.CKM_SHA256, MGF: ck.CKG_MGF1_SHA256, SaltLen: 32}
	oaep := token.OAEPParams{Hash: ck.CKM_SHA256, MGF: ck.CKG_MGF1_SHA256, Source: ck.CKZ_DATA_SPECIFIED, SourceData: []byte("label")}
	ecdh := token.ECDH1DeriveParams{KDF: ck.CKD_SHA256_KDF, SharedData: []byte("info"), PublicData: []byte("\x04point")}
	hkdf := token.HKDFParams{Extract: true, Expand: true, PRF: ck.CKM_SHA256, SaltType: ck.CKF_HKDF_SALT_DATA,
		Salt: []byte("salt"), SaltKey: 0, Info: []byte("tls13 derived")}
	cases := []struct {
		name string
		in   tsMech
		want ck.Error
		ok   func(*token.Mechanism) bool
	}{
		{"no parameter", tsMech{Type: ck.CKM_SHA256_RSA_PKCS}, ck.CKR_OK,
			func(m *token.Mechanism) bool {
				return m.Type == ck.CKM_SHA256_RSA_PKCS && m.Param == nil && m.PSS == nil
			}},
		{"raw parameter copied", tsMech{Type: ck.CKM_AES_CBC, Raw: []byte("0123456789abcdef")}, ck.CKR_OK,
			func(m *token.Mechanism) bool { return string(m.Param) == "0123456789abcdef" }},
		{"PSS", tsMech{Type: ck.CKM_SHA256_RSA_PKCS_PSS, Kind: 1, PSS: pss}, ck.CKR_OK,
			func(m *token.Mechanism) bool { return m.PSS != nil && *m.PSS == pss && m.Param == nil }},
		{"raw RSA PSS", tsMech{Type: ck.CKM_RSA_PKCS_PSS, Kind: 1, PSS: pss}, ck.CKR_OK,
			func(m *token.Mechanism) bool { return m.PSS != nil && *m.PSS == pss }},
		{"PSS short", tsMech{Type: ck.CKM_SHA256_RSA_PKCS_PSS, Kind: 1, PSS: pss, LenDelta: -1}, ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"PSS long", tsMech{Type: ck.CKM_SHA384_RSA_PKCS_PSS, Kind: 1, PSS: pss, LenDelta: 8}, ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"PSS missing", tsMech{Type: ck.CKM_RSA_PKCS_PSS}, ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"OAEP with label", tsMech{Type: ck.CKM_RSA_PKCS_OAEP, Kind: 2, OAEP: oaep}, ck.CKR_OK,
			func(m *token.Mechanism) bool {
				return m.OAEP != nil && m.OAEP.Hash == oaep.Hash && m.OAEP.MGF == oaep.MGF &&
					m.OAEP.Source == oaep.Source && string(m.OAEP.SourceData) == "label"
			}},
		{"OAEP without label", tsMech{Type: ck.CKM_RSA_PKCS_OAEP, Kind: 2,
			OAEP: token.OAEPParams{Hash: ck.CKM_SHA_1, MGF: ck.CKG_MGF1_SHA1}}, ck.CKR_OK,
			func(m *token.Mechanism) bool {
				return m.OAEP != nil && m.OAEP.SourceData == nil && m.OAEP.Hash == ck.CKM_SHA_1
			}},
		{"OAEP short", tsMech{Type: ck.CKM_RSA_PKCS_OAEP, Kind: 2, OAEP: oaep, LenDelta: -8}, ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"OAEP NULL source with length", tsMech{Type: ck.CKM_RSA_PKCS_OAEP, Kind: 2, OAEP: oaep, SourceNull: true}, ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"NULL pParameter with length", tsMech{Type: ck.CKM_SHA256_RSA_PKCS_PSS, Kind: 1, PSS: pss, NullParam: true}, ck.CKR_ARGUMENTS_BAD, nil},
		{"NULL mechanism", tsMech{NullMech: true}, ck.CKR_ARGUMENTS_BAD, nil},
		{"ECDH", tsMech{Type: ck.CKM_ECDH1_DERIVE, Kind: 3, ECDH: ecdh}, ck.CKR_OK,
			func(m *token.Mechanism) bool {
				return m.ECDH != nil && m.ECDH.KDF == ck.CKD_SHA256_KDF && string(m.ECDH.SharedData) == "info" &&
					string(m.ECDH.PublicData) == "\x04point" && m.Param == nil
			}},
		{"ECDH cofactor, no shared data", tsMech{Type: ck.CKM_ECDH1_COFACTOR_DERIVE, Kind: 3,
			ECDH: token.ECDH1DeriveParams{KDF: ck.CKD_NULL, PublicData: []byte{4, 1}}}, ck.CKR_OK,
			func(m *token.Mechanism) bool {
				return m.ECDH != nil && m.ECDH.SharedData == nil && string(m.ECDH.PublicData) == "\x04\x01"
			}},
		{"ECDH short", tsMech{Type: ck.CKM_ECDH1_DERIVE, Kind: 3, ECDH: ecdh, LenDelta: -8}, ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"ECDH missing", tsMech{Type: ck.CKM_ECDH1_DERIVE}, ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"ECDH NULL public data with length", tsMech{Type: ck.CKM_ECDH1_DERIVE, Kind: 3, ECDH: ecdh, SourceNull: true}, ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"EdDSA without parameter", tsMech{Type: ck.CKM_EDDSA}, ck.CKR_OK,
			func(m *token.Mechanism) bool { return m.EdDSA == nil && m.Param == nil }},
		{"EdDSA ph with context", tsMech{Type: ck.CKM_EDDSA, Kind: 4, EdDSA: token.EdDSAParams{PH: true, Context: []byte("ctx")}}, ck.CKR_OK,
			func(m *token.Mechanism) bool { return m.EdDSA != nil && m.EdDSA.PH && string(m.EdDSA.Context) == "ctx" }},
		{"EdDSA no context", tsMech{Type: ck.CKM_EDDSA, Kind: 4}, ck.CKR_OK,
			func(m *token.Mechanism) bool { return m.EdDSA != nil && !m.EdDSA.PH && m.EdDSA.Context == nil }},
		{"EdDSA short", tsMech{Type: ck.CKM_EDDSA, Kind: 4, LenDelta: -1}, ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"EdDSA NULL context with length", tsMech{Type: ck.CKM_EDDSA, Kind: 4, EdDSA: token.EdDSAParams{Context: []byte("x")}, SourceNull: true}, ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"ML-DSA without parameter", tsMech{Type: ck.CKM_ML_DSA}, ck.CKR_OK,
			func(m *token.Mechanism) bool { return m.SignContext == nil && m.Param == nil }},
		{"ML-DSA deterministic with context", tsMech{Type: ck.CKM_ML_DSA, Kind: 6,
			Sign: token.SignContextParams{Hedge: ck.CKH_DETERMINISTIC_REQUIRED, Context: []byte("fw")}}, ck.CKR_OK,
			func(m *token.Mechanism) bool {
				return m.SignContext != nil && m.SignContext.Hedge == ck.CKH_DETERMINISTIC_REQUIRED &&
					string(m.SignContext.Context) == "fw" && !m.SignContext.HasHash && m.Param == nil
			}},
		{"SLH-DSA no context", tsMech{Type: ck.CKM_SLH_DSA, Kind: 6}, ck.CKR_OK,
			func(m *token.Mechanism) bool { return m.SignContext != nil && m.SignContext.Context == nil }},
		{"SLH-DSA SHA-256 pre-hash with context", tsMech{Type: ck.CKM_HASH_SLH_DSA_SHA256, Kind: 6,
			Sign: token.SignContextParams{Context: []byte("c")}}, ck.CKR_OK,
			func(m *token.Mechanism) bool { return m.SignContext != nil && string(m.SignContext.Context) == "c" }},
		{"HashSLH-DSA with its hash", tsMech{Type: ck.CKM_HASH_SLH_DSA, Kind: 7,
			Sign: token.SignContextParams{Hedge: ck.CKH_HEDGE_REQUIRED, Hash: ck.CKM_SHA3_256, Context: []byte("x")}}, ck.CKR_OK,
			func(m *token.Mechanism) bool {
				sc := m.SignContext
				return sc != nil && sc.HasHash && sc.Hash == ck.CKM_SHA3_256 && sc.Hedge == ck.CKH_HEDGE_REQUIRED && string(sc.Context) == "x"
			}},
		{"HashML-DSA without its structure", tsMech{Type: ck.CKM_HASH_ML_DSA}, ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"HashML-DSA with the short structure", tsMech{Type: ck.CKM_HASH_ML_DSA, Kind: 6}, ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"ML-DSA with the hash structure", tsMech{Type: ck.CKM_ML_DSA, Kind: 7}, ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"ML-DSA short", tsMech{Type: ck.CKM_ML_DSA, Kind: 6, LenDelta: -1}, ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"ML-DSA NULL context with length", tsMech{Type: ck.CKM_ML_DSA, Kind: 6, Sign: token.SignContextParams{Context: []byte("x")}, SourceNull: true},
			ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"HKDF", tsMech{Type: ck.CKM_HKDF_DERIVE, Kind: 5, HKDF: hkdf}, ck.CKR_OK,
			func(m *token.Mechanism) bool { return m.HKDF != nil && hkdfEqual(*m.HKDF, hkdf) && m.Param == nil }},
		{"HKDF data, expand only, no info", tsMech{Type: ck.CKM_HKDF_DATA, Kind: 5,
			HKDF: token.HKDFParams{Expand: true, PRF: ck.CKM_SHA384, SaltType: ck.CKF_HKDF_SALT_KEY, SaltKey: 7}}, ck.CKR_OK,
			func(m *token.Mechanism) bool {
				return m.HKDF != nil && !m.HKDF.Extract && m.HKDF.Expand && m.HKDF.Salt == nil && m.HKDF.Info == nil && m.HKDF.SaltKey == 7
			}},
		{"HKDF short", tsMech{Type: ck.CKM_HKDF_DERIVE, Kind: 5, HKDF: hkdf, LenDelta: -8}, ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"HKDF long", tsMech{Type: ck.CKM_HKDF_DERIVE, Kind: 5, HKDF: hkdf, LenDelta: 8}, ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"HKDF missing", tsMech{Type: ck.CKM_HKDF_DERIVE}, ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"HKDF NULL info with length", tsMech{Type: ck.CKM_HKDF_DERIVE, Kind: 5, HKDF: hkdf, SourceNull: true}, ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"HKDF bExtract 2", tsMech{Type: ck.CKM_HKDF_DERIVE, Kind: 5, HKDF: hkdf, HKDFBools: [2]byte{2, 1}}, ck.CKR_MECHANISM_PARAM_INVALID, nil},
		{"DH public value as raw bytes", tsMech{Type: ck.CKM_DH_PKCS_DERIVE, Raw: []byte{1, 2, 3}}, ck.CKR_OK,
			func(m *token.Mechanism) bool { return string(m.Param) == "\x01\x02\x03" && m.ECDH == nil }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, rv := tsMechanism(c.in)
			if rv != uint64(c.want) {
				t.Fatalf("mechanismIn = %v, want %v", ck.Error(rv), c.want)
			}
			if c.ok != nil && !c.ok(m) {
				t.Fatalf("mechanismIn decoded %+v (PSS %+v, OAEP %+v)", m, m.PSS, m.OAEP)
			}
		})
	}
}

func TestFillAttributes(t *testing.T) {
	const na = math.MaxUint64 // CK_UNAVAILABLE_INFORMATION
	modulus := bytes.Repeat([]byte{0xA5}, 256)
	label := []byte("key")
	sensitive := token.AttributeResult{Err: uint64(ck.CKR_ATTRIBUTE_SENSITIVE)}
	invalid := token.AttributeResult{Err: uint64(ck.CKR_ATTRIBUTE_TYPE_INVALID)}
	cases := []struct {
		name     string
		spec     []tsOutAttr
		res      []token.AttributeResult
		want     ck.Error
		wantLens []uint64
		wantVals [][]byte
	}{
		{"length query", []tsOutAttr{{Type: ck.CKA_MODULUS, NullValue: true}},
			[]token.AttributeResult{{Value: modulus}}, ck.CKR_OK, []uint64{256}, [][]byte{nil}},
		{"exact buffer", []tsOutAttr{{Type: ck.CKA_MODULUS, Cap: 256}},
			[]token.AttributeResult{{Value: modulus}}, ck.CKR_OK, []uint64{256}, [][]byte{modulus}},
		{"larger buffer", []tsOutAttr{{Type: ck.CKA_LABEL, Cap: 64}},
			[]token.AttributeResult{{Value: label}}, ck.CKR_OK, []uint64{3}, [][]byte{label}},
		{"empty value", []tsOutAttr{{Type: ck.CKA_ID, Cap: 8}},
			[]token.AttributeResult{{Value: nil}}, ck.CKR_OK, []uint64{0}, [][]byte{{}}},
		{"too small", []tsOutAttr{{Type: ck.CKA_MODULUS, Cap: 255}, {Type: ck.CKA_LABEL, Cap: 8}},
			[]token.AttributeResult{{Value: modulus}, {Value: label}}, ck.CKR_BUFFER_TOO_SMALL,
			[]uint64{na, 3}, [][]byte{nil, label}},
		{"sensitive, query too", []tsOutAttr{{Type: ck.CKA_PRIVATE_EXPONENT, NullValue: true}, {Type: ck.CKA_LABEL, Cap: 8}},
			[]token.AttributeResult{sensitive, {Value: label}}, ck.CKR_ATTRIBUTE_SENSITIVE,
			[]uint64{na, 3}, [][]byte{nil, label}},
		{"invalid", []tsOutAttr{{Type: 0x7FFF0000, Cap: 8}, {Type: ck.CKA_LABEL, NullValue: true}},
			[]token.AttributeResult{invalid, {Value: label}}, ck.CKR_ATTRIBUTE_TYPE_INVALID,
			[]uint64{na, 3}, [][]byte{nil, nil}},
		{"precedence: sensitive over invalid over small",
			[]tsOutAttr{{Type: ck.CKA_MODULUS, Cap: 1}, {Type: 0x7FFF0000, Cap: 8}, {Type: ck.CKA_PRIVATE_EXPONENT, Cap: 512}},
			[]token.AttributeResult{{Value: modulus}, invalid, sensitive}, ck.CKR_ATTRIBUTE_SENSITIVE,
			[]uint64{na, na, na}, [][]byte{nil, nil, nil}},
		{"precedence: invalid over small",
			[]tsOutAttr{{Type: ck.CKA_MODULUS, Cap: 1}, {Type: 0x7FFF0000, Cap: 8}},
			[]token.AttributeResult{{Value: modulus}, invalid}, ck.CKR_ATTRIBUTE_TYPE_INVALID,
			[]uint64{na, na}, [][]byte{nil, nil}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rv, lens, vals := tsFillAttributes(c.spec, c.res)
			if rv != uint64(c.want) {
				t.Errorf("rv = %v, want %v", ck.Error(rv), c.want)
			}
			for i := range c.spec {
				if lens[i] != c.wantLens[i] {
					t.Errorf("attribute %d: ulValueLen = %#x, want %#x", i, lens[i], c.wantLens[i])
				}
				if c.wantVals[i] != nil && !bytes.Equal(vals[i], c.wantVals[i]) {
					t.Errorf("attribute %d: value %x, want %x", i, vals[i], c.wantVals[i])
				}
			}
		})
	}
}

// hkdfEqual compares two decoded CK_HKDF_PARAMS.
func hkdfEqual(a, b token.HKDFParams) bool {
	return a.Extract == b.Extract && a.Expand == b.Expand && a.PRF == b.PRF && a.SaltType == b.SaltType &&
		bytes.Equal(a.Salt, b.Salt) && a.SaltKey == b.SaltKey && bytes.Equal(a.Info, b.Info)
}

// FuzzHKDFParamsIn builds CK_HKDF_PARAMS from the fuzzer's values (the
// CK_BBOOLs as given, a wrong ulParameterLen, a NULL pInfo with its length)
// and decodes it: never a panic; CKR_OK exactly when the structure is
// well-formed, with the salt and info copied (tsMechanism overwrites the C
// memory after the call).
func FuzzHKDFParamsIn(f *testing.F) {
	f.Add(byte(1), byte(1), uint64(ck.CKM_SHA256), uint64(ck.CKF_HKDF_SALT_DATA), []byte("salt"), uint64(0), []byte("info"), int8(0), false)
	f.Add(byte(0), byte(1), uint64(ck.CKM_SHA_1), uint64(ck.CKF_HKDF_SALT_NULL), []byte(nil), uint64(5), []byte(nil), int8(0), false)
	f.Add(byte(2), byte(0), uint64(0), uint64(9), []byte{0}, uint64(1), []byte{1}, int8(-1), true)
	f.Fuzz(func(t *testing.T, extract, expand byte, prf, saltType uint64, salt []byte, saltKey uint64, info []byte, delta int8, nullInfo bool) {
		p := token.HKDFParams{PRF: prf, SaltType: saltType, Salt: salt, SaltKey: saltKey, Info: info}
		m, rv := tsMechanism(tsMech{Type: ck.CKM_HKDF_DERIVE, Kind: 5, HKDF: p, HKDFBools: [2]byte{extract, expand},
			LenDelta: int(delta), SourceNull: nullInfo})
		wellFormed := extract <= 1 && expand <= 1 && delta == 0 && !(nullInfo && len(info) > 0)
		if (rv == uint64(ck.CKR_OK)) != wellFormed {
			t.Fatalf("rv %v, well-formed %v", ck.Error(rv), wellFormed)
		}
		if rv != uint64(ck.CKR_OK) {
			return
		}
		p.Extract, p.Expand = extract == 1, expand == 1
		if len(p.Salt) == 0 {
			p.Salt = nil
		}
		if len(p.Info) == 0 {
			p.Info = nil
		}
		if m.HKDF == nil || !hkdfEqual(*m.HKDF, p) {
			t.Fatalf("decoded %+v, want %+v", m.HKDF, p)
		}
	})
}

// FuzzSignContextIn builds CK_SIGN_ADDITIONAL_CONTEXT (or, for
// CKM_HASH_SLH_DSA, CK_HASH_SIGN_ADDITIONAL_CONTEXT) from the fuzzer's
// values (a wrong ulParameterLen, a NULL pContext with its length) and
// decodes it: never a panic; CKR_OK exactly when the structure is
// well-formed, with the hedge, hash and context as given (tsMechanism
// overwrites the C memory after the call).
func FuzzSignContextIn(f *testing.F) {
	f.Add(false, uint64(ck.CKH_HEDGE_PREFERRED), []byte("ctx"), uint64(0), int8(0), false)
	f.Add(true, uint64(ck.CKH_DETERMINISTIC_REQUIRED), []byte(nil), uint64(ck.CKM_SHA512), int8(0), false)
	f.Add(false, uint64(7), []byte{1}, uint64(0), int8(-8), true)
	f.Fuzz(func(t *testing.T, withHash bool, hedge uint64, ctx []byte, hash uint64, delta int8, nullCtx bool) {
		mech, kind := uint64(ck.CKM_ML_DSA), 6
		want := token.SignContextParams{Hedge: hedge, Context: ctx}
		if withHash {
			mech, kind = ck.CKM_HASH_SLH_DSA, 7
			want.Hash, want.HasHash = hash, true
		}
		m, rv := tsMechanism(tsMech{Type: mech, Kind: kind, Sign: want, LenDelta: int(delta), SourceNull: nullCtx})
		wellFormed := delta == 0 && !(nullCtx && len(ctx) > 0)
		if (rv == uint64(ck.CKR_OK)) != wellFormed {
			t.Fatalf("rv %v, well-formed %v", ck.Error(rv), wellFormed)
		}
		if rv != uint64(ck.CKR_OK) {
			return
		}
		if len(want.Context) == 0 {
			want.Context = nil
		}
		sc := m.SignContext
		if sc == nil || sc.Hedge != want.Hedge || sc.Hash != want.Hash || sc.HasHash != want.HasHash || !bytes.Equal(sc.Context, want.Context) {
			t.Fatalf("decoded %+v, want %+v", sc, want)
		}
	})
}
