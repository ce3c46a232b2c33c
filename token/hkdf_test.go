package token

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha3"
	"hash"
	"io"
	"testing"

	"golang.org/x/crypto/hkdf"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// hkdfKey derives with CKM_HKDF_DERIVE from base and returns the new
// key's value (the template asks for an extractable, not sensitive key).
func hkdfKey(t *testing.T, m *Module, sh, base uint64, p *HKDFParams, kt uint64, n int) ([]byte, error) {
	t.Helper()
	tmpl := []Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_KEY_TYPE, kt),
		aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true), aBool(ck.CKA_DERIVE, true)}
	if n > 0 {
		tmpl = append(tmpl, aULong(ck.CKA_VALUE_LEN, uint64(n)))
	}
	h, err := m.DeriveKey(sh, &Mechanism{Type: ck.CKM_HKDF_DERIVE, HKDF: p}, base, tmpl)
	if err != nil {
		return nil, err
	}
	return attrValue(t, m, sh, h, ck.CKA_VALUE), nil
}

// hkdfSecret is a secret key of type kt and value v with CKA_DERIVE, not
// sensitive and extractable (the value is known: keys derived from it may
// be read).
func hkdfSecret(t *testing.T, m *Module, sh, kt uint64, v []byte) uint64 {
	t.Helper()
	h, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_KEY_TYPE, kt),
		aBytes(ck.CKA_VALUE, v), aBool(ck.CKA_DERIVE, true), aBool(ck.CKA_PRIVATE, false), aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true)})
	must(t, err)
	return h
}

// TestHKDFKnownAnswers: RFC 5869 appendix A test cases 1 (SHA-256), 3
// (SHA-256, no salt, no info) and 4 (SHA-1) through CKM_HKDF_DERIVE:
// Extract and Expand together (the salt as data, as a key, and absent),
// Extract alone (the PRK), and Expand alone from the PRK as a CKK_HKDF key.
func TestHKDFKnownAnswers(t *testing.T) {
	m, _, sh := readyToken(t)
	salt := mustHex("000102030405060708090a0b0c")
	info := mustHex("f0f1f2f3f4f5f6f7f8f9")
	cases := []struct {
		name      string
		prf       uint64
		ikm, salt []byte
		info      []byte
		prk, okm  string
	}{
		{"case 1", ck.CKM_SHA256, bytes.Repeat([]byte{0x0b}, 22), salt, info,
			"077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
			"3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"},
		{"case 3", ck.CKM_SHA256, bytes.Repeat([]byte{0x0b}, 22), nil, nil,
			"19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
			"8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"},
		{"case 4", ck.CKM_SHA_1, bytes.Repeat([]byte{0x0b}, 11), salt, info,
			"9b6c18c432a7bf8f0e71c8eb88f4b30baa2ba243",
			"085a01ea1b10f36933068b56efa5ad81a4f14b822f5b091568a9cdd4f155fda2c22e422478d305f3f896"},
	}
	for _, c := range cases {
		prk, okm := mustHex(c.prk), mustHex(c.okm)
		for _, kt := range []uint64{ck.CKK_GENERIC_SECRET, ck.CKK_HKDF} {
			base := hkdfSecret(t, m, sh, kt, c.ikm)
			saltParams := []HKDFParams{{SaltType: ck.CKF_HKDF_SALT_DATA, Salt: c.salt}}
			if c.salt == nil {
				saltParams = []HKDFParams{{SaltType: ck.CKF_HKDF_SALT_NULL}}
			} else {
				saltKey := hkdfSecret(t, m, sh, ck.CKK_HKDF, c.salt)
				saltParams = append(saltParams, HKDFParams{SaltType: ck.CKF_HKDF_SALT_KEY, SaltKey: saltKey})
			}
			for _, sp := range saltParams {
				p := sp
				p.Extract, p.Expand, p.PRF, p.Info = true, true, c.prf, c.info
				got, err := hkdfKey(t, m, sh, base, &p, ck.CKK_GENERIC_SECRET, len(okm))
				if err != nil || !bytes.Equal(got, okm) {
					t.Fatalf("%s, salt type %d: OKM %x, %v; want %x", c.name, p.SaltType, got, err, okm)
				}
				p.Expand = false
				got, err = hkdfKey(t, m, sh, base, &p, ck.CKK_HKDF, 0)
				if err != nil || !bytes.Equal(got, prk) {
					t.Fatalf("%s, salt type %d: PRK %x, %v; want %x", c.name, p.SaltType, got, err, prk)
				}
			}
		}
		prkKey := hkdfSecret(t, m, sh, ck.CKK_HKDF, prk)
		got, err := hkdfKey(t, m, sh, prkKey, &HKDFParams{Expand: true, PRF: c.prf, Info: c.info}, ck.CKK_GENERIC_SECRET, len(okm))
		if err != nil || !bytes.Equal(got, okm) {
			t.Fatalf("%s, Expand alone: %x, %v; want %x", c.name, got, err, okm)
		}
	}
}

// TestHKDFCrossCheck: random inputs, every PRF hash, lengths 1 to 200,
// and an AES key, against golang.org/x/crypto/hkdf.
func TestHKDFCrossCheck(t *testing.T) {
	m, _, sh := readyToken(t)
	ikm, salt, info := make([]byte, 40), make([]byte, 17), make([]byte, 30)
	rand.Read(ikm)
	rand.Read(salt)
	rand.Read(info)
	base := hkdfSecret(t, m, sh, ck.CKK_GENERIC_SECRET, ikm)
	for _, d := range mech.DigestMechs {
		h, ok := mech.HKDFHash(d.Type)
		if !ok {
			continue
		}
		for _, n := range []int{1, h.Size(), 200} {
			want := make([]byte, n)
			_, err := io.ReadFull(hkdf.New(func() hash.Hash { return h.New() }, ikm, salt, info), want)
			must(t, err)
			p := &HKDFParams{Extract: true, Expand: true, PRF: d.Type, SaltType: ck.CKF_HKDF_SALT_DATA, Salt: salt, Info: info}
			got, err := hkdfKey(t, m, sh, base, p, ck.CKK_GENERIC_SECRET, n)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s, %d bytes: %x, %v; x/crypto/hkdf %x", ck.Name("CKM_", d.Type), n, got, err, want)
			}
		}
	}
	want := make([]byte, 32)
	_, err := io.ReadFull(hkdf.New(func() hash.Hash { return sha3.New256() }, ikm, nil, nil), want)
	must(t, err)
	got, err := hkdfKey(t, m, sh, base, &HKDFParams{Extract: true, Expand: true, PRF: ck.CKM_SHA3_256, SaltType: ck.CKF_HKDF_SALT_NULL},
		ck.CKK_AES, 0)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("AES key from HKDF-SHA3-256: %x, %v; want %x", got, err, want)
	}
}

// TestHKDFErrors: the parameter, the base and salt keys and the template.
func TestHKDFErrors(t *testing.T) {
	m, _, sh := readyToken(t)
	ikm := make([]byte, 32)
	rand.Read(ikm)
	base := hkdfSecret(t, m, sh, ck.CKK_GENERIC_SECRET, ikm)
	ok := HKDFParams{Extract: true, Expand: true, PRF: ck.CKM_SHA256, SaltType: ck.CKF_HKDF_SALT_NULL}
	with := func(f func(p *HKDFParams)) *HKDFParams { p := ok; f(&p); return &p }
	derive := func(p *HKDFParams, kt uint64, n int) error { _, err := hkdfKey(t, m, sh, base, p, kt, n); return err }
	must(t, derive(&ok, ck.CKK_GENERIC_SECRET, 32))
	for name, p := range map[string]*HKDFParams{
		"neither":        with(func(p *HKDFParams) { p.Extract, p.Expand = false, false }),
		"MD5":            with(func(p *HKDFParams) { p.PRF = ck.CKM_MD5 }),
		"not a hash":     with(func(p *HKDFParams) { p.PRF = ck.CKM_AES_CBC }),
		"salt type 0":    with(func(p *HKDFParams) { p.SaltType = 0 }),
		"salt type 3":    with(func(p *HKDFParams) { p.SaltType = 3 }),
		"NULL with salt": with(func(p *HKDFParams) { p.Salt = []byte{1} }),
		"DATA empty":     with(func(p *HKDFParams) { p.SaltType = ck.CKF_HKDF_SALT_DATA }),
		"no HKDF params": nil,
	} {
		if err := derive(p, ck.CKK_GENERIC_SECRET, 32); !isRV(err, ck.CKR_MECHANISM_PARAM_INVALID) {
			t.Errorf("%s: %v, want CKR_MECHANISM_PARAM_INVALID", name, err)
		}
	}
	_, err := m.DeriveKey(sh, &Mechanism{Type: ck.CKM_HKDF_DERIVE, Param: []byte{1, 2}}, base, nil)
	wantRV(t, err, ck.CKR_MECHANISM_PARAM_INVALID)
	// Expand needs a length; Extract alone gives at most HashLen bytes.
	wantRV(t, derive(&ok, ck.CKK_GENERIC_SECRET, 0), ck.CKR_TEMPLATE_INCOMPLETE)
	wantRV(t, derive(with(func(p *HKDFParams) { p.Expand = false }), ck.CKK_GENERIC_SECRET, 33), ck.CKR_TEMPLATE_INCONSISTENT)
	// Salt keys: a bad handle, an AES key, one without CKA_DERIVE.
	aesKey := hkdfSecret(t, m, sh, ck.CKK_AES, ikm)
	noDerive := mustSecret(t, m, sh, ck.CKK_HKDF, ikm)
	saltKey := func(h uint64) *HKDFParams {
		return with(func(p *HKDFParams) { p.SaltType, p.SaltKey = ck.CKF_HKDF_SALT_KEY, h })
	}
	wantRV(t, derive(saltKey(0xdead), ck.CKK_GENERIC_SECRET, 32), ck.CKR_KEY_HANDLE_INVALID)
	wantRV(t, derive(saltKey(aesKey), ck.CKK_GENERIC_SECRET, 32), ck.CKR_KEY_TYPE_INCONSISTENT)
	if v := attrValue(t, m, sh, noDerive, ck.CKA_DERIVE); len(v) != 1 || v[0] != 0 {
		t.Fatal("a secret key derives by default")
	}
	wantRV(t, derive(saltKey(noDerive), ck.CKK_GENERIC_SECRET, 32), ck.CKR_KEY_FUNCTION_NOT_PERMITTED)
	// Base keys: an AES key is not an HKDF input.
	_, err = hkdfKey(t, m, sh, aesKey, &ok, ck.CKK_GENERIC_SECRET, 32)
	wantRV(t, err, ck.CKR_KEY_TYPE_INCONSISTENT)
}

// TestHKDFKeyGen: CKM_HKDF_KEY_GEN makes a CKK_HKDF key of CKA_VALUE_LEN
// bytes that derives; it makes no other key type.
func TestHKDFKeyGen(t *testing.T) {
	m, _, sh := readyToken(t)
	tmpl := []Attribute{aULong(ck.CKA_VALUE_LEN, 32), aBool(ck.CKA_DERIVE, true), aBool(ck.CKA_SENSITIVE, false),
		aBool(ck.CKA_EXTRACTABLE, true)}
	h, err := m.GenerateKey(sh, &Mechanism{Type: ck.CKM_HKDF_KEY_GEN}, tmpl)
	must(t, err)
	if kt, _ := ck.ParseULong(attrValue(t, m, sh, h, ck.CKA_KEY_TYPE)); kt != ck.CKK_HKDF {
		t.Fatalf("key type %s", ck.Name("CKK_", kt))
	}
	v := attrValue(t, m, sh, h, ck.CKA_VALUE)
	if len(v) != 32 || bytes.Equal(v, make([]byte, 32)) {
		t.Fatalf("value %x", v)
	}
	want := make([]byte, 48)
	_, err = io.ReadFull(hkdf.New(sha256.New, v, nil, []byte("tls13 ")), want)
	must(t, err)
	got, err := hkdfKey(t, m, sh, h, &HKDFParams{Extract: true, Expand: true, PRF: ck.CKM_SHA256,
		SaltType: ck.CKF_HKDF_SALT_NULL, Info: []byte("tls13 ")}, ck.CKK_GENERIC_SECRET, 48)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("derived %x, %v; want %x", got, err, want)
	}
	_, err = m.GenerateKey(sh, &Mechanism{Type: ck.CKM_HKDF_KEY_GEN}, append(tmpl, aULong(ck.CKA_KEY_TYPE, ck.CKK_GENERIC_SECRET)))
	wantRV(t, err, ck.CKR_TEMPLATE_INCONSISTENT)
}

// TestHKDFData: CKM_HKDF_DATA makes a CKO_DATA object whose CKA_VALUE is
// RFC 5869 case 1's OKM (or PRK, Extract alone), private unless the
// template says otherwise, without CKA_VALUE_LEN; a key template, or
// Expand without a length, is refused.
func TestHKDFData(t *testing.T) {
	m, _, sh := readyToken(t)
	base := hkdfSecret(t, m, sh, ck.CKK_GENERIC_SECRET, bytes.Repeat([]byte{0x0b}, 22))
	p := &HKDFParams{Extract: true, Expand: true, PRF: ck.CKM_SHA256, SaltType: ck.CKF_HKDF_SALT_DATA,
		Salt: mustHex("000102030405060708090a0b0c"), Info: mustHex("f0f1f2f3f4f5f6f7f8f9")}
	mc := &Mechanism{Type: ck.CKM_HKDF_DATA, HKDF: p}
	h, err := m.DeriveKey(sh, mc, base, []Attribute{aULong(ck.CKA_VALUE_LEN, 42), aBytes(ck.CKA_LABEL, []byte("okm"))})
	must(t, err)
	if got := attrValue(t, m, sh, h, ck.CKA_VALUE); !bytes.Equal(got, mustHex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")) {
		t.Fatalf("OKM data object: %x", got)
	}
	if c, _ := ck.ParseULong(attrValue(t, m, sh, h, ck.CKA_CLASS)); c != ck.CKO_DATA {
		t.Fatalf("class %s", ck.Name("CKO_", c))
	}
	if v := attrValue(t, m, sh, h, ck.CKA_PRIVATE); len(v) != 1 || v[0] != 1 {
		t.Fatalf("CKA_PRIVATE %x, want true by default", v)
	}
	if res, _ := m.GetAttributeValue(sh, h, []uint64{ck.CKA_VALUE_LEN}); len(res) != 1 || res[0].Err != uint64(ck.CKR_ATTRIBUTE_TYPE_INVALID) {
		t.Fatalf("CKA_VALUE_LEN of the data object: %+v", res)
	}
	prk := &HKDFParams{Extract: true, PRF: ck.CKM_SHA256, SaltType: ck.CKF_HKDF_SALT_DATA, Salt: p.Salt}
	h, err = m.DeriveKey(sh, &Mechanism{Type: ck.CKM_HKDF_DATA, HKDF: prk}, base, []Attribute{aBool(ck.CKA_PRIVATE, false)})
	must(t, err)
	if got := attrValue(t, m, sh, h, ck.CKA_VALUE); !bytes.Equal(got, mustHex("077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5")) {
		t.Fatalf("PRK data object: %x", got)
	}
	_, err = m.DeriveKey(sh, mc, base, nil)
	wantRV(t, err, ck.CKR_TEMPLATE_INCOMPLETE)
	_, err = m.DeriveKey(sh, mc, base, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_VALUE_LEN, 16)})
	wantRV(t, err, ck.CKR_TEMPLATE_INCONSISTENT)
}
