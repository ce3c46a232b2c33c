package token

import (
	"bytes"
	"math/big"
	"testing"

	"github.com/modexp-token/modexp-token/engine/alg/dh"
	"github.com/modexp-token/modexp-token/engine/alg/dh/dhtest"
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

func ffdheGroup(t testing.TB, name string) dh.Group {
	t.Helper()
	for _, g := range dhtest.KnownGroups() {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("no group %s", name)
	return dh.Group{}
}

func dhDomain(g dh.Group) []Attribute {
	return []Attribute{aBytes(ck.CKA_PRIME, g.P.Bytes()), aBytes(ck.CKA_BASE, g.G.Bytes())}
}

// genDH makes a DH key pair whose private key may derive; extra goes to
// the private template.
func genDH(t *testing.T, m *Module, sh uint64, g dh.Group, extra ...Attribute) (pub, priv uint64) {
	t.Helper()
	pub, priv, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_DH_PKCS_KEY_PAIR_GEN}, dhDomain(g),
		append([]Attribute{aBool(ck.CKA_DERIVE, true)}, extra...))
	must(t, err)
	return pub, priv
}

// deriveSecret derives a readable secret key with CKM_DH_PKCS_DERIVE and
// returns its value.
func deriveSecret(t *testing.T, m *Module, sh, priv uint64, peer []byte, extra ...Attribute) ([]byte, error) {
	t.Helper()
	tmpl := append([]Attribute{aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true)}, extra...)
	h, err := m.DeriveKey(sh, &Mechanism{Type: ck.CKM_DH_PKCS_DERIVE, Param: peer}, priv, tmpl)
	if err != nil {
		return nil, err
	}
	return attrValue(t, m, sh, h, ck.CKA_VALUE), nil
}

func TestDHMechanisms(t *testing.T) {
	m, slot := newModule(t)
	for _, w := range []uint64{ck.CKM_DH_PKCS_KEY_PAIR_GEN, ck.CKM_DH_PKCS_DERIVE} {
		info, err := m.MechanismInfo(slot, w)
		must(t, err)
		if info.MinKeySize != 1024 || info.MaxKeySize != 8192 {
			t.Errorf("%s: %+v", ck.Name("CKM_", w), info)
		}
	}
}

// TestDHAgreement: two generated key pairs derive the same secret, equal
// to math/big's, at the prime's length, and cut to CKA_VALUE_LEN or an
// AES key's length from the end.
func TestDHAgreement(t *testing.T) {
	m, _, sh := readyToken(t)
	g := ffdheGroup(t, "ffdhe2048")
	pubA, privA := genDH(t, m, sh, g)
	pubB, privB := genDH(t, m, sh, g, aULong(ck.CKA_VALUE_BITS, 256))
	if v := attrValue(t, m, sh, privB, ck.CKA_VALUE_BITS); !bytes.Equal(v, ck.ULong(256)) {
		t.Fatalf("CKA_VALUE_BITS = %x", v)
	}
	if v, _ := ck.ParseULong(attrValue(t, m, sh, privA, ck.CKA_VALUE_BITS)); v != 225 {
		t.Fatalf("x of %d bits by default on ffdhe2048, want 225 (RFC 7919 §5.2)", v)
	}
	ya := attrValue(t, m, sh, pubA, ck.CKA_VALUE)
	yb := attrValue(t, m, sh, pubB, ck.CKA_VALUE)
	za, err := deriveSecret(t, m, sh, privA, yb)
	must(t, err)
	zb, err := deriveSecret(t, m, sh, privB, ya)
	must(t, err)
	if len(za) != 256 || !bytes.Equal(za, zb) {
		t.Fatalf("secrets of %d and %d bytes differ", len(za), len(zb))
	}
	z32, err := deriveSecret(t, m, sh, privA, yb, aULong(ck.CKA_VALUE_LEN, 32))
	must(t, err)
	if !bytes.Equal(z32, za[len(za)-32:]) {
		t.Fatal("CKA_VALUE_LEN 32 does not keep the last 32 bytes")
	}
	aes, err := deriveSecret(t, m, sh, privB, ya, aULong(ck.CKA_KEY_TYPE, ck.CKK_AES))
	must(t, err)
	if !bytes.Equal(aes, za[len(za)-32:]) {
		t.Fatal("AES key is not the last 32 bytes")
	}
	_, err = deriveSecret(t, m, sh, privA, yb, aULong(ck.CKA_VALUE_LEN, 257))
	wantRV(t, err, ck.CKR_TEMPLATE_INCONSISTENT)
	// The public key's SPKI carries y.
	if spki := attrValue(t, m, sh, pubA, ck.CKA_PUBLIC_KEY_INFO); !bytes.Contains(spki, ya) {
		t.Fatal("CKA_PUBLIC_KEY_INFO does not hold y")
	}
}

func TestDHPeerValueChecked(t *testing.T) {
	m, _, sh := readyToken(t)
	g := ffdheGroup(t, "ffdhe2048")
	_, priv := genDH(t, m, sh, g)
	one := big.NewInt(1)
	var nonRes []byte
	for c := int64(3); ; c++ {
		if new(big.Int).Exp(big.NewInt(c), g.Q, g.P).Cmp(one) != 0 {
			nonRes = big.NewInt(c).Bytes()
			break
		}
	}
	for name, y := range map[string][]byte{
		"1": {1}, "p−1": new(big.Int).Sub(g.P, one).Bytes(), "p": g.P.Bytes(), "non-residue": nonRes, "empty": nil,
	} {
		_, err := deriveSecret(t, m, sh, priv, y)
		if !isRV(err, ck.CKR_MECHANISM_PARAM_INVALID) {
			t.Errorf("peer %s: %v", name, err)
		}
	}
	// A key without CKA_DERIVE may not derive.
	_, priv2, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_DH_PKCS_KEY_PAIR_GEN}, dhDomain(g), nil)
	must(t, err)
	_, err = deriveSecret(t, m, sh, priv2, g.G.Bytes())
	wantRV(t, err, ck.CKR_KEY_FUNCTION_NOT_PERMITTED)
}

func TestDHImportAndRejects(t *testing.T) {
	m, _, sh := readyToken(t)
	g := ffdheGroup(t, "ffdhe2048")
	x, y, _, err := dh.GenerateKey(t.Context(), softEng(t), &g, 0, nil)
	must(t, err)
	privT := append(dhDomain(g), aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_DH),
		aBool(ck.CKA_DERIVE, true), aBytes(ck.CKA_VALUE, x))
	priv, err := m.CreateObject(sh, privT)
	must(t, err)
	pubT := append(dhDomain(g), aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_DH), aBytes(ck.CKA_VALUE, y))
	_, err = m.CreateObject(sh, pubT)
	must(t, err)
	z, err := deriveSecret(t, m, sh, priv, g.G.Bytes()) // peer y = g: Z = g^x = y
	must(t, err)
	if !bytes.Equal(z, y) {
		t.Fatal("Z with the peer value g is not y")
	}
	for name, v := range map[string][]byte{"0": {0}, "q": g.Q.Bytes()} {
		tmpl := append(privT[:len(privT)-1:len(privT)-1], aBytes(ck.CKA_VALUE, v))
		if _, err := m.CreateObject(sh, tmpl); !isRV(err, ck.CKR_ATTRIBUTE_VALUE_INVALID) {
			t.Errorf("x = %s: %v", name, err)
		}
	}
	tmpl := append(pubT[:len(pubT)-1:len(pubT)-1], aBytes(ck.CKA_VALUE, []byte{1}))
	_, err = m.CreateObject(sh, tmpl)
	wantRV(t, err, ck.CKR_ATTRIBUTE_VALUE_INVALID)
	_, err = m.CreateObject(sh, append([]Attribute{aBytes(ck.CKA_PRIME, []byte{23})}, pubT[1:]...))
	wantRV(t, err, ck.CKR_ATTRIBUTE_VALUE_INVALID)
	_, _, err = m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_DH_PKCS_KEY_PAIR_GEN},
		[]Attribute{aBytes(ck.CKA_PRIME, new(big.Int).Add(g.P, big.NewInt(2)).Bytes()), aBytes(ck.CKA_BASE, []byte{2})}, nil)
	wantRV(t, err, ck.CKR_DOMAIN_PARAMS_INVALID)
	_, _, err = m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_DH_PKCS_KEY_PAIR_GEN}, dhDomain(g), []Attribute{aULong(ck.CKA_VALUE_BITS, 2048)})
	wantRV(t, err, ck.CKR_ATTRIBUTE_VALUE_INVALID)
}

// TestDHEngines: DH on chips; a faulty engine's secrets are never
// released.
func TestDHEngines(t *testing.T) {
	g := ffdheGroup(t, "ffdhe2048")
	for _, c := range []struct {
		engine, fallback string
		wantDeviceError  bool
		wantFaults       bool
	}{
		{"chip:pukcc", "fail", false, false},
		{"chip:cryptech,fault=bitflip", "fail", true, true},
		{"chip:cryptech,fault=bitflip", "soft", false, true},
	} {
		t.Run(c.engine+"/"+c.fallback, func(t *testing.T) {
			engineConfig(t, c.engine, c.fallback)
			m := load(t)
			slot := m.SlotList(true)[0]
			initToken(t, m, slot)
			sh := openRW(t, m, slot)
			must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
			x, _, _, err := dh.GenerateKey(t.Context(), softEng(t), &g, 0, nil)
			must(t, err)
			priv, err := m.CreateObject(sh, append(dhDomain(g), aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY),
				aULong(ck.CKA_KEY_TYPE, ck.CKK_DH), aBool(ck.CKA_DERIVE, true), aBytes(ck.CKA_VALUE, x)))
			must(t, err)
			_, peer, _, err := dh.GenerateKey(t.Context(), softEng(t), &g, 0, nil)
			must(t, err)
			want := new(big.Int).Exp(new(big.Int).SetBytes(peer), new(big.Int).SetBytes(x), g.P).FillBytes(make([]byte, 256))
			z, err := deriveSecret(t, m, sh, priv, peer)
			if c.wantDeviceError {
				wantRV(t, err, ck.CKR_DEVICE_ERROR)
				_, _, err = m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_DH_PKCS_KEY_PAIR_GEN}, dhDomain(g), nil)
				wantRV(t, err, ck.CKR_DEVICE_ERROR)
			} else {
				must(t, err)
				if !bytes.Equal(z, want) {
					t.Fatal("wrong secret")
				}
				genDH(t, m, sh, g)
			}
			st, err := m.EngineStatus(slot)
			must(t, err)
			if (st.Faults > 0) != c.wantFaults {
				t.Fatalf("faults %d", st.Faults)
			}
		})
	}
}

// FuzzDHPublicImport: any prime, base and value either fail with a CKR
// code or give a key engine/alg/dh accepts.
func FuzzDHPublicImport(f *testing.F) {
	g := ffdheGroup(f, "ffdhe2048")
	f.Add(g.P.Bytes(), g.G.Bytes(), []byte{4})
	f.Add(g.P.Bytes(), g.G.Bytes(), []byte{1})
	f.Add(g.P.Bytes(), []byte{5}, []byte{4})
	f.Add([]byte{23}, []byte{5}, []byte{4})
	f.Add([]byte{}, []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, prime, base, value []byte) {
		a := attr.Map{
			ck.CKA_CLASS: ck.ULong(ck.CKO_PUBLIC_KEY), ck.CKA_KEY_TYPE: ck.ULong(ck.CKK_DH),
			ck.CKA_PRIME: prime, ck.CKA_BASE: base, ck.CKA_VALUE: value,
		}
		if err := mech.CompleteDHPublic(a); err != nil {
			if ck.RV(err) == 0 {
				t.Fatalf("error without a CKR code: %v", err)
			}
			return
		}
		grp, err := dh.LookupGroup(new(big.Int).SetBytes(prime), new(big.Int).SetBytes(base))
		if err != nil {
			t.Fatal(err)
		}
		if err := dh.CheckPublic(grp, a[ck.CKA_VALUE]); err != nil {
			t.Fatal(err)
		}
	})
}
