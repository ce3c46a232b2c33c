package token

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	circlsign "github.com/cloudflare/circl/sign"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// pqSigCap is an output buffer large enough for every ML-DSA and SLH-DSA
// signature.
const pqSigCap = 64 << 10

// pqSign signs msg with mech and its CK_SIGN_ADDITIONAL_CONTEXT (nil:
// none) in one part, or in parts of 1000 bytes when multi.
func pqSign(t testing.TB, m *Module, sh, key, mc uint64, p *SignContextParams, msg []byte, multi bool) ([]byte, error) {
	t.Helper()
	if err := m.SignInit(sh, &Mechanism{Type: mc, SignContext: p}, key); err != nil {
		return nil, err
	}
	if !multi {
		sig, _, err := m.Sign(sh, msg, Out{Cap: pqSigCap})
		return sig, err
	}
	for len(msg) > 0 {
		n := min(1000, len(msg))
		if err := m.SignUpdate(sh, msg[:n]); err != nil {
			return nil, err
		}
		msg = msg[n:]
	}
	sig, _, err := m.SignFinal(sh, Out{Cap: pqSigCap})
	return sig, err
}

// pqVerify verifies sig over msg with mech and its parameter in one part.
func pqVerify(t testing.TB, m *Module, sh, key, mc uint64, p *SignContextParams, msg, sig []byte) error {
	t.Helper()
	if err := m.VerifyInit(sh, &Mechanism{Type: mc, SignContext: p}, key); err != nil {
		return err
	}
	return m.Verify(sh, msg, sig)
}

// mldsaPublic imports an ML-DSA public key (a session object).
func mldsaPublic(m *Module, sh, set uint64, pub []byte) (uint64, error) {
	return m.CreateObject(sh, []Attribute{
		aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_ML_DSA),
		aULong(ck.CKA_PARAMETER_SET, set), aBytes(ck.CKA_VALUE, pub),
	})
}

// mldsaPrivate imports an ML-DSA private key from its seed (seed true) or
// its expanded form.
func mldsaPrivate(m *Module, sh, set uint64, key []byte, seed bool) (uint64, error) {
	t := uint64(ck.CKA_VALUE)
	if seed {
		t = ck.CKA_SEED
	}
	return m.CreateObject(sh, []Attribute{
		aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_ML_DSA),
		aULong(ck.CKA_PARAMETER_SET, set), aBytes(t, key), aBool(ck.CKA_SIGN, true),
	})
}

// mldsaFiles are the Wycheproof ML-DSA files by parameter set.
var mldsaFiles = []struct {
	set  uint64
	name string
}{{ck.CKP_ML_DSA_44, "mldsa_44"}, {ck.CKP_ML_DSA_65, "mldsa_65"}, {ck.CKP_ML_DSA_87, "mldsa_87"}}

// wycheproofMLDSA is the part of a Wycheproof ML-DSA file the tests read.
type wycheproofMLDSA struct {
	TestGroups []struct {
		PrivateSeed, PrivateKey, PublicKey string
		Tests                              []struct {
			TcID              int
			Comment           string
			Msg, Mu, Ctx, Sig string
			Result            string
			Flags             []string
			HasCtx            bool `json:"-"`
		} `json:"tests"`
	} `json:"testGroups"`
}

func readMLDSA(t *testing.T, file string) wycheproofMLDSA {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "wycheproof", file))
	must(t, err)
	var vf wycheproofMLDSA
	must(t, json.Unmarshal(raw, &vf))
	// An absent ctx is the empty context: the same signature. Mark the
	// present ones to send a CK_SIGN_ADDITIONAL_CONTEXT only then.
	var shape struct {
		TestGroups []struct {
			Tests []map[string]json.RawMessage `json:"tests"`
		} `json:"testGroups"`
	}
	must(t, json.Unmarshal(raw, &shape))
	for g := range vf.TestGroups {
		for i := range vf.TestGroups[g].Tests {
			_, vf.TestGroups[g].Tests[i].HasCtx = shape.TestGroups[g].Tests[i]["ctx"]
		}
	}
	if len(vf.TestGroups) == 0 {
		t.Fatalf("%s: no test groups", file)
	}
	return vf
}

// TestWycheproofMLDSASign runs Wycheproof's mldsa_*_sign_seed and
// _sign_noseed files through C_CreateObject and C_Sign: each private key
// is imported from its seed (CKA_SEED) or its expanded form (CKA_VALUE);
// a deterministic signature (CKH_DETERMINISTIC_REQUIRED) must be the
// file's, in one part and in several; a hedged one must verify; a context
// over 255 bytes is CKR_MECHANISM_PARAM_INVALID at C_SignInit; a key of
// the wrong length, or an expanded key out of range, is refused at import
// with CKR_ATTRIBUTE_VALUE_INVALID. The cases given as μ only (for
// ML-DSA.Sign_internal, which PKCS#11 does not reach) are counted apart.
func TestWycheproofMLDSASign(t *testing.T) {
	m, _, sh := readyToken(t)
	for _, f := range mldsaFiles {
		for _, seeded := range []bool{true, false} {
			file := f.name + "_sign_noseed_test.json"
			if seeded {
				file = f.name + "_sign_seed_test.json"
			}
			t.Run(file, func(t *testing.T) {
				vf := readMLDSA(t, file)
				var signed, refused, internal int
				for _, g := range vf.TestGroups {
					keyHex := g.PrivateKey
					if seeded {
						keyHex = g.PrivateSeed
					}
					// A group whose private key is refused may have no
					// usable public key either.
					pubKey, pubErr := mldsaPublic(m, sh, f.set, unhex(t, g.PublicKey))
					priv, importErr := mldsaPrivate(m, sh, f.set, unhex(t, keyHex), seeded)
					if importErr == nil {
						must(t, pubErr)
					}
					for _, tc := range g.Tests {
						if tc.Msg == "" && tc.Mu != "" {
							internal++
							continue
						}
						msg, want := unhex(t, tc.Msg), unhex(t, tc.Sig)
						var p *SignContextParams
						if tc.HasCtx {
							p = &SignContextParams{Hedge: ck.CKH_DETERMINISTIC_REQUIRED, Context: unhex(t, tc.Ctx)}
						} else {
							p = &SignContextParams{Hedge: ck.CKH_DETERMINISTIC_REQUIRED}
						}
						switch {
						case slices.Contains(tc.Flags, "IncorrectPrivateKeyLength"), slices.Contains(tc.Flags, "InvalidPrivateKey"):
							if !isRV(importErr, ck.CKR_ATTRIBUTE_VALUE_INVALID) {
								t.Errorf("tcId %d (%s): import %v, want CKR_ATTRIBUTE_VALUE_INVALID", tc.TcID, tc.Comment, importErr)
							}
							refused++
							continue
						case importErr != nil:
							t.Fatalf("tcId %d (%s): import: %v", tc.TcID, tc.Comment, importErr)
						case slices.Contains(tc.Flags, "InvalidContext"):
							_, err := pqSign(t, m, sh, priv, ck.CKM_ML_DSA, p, msg, false)
							wantRV(t, err, ck.CKR_MECHANISM_PARAM_INVALID)
							refused++
							continue
						case tc.Result != "valid":
							t.Fatalf("tcId %d (%s): unexpected invalid case %v", tc.TcID, tc.Comment, tc.Flags)
						}
						if slices.Contains(tc.Flags, "Randomized") {
							hedged := *p
							hedged.Hedge = ck.CKH_HEDGE_REQUIRED
							sig, err := pqSign(t, m, sh, priv, ck.CKM_ML_DSA, &hedged, msg, false)
							must(t, err)
							must(t, pqVerify(t, m, sh, pubKey, ck.CKM_ML_DSA, p, msg, sig))
							must(t, pqVerify(t, m, sh, pubKey, ck.CKM_ML_DSA, p, msg, want))
							signed++
							continue
						}
						for _, multi := range []bool{false, true} {
							sig, err := pqSign(t, m, sh, priv, ck.CKM_ML_DSA, p, msg, multi && len(msg) > 0)
							if err != nil {
								t.Fatalf("tcId %d (%s): sign: %v", tc.TcID, tc.Comment, err)
							}
							if !bytes.Equal(sig, want) {
								t.Fatalf("tcId %d (%s, multi %v): signature differs from the file's", tc.TcID, tc.Comment, multi)
							}
						}
						signed++
					}
				}
				t.Logf("%d signed as the file says, %d refused, %d μ-only cases not applicable", signed, refused, internal)
				if signed == 0 || refused == 0 {
					t.Fatalf("signed %d, refused %d: the file was not exercised", signed, refused)
				}
			})
		}
	}
}

// TestWycheproofMLDSAVerify runs Wycheproof's mldsa_*_verify files
// through C_CreateObject and C_Verify: every valid signature verifies;
// a public key of the wrong length is refused at import
// (CKR_ATTRIBUTE_VALUE_INVALID), a context over 255 bytes at
// C_VerifyInit (CKR_MECHANISM_PARAM_INVALID), a signature of the wrong
// length with CKR_SIGNATURE_LEN_RANGE and every other invalid one with
// CKR_SIGNATURE_INVALID.
func TestWycheproofMLDSAVerify(t *testing.T) {
	m, _, sh := readyToken(t)
	for _, f := range mldsaFiles {
		file := f.name + "_verify_test.json"
		t.Run(file, func(t *testing.T) {
			vf := readMLDSA(t, file)
			var valid, invalid int
			for _, g := range vf.TestGroups {
				pub, importErr := mldsaPublic(m, sh, f.set, unhex(t, g.PublicKey))
				for _, tc := range g.Tests {
					msg, sig := unhex(t, tc.Msg), unhex(t, tc.Sig)
					var p *SignContextParams
					if tc.HasCtx {
						p = &SignContextParams{Context: unhex(t, tc.Ctx)}
					}
					if slices.Contains(tc.Flags, "IncorrectPublicKeyLength") {
						if !isRV(importErr, ck.CKR_ATTRIBUTE_VALUE_INVALID) {
							t.Errorf("tcId %d (%s): import %v, want CKR_ATTRIBUTE_VALUE_INVALID", tc.TcID, tc.Comment, importErr)
						}
						invalid++
						continue
					}
					must(t, importErr)
					err := pqVerify(t, m, sh, pub, ck.CKM_ML_DSA, p, msg, sig)
					switch {
					case tc.Result == "valid":
						if err != nil {
							t.Errorf("tcId %d (%s): %v", tc.TcID, tc.Comment, err)
						}
						valid++
						continue
					case slices.Contains(tc.Flags, "InvalidContext"):
						if !isRV(err, ck.CKR_MECHANISM_PARAM_INVALID) {
							t.Errorf("tcId %d (%s): %v, want CKR_MECHANISM_PARAM_INVALID", tc.TcID, tc.Comment, err)
						}
					case slices.Contains(tc.Flags, "IncorrectSignatureLength"):
						if !isRV(err, ck.CKR_SIGNATURE_LEN_RANGE) {
							t.Errorf("tcId %d (%s): %v, want CKR_SIGNATURE_LEN_RANGE", tc.TcID, tc.Comment, err)
						}
					default:
						if !isRV(err, ck.CKR_SIGNATURE_INVALID) {
							t.Errorf("tcId %d (%s): %v, want CKR_SIGNATURE_INVALID", tc.TcID, tc.Comment, err)
						}
					}
					invalid++
				}
			}
			t.Logf("%d valid verified, %d invalid refused", valid, invalid)
			if valid == 0 || invalid == 0 {
				t.Fatalf("valid %d, invalid %d: the file was not exercised", valid, invalid)
			}
		})
	}
}

// mldsaGenerate makes an ML-DSA key pair of parameter set set.
func mldsaGenerate(t testing.TB, m *Module, sh, set uint64, extraPriv ...Attribute) (pub, priv uint64, err error) {
	t.Helper()
	return m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_ML_DSA_KEY_PAIR_GEN},
		[]Attribute{aULong(ck.CKA_PARAMETER_SET, set), aBool(ck.CKA_VERIFY, true)},
		append([]Attribute{aBool(ck.CKA_SIGN, true)}, extraPriv...))
}

// TestMLDSAGenerateSignVerify: a generated key pair of each parameter set
// signs hedged (two signatures of one message differ, both verify) and
// deterministically (repeatable, one part or several), with and without
// a context; the private key keeps its seed sealed (CKA_SEED sensitive)
// and both keys carry the SPKI of the parameter set.
func TestMLDSAGenerateSignVerify(t *testing.T) {
	m, _, sh := readyToken(t)
	msg := bytes.Repeat([]byte("post-quantum "), 300)
	for _, set := range []uint64{ck.CKP_ML_DSA_44, ck.CKP_ML_DSA_65, ck.CKP_ML_DSA_87} {
		pub, priv, err := mldsaGenerate(t, m, sh, set)
		must(t, err)
		res, err := m.GetAttributeValue(sh, priv, []uint64{ck.CKA_SEED, ck.CKA_PARAMETER_SET, ck.CKA_LOCAL})
		if err != nil || res[0].Err != uint64(ck.CKR_ATTRIBUTE_SENSITIVE) {
			t.Fatalf("CKA_SEED of a sensitive key: %v %v", err, res[0].Err)
		}
		if v, _ := ck.ParseULong(res[1].Value); v != set {
			t.Fatalf("private CKA_PARAMETER_SET %d, want %d", v, set)
		}
		spki := attrValue(t, m, sh, pub, ck.CKA_PUBLIC_KEY_INFO)
		if !bytes.Equal(spki, attrValue(t, m, sh, priv, ck.CKA_PUBLIC_KEY_INFO)) || !bytes.Contains(spki, attrValue(t, m, sh, pub, ck.CKA_VALUE)) {
			t.Fatal("the keys' CKA_PUBLIC_KEY_INFO do not carry the public key")
		}
		for _, ctx := range [][]byte{nil, []byte("firmware-v2"), bytes.Repeat([]byte{7}, 255)} {
			hedged := &SignContextParams{Context: ctx}
			s1, err := pqSign(t, m, sh, priv, ck.CKM_ML_DSA, hedged, msg, false)
			must(t, err)
			s2, err := pqSign(t, m, sh, priv, ck.CKM_ML_DSA, hedged, msg, true)
			must(t, err)
			if bytes.Equal(s1, s2) {
				t.Fatal("two hedged signatures are equal")
			}
			for _, s := range [][]byte{s1, s2} {
				must(t, pqVerify(t, m, sh, pub, ck.CKM_ML_DSA, hedged, msg, s))
			}
			det := &SignContextParams{Hedge: ck.CKH_DETERMINISTIC_REQUIRED, Context: ctx}
			d1, err := pqSign(t, m, sh, priv, ck.CKM_ML_DSA, det, msg, false)
			must(t, err)
			d2, err := pqSign(t, m, sh, priv, ck.CKM_ML_DSA, det, msg, true)
			must(t, err)
			if !bytes.Equal(d1, d2) {
				t.Fatal("deterministic signatures differ between one part and several")
			}
			must(t, pqVerify(t, m, sh, pub, ck.CKM_ML_DSA, det, msg, d1))
			if ctx != nil {
				wantRV(t, pqVerify(t, m, sh, pub, ck.CKM_ML_DSA, nil, msg, d1), ck.CKR_SIGNATURE_INVALID)
			}
		}
	}
}

// TestMLDSAConformance: each refusal has the standard's code and stores
// nothing.
func TestMLDSAConformance(t *testing.T) {
	m, _, sh := readyToken(t)
	pub, priv, err := mldsaGenerate(t, m, sh, ck.CKP_ML_DSA_44)
	must(t, err)
	before := len(find(t, m, sh))
	gen := func(pubSet []byte, privExtra ...Attribute) error {
		pubT := []Attribute{aBool(ck.CKA_VERIFY, true)}
		if pubSet != nil {
			pubT = append(pubT, aBytes(ck.CKA_PARAMETER_SET, pubSet))
		}
		_, _, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_ML_DSA_KEY_PAIR_GEN}, pubT, privExtra)
		return err
	}
	seed := bytes.Repeat([]byte{1}, 32)
	long := bytes.Repeat([]byte{'c'}, 256)
	cases := []struct {
		name string
		err  error
		want ck.Error
	}{
		{"parameter set 4", gen(ck.ULong(4)), ck.CKR_PARAMETER_SET_NOT_SUPPORTED},
		{"parameter set 0", gen(ck.ULong(0)), ck.CKR_PARAMETER_SET_NOT_SUPPORTED},
		{"parameter set not a CK_ULONG", gen([]byte{2}), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"no parameter set", gen(nil), ck.CKR_TEMPLATE_INCOMPLETE},
		{"parameter sets differ", gen(ck.ULong(ck.CKP_ML_DSA_65), aULong(ck.CKA_PARAMETER_SET, ck.CKP_ML_DSA_87)), ck.CKR_TEMPLATE_INCONSISTENT},
		{"seed in the generation template", gen(ck.ULong(ck.CKP_ML_DSA_65), aBytes(ck.CKA_SEED, seed)), ck.CKR_ATTRIBUTE_READ_ONLY},
		{"import without seed or value", func() error {
			_, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_ML_DSA),
				aULong(ck.CKA_PARAMETER_SET, ck.CKP_ML_DSA_65)})
			return err
		}(), ck.CKR_TEMPLATE_INCOMPLETE},
		{"import of an unknown parameter set", func() error { _, err := mldsaPrivate(m, sh, 9, seed, true); return err }(), ck.CKR_PARAMETER_SET_NOT_SUPPORTED},
		{"import of a short public key", func() error { _, err := mldsaPublic(m, sh, ck.CKP_ML_DSA_65, seed); return err }(), ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"seed and expanded key that disagree", func() error {
			otherPub, other, err := mldsaGenerate(t, m, sh, ck.CKP_ML_DSA_44, aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true))
			must(t, err)
			expanded := expandedOf(t, m, sh, other)
			_, err = m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_ML_DSA),
				aULong(ck.CKA_PARAMETER_SET, ck.CKP_ML_DSA_44), aBytes(ck.CKA_SEED, seed), aBytes(ck.CKA_VALUE, expanded)})
			must(t, m.DestroyObject(sh, other))
			must(t, m.DestroyObject(sh, otherPub))
			return err
		}(), ck.CKR_TEMPLATE_INCONSISTENT},
		{"context of 256 bytes", func() error {
			_, err := pqSign(t, m, sh, priv, ck.CKM_ML_DSA, &SignContextParams{Context: long}, nil, false)
			return err
		}(), ck.CKR_MECHANISM_PARAM_INVALID},
		{"verify with a context of 256 bytes", pqVerify(t, m, sh, pub, ck.CKM_ML_DSA, &SignContextParams{Context: long}, nil, nil), ck.CKR_MECHANISM_PARAM_INVALID},
		{"hedge variant 3", func() error {
			_, err := pqSign(t, m, sh, priv, ck.CKM_ML_DSA, &SignContextParams{Hedge: 3}, nil, false)
			return err
		}(), ck.CKR_MECHANISM_PARAM_INVALID},
		{"CK_HASH_SIGN_ADDITIONAL_CONTEXT on pure ML-DSA", func() error {
			_, err := pqSign(t, m, sh, priv, ck.CKM_ML_DSA, &SignContextParams{HasHash: true, Hash: ck.CKM_SHA256}, nil, false)
			return err
		}(), ck.CKR_MECHANISM_PARAM_INVALID},
		{"raw parameter bytes", m.SignInit(sh, &Mechanism{Type: ck.CKM_ML_DSA, Param: []byte{0}}, priv), ck.CKR_MECHANISM_PARAM_INVALID},
		{"CKM_ECDSA with an ML-DSA key", m.SignInit(sh, &Mechanism{Type: ck.CKM_ECDSA}, priv), ck.CKR_KEY_TYPE_INCONSISTENT},
		{"CKM_ML_DSA with a public key", m.SignInit(sh, &Mechanism{Type: ck.CKM_ML_DSA}, pub), ck.CKR_KEY_TYPE_INCONSISTENT},
		{"signature one byte short", pqVerify(t, m, sh, pub, ck.CKM_ML_DSA, nil, []byte("m"), make([]byte, 2419)), ck.CKR_SIGNATURE_LEN_RANGE},
		{"zero signature", pqVerify(t, m, sh, pub, ck.CKM_ML_DSA, nil, []byte("m"), make([]byte, 2420)), ck.CKR_SIGNATURE_INVALID},
	}
	for _, c := range cases {
		if !isRV(c.err, c.want) {
			t.Errorf("%s: %v, want %s", c.name, c.err, c.want)
		}
	}
	if n := len(find(t, m, sh)); n != before {
		t.Fatalf("%d objects after the refusals, %d before", n, before)
	}
	// A too-small output buffer is CKR_BUFFER_TOO_SMALL and the
	// operation stays for the retry.
	must(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_ML_DSA}, priv))
	_, n, err := m.Sign(sh, []byte("m"), Out{Cap: 100})
	wantRV(t, err, ck.CKR_BUFFER_TOO_SMALL)
	if n != 2420 {
		t.Fatalf("length %d reported, want 2420", n)
	}
	sig, _, err := m.Sign(sh, []byte("m"), Out{Cap: n})
	must(t, err)
	must(t, pqVerify(t, m, sh, pub, ck.CKM_ML_DSA, nil, []byte("m"), sig))
}

// expandedOf reads the expanded private key of a non-sensitive key made
// from a seed, as its seed implies it.
func expandedOf(t *testing.T, m *Module, sh, priv uint64) []byte {
	t.Helper()
	set, err := mech.MLDSASetByValue(attrValue(t, m, sh, priv, ck.CKA_PARAMETER_SET), true)
	must(t, err)
	_, sk := set.Scheme.DeriveKey(attrValue(t, m, sh, priv, ck.CKA_SEED))
	b, err := sk.MarshalBinary()
	must(t, err)
	return b
}

// TestMLDSAFaultNeverReleased: a signing that goes wrong (a bit flipped
// in the signature, as a fault in the lattice arithmetic would) answers
// CKR_DEVICE_ERROR and releases no signature; the next one is fine.
func TestMLDSAFaultNeverReleased(t *testing.T) {
	m, _, sh := readyToken(t)
	pub, priv, err := mldsaGenerate(t, m, sh, ck.CKP_ML_DSA_65)
	must(t, err)
	set := mech.MLDSASets[ck.CKP_ML_DSA_65]
	good := set.SignTo
	set.SignTo = func(sk circlsign.PrivateKey, msg, ctx []byte, rnd bool) ([]byte, error) {
		sig, err := good(sk, msg, ctx, rnd)
		sig[len(sig)/2] ^= 0x10
		return sig, err
	}
	sig, err := pqSign(t, m, sh, priv, ck.CKM_ML_DSA, nil, []byte("boot image"), false)
	set.SignTo = good
	wantRV(t, err, ck.CKR_DEVICE_ERROR)
	if sig != nil {
		t.Fatal("a faulted signature was released")
	}
	sig, err = pqSign(t, m, sh, priv, ck.CKM_ML_DSA, nil, []byte("boot image"), false)
	must(t, err)
	must(t, pqVerify(t, m, sh, pub, ck.CKM_ML_DSA, nil, []byte("boot image"), sig))
}
