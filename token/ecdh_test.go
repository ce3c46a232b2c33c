package token

import (
	"bytes"
	"crypto"
	stdecdh "crypto/ecdh"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/engine/ec"
	"github.com/modexp-token/modexp-token/engine/soft"
	"github.com/modexp-token/modexp-token/token/ck"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, ":", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestX963KDF checks the KDF against `openssl kdf ... X963KDF` (OpenSSL
// 3.0.19), the SHA-1 case being the ANSI X9.63 CAVS example.
func TestX963KDF(t *testing.T) {
	cases := []struct {
		h               crypto.Hash
		z, shared, want string
	}{
		{crypto.SHA1, "1c7d7b5f0597b03d06a018466ed1a93e30ed4b04dc64ccdd", "", "bf71dffd8f4d99223936beb46fee8ccc60439b7e"},
		{crypto.SHA256, "96c05619d56c328ab95fe84b18264b08725b85e33fd34f08", "deadbeef",
			"4A:91:EA:9C:29:7B:69:FF:42:85:83:69:D0:1A:40:48:02:54:99:8A:37:A3:EF:76:08:DA:CD:D6:D3:48:59:E8:F1:25:18:2C:11:1C:E7:43"},
		{crypto.SHA512, "00ff00ff11", "0102",
			"C0:01:04:3F:21:C6:F3:AB:F5:AD:B6:A7:D9:3C:65:B2:CD:1A:C7:35:4C:1A:9C:07:14:0E:12:1A:B0:51:19:3A:B6:D0:BD:EA:E6:25:69:91:29:18:B1:EA:A8:70:2F:EC:2B:38:AC:ED:92:5A:7E:53:92:1E:3E:29:C3:30:9B:6A:79:11:98:ED:93:20"},
	}
	for _, c := range cases {
		want := unhex(t, c.want)
		if got := x963KDF(c.h, unhex(t, c.z), unhex(t, c.shared), len(want)); !bytes.Equal(got, want) {
			t.Errorf("%v: %x, want %x", c.h, got, want)
		}
	}
}

// TestECDHMultCrossCheck compares the engine path's x-coordinate with Go's
// crypto/ecdh on random key pairs.
func TestECDHMultCrossCheck(t *testing.T) {
	eng := soft.New()
	for _, std := range []stdecdh.Curve{stdecdh.P256(), stdecdh.P384(), stdecdh.P521()} {
		name := map[stdecdh.Curve]string{stdecdh.P256(): "P-256", stdecdh.P384(): "P-384", stdecdh.P521(): "P-521"}[std]
		c := curveOf(t, name)
		for range 8 {
			a, err := std.GenerateKey(rand.Reader)
			must(t, err)
			b, err := std.GenerateKey(rand.Reader)
			must(t, err)
			want, err := a.ECDH(b.PublicKey())
			must(t, err)
			qx, qy, err := c.Unmarshal(b.PublicKey().Bytes())
			must(t, err)
			for _, check := range []bool{false, true} {
				got, _, err := ecdhMult(c, eng, check, a.Bytes(), qx, qy)
				must(t, err)
				if !bytes.Equal(got, want) {
					t.Fatalf("%s: %x, want %x", name, got, want)
				}
			}
		}
	}
}

// TestECDHParams checks the decoding of CK_ECDH1_DERIVE_PARAMS.
func TestECDHParams(t *testing.T) {
	pub := []byte{4, 1, 2}
	for _, c := range []struct {
		p  ECDH1DeriveParams
		ok bool
	}{
		{ECDH1DeriveParams{KDF: ck.CKD_NULL, PublicData: pub}, true},
		{ECDH1DeriveParams{KDF: ck.CKD_SHA256_KDF, PublicData: pub, SharedData: []byte("info")}, true},
		{ECDH1DeriveParams{KDF: ck.CKD_SHA1_KDF, PublicData: pub}, true},
		{ECDH1DeriveParams{KDF: ck.CKD_NULL, PublicData: pub, SharedData: []byte("x")}, false},
		{ECDH1DeriveParams{KDF: ck.CKD_NULL}, false},
		{ECDH1DeriveParams{KDF: ck.CKD_SHA1_KDF_ASN1, PublicData: pub}, false},
		{ECDH1DeriveParams{KDF: 0x7777, PublicData: pub}, false},
	} {
		_, err := parseECDHParams(&c.p)
		if (err == nil) != c.ok || (err != nil && !isRV(err, ck.CKR_MECHANISM_PARAM_INVALID)) {
			t.Errorf("%+v: %v", c.p, err)
		}
	}
	mech := ecdhMechanism(ck.CKM_ECDH1_DERIVE)
	if _, err := mech.decode(&Mechanism{Type: ck.CKM_ECDH1_DERIVE}); !isRV(err, ck.CKR_MECHANISM_PARAM_INVALID) {
		t.Errorf("no parameter: %v", err)
	}
	if _, err := mech.decode(&Mechanism{Type: ck.CKM_ECDH1_DERIVE, Param: pub}); !isRV(err, ck.CKR_MECHANISM_PARAM_INVALID) {
		t.Errorf("raw parameter: %v", err)
	}
}

// TestDerivedKeyLen checks the key lengths a derivation template asks for.
func TestDerivedKeyLen(t *testing.T) {
	tm := func(kt uint64, l int) attrMap {
		a := attrMap{ck.CKA_KEY_TYPE: ck.ULong(kt)}
		if l >= 0 {
			a[ck.CKA_VALUE_LEN] = ck.ULong(uint64(l))
		}
		return a
	}
	for _, c := range []struct {
		tmpl    attrMap
		natural int
		want    int
		code    ck.Error
	}{
		{tm(ck.CKK_GENERIC_SECRET, -1), 32, 32, 0},
		{tm(ck.CKK_GENERIC_SECRET, 20), 32, 20, 0},
		{tm(ck.CKK_GENERIC_SECRET, 33), 32, 0, ck.CKR_TEMPLATE_INCONSISTENT},
		{tm(ck.CKK_GENERIC_SECRET, -1), 0, 0, ck.CKR_TEMPLATE_INCOMPLETE},
		{tm(ck.CKK_GENERIC_SECRET, 100), 0, 100, 0},
		{tm(ck.CKK_GENERIC_SECRET, 0), 0, 0, ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{tm(ck.CKK_AES, -1), 32, 32, 0},
		{tm(ck.CKK_AES, -1), 66, 32, 0},
		{tm(ck.CKK_AES, -1), 28, 24, 0},
		{tm(ck.CKK_AES, -1), 0, 32, 0},
		{tm(ck.CKK_AES, 16), 66, 16, 0},
		{tm(ck.CKK_AES, 20), 66, 0, ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{tm(ck.CKK_RSA, -1), 32, 0, ck.CKR_TEMPLATE_INCONSISTENT},
	} {
		got, err := derivedKeyLen(c.tmpl, c.natural)
		if !isRV(err, c.code) || got != c.want {
			t.Errorf("%v natural %d: %d, %v; want %d, %v", c.tmpl, c.natural, got, err, c.want, c.code)
		}
	}
}

// importECDHKey imports private scalar d on c as a session key that may
// derive.
func importECDHKey(t *testing.T, m *Module, sh uint64, c *ec.Curve, d []byte) uint64 {
	t.Helper()
	h, err := m.CreateObject(sh, ecPrivateTemplate(c, d, aBool(ck.CKA_DERIVE, true)))
	if err != nil {
		t.Fatalf("import %s key: %v", c.Name(), err)
	}
	return h
}

// ecdhDeriveValue derives an extractable generic secret (extra appended to
// the template) and returns its value.
func ecdhDeriveValue(t *testing.T, m *Module, sh, key, mech uint64, p ECDH1DeriveParams, extra ...Attribute) ([]byte, error) {
	t.Helper()
	tmpl := append([]Attribute{
		aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_GENERIC_SECRET),
		aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true),
	}, extra...)
	h, err := m.DeriveKey(sh, &Mechanism{Type: mech, ECDH: &p}, key, tmpl)
	if err != nil {
		return nil, err
	}
	res, err := m.GetAttributeValue(sh, h, []uint64{ck.CKA_VALUE})
	if err != nil {
		return nil, err
	}
	if res[0].Err != 0 {
		t.Fatalf("CKA_VALUE of the derived key: %v", ck.Error(res[0].Err))
	}
	must(t, m.DestroyObject(sh, h))
	return res[0].Value, nil
}
