package token

import (
	"bytes"
	"crypto/sha256"
	"math/big"
	"os"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// TestPKCS8DSADHFromOpenSSL: OpenSSL's PKCS#8 DSA and DH private keys
// (testdata, `openssl genpkey` then `openssl pkcs8 -topk8 -nocrypt`) parse
// into keys the token accepts, and encode back to the same bytes.
func TestPKCS8DSADHFromOpenSSL(t *testing.T) {
	for _, c := range []struct {
		file string
		kt   uint64
	}{{"dsa_pkcs8.der", ck.CKK_DSA}, {"dh_pkcs8.der", ck.CKK_DH}} {
		der, err := os.ReadFile("testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		vals, kt, err := mech.ParsePKCS8(der)
		if err != nil || kt != c.kt {
			t.Fatalf("%s: %s, %v", c.file, ck.Name("CKK_", kt), err)
		}
		a := vals.Clone()
		a[ck.CKA_CLASS], a[ck.CKA_KEY_TYPE] = ck.ULong(ck.CKO_PRIVATE_KEY), ck.ULong(kt)
		obj, _, err := buildObjectFrom(a, nil, keyOrigin{mode: modeCreate}, userLoggedIn)
		if err != nil {
			t.Fatalf("%s: build: %v", c.file, err)
		}
		back, err := mech.MarshalPKCS8(&object{attrs: obj, complete: true})
		if err != nil {
			t.Fatalf("%s: marshal: %v", c.file, err)
		}
		if !bytes.Equal(back, der) {
			t.Fatalf("%s: re-encoded differently:\n%x\n%x", c.file, back, der)
		}
	}
	// Garbage under the DSA OID.
	der, _ := os.ReadFile("testdata/dsa_pkcs8.der")
	bad := bytes.Clone(der)
	bad[len(bad)-22] = 0x04 // the private key's INTEGER tag becomes an OCTET STRING
	if _, _, err := mech.ParsePKCS8(bad); ck.RV(err) != uint64(ck.CKR_WRAPPED_KEY_INVALID) {
		t.Fatalf("bad private key: %v", err)
	}
}

// TestWrapDSAKey: a DSA key made on the token is wrapped with AES key wrap
// (PKCS#8 inside) and unwrapped; the unwrapped key signs what the original
// public key verifies.
func TestWrapDSAKey(t *testing.T) {
	m, _, sh := readyToken(t)
	p := dsaParams(t, 1024, 160)
	pub, priv, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_DSA_KEY_PAIR_GEN}, dsaDomain(p),
		[]Attribute{aBool(ck.CKA_EXTRACTABLE, true)})
	must(t, err)
	kek, err := m.GenerateKey(sh, &Mechanism{Type: ck.CKM_AES_KEY_GEN}, []Attribute{aULong(ck.CKA_VALUE_LEN, 32),
		aBool(ck.CKA_WRAP, true), aBool(ck.CKA_UNWRAP, true)})
	must(t, err)
	mc := &Mechanism{Type: ck.CKM_AES_KEY_WRAP_PAD}
	wrapped, _, err := m.WrapKey(sh, mc, kek, priv, Out{Cap: 4096})
	must(t, err)
	h, err := m.UnwrapKey(sh, mc, kek, wrapped, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aBool(ck.CKA_SIGN, true)})
	must(t, err)
	if v := attrValue(t, m, sh, h, ck.CKA_KEY_TYPE); !bytes.Equal(v, ck.ULong(ck.CKK_DSA)) {
		t.Fatalf("unwrapped key type %x", v)
	}
	msg := []byte("unwrapped")
	sig, err := signWith(t, m, sh, h, ck.CKM_DSA_SHA256, msg)
	must(t, err)
	d := sha256.Sum256(msg)
	verifyDSA(t, p, new(big.Int).SetBytes(attrValue(t, m, sh, pub, ck.CKA_VALUE)), d[:], sig)
}
