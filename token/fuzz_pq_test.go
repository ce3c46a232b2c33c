package token

import (
	"bytes"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// FuzzMontgomeryECParams feeds CKA_EC_PARAMS values to the Montgomery
// curve parser: it never panics, accepts only the OIDs and names of X25519
// and X448, and answers with a CK_RV.
func FuzzMontgomeryECParams(f *testing.F) {
	for _, s := range [][]byte{mech.X25519Curve.OID, mech.X25519Curve.Printable, mech.X448Curve.OID, mech.X448Curve.Printable, mech.Ed25519OID, {0x13, 0}, {0x05, 0x00}, {}} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		c, err := mech.XDHCurveOf(params)
		if err == nil {
			if !bytes.Equal(params, c.OID) && !bytes.Equal(params, c.Printable) && !bytes.Equal(params, c.OpenSC) {
				t.Fatalf("accepted %x as %s", params, c.Name)
			}
			return
		}
		if !isRV(err, ck.CKR_CURVE_NOT_SUPPORTED) && !isRV(err, ck.CKR_ATTRIBUTE_VALUE_INVALID) {
			t.Fatalf("%x: %v", params, err)
		}
	})
}

// FuzzMontgomeryPublic feeds public keys and peer points to an X25519 and
// an X448 key: the import and the derivation never panic and answer with
// a CK_RV; an accepted import's point is the DER OCTET STRING of the right
// length.
func FuzzMontgomeryPublic(f *testing.F) {
	f.Add(false, make([]byte, 32))
	f.Add(true, append([]byte{0x04, 56}, make([]byte, 56)...))
	f.Add(false, []byte{0x04, 0x20, 1})
	m, sh := fuzzToken(f)
	var privs [2]uint64
	for i, c := range []*mech.XDHCurve{mech.X25519Curve, mech.X448Curve} {
		h, err := m.CreateObject(sh, xdhPrivTmpl(c.OID, bytes.Repeat([]byte{9}, c.Size)))
		if err != nil {
			f.Fatal(err)
		}
		privs[i] = h
	}
	f.Fuzz(func(t *testing.T, x448 bool, point []byte) {
		c, priv := mech.X25519Curve, privs[0]
		if x448 {
			c, priv = mech.X448Curve, privs[1]
		}
		h, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_EC_MONTGOMERY),
			aBytes(ck.CKA_EC_PARAMS, c.OID), aBytes(ck.CKA_EC_POINT, point)})
		checkRV(t, "CreateObject", err)
		if err == nil {
			if p := attrValue(t, m, sh, h, ck.CKA_EC_POINT); len(p) != 2+c.Size || p[0] != 0x04 {
				t.Fatalf("stored point %x", p)
			}
			must(t, m.DestroyObject(sh, h))
		}
		k, err := m.DeriveKey(sh, &Mechanism{Type: ck.CKM_ECDH1_DERIVE, ECDH: &ECDH1DeriveParams{KDF: ck.CKD_NULL, PublicData: point}},
			priv, sharedKeyTmpl())
		checkRV(t, "DeriveKey", err)
		if err == nil {
			must(t, m.DestroyObject(sh, k))
		}
	})
}

// FuzzMLKEMImport feeds ML-KEM public and private key values (ek, seed,
// expanded dk, with or without a parameter set) to C_CreateObject, and
// ciphertexts to C_DecapsulateKey: nothing panics, every refusal is a
// CK_RV, and an accepted private key decapsulates.
func FuzzMLKEMImport(f *testing.F) {
	p := mech.MLKEMSets[ck.CKP_ML_KEM_512]
	seed := bytes.Repeat([]byte{3}, 64)
	k, err := p.FromSeed(seed)
	if err != nil {
		f.Fatal(err)
	}
	dk, err := p.Expanded(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint8(0), uint64(ck.CKP_ML_KEM_512), k.EK, []byte{})
	f.Add(uint8(1), uint64(0), seed, make([]byte, p.CTLen()))
	f.Add(uint8(2), uint64(0), dk, make([]byte, p.CTLen()))
	f.Add(uint8(2), uint64(ck.CKP_ML_KEM_768), dk[:100], []byte{1})
	m, sh := fuzzToken(f)
	f.Fuzz(func(t *testing.T, form uint8, set uint64, value, ct []byte) {
		var tmpl []Attribute
		switch form % 3 {
		case 0:
			tmpl = mlkemPubTmpl(set, value)
		case 1:
			tmpl = mlkemPrivTmpl(set, value, nil)
		default:
			tmpl = mlkemPrivTmpl(set, nil, value)
		}
		h, err := m.CreateObject(sh, tmpl)
		checkRV(t, "CreateObject", err)
		if err != nil {
			return
		}
		defer func() { must(t, m.DestroyObject(sh, h)) }()
		if form%3 == 0 {
			return
		}
		s, err := m.DecapsulateKey(sh, &Mechanism{Type: ck.CKM_ML_KEM}, h, sharedKeyTmpl(), ct)
		checkRV(t, "DecapsulateKey", err)
		if err == nil {
			must(t, m.DestroyObject(sh, s))
		}
	})
}
