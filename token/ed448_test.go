package token

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cloudflare/circl/sign/ed448"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// TestWycheproofEd448 runs Wycheproof's ed448_test.json (RFC 8032 Ed448)
// through C_CreateObject and C_Verify: every valid signature verifies,
// every invalid one is refused with CKR_SIGNATURE_INVALID or, when it is
// not 114 bytes, CKR_SIGNATURE_LEN_RANGE.
func TestWycheproofEd448(t *testing.T) {
	m, _, sh := readyToken(t)
	raw, err := os.ReadFile(filepath.Join("testdata", "wycheproof", "ed448_test.json"))
	must(t, err)
	var vf struct {
		TestGroups []struct {
			PublicKey struct{ Pk string } `json:"publicKey"`
			Tests     []struct {
				TcID              int
				Comment, Msg, Sig string
				Result            string
			} `json:"tests"`
		} `json:"testGroups"`
	}
	must(t, json.Unmarshal(raw, &vf))
	var valid, invalid int
	for _, g := range vf.TestGroups {
		pub, err := m.CreateObject(sh, []Attribute{
			aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_EC_EDWARDS),
			aBytes(ck.CKA_EC_PARAMS, mech.Ed448OID), aBytes(ck.CKA_EC_POINT, unhex(t, g.PublicKey.Pk)),
		})
		must(t, err)
		for _, tc := range g.Tests {
			sig := unhex(t, tc.Sig)
			err := edVerify(t, m, sh, pub, nil, unhex(t, tc.Msg), sig)
			switch {
			case tc.Result == "valid":
				if err != nil {
					t.Errorf("tcId %d (%s): %v", tc.TcID, tc.Comment, err)
				}
				valid++
			case len(sig) != ed448.SignatureSize:
				if !isRV(err, ck.CKR_SIGNATURE_LEN_RANGE) {
					t.Errorf("tcId %d (%s): %v, want CKR_SIGNATURE_LEN_RANGE", tc.TcID, tc.Comment, err)
				}
				invalid++
			default:
				if !isRV(err, ck.CKR_SIGNATURE_INVALID) {
					t.Errorf("tcId %d (%s): %v, want CKR_SIGNATURE_INVALID", tc.TcID, tc.Comment, err)
				}
				invalid++
			}
		}
	}
	if valid == 0 || invalid == 0 {
		t.Fatalf("valid %d, invalid %d: the file was not exercised", valid, invalid)
	}
}

// edSignCap signs like edSign with an output buffer fit for Ed448.
func edSignCap(t *testing.T, m *Module, sh, key uint64, p *EdDSAParams, msg []byte, multi bool) ([]byte, error) {
	t.Helper()
	if err := m.SignInit(sh, &Mechanism{Type: ck.CKM_EDDSA, EdDSA: p}, key); err != nil {
		return nil, err
	}
	if !multi {
		sig, _, err := m.Sign(sh, msg, Out{Cap: 114})
		return sig, err
	}
	for len(msg) > 0 {
		n := min(7, len(msg))
		must(t, m.SignUpdate(sh, msg[:n]))
		msg = msg[n:]
	}
	sig, _, err := m.SignFinal(sh, Out{Cap: 114})
	return sig, err
}

// TestEd448 imports RFC 8032's "blank" Ed448 key (§7.4) and makes its
// signature; generated keys (curve named by OID and by name) sign pure
// Ed448, with a context and Ed448ph, in one part and several, and circl
// and the token verify each; the wrong variant does not verify.
func TestEd448(t *testing.T) {
	m, _, sh := readyToken(t)
	seed := unhex(t, "6c82a562cb808d10d632be89c8513ebf6c929f34ddfa8c9f63c9960ef6e348a3528c8a3fcc2f044e39a3fc5b94492f8f032e7549a20098f95b")
	wantPub := unhex(t, "5fd7449b59b461fd2ce787ec616ad46a1da1342485a70e1f8a0ea75d80e96778edf124769b46c7061bd6783df1e50f6cd1fa1abeafe8256180")
	wantSig := unhex(t, "533a37f6bbe457251f023c0d88f976ae2dfb504a843e34d2074fd823d41a591f2b233f034f628281f2fd7a22ddd47d7828c59bd0a21bfd3980ff0d2028d4b18a9df63e006c5d1c2d345b925d8dc00b4104852db99ac5c7cdda8530a113a0f4dbb61149f05a7363268c71d95808ff2e652600")
	priv, err := m.CreateObject(sh, []Attribute{
		aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_EC_EDWARDS),
		aBytes(ck.CKA_EC_PARAMS, mech.Ed448OID), aBytes(ck.CKA_VALUE, seed), aBool(ck.CKA_SIGN, true),
	})
	must(t, err)
	if got := attrValue(t, m, sh, priv, ck.CKA_EC_POINT); !bytes.Equal(got, mech.EdPoint(wantPub)) {
		t.Fatalf("CKA_EC_POINT %x, want the RFC's public key", got)
	}
	sig, err := edSignCap(t, m, sh, priv, nil, nil, false)
	must(t, err)
	if !bytes.Equal(sig, wantSig) {
		t.Fatalf("signature of the empty message %x, want RFC 8032's", sig)
	}
	msg := bytes.Repeat([]byte("Ed448 "), 50)
	for _, params := range [][]byte{mech.Ed448OID, mech.Ed448Printable} {
		pub, priv, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_EC_EDWARDS_KEY_PAIR_GEN},
			[]Attribute{aBytes(ck.CKA_EC_PARAMS, params), aBool(ck.CKA_VERIFY, true)}, []Attribute{aBool(ck.CKA_SIGN, true)})
		must(t, err)
		point := attrValue(t, m, sh, pub, ck.CKA_EC_POINT)
		if len(point) != 2+ed448.PublicKeySize {
			t.Fatalf("CKA_EC_POINT of %d bytes", len(point))
		}
		pk := ed448.PublicKey(point[2:])
		for _, p := range []*EdDSAParams{nil, {Context: []byte("ctx")}, {PH: true}, {PH: true, Context: []byte("ph ctx")}} {
			for _, multi := range []bool{false, true} {
				sig, err := edSignCap(t, m, sh, priv, p, msg, multi)
				must(t, err)
				ctx, ph := "", false
				if p != nil {
					ctx, ph = string(p.Context), p.PH
				}
				ok := ed448.Verify(pk, msg, sig, ctx)
				if ph {
					ok = ed448.VerifyPh(pk, msg, sig, ctx)
				}
				if !ok {
					t.Fatalf("params %+v multi %v: circl does not verify", p, multi)
				}
				must(t, edVerify(t, m, sh, pub, p, msg, sig))
				other := &EdDSAParams{PH: !ph, Context: []byte(ctx)}
				wantRV(t, edVerify(t, m, sh, pub, other, msg, sig), ck.CKR_SIGNATURE_INVALID)
			}
		}
		wantRV(t, edVerify(t, m, sh, pub, nil, msg, make([]byte, 64)), ck.CKR_SIGNATURE_LEN_RANGE)
		spki := attrValue(t, m, sh, pub, ck.CKA_PUBLIC_KEY_INFO)
		if !bytes.Equal(spki, attrValue(t, m, sh, priv, ck.CKA_PUBLIC_KEY_INFO)) || !bytes.HasSuffix(spki, pk) {
			t.Fatal("CKA_PUBLIC_KEY_INFO does not carry the Ed448 public key")
		}
	}
	// A 57-byte value is an Ed448 seed, not an Ed25519 one, and back.
	_, err = m.CreateObject(sh, []Attribute{
		aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_EC_EDWARDS),
		aBytes(ck.CKA_EC_PARAMS, mech.Ed448OID), aBytes(ck.CKA_VALUE, make([]byte, 32)),
	})
	wantRV(t, err, ck.CKR_ATTRIBUTE_VALUE_INVALID)
}

// TestEd448OpenSSLVerifies: OpenSSL 3 (openssl pkeyutl -verify -rawin)
// verifies an Ed448 signature the token made, with the public key from
// CKA_PUBLIC_KEY_INFO.
func TestEd448OpenSSLVerifies(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Fatal("openssl not installed (Debian's openssl package)")
	}
	m, _, sh := readyToken(t)
	pub, priv, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_EC_EDWARDS_KEY_PAIR_GEN},
		[]Attribute{aBytes(ck.CKA_EC_PARAMS, mech.Ed448Printable)}, []Attribute{aBool(ck.CKA_SIGN, true)})
	must(t, err)
	msg := []byte("signed by the token, verified by OpenSSL")
	sig, err := edSignCap(t, m, sh, priv, nil, msg, false)
	must(t, err)
	dir := t.TempDir()
	files := map[string][]byte{
		"pub.pem": pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: attrValue(t, m, sh, pub, ck.CKA_PUBLIC_KEY_INFO)}),
		"msg":     msg, "sig": sig, "bad": append(append([]byte{}, sig[:113]...), sig[113]^1),
	}
	for name, b := range files {
		must(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
	}
	verify := func(sigFile string) ([]byte, error) {
		cmd := exec.Command(openssl, "pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", "pub.pem", "-in", "msg", "-sigfile", sigFile)
		cmd.Dir = dir
		return cmd.CombinedOutput()
	}
	if out, err := verify("sig"); err != nil {
		t.Fatalf("openssl refuses the token's Ed448 signature: %v\n%s", err, out)
	}
	if out, err := verify("bad"); err == nil {
		t.Fatalf("openssl accepts a changed signature:\n%s", out)
	}
}
