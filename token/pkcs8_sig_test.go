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

// TestWrapSLHDSAAndEd448Keys: a generated SLH-DSA-SHA2-128f key and an
// Ed448 key are wrapped with AES key wrap (PKCS#8: the LAMPS SLH-DSA form,
// RFC 8410's for Ed448) and unwrapped with a template naming only the
// class; the unwrapped key has the original's parameter set or curve and
// signs deterministically exactly as the original does.
func TestWrapSLHDSAAndEd448Keys(t *testing.T) {
	m, _, sh := readyToken(t)
	kek, err := m.GenerateKey(sh, &Mechanism{Type: ck.CKM_AES_KEY_GEN}, []Attribute{aULong(ck.CKA_VALUE_LEN, 32),
		aBool(ck.CKA_WRAP, true), aBool(ck.CKA_UNWRAP, true)})
	must(t, err)
	mc := &Mechanism{Type: ck.CKM_AES_KEY_WRAP_PAD}
	det := &SignContextParams{Hedge: ck.CKH_DETERMINISTIC_REQUIRED}
	msg := []byte("wrapped and back")
	for _, c := range []struct {
		name string
		gen  uint64
		pub  []Attribute
		same uint64 // the attribute the unwrapped key must share
		sign func(key uint64) ([]byte, error)
	}{
		{"SLH-DSA-SHA2-128f", ck.CKM_SLH_DSA_KEY_PAIR_GEN, []Attribute{aULong(ck.CKA_PARAMETER_SET, ck.CKP_SLH_DSA_SHA2_128F)},
			ck.CKA_PARAMETER_SET,
			func(key uint64) ([]byte, error) { return pqSign(t, m, sh, key, ck.CKM_SLH_DSA, det, msg, false) }},
		{"Ed448", ck.CKM_EC_EDWARDS_KEY_PAIR_GEN, []Attribute{aBytes(ck.CKA_EC_PARAMS, mech.Ed448OID)},
			ck.CKA_EC_PARAMS,
			func(key uint64) ([]byte, error) { return edSignCap(t, m, sh, key, nil, msg, false) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, priv, err := m.GenerateKeyPair(sh, &Mechanism{Type: c.gen}, c.pub,
				[]Attribute{aBool(ck.CKA_SIGN, true), aBool(ck.CKA_EXTRACTABLE, true)})
			must(t, err)
			wrapped, _, err := m.WrapKey(sh, mc, kek, priv, Out{Cap: 8192})
			must(t, err)
			plain, err := m.UnwrapKey(sh, mc, kek, wrapped, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aBool(ck.CKA_SIGN, true)})
			must(t, err)
			if a, b := attrValue(t, m, sh, priv, c.same), attrValue(t, m, sh, plain, c.same); !bytes.Equal(a, b) {
				t.Fatalf("unwrapped %s %x, the original's %x", attr.Describe(c.same), b, a)
			}
			s1, err := c.sign(priv)
			must(t, err)
			s2, err := c.sign(plain)
			must(t, err)
			if !bytes.Equal(s1, s2) {
				t.Fatal("the unwrapped key signs differently")
			}
		})
	}
}

// TestPQPKCS8Refused: malformed SLH-DSA and Ed448 PKCS#8 are
// CKR_WRAPPED_KEY_INVALID, never another code.
func TestPQPKCS8Refused(t *testing.T) {
	set := mech.SLHDSASets[ck.CKP_SLH_DSA_SHA2_128S]
	info := func(oid asn1.ObjectIdentifier, version int, params []byte, inner []byte) []byte {
		a := pkix.AlgorithmIdentifier{Algorithm: oid}
		if params != nil {
			a.Parameters = asn1.RawValue{FullBytes: params}
		}
		der, err := asn1.Marshal(mech.PKCS8Info{Version: version, Algo: a, PrivateKey: inner})
		must(t, err)
		return der
	}
	seed57, _ := asn1.Marshal(bytes.Repeat([]byte{1}, 57))
	seed56, _ := asn1.Marshal(bytes.Repeat([]byte{1}, 56))
	for _, c := range []struct {
		name string
		der  []byte
	}{
		{"SLH-DSA short", info(set.OID, 0, nil, make([]byte, 63))},
		{"SLH-DSA long", info(set.OID, 0, nil, make([]byte, 65))},
		{"SLH-DSA version 2", info(set.OID, 2, nil, make([]byte, 64))},
		{"SLH-DSA with parameters", info(set.OID, 0, []byte{5, 0}, make([]byte, 64))},
		{"Ed448 raw, not an OCTET STRING", info(mech.OIDEd448, 0, nil, make([]byte, 57))},
		{"Ed448 of 56 bytes", info(mech.OIDEd448, 0, nil, seed56)},
		{"Ed448 with parameters", info(mech.OIDEd448, 0, []byte{5, 0}, seed57)},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := mech.ParsePKCS8(c.der)
			if ck.RV(err) != uint64(ck.CKR_WRAPPED_KEY_INVALID) {
				t.Fatalf("%v, want CKR_WRAPPED_KEY_INVALID", err)
			}
		})
	}
}
