package token

import (
	"crypto"
	"fmt"
	"testing"

	"github.com/modexp-token/modexp-token/engine/alg/ecdsa/ecdsatest"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
	"github.com/modexp-token/modexp-token/token/ck"
)

// TestWycheproofECDSAThroughVerify runs every Wycheproof ECDSA (P1363)
// vector of engine/alg/ecdsa/testdata through C_CreateObject + C_VerifyInit +
// C_Verify: each test group's public key is imported as a session object,
// and each case is verified twice, with CKM_ECDSA_SHA* on the message and
// with CKM_ECDSA on its digest. Every valid case must verify; every invalid
// one must be rejected, with CKR_SIGNATURE_INVALID or
// CKR_SIGNATURE_LEN_RANGE, or because its public key is refused at
// C_CreateObject (CKR_ATTRIBUTE_VALUE_INVALID: not a point of the curve);
// those are counted as rejected, and a valid case under a refused key
// fails the test. "acceptable" cases may go either way.
func TestWycheproofECDSAThroughVerify(t *testing.T) {
	m, _, _ := readyToken(t)
	slot := m.SlotList(true)[0]
	hashMech := map[crypto.Hash]uint64{
		crypto.SHA1: ck.CKM_ECDSA_SHA1, crypto.SHA224: ck.CKM_ECDSA_SHA224, crypto.SHA256: ck.CKM_ECDSA_SHA256,
		crypto.SHA384: ck.CKM_ECDSA_SHA384, crypto.SHA512: ck.CKM_ECDSA_SHA512,
	}
	for _, file := range ecdsatest.Files {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			vs, err := ecdsatest.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			if len(vs) == 0 {
				t.Fatal("no vectors")
			}
			sh := openRO(t, m, slot)
			keys := map[string]uint64{}   // imported keys by point
			refused := map[string]error{} // points refused at C_CreateObject
			var valid, rejectedSig, rejectedKey, acceptable int
			for _, v := range vs {
				name := fmt.Sprintf("tcId %d (%s)", v.TcID, v.Comment)
				mc, ok := hashMech[v.Hash]
				if !ok {
					t.Fatalf("%s: hash %v", name, v.Hash)
				}
				c, err := ec.CurveByName(v.Curve)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				h, known := keys[string(v.Point)]
				kerr := refused[string(v.Point)]
				if !known && kerr == nil {
					h, kerr = m.CreateObject(sh, []Attribute{
						aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_EC),
						aBytes(ck.CKA_EC_PARAMS, c.OID()), aBytes(ck.CKA_EC_POINT, v.Point),
					})
					if kerr != nil {
						if !isRV(kerr, ck.CKR_ATTRIBUTE_VALUE_INVALID) {
							t.Fatalf("%s: public key refused with %v", name, kerr)
						}
						refused[string(v.Point)] = kerr
					} else {
						keys[string(v.Point)] = h
					}
				}
				if kerr != nil {
					if v.Valid {
						t.Errorf("%s: valid case, but its public key was refused: %v", name, kerr)
					}
					rejectedKey++
					continue
				}
				errHash := verifyWith(t, m, sh, h, mc, v.Msg, v.Sig)
				errRaw := verifyWith(t, m, sh, h, ck.CKM_ECDSA, v.Digest(), v.Sig)
				for _, err := range []error{errHash, errRaw} {
					switch {
					case v.Acceptable:
					case v.Valid && err != nil:
						t.Errorf("%s: valid signature rejected: %v", name, err)
					case !v.Valid && err == nil:
						t.Errorf("%s: invalid signature accepted", name)
					case !v.Valid && !isRV(err, ck.CKR_SIGNATURE_INVALID) && !isRV(err, ck.CKR_SIGNATURE_LEN_RANGE):
						t.Errorf("%s: rejected with %v, want CKR_SIGNATURE_INVALID or CKR_SIGNATURE_LEN_RANGE", name, err)
					}
				}
				if (errHash == nil) != (errRaw == nil) {
					t.Errorf("%s: %s says %v, CKM_ECDSA says %v", name, ck.Name("CKM_", mc), errHash, errRaw)
				}
				switch {
				case v.Acceptable:
					acceptable++
				case v.Valid:
					valid++
				default:
					rejectedSig++
				}
			}
			if valid == 0 || rejectedSig == 0 {
				t.Fatalf("vectors without both outcomes: %d valid, %d invalid", valid, rejectedSig)
			}
			t.Logf("%d cases: %d valid accepted, %d invalid rejected at C_Verify, %d rejected at C_CreateObject (bad public key), %d acceptable",
				len(vs), valid, rejectedSig, rejectedKey, acceptable)
		})
	}
}
