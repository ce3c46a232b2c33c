package token

import (
	"bytes"
	"crypto/x509/pkix"
	"encoding/asn1"
	"testing"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// TestWrapMLDSAKey: an ML-DSA-65 key made on the token is wrapped with
// AES key wrap (PKCS#8, the seed form inside) and unwrapped; the unwrapped
// key keeps the seed and signs deterministically as the original does.
func TestWrapMLDSAKey(t *testing.T) {
	m, _, sh := readyToken(t)
	pub, priv, err := mldsaGenerate(t, m, sh, ck.CKP_ML_DSA_65, aBool(ck.CKA_EXTRACTABLE, true))
	must(t, err)
	kek, err := m.GenerateKey(sh, &Mechanism{Type: ck.CKM_AES_KEY_GEN}, []Attribute{aULong(ck.CKA_VALUE_LEN, 32),
		aBool(ck.CKA_WRAP, true), aBool(ck.CKA_UNWRAP, true)})
	must(t, err)
	mc := &Mechanism{Type: ck.CKM_AES_KEY_WRAP_PAD}
	wrapped, _, err := m.WrapKey(sh, mc, kek, priv, Out{Cap: 8192})
	must(t, err)
	if len(wrapped) > 100 {
		t.Fatalf("wrapped key of %d bytes: the seed form is about 60", len(wrapped))
	}
	h, err := m.UnwrapKey(sh, mc, kek, wrapped, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aBool(ck.CKA_SIGN, true)})
	must(t, err)
	if v := attrValue(t, m, sh, h, ck.CKA_PARAMETER_SET); !bytes.Equal(v, ck.ULong(ck.CKP_ML_DSA_65)) {
		t.Fatalf("unwrapped parameter set %x", v)
	}
	det := &SignContextParams{Hedge: ck.CKH_DETERMINISTIC_REQUIRED}
	s1, err := pqSign(t, m, sh, priv, ck.CKM_ML_DSA, det, []byte("m"), false)
	must(t, err)
	s2, err := pqSign(t, m, sh, h, ck.CKM_ML_DSA, det, []byte("m"), false)
	must(t, err)
	if !bytes.Equal(s1, s2) {
		t.Fatal("the unwrapped key signs differently")
	}
	must(t, pqVerify(t, m, sh, pub, ck.CKM_ML_DSA, nil, []byte("m"), s2))
}

// TestMLDSAPKCS8Forms: the three LAMPS forms parse (seed, expanded key,
// both) and build the same key; a "both" whose halves disagree, a short
// seed and another tag are refused with the standard's codes.
func TestMLDSAPKCS8Forms(t *testing.T) {
	set := mech.MLDSASets[ck.CKP_ML_DSA_44]
	seed := bytes.Repeat([]byte{0x42}, 32)
	_, sk := set.Scheme.DeriveKey(seed)
	expanded, err := sk.MarshalBinary()
	must(t, err)
	wrap := func(inner []byte) []byte {
		der, err := asn1.Marshal(mech.PKCS8Info{Algo: pkix.AlgorithmIdentifier{Algorithm: set.OID}, PrivateKey: inner})
		must(t, err)
		return der
	}
	seedForm, _ := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, Bytes: seed})
	expandedForm, _ := asn1.Marshal(expanded)
	bothForm, _ := asn1.Marshal(mech.SeedExpanded{Seed: seed, Expanded: expanded})
	otherSeed := bytes.Repeat([]byte{0x43}, 32)
	mismatch, _ := asn1.Marshal(mech.SeedExpanded{Seed: otherSeed, Expanded: expanded})
	shortSeed, _ := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, Bytes: seed[:31]})
	otherTag, _ := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 1, Bytes: seed})
	build := func(der []byte) (attr.Map, error) {
		vals, kt, err := mech.ParsePKCS8(der)
		if err != nil {
			return nil, err
		}
		a := vals.Clone()
		a[ck.CKA_CLASS], a[ck.CKA_KEY_TYPE] = ck.ULong(ck.CKO_PRIVATE_KEY), ck.ULong(kt)
		obj, _, err := buildObjectFrom(a, nil, keyOrigin{mode: modeCreate}, userLoggedIn)
		return obj, err
	}
	var spki []byte
	for name, inner := range map[string][]byte{"seed": seedForm, "expanded": expandedForm, "both": bothForm} {
		obj, err := build(wrap(inner))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if spki != nil && !bytes.Equal(spki, obj[ck.CKA_PUBLIC_KEY_INFO]) {
			t.Fatalf("%s: another public key", name)
		}
		spki = obj[ck.CKA_PUBLIC_KEY_INFO]
		back, err := mech.MarshalPKCS8(&object{attrs: obj, complete: true})
		must(t, err)
		want := wrap(seedForm)
		if name == "expanded" {
			want = wrap(expandedForm)
		}
		if !bytes.Equal(back, want) {
			t.Fatalf("%s: re-encoded as another form", name)
		}
	}
	for _, c := range []struct {
		name string
		der  []byte
		want ck.Error
	}{
		{"seed and expanded key disagree", wrap(mismatch), ck.CKR_TEMPLATE_INCONSISTENT},
		{"seed of 31 bytes", wrap(shortSeed), ck.CKR_WRAPPED_KEY_INVALID},
		{"tag [1]", wrap(otherTag), ck.CKR_WRAPPED_KEY_INVALID},
		{"expanded key one byte short", wrap(mustMarshal(t, expanded[:len(expanded)-1])), ck.CKR_ATTRIBUTE_VALUE_INVALID},
	} {
		if _, err := build(c.der); !isRV(err, c.want) {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := asn1.Marshal(v)
	must(t, err)
	return b
}
