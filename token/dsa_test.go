package token

import (
	"bytes"
	"crypto"
	"crypto/dsa" //nolint:staticcheck // deprecated, used here only as an independent reference
	"crypto/sha256"
	"encoding/asn1"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	edsa "github.com/modexp-token/modexp-token/engine/alg/dsa"
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// dsaParams reads testdata/params_L_N.pem (openssl genpkey -genparam).
func dsaParams(t testing.TB, l, n int) *edsa.Parameters {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("testdata/params_%d_%d.pem", l, n))
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	var p struct{ P, Q, G *big.Int }
	if blk == nil {
		t.Fatal("no PEM block")
	}
	if _, err := asn1.Unmarshal(blk.Bytes, &p); err != nil {
		t.Fatal(err)
	}
	return &edsa.Parameters{P: p.P, Q: p.Q, G: p.G}
}

func dsaDomain(p *edsa.Parameters) []Attribute {
	return []Attribute{aBytes(ck.CKA_PRIME, p.P.Bytes()), aBytes(ck.CKA_SUBPRIME, p.Q.Bytes()), aBytes(ck.CKA_BASE, p.G.Bytes())}
}

func genDSA(t *testing.T, m *Module, sh uint64, p *edsa.Parameters, token bool) (pub, priv uint64) {
	t.Helper()
	pubT := append(dsaDomain(p), aBool(ck.CKA_TOKEN, token))
	privT := []Attribute{aBool(ck.CKA_TOKEN, token)}
	pub, priv, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_DSA_KEY_PAIR_GEN}, pubT, privT)
	must(t, err)
	return pub, priv
}

// softEng opens the software engine for key material made outside the
// token.
func softEng(t *testing.T) engine.Engine {
	t.Helper()
	e, err := engine.Open("soft")
	must(t, err)
	return e
}

func stdDSAPub(p *edsa.Parameters, y []byte) *dsa.PublicKey {
	return &dsa.PublicKey{Parameters: dsa.Parameters{P: p.P, Q: p.Q, G: p.G}, Y: new(big.Int).SetBytes(y)}
}

func TestDSAMechanisms(t *testing.T) {
	m, slot := newModule(t)
	list, err := m.MechanismList(slot)
	must(t, err)
	for _, w := range []uint64{ck.CKM_DSA_KEY_PAIR_GEN, ck.CKM_DSA, ck.CKM_DSA_SHA1, ck.CKM_DSA_SHA224,
		ck.CKM_DSA_SHA256, ck.CKM_DSA_SHA384, ck.CKM_DSA_SHA512} {
		found := false
		for _, l := range list {
			found = found || l == w
		}
		if !found {
			t.Errorf("%s not listed", ck.Name("CKM_", w))
		}
		info, err := m.MechanismInfo(slot, w)
		must(t, err)
		if info.MinKeySize != 1024 || info.MaxKeySize != 3072 {
			t.Errorf("%s: %+v", ck.Name("CKM_", w), info)
		}
	}
}

// TestDSAKeyGenSignVerify generates keys at two sizes, signs with every
// mechanism (single- and multi-part) and checks each signature with
// crypto/dsa and C_Verify.
func TestDSAKeyGenSignVerify(t *testing.T) {
	m, _, sh := readyToken(t)
	for _, sz := range [][2]int{{1024, 160}, {2048, 256}} {
		p := dsaParams(t, sz[0], sz[1])
		pub, priv := genDSA(t, m, sh, p, false)
		y := attrValue(t, m, sh, pub, ck.CKA_VALUE)
		std := stdDSAPub(p, y)
		for _, h := range []uint64{pub, priv} {
			if v := attrValue(t, m, sh, h, ck.CKA_KEY_GEN_MECHANISM); !bytes.Equal(v, ck.ULong(ck.CKM_DSA_KEY_PAIR_GEN)) {
				t.Errorf("CKA_KEY_GEN_MECHANISM = %x", v)
			}
			if v := attrValue(t, m, sh, h, ck.CKA_PRIME); !bytes.Equal(v, p.P.Bytes()) {
				t.Errorf("CKA_PRIME = %x…", v[:4])
			}
		}
		res, _ := m.GetAttributeValue(sh, priv, []uint64{ck.CKA_VALUE})
		if res[0].Err != uint64(ck.CKR_ATTRIBUTE_SENSITIVE) {
			t.Fatalf("private CKA_VALUE readable: %+v", res)
		}
		spki := attrValue(t, m, sh, pub, ck.CKA_PUBLIC_KEY_INFO)
		if !bytes.Equal(spki, attrValue(t, m, sh, priv, ck.CKA_PUBLIC_KEY_INFO)) {
			t.Fatal("public and private CKA_PUBLIC_KEY_INFO differ")
		}
		qLen := sz[1] / 8
		msg := []byte(fmt.Sprintf("DSA %d", sz[0]))
		for _, hm := range mech.DSAHashMechs {
			d := digest(hm.Hash, msg)
			sig, err := signWith(t, m, sh, priv, hm.Type, msg)
			must(t, err)
			if len(sig) != 2*qLen {
				t.Fatalf("signature of %d bytes", len(sig))
			}
			r, s := new(big.Int).SetBytes(sig[:qLen]), new(big.Int).SetBytes(sig[qLen:])
			if !dsa.Verify(std, d[:min(len(d), qLen)], r, s) {
				t.Fatalf("%s: crypto/dsa rejects the signature", ck.Name("CKM_", hm.Type))
			}
			must(t, verifyWith(t, m, sh, pub, hm.Type, msg, sig))
			// Multi-part gives a signature of the same message.
			must(t, m.SignInit(sh, &Mechanism{Type: hm.Type}, priv))
			must(t, m.SignUpdate(sh, msg[:3]))
			must(t, m.SignUpdate(sh, msg[3:]))
			sig2, _, err := m.SignFinal(sh, Out{Cap: 1024})
			must(t, err)
			must(t, verifyWith(t, m, sh, pub, hm.Type, msg, sig2))
			// CKM_DSA on the digest verifies the same signature.
			must(t, verifyWith(t, m, sh, pub, ck.CKM_DSA, d, sig))
			bad := bytes.Clone(sig)
			bad[0] ^= 0x80
			wantRV(t, verifyWith(t, m, sh, pub, hm.Type, msg, bad), ck.CKR_SIGNATURE_INVALID)
			wantRV(t, verifyWith(t, m, sh, pub, hm.Type, msg, sig[1:]), ck.CKR_SIGNATURE_LEN_RANGE)
		}
		d := digest(crypto.SHA256, msg)
		sig, err := signWith(t, m, sh, priv, ck.CKM_DSA, d)
		must(t, err)
		if !dsa.Verify(std, d[:min(32, qLen)], new(big.Int).SetBytes(sig[:qLen]), new(big.Int).SetBytes(sig[qLen:])) {
			t.Fatal("CKM_DSA: crypto/dsa rejects the signature")
		}
		_, err = signWith(t, m, sh, priv, ck.CKM_DSA, make([]byte, 65))
		wantRV(t, err, ck.CKR_DATA_LEN_RANGE)
		// CKM_DSA is single-part.
		must(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_DSA}, priv))
		wantRV(t, m.SignUpdate(sh, d), ck.CKR_FUNCTION_NOT_SUPPORTED)
	}
}

func TestDSAGenerateRejects(t *testing.T) {
	m, _, sh := readyToken(t)
	p := dsaParams(t, 1024, 160)
	gen := func(pubT, privT []Attribute) error {
		_, _, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_DSA_KEY_PAIR_GEN}, pubT, privT)
		return err
	}
	wantRV(t, gen(dsaDomain(p)[:2], nil), ck.CKR_TEMPLATE_INCOMPLETE)
	bad := dsaDomain(p)
	bad[2] = aBytes(ck.CKA_BASE, []byte{2})
	wantRV(t, gen(bad, nil), ck.CKR_DOMAIN_PARAMS_INVALID)
	other := dsaParams(t, 2048, 256)
	wantRV(t, gen(dsaDomain(p), dsaDomain(other)[:1]), ck.CKR_TEMPLATE_INCONSISTENT)
	// The same parameters in the private template are accepted.
	must(t, gen(dsaDomain(p), dsaDomain(p)))
	wantRV(t, gen(append(dsaDomain(p), aBytes(ck.CKA_VALUE, []byte{1})), nil), ck.CKR_ATTRIBUTE_READ_ONLY)
}

// TestDSAImport: imported keys sign and verify; bad values are refused.
func TestDSAImport(t *testing.T) {
	m, _, sh := readyToken(t)
	p := dsaParams(t, 1024, 160)
	x, y, _, err := edsa.GenerateKey(t.Context(), softEng(t), p, nil)
	must(t, err)
	privT := append(dsaDomain(p), aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_DSA),
		aBytes(ck.CKA_VALUE, x))
	priv, err := m.CreateObject(sh, privT)
	must(t, err)
	pubT := append(dsaDomain(p), aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_DSA),
		aBytes(ck.CKA_VALUE, y))
	pub, err := m.CreateObject(sh, pubT)
	must(t, err)
	msg := []byte("imported")
	sig, err := signWith(t, m, sh, priv, ck.CKM_DSA_SHA1, msg)
	must(t, err)
	must(t, verifyWith(t, m, sh, pub, ck.CKM_DSA_SHA1, msg, sig))

	for name, v := range map[string][]byte{"0": {0}, "q": p.Q.Bytes()} {
		tmpl := append(privT[:len(privT)-1:len(privT)-1], aBytes(ck.CKA_VALUE, v))
		_, err := m.CreateObject(sh, tmpl)
		if !isRV(err, ck.CKR_ATTRIBUTE_VALUE_INVALID) {
			t.Errorf("x = %s: %v", name, err)
		}
	}
	one := big.NewInt(1)
	for name, v := range map[string][]byte{"1": {1}, "p": p.P.Bytes(), "outside the subgroup": new(big.Int).Sub(p.P, one).Bytes()} {
		tmpl := append(pubT[:len(pubT)-1:len(pubT)-1], aBytes(ck.CKA_VALUE, v))
		_, err := m.CreateObject(sh, tmpl)
		if !isRV(err, ck.CKR_ATTRIBUTE_VALUE_INVALID) {
			t.Errorf("y = %s: %v", name, err)
		}
	}
	badP := append([]Attribute{aBytes(ck.CKA_PRIME, new(big.Int).Add(p.P, big.NewInt(2)).Bytes())}, pubT[1:]...)
	_, err = m.CreateObject(sh, badP)
	wantRV(t, err, ck.CKR_ATTRIBUTE_VALUE_INVALID)
	_, err = m.CreateObject(sh, pubT[1:])
	wantRV(t, err, ck.CKR_TEMPLATE_INCOMPLETE)
}

func TestDSATokenKeyPersists(t *testing.T) {
	testConfig(t, "")
	m := load(t)
	slot := m.SlotList(true)[0]
	initToken(t, m, slot)
	sh := openRW(t, m, slot)
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	p := dsaParams(t, 1024, 160)
	pub, _ := genDSA(t, m, sh, p, true)
	y := attrValue(t, m, sh, pub, ck.CKA_VALUE)
	m.Close()

	m2 := load(t)
	sh2 := openRW(t, m2, slot)
	must(t, m2.Login(sh2, ck.CKU_USER, []byte(testUserPIN)))
	hs := find(t, m2, sh2, aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_DSA))
	if len(hs) != 1 {
		t.Fatalf("private DSA keys: %v", hs)
	}
	msg := []byte("after reload")
	sig, err := signWith(t, m2, sh2, hs[0], ck.CKM_DSA_SHA256, msg)
	must(t, err)
	d := sha256.Sum256(msg)
	verifyDSA(t, p, new(big.Int).SetBytes(y), d[:20], sig)
}

// TestDSAEngines: DSA on chips, under both fallback policies; a faulty
// engine's signatures are never released.
func TestDSAEngines(t *testing.T) {
	p := dsaParams(t, 1024, 160)
	for _, c := range []struct {
		engine, fallback string
		wantDeviceError  bool
		wantKeySizeRange bool
		wantFaults       bool
	}{
		{"chip:pukcc", "fail", false, false, false},
		{"chip:orup561", "fail", false, true, false},
		{"chip:orup561", "soft", false, false, false},
		{"chip:cryptech,fault=bitflip", "fail", true, false, true},
		{"chip:cryptech,fault=bitflip", "soft", false, false, true},
	} {
		t.Run(c.engine+"/"+c.fallback, func(t *testing.T) {
			engineConfig(t, c.engine, c.fallback)
			m := load(t)
			slot := m.SlotList(true)[0]
			initToken(t, m, slot)
			sh := openRW(t, m, slot)
			must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
			x, y, _, err := edsa.GenerateKey(t.Context(), softEng(t), p, nil)
			must(t, err)
			priv, err := m.CreateObject(sh, append(dsaDomain(p), aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY),
				aULong(ck.CKA_KEY_TYPE, ck.CKK_DSA), aBytes(ck.CKA_VALUE, x)))
			must(t, err)
			msg := []byte("engine " + c.engine)
			sig, err := signWith(t, m, sh, priv, ck.CKM_DSA_SHA256, msg)
			switch {
			case c.wantKeySizeRange:
				if sig != nil {
					t.Fatal("signature released")
				}
				if !isRV(err, ck.CKR_KEY_SIZE_RANGE) && !isRV(err, ck.CKR_MECHANISM_INVALID) {
					t.Fatalf("err %v", err)
				}
				return
			case c.wantDeviceError:
				wantRV(t, err, ck.CKR_DEVICE_ERROR)
				if sig != nil {
					t.Fatal("signature released")
				}
				_, _, err = m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_DSA_KEY_PAIR_GEN}, dsaDomain(p), nil)
				wantRV(t, err, ck.CKR_DEVICE_ERROR)
			default:
				must(t, err)
				d := sha256.Sum256(msg)
				verifyDSA(t, p, new(big.Int).SetBytes(y), d[:20], sig)
				genDSA(t, m, sh, p, false)
			}
			st, err := m.EngineStatus(slot)
			must(t, err)
			if (st.Faults > 0) != c.wantFaults {
				t.Fatalf("faults %d", st.Faults)
			}
		})
	}
}

// TestDSAWycheproofThroughVerify runs the Wycheproof subset of engine/alg/dsa
// through C_CreateObject and C_Verify with CKM_DSA_SHA256.
func TestDSAWycheproofThroughVerify(t *testing.T) {
	m, _, sh := readyToken(t)
	b, err := os.ReadFile("../engine/alg/dsa/testdata/dsa_2048_256_sha256_p1363_subset.json")
	must(t, err)
	var f struct {
		TestGroups []struct {
			PublicKey struct{ P, Q, G, Y string } `json:"publicKey"`
			Tests     []struct {
				TcID             int `json:"tcId"`
				Msg, Sig, Result string
			} `json:"tests"`
		} `json:"testGroups"`
	}
	must(t, json.Unmarshal(b, &f))
	n := 0
	for _, g := range f.TestGroups {
		hb := func(s string) []byte {
			v, _ := new(big.Int).SetString(s, 16)
			return v.Bytes()
		}
		pub, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_DSA),
			aBytes(ck.CKA_PRIME, hb(g.PublicKey.P)), aBytes(ck.CKA_SUBPRIME, hb(g.PublicKey.Q)),
			aBytes(ck.CKA_BASE, hb(g.PublicKey.G)), aBytes(ck.CKA_VALUE, hb(g.PublicKey.Y))})
		must(t, err)
		for _, tc := range g.Tests {
			msg, _ := hex.DecodeString(tc.Msg)
			sig, _ := hex.DecodeString(tc.Sig)
			err := verifyWith(t, m, sh, pub, ck.CKM_DSA_SHA256, msg, sig)
			if (err == nil) != (tc.Result == "valid") {
				t.Errorf("tcId %d (%s): %v", tc.TcID, tc.Result, err)
			}
			if err != nil && !isRV(err, ck.CKR_SIGNATURE_INVALID) && !isRV(err, ck.CKR_SIGNATURE_LEN_RANGE) {
				t.Errorf("tcId %d: %v", tc.TcID, err)
			}
			n++
		}
	}
	if n < 20 {
		t.Fatalf("%d vectors", n)
	}
}

// FuzzDSAPublicImport: any domain parameters and public value either fail
// with a CKR code or give a key whose parameters pass engine/alg/dsa's checks
// and whose value is in the subgroup.
func FuzzDSAPublicImport(f *testing.F) {
	p1, _ := os.ReadFile("testdata/params_1024_160.pem")
	blk, _ := pem.Decode(p1)
	var p struct{ P, Q, G *big.Int }
	if blk == nil {
		f.Fatal("no parameters")
	}
	if _, err := asn1.Unmarshal(blk.Bytes, &p); err != nil {
		f.Fatal(err)
	}
	{
		f.Add(p.P.Bytes(), p.Q.Bytes(), p.G.Bytes(), p.G.Bytes())
		f.Add(p.P.Bytes(), p.Q.Bytes(), p.G.Bytes(), []byte{1})
		f.Add(p.P.Bytes(), p.Q.Bytes(), []byte{2}, p.G.Bytes())
	}
	f.Add([]byte{23}, []byte{11}, []byte{4}, []byte{2})
	f.Add([]byte{}, []byte{}, []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, prime, subprime, base, value []byte) {
		a := attr.Map{
			ck.CKA_CLASS: ck.ULong(ck.CKO_PUBLIC_KEY), ck.CKA_KEY_TYPE: ck.ULong(ck.CKK_DSA),
			ck.CKA_PRIME: prime, ck.CKA_SUBPRIME: subprime, ck.CKA_BASE: base, ck.CKA_VALUE: value,
		}
		err := mech.CompleteDSAPublic(a)
		if err != nil {
			if ck.RV(err) == 0 {
				t.Fatalf("error without a CKR code: %v", err)
			}
			return
		}
		params := &edsa.Parameters{P: new(big.Int).SetBytes(prime), Q: new(big.Int).SetBytes(subprime), G: new(big.Int).SetBytes(base)}
		if err := edsa.CheckParameters(params); err != nil {
			t.Fatal(err)
		}
		if err := edsa.CheckPublic(params, new(big.Int).SetBytes(a[ck.CKA_VALUE])); err != nil {
			t.Fatal(err)
		}
	})
}

// verifyDSA checks sig on hash under the public value y with the engine's
// verifier (edsa.NewPublicKey, then PublicKey.Verify), failing t otherwise.
func verifyDSA(t *testing.T, p *edsa.Parameters, y *big.Int, hash, sig []byte) {
	t.Helper()
	k, err := edsa.NewPublicKey(p, y)
	must(t, err)
	must(t, k.Verify(hash, sig))
}
