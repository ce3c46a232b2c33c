package token

// Conformance of objects and attributes (PKCS#11 3.0 §4, §5.7) against the
// standard and SoftHSMv2: defaults, token-set attributes, the one-way
// attributes, read-only attributes, visibility, copy, size and search.

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"math/big"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// attrs reads several attributes, failing on any per-attribute error.
func attrsOf(t *testing.T, m *Module, sh, obj uint64, types ...uint64) map[uint64][]byte {
	t.Helper()
	res, err := m.GetAttributeValue(sh, obj, types)
	must(t, err)
	out := map[uint64][]byte{}
	for i, r := range res {
		if r.Err != 0 {
			t.Fatalf("%s: %v", ck.Name("CKA_", types[i]), ck.Error(r.Err))
		}
		out[types[i]] = r.Value
	}
	return out
}

func TestConformanceObjectDefaults(t *testing.T) {
	m, _, sh := readyToken(t)
	k := testRSAKey
	vT, vF, unavail := ck.Bool(true), ck.Bool(false), ck.ULong(ck.CK_UNAVAILABLE_INFORMATION)
	common := map[uint64][]byte{
		ck.CKA_TOKEN: vF, ck.CKA_MODIFIABLE: vT, ck.CKA_COPYABLE: vT, ck.CKA_DESTROYABLE: vT, ck.CKA_LABEL: {},
	}
	cases := []struct {
		name string
		tmpl []Attribute
		want map[uint64][]byte
	}{
		{"data", []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DATA)}, map[uint64][]byte{
			ck.CKA_PRIVATE: vF, ck.CKA_APPLICATION: {}, ck.CKA_OBJECT_ID: {}, ck.CKA_VALUE: {},
		}},
		{"certificate", []Attribute{aULong(ck.CKA_CLASS, ck.CKO_CERTIFICATE), aULong(ck.CKA_CERTIFICATE_TYPE, ck.CKC_X_509),
			aStr(ck.CKA_SUBJECT, "s"), aStr(ck.CKA_VALUE, "v")}, map[uint64][]byte{
			ck.CKA_PRIVATE: vF, ck.CKA_TRUSTED: vF, ck.CKA_CERTIFICATE_CATEGORY: ck.ULong(0), ck.CKA_ID: {}, ck.CKA_ISSUER: {}, ck.CKA_SERIAL_NUMBER: {},
		}},
		{"RSA public key", []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_RSA),
			aBytes(ck.CKA_MODULUS, k.N.Bytes()), aBytes(ck.CKA_PUBLIC_EXPONENT, big.NewInt(int64(k.E)).Bytes())}, map[uint64][]byte{
			ck.CKA_PRIVATE: vF, ck.CKA_ENCRYPT: vT, ck.CKA_VERIFY: vT, ck.CKA_VERIFY_RECOVER: vF, ck.CKA_WRAP: vF, ck.CKA_DERIVE: vF,
			ck.CKA_LOCAL: vF, ck.CKA_KEY_GEN_MECHANISM: unavail, ck.CKA_ID: {}, ck.CKA_SUBJECT: {},
			ck.CKA_MODULUS_BITS: ck.ULong(uint64(k.N.BitLen())),
		}},
		{"RSA private key", []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_RSA),
			aBytes(ck.CKA_MODULUS, k.N.Bytes()), aBytes(ck.CKA_PUBLIC_EXPONENT, big.NewInt(int64(k.E)).Bytes()),
			aBytes(ck.CKA_PRIVATE_EXPONENT, k.D.Bytes())}, map[uint64][]byte{
			ck.CKA_PRIVATE: vT, ck.CKA_SENSITIVE: vT, ck.CKA_EXTRACTABLE: vF, ck.CKA_SIGN: vT, ck.CKA_DECRYPT: vT,
			ck.CKA_SIGN_RECOVER: vF, ck.CKA_UNWRAP: vF, ck.CKA_DERIVE: vF, ck.CKA_ALWAYS_AUTHENTICATE: vF, ck.CKA_WRAP_WITH_TRUSTED: vF,
			ck.CKA_LOCAL: vF, ck.CKA_KEY_GEN_MECHANISM: unavail, ck.CKA_ALWAYS_SENSITIVE: vF, ck.CKA_NEVER_EXTRACTABLE: vF,
			// Public values on the private key are readable.
			ck.CKA_MODULUS: k.N.Bytes(), ck.CKA_PUBLIC_EXPONENT: big.NewInt(int64(k.E)).Bytes(),
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := m.CreateObject(sh, c.tmpl)
			must(t, err)
			want := map[uint64][]byte{}
			for k, v := range common {
				want[k] = v
			}
			for k, v := range c.want {
				want[k] = v
			}
			var types []uint64
			for typ := range want {
				types = append(types, typ)
			}
			got := attrsOf(t, m, sh, h, types...)
			for typ, w := range want {
				if !bytes.Equal(got[typ], w) {
					t.Errorf("%s = %x, want %x", ck.Name("CKA_", typ), got[typ], w)
				}
			}
		})
	}
}

// TestConformanceKeyProvenance: CKA_LOCAL, CKA_KEY_GEN_MECHANISM,
// CKA_ALWAYS_SENSITIVE and CKA_NEVER_EXTRACTABLE follow how the key came
// to be and its later changes.
func TestConformanceKeyProvenance(t *testing.T) {
	m, _, sh := readyToken(t)
	vT, vF := ck.Bool(true), ck.Bool(false)
	gen := func(priv ...Attribute) (uint64, uint64) {
		pk, sk, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_RSA_PKCS_KEY_PAIR_GEN},
			[]Attribute{aULong(ck.CKA_MODULUS_BITS, 1024)}, priv)
		must(t, err)
		return pk, sk
	}
	imp := func(extra ...Attribute) (uint64, uint64) {
		sk, err := m.CreateObject(sh, rsaKeyTemplate(testRSAKey, false, extra...))
		must(t, err)
		pk, err := m.CreateObject(sh, publicTemplate(&testRSAKey.PublicKey))
		must(t, err)
		return pk, sk
	}
	genMech := ck.ULong(ck.CKM_RSA_PKCS_KEY_PAIR_GEN)
	unavail := ck.ULong(ck.CK_UNAVAILABLE_INFORMATION)
	cases := []struct {
		name   string
		make   func() (uint64, uint64)
		change []Attribute // then C_SetAttributeValue on the private key
		local  []byte
		mech   []byte
		always []byte // CKA_ALWAYS_SENSITIVE
		never  []byte // CKA_NEVER_EXTRACTABLE
	}{
		{"generated, defaults", func() (uint64, uint64) { return gen() }, nil, vT, genMech, vT, vT},
		{"generated, not sensitive", func() (uint64, uint64) { return gen(aBool(ck.CKA_SENSITIVE, false)) }, nil, vT, genMech, vF, vT},
		{"generated, extractable", func() (uint64, uint64) { return gen(aBool(ck.CKA_EXTRACTABLE, true)) }, nil, vT, genMech, vT, vF},
		{"generated, made sensitive later", func() (uint64, uint64) { return gen(aBool(ck.CKA_SENSITIVE, false)) },
			[]Attribute{aBool(ck.CKA_SENSITIVE, true)}, vT, genMech, vF, vT},
		{"generated, made unextractable later", func() (uint64, uint64) { return gen(aBool(ck.CKA_EXTRACTABLE, true)) },
			[]Attribute{aBool(ck.CKA_EXTRACTABLE, false)}, vT, genMech, vT, vF},
		{"imported, sensitive", func() (uint64, uint64) { return imp() }, nil, vF, unavail, vF, vF},
		{"imported, extractable", func() (uint64, uint64) { return imp(aBool(ck.CKA_EXTRACTABLE, true)) }, nil, vF, unavail, vF, vF},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pk, sk := c.make()
			if c.change != nil {
				must(t, m.SetAttributeValue(sh, sk, c.change))
			}
			got := attrsOf(t, m, sh, sk, ck.CKA_LOCAL, ck.CKA_KEY_GEN_MECHANISM, ck.CKA_ALWAYS_SENSITIVE, ck.CKA_NEVER_EXTRACTABLE)
			if !bytes.Equal(got[ck.CKA_LOCAL], c.local) || !bytes.Equal(got[ck.CKA_KEY_GEN_MECHANISM], c.mech) ||
				!bytes.Equal(got[ck.CKA_ALWAYS_SENSITIVE], c.always) || !bytes.Equal(got[ck.CKA_NEVER_EXTRACTABLE], c.never) {
				t.Errorf("private key: %x", got)
			}
			pg := attrsOf(t, m, sh, pk, ck.CKA_LOCAL, ck.CKA_KEY_GEN_MECHANISM)
			if !bytes.Equal(pg[ck.CKA_LOCAL], c.local) || !bytes.Equal(pg[ck.CKA_KEY_GEN_MECHANISM], c.mech) {
				t.Errorf("public key: %x", pg)
			}
		})
	}
}

// TestConformanceAttributeChanges: which C_SetAttributeValue changes are
// allowed (one-way CKA_SENSITIVE/CKA_EXTRACTABLE/CKA_COPYABLE, token-set
// and fixed attributes read-only) and what a refused change leaves.
func TestConformanceAttributeChanges(t *testing.T) {
	m, slot, sh := readyToken(t)
	cases := []struct {
		name   string
		keyOpt []Attribute // of the private key
		set    []Attribute
		rv     ck.Error
	}{
		{"label", nil, []Attribute{aStr(ck.CKA_LABEL, "new")}, ck.CKR_OK},
		{"id", nil, []Attribute{aStr(ck.CKA_ID, "new-id")}, ck.CKR_OK},
		{"usage flag", nil, []Attribute{aBool(ck.CKA_SIGN, false)}, ck.CKR_OK},
		{"sensitive false→true", []Attribute{aBool(ck.CKA_SENSITIVE, false)}, []Attribute{aBool(ck.CKA_SENSITIVE, true)}, ck.CKR_OK},
		{"sensitive true→false", nil, []Attribute{aBool(ck.CKA_SENSITIVE, false)}, ck.CKR_ATTRIBUTE_READ_ONLY},
		{"extractable true→false", []Attribute{aBool(ck.CKA_EXTRACTABLE, true)}, []Attribute{aBool(ck.CKA_EXTRACTABLE, false)}, ck.CKR_OK},
		{"extractable false→true", nil, []Attribute{aBool(ck.CKA_EXTRACTABLE, true)}, ck.CKR_ATTRIBUTE_READ_ONLY},
		{"copyable true→false", nil, []Attribute{aBool(ck.CKA_COPYABLE, false)}, ck.CKR_OK},
		{"copyable false→true", []Attribute{aBool(ck.CKA_COPYABLE, false)}, []Attribute{aBool(ck.CKA_COPYABLE, true)}, ck.CKR_ATTRIBUTE_READ_ONLY},
		{"same value of a fixed attribute", nil, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY)}, ck.CKR_OK},
		{"class", nil, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DATA)}, ck.CKR_ATTRIBUTE_READ_ONLY},
		{"key type", nil, []Attribute{aULong(ck.CKA_KEY_TYPE, ck.CKK_EC)}, ck.CKR_ATTRIBUTE_READ_ONLY},
		{"modulus", nil, []Attribute{aStr(ck.CKA_MODULUS, "\x01\x01")}, ck.CKR_ATTRIBUTE_READ_ONLY},
		{"token", nil, []Attribute{aBool(ck.CKA_TOKEN, false)}, ck.CKR_ATTRIBUTE_READ_ONLY},
		{"private", nil, []Attribute{aBool(ck.CKA_PRIVATE, false)}, ck.CKR_ATTRIBUTE_READ_ONLY},
		{"local", nil, []Attribute{aBool(ck.CKA_LOCAL, true)}, ck.CKR_ATTRIBUTE_READ_ONLY},
		{"always sensitive", nil, []Attribute{aBool(ck.CKA_ALWAYS_SENSITIVE, true)}, ck.CKR_ATTRIBUTE_READ_ONLY},
		{"never extractable", nil, []Attribute{aBool(ck.CKA_NEVER_EXTRACTABLE, true)}, ck.CKR_ATTRIBUTE_READ_ONLY},
		{"key gen mechanism", nil, []Attribute{aULong(ck.CKA_KEY_GEN_MECHANISM, ck.CKM_RSA_PKCS_KEY_PAIR_GEN)}, ck.CKR_ATTRIBUTE_READ_ONLY},
		{"unknown attribute", nil, []Attribute{aULong(ck.CKA_MODULUS_BITS, 1024)}, ck.CKR_ATTRIBUTE_TYPE_INVALID},
		{"malformed bool", nil, []Attribute{aStr(ck.CKA_SIGN, "yes")}, ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"unmodifiable object", []Attribute{aBool(ck.CKA_MODIFIABLE, false)}, []Attribute{aStr(ck.CKA_LABEL, "x")}, ck.CKR_ACTION_PROHIBITED},
		{"all or nothing", nil, []Attribute{aStr(ck.CKA_LABEL, "partial"), aBool(ck.CKA_SENSITIVE, false)}, ck.CKR_ATTRIBUTE_READ_ONLY},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sk, err := m.CreateObject(sh, rsaKeyTemplate(testRSAKey, false, c.keyOpt...))
			must(t, err)
			before := attrsOf(t, m, sh, sk, ck.CKA_LABEL, ck.CKA_SENSITIVE, ck.CKA_EXTRACTABLE, ck.CKA_SIGN)
			wantRV(t, m.SetAttributeValue(sh, sk, c.set), c.rv)
			after := attrsOf(t, m, sh, sk, ck.CKA_LABEL, ck.CKA_SENSITIVE, ck.CKA_EXTRACTABLE, ck.CKA_SIGN)
			if c.rv != ck.CKR_OK {
				for typ, v := range before {
					if !bytes.Equal(after[typ], v) {
						t.Fatalf("refused change altered %s", ck.Name("CKA_", typ))
					}
				}
				return
			}
			for _, a := range c.set {
				if v, ok := after[a.Type]; ok && !bytes.Equal(v, a.Value) {
					t.Fatalf("%s = %x after setting %x", ck.Name("CKA_", a.Type), v, a.Value)
				}
			}
		})
	}
	// Token-set attributes in a creation template.
	for _, a := range []Attribute{aBool(ck.CKA_LOCAL, false), aBool(ck.CKA_ALWAYS_SENSITIVE, false),
		aBool(ck.CKA_NEVER_EXTRACTABLE, false), aULong(ck.CKA_KEY_GEN_MECHANISM, ck.CK_UNAVAILABLE_INFORMATION)} {
		_, err := m.CreateObject(sh, rsaKeyTemplate(testRSAKey, false, a))
		wantRV(t, err, ck.CKR_ATTRIBUTE_READ_ONLY)
	}
	// A token object cannot change in a R/O session.
	tk, err := m.CreateObject(sh, rsaKeyTemplate(testRSAKey, false))
	must(t, err)
	ro := openRO(t, m, slot)
	wantRV(t, m.SetAttributeValue(ro, tk, []Attribute{aStr(ck.CKA_LABEL, "ro")}), ck.CKR_SESSION_READ_ONLY)
	wantRV(t, m.DestroyObject(ro, tk), ck.CKR_SESSION_READ_ONLY)
}

// TestConformanceCreateRules: session and login rules of C_CreateObject.
func TestConformanceCreateRules(t *testing.T) {
	m, slot := newModule(t)
	initToken(t, m, slot)
	ro, rw := openRO(t, m, slot), openRW(t, m, slot)
	data := func(token, private bool) []Attribute {
		return []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DATA), aBool(ck.CKA_TOKEN, token), aBool(ck.CKA_PRIVATE, private)}
	}
	cases := []struct {
		name           string
		login          bool
		rw             bool
		token, private bool
		rv             ck.Error
	}{
		{"RO public, session object", false, false, false, false, ck.CKR_OK},
		{"RO public, token object", false, false, true, false, ck.CKR_SESSION_READ_ONLY},
		{"RW public, token object", false, true, true, false, ck.CKR_OK},
		{"RW public, private session object", false, true, false, true, ck.CKR_USER_NOT_LOGGED_IN},
		{"RW public, private token object", false, true, true, true, ck.CKR_USER_NOT_LOGGED_IN},
		{"RO user, private session object", true, false, false, true, ck.CKR_OK},
		{"RO user, private token object", true, false, true, true, ck.CKR_SESSION_READ_ONLY},
		{"RW user, private token object", true, true, true, true, ck.CKR_OK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			si, _ := m.SessionInfo(rw)
			logged := si.State == ck.CKS_RW_USER_FUNCTIONS
			if c.login && !logged {
				must(t, m.Login(rw, ck.CKU_USER, []byte(testUserPIN)))
			} else if !c.login && logged {
				must(t, m.Logout(rw))
			}
			sh := ro
			if c.rw {
				sh = rw
			}
			n := len(find(t, m, sh))
			_, err := m.CreateObject(sh, data(c.token, c.private))
			wantRV(t, err, c.rv)
			if got := len(find(t, m, sh)); (err == nil) != (got == n+1) {
				t.Fatalf("%d objects before, %d after (err %v)", n, got, err)
			}
		})
	}
	// Key generation follows the same rules, before generating anything.
	must(t, m.Logout(rw))
	_, _, err := m.GenerateKeyPair(ro, &Mechanism{Type: ck.CKM_RSA_PKCS_KEY_PAIR_GEN},
		[]Attribute{aULong(ck.CKA_MODULUS_BITS, 1024), aBool(ck.CKA_TOKEN, true)}, []Attribute{aBool(ck.CKA_TOKEN, true)})
	wantRV(t, err, ck.CKR_SESSION_READ_ONLY)
	_, _, err = m.GenerateKeyPair(rw, &Mechanism{Type: ck.CKM_RSA_PKCS_KEY_PAIR_GEN},
		[]Attribute{aULong(ck.CKA_MODULUS_BITS, 1024)}, nil)
	wantRV(t, err, ck.CKR_USER_NOT_LOGGED_IN) // the private key is private by default
}

func TestConformanceCopyObject(t *testing.T) {
	m, slot, sh := readyToken(t)
	sk, err := m.CreateObject(sh, rsaKeyTemplate(testRSAKey, false, aStr(ck.CKA_LABEL, "orig"),
		aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true)))
	must(t, err)
	nocopy, err := m.CreateObject(sh, rsaKeyTemplate(testRSAKey, false, aBool(ck.CKA_COPYABLE, false)))
	must(t, err)
	ro := openRO(t, m, slot)
	cases := []struct {
		name string
		sh   uint64
		obj  uint64
		tmpl []Attribute
		rv   ck.Error
		want map[uint64][]byte
	}{
		{"plain copy", sh, sk, nil, ck.CKR_OK, map[uint64][]byte{ck.CKA_LABEL: []byte("orig"), ck.CKA_TOKEN: ck.Bool(true)}},
		{"label and token changed", sh, sk, []Attribute{aStr(ck.CKA_LABEL, "copy"), aBool(ck.CKA_TOKEN, false)}, ck.CKR_OK,
			map[uint64][]byte{ck.CKA_LABEL: []byte("copy"), ck.CKA_TOKEN: ck.Bool(false)}},
		{"made sensitive and unmodifiable", sh, sk, []Attribute{aBool(ck.CKA_SENSITIVE, true), aBool(ck.CKA_MODIFIABLE, false)}, ck.CKR_OK,
			map[uint64][]byte{ck.CKA_SENSITIVE: ck.Bool(true), ck.CKA_MODIFIABLE: ck.Bool(false), ck.CKA_ALWAYS_SENSITIVE: ck.Bool(false)}},
		{"class changed", sh, sk, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DATA)}, ck.CKR_ATTRIBUTE_READ_ONLY, nil},
		{"made insensitive", sh, nocopy, []Attribute{aBool(ck.CKA_SENSITIVE, false)}, ck.CKR_ACTION_PROHIBITED, nil},
		{"uncopyable", sh, nocopy, nil, ck.CKR_ACTION_PROHIBITED, nil},
		{"token copy in R/O session", ro, sk, nil, ck.CKR_SESSION_READ_ONLY, nil},
		{"session copy in R/O session", ro, sk, []Attribute{aBool(ck.CKA_TOKEN, false)}, ck.CKR_OK, map[uint64][]byte{ck.CKA_TOKEN: ck.Bool(false)}},
		{"bad handle", sh, 0xdead, nil, ck.CKR_OBJECT_HANDLE_INVALID, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := m.CopyObject(c.sh, c.obj, c.tmpl)
			wantRV(t, err, c.rv)
			if err != nil {
				return
			}
			if h == c.obj {
				t.Fatal("copy has the original's handle")
			}
			for typ, w := range c.want {
				if got := attrValue(t, m, sh, h, typ); !bytes.Equal(got, w) {
					t.Errorf("%s = %x, want %x", ck.Name("CKA_", typ), got, w)
				}
			}
			if attrValue(t, m, sh, h, ck.CKA_SENSITIVE)[0] == 0 && !bytes.Equal(attrValue(t, m, sh, h, ck.CKA_PRIVATE_EXPONENT), testRSAKey.D.Bytes()) {
				t.Error("copy lost the key value")
			}
		})
	}
}

func TestConformanceFindAndSize(t *testing.T) {
	m, slot, sh := readyToken(t)
	pk, sk := genKey(t, m, sh, 1024, true, aStr(ck.CKA_ID, "k1"))
	must(t, m.SetAttributeValue(sh, pk, []Attribute{aStr(ck.CKA_ID, "k1")}))
	imported, err := m.CreateObject(sh, rsaKeyTemplate(testRSAKey, true, aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true)))
	must(t, err)
	cert, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_CERTIFICATE), aULong(ck.CKA_CERTIFICATE_TYPE, ck.CKC_X_509),
		aBool(ck.CKA_TOKEN, true), aStr(ck.CKA_ID, "k1"), aStr(ck.CKA_SUBJECT, "subj"), aStr(ck.CKA_VALUE, "der")})
	must(t, err)
	data, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DATA), aStr(ck.CKA_APPLICATION, "app")})
	must(t, err)
	pub := publicKey(t, m, sh, pk)
	cases := []struct {
		name string
		tmpl []Attribute
		want []uint64
	}{
		{"empty template: all", nil, []uint64{pk, sk, imported, cert, data}},
		{"class", []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY)}, []uint64{sk, imported}},
		{"class+key type+id", []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_RSA), aStr(ck.CKA_ID, "k1")}, []uint64{sk}},
		{"id only", []Attribute{aStr(ck.CKA_ID, "k1")}, []uint64{pk, sk, cert}},
		{"modulus", []Attribute{aBytes(ck.CKA_MODULUS, pub.N.Bytes())}, []uint64{pk, sk}},
		{"modulus bits", []Attribute{aULong(ck.CKA_MODULUS_BITS, 1024), aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY)}, []uint64{pk}},
		{"local", []Attribute{aBool(ck.CKA_LOCAL, true)}, []uint64{pk, sk}},
		{"token false", []Attribute{aBool(ck.CKA_TOKEN, false)}, []uint64{data}},
		{"application", []Attribute{aStr(ck.CKA_APPLICATION, "app")}, []uint64{data}},
		{"readable secret value", []Attribute{aBytes(ck.CKA_PRIVATE_EXPONENT, testRSAKey.D.Bytes())}, []uint64{imported}},
		{"no match", []Attribute{aStr(ck.CKA_LABEL, "nothing")}, nil},
		{"attribute nobody has", []Attribute{aULong(0x7fff0001, 1)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := find(t, m, sh, c.tmpl...)
			if !sameSet(got, c.want) {
				t.Fatalf("found %v, want %v", got, c.want)
			}
		})
	}
	// A sensitive value never matches, even with the right bytes.
	d, err := m.CreateObject(sh, rsaKeyTemplate(testRSAKey, true, aStr(ck.CKA_LABEL, "sens")))
	must(t, err)
	if got := find(t, m, sh, aStr(ck.CKA_LABEL, "sens"), aBytes(ck.CKA_PRIVATE_EXPONENT, testRSAKey.D.Bytes())); len(got) != 0 {
		t.Fatalf("search matched a sensitive value: %v", got)
	}
	_ = d
	// Session rules of the search.
	must(t, m.FindObjectsInit(sh, nil))
	wantRV(t, m.FindObjectsInit(sh, nil), ck.CKR_OPERATION_ACTIVE)
	hs, err := m.FindObjects(sh, 0)
	must(t, err)
	if len(hs) != 0 {
		t.Fatal("FindObjects(0) returned handles")
	}
	must(t, m.FindObjectsFinal(sh))
	wantRV(t, m.FindObjectsFinal(sh), ck.CKR_OPERATION_NOT_INITIALIZED)
	_, err = m.FindObjects(sh, 1)
	wantRV(t, err, ck.CKR_OPERATION_NOT_INITIALIZED)
	// Before login only public objects are found.
	ro := openRO(t, m, slot)
	must(t, m.Logout(sh))
	if got := find(t, m, ro); !sameSet(got, []uint64{pk, cert, data}) {
		t.Fatalf("logged out: %v", got)
	}
	// Object sizes.
	for _, h := range []uint64{pk, cert, data} {
		n, err := m.GetObjectSize(ro, h)
		must(t, err)
		if n == 0 || n == ck.CK_UNAVAILABLE_INFORMATION {
			t.Errorf("object %d size %d", h, n)
		}
	}
	_, err = m.GetObjectSize(ro, sk)
	wantRV(t, err, ck.CKR_OBJECT_HANDLE_INVALID)
	_, err = m.GetAttributeValue(ro, sk, []uint64{ck.CKA_CLASS})
	wantRV(t, err, ck.CKR_OBJECT_HANDLE_INVALID)
}

// TestConformanceRSAKeyAttributes: the attributes clients read from RSA
// keys (CKA_PUBLIC_KEY_INFO, CKA_MODULUS_BITS, public values on the
// private key) agree with each other.
func TestConformanceRSAKeyAttributes(t *testing.T) {
	m, _, sh := readyToken(t)
	pk, sk := genKey(t, m, sh, 1024, false)
	imp, err := m.CreateObject(sh, rsaKeyTemplate(testRSAKey, false))
	must(t, err)
	cases := []struct {
		name string
		obj  uint64
		want *rsa.PublicKey
	}{
		{"generated public", pk, publicKey(t, m, sh, pk)},
		{"generated private", sk, publicKey(t, m, sh, pk)},
		{"imported private", imp, &testRSAKey.PublicKey},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := attrsOf(t, m, sh, c.obj, ck.CKA_MODULUS, ck.CKA_PUBLIC_EXPONENT, ck.CKA_PUBLIC_KEY_INFO)
			if !bytes.Equal(a[ck.CKA_MODULUS], c.want.N.Bytes()) || new(big.Int).SetBytes(a[ck.CKA_PUBLIC_EXPONENT]).Int64() != int64(c.want.E) {
				t.Fatal("public values")
			}
			spki, err := x509.ParsePKIXPublicKey(a[ck.CKA_PUBLIC_KEY_INFO])
			must(t, err)
			if rk, ok := spki.(*rsa.PublicKey); !ok || !rk.Equal(c.want) {
				t.Fatal("CKA_PUBLIC_KEY_INFO is not the key")
			}
		})
	}
	if bits, _ := ck.ParseULong(attrValue(t, m, sh, pk, ck.CKA_MODULUS_BITS)); bits != 1024 {
		t.Fatalf("CKA_MODULUS_BITS %d", bits)
	}
}

// sameSet reports whether a and b hold the same handles.
func sameSet(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[uint64]int{}
	for _, h := range a {
		seen[h]++
	}
	for _, h := range b {
		seen[h]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// TestConformanceCloseWipesKeyValues: C_Finalize (Module.Close) zeroes the
// secret values held in the object cache, of session and token keys.
func TestConformanceCloseWipesKeyValues(t *testing.T) {
	testConfig(t, "")
	m, err := LoadFromEnv()
	must(t, err)
	slot := m.SlotList(true)[0]
	initToken(t, m, slot)
	sh := openRW(t, m, slot)
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	tokenKey, err := m.CreateObject(sh, rsaKeyTemplate(testRSAKey, true))
	must(t, err)
	_, sessionKey := genKey(t, m, sh, 1024, false)
	s := m.slotByID[slot]
	var held [][]byte
	for _, h := range []uint64{tokenKey, sessionKey} {
		o := s.objects[h]
		for _, typ := range []uint64{ck.CKA_PRIVATE_EXPONENT, ck.CKA_PRIME_1, ck.CKA_PRIME_2, ck.CKA_EXPONENT_1, ck.CKA_EXPONENT_2, ck.CKA_COEFFICIENT} {
			v := o.attrs[typ]
			if len(v) == 0 || bytes.Count(v, []byte{0}) == len(v) {
				t.Fatalf("object %d: %s empty before close", h, ck.Name("CKA_", typ))
			}
			held = append(held, v)
		}
	}
	must(t, m.Close())
	for i, v := range held {
		if bytes.Count(v, []byte{0}) != len(v) {
			t.Fatalf("value %d not wiped at close", i)
		}
	}
	// The token key is still on the token: wiping touched memory only.
	m2 := load(t)
	sh = openRW(t, m2, slot)
	must(t, m2.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	got := find(t, m2, sh, aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY))
	if len(got) != 1 {
		t.Fatalf("%d private keys after reload", len(got))
	}
	sig := sign(t, m2, sh, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, got[0], []byte("after wipe"))
	must(t, rsa.VerifyPKCS1v15(&testRSAKey.PublicKey, crypto.SHA256, hashOf(crypto.SHA256, []byte("after wipe")), sig))
}
