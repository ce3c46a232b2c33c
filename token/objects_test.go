package token

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"math/big"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// rsaKeyTemplate is the C_CreateObject template of a crypto/rsa key;
// crt false leaves out primes and CRT values.
func rsaKeyTemplate(k *rsa.PrivateKey, crt bool, extra ...Attribute) []Attribute {
	tmpl := []Attribute{
		aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_RSA),
		aBool(ck.CKA_TOKEN, true), aStr(ck.CKA_ID, "imported"),
		aBytes(ck.CKA_MODULUS, k.N.Bytes()), aBytes(ck.CKA_PUBLIC_EXPONENT, big.NewInt(int64(k.E)).Bytes()),
		aBytes(ck.CKA_PRIVATE_EXPONENT, k.D.Bytes()),
	}
	if crt {
		tmpl = append(tmpl,
			aBytes(ck.CKA_PRIME_1, k.Primes[0].Bytes()), aBytes(ck.CKA_PRIME_2, k.Primes[1].Bytes()),
			aBytes(ck.CKA_EXPONENT_1, k.Precomputed.Dp.Bytes()), aBytes(ck.CKA_EXPONENT_2, k.Precomputed.Dq.Bytes()),
			aBytes(ck.CKA_COEFFICIENT, k.Precomputed.Qinv.Bytes()))
	}
	return append(tmpl, extra...)
}

func publicTemplate(k *rsa.PublicKey, extra ...Attribute) []Attribute {
	return append([]Attribute{
		aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_RSA), aBool(ck.CKA_TOKEN, true),
		aBytes(ck.CKA_MODULUS, k.N.Bytes()), aBytes(ck.CKA_PUBLIC_EXPONENT, big.NewInt(int64(k.E)).Bytes()),
	}, extra...)
}

var testRSAKey = func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		panic(err)
	}
	return k
}()

func TestImportRSAKey(t *testing.T) {
	k := testRSAKey
	data := []byte("imported key signs")
	digest := sha256.Sum256(data)
	for _, crt := range []bool{true, false} {
		name := map[bool]string{true: "with CRT", false: "CRT-less"}[crt]
		t.Run(name, func(t *testing.T) {
			m, _, sh := readyToken(t)
			extra := []Attribute{aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true)}
			sk, err := m.CreateObject(sh, rsaKeyTemplate(k, crt, extra...))
			must(t, err)
			sig := sign(t, m, sh, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, sk, data)
			must(t, rsa.VerifyPKCS1v15(&k.PublicKey, crypto.SHA256, digest[:], sig))
			// The computed CRT values are the key's.
			p := new(big.Int).SetBytes(attrValue(t, m, sh, sk, ck.CKA_PRIME_1))
			q := new(big.Int).SetBytes(attrValue(t, m, sh, sk, ck.CKA_PRIME_2))
			if new(big.Int).Mul(p, q).Cmp(k.N) != 0 {
				t.Fatal("primes do not multiply to n")
			}
			qinv := new(big.Int).SetBytes(attrValue(t, m, sh, sk, ck.CKA_COEFFICIENT))
			if new(big.Int).Mod(new(big.Int).Mul(qinv, q), p).Cmp(big.NewInt(1)) != 0 {
				t.Fatal("bad coefficient")
			}
			if !bytes.Equal(attrValue(t, m, sh, sk, ck.CKA_LOCAL), ck.Bool(false)) ||
				!bytes.Equal(attrValue(t, m, sh, sk, ck.CKA_KEY_GEN_MECHANISM), ck.ULong(ck.CK_UNAVAILABLE_INFORMATION)) {
				t.Fatal("imported key claims local generation")
			}
			// A public key object to encrypt with; decrypt with crypto/rsa.
			pk, err := m.CreateObject(sh, publicTemplate(&k.PublicKey))
			must(t, err)
			if !bytes.Equal(attrValue(t, m, sh, pk, ck.CKA_MODULUS_BITS), ck.ULong(1024)) {
				t.Fatal("CKA_MODULUS_BITS")
			}
			mc := &Mechanism{Type: ck.CKM_RSA_PKCS_OAEP, OAEP: &OAEPParams{Hash: ck.CKM_SHA256, MGF: ck.CKG_MGF1_SHA256, Source: ck.CKZ_DATA_SPECIFIED, SourceData: []byte("L")}}
			must(t, m.EncryptInit(sh, mc, pk))
			ct, _, err := m.Encrypt(sh, []byte("hi"), Out{Cap: 128})
			must(t, err)
			pt, err := rsa.DecryptOAEP(sha256.New(), nil, k, ct, []byte("L"))
			must(t, err)
			if string(pt) != "hi" {
				t.Fatal("OAEP")
			}
		})
	}
}

func TestSensitiveAttributes(t *testing.T) {
	m, _, sh := readyToken(t)
	sk, err := m.CreateObject(sh, rsaKeyTemplate(testRSAKey, false))
	must(t, err)
	types := []uint64{ck.CKA_MODULUS, ck.CKA_PRIVATE_EXPONENT, ck.CKA_PRIME_1, ck.CKA_COEFFICIENT, ck.CKA_VALUE, ck.CKA_SENSITIVE, 0x7fff0000}
	res, err := m.GetAttributeValue(sh, sk, types)
	must(t, err)
	want := []ck.Error{0, ck.CKR_ATTRIBUTE_SENSITIVE, ck.CKR_ATTRIBUTE_SENSITIVE, ck.CKR_ATTRIBUTE_SENSITIVE,
		ck.CKR_ATTRIBUTE_TYPE_INVALID, 0, ck.CKR_ATTRIBUTE_TYPE_INVALID}
	for i, w := range want {
		if res[i].Err != uint64(w) {
			t.Errorf("%s: got %v want %v", ck.Name("CKA_", types[i]), ck.Error(res[i].Err), w)
		}
	}
	if !bytes.Equal(res[0].Value, testRSAKey.N.Bytes()) || !bytes.Equal(res[5].Value, ck.Bool(true)) {
		t.Fatal("values filled where possible")
	}
	// SENSITIVE only false → true, EXTRACTABLE only true → false.
	wantRV(t, m.SetAttributeValue(sh, sk, []Attribute{aBool(ck.CKA_SENSITIVE, false)}), ck.CKR_ATTRIBUTE_READ_ONLY)
	wantRV(t, m.SetAttributeValue(sh, sk, []Attribute{aBool(ck.CKA_EXTRACTABLE, true)}), ck.CKR_ATTRIBUTE_READ_ONLY)
	ek, err := m.CreateObject(sh, rsaKeyTemplate(testRSAKey, true, aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true)))
	must(t, err)
	if !bytes.Equal(attrValue(t, m, sh, ek, ck.CKA_PRIVATE_EXPONENT), testRSAKey.D.Bytes()) {
		t.Fatal("extractable value")
	}
	must(t, m.SetAttributeValue(sh, ek, []Attribute{aBool(ck.CKA_EXTRACTABLE, false)}))
	res, _ = m.GetAttributeValue(sh, ek, []uint64{ck.CKA_PRIVATE_EXPONENT, ck.CKA_NEVER_EXTRACTABLE})
	if res[0].Err != uint64(ck.CKR_ATTRIBUTE_SENSITIVE) || !bytes.Equal(res[1].Value, ck.Bool(false)) {
		t.Fatalf("after EXTRACTABLE=false: %+v", res)
	}
	// Generated keys: ALWAYS_SENSITIVE and NEVER_EXTRACTABLE from the start.
	_, gk := genKey(t, m, sh, 1024, false)
	if !bytes.Equal(attrValue(t, m, sh, gk, ck.CKA_ALWAYS_SENSITIVE), ck.Bool(true)) ||
		!bytes.Equal(attrValue(t, m, sh, gk, ck.CKA_NEVER_EXTRACTABLE), ck.Bool(true)) ||
		!bytes.Equal(attrValue(t, m, sh, gk, ck.CKA_LOCAL), ck.Bool(true)) ||
		!bytes.Equal(attrValue(t, m, sh, gk, ck.CKA_KEY_GEN_MECHANISM), ck.ULong(ck.CKM_RSA_PKCS_KEY_PAIR_GEN)) {
		t.Fatal("generated key attributes")
	}
}

func TestTemplateErrors(t *testing.T) {
	m, slot, sh := readyToken(t)
	k := testRSAKey
	ro := openRO(t, m, slot)
	cert := []Attribute{
		aULong(ck.CKA_CLASS, ck.CKO_CERTIFICATE), aULong(ck.CKA_CERTIFICATE_TYPE, ck.CKC_X_509), aBool(ck.CKA_TOKEN, true),
		aStr(ck.CKA_SUBJECT, "subject-der"), aStr(ck.CKA_VALUE, "cert-der"),
	}
	without := func(tmpl []Attribute, typ uint64) []Attribute {
		var out []Attribute
		for _, a := range tmpl {
			if a.Type != typ {
				out = append(out, a)
			}
		}
		return out
	}
	badPriv := rsaKeyTemplate(k, true)
	for i := range badPriv {
		if badPriv[i].Type == ck.CKA_COEFFICIENT {
			badPriv[i].Value = big.NewInt(12345).Bytes()
		}
	}
	cases := []struct {
		name string
		sh   uint64
		tmpl []Attribute
		want ck.Error
	}{
		{"no class", sh, []Attribute{aStr(ck.CKA_VALUE, "x")}, ck.CKR_TEMPLATE_INCOMPLETE},
		{"no key type", sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY)}, ck.CKR_TEMPLATE_INCOMPLETE},
		{"no modulus", sh, without(publicTemplate(&k.PublicKey), ck.CKA_MODULUS), ck.CKR_TEMPLATE_INCOMPLETE},
		{"cert without value", sh, without(cert, ck.CKA_VALUE), ck.CKR_TEMPLATE_INCOMPLETE},
		{"class of 7 bytes", sh, []Attribute{{Type: ck.CKA_CLASS, Value: make([]byte, 7)}}, ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"bool of 2 bytes", sh, append(cert, Attribute{Type: ck.CKA_MODIFIABLE, Value: []byte{1, 0}}), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"bool value 2", sh, append(cert, Attribute{Type: ck.CKA_MODIFIABLE, Value: []byte{2}}), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"unsupported class", sh, []Attribute{aULong(ck.CKO_HW_FEATURE, ck.CKO_HW_FEATURE), aULong(ck.CKA_CLASS, ck.CKO_HW_FEATURE)}, ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"unknown key type", sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_KEA)}, ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"foreign attribute", sh, append(cert, aStr(ck.CKA_MODULUS, "x")), ck.CKR_ATTRIBUTE_TYPE_INVALID},
		{"token-set CKA_LOCAL", sh, publicTemplate(&k.PublicKey, aBool(ck.CKA_LOCAL, true)), ck.CKR_ATTRIBUTE_READ_ONLY},
		{"trusted by user", sh, append(cert, aBool(ck.CKA_TRUSTED, true)), ck.CKR_ATTRIBUTE_READ_ONLY},
		{"duplicate differing", sh, append(cert, aStr(ck.CKA_LABEL, "a"), aStr(ck.CKA_LABEL, "b")), ck.CKR_TEMPLATE_INCONSISTENT},
		{"modulus bits mismatch", sh, publicTemplate(&k.PublicKey, aULong(ck.CKA_MODULUS_BITS, 2048)), ck.CKR_TEMPLATE_INCONSISTENT},
		{"inconsistent CRT", sh, badPriv, ck.CKR_TEMPLATE_INCONSISTENT},
		{"wrong private exponent", sh, append(without(rsaKeyTemplate(k, false), ck.CKA_PRIVATE_EXPONENT), aBytes(ck.CKA_PRIVATE_EXPONENT, big.NewInt(65537).Bytes())), ck.CKR_TEMPLATE_INCONSISTENT},
		{"even modulus", sh, append(without(publicTemplate(&k.PublicKey), ck.CKA_MODULUS), aBytes(ck.CKA_MODULUS, new(big.Int).Lsh(k.N, 1).Bytes())), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"token object in R/O session", ro, cert, ck.CKR_SESSION_READ_ONLY},
	}
	before := len(find(t, m, sh))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := m.CreateObject(c.sh, c.tmpl)
			wantRV(t, err, c.want)
			if n := len(find(t, m, sh)); n != before {
				t.Fatalf("objects %d → %d", before, n)
			}
		})
	}
	// Key generation template errors.
	gen := &Mechanism{Type: ck.CKM_RSA_PKCS_KEY_PAIR_GEN}
	genCases := []struct {
		name      string
		pub, priv []Attribute
		want      ck.Error
	}{
		{"no modulus bits", nil, nil, ck.CKR_TEMPLATE_INCOMPLETE},
		{"too small", []Attribute{aULong(ck.CKA_MODULUS_BITS, 512)}, nil, ck.CKR_KEY_SIZE_RANGE},
		{"too large", []Attribute{aULong(ck.CKA_MODULUS_BITS, 16384)}, nil, ck.CKR_KEY_SIZE_RANGE},
		{"even exponent", []Attribute{aULong(ck.CKA_MODULUS_BITS, 1024), aBytes(ck.CKA_PUBLIC_EXPONENT, []byte{1, 0, 0})}, nil, ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"class mismatch", []Attribute{aULong(ck.CKA_MODULUS_BITS, 1024), aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY)}, nil, ck.CKR_TEMPLATE_INCONSISTENT},
		{"modulus given", []Attribute{aULong(ck.CKA_MODULUS_BITS, 1024), aBytes(ck.CKA_MODULUS, k.N.Bytes())}, nil, ck.CKR_ATTRIBUTE_READ_ONLY},
		{"bits in private template", []Attribute{aULong(ck.CKA_MODULUS_BITS, 1024)}, []Attribute{aULong(ck.CKA_MODULUS_BITS, 1024)}, ck.CKR_ATTRIBUTE_TYPE_INVALID},
	}
	for _, c := range genCases {
		t.Run("generate/"+c.name, func(t *testing.T) {
			_, _, err := m.GenerateKeyPair(sh, gen, c.pub, c.priv)
			wantRV(t, err, c.want)
			if n := len(find(t, m, sh)); n != before {
				t.Fatalf("objects %d → %d", before, n)
			}
		})
	}
	_, _, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, nil, nil)
	wantRV(t, err, ck.CKR_MECHANISM_INVALID)
	_, _, err = m.GenerateKeyPair(ro, gen, []Attribute{aULong(ck.CKA_MODULUS_BITS, 1024), aBool(ck.CKA_TOKEN, true)}, []Attribute{aBool(ck.CKA_TOKEN, true)})
	wantRV(t, err, ck.CKR_SESSION_READ_ONLY)
}

func TestObjectLifecycle(t *testing.T) {
	m, slot, sh := readyToken(t)
	data := []Attribute{
		aULong(ck.CKA_CLASS, ck.CKO_DATA), aBool(ck.CKA_TOKEN, true), aStr(ck.CKA_LABEL, "note"),
		aStr(ck.CKA_APPLICATION, "app"), aStr(ck.CKA_OBJECT_ID, "oid"), aStr(ck.CKA_VALUE, "payload"),
	}
	d, err := m.CreateObject(sh, data)
	must(t, err)
	if d == 0 || d == sh {
		t.Fatalf("object handle %d", d)
	}
	// Set, then read back; fixed attributes refuse.
	must(t, m.SetAttributeValue(sh, d, []Attribute{aStr(ck.CKA_LABEL, "renamed"), aStr(ck.CKA_VALUE, "new payload")}))
	if string(attrValue(t, m, sh, d, ck.CKA_LABEL)) != "renamed" {
		t.Fatal("label not set")
	}
	wantRV(t, m.SetAttributeValue(sh, d, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_CERTIFICATE)}), ck.CKR_ATTRIBUTE_READ_ONLY)
	wantRV(t, m.SetAttributeValue(sh, d, []Attribute{aBool(ck.CKA_TOKEN, false)}), ck.CKR_ATTRIBUTE_READ_ONLY)
	// All or nothing: a bad attribute leaves the good one unset.
	wantRV(t, m.SetAttributeValue(sh, d, []Attribute{aStr(ck.CKA_LABEL, "x"), aStr(ck.CKA_MODULUS, "y")}), ck.CKR_ATTRIBUTE_TYPE_INVALID)
	if string(attrValue(t, m, sh, d, ck.CKA_LABEL)) != "renamed" {
		t.Fatal("partial update")
	}
	size, err := m.GetObjectSize(sh, d)
	must(t, err)
	if size == 0 {
		t.Fatal("size 0")
	}
	// Copy to a session object with a new label.
	c, err := m.CopyObject(sh, d, []Attribute{aBool(ck.CKA_TOKEN, false), aStr(ck.CKA_LABEL, "copy")})
	must(t, err)
	if c == d || string(attrValue(t, m, sh, c, ck.CKA_VALUE)) != "new payload" {
		t.Fatal("copy")
	}
	// Uncopyable, unmodifiable, undestroyable objects.
	locked, err := m.CreateObject(sh, append(data[:2:2], aBool(ck.CKA_COPYABLE, false), aBool(ck.CKA_MODIFIABLE, false), aBool(ck.CKA_DESTROYABLE, false)))
	must(t, err)
	_, err = m.CopyObject(sh, locked, nil)
	wantRV(t, err, ck.CKR_ACTION_PROHIBITED)
	wantRV(t, m.SetAttributeValue(sh, locked, []Attribute{aStr(ck.CKA_LABEL, "x")}), ck.CKR_ACTION_PROHIBITED)
	wantRV(t, m.DestroyObject(sh, locked), ck.CKR_ACTION_PROHIBITED)
	// R/O session: token objects cannot change, session objects can.
	ro := openRO(t, m, slot)
	wantRV(t, m.DestroyObject(ro, d), ck.CKR_SESSION_READ_ONLY)
	wantRV(t, m.SetAttributeValue(ro, d, []Attribute{aStr(ck.CKA_LABEL, "x")}), ck.CKR_SESSION_READ_ONLY)
	so, err := m.CreateObject(ro, data[:1])
	must(t, err)
	// Destroy: the handle is gone and never reused.
	must(t, m.DestroyObject(sh, d))
	wantRV(t, m.DestroyObject(sh, d), ck.CKR_OBJECT_HANDLE_INVALID)
	_, err = m.GetAttributeValue(sh, d, []uint64{ck.CKA_LABEL})
	wantRV(t, err, ck.CKR_OBJECT_HANDLE_INVALID)
	n, err := m.CreateObject(sh, data)
	must(t, err)
	if n == d || n == c || n == locked || n == so {
		t.Fatal("handle reused")
	}
	// Session objects vanish with their session; token objects stay.
	must(t, m.CloseSession(ro))
	_, err = m.GetAttributeValue(sh, so, []uint64{ck.CKA_CLASS})
	wantRV(t, err, ck.CKR_OBJECT_HANDLE_INVALID)
	if _, err := m.GetAttributeValue(sh, c, []uint64{ck.CKA_CLASS}); err != nil {
		t.Fatal("copy owned by the still-open session vanished")
	}
	// Wrong session handle.
	_, err = m.CreateObject(sh+100000, data)
	wantRV(t, err, ck.CKR_SESSION_HANDLE_INVALID)
}

func TestPrivateVisibility(t *testing.T) {
	m, slot, sh := readyToken(t)
	pk, sk := genKey(t, m, sh, 1024, true)
	privData, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DATA), aBool(ck.CKA_TOKEN, true), aBool(ck.CKA_PRIVATE, true), aStr(ck.CKA_VALUE, "secret")})
	must(t, err)
	all := find(t, m, sh)
	if len(all) != 3 {
		t.Fatalf("logged in: %d objects", len(all))
	}
	must(t, m.Logout(sh))
	pub := find(t, m, sh)
	if len(pub) != 1 || pub[0] != pk {
		t.Fatalf("logged out: %v (want only %d)", pub, pk)
	}
	for _, h := range []uint64{sk, privData} {
		_, err := m.GetAttributeValue(sh, h, []uint64{ck.CKA_CLASS})
		wantRV(t, err, ck.CKR_OBJECT_HANDLE_INVALID)
	}
	// Creating a private object needs the user.
	_, err = m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DATA), aBool(ck.CKA_PRIVATE, true)})
	wantRV(t, err, ck.CKR_USER_NOT_LOGGED_IN)
	// The SO does not see private objects either.
	must(t, m.Login(sh, ck.CKU_SO, []byte(testSOPIN)))
	if got := find(t, m, sh); len(got) != 1 {
		t.Fatalf("SO sees %d objects", len(got))
	}
	must(t, m.Logout(sh))
	// After login the private objects are back under new handles: the old
	// ones stay invalid (PKCS#11 3.0 §5.6, C_Logout).
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	_, err = m.GetAttributeValue(sh, privData, []uint64{ck.CKA_VALUE})
	wantRV(t, err, ck.CKR_OBJECT_HANDLE_INVALID)
	again := find(t, m, sh, aULong(ck.CKA_CLASS, ck.CKO_DATA))
	if len(again) != 1 || string(attrValue(t, m, sh, again[0], ck.CKA_VALUE)) != "secret" {
		t.Fatal("private value after re-login")
	}
	// A second module (another process) sees the token objects and
	// notices changes through the generation counter.
	m2, err := LoadFromEnv()
	must(t, err)
	defer m2.Close()
	sh2 := openRO(t, m2, slot)
	if got := find(t, m2, sh2); len(got) != 1 {
		t.Fatalf("second module sees %d public objects", len(got))
	}
	must(t, m.DestroyObject(sh, pk))
	if got := find(t, m2, sh2); len(got) != 0 {
		t.Fatalf("second module still sees %d objects", len(got))
	}
	must(t, m2.Login(sh2, ck.CKU_USER, []byte(testUserPIN)))
	got := find(t, m2, sh2, aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY))
	if len(got) != 1 {
		t.Fatalf("second module finds %d private keys", len(got))
	}
	sig := sign(t, m2, sh2, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, got[0], []byte("m2"))
	if len(sig) != 128 {
		t.Fatal("sign in second module")
	}
}

func TestFindTemplates(t *testing.T) {
	m, _, sh := readyToken(t)
	mk := func(label, id string) uint64 {
		h, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DATA), aStr(ck.CKA_LABEL, label), aStr(ck.CKA_OBJECT_ID, id)})
		must(t, err)
		return h
	}
	a, b, c := mk("alpha", "1"), mk("beta", "1"), mk("alpha", "2")
	_, sk := genKey(t, m, sh, 1024, false)
	cases := []struct {
		name string
		tmpl []Attribute
		want []uint64
	}{
		{"label", []Attribute{aStr(ck.CKA_LABEL, "alpha"), aULong(ck.CKA_CLASS, ck.CKO_DATA)}, []uint64{a, c}},
		{"two attributes", []Attribute{aStr(ck.CKA_LABEL, "alpha"), aStr(ck.CKA_OBJECT_ID, "1")}, []uint64{a}},
		{"object id", []Attribute{aStr(ck.CKA_OBJECT_ID, "1")}, []uint64{a, b}},
		{"prefix is no match", []Attribute{aStr(ck.CKA_LABEL, "alph")}, nil},
		{"unknown type", []Attribute{aStr(0x7fff0001, "x")}, nil},
		{"sensitive value never matches", []Attribute{aStr(ck.CKA_PRIVATE_EXPONENT, "x")}, nil},
		{"private key class", []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY)}, []uint64{sk}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := find(t, m, sh, tc.tmpl...)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v want %v", got, tc.want)
				}
			}
		})
	}
	must(t, m.FindObjectsInit(sh, nil))
	wantRV(t, m.FindObjectsInit(sh, nil), ck.CKR_OPERATION_ACTIVE)
	must(t, m.SessionCancel(sh, ckfFindObjects))
	_, err := m.FindObjects(sh, 1)
	wantRV(t, err, ck.CKR_OPERATION_NOT_INITIALIZED)
	wantRV(t, m.FindObjectsFinal(sh), ck.CKR_OPERATION_NOT_INITIALIZED)
}
