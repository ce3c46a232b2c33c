package token

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudflare/circl/sign/slhdsa"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// slhdsaACVP is testdata/slhdsa/acvp_subset.json (see the README there).
type slhdsaACVP struct {
	KeyGen []struct {
		ParameterSet                  string
		TcID                          int
		SkSeed, SkPrf, PkSeed, Sk, Pk string
	}
	SigGen []struct {
		ParameterSet                    string
		TcID                            int
		PreHash, HashAlg                string
		Sk, Message, Context, Signature string
	}
	Verify []struct {
		ParameterSet                    string
		TcID                            int
		Pk, Message, Context, Signature string
		TestPassed                      bool
	}
}

// slhdsaPreHashByACVP names the HashSLH-DSA mechanism of an ACVP hashAlg.
var slhdsaPreHashByACVP = map[string]uint64{
	"SHA2-224": ck.CKM_HASH_SLH_DSA_SHA224, "SHA2-256": ck.CKM_HASH_SLH_DSA_SHA256,
	"SHA2-384": ck.CKM_HASH_SLH_DSA_SHA384, "SHA2-512": ck.CKM_HASH_SLH_DSA_SHA512,
	"SHA3-224": ck.CKM_HASH_SLH_DSA_SHA3_224, "SHA3-256": ck.CKM_HASH_SLH_DSA_SHA3_256,
	"SHA3-384": ck.CKM_HASH_SLH_DSA_SHA3_384, "SHA3-512": ck.CKM_HASH_SLH_DSA_SHA3_512,
	"SHAKE-128": ck.CKM_HASH_SLH_DSA_SHAKE128, "SHAKE-256": ck.CKM_HASH_SLH_DSA_SHAKE256,
}

// slhdsaSetByName returns the CKP_ value of an ACVP parameter set name.
func slhdsaSetByName(t *testing.T, name string) uint64 {
	t.Helper()
	for ckp, s := range mech.SLHDSASets {
		if s.Name == name {
			return ckp
		}
	}
	t.Fatalf("parameter set %q unknown", name)
	return 0
}

func slhdsaObject(m *Module, sh, class, set uint64, value []byte) (uint64, error) {
	tmpl := []Attribute{aULong(ck.CKA_CLASS, class), aULong(ck.CKA_KEY_TYPE, ck.CKK_SLH_DSA),
		aULong(ck.CKA_PARAMETER_SET, set), aBytes(ck.CKA_VALUE, value)}
	if class == ck.CKO_PRIVATE_KEY {
		tmpl = append(tmpl, aBool(ck.CKA_SIGN, true))
	}
	return m.CreateObject(sh, tmpl)
}

// TestACVPSLHDSA runs the ACVP subset through the token: each keyGen
// private key imports (its root is recomputed from its seeds) with the
// expected public key in CKA_PUBLIC_KEY_INFO; each deterministic sigGen
// case signs, through C_Sign with CKM_SLH_DSA or the CKM_HASH_SLH_DSA_*
// of its hash and a CK_SIGN_ADDITIONAL_CONTEXT, to NIST's signature;
// each verify case passes or fails as NIST says. All twelve parameter
// sets and all ten pre-hashes are covered.
func TestACVPSLHDSA(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "slhdsa", "acvp_subset.json"))
	must(t, err)
	var v slhdsaACVP
	must(t, json.Unmarshal(raw, &v))
	if len(v.KeyGen) != 12 || len(v.SigGen) != 22 || len(v.Verify) != 24 {
		t.Fatalf("subset of %d/%d/%d cases, want 12/22/24", len(v.KeyGen), len(v.SigGen), len(v.Verify))
	}
	m, _, sh := readyToken(t)
	for _, c := range v.KeyGen {
		if raceEnabled && strings.HasSuffix(c.ParameterSet, "s") {
			continue
		}
		set := slhdsaSetByName(t, c.ParameterSet)
		sk, pk := unhex(t, c.Sk), unhex(t, c.Pk)
		if !bytes.Equal(sk, bytes.Join([][]byte{unhex(t, c.SkSeed), unhex(t, c.SkPrf), pk}, nil)) {
			t.Fatalf("keyGen %s tcId %d: sk is not skSeed‖skPrf‖pk", c.ParameterSet, c.TcID)
		}
		priv, err := slhdsaObject(m, sh, ck.CKO_PRIVATE_KEY, set, sk)
		must(t, err)
		if spki := attrValue(t, m, sh, priv, ck.CKA_PUBLIC_KEY_INFO); !bytes.HasSuffix(spki, pk) {
			t.Fatalf("keyGen %s tcId %d: CKA_PUBLIC_KEY_INFO does not end with NIST's pk", c.ParameterSet, c.TcID)
		}
	}
	hashes := map[uint64]bool{}
	for _, c := range v.SigGen {
		set := slhdsaSetByName(t, c.ParameterSet)
		mc := uint64(ck.CKM_SLH_DSA)
		if c.PreHash == "preHash" {
			var ok bool
			if mc, ok = slhdsaPreHashByACVP[c.HashAlg]; !ok {
				t.Fatalf("sigGen tcId %d: hash %q", c.TcID, c.HashAlg)
			}
			hashes[mc] = true
		}
		p := &SignContextParams{Hedge: ck.CKH_DETERMINISTIC_REQUIRED, Context: unhex(t, c.Context)}
		sk := unhex(t, c.Sk)
		if strings.HasSuffix(c.ParameterSet, "s") || (raceEnabled && !strings.Contains(c.ParameterSet, "128")) {
			pub, err := slhdsaObject(m, sh, ck.CKO_PUBLIC_KEY, set, sk[len(sk)/2:])
			must(t, err)
			if err := pqVerify(t, m, sh, pub, mc, p, unhex(t, c.Message), unhex(t, c.Signature)); err != nil {
				t.Fatalf("sigGen %s tcId %d: NIST's signature: %v", c.ParameterSet, c.TcID, err)
			}
			continue
		}
		priv, err := slhdsaObject(m, sh, ck.CKO_PRIVATE_KEY, set, sk)
		must(t, err)
		sig, err := pqSign(t, m, sh, priv, mc, p, unhex(t, c.Message), false)
		must(t, err)
		if !bytes.Equal(sig, unhex(t, c.Signature)) {
			t.Fatalf("sigGen %s tcId %d (%s %s): signature differs from NIST's", c.ParameterSet, c.TcID, c.PreHash, c.HashAlg)
		}
	}
	if len(hashes) != len(mech.SLHDSAPreHashes) {
		t.Fatalf("%d pre-hashes covered, want %d", len(hashes), len(mech.SLHDSAPreHashes))
	}
	for _, c := range v.Verify {
		set := slhdsaSetByName(t, c.ParameterSet)
		pub, err := slhdsaObject(m, sh, ck.CKO_PUBLIC_KEY, set, unhex(t, c.Pk))
		must(t, err)
		err = pqVerify(t, m, sh, pub, ck.CKM_SLH_DSA, &SignContextParams{Context: unhex(t, c.Context)}, unhex(t, c.Message), unhex(t, c.Signature))
		switch {
		case c.TestPassed && err != nil:
			t.Errorf("verify %s tcId %d: %v", c.ParameterSet, c.TcID, err)
		case !c.TestPassed && !isRV(err, ck.CKR_SIGNATURE_INVALID) && !isRV(err, ck.CKR_SIGNATURE_LEN_RANGE):
			t.Errorf("verify %s tcId %d: %v, want a refusal", c.ParameterSet, c.TcID, err)
		}
	}
}

// TestSLHDSAGenerateSignVerify: SLH-DSA-SHA2-128f and SHAKE-128f (under
// -race the first only) key pairs
// sign hedged (two signatures differ) and deterministically (one part
// and several give the same), pure and pre-hashed, and verify; a faulted
// signature is never released; the refusals have the standard's codes.
func TestSLHDSAGenerateSignVerify(t *testing.T) {
	m, _, sh := readyToken(t)
	msg := bytes.Repeat([]byte("hash-based "), 400)
	sets := []uint64{ck.CKP_SLH_DSA_SHA2_128F, ck.CKP_SLH_DSA_SHAKE_128F}
	if raceEnabled {
		sets = sets[:1]
	}
	for _, set := range sets {
		pub, priv, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_SLH_DSA_KEY_PAIR_GEN},
			[]Attribute{aULong(ck.CKA_PARAMETER_SET, set)}, []Attribute{aBool(ck.CKA_SIGN, true)})
		must(t, err)
		res, err := m.GetAttributeValue(sh, priv, []uint64{ck.CKA_VALUE})
		if err != nil || res[0].Err != uint64(ck.CKR_ATTRIBUTE_SENSITIVE) {
			t.Fatalf("CKA_VALUE of a sensitive SLH-DSA key: %v %d", err, res[0].Err)
		}
		for _, mc := range []uint64{ck.CKM_SLH_DSA, ck.CKM_HASH_SLH_DSA_SHA256, ck.CKM_HASH_SLH_DSA_SHAKE256} {
			ctx := []byte("release-2027")
			h1, err := pqSign(t, m, sh, priv, mc, &SignContextParams{Context: ctx}, msg, false)
			must(t, err)
			h2, err := pqSign(t, m, sh, priv, mc, &SignContextParams{Context: ctx}, msg, true)
			must(t, err)
			if bytes.Equal(h1, h2) {
				t.Fatal("two hedged signatures are equal")
			}
			det := &SignContextParams{Hedge: ck.CKH_DETERMINISTIC_REQUIRED, Context: ctx}
			d1, err := pqSign(t, m, sh, priv, mc, det, msg, false)
			must(t, err)
			d2, err := pqSign(t, m, sh, priv, mc, det, msg, true)
			must(t, err)
			if !bytes.Equal(d1, d2) {
				t.Fatal("deterministic signatures differ between one part and several")
			}
			for _, s := range [][]byte{h1, h2, d1} {
				must(t, pqVerify(t, m, sh, pub, mc, &SignContextParams{Context: ctx}, msg, s))
			}
			wantRV(t, pqVerify(t, m, sh, pub, mc, nil, msg, d1), ck.CKR_SIGNATURE_INVALID)
			wantRV(t, pqVerify(t, m, sh, pub, mc, det, msg, d1[1:]), ck.CKR_SIGNATURE_LEN_RANGE)
		}
		// The pure and pre-hashed signatures are of different messages.
		pure, err := pqSign(t, m, sh, priv, ck.CKM_SLH_DSA, &SignContextParams{Hedge: ck.CKH_DETERMINISTIC_REQUIRED}, msg, false)
		must(t, err)
		wantRV(t, pqVerify(t, m, sh, pub, ck.CKM_HASH_SLH_DSA_SHA256, nil, msg, pure), ck.CKR_SIGNATURE_INVALID)
	}
	before := len(find(t, m, sh))
	_, _, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_SLH_DSA_KEY_PAIR_GEN},
		[]Attribute{aULong(ck.CKA_PARAMETER_SET, 13)}, nil)
	wantRV(t, err, ck.CKR_PARAMETER_SET_NOT_SUPPORTED)
	_, err = slhdsaObject(m, sh, ck.CKO_PUBLIC_KEY, ck.CKP_SLH_DSA_SHA2_128F, make([]byte, 31))
	wantRV(t, err, ck.CKR_ATTRIBUTE_VALUE_INVALID)
	_, err = slhdsaObject(m, sh, ck.CKO_PRIVATE_KEY, ck.CKP_SLH_DSA_SHA2_128F, make([]byte, 64))
	wantRV(t, err, ck.CKR_ATTRIBUTE_VALUE_INVALID) // zero seeds: the root is not zero
	if n := len(find(t, m, sh)); n != before {
		t.Fatalf("%d objects after the refusals, %d before", n, before)
	}

	_, priv, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_SLH_DSA_KEY_PAIR_GEN},
		[]Attribute{aULong(ck.CKA_PARAMETER_SET, ck.CKP_SLH_DSA_SHAKE_128F)}, []Attribute{aBool(ck.CKA_SIGN, true)})
	must(t, err)
	good := mech.SLHDSASignFn
	mech.SLHDSASignFn = func(sk *slhdsa.PrivateKey, msg *slhdsa.Message, ctx []byte, det bool) ([]byte, error) {
		sig, err := good(sk, msg, ctx, det)
		sig[100] ^= 1
		return sig, err
	}
	sig, err := pqSign(t, m, sh, priv, ck.CKM_SLH_DSA, nil, msg, false)
	mech.SLHDSASignFn = good
	wantRV(t, err, ck.CKR_DEVICE_ERROR)
	if sig != nil {
		t.Fatal("a faulted SLH-DSA signature was released")
	}
}
