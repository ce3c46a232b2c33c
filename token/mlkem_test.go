package token

import (
	"bytes"
	"crypto/mlkem"
	"encoding/asn1"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// mlkemSetsByName maps Wycheproof's parameterSet to CKP_ values.
var mlkemSetsByName = map[string]uint64{
	"ML-KEM-512": ck.CKP_ML_KEM_512, "ML-KEM-768": ck.CKP_ML_KEM_768, "ML-KEM-1024": ck.CKP_ML_KEM_1024,
}

// sharedKeyTmpl is the template of an extractable generic secret (session
// object) made by a KEM, so that tests can read its value.
func sharedKeyTmpl(extra ...Attribute) []Attribute {
	return append([]Attribute{aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true)}, extra...)
}

func mlkemPrivTmpl(set uint64, seed, dk []byte) []Attribute {
	t := []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_ML_KEM)}
	if set != 0 {
		t = append(t, aULong(ck.CKA_PARAMETER_SET, set))
	}
	if seed != nil {
		t = append(t, aBytes(ck.CKA_SEED, seed))
	}
	if dk != nil {
		t = append(t, aBytes(ck.CKA_VALUE, dk))
	}
	return t
}

func mlkemPubTmpl(set uint64, ek []byte) []Attribute {
	t := []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_ML_KEM), aBytes(ck.CKA_VALUE, ek)}
	if set != 0 {
		t = append(t, aULong(ck.CKA_PARAMETER_SET, set))
	}
	return t
}

// spkiKey returns the subjectPublicKey bits of a SubjectPublicKeyInfo.
func spkiKey(t *testing.T, der []byte) (asn1.ObjectIdentifier, []byte) {
	t.Helper()
	var s struct {
		Alg struct{ OID asn1.ObjectIdentifier }
		Key asn1.BitString
	}
	if rest, err := asn1.Unmarshal(der, &s); err != nil || len(rest) != 0 {
		t.Fatalf("CKA_PUBLIC_KEY_INFO: %v", err)
	}
	return s.Alg.OID, s.Key.Bytes
}

// decapsulate runs C_DecapsulateKey and returns the new key's value.
func decapsulate(t *testing.T, m *Module, sh, priv uint64, ct []byte) ([]byte, error) {
	t.Helper()
	h, err := m.DecapsulateKey(sh, &Mechanism{Type: ck.CKM_ML_KEM}, priv, sharedKeyTmpl(), ct)
	if err != nil {
		return nil, err
	}
	return attrValue(t, m, sh, h, ck.CKA_VALUE), nil
}

func readWycheproof(t *testing.T, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "wycheproof", name))
	must(t, err)
	must(t, json.Unmarshal(raw, v))
}

// TestWycheproofMLKEM runs Wycheproof's mlkem_{512,768,1024}_test.json
// through C_CreateObject and C_DecapsulateKey: each private key is
// imported from its seed, its public key (CKA_PUBLIC_KEY_INFO) is the
// vector's ek, and every ciphertext decapsulates to the vector's K — the
// random and bit-flipped ones to FIPS 203's implicit rejection key. A
// seed of the wrong length is refused at import, a ciphertext of the
// wrong length with CKR_ENCRYPTED_DATA_LEN_RANGE.
func TestWycheproofMLKEM(t *testing.T) {
	m, _, sh := readyToken(t)
	for _, size := range []string{"512", "768", "1024"} {
		var vf struct {
			TestGroups []struct {
				ParameterSet string
				Tests        []struct {
					TcID           int
					Comment        string
					Seed, Ek, C, K string
					Result         string
				}
			}
		}
		readWycheproof(t, "mlkem_"+size+"_test.json", &vf)
		n := 0
		for _, g := range vf.TestGroups {
			set := mlkemSetsByName[g.ParameterSet]
			for _, tc := range g.Tests {
				n++
				name := fmt.Sprintf("%s/%d", g.ParameterSet, tc.TcID)
				priv, err := m.CreateObject(sh, mlkemPrivTmpl(set, unhex(t, tc.Seed), nil))
				if tc.Result != "valid" && len(tc.Seed) != 128 {
					if !isRV(err, ck.CKR_ATTRIBUTE_VALUE_INVALID) {
						t.Errorf("%s (%s): import of a %d-byte seed = %v, want CKR_ATTRIBUTE_VALUE_INVALID", name, tc.Comment, len(tc.Seed)/2, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: import: %v", name, err)
				}
				if tc.Ek != "" {
					_, ek := spkiKey(t, attrValue(t, m, sh, priv, ck.CKA_PUBLIC_KEY_INFO))
					if !bytes.Equal(ek, unhex(t, tc.Ek)) {
						t.Errorf("%s: the seed's public key differs from the vector's ek", name)
					}
				}
				k, err := decapsulate(t, m, sh, priv, unhex(t, tc.C))
				switch {
				case tc.Result == "valid" && err != nil:
					t.Errorf("%s (%s): decapsulate: %v", name, tc.Comment, err)
				case tc.Result == "valid" && !bytes.Equal(k, unhex(t, tc.K)):
					t.Errorf("%s (%s): shared secret %x, want %s", name, tc.Comment, k, tc.K)
				case tc.Result != "valid" && !isRV(err, ck.CKR_ENCRYPTED_DATA_LEN_RANGE):
					t.Errorf("%s (%s): decapsulate = %v, want CKR_ENCRYPTED_DATA_LEN_RANGE", name, tc.Comment, err)
				}
				must(t, m.DestroyObject(sh, priv))
			}
		}
		if n < 100 {
			t.Errorf("mlkem_%s_test.json: %d cases", size, n)
		}
	}
}

// TestWycheproofMLKEMExpanded runs the semi-expanded decapsulation
// vectors: a private key imported in the expanded form (CKA_VALUE)
// decapsulates to K; a key of the wrong length, a corrupted H(ek) or
// embedded ek is refused at import (CKR_ATTRIBUTE_VALUE_INVALID), a
// ciphertext of the wrong length at decapsulation.
func TestWycheproofMLKEMExpanded(t *testing.T) {
	m, _, sh := readyToken(t)
	for _, size := range []string{"512", "768", "1024"} {
		var vf struct {
			TestGroups []struct {
				ParameterSet string
				Tests        []struct {
					TcID     int
					Comment  string
					Dk, C, K string
					Result   string
					Flags    []string
				}
			}
		}
		readWycheproof(t, "mlkem_"+size+"_semi_expanded_decaps_test.json", &vf)
		for _, g := range vf.TestGroups {
			set := mlkemSetsByName[g.ParameterSet]
			for _, tc := range g.Tests {
				name := fmt.Sprintf("%s/%d %s", g.ParameterSet, tc.TcID, tc.Comment)
				lenBad := len(tc.Flags) > 0 && tc.Flags[0] == "IncorrectCiphertextLength"
				priv, err := m.CreateObject(sh, mlkemPrivTmpl(set, nil, unhex(t, tc.Dk)))
				if tc.Result != "valid" && !lenBad {
					if err == nil {
						t.Errorf("%s: invalid key imported", name)
					} else if !isRV(err, ck.CKR_ATTRIBUTE_VALUE_INVALID) && !isRV(err, ck.CKR_TEMPLATE_INCONSISTENT) {
						t.Errorf("%s: import = %v", name, err)
					}
					continue
				}
				must(t, err)
				k, err := decapsulate(t, m, sh, priv, unhex(t, tc.C))
				if lenBad {
					wantRV(t, err, ck.CKR_ENCRYPTED_DATA_LEN_RANGE)
					continue
				}
				must(t, err)
				if !bytes.Equal(k, unhex(t, tc.K)) {
					t.Errorf("%s: shared secret %x, want %s", name, k, tc.K)
				}
			}
		}
	}
}

// TestWycheproofMLKEMEncaps imports each encapsulation key of the
// mlkem_*_encaps_test.json files: the valid ones are accepted and
// encapsulated to (the ciphertext has the set's length and the key the
// template's), the unreduced or mis-sized ones refused with
// CKR_ATTRIBUTE_VALUE_INVALID or CKR_TEMPLATE_INCONSISTENT.
func TestWycheproofMLKEMEncaps(t *testing.T) {
	m, _, sh := readyToken(t)
	for _, size := range []string{"512", "768", "1024"} {
		var vf struct {
			TestGroups []struct {
				ParameterSet string
				Tests        []struct {
					TcID    int
					Comment string
					Ek      string
					Result  string
				}
			}
		}
		readWycheproof(t, "mlkem_"+size+"_encaps_test.json", &vf)
		invalid := 0
		for _, g := range vf.TestGroups {
			set := mlkemSetsByName[g.ParameterSet]
			p := mech.MLKEMSets[set]
			for i, tc := range g.Tests {
				name := fmt.Sprintf("%s/%d %s", g.ParameterSet, tc.TcID, tc.Comment)
				pub, err := m.CreateObject(sh, mlkemPubTmpl(set, unhex(t, tc.Ek)))
				if tc.Result != "valid" {
					invalid++
					if err == nil {
						t.Errorf("%s: invalid encapsulation key imported", name)
					} else if !isRV(err, ck.CKR_ATTRIBUTE_VALUE_INVALID) && !isRV(err, ck.CKR_TEMPLATE_INCONSISTENT) {
						t.Errorf("%s: import = %v", name, err)
					}
					continue
				}
				must(t, err)
				if i%8 != 0 {
					continue // encapsulate to a sample; the import check covers all
				}
				ct, need, h, err := m.EncapsulateKey(sh, &Mechanism{Type: ck.CKM_ML_KEM}, pub, sharedKeyTmpl(), Out{Cap: 4096})
				must(t, err)
				if len(ct) != p.CTLen() || need != p.CTLen() {
					t.Errorf("%s: ciphertext of %d bytes (need %d), want %d", name, len(ct), need, p.CTLen())
				}
				if v := attrValue(t, m, sh, h, ck.CKA_VALUE); len(v) != 32 {
					t.Errorf("%s: shared key of %d bytes", name, len(v))
				}
			}
		}
		if invalid < 100 {
			t.Errorf("mlkem_%s_encaps_test.json: only %d invalid keys", size, invalid)
		}
	}
}

// genMLKEM generates an ML-KEM key pair of set on the token.
func genMLKEM(t *testing.T, m *Module, sh, set uint64, priv ...Attribute) (uint64, uint64) {
	t.Helper()
	pub, pk, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_ML_KEM_KEY_PAIR_GEN},
		[]Attribute{aULong(ck.CKA_PARAMETER_SET, set)}, priv)
	must(t, err)
	return pub, pk
}

// TestMLKEMRoundTrip generates a key pair of each set, encapsulates with
// the public key and decapsulates with the private key: the two secret
// keys are equal, and usable by the rest of the token (an AES-GCM key
// encrypts under one and decrypts under the other). The generated key is
// kept as its seed: CKA_SEED is set, the expanded CKA_VALUE is not
// stored. A second library (Go's crypto/mlkem, for 768 and 1024) agrees:
// it decapsulates the token's ciphertext to the same secret from the
// seed, and the token decapsulates its ciphertext.
func TestMLKEMRoundTrip(t *testing.T) {
	m, _, sh := readyToken(t)
	for _, set := range []uint64{ck.CKP_ML_KEM_512, ck.CKP_ML_KEM_768, ck.CKP_ML_KEM_1024} {
		p := mech.MLKEMSets[set]
		t.Run(p.Name, func(t *testing.T) {
			pub, priv := genMLKEM(t, m, sh, set, aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true))
			if got, _ := ck.ParseULong(attrValue(t, m, sh, priv, ck.CKA_PARAMETER_SET)); got != set {
				t.Fatalf("private CKA_PARAMETER_SET %d", got)
			}
			seed := attrValue(t, m, sh, priv, ck.CKA_SEED)
			if len(seed) != 64 {
				t.Fatalf("CKA_SEED of %d bytes", len(seed))
			}
			if res, err := m.GetAttributeValue(sh, priv, []uint64{ck.CKA_VALUE}); err == nil && res[0].Err == 0 {
				t.Errorf("a seed-kept key has a stored CKA_VALUE of %d bytes", len(res[0].Value))
			}
			aes := []Attribute{aULong(ck.CKA_KEY_TYPE, ck.CKK_AES), aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true)}
			// The length query and a short buffer make no key.
			before := len(find(t, m, sh, aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY)))
			_, need, _, err := m.EncapsulateKey(sh, &Mechanism{Type: ck.CKM_ML_KEM}, pub, aes, Out{Query: true})
			must(t, err)
			if need != p.CTLen() {
				t.Fatalf("length query: %d, want %d", need, p.CTLen())
			}
			_, need, _, err = m.EncapsulateKey(sh, &Mechanism{Type: ck.CKM_ML_KEM}, pub, aes, Out{Cap: need - 1})
			wantRV(t, err, ck.CKR_BUFFER_TOO_SMALL)
			if need != p.CTLen() {
				t.Errorf("CKR_BUFFER_TOO_SMALL reports %d, want %d", need, p.CTLen())
			}
			if after := len(find(t, m, sh, aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY))); after != before {
				t.Fatalf("%d secret keys made by a length query or a short buffer", after-before)
			}
			ct, _, hEnc, err := m.EncapsulateKey(sh, &Mechanism{Type: ck.CKM_ML_KEM}, pub, aes, Out{Cap: need})
			must(t, err)
			hDec, err := m.DecapsulateKey(sh, &Mechanism{Type: ck.CKM_ML_KEM}, priv, aes, ct)
			must(t, err)
			kEnc, kDec := attrValue(t, m, sh, hEnc, ck.CKA_VALUE), attrValue(t, m, sh, hDec, ck.CKA_VALUE)
			if len(kEnc) != 32 || !bytes.Equal(kEnc, kDec) {
				t.Fatalf("encapsulated %x, decapsulated %x", kEnc, kDec)
			}
			// The secret keys serve AES-GCM.
			iv := make([]byte, 12)
			gcm := &Mechanism{Type: ck.CKM_AES_GCM, GCM: &GCMParams{IV: iv, TagBits: 128}}
			must(t, m.EncryptInit(sh, gcm, hEnc))
			sealed, _, err := m.Encrypt(sh, []byte("hello, ML-KEM"), Out{Cap: 64})
			must(t, err)
			must(t, m.DecryptInit(sh, gcm, hDec))
			plain, _, err := m.Decrypt(sh, sealed, Out{Cap: 64})
			must(t, err)
			if string(plain) != "hello, ML-KEM" {
				t.Fatalf("AES-GCM through the KEM keys: %q", plain)
			}
			// Go's crypto/mlkem as the second implementation.
			var dec func([]byte) ([]byte, error)
			var enc func() ([]byte, []byte)
			switch set {
			case ck.CKP_ML_KEM_768:
				k, err := mlkem.NewDecapsulationKey768(seed)
				must(t, err)
				dec, enc = k.Decapsulate, k.EncapsulationKey().Encapsulate
			case ck.CKP_ML_KEM_1024:
				k, err := mlkem.NewDecapsulationKey1024(seed)
				must(t, err)
				dec, enc = k.Decapsulate, k.EncapsulationKey().Encapsulate
			default:
				return
			}
			theirs, err := dec(ct)
			must(t, err)
			if !bytes.Equal(theirs, kEnc) {
				t.Errorf("crypto/mlkem decapsulates the token's ciphertext to another secret")
			}
			secret, ct2 := enc()
			k2, err := decapsulate(t, m, sh, priv, ct2)
			must(t, err)
			if !bytes.Equal(k2, secret) {
				t.Errorf("the token decapsulates crypto/mlkem's ciphertext to another secret")
			}
		})
	}
}

// TestMLKEMConformance: the standard's codes for what the token refuses,
// with nothing stored.
func TestMLKEMConformance(t *testing.T) {
	m, _, sh := readyToken(t)
	pub, priv := genMLKEM(t, m, sh, ck.CKP_ML_KEM_768)
	mc := &Mechanism{Type: ck.CKM_ML_KEM}
	ct, _, _, err := m.EncapsulateKey(sh, mc, pub, nil, Out{Cap: 2048})
	must(t, err)
	ecPub, _, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_EC_KEY_PAIR_GEN},
		[]Attribute{aBytes(ck.CKA_EC_PARAMS, []byte{0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07})}, nil)
	must(t, err)
	noEncap, err := m.CreateObject(sh, append(mlkemPubTmpl(0, attrValue(t, m, sh, pub, ck.CKA_VALUE)), aBool(ck.CKA_ENCAPSULATE, false)))
	must(t, err)
	count := func() int { return len(find(t, m, sh, aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY))) }
	before := count()
	for _, c := range []struct {
		name string
		call func() error
		want ck.Error
	}{
		{"generate without a parameter set", func() error {
			_, _, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_ML_KEM_KEY_PAIR_GEN}, nil, nil)
			return err
		}, ck.CKR_TEMPLATE_INCOMPLETE},
		{"generate with an ML-DSA parameter set number", func() error {
			_, _, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_ML_KEM_KEY_PAIR_GEN}, []Attribute{aULong(ck.CKA_PARAMETER_SET, 7)}, nil)
			return err
		}, ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"parameter sets differ", func() error {
			_, _, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_ML_KEM_KEY_PAIR_GEN},
				[]Attribute{aULong(ck.CKA_PARAMETER_SET, ck.CKP_ML_KEM_768)}, []Attribute{aULong(ck.CKA_PARAMETER_SET, ck.CKP_ML_KEM_512)})
			return err
		}, ck.CKR_TEMPLATE_INCONSISTENT},
		{"import: ek length does not fit the set", func() error {
			_, err := m.CreateObject(sh, mlkemPubTmpl(ck.CKP_ML_KEM_512, attrValue(t, m, sh, pub, ck.CKA_VALUE)))
			return err
		}, ck.CKR_TEMPLATE_INCONSISTENT},
		{"import: seed without a parameter set", func() error {
			_, err := m.CreateObject(sh, mlkemPrivTmpl(0, make([]byte, 64), nil))
			return err
		}, ck.CKR_TEMPLATE_INCOMPLETE},
		{"decapsulate with the public key", func() error {
			_, err := m.DecapsulateKey(sh, mc, pub, nil, ct)
			return err
		}, ck.CKR_KEY_TYPE_INCONSISTENT},
		{"encapsulate with the private key", func() error {
			_, _, _, err := m.EncapsulateKey(sh, mc, priv, nil, Out{Cap: 2048})
			return err
		}, ck.CKR_KEY_TYPE_INCONSISTENT},
		{"encapsulate with an EC key", func() error {
			_, _, _, err := m.EncapsulateKey(sh, mc, ecPub, nil, Out{Cap: 2048})
			return err
		}, ck.CKR_KEY_TYPE_INCONSISTENT},
		{"CKA_ENCAPSULATE false", func() error {
			_, _, _, err := m.EncapsulateKey(sh, mc, noEncap, nil, Out{Cap: 2048})
			return err
		}, ck.CKR_KEY_FUNCTION_NOT_PERMITTED},
		{"a mechanism that is no KEM", func() error {
			_, _, _, err := m.EncapsulateKey(sh, &Mechanism{Type: ck.CKM_ECDH1_DERIVE}, pub, nil, Out{Cap: 2048})
			return err
		}, ck.CKR_MECHANISM_INVALID},
		{"a parameter to CKM_ML_KEM", func() error {
			_, _, _, err := m.EncapsulateKey(sh, &Mechanism{Type: ck.CKM_ML_KEM, Param: []byte{1}}, pub, nil, Out{Cap: 2048})
			return err
		}, ck.CKR_MECHANISM_PARAM_INVALID},
		{"ciphertext one byte short", func() error {
			_, err := m.DecapsulateKey(sh, mc, priv, nil, ct[1:])
			return err
		}, ck.CKR_ENCRYPTED_DATA_LEN_RANGE},
		{"AES key of 64 bytes", func() error {
			_, err := m.DecapsulateKey(sh, mc, priv, []Attribute{aULong(ck.CKA_KEY_TYPE, ck.CKK_AES), aULong(ck.CKA_VALUE_LEN, 64)}, ct)
			return err
		}, ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"generic secret longer than the shared secret", func() error {
			_, _, _, err := m.EncapsulateKey(sh, mc, pub, []Attribute{aULong(ck.CKA_VALUE_LEN, 33)}, Out{Cap: 2048})
			return err
		}, ck.CKR_TEMPLATE_INCONSISTENT},
		{"CKA_VALUE in the template", func() error {
			_, err := m.DecapsulateKey(sh, mc, priv, []Attribute{aBytes(ck.CKA_VALUE, make([]byte, 32))}, ct)
			return err
		}, ck.CKR_ATTRIBUTE_READ_ONLY},
		{"a public key class for the new key", func() error {
			_, err := m.DecapsulateKey(sh, mc, priv, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY)}, ct)
			return err
		}, ck.CKR_TEMPLATE_INCONSISTENT},
	} {
		t.Run(c.name, func(t *testing.T) { wantRV(t, c.call(), c.want) })
	}
	if after := count(); after != before {
		t.Errorf("%d secret keys stored by refused calls", after-before)
	}
	// A shorter CKA_VALUE_LEN takes the secret's leading bytes.
	h16, err := m.DecapsulateKey(sh, mc, priv, sharedKeyTmpl(aULong(ck.CKA_KEY_TYPE, ck.CKK_AES), aULong(ck.CKA_VALUE_LEN, 16)), ct)
	must(t, err)
	h32, err := m.DecapsulateKey(sh, mc, priv, sharedKeyTmpl(), ct)
	must(t, err)
	if k16, k32 := attrValue(t, m, sh, h16, ck.CKA_VALUE), attrValue(t, m, sh, h32, ck.CKA_VALUE); !bytes.Equal(k16, k32[:16]) {
		t.Errorf("AES-128 key %x is not the leading half of %x", k16, k32)
	}
	// The key's CKA_DECAPSULATE_TEMPLATE binds the new key.
	_, bound := genMLKEM(t, m, sh, ck.CKP_ML_KEM_768,
		Attribute{Type: ck.CKA_DECAPSULATE_TEMPLATE, Value: EncodeAttributes([]Attribute{aBool(ck.CKA_EXTRACTABLE, false)})})
	_, err = m.DecapsulateKey(sh, mc, bound, sharedKeyTmpl(), ct)
	wantRV(t, err, ck.CKR_TEMPLATE_INCONSISTENT)
}

// TestMLKEMImportForms imports one key as its seed, as its expanded form,
// and as both: the three decapsulate alike; both forms that disagree are
// CKR_TEMPLATE_INCONSISTENT. The expanded-only key keeps CKA_VALUE sealed
// (CKR_ATTRIBUTE_SENSITIVE when sensitive).
func TestMLKEMImportForms(t *testing.T) {
	m, _, sh := readyToken(t)
	p := mech.MLKEMSets[ck.CKP_ML_KEM_768]
	seed := bytes.Repeat([]byte{7}, 64)
	dk, err := p.Expanded(seed)
	must(t, err)
	k, err := p.FromSeed(seed)
	must(t, err)
	pub, err := m.CreateObject(sh, mlkemPubTmpl(0, k.EK))
	must(t, err)
	ct, _, hEnc, err := m.EncapsulateKey(sh, &Mechanism{Type: ck.CKM_ML_KEM}, pub, sharedKeyTmpl(), Out{Cap: 2048})
	must(t, err)
	want := attrValue(t, m, sh, hEnc, ck.CKA_VALUE)
	forms := map[string][]Attribute{
		"seed":     mlkemPrivTmpl(ck.CKP_ML_KEM_768, seed, nil),
		"expanded": mlkemPrivTmpl(0, nil, dk),
		"both":     mlkemPrivTmpl(0, seed, dk),
	}
	for name, tmpl := range forms {
		priv, err := m.CreateObject(sh, tmpl)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := decapsulate(t, m, sh, priv, ct)
		must(t, err)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: decapsulates to %x, want %x", name, got, want)
		}
	}
	priv, err := m.CreateObject(sh, mlkemPrivTmpl(0, nil, dk))
	must(t, err)
	res, err := m.GetAttributeValue(sh, priv, []uint64{ck.CKA_VALUE})
	if (err != nil && !isRV(err, ck.CKR_ATTRIBUTE_SENSITIVE)) || res[0].Err != uint64(ck.CKR_ATTRIBUTE_SENSITIVE) {
		t.Errorf("CKA_VALUE of a sensitive expanded key: %v, %v", err, res)
	}
	other := bytes.Clone(seed)
	other[0] ^= 1
	_, err = m.CreateObject(sh, mlkemPrivTmpl(0, other, dk))
	wantRV(t, err, ck.CKR_TEMPLATE_INCONSISTENT)
}

// TestMLKEMSealed: an ML-KEM token key (CKA_PRIVATE false, so that only
// the sealing protects it) is stored with its seed sealed: the token
// file holds no 16-byte window of the seed, and after a logout the key
// is listed but does not decapsulate (CKR_USER_NOT_LOGGED_IN) until the
// user logs in again.
func TestMLKEMSealed(t *testing.T) {
	m, _, sh := readyToken(t)
	pub, priv := genMLKEM(t, m, sh, ck.CKP_ML_KEM_768, aBool(ck.CKA_TOKEN, true), aBool(ck.CKA_PRIVATE, false),
		aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true))
	seed := attrValue(t, m, sh, priv, ck.CKA_SEED)
	ek := attrValue(t, m, sh, pub, ck.CKA_VALUE)
	ct, _, _, err := m.EncapsulateKey(sh, &Mechanism{Type: ck.CKM_ML_KEM}, pub, nil, Out{Cap: 2048})
	must(t, err)
	must(t, m.Logout(sh))
	_, err = m.DecapsulateKey(sh, &Mechanism{Type: ck.CKM_ML_KEM}, priv, []Attribute{aBool(ck.CKA_PRIVATE, false)}, ct)
	wantRV(t, err, ck.CKR_USER_NOT_LOGGED_IN)
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	_, err = decapsulate(t, m, sh, priv, ct)
	must(t, err)
	must(t, m.CloseSession(sh))
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(os.Getenv("MODEXP_TOKEN_CONF")), "token.db"))
	must(t, err)
	for i := 0; i+16 <= len(seed); i += 8 {
		if bytes.Contains(raw, seed[i:i+16]) {
			t.Fatalf("the token file holds the seed's bytes %d..%d", i, i+16)
		}
	}
	// The control: the private object's CKA_PUBLIC_KEY_INFO, not sealed,
	// holds ek, and is found in the same file.
	if !bytes.Contains(raw, ek[:64]) {
		t.Fatalf("the token file (%d bytes) does not hold the public key either: not the keystore", len(raw))
	}
}
