package token

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"os"
	"testing"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// aesTmpl is a session AES key template with value v.
func aesTmpl(v []byte, extra ...Attribute) []Attribute {
	return append([]Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_AES),
		aBytes(ck.CKA_VALUE, v)}, extra...)
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func TestSecretKeyCreateDefaults(t *testing.T) {
	m, _, sh := readyToken(t)
	vT, vF := ck.Bool(true), ck.Bool(false)
	// AES-128 of the zero key over the zero block is 66e94bd4...
	h, err := m.CreateObject(sh, aesTmpl(make([]byte, 16)))
	must(t, err)
	got := attrsOf(t, m, sh, h, ck.CKA_PRIVATE, ck.CKA_SENSITIVE, ck.CKA_EXTRACTABLE, ck.CKA_ENCRYPT, ck.CKA_DECRYPT,
		ck.CKA_SIGN, ck.CKA_VERIFY, ck.CKA_WRAP, ck.CKA_UNWRAP, ck.CKA_DERIVE, ck.CKA_LOCAL, ck.CKA_ALWAYS_SENSITIVE,
		ck.CKA_NEVER_EXTRACTABLE, ck.CKA_TRUSTED, ck.CKA_WRAP_WITH_TRUSTED, ck.CKA_VALUE_LEN, ck.CKA_CHECK_VALUE,
		ck.CKA_KEY_GEN_MECHANISM, ck.CKA_WRAP_TEMPLATE, ck.CKA_UNWRAP_TEMPLATE, ck.CKA_DERIVE_TEMPLATE)
	want := map[uint64][]byte{
		ck.CKA_PRIVATE: vT, ck.CKA_SENSITIVE: vT, ck.CKA_EXTRACTABLE: vF, ck.CKA_ENCRYPT: vT, ck.CKA_DECRYPT: vT,
		ck.CKA_SIGN: vT, ck.CKA_VERIFY: vT, ck.CKA_WRAP: vF, ck.CKA_UNWRAP: vF, ck.CKA_DERIVE: vF, ck.CKA_LOCAL: vF,
		ck.CKA_ALWAYS_SENSITIVE: vF, ck.CKA_NEVER_EXTRACTABLE: vF, ck.CKA_TRUSTED: vF, ck.CKA_WRAP_WITH_TRUSTED: vF,
		ck.CKA_VALUE_LEN: ck.ULong(16), ck.CKA_CHECK_VALUE: mustHex("66e94b"),
		ck.CKA_KEY_GEN_MECHANISM: ck.ULong(ck.CK_UNAVAILABLE_INFORMATION),
		ck.CKA_WRAP_TEMPLATE:     {}, ck.CKA_UNWRAP_TEMPLATE: {}, ck.CKA_DERIVE_TEMPLATE: {},
	}
	for k, v := range want {
		if !bytes.Equal(got[k], v) {
			t.Errorf("%s = %x, want %x", ck.Name("CKA_", k), got[k], v)
		}
	}
	res, err := m.GetAttributeValue(sh, h, []uint64{ck.CKA_VALUE})
	must(t, err)
	if res[0].Err != uint64(ck.CKR_ATTRIBUTE_SENSITIVE) {
		t.Errorf("CKA_VALUE of a sensitive key: %v", ck.Error(res[0].Err))
	}
	// Generic secret: KCV is SHA-1's first 3 bytes; readable when not
	// sensitive and extractable.
	gv := []byte("a generic secret")
	g, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_GENERIC_SECRET),
		aBytes(ck.CKA_VALUE, gv), aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true)})
	must(t, err)
	sum := sha1.Sum(gv)
	if kcv := attrValue(t, m, sh, g, ck.CKA_CHECK_VALUE); !bytes.Equal(kcv, sum[:3]) {
		t.Errorf("generic KCV %x, want %x", kcv, sum[:3])
	}
	if v := attrValue(t, m, sh, g, ck.CKA_VALUE); !bytes.Equal(v, gv) {
		t.Errorf("CKA_VALUE %q", v)
	}
	// Sensitive false but not extractable: still unreadable.
	g2, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_SHA256_HMAC),
		aBytes(ck.CKA_VALUE, gv), aBool(ck.CKA_SENSITIVE, false)})
	must(t, err)
	res, err = m.GetAttributeValue(sh, g2, []uint64{ck.CKA_VALUE, ck.CKA_VALUE_LEN})
	must(t, err)
	if res[0].Err != uint64(ck.CKR_ATTRIBUTE_SENSITIVE) || res[1].Err != 0 {
		t.Errorf("non-extractable CKA_VALUE: %v, %v", ck.Error(res[0].Err), ck.Error(res[1].Err))
	}
}

func TestSecretKeyCreateRules(t *testing.T) {
	m, _, sh := readyToken(t)
	k16 := bytes.Repeat([]byte{7}, 16)
	cases := []struct {
		name string
		tmpl []Attribute
		rv   ck.Error
	}{
		{"AES-128", aesTmpl(k16), 0},
		{"AES-192", aesTmpl(make([]byte, 24)), 0},
		{"AES-256", aesTmpl(make([]byte, 32)), 0},
		{"AES of 15 bytes", aesTmpl(make([]byte, 15)), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"AES of 33 bytes", aesTmpl(make([]byte, 33)), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"AES of 0 bytes", aesTmpl(nil), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"no value", []Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_AES)}, ck.CKR_TEMPLATE_INCOMPLETE},
		{"no key type", []Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aBytes(ck.CKA_VALUE, k16)}, ck.CKR_TEMPLATE_INCOMPLETE},
		{"RSA secret key", []Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_RSA), aBytes(ck.CKA_VALUE, k16)}, ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"AES private key", []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_AES), aBytes(ck.CKA_VALUE, k16)}, ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"value len matches", aesTmpl(k16, aULong(ck.CKA_VALUE_LEN, 16)), 0},
		{"value len differs", aesTmpl(k16, aULong(ck.CKA_VALUE_LEN, 32)), ck.CKR_TEMPLATE_INCONSISTENT},
		{"check value matches", aesTmpl(k16, aBytes(ck.CKA_CHECK_VALUE, mech.AESKCV(k16))), 0},
		{"check value empty", aesTmpl(k16, aBytes(ck.CKA_CHECK_VALUE, nil)), 0},
		{"check value differs", aesTmpl(k16, aBytes(ck.CKA_CHECK_VALUE, []byte{1, 2, 3})), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"local given", aesTmpl(k16, aBool(ck.CKA_LOCAL, true)), ck.CKR_ATTRIBUTE_READ_ONLY},
		{"always sensitive given", aesTmpl(k16, aBool(ck.CKA_ALWAYS_SENSITIVE, true)), ck.CKR_ATTRIBUTE_READ_ONLY},
		{"trusted by user", aesTmpl(k16, aBool(ck.CKA_TRUSTED, true)), ck.CKR_ATTRIBUTE_READ_ONLY},
		{"modulus", aesTmpl(k16, aBytes(ck.CKA_MODULUS, k16)), ck.CKR_ATTRIBUTE_TYPE_INVALID},
		{"bad wrap template", aesTmpl(k16, aBytes(ck.CKA_WRAP_TEMPLATE, []byte{1, 2, 3})), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"generic of 0 bytes", []Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_GENERIC_SECRET), aBytes(ck.CKA_VALUE, nil)}, ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"HMAC of 1 byte", []Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_SHA512_HMAC), aBytes(ck.CKA_VALUE, []byte{1})}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := m.CreateObject(sh, c.tmpl)
			wantRV(t, err, c.rv)
		})
	}
}

func TestSecretKeyTemplates(t *testing.T) {
	m, _, sh := readyToken(t)
	wt := EncodeAttributes([]Attribute{aBool(ck.CKA_SENSITIVE, true), aULong(ck.CKA_KEY_TYPE, ck.CKK_AES)})
	h, err := m.CreateObject(sh, aesTmpl(make([]byte, 32), aBytes(ck.CKA_WRAP_TEMPLATE, wt), aBool(ck.CKA_WRAP, true)))
	must(t, err)
	got, err := DecodeAttributes(attrValue(t, m, sh, h, ck.CKA_WRAP_TEMPLATE))
	must(t, err)
	if len(got) != 2 || got[0].Type != ck.CKA_SENSITIVE || got[1].Type != ck.CKA_KEY_TYPE || !bytes.Equal(got[1].Value, ck.ULong(ck.CKK_AES)) {
		t.Errorf("wrap template %+v", got)
	}
	tm, err := templateAttr(attr.Map{ck.CKA_WRAP_TEMPLATE: wt}, ck.CKA_WRAP_TEMPLATE)
	must(t, err)
	if !satisfies(attr.Map{ck.CKA_SENSITIVE: ck.Bool(true), ck.CKA_KEY_TYPE: ck.ULong(ck.CKK_AES), ck.CKA_LABEL: nil}, tm) {
		t.Error("satisfies: matching key refused")
	}
	if satisfies(attr.Map{ck.CKA_SENSITIVE: ck.Bool(false), ck.CKA_KEY_TYPE: ck.ULong(ck.CKK_AES)}, tm) {
		t.Error("satisfies: mismatching key accepted")
	}
	// CKA_WRAP_WITH_TRUSTED: false → true only; CKA_TRUSTED by the SO only.
	must(t, m.SetAttributeValue(sh, h, []Attribute{aBool(ck.CKA_WRAP_WITH_TRUSTED, true)}))
	wantRV(t, m.SetAttributeValue(sh, h, []Attribute{aBool(ck.CKA_WRAP_WITH_TRUSTED, false)}), ck.CKR_ATTRIBUTE_READ_ONLY)
	wantRV(t, m.SetAttributeValue(sh, h, []Attribute{aBool(ck.CKA_TRUSTED, true)}), ck.CKR_ATTRIBUTE_READ_ONLY)
	// Private keys have CKA_UNWRAP_TEMPLATE and CKA_DERIVE_TEMPLATE, public
	// keys CKA_WRAP_TEMPLATE.
	pk, sk := genKey(t, m, sh, 1024, false)
	if v := attrValue(t, m, sh, sk, ck.CKA_UNWRAP_TEMPLATE); len(v) != 0 {
		t.Errorf("private key CKA_UNWRAP_TEMPLATE %x", v)
	}
	if v := attrValue(t, m, sh, pk, ck.CKA_WRAP_TEMPLATE); len(v) != 0 {
		t.Errorf("public key CKA_WRAP_TEMPLATE %x", v)
	}
	// Malformed arrays are refused by the decoder.
	for _, b := range [][]byte{{1}, append(ck.ULong(1), ck.ULong(5)...), EncodeAttributes([]Attribute{{Type: ck.CKA_WRAP_TEMPLATE, Value: []byte{}}})} {
		if _, err := DecodeAttributes(b); err == nil {
			t.Errorf("DecodeAttributes(%x) accepted", b)
		}
	}
}

func TestGenerateKey(t *testing.T) {
	m, slot, sh := readyToken(t)
	gen := func(mc uint64, tmpl ...Attribute) (uint64, error) {
		return m.GenerateKey(sh, &Mechanism{Type: mc}, tmpl)
	}
	for _, n := range []uint64{16, 24, 32} {
		h, err := gen(ck.CKM_AES_KEY_GEN, aULong(ck.CKA_VALUE_LEN, n), aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true))
		must(t, err)
		a := attr.Map(attrsOf(t, m, sh, h, ck.CKA_VALUE, ck.CKA_CLASS, ck.CKA_KEY_TYPE, ck.CKA_LOCAL, ck.CKA_KEY_GEN_MECHANISM,
			ck.CKA_ALWAYS_SENSITIVE, ck.CKA_NEVER_EXTRACTABLE, ck.CKA_CHECK_VALUE, ck.CKA_VALUE_LEN))
		if uint64(len(a[ck.CKA_VALUE])) != n || !bytes.Equal(a[ck.CKA_CHECK_VALUE], mech.AESKCV(a[ck.CKA_VALUE])) ||
			!bytes.Equal(a[ck.CKA_KEY_TYPE], ck.ULong(ck.CKK_AES)) || !bytes.Equal(a[ck.CKA_CLASS], ck.ULong(ck.CKO_SECRET_KEY)) ||
			!bytes.Equal(a[ck.CKA_LOCAL], ck.Bool(true)) || !bytes.Equal(a[ck.CKA_KEY_GEN_MECHANISM], ck.ULong(ck.CKM_AES_KEY_GEN)) ||
			!bytes.Equal(a[ck.CKA_ALWAYS_SENSITIVE], ck.Bool(false)) || !bytes.Equal(a[ck.CKA_NEVER_EXTRACTABLE], ck.Bool(false)) {
			t.Errorf("AES-%d key attributes %x", 8*n, a)
		}
	}
	h, err := gen(ck.CKM_AES_KEY_GEN, aULong(ck.CKA_VALUE_LEN, 32))
	must(t, err)
	a := attr.Map(attrsOf(t, m, sh, h, ck.CKA_ALWAYS_SENSITIVE, ck.CKA_NEVER_EXTRACTABLE))
	if !hasValue(a, ck.CKA_ALWAYS_SENSITIVE, ck.Bool(true)) || !hasValue(a, ck.CKA_NEVER_EXTRACTABLE, ck.Bool(true)) {
		t.Errorf("default generated key: %x", a)
	}
	h, err = gen(ck.CKM_GENERIC_SECRET_KEY_GEN, aULong(ck.CKA_VALUE_LEN, 64), aULong(ck.CKA_KEY_TYPE, ck.CKK_SHA256_HMAC))
	must(t, err)
	if kt := attrValue(t, m, sh, h, ck.CKA_KEY_TYPE); !bytes.Equal(kt, ck.ULong(ck.CKK_SHA256_HMAC)) {
		t.Errorf("HMAC key type %x", kt)
	}
	h, err = gen(ck.CKM_GENERIC_SECRET_KEY_GEN, aULong(ck.CKA_VALUE_LEN, 20))
	must(t, err)
	if kt := attrValue(t, m, sh, h, ck.CKA_KEY_TYPE); !bytes.Equal(kt, ck.ULong(ck.CKK_GENERIC_SECRET)) {
		t.Errorf("generic key type %x", kt)
	}
	cases := []struct {
		name string
		mech uint64
		tmpl []Attribute
		rv   ck.Error
	}{
		{"no length", ck.CKM_AES_KEY_GEN, nil, ck.CKR_TEMPLATE_INCOMPLETE},
		{"AES of 20 bytes", ck.CKM_AES_KEY_GEN, []Attribute{aULong(ck.CKA_VALUE_LEN, 20)}, ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"AES of 64 bytes", ck.CKM_AES_KEY_GEN, []Attribute{aULong(ck.CKA_VALUE_LEN, 64)}, ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"generic of 0 bytes", ck.CKM_GENERIC_SECRET_KEY_GEN, []Attribute{aULong(ck.CKA_VALUE_LEN, 0)}, ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"generic too long", ck.CKM_GENERIC_SECRET_KEY_GEN, []Attribute{aULong(ck.CKA_VALUE_LEN, 1<<40)}, ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"value given", ck.CKM_AES_KEY_GEN, []Attribute{aULong(ck.CKA_VALUE_LEN, 16), aBytes(ck.CKA_VALUE, make([]byte, 16))}, ck.CKR_ATTRIBUTE_READ_ONLY},
		{"AES gen of HMAC key", ck.CKM_AES_KEY_GEN, []Attribute{aULong(ck.CKA_VALUE_LEN, 16), aULong(ck.CKA_KEY_TYPE, ck.CKK_SHA_1_HMAC)}, ck.CKR_TEMPLATE_INCONSISTENT},
		{"generic gen of AES key", ck.CKM_GENERIC_SECRET_KEY_GEN, []Attribute{aULong(ck.CKA_VALUE_LEN, 16), aULong(ck.CKA_KEY_TYPE, ck.CKK_AES)}, ck.CKR_TEMPLATE_INCONSISTENT},
		{"public key class", ck.CKM_AES_KEY_GEN, []Attribute{aULong(ck.CKA_VALUE_LEN, 16), aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY)}, ck.CKR_TEMPLATE_INCONSISTENT},
		{"RSA mechanism", ck.CKM_RSA_PKCS_KEY_PAIR_GEN, []Attribute{aULong(ck.CKA_VALUE_LEN, 16)}, ck.CKR_MECHANISM_INVALID},
		{"digest mechanism", ck.CKM_SHA256, []Attribute{aULong(ck.CKA_VALUE_LEN, 16)}, ck.CKR_MECHANISM_INVALID},
		{"unknown attribute", ck.CKM_AES_KEY_GEN, []Attribute{aULong(ck.CKA_VALUE_LEN, 16), aULong(ck.CKA_MODULUS_BITS, 16)}, ck.CKR_ATTRIBUTE_TYPE_INVALID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := gen(c.mech, c.tmpl...)
			wantRV(t, err, c.rv)
		})
	}
	_, err = m.GenerateKey(sh, &Mechanism{Type: ck.CKM_AES_KEY_GEN, Param: []byte{1}}, []Attribute{aULong(ck.CKA_VALUE_LEN, 16)})
	wantRV(t, err, ck.CKR_MECHANISM_PARAM_INVALID)
	info, err := m.MechanismInfo(slot, ck.CKM_AES_KEY_GEN)
	must(t, err)
	if info != (MechanismInfo{MinKeySize: 16, MaxKeySize: 32, Flags: ck.CKF_GENERATE}) {
		t.Errorf("AES_KEY_GEN info %+v", info)
	}
	info, err = m.MechanismInfo(slot, ck.CKM_GENERIC_SECRET_KEY_GEN)
	must(t, err)
	if info != (MechanismInfo{MinKeySize: 8, MaxKeySize: 8 * mech.GenericMaxBytes, Flags: ck.CKF_GENERATE}) {
		t.Errorf("GENERIC_SECRET_KEY_GEN info %+v", info)
	}
}

// equal reports whether attribute t of a is v.
func hasValue(a attr.Map, t uint64, v []byte) bool { return bytes.Equal(a[t], v) }

func TestSecretKeySessionRules(t *testing.T) {
	m, slot := newModule(t)
	initToken(t, m, slot)
	ro := openRO(t, m, slot)
	gen := func(sh uint64, tmpl ...Attribute) error {
		_, err := m.GenerateKey(sh, &Mechanism{Type: ck.CKM_AES_KEY_GEN}, append(tmpl, aULong(ck.CKA_VALUE_LEN, 16)))
		return err
	}
	// A public session key needs no login and no R/W session.
	must(t, gen(ro, aBool(ck.CKA_PRIVATE, false)))
	_, err := m.CreateObject(ro, aesTmpl(make([]byte, 16), aBool(ck.CKA_PRIVATE, false)))
	must(t, err)
	wantRV(t, gen(ro), ck.CKR_USER_NOT_LOGGED_IN) // private by default
	wantRV(t, gen(ro, aBool(ck.CKA_PRIVATE, false), aBool(ck.CKA_TOKEN, true)), ck.CKR_SESSION_READ_ONLY)
	// Template errors come before session and login errors.
	wantRV(t, gen(ro, aULong(ck.CKA_MODULUS_BITS, 1)), ck.CKR_ATTRIBUTE_TYPE_INVALID)
}

func TestSecretKeyTokenObjectSealed(t *testing.T) {
	m, slot, sh := readyToken(t)
	value := []byte("0123456789abcdef0123456789ABCDEF")
	for _, priv := range []bool{true, false} {
		h, err := m.CreateObject(sh, aesTmpl(value, aBool(ck.CKA_TOKEN, true), aBool(ck.CKA_PRIVATE, priv),
			aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true), aStr(ck.CKA_LABEL, "sealed")))
		must(t, err)
		if v := attrValue(t, m, sh, h, ck.CKA_VALUE); !bytes.Equal(v, value) {
			t.Fatalf("value %q", v)
		}
	}
	m.mu.RLock()
	file := m.slots[0].cfg.TokenFile
	m.mu.RUnlock()
	raw, err := os.ReadFile(file)
	must(t, err)
	if bytes.Contains(raw, value) || bytes.Contains(raw, value[:16]) {
		t.Fatal("secret key value stored in the clear")
	}
	// After a logout the public key's value is sealed (not readable, not
	// usable); the private key is gone until the next login.
	must(t, m.Logout(sh))
	hs := find(t, m, sh, aStr(ck.CKA_LABEL, "sealed"))
	if len(hs) != 1 {
		t.Fatalf("public sealed keys visible: %v", hs)
	}
	res, err := m.GetAttributeValue(sh, hs[0], []uint64{ck.CKA_VALUE, ck.CKA_VALUE_LEN})
	must(t, err)
	if res[0].Err != uint64(ck.CKR_ATTRIBUTE_SENSITIVE) || !bytes.Equal(res[1].Value, ck.ULong(32)) {
		t.Errorf("sealed value: %v; length %x", ck.Error(res[0].Err), res[1].Value)
	}
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	hs = find(t, m, sh, aStr(ck.CKA_LABEL, "sealed"))
	if len(hs) != 2 {
		t.Fatalf("after login: %v", hs)
	}
	for _, h := range hs {
		if v := attrValue(t, m, sh, h, ck.CKA_VALUE); !bytes.Equal(v, value) {
			t.Errorf("value after login %q", v)
		}
	}
	_ = slot
}

func TestSecretKeyCopyDestroy(t *testing.T) {
	m, _, sh := readyToken(t)
	h, err := m.CreateObject(sh, aesTmpl(make([]byte, 16), aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true)))
	must(t, err)
	c, err := m.CopyObject(sh, h, []Attribute{aBool(ck.CKA_SENSITIVE, true), aBool(ck.CKA_EXTRACTABLE, false), aBool(ck.CKA_TOKEN, true)})
	must(t, err)
	a := attr.Map(attrsOf(t, m, sh, c, ck.CKA_SENSITIVE, ck.CKA_EXTRACTABLE, ck.CKA_TOKEN, ck.CKA_CHECK_VALUE))
	if !hasValue(a, ck.CKA_SENSITIVE, ck.Bool(true)) || !hasValue(a, ck.CKA_TOKEN, ck.Bool(true)) || !hasValue(a, ck.CKA_CHECK_VALUE, mustHex("66e94b")) {
		t.Errorf("copy %x", a)
	}
	_, err = m.CopyObject(sh, c, []Attribute{aBool(ck.CKA_SENSITIVE, false)})
	wantRV(t, err, ck.CKR_ATTRIBUTE_READ_ONLY)
	_, err = m.CopyObject(sh, c, []Attribute{aBytes(ck.CKA_VALUE, bytes.Repeat([]byte{1}, 16))})
	wantRV(t, err, ck.CKR_ATTRIBUTE_READ_ONLY)
	wantRV(t, m.SetAttributeValue(sh, c, []Attribute{aULong(ck.CKA_VALUE_LEN, 32)}), ck.CKR_ATTRIBUTE_READ_ONLY)
	must(t, m.DestroyObject(sh, c))
	must(t, m.DestroyObject(sh, h))
	_, err = m.GetAttributeValue(sh, h, []uint64{ck.CKA_CLASS})
	wantRV(t, err, ck.CKR_OBJECT_HANDLE_INVALID)
}

func TestCreateSecretKey(t *testing.T) {
	m, _, sh := readyToken(t)
	ss, err := m.lock(sh)
	must(t, err)
	defer ss.mu.Unlock()
	k := bytes.Repeat([]byte{0x42}, 32)
	tmpl := attr.Map{ck.CKA_KEY_TYPE: ck.ULong(ck.CKK_AES), ck.CKA_SENSITIVE: ck.Bool(true)}
	h, err := ss.createSecretKey(tmpl, k, keyOrigin{mode: modeUnwrap})
	must(t, err)
	o, err := ss.slot.object(h)
	must(t, err)
	if !hasValue(o.attrs, ck.CKA_LOCAL, ck.Bool(false)) || !hasValue(o.attrs, ck.CKA_ALWAYS_SENSITIVE, ck.Bool(false)) ||
		!hasValue(o.attrs, ck.CKA_NEVER_EXTRACTABLE, ck.Bool(false)) || !hasValue(o.attrs, ck.CKA_CLASS, ck.ULong(ck.CKO_SECRET_KEY)) ||
		!hasValue(o.attrs, ck.CKA_VALUE, k) || !hasValue(o.attrs, ck.CKA_KEY_GEN_MECHANISM, ck.ULong(ck.CK_UNAVAILABLE_INFORMATION)) {
		t.Errorf("unwrapped key %x", o.attrs)
	}
	// Derived: inherits always-sensitive/never-extractable from the base.
	base := attr.Map{ck.CKA_ALWAYS_SENSITIVE: ck.Bool(true), ck.CKA_NEVER_EXTRACTABLE: ck.Bool(true)}
	h, err = ss.createSecretKey(attr.Map{}, k[:20], keyOrigin{mode: modeDerive, base: base})
	must(t, err)
	o, _ = ss.slot.object(h)
	if !hasValue(o.attrs, ck.CKA_ALWAYS_SENSITIVE, ck.Bool(true)) || !hasValue(o.attrs, ck.CKA_NEVER_EXTRACTABLE, ck.Bool(true)) ||
		!hasValue(o.attrs, ck.CKA_KEY_TYPE, ck.ULong(ck.CKK_GENERIC_SECRET)) || !hasValue(o.attrs, ck.CKA_VALUE_LEN, ck.ULong(20)) {
		t.Errorf("derived key %x", o.attrs)
	}
	h, err = ss.createSecretKey(attr.Map{ck.CKA_EXTRACTABLE: ck.Bool(true)}, k[:20], keyOrigin{mode: modeDerive, base: base})
	must(t, err)
	o, _ = ss.slot.object(h)
	if !hasValue(o.attrs, ck.CKA_NEVER_EXTRACTABLE, ck.Bool(false)) {
		t.Errorf("extractable derived key never extractable")
	}
	for _, c := range []struct {
		tmpl attr.Map
		val  []byte
		rv   ck.Error
	}{
		{attr.Map{ck.CKA_KEY_TYPE: ck.ULong(ck.CKK_AES)}, k[:20], ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{attr.Map{ck.CKA_VALUE_LEN: ck.ULong(16)}, k, ck.CKR_TEMPLATE_INCONSISTENT},
		{attr.Map{ck.CKA_CLASS: ck.ULong(ck.CKO_PRIVATE_KEY)}, k, ck.CKR_TEMPLATE_INCONSISTENT},
		{attr.Map{ck.CKA_VALUE: k}, k, ck.CKR_ATTRIBUTE_READ_ONLY},
		{attr.Map{ck.CKA_LOCAL: ck.Bool(true)}, k, ck.CKR_ATTRIBUTE_READ_ONLY},
	} {
		_, err := ss.createSecretKey(c.tmpl, c.val, keyOrigin{mode: modeUnwrap})
		wantRV(t, err, c.rv)
	}
}

func TestSecretKeyWithAsymmetricMechanism(t *testing.T) {
	m, _, sh := readyToken(t)
	h, err := m.CreateObject(sh, aesTmpl(make([]byte, 16)))
	must(t, err)
	wantRV(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, h), ck.CKR_KEY_TYPE_INCONSISTENT)
	wantRV(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, h), ck.CKR_KEY_TYPE_INCONSISTENT)
}
