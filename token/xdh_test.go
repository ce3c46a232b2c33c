package token

import (
	"bytes"
	"crypto"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

func xdhPrivTmpl(params, scalar []byte) []Attribute {
	return []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_EC_MONTGOMERY),
		aBytes(ck.CKA_EC_PARAMS, params), aBytes(ck.CKA_VALUE, scalar), aBool(ck.CKA_DERIVE, true)}
}

// xdhDerive runs CKM_ECDH1_DERIVE (CKD_NULL) with peer's public data and
// returns the new generic secret's value.
func xdhDerive(t *testing.T, m *Module, sh, priv uint64, peer []byte) ([]byte, error) {
	t.Helper()
	h, err := m.DeriveKey(sh, &Mechanism{Type: ck.CKM_ECDH1_DERIVE, ECDH: &ECDH1DeriveParams{KDF: ck.CKD_NULL, PublicData: peer}},
		priv, sharedKeyTmpl())
	if err != nil {
		return nil, err
	}
	return attrValue(t, m, sh, h, ck.CKA_VALUE), nil
}

// TestWycheproofXDH runs Wycheproof's x25519_test.json and x448_test.json
// through C_CreateObject and C_DeriveKey (CKM_ECDH1_DERIVE, CKD_NULL):
// every valid case derives the vector's shared secret; an acceptable case
// (twist points, non-canonical u) derives it too, except a low-order point
// whose secret is all zero, refused with CKR_MECHANISM_PARAM_INVALID;
// every invalid case is refused.
func TestWycheproofXDH(t *testing.T) {
	m, _, sh := readyToken(t)
	for _, c := range []struct {
		file  string
		curve *mech.XDHCurve
	}{{"x25519_test.json", mech.X25519Curve}, {"x448_test.json", mech.X448Curve}} {
		var vf struct {
			TestGroups []struct {
				Tests []struct {
					TcID                    int
					Comment                 string
					Flags                   []string
					Public, Private, Shared string
					Result                  string
				}
			}
		}
		readWycheproof(t, c.file, &vf)
		n, refused := 0, 0
		for _, g := range vf.TestGroups {
			for _, tc := range g.Tests {
				n++
				name := fmt.Sprintf("%s/%d %s", c.curve.Name, tc.TcID, tc.Comment)
				priv, err := m.CreateObject(sh, xdhPrivTmpl(c.curve.OID, unhex(t, tc.Private)))
				must(t, err)
				z, err := xdhDerive(t, m, sh, priv, unhex(t, tc.Public))
				// A low-order point whose shared secret is all zero is
				// refused (RFC 7748 §6); the twist's "low order" points
				// with a non-zero secret are computed.
				zero := bytes.Count(unhex(t, tc.Shared), []byte{0}) == len(tc.Shared)/2
				switch {
				case tc.Result == "invalid" || zero:
					if err == nil {
						t.Errorf("%s: derived %x, want a refusal", name, z)
					} else if !isRV(err, ck.CKR_MECHANISM_PARAM_INVALID) {
						t.Errorf("%s: %v, want CKR_MECHANISM_PARAM_INVALID", name, err)
					}
					refused++
				case err != nil:
					t.Errorf("%s (%s): %v", name, tc.Result, err)
				case !bytes.Equal(z, unhex(t, tc.Shared)):
					t.Errorf("%s: shared secret %x, want %s", name, z, tc.Shared)
				}
				must(t, m.DestroyObject(sh, priv))
			}
		}
		if n < 400 || refused == 0 {
			t.Errorf("%s: %d cases, %d refused", c.file, n, refused)
		}
	}
}

// TestXDHGenerate generates a pair on each curve with each CKA_EC_PARAMS
// form, and agrees between two pairs: both sides derive the same secret,
// with CKD_NULL and with a KDF, the peer's point bare or in its OCTET
// STRING. Unknown curves and a mechanism/key type mismatch are refused.
func TestXDHGenerate(t *testing.T) {
	m, _, sh := readyToken(t)
	gen := func(params []byte) (uint64, uint64, error) {
		return m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_EC_MONTGOMERY_KEY_PAIR_GEN},
			[]Attribute{aBytes(ck.CKA_EC_PARAMS, params)}, []Attribute{aBool(ck.CKA_DERIVE, true)})
	}
	for _, c := range []*mech.XDHCurve{mech.X25519Curve, mech.X448Curve} {
		for _, params := range [][]byte{c.OID, c.Printable, c.OpenSC} {
			t.Run(fmt.Sprintf("%s %x", c.Name, params), func(t *testing.T) {
				pubA, privA, err := gen(params)
				must(t, err)
				pubB, privB, err := gen(params)
				must(t, err)
				pointA, pointB := attrValue(t, m, sh, pubA, ck.CKA_EC_POINT), attrValue(t, m, sh, pubB, ck.CKA_EC_POINT)
				if len(pointA) != 2+c.Size {
					t.Fatalf("CKA_EC_POINT of %d bytes", len(pointA))
				}
				zA, err := xdhDerive(t, m, sh, privA, pointB)
				must(t, err)
				zB, err := xdhDerive(t, m, sh, privB, pointA[2:])
				must(t, err)
				if len(zA) != c.Size || !bytes.Equal(zA, zB) {
					t.Fatalf("A derives %x, B %x", zA, zB)
				}
				kdf := &Mechanism{Type: ck.CKM_ECDH1_DERIVE, ECDH: &ECDH1DeriveParams{KDF: ck.CKD_SHA256_KDF, PublicData: pointB}}
				h, err := m.DeriveKey(sh, kdf, privA, sharedKeyTmpl(aULong(ck.CKA_KEY_TYPE, ck.CKK_AES)))
				must(t, err)
				if want := mech.X963KDF(crypto.SHA256, zA, nil, 32); !bytes.Equal(attrValue(t, m, sh, h, ck.CKA_VALUE), want) {
					t.Errorf("CKD_SHA256_KDF key differs from X9.63(Z)")
				}
				_, ski := spkiKey(t, attrValue(t, m, sh, pubA, ck.CKA_PUBLIC_KEY_INFO))
				if !bytes.Equal(ski, pointA[2:]) {
					t.Errorf("CKA_PUBLIC_KEY_INFO does not hold the public key")
				}
			})
		}
	}
	_, _, err := gen([]byte{0x06, 0x03, 0x2b, 0x65, 0x70}) // id-Ed25519
	wantRV(t, err, ck.CKR_CURVE_NOT_SUPPORTED)
	_, _, err = gen([]byte{0x13, 0x03, 'f', 'o', 'o'})
	wantRV(t, err, ck.CKR_CURVE_NOT_SUPPORTED)
	_, _, err = gen([]byte{0x06, 0x03, 0x2b})
	wantRV(t, err, ck.CKR_ATTRIBUTE_VALUE_INVALID)
	_, privA, err := gen(mech.X25519Curve.OID)
	must(t, err)
	pub448, _, err := gen(mech.X448Curve.OID)
	must(t, err)
	_, err = xdhDerive(t, m, sh, privA, attrValue(t, m, sh, pub448, ck.CKA_EC_POINT))
	wantRV(t, err, ck.CKR_MECHANISM_PARAM_INVALID)
	_, err = m.DeriveKey(sh, &Mechanism{Type: ck.CKM_ECDH1_COFACTOR_DERIVE, ECDH: &ECDH1DeriveParams{KDF: ck.CKD_NULL, PublicData: make([]byte, 32)}},
		privA, sharedKeyTmpl())
	wantRV(t, err, ck.CKR_KEY_TYPE_INCONSISTENT)
	err = m.SignInit(sh, &Mechanism{Type: ck.CKM_EDDSA}, privA)
	wantRV(t, err, ck.CKR_KEY_TYPE_INCONSISTENT)
	// A point of the wrong length in an import is refused.
	_, err = m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_EC_MONTGOMERY),
		aBytes(ck.CKA_EC_PARAMS, mech.X25519Curve.OID), aBytes(ck.CKA_EC_POINT, make([]byte, 31))})
	wantRV(t, err, ck.CKR_ATTRIBUTE_VALUE_INVALID)
}

// TestXDHOpenSSL cross-checks the agreement with OpenSSL: for each curve
// OpenSSL makes a key, derives with the token's public key (given as the
// SPKI the token publishes) and the token derives with OpenSSL's public
// key; the secrets are equal.
func TestXDHOpenSSL(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not installed")
	}
	m, _, sh := readyToken(t)
	dir := t.TempDir()
	run := func(args ...string) []byte {
		t.Helper()
		out, err := exec.Command(openssl, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("openssl %v: %v\n%s", args, err, out)
		}
		return out
	}
	for _, c := range []*mech.XDHCurve{mech.X25519Curve, mech.X448Curve} {
		pub, priv, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_EC_MONTGOMERY_KEY_PAIR_GEN},
			[]Attribute{aBytes(ck.CKA_EC_PARAMS, c.OID)}, []Attribute{aBool(ck.CKA_DERIVE, true)})
		must(t, err)
		ours := filepath.Join(dir, c.Name+"-token.pem")
		must(t, os.WriteFile(ours, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: attrValue(t, m, sh, pub, ck.CKA_PUBLIC_KEY_INFO)}), 0o600))
		key := filepath.Join(dir, c.Name+"-openssl.pem")
		run("genpkey", "-algorithm", c.Name, "-out", key)
		spki := run("pkey", "-in", key, "-pubout", "-outform", "DER")
		secret := filepath.Join(dir, c.Name+".bin")
		run("pkeyutl", "-derive", "-inkey", key, "-peerkey", ours, "-out", secret)
		theirs, err := os.ReadFile(secret)
		must(t, err)
		z, err := xdhDerive(t, m, sh, priv, spki[len(spki)-c.Size:])
		must(t, err)
		if len(z) != c.Size || !bytes.Equal(z, theirs) {
			t.Errorf("%s: the token derives %x, OpenSSL %x", c.Name, z, theirs)
		}
	}
}
