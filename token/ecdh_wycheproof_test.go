package token

import (
	"bytes"
	"encoding/asn1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/modexp-token/modexp-token/engine/arith/ec"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// wycheproofECDH is the part of a Wycheproof ECDH file the tests read.
type wycheproofECDH struct {
	TestGroups []struct {
		Curve    string `json:"curve"`
		Encoding string `json:"encoding"`
		Tests    []struct {
			TcID    int      `json:"tcId"`
			Comment string   `json:"comment"`
			Public  string   `json:"public"`
			Private string   `json:"private"`
			Shared  string   `json:"shared"`
			Result  string   `json:"result"`
			Flags   []string `json:"flags"`
		} `json:"tests"`
	} `json:"testGroups"`
}

// ecdhWycheproofFiles are the vectors in testdata/wycheproof (Project
// Wycheproof, Apache-2.0: see the LICENSE there). The _ecpoint files give
// the peer's public key as a SEC 1 point; ecdh_secp256k1_test.json as a
// SubjectPublicKeyInfo.
var ecdhWycheproofFiles = map[string]string{
	"ecdh_secp224r1_ecpoint_test.json": "P-224",
	"ecdh_secp256r1_ecpoint_test.json": "P-256",
	"ecdh_secp384r1_ecpoint_test.json": "P-384",
	"ecdh_secp521r1_ecpoint_test.json": "P-521",
	"ecdh_secp256k1_test.json":         "secp256k1",
}

// spkiPoint returns the point of a SubjectPublicKeyInfo on the named curve
// c, or false if the SPKI is malformed or names another curve (the client
// would not send such a key: those cases test SPKI parsers).
func spkiPoint(der []byte, c *ec.Curve) ([]byte, bool) {
	var spki struct {
		Algorithm struct {
			Algorithm  asn1.ObjectIdentifier
			Parameters asn1.RawValue `asn1:"optional"`
		}
		PublicKey asn1.BitString
	}
	rest, err := asn1.Unmarshal(der, &spki)
	if err != nil || len(rest) != 0 || !spki.Algorithm.Algorithm.Equal(mech.OIDECPublicKey) ||
		!bytes.Equal(spki.Algorithm.Parameters.FullBytes, c.OID()) {
		return nil, false
	}
	return spki.PublicKey.Bytes, true
}

// TestWycheproofECDH runs the Wycheproof ECDH vectors through C_CreateObject
// (the private key, CKA_DERIVE) and C_DeriveKey (CKM_ECDH1_DERIVE, CKD_NULL)
// with the peer's point as bare SEC 1 bytes; valid cases also through the
// DER OCTET STRING form and CKM_ECDH1_COFACTOR_DERIVE. Every valid case
// must give the shared secret; every invalid one (points off the curve, on
// the twist, at infinity, malformed) must be refused with
// CKR_MECHANISM_PARAM_INVALID; an acceptable case may go either way but
// never give a wrong secret.
func TestWycheproofECDH(t *testing.T) {
	m, _, _ := readyToken(t)
	slot := m.SlotList(true)[0]
	for file, curve := range ecdhWycheproofFiles {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(filepath.Join("testdata", "wycheproof", file))
			if err != nil {
				t.Fatal(err)
			}
			var vf wycheproofECDH
			if err := json.Unmarshal(raw, &vf); err != nil {
				t.Fatal(err)
			}
			c := curveOf(t, curve)
			sh := openRW(t, m, slot)
			keys := map[string]uint64{}
			var n, valid, refused, acceptable, skipped int
			for _, g := range vf.TestGroups {
				for _, v := range g.Tests {
					n++
					name := fmt.Sprintf("tcId %d (%s)", v.TcID, v.Comment)
					pub, _ := hex.DecodeString(v.Public)
					if g.Encoding != "ecpoint" {
						var ok bool
						if pub, ok = spkiPoint(pub, c); !ok {
							if v.Result == "valid" {
								t.Fatalf("%s: valid case with an unreadable SPKI", name)
							}
							skipped++
							continue
						}
					}
					d, _ := hex.DecodeString(v.Private)
					key, ok := keys[v.Private]
					if !ok {
						key = importECDHKey(t, m, sh, c, d)
						keys[v.Private] = key
					}
					want, _ := hex.DecodeString(v.Shared)
					got, err := ecdhDeriveValue(t, m, sh, key, ck.CKM_ECDH1_DERIVE, ECDH1DeriveParams{KDF: ck.CKD_NULL, PublicData: pub})
					switch {
					case err == nil && !bytes.Equal(got, want):
						t.Fatalf("%s (%s): secret %x, want %x", name, v.Result, got, want)
					case err != nil && v.Result == "valid":
						t.Fatalf("%s: valid case refused: %v", name, err)
					case err != nil && !isRV(err, ck.CKR_MECHANISM_PARAM_INVALID):
						t.Fatalf("%s: refused with %v, want CKR_MECHANISM_PARAM_INVALID", name, err)
					case err == nil && v.Result == "invalid":
						t.Fatalf("%s: invalid case accepted (flags %v)", name, v.Flags)
					}
					switch {
					case v.Result == "valid":
						valid++
						x, y, err := c.Unmarshal(pub)
						must(t, err)
						wrapped := c.MarshalECPoint(x, y)
						for _, mc := range []uint64{ck.CKM_ECDH1_DERIVE, ck.CKM_ECDH1_COFACTOR_DERIVE} {
							got, err := ecdhDeriveValue(t, m, sh, key, mc, ECDH1DeriveParams{KDF: ck.CKD_NULL, PublicData: wrapped})
							if err != nil || !bytes.Equal(got, want) {
								t.Fatalf("%s: %s with the DER point: %x, %v", name, ck.Name("CKM_", mc), got, err)
							}
						}
					case err != nil:
						refused++
					default:
						acceptable++
					}
				}
			}
			t.Logf("%d cases: %d valid, %d refused, %d acceptable derived, %d SPKI not for this curve", n, valid, refused, acceptable, skipped)
			if valid == 0 || refused == 0 {
				t.Fatal("no valid or no refused case")
			}
		})
	}
}
