package token

import (
	"bytes"
	"crypto"
	stdecdh "crypto/ecdh"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/engine/arith/ec"
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
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
		{crypto.SHA3_256, "96c05619d56c328ab95fe84b18264b08725b85e33fd34f08", "deadbeef",
			"75:40:46:9D:B0:6C:6F:53:9B:39:67:3C:4F:04:12:5B:FF:1C:D5:AD:D7:FE:26:63:A9:D7:5C:B5:D0:E6:0F:03:56:D4:C2:73:E3:C5:01:4D"},
		{crypto.SHA512, "00ff00ff11", "0102",
			"C0:01:04:3F:21:C6:F3:AB:F5:AD:B6:A7:D9:3C:65:B2:CD:1A:C7:35:4C:1A:9C:07:14:0E:12:1A:B0:51:19:3A:B6:D0:BD:EA:E6:25:69:91:29:18:B1:EA:A8:70:2F:EC:2B:38:AC:ED:92:5A:7E:53:92:1E:3E:29:C3:30:9B:6A:79:11:98:ED:93:20"},
	}
	for _, c := range cases {
		want := unhex(t, c.want)
		if got := mech.X963KDF(c.h, unhex(t, c.z), unhex(t, c.shared), len(want)); !bytes.Equal(got, want) {
			t.Errorf("%v: %x, want %x", c.h, got, want)
		}
	}
}

// ecdhPair makes two crypto/ecdh keys on std and their shared secret.
func ecdhPair(t *testing.T, std stdecdh.Curve) (mine, peer *stdecdh.PrivateKey, z []byte) {
	t.Helper()
	mine, err := std.GenerateKey(rand.Reader)
	must(t, err)
	peer, err = std.GenerateKey(rand.Reader)
	must(t, err)
	z, err = mine.ECDH(peer.PublicKey())
	must(t, err)
	return mine, peer, z
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
		_, err := mech.ParseECDHParams(&c.p)
		if (err == nil) != c.ok || (err != nil && !isRV(err, ck.CKR_MECHANISM_PARAM_INVALID)) {
			t.Errorf("%+v: %v", c.p, err)
		}
	}
	mc := mech.Registry[ck.CKM_ECDH1_DERIVE]
	if _, err := mech.BindParam(mc, &Mechanism{Type: ck.CKM_ECDH1_DERIVE}); !isRV(err, ck.CKR_MECHANISM_PARAM_INVALID) {
		t.Errorf("no parameter: %v", err)
	}
	if _, err := mech.BindParam(mc, &Mechanism{Type: ck.CKM_ECDH1_DERIVE, Param: pub}); !isRV(err, ck.CKR_MECHANISM_PARAM_INVALID) {
		t.Errorf("raw parameter: %v", err)
	}
}

// TestDerivedKeyLen checks the key lengths a derivation template asks for.
func TestDerivedKeyLen(t *testing.T) {
	tm := func(kt uint64, l int) attr.Map {
		a := attr.Map{ck.CKA_KEY_TYPE: ck.ULong(kt)}
		if l >= 0 {
			a[ck.CKA_VALUE_LEN] = ck.ULong(uint64(l))
		}
		return a
	}
	for _, c := range []struct {
		tmpl    attr.Map
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
		got, err := mech.DerivedKeyLen(c.tmpl, c.natural)
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
func ecdhDeriveValue(t *testing.T, m *Module, sh, key, mc uint64, p ECDH1DeriveParams, extra ...Attribute) ([]byte, error) {
	t.Helper()
	tmpl := append([]Attribute{
		aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_GENERIC_SECRET),
		aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true),
	}, extra...)
	h, err := m.DeriveKey(sh, &Mechanism{Type: mc, ECDH: &p}, key, tmpl)
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

// FuzzECDHDeriveParams feeds CK_ECDH1_DERIVE_PARAMS and templates to
// C_DeriveKey with a P-256 key: every answer carries a CK_RV, and a
// derivation that succeeds with CKD_NULL gives d·Q's x-coordinate.
func FuzzECDHDeriveParams(f *testing.F) {
	c, _ := ec.CurveByName("P-256")
	px, py, _ := c.ScalarBaseMult([]byte{7})
	f.Add(uint64(ck.CKD_NULL), []byte{}, c.Marshal(px, py), uint64(0), uint64(ck.CKK_GENERIC_SECRET))
	f.Add(uint64(ck.CKD_NULL), []byte{}, c.MarshalECPoint(px, py), uint64(16), uint64(ck.CKK_AES))
	f.Add(uint64(ck.CKD_SHA256_KDF), []byte("shared"), c.MarshalCompressed(px, py), uint64(48), uint64(ck.CKK_GENERIC_SECRET))
	f.Add(uint64(ck.CKD_SHA1_KDF), []byte{}, []byte{4, 0x41, 4, 1, 2}, uint64(20), uint64(ck.CKK_GENERIC_SECRET))
	f.Add(uint64(ck.CKD_NULL), []byte{}, []byte{0}, uint64(0), uint64(ck.CKK_RSA))
	m, sh := fuzzToken(f)
	d := []byte{3}
	key, err := m.CreateObject(sh, ecPrivateTemplate(c, d, aBool(ck.CKA_DERIVE, true)))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, kdf uint64, shared, public []byte, valueLen, keyType uint64) {
		tmpl := []Attribute{aULong(ck.CKA_KEY_TYPE, keyType), aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true)}
		if valueLen != 0 {
			tmpl = append(tmpl, aULong(ck.CKA_VALUE_LEN, valueLen))
		}
		p := &ECDH1DeriveParams{KDF: kdf, SharedData: shared, PublicData: public}
		h, err := m.DeriveKey(sh, &Mechanism{Type: ck.CKM_ECDH1_DERIVE, ECDH: p}, key, tmpl)
		checkRV(t, "DeriveKey", err)
		if err != nil {
			return
		}
		defer m.DestroyObject(sh, h)
		res, err := m.GetAttributeValue(sh, h, []uint64{ck.CKA_VALUE})
		if err != nil || res[0].Err != 0 {
			t.Fatalf("value of a derived key: %+v, %v", res, err)
		}
		if kdf == ck.CKD_NULL {
			qx, qy, err := c.UnmarshalECPoint(public)
			if err != nil {
				t.Fatalf("derived from an invalid point %x", public)
			}
			x, _, _ := c.ScalarMult(d, qx, qy)
			if !bytes.HasPrefix(x, res[0].Value) {
				t.Fatalf("derived %x, want a prefix of %x", res[0].Value, x)
			}
		}
	})
}

// TestECDHDerive derives through C_DeriveKey with every KDF, both point
// encodings, AES and generic templates, and checks the refusals.
func TestECDHDerive(t *testing.T) {
	m, _, sh := readyToken(t)
	c := curveOf(t, "P-384")
	mine, peer, z := ecdhPair(t, stdecdh.P384())
	key := importECDHKey(t, m, sh, c, mine.Bytes())
	raw := peer.PublicKey().Bytes()
	qx, qy, err := c.Unmarshal(raw)
	must(t, err)
	der := c.MarshalECPoint(qx, qy)
	for _, kdf := range []struct {
		ckd uint64
		h   crypto.Hash
	}{{ck.CKD_SHA1_KDF, crypto.SHA1}, {ck.CKD_SHA224_KDF, crypto.SHA224}, {ck.CKD_SHA256_KDF, crypto.SHA256},
		{ck.CKD_SHA384_KDF, crypto.SHA384}, {ck.CKD_SHA512_KDF, crypto.SHA512},
		{ck.CKD_SHA3_224_KDF, crypto.SHA3_224}, {ck.CKD_SHA3_256_KDF, crypto.SHA3_256},
		{ck.CKD_SHA3_384_KDF, crypto.SHA3_384}, {ck.CKD_SHA3_512_KDF, crypto.SHA3_512}} {
		for _, pub := range [][]byte{raw, der} {
			got, err := ecdhDeriveValue(t, m, sh, key, ck.CKM_ECDH1_DERIVE,
				ECDH1DeriveParams{KDF: kdf.ckd, SharedData: []byte("shared info"), PublicData: pub}, aULong(ck.CKA_VALUE_LEN, 80))
			must(t, err)
			if want := mech.X963KDF(kdf.h, z, []byte("shared info"), 80); !bytes.Equal(got, want) {
				t.Fatalf("%v: %x, want %x", kdf.h, got, want)
			}
		}
	}
	// CKD_NULL: the x-coordinate, or its leading bytes.
	got, err := ecdhDeriveValue(t, m, sh, key, ck.CKM_ECDH1_COFACTOR_DERIVE, ECDH1DeriveParams{KDF: ck.CKD_NULL, PublicData: der})
	must(t, err)
	if !bytes.Equal(got, z) {
		t.Fatalf("CKD_NULL: %x, want %x", got, z)
	}
	got, err = ecdhDeriveValue(t, m, sh, key, ck.CKM_ECDH1_DERIVE, ECDH1DeriveParams{KDF: ck.CKD_NULL, PublicData: raw}, aULong(ck.CKA_VALUE_LEN, 20))
	must(t, err)
	if !bytes.Equal(got, z[:20]) {
		t.Fatalf("CKD_NULL, 20 bytes: %x, want %x", got, z[:20])
	}
	// An AES key: its length from the template, or the longest that fits.
	for _, l := range []int{0, 16, 24} {
		tmpl := []Attribute{aULong(ck.CKA_KEY_TYPE, ck.CKK_AES), aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true)}
		want := 32
		if l != 0 {
			tmpl, want = append(tmpl, aULong(ck.CKA_VALUE_LEN, uint64(l))), l
		}
		h, err := m.DeriveKey(sh, &Mechanism{Type: ck.CKM_ECDH1_DERIVE, ECDH: &ECDH1DeriveParams{KDF: ck.CKD_NULL, PublicData: raw}}, key, tmpl)
		must(t, err)
		if v := attrValue(t, m, sh, h, ck.CKA_VALUE); !bytes.Equal(v, z[:want]) {
			t.Fatalf("AES key of %d: %x", l, v)
		}
		if local := attrValue(t, m, sh, h, ck.CKA_LOCAL); local[0] != 0 {
			t.Fatal("a derived key is CKA_LOCAL")
		}
	}
	p := ECDH1DeriveParams{KDF: ck.CKD_NULL, PublicData: raw}
	_, err = ecdhDeriveValue(t, m, sh, key, ck.CKM_ECDH1_DERIVE, p, aULong(ck.CKA_VALUE_LEN, 49))
	wantRV(t, err, ck.CKR_TEMPLATE_INCONSISTENT)
	_, err = ecdhDeriveValue(t, m, sh, key, ck.CKM_ECDH1_DERIVE, ECDH1DeriveParams{KDF: ck.CKD_SHA256_KDF, PublicData: raw})
	wantRV(t, err, ck.CKR_TEMPLATE_INCOMPLETE)
	// Points of another curve, off the curve, at infinity.
	p256 := curveOf(t, "P-256")
	gx, gy, _ := p256.ScalarBaseMult([]byte{1})
	bad := append([]byte(nil), raw...)
	bad[len(bad)-1] ^= 1
	for _, pub := range [][]byte{p256.Marshal(gx, gy), bad, {0}, {4}, der[:len(der)-1]} {
		_, err := ecdhDeriveValue(t, m, sh, key, ck.CKM_ECDH1_DERIVE, ECDH1DeriveParams{KDF: ck.CKD_NULL, PublicData: pub})
		wantRV(t, err, ck.CKR_MECHANISM_PARAM_INVALID)
	}
	// The base key must allow derivation and be a private EC key.
	noDerive, err := m.CreateObject(sh, ecPrivateTemplate(c, mine.Bytes()))
	must(t, err)
	_, err = ecdhDeriveValue(t, m, sh, noDerive, ck.CKM_ECDH1_DERIVE, p)
	wantRV(t, err, ck.CKR_KEY_FUNCTION_NOT_PERMITTED)
	pubKey := importECPublic(t, m, sh, c, qx, qy)
	_, err = ecdhDeriveValue(t, m, sh, pubKey, ck.CKM_ECDH1_DERIVE, p)
	wantRV(t, err, ck.CKR_KEY_TYPE_INCONSISTENT)
	_, err = m.DeriveKey(sh, &Mechanism{Type: ck.CKM_ECDH1_DERIVE, ECDH: &p}, key,
		[]Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY)})
	wantRV(t, err, ck.CKR_TEMPLATE_INCONSISTENT)
	info, err := m.MechanismInfo(m.SlotList(true)[0], ck.CKM_ECDH1_DERIVE)
	must(t, err)
	if info.Flags&ck.CKF_DERIVE == 0 || info.MinKeySize > 256 || info.MaxKeySize != 521 {
		t.Fatalf("CKM_ECDH1_DERIVE info %+v", info)
	}
}

// TestECDHEngines derives on the chip simulators: a correct engine gives
// the software result; a faulty one is caught (CKR_DEVICE_ERROR under
// fallback "fail", the software result under "soft") and no wrong secret
// is released.
func TestECDHEngines(t *testing.T) {
	for _, c := range []struct {
		engine, fallback string
		code             ck.Error
		faults           bool
	}{
		{"chip:pukcc", "fail", 0, false},
		{"chip:pukcc,fault=bitflip", "fail", ck.CKR_DEVICE_ERROR, true},
		{"chip:pukcc,fault=bitflip", "soft", 0, true},
	} {
		t.Run(c.engine+"/"+c.fallback, func(t *testing.T) {
			m, slot, sh, _ := readyEngineToken(t, c.engine, c.fallback)
			a, b, want := ecdhPair(t, stdecdh.P256())
			key := importECDHKey(t, m, sh, curveOf(t, "P-256"), a.Bytes())
			got, err := ecdhDeriveValue(t, m, sh, key, ck.CKM_ECDH1_DERIVE, ECDH1DeriveParams{KDF: ck.CKD_NULL, PublicData: b.PublicKey().Bytes()})
			wantRV(t, err, c.code)
			if err == nil && !bytes.Equal(got, want) {
				t.Fatalf("derived %x, want %x", got, want)
			}
			st, err := m.EngineStatus(slot)
			must(t, err)
			if c.faults != (st.Faults > 0) {
				t.Fatalf("engine status %+v", st)
			}
		})
	}
}

// TestECDHDeriveTemplate: the base key's CKA_DERIVE_TEMPLATE is added to
// the derivation template, and a template that contradicts it is refused.
func TestECDHDeriveTemplate(t *testing.T) {
	m, _, sh := readyToken(t)
	c := curveOf(t, "P-256")
	mine, peer, z := ecdhPair(t, stdecdh.P256())
	dt := EncodeAttributes([]Attribute{aULong(ck.CKA_KEY_TYPE, ck.CKK_AES), aULong(ck.CKA_VALUE_LEN, 16), aBool(ck.CKA_EXTRACTABLE, true)})
	key, err := m.CreateObject(sh, ecPrivateTemplate(c, mine.Bytes(), aBool(ck.CKA_DERIVE, true), aBytes(ck.CKA_DERIVE_TEMPLATE, dt)))
	must(t, err)
	p := &ECDH1DeriveParams{KDF: ck.CKD_NULL, PublicData: peer.PublicKey().Bytes()}
	h, err := m.DeriveKey(sh, &Mechanism{Type: ck.CKM_ECDH1_DERIVE, ECDH: p}, key, []Attribute{aBool(ck.CKA_SENSITIVE, false)})
	must(t, err)
	if kt := attrValue(t, m, sh, h, ck.CKA_KEY_TYPE); !bytes.Equal(kt, ck.ULong(ck.CKK_AES)) {
		t.Fatalf("key type %x", kt)
	}
	if v := attrValue(t, m, sh, h, ck.CKA_VALUE); !bytes.Equal(v, z[:16]) {
		t.Fatalf("value %x, want %x", v, z[:16])
	}
	_, err = m.DeriveKey(sh, &Mechanism{Type: ck.CKM_ECDH1_DERIVE, ECDH: p}, key, []Attribute{aULong(ck.CKA_KEY_TYPE, ck.CKK_GENERIC_SECRET)})
	wantRV(t, err, ck.CKR_TEMPLATE_INCONSISTENT)
}
