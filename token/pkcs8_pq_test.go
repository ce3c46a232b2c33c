package token

import (
	"bytes"
	"encoding/asn1"
	"os/exec"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// wrapUnwrap wraps priv under a fresh AES key with CKM_AES_KEY_WRAP_PAD
// and unwraps it with tmpl (class CKO_PRIVATE_KEY added).
func wrapUnwrap(t *testing.T, m *Module, sh, priv uint64, tmpl ...Attribute) uint64 {
	t.Helper()
	kek, err := m.GenerateKey(sh, &Mechanism{Type: ck.CKM_AES_KEY_GEN}, []Attribute{aULong(ck.CKA_VALUE_LEN, 32),
		aBool(ck.CKA_WRAP, true), aBool(ck.CKA_UNWRAP, true)})
	must(t, err)
	mc := &Mechanism{Type: ck.CKM_AES_KEY_WRAP_PAD}
	wrapped, _, err := m.WrapKey(sh, mc, kek, priv, Out{Cap: 8192})
	must(t, err)
	h, err := m.UnwrapKey(sh, mc, kek, wrapped, append([]Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY)}, tmpl...))
	must(t, err)
	return h
}

// TestWrapMLKEM wraps ML-KEM keys as PKCS#8 and unwraps them: a generated
// (seed-kept) key travels as its seed and comes back seed-kept, a key
// imported expanded travels expanded; each unwrapped key decapsulates the
// original's ciphertexts to the same secret. The PKCS#8 encoding is the
// LAMPS one (seed [0], expandedKey OCTET STRING), and the both form
// parses to both values, which must agree.
func TestWrapMLKEM(t *testing.T) {
	m, _, sh := readyToken(t)
	extractable := []Attribute{aBool(ck.CKA_EXTRACTABLE, true)}
	for _, set := range []uint64{ck.CKP_ML_KEM_512, ck.CKP_ML_KEM_768, ck.CKP_ML_KEM_1024} {
		p := mech.MLKEMSets[set]
		pub, priv := genMLKEM(t, m, sh, set, extractable...)
		ct, _, hEnc, err := m.EncapsulateKey(sh, &Mechanism{Type: ck.CKM_ML_KEM}, pub, sharedKeyTmpl(), Out{Cap: 2048})
		must(t, err)
		want := attrValue(t, m, sh, hEnc, ck.CKA_VALUE)
		back := wrapUnwrap(t, m, sh, priv)
		if got, err := decapsulate(t, m, sh, back, ct); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: unwrapped seed key decapsulates to %x (%v), want %x", p.Name, got, err, want)
		}
		res, err := m.GetAttributeValue(sh, back, []uint64{ck.CKA_PARAMETER_SET})
		must(t, err)
		if v, _ := ck.ParseULong(res[0].Value); v != set {
			t.Errorf("%s: unwrapped parameter set %d", p.Name, v)
		}
		// The PKCS#8 itself: the seed form.
		ss, err := m.lock(sh)
		must(t, err)
		o, err := ss.slot.object(priv)
		ss.mu.Unlock()
		must(t, err)
		der, err := mech.MarshalPKCS8(o)
		must(t, err)
		var key mech.OneAsymmetricKey
		if _, err := asn1.Unmarshal(der, &key); err != nil || !key.Algorithm.Algorithm.Equal(p.OID) || key.PrivateKey[0] != 0x80 || key.PrivateKey[1] != 64 {
			t.Fatalf("%s: PKCS#8 %x", p.Name, der)
		}
		// The expanded form, and both.
		seed := o.attrs[ck.CKA_SEED]
		dk, err := p.Expanded(seed)
		must(t, err)
		expanded, err := m.CreateObject(sh, append(mlkemPrivTmpl(0, nil, dk), extractable...))
		must(t, err)
		back = wrapUnwrap(t, m, sh, expanded)
		if got, err := decapsulate(t, m, sh, back, ct); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: unwrapped expanded key decapsulates to %x (%v)", p.Name, got, err)
		}
		inner, _ := asn1.Marshal(mech.SeedExpanded{Seed: seed, Expanded: dk})
		bothDER, err := mech.MarshalOneAsymmetricKey(p.OID, inner)
		must(t, err)
		vals, kt, err := mech.ParsePKCS8(bothDER)
		must(t, err)
		if kt != ck.CKK_ML_KEM || !bytes.Equal(vals[ck.CKA_SEED], seed) || !bytes.Equal(vals[ck.CKA_VALUE], dk) {
			t.Fatalf("%s: both form parsed to %v", p.Name, vals)
		}
		dk[0] ^= 1
		inner, _ = asn1.Marshal(mech.SeedExpanded{Seed: seed, Expanded: dk})
		bad, _ := mech.MarshalOneAsymmetricKey(p.OID, inner)
		vals, _, err = mech.ParsePKCS8(bad)
		must(t, err)
		tmpl := []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_ML_KEM)}
		for typ, v := range vals {
			tmpl = append(tmpl, aBytes(typ, v))
		}
		_, err = m.CreateObject(sh, tmpl)
		wantRV(t, err, ck.CKR_TEMPLATE_INCONSISTENT)
	}
	// Malformed ML-KEM PKCS#8.
	p := mech.MLKEMSets[ck.CKP_ML_KEM_768]
	for _, inner := range [][]byte{{0x01, 0x01, 0x00}, {0x80}, {0x30, 0x03, 0x04, 0x01, 0x00}} {
		der, _ := mech.MarshalOneAsymmetricKey(p.OID, inner)
		if _, _, err := mech.ParsePKCS8(der); !isRV(err, ck.CKR_WRAPPED_KEY_INVALID) {
			t.Errorf("inner %x: %v, want CKR_WRAPPED_KEY_INVALID", inner, err)
		}
	}
}

// TestWrapMontgomery wraps X25519 and X448 keys (RFC 8410 PKCS#8) and
// unwraps them, once naming the curve by its PrintableString: the
// unwrapped keys derive what the originals derive. OpenSSL's own PKCS#8
// keys parse to keys with OpenSSL's public keys.
func TestWrapMontgomery(t *testing.T) {
	m, _, sh := readyToken(t)
	for _, c := range []*mech.XDHCurve{mech.X25519Curve, mech.X448Curve} {
		_, priv, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_EC_MONTGOMERY_KEY_PAIR_GEN},
			[]Attribute{aBytes(ck.CKA_EC_PARAMS, c.OID)}, []Attribute{aBool(ck.CKA_DERIVE, true), aBool(ck.CKA_EXTRACTABLE, true)})
		must(t, err)
		peerPub, _, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_EC_MONTGOMERY_KEY_PAIR_GEN},
			[]Attribute{aBytes(ck.CKA_EC_PARAMS, c.OID)}, nil)
		must(t, err)
		peer := attrValue(t, m, sh, peerPub, ck.CKA_EC_POINT)
		want, err := xdhDerive(t, m, sh, priv, peer)
		must(t, err)
		for _, tmpl := range [][]Attribute{{aBool(ck.CKA_DERIVE, true)}, {aBool(ck.CKA_DERIVE, true), aBytes(ck.CKA_EC_PARAMS, c.Printable)}} {
			back := wrapUnwrap(t, m, sh, priv, tmpl...)
			got, err := xdhDerive(t, m, sh, back, peer)
			must(t, err)
			if !bytes.Equal(got, want) {
				t.Errorf("%s: the unwrapped key derives %x, want %x", c.Name, got, want)
			}
		}
	}
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not installed: OpenSSL's PKCS#8 not checked")
	}
	for _, c := range []*mech.XDHCurve{mech.X25519Curve, mech.X448Curve} {
		der, err := exec.Command(openssl, "genpkey", "-algorithm", c.Name, "-outform", "DER").Output()
		must(t, err)
		cmd := exec.Command(openssl, "pkey", "-inform", "DER", "-pubout", "-outform", "DER")
		cmd.Stdin = bytes.NewReader(der)
		spki, err := cmd.Output()
		must(t, err)
		vals, kt, err := mech.ParsePKCS8(der)
		must(t, err)
		if kt != ck.CKK_EC_MONTGOMERY {
			t.Fatalf("%s: key type %s", c.Name, ck.Name("CKK_", kt))
		}
		h, err := m.CreateObject(sh, xdhPrivTmpl(vals[ck.CKA_EC_PARAMS], vals[ck.CKA_VALUE]))
		must(t, err)
		if p := attrValue(t, m, sh, h, ck.CKA_EC_POINT); !bytes.Equal(p[2:], spki[len(spki)-c.Size:]) {
			t.Errorf("%s: OpenSSL's key has another public key on the token", c.Name)
		}
	}
}
