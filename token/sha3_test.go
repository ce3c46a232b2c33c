package token

import (
	"bytes"
	"crypto"
	stdecdsa "crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha3"
	"encoding/hex"
	"fmt"
	"math/big"
	"testing"

	"github.com/modexp-token/modexp-token/engine/alg/ecdsa/ecdsatest"
	"github.com/modexp-token/modexp-token/test/vectors/wycheproof"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// TestSHA3Digests checks CKM_SHA3_* against FIPS 202's "abc" answers and
// crypto/sha3, in one part and in several.
func TestSHA3Digests(t *testing.T) {
	m, slot := newModule(t)
	sh := openRO(t, m, slot)
	abc := map[uint64]string{
		ck.CKM_SHA3_224: "e642824c3f8cf24ad09234ee7d3c766fc9a3a5168d0c94ad73b46fdf",
		ck.CKM_SHA3_256: "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532",
		ck.CKM_SHA3_384: "ec01498288516fc926459f58e2c6ad8df9b473cb0fc08c2596da7cf0e49be4b298d88cea927ac7f539f1edf228376d25",
		ck.CKM_SHA3_512: "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0",
	}
	long := bytes.Repeat([]byte("SHA-3 through the token "), 100)
	for mc, want := range abc {
		for _, in := range [][]byte{[]byte("abc"), long} {
			got, parts := digestTwice(t, m, sh, mc, in, 7)
			h := mech.Registry[mc].(mech.Digester).NewDigest()
			h.Write(in)
			ref := h.Sum(nil)
			if len(in) == 3 && hex.EncodeToString(got) != want {
				t.Fatalf("%s(abc) = %x, want %s", ck.Name("CKM_", mc), got, want)
			}
			if !bytes.Equal(got, ref) || !bytes.Equal(parts, ref) {
				t.Fatalf("%s: %x / %x, crypto/sha3 %x", ck.Name("CKM_", mc), got, parts, ref)
			}
		}
	}
	if d := sha3.Sum256([]byte("abc")); hex.EncodeToString(d[:]) != abc[ck.CKM_SHA3_256] {
		t.Fatal("crypto/sha3 disagrees with FIPS 202")
	}
}

// digestTwice digests in with mech in one C_Digest and in C_DigestUpdate
// parts of step bytes, and returns both digests.
func digestTwice(t *testing.T, m *Module, sh, mc uint64, in []byte, step int) (one, parts []byte) {
	t.Helper()
	must(t, m.DigestInit(sh, &Mechanism{Type: mc}))
	one, _, err := m.Digest(sh, in, Out{Cap: 64})
	must(t, err)
	must(t, m.DigestInit(sh, &Mechanism{Type: mc}))
	for i := 0; i < len(in); i += step {
		must(t, m.DigestUpdate(sh, in[i:min(i+step, len(in))]))
	}
	parts, _, err = m.DigestFinal(sh, Out{Cap: 64})
	must(t, err)
	return one, parts
}

// TestSHA3Signatures signs with every SHA-3 RSA and ECDSA mechanism and
// checks the signatures with crypto/rsa and crypto/ecdsa (and the token's
// own verification).
func TestSHA3Signatures(t *testing.T) {
	m, _, sh := readyToken(t)
	priv, pub := rsaKeyTemplates(fuzzRSAKey)
	rsaPriv, err := m.CreateObject(sh, priv)
	must(t, err)
	rsaPub, err := m.CreateObject(sh, pub)
	must(t, err)
	msg := []byte("signed with SHA-3")
	mgf := map[crypto.Hash]uint64{crypto.SHA3_224: ck.CKG_MGF1_SHA3_224, crypto.SHA3_256: ck.CKG_MGF1_SHA3_256,
		crypto.SHA3_384: ck.CKG_MGF1_SHA3_384, crypto.SHA3_512: ck.CKG_MGF1_SHA3_512}
	hashMech := map[crypto.Hash]uint64{crypto.SHA3_224: ck.CKM_SHA3_224, crypto.SHA3_256: ck.CKM_SHA3_256,
		crypto.SHA3_384: ck.CKM_SHA3_384, crypto.SHA3_512: ck.CKM_SHA3_512}
	for _, hm := range mech.RSAPKCSHashMechs[5:9] { // the SHA-3 ones
		sig, err := signWith(t, m, sh, rsaPriv, hm.Type, msg)
		must(t, err)
		must(t, rsa.VerifyPKCS1v15(&fuzzRSAKey.PublicKey, hm.Hash, digest(hm.Hash, msg), sig))
		must(t, verifyWith(t, m, sh, rsaPub, hm.Type, msg, sig))
	}
	for _, hm := range mech.RSAPSSHashMechs[5:] {
		cm := &Mechanism{Type: hm.Type, PSS: &PSSParams{Hash: hashMech[hm.Hash], MGF: mgf[hm.Hash], SaltLen: 20}}
		must(t, m.SignInit(sh, cm, rsaPriv))
		sig, _, err := m.Sign(sh, msg, Out{Cap: 512})
		must(t, err)
		must(t, rsa.VerifyPSS(&fuzzRSAKey.PublicKey, hm.Hash, digest(hm.Hash, msg), sig, &rsa.PSSOptions{SaltLength: 20}))
		must(t, m.VerifyInit(sh, cm, rsaPub))
		must(t, m.Verify(sh, msg, sig))
		// The hash of the parameter must be the mechanism's.
		bad := &Mechanism{Type: hm.Type, PSS: &PSSParams{Hash: ck.CKM_SHA256, MGF: mgf[hm.Hash], SaltLen: 32}}
		wantRV(t, m.SignInit(sh, bad, rsaPriv), ck.CKR_MECHANISM_PARAM_INVALID)
	}
	k, err := stdecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	c := curveOf(t, "P-256")
	ecPriv, err := m.CreateObject(sh, ecPrivateTemplate(c, k.D.Bytes()))
	must(t, err)
	ecPub := importECPublic(t, m, sh, c, k.X.FillBytes(make([]byte, 32)), k.Y.FillBytes(make([]byte, 32)))
	for _, hm := range mech.ECDSAHashMechs[5:] {
		sig, err := signWith(t, m, sh, ecPriv, hm.Type, msg)
		must(t, err)
		r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
		if !stdecdsa.Verify(&k.PublicKey, digest(hm.Hash, msg), r, s) {
			t.Fatalf("%s: crypto/ecdsa rejects the signature", ck.Name("CKM_", hm.Type))
		}
		must(t, verifyWith(t, m, sh, ecPub, hm.Type, msg, sig))
	}
}

// TestWycheproofSHA3 runs Wycheproof's SHA-3 signature vectors through
// C_Verify: RSA PKCS#1 v1.5 (CKM_SHA3_*_RSA_PKCS) and ECDSA
// (CKM_ECDSA_SHA3_*, engine/alg/ecdsa/testdata through ecdsatest; the DER
// signatures converted to r‖s by Vector.RS, those that are not strict DER
// counted as refused: a PKCS#11 client cannot send them; C_Verify must
// refuse every other invalid case).
func TestWycheproofSHA3(t *testing.T) {
	m, _, sh := readyToken(t)
	check := func(name string, valid bool, err error) bool {
		switch {
		case valid && err != nil:
			t.Fatalf("%s: valid signature refused: %v", name, err)
		case !valid && err == nil:
			return false // an acceptable case verified
		case err != nil && !isRV(err, ck.CKR_SIGNATURE_INVALID) && !isRV(err, ck.CKR_SIGNATURE_LEN_RANGE):
			t.Fatalf("%s: %v", name, err)
		}
		return true
	}
	for file, mc := range map[string]uint64{
		"rsa_signature_2048_sha3_256_test.json": ck.CKM_SHA3_256_RSA_PKCS,
		"rsa_signature_2048_sha3_512_test.json": ck.CKM_SHA3_512_RSA_PKCS,
	} {
		vf, err := wycheproof.RSA(file, "rsassa_pkcs1_verify_schema.json")
		must(t, err) // at least one case, as many as the header says
		for _, g := range vf.TestGroups {
			nb, eb := g.Public()
			pub, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_RSA),
				aBytes(ck.CKA_MODULUS, nb), aBytes(ck.CKA_PUBLIC_EXPONENT, eb)})
			must(t, err)
			for _, v := range g.Tests {
				if !check(fmt.Sprintf("%s tcId %d", file, v.TcID), v.Result == "valid", verifyWith(t, m, sh, pub, mc, v.Msg, v.Sig)) && v.Result == "invalid" {
					t.Fatalf("%s tcId %d: invalid signature verified", file, v.TcID)
				}
			}
		}
	}
	ecdsaMech := map[crypto.Hash]uint64{crypto.SHA3_224: ck.CKM_ECDSA_SHA3_224, crypto.SHA3_256: ck.CKM_ECDSA_SHA3_256,
		crypto.SHA3_384: ck.CKM_ECDSA_SHA3_384, crypto.SHA3_512: ck.CKM_ECDSA_SHA3_512}
	for _, file := range ecdsatest.DERFiles {
		vs, err := ecdsatest.Load(file)
		must(t, err)
		var valid, refused int
		keys := map[string]uint64{}
		keyErr := map[string]error{}
		for _, v := range vs {
			name := fmt.Sprintf("%s tcId %d", file, v.TcID)
			c := curveOf(t, v.Curve)
			pub, known := keys[string(v.Point)]
			kerr := keyErr[string(v.Point)]
			if !known && kerr == nil {
				pub, kerr = m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_EC),
					aBytes(ck.CKA_EC_PARAMS, c.OID()), aBytes(ck.CKA_EC_POINT, v.Point)})
				keys[string(v.Point)], keyErr[string(v.Point)] = pub, kerr
			}
			sig, ok := v.RS(c.OrderByteLen())
			if kerr != nil || !ok {
				if v.Valid {
					t.Fatalf("%s: valid case not expressible as r‖s (%v)", name, kerr)
				}
				refused++
				continue
			}
			mc, ok := ecdsaMech[v.Hash]
			if !ok {
				t.Fatalf("%s: hash %v", name, v.Hash)
			}
			err = verifyWith(t, m, sh, pub, mc, v.Msg, sig)
			if !check(name, v.Valid, err) && !v.Valid && !v.Acceptable {
				t.Fatalf("%s: invalid signature verified", name)
			}
			if v.Valid {
				valid++
			} else if err != nil {
				refused++
			}
		}
		if valid == 0 || refused == 0 {
			t.Fatalf("%s: %d valid, %d refused", file, valid, refused)
		}
	}
}
