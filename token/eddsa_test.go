package token

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/sha512"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// importEd imports an Ed25519 key pair from its seed (session objects)
// with CKA_EC_PARAMS params.
func importEd(t *testing.T, m *Module, sh uint64, params, seed []byte) (pub, priv uint64) {
	t.Helper()
	pk := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	pub, err := m.CreateObject(sh, []Attribute{
		aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_EC_EDWARDS),
		aBytes(ck.CKA_EC_PARAMS, params), aBytes(ck.CKA_EC_POINT, pk),
	})
	must(t, err)
	priv, err = m.CreateObject(sh, []Attribute{
		aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_EC_EDWARDS),
		aBytes(ck.CKA_EC_PARAMS, params), aBytes(ck.CKA_VALUE, seed), aBool(ck.CKA_SIGN, true),
	})
	must(t, err)
	return pub, priv
}

// edSign signs msg with CKM_EDDSA (p nil: no parameter) in one part, or
// in parts of 7 bytes when multi.
func edSign(t *testing.T, m *Module, sh, key uint64, p *EdDSAParams, msg []byte, multi bool) ([]byte, error) {
	t.Helper()
	if err := m.SignInit(sh, &Mechanism{Type: ck.CKM_EDDSA, EdDSA: p}, key); err != nil {
		return nil, err
	}
	if !multi {
		sig, _, err := m.Sign(sh, msg, Out{Cap: 64})
		return sig, err
	}
	for len(msg) > 0 {
		n := min(7, len(msg))
		must(t, m.SignUpdate(sh, msg[:n]))
		msg = msg[n:]
	}
	sig, _, err := m.SignFinal(sh, Out{Cap: 64})
	return sig, err
}

func edVerify(t *testing.T, m *Module, sh, key uint64, p *EdDSAParams, msg, sig []byte) error {
	t.Helper()
	if err := m.VerifyInit(sh, &Mechanism{Type: ck.CKM_EDDSA, EdDSA: p}, key); err != nil {
		return err
	}
	return m.Verify(sh, msg, sig)
}

// TestWycheproofEdDSA runs Wycheproof's eddsa_test.json (Ed25519, the RFC
// 8032 vectors among them) through C_CreateObject, C_Verify and C_Sign:
// every valid signature verifies and is the one the token makes (Ed25519
// is deterministic); every invalid one is refused with
// CKR_SIGNATURE_INVALID or CKR_SIGNATURE_LEN_RANGE.
func TestWycheproofEdDSA(t *testing.T) {
	m, _, sh := readyToken(t)
	raw, err := os.ReadFile(filepath.Join("testdata", "wycheproof", "eddsa_test.json"))
	must(t, err)
	var vf struct {
		TestGroups []struct {
			Key struct {
				Curve, Pk, Sk string
			} `json:"key"`
			Tests []struct {
				TcID              int
				Comment, Msg, Sig string
				Result            string
			} `json:"tests"`
		} `json:"testGroups"`
	}
	must(t, json.Unmarshal(raw, &vf))
	var valid, invalid int
	for _, g := range vf.TestGroups {
		if g.Key.Curve != "edwards25519" {
			t.Fatalf("curve %q", g.Key.Curve)
		}
		seed, _ := hex.DecodeString(g.Key.Sk)
		pk, _ := hex.DecodeString(g.Key.Pk)
		pub, priv := importEd(t, m, sh, mech.Ed25519OID, seed)
		if got := attrValue(t, m, sh, pub, ck.CKA_EC_POINT); !bytes.Equal(got, mech.EdPoint(pk)) {
			t.Fatalf("CKA_EC_POINT %x, want 0420‖%x", got, pk)
		}
		for _, v := range g.Tests {
			name := fmt.Sprintf("tcId %d (%s)", v.TcID, v.Comment)
			msg, _ := hex.DecodeString(v.Msg)
			sig, _ := hex.DecodeString(v.Sig)
			err := edVerify(t, m, sh, pub, nil, msg, sig)
			switch v.Result {
			case "valid":
				valid++
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for _, multi := range []bool{false, true} {
					got, err := edSign(t, m, sh, priv, nil, msg, multi)
					if err != nil || !bytes.Equal(got, sig) {
						t.Fatalf("%s: token signature %x, %v; want %x", name, got, err, sig)
					}
				}
			default:
				invalid++
				if !isRV(err, ck.CKR_SIGNATURE_INVALID) && !isRV(err, ck.CKR_SIGNATURE_LEN_RANGE) {
					t.Fatalf("%s: invalid signature answered %v", name, err)
				}
			}
		}
	}
	if valid == 0 || invalid == 0 {
		t.Fatalf("%d valid, %d invalid", valid, invalid)
	}
}

// TestEdDSAVariants checks Ed25519ctx and Ed25519ph with RFC 8032's
// vectors (§7.2, §7.3) through CK_EDDSA_PARAMS, and the parameter's
// limits.
func TestEdDSAVariants(t *testing.T) {
	m, _, sh := readyToken(t)
	cases := []struct {
		seed, msg, sig string
		p              *EdDSAParams
	}{
		{"0305334e381af78f141cb666f6199f57bc3495335a256a95bd2a55bf546663f6", "f726936d19c800494e3fdaff20b276a8",
			"55a4cc2f70a54e04288c5f4cd1e45a7bb520b36292911876cada7323198dd87a8b36950b95130022907a7fb7c4e9b2d5f6cca685a587b4b21f4b888e4e7edb0d",
			&EdDSAParams{Context: []byte("foo")}},
		{"833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42", "616263",
			"98a70222f0b8121aa9d30f813d683f809e462b469c7ff87639499bb94e6dae4131f85042463c2a355a2003d062adf5aaa10b8c61e636062aaad11c2a26083406",
			&EdDSAParams{PH: true}},
	}
	for i, c := range cases {
		seed, msg, want := unhex(t, c.seed), unhex(t, c.msg), unhex(t, c.sig)
		pub, priv := importEd(t, m, sh, mech.Ed25519Printable, seed)
		for _, multi := range []bool{false, true} {
			got, err := edSign(t, m, sh, priv, c.p, msg, multi)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("case %d: %x, %v; want %x", i, got, err, want)
			}
		}
		must(t, edVerify(t, m, sh, pub, c.p, msg, want))
		wantRV(t, edVerify(t, m, sh, pub, nil, msg, want), ck.CKR_SIGNATURE_INVALID)
	}
	_, priv := importEd(t, m, sh, mech.Ed25519OID, make([]byte, 32))
	wantRV(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_EDDSA, EdDSA: &EdDSAParams{Context: make([]byte, 256)}}, priv), ck.CKR_MECHANISM_PARAM_INVALID)
	wantRV(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_EDDSA, Param: []byte{1}}, priv), ck.CKR_MECHANISM_PARAM_INVALID)
}

// TestEdDSAKeys generates keys with each CKA_EC_PARAMS encoding clients
// send, cross-checks with crypto/ed25519, and checks the refusals.
func TestEdDSAKeys(t *testing.T) {
	m, _, sh := readyToken(t)
	for _, params := range [][]byte{mech.Ed25519OID, mech.Ed25519Printable, mech.Ed25519GnuPGOID} {
		pub, priv, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_EC_EDWARDS_KEY_PAIR_GEN},
			[]Attribute{aBytes(ck.CKA_EC_PARAMS, params), aBool(ck.CKA_VERIFY, true)},
			[]Attribute{aBool(ck.CKA_SIGN, true)})
		must(t, err)
		if kt := attrValue(t, m, sh, priv, ck.CKA_KEY_TYPE); !bytes.Equal(kt, ck.ULong(ck.CKK_EC_EDWARDS)) {
			t.Fatalf("key type %x", kt)
		}
		if got := attrValue(t, m, sh, priv, ck.CKA_EC_PARAMS); !bytes.Equal(got, params) {
			t.Fatalf("private CKA_EC_PARAMS %x, want %x", got, params)
		}
		point := attrValue(t, m, sh, pub, ck.CKA_EC_POINT)
		if len(point) != 34 || point[0] != 4 || point[1] != 32 || !bytes.Equal(point, attrValue(t, m, sh, priv, ck.CKA_EC_POINT)) {
			t.Fatalf("CKA_EC_POINT %x", point)
		}
		spki, err := x509.ParsePKIXPublicKey(attrValue(t, m, sh, pub, ck.CKA_PUBLIC_KEY_INFO))
		if err != nil || !bytes.Equal(spki.(ed25519.PublicKey), point[2:]) {
			t.Fatalf("CKA_PUBLIC_KEY_INFO: %v, %v", spki, err)
		}
		msg := []byte("signed by a generated Ed25519 key")
		sig, err := edSign(t, m, sh, priv, nil, msg, false)
		must(t, err)
		if !ed25519.Verify(point[2:], msg, sig) {
			t.Fatal("crypto/ed25519 rejects the token's signature")
		}
		must(t, edVerify(t, m, sh, pub, nil, msg, sig))
		sig[0] ^= 1
		wantRV(t, edVerify(t, m, sh, pub, nil, msg, sig), ck.CKR_SIGNATURE_INVALID)
		wantRV(t, edVerify(t, m, sh, pub, nil, msg, sig[:63]), ck.CKR_SIGNATURE_LEN_RANGE)
		ph := sha512.Sum512(msg)
		sig, err = edSign(t, m, sh, priv, &EdDSAParams{PH: true, Context: []byte("ctx")}, msg, true)
		must(t, err)
		must(t, ed25519.VerifyWithOptions(point[2:], ph[:], sig, &ed25519.Options{Hash: crypto.SHA512, Context: "ctx"}))
	}
	for _, c := range []struct {
		params []byte
		code   ck.Error
	}{
		{[]byte{0x06, 0x03, 0x2b, 0x65, 0x6e}, ck.CKR_CURVE_NOT_SUPPORTED}, // id-X25519: not an Edwards curve
		{append([]byte{0x13, 0x0a}, "edwards447"...), ck.CKR_CURVE_NOT_SUPPORTED},
		{curveOf(t, "P-256").OID(), ck.CKR_CURVE_NOT_SUPPORTED},
		{[]byte{0x06, 0x03, 0x2b}, ck.CKR_ATTRIBUTE_VALUE_INVALID},
	} {
		_, _, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_EC_EDWARDS_KEY_PAIR_GEN},
			[]Attribute{aBytes(ck.CKA_EC_PARAMS, c.params)}, nil)
		wantRV(t, err, c.code)
	}
	// A private key whose given point is not its own.
	_, err := m.CreateObject(sh, []Attribute{
		aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_EC_EDWARDS),
		aBytes(ck.CKA_EC_PARAMS, mech.Ed25519OID), aBytes(ck.CKA_VALUE, make([]byte, 32)), aBytes(ck.CKA_EC_POINT, mech.EdPoint(make([]byte, 32))),
	})
	wantRV(t, err, ck.CKR_TEMPLATE_INCONSISTENT)
	_, err = m.CreateObject(sh, []Attribute{
		aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_EC_EDWARDS),
		aBytes(ck.CKA_EC_PARAMS, mech.Ed25519OID), aBytes(ck.CKA_VALUE, make([]byte, 31)),
	})
	wantRV(t, err, ck.CKR_ATTRIBUTE_VALUE_INVALID)
	// An EC key is not an EdDSA key.
	_, ecPriv := genEC(t, m, sh, "P-256", false)
	wantRV(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_EDDSA}, ecPriv), ck.CKR_KEY_TYPE_INCONSISTENT)
}

// FuzzEdwardsECParams feeds CKA_EC_PARAMS values to the Edwards curve
// parser: it never panics, accepts only Ed25519's and Ed448's encodings,
// and answers with a CK_RV.
func FuzzEdwardsECParams(f *testing.F) {
	for _, s := range [][]byte{mech.Ed25519OID, mech.Ed25519Printable, mech.Ed25519GnuPGOID, {0x06, 0x03, 0x2b, 0x65, 0x71}, {0x13, 0}, {0x05, 0x00}, {}} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		err := mech.EdCheckParams(params)
		if err == nil {
			if !bytes.Equal(params, mech.Ed25519OID) && !bytes.Equal(params, mech.Ed25519Printable) && !bytes.Equal(params, mech.Ed25519GnuPGOID) &&
				!bytes.Equal(params, mech.Ed448OID) && !bytes.Equal(params, mech.Ed448Printable) {
				t.Fatalf("accepted %x", params)
			}
			return
		}
		if !isRV(err, ck.CKR_CURVE_NOT_SUPPORTED) && !isRV(err, ck.CKR_ATTRIBUTE_VALUE_INVALID) {
			t.Fatalf("%x: %v", params, err)
		}
	})
}
