package token

import (
	"bytes"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestCopyCannotMakeKeyPublic is issue 17's fourth attack: C_CopyObject
// with CKA_PRIVATE=FALSE made a public copy of a private key, which then
// signed after C_Logout. Now the copy is refused (CKR_TEMPLATE_INCONSISTENT,
// as SoftHSMv2), for private and secret keys, token and session objects.
func TestCopyCannotMakeKeyPublic(t *testing.T) {
	m, _, sh := readyToken(t)
	_, rsaKey := genKey(t, m, sh, 1024, true)
	_, sessKey := genKey(t, m, sh, 1024, false)
	aes, err := m.CreateObject(sh, aesTmpl(make([]byte, 16), aBool(ck.CKA_PRIVATE, true)))
	must(t, err)
	for name, h := range map[string]uint64{"RSA token key": rsaKey, "RSA session key": sessKey, "AES key": aes} {
		for _, tmpl := range [][]Attribute{
			{aBool(ck.CKA_PRIVATE, false)},
			{aBool(ck.CKA_PRIVATE, false), aBool(ck.CKA_TOKEN, false)},
			{aBool(ck.CKA_TOKEN, true), aBool(ck.CKA_PRIVATE, false)},
		} {
			_, err := m.CopyObject(sh, h, tmpl)
			if !isRV(err, ck.CKR_TEMPLATE_INCONSISTENT) {
				t.Fatalf("%s: copy with %v: %v, want CKR_TEMPLATE_INCONSISTENT", name, tmpl, err)
			}
		}
	}
	// Nothing private is left after logout.
	must(t, m.Logout(sh))
	if n := len(find(t, m, sh, aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY))); n != 0 {
		t.Fatalf("%d private keys visible after logout", n)
	}
}

// TestCopyAttributeRules audits what a copy's template may change against
// PKCS#11 3.0 (C_CopyObject, the attribute tables' footnotes): the
// one-way attributes only tighten, an unmodifiable object's copy stays
// unmodifiable and changes nothing but where it lives and tightenings.
func TestCopyAttributeRules(t *testing.T) {
	m, _, sh := readyToken(t)
	loose, err := m.CreateObject(sh, rsaKeyTemplate(testRSAKey, false, aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true)))
	must(t, err)
	tight, err := m.CreateObject(sh, rsaKeyTemplate(testRSAKey, false, aBool(ck.CKA_SENSITIVE, true), aBool(ck.CKA_EXTRACTABLE, false)))
	must(t, err)
	frozen, err := m.CreateObject(sh, rsaKeyTemplate(testRSAKey, false, aBool(ck.CKA_MODIFIABLE, false), aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true)))
	must(t, err)
	pub, err := m.CreateObject(sh, publicTemplate(&testRSAKey.PublicKey))
	must(t, err)
	cases := []struct {
		name string
		obj  uint64
		tmpl []Attribute
		rv   ck.Error
		want map[uint64][]byte
	}{
		{"sensitive false→true", loose, []Attribute{aBool(ck.CKA_SENSITIVE, true)}, ck.CKR_OK,
			map[uint64][]byte{ck.CKA_SENSITIVE: ck.Bool(true), ck.CKA_ALWAYS_SENSITIVE: ck.Bool(false)}},
		{"extractable true→false", loose, []Attribute{aBool(ck.CKA_EXTRACTABLE, false)}, ck.CKR_OK,
			map[uint64][]byte{ck.CKA_EXTRACTABLE: ck.Bool(false), ck.CKA_NEVER_EXTRACTABLE: ck.Bool(false)}},
		{"sensitive true→false", tight, []Attribute{aBool(ck.CKA_SENSITIVE, false)}, ck.CKR_ATTRIBUTE_READ_ONLY, nil},
		{"extractable false→true", tight, []Attribute{aBool(ck.CKA_EXTRACTABLE, true)}, ck.CKR_ATTRIBUTE_READ_ONLY, nil},
		{"always sensitive", loose, []Attribute{aBool(ck.CKA_ALWAYS_SENSITIVE, true)}, ck.CKR_ATTRIBUTE_READ_ONLY, nil},
		{"never extractable", loose, []Attribute{aBool(ck.CKA_NEVER_EXTRACTABLE, true)}, ck.CKR_ATTRIBUTE_READ_ONLY, nil},
		{"local", loose, []Attribute{aBool(ck.CKA_LOCAL, true)}, ck.CKR_ATTRIBUTE_READ_ONLY, nil},
		{"key value", loose, []Attribute{aBytes(ck.CKA_PRIVATE_EXPONENT, []byte{3})}, ck.CKR_ATTRIBUTE_READ_ONLY, nil},
		{"label, ID, usage, destroyable", loose, []Attribute{aStr(ck.CKA_LABEL, "l"), aStr(ck.CKA_ID, "i"), aBool(ck.CKA_SIGN, false), aBool(ck.CKA_DESTROYABLE, false)}, ck.CKR_OK,
			map[uint64][]byte{ck.CKA_LABEL: []byte("l"), ck.CKA_SIGN: ck.Bool(false), ck.CKA_DESTROYABLE: ck.Bool(false)}},
		{"private true→false", loose, []Attribute{aBool(ck.CKA_PRIVATE, false)}, ck.CKR_TEMPLATE_INCONSISTENT, nil},
		{"token true→false", loose, []Attribute{aBool(ck.CKA_TOKEN, false)}, ck.CKR_OK, map[uint64][]byte{ck.CKA_TOKEN: ck.Bool(false)}},
		{"copyable true→false", loose, []Attribute{aBool(ck.CKA_COPYABLE, false)}, ck.CKR_OK, map[uint64][]byte{ck.CKA_COPYABLE: ck.Bool(false)}},
		{"public key made private", pub, []Attribute{aBool(ck.CKA_PRIVATE, true)}, ck.CKR_OK, map[uint64][]byte{ck.CKA_PRIVATE: ck.Bool(true)}},
		{"unmodifiable made modifiable", frozen, []Attribute{aBool(ck.CKA_MODIFIABLE, true)}, ck.CKR_ACTION_PROHIBITED, nil},
		{"unmodifiable relabelled", frozen, []Attribute{aStr(ck.CKA_LABEL, "x")}, ck.CKR_ACTION_PROHIBITED, nil},
		{"unmodifiable given usage", frozen, []Attribute{aBool(ck.CKA_DERIVE, true)}, ck.CKR_ACTION_PROHIBITED, nil},
		{"unmodifiable tightened, moved", frozen, []Attribute{aBool(ck.CKA_SENSITIVE, true), aBool(ck.CKA_EXTRACTABLE, false), aBool(ck.CKA_TOKEN, false)}, ck.CKR_OK,
			map[uint64][]byte{ck.CKA_SENSITIVE: ck.Bool(true), ck.CKA_MODIFIABLE: ck.Bool(false), ck.CKA_TOKEN: ck.Bool(false)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := m.CopyObject(sh, c.obj, c.tmpl)
			wantRV(t, err, c.rv)
			for typ, w := range c.want {
				if got := attrValue(t, m, sh, h, typ); !bytes.Equal(got, w) {
					t.Errorf("%s = %x, want %x", ck.Name("CKA_", typ), got, w)
				}
			}
		})
	}
}
