package token

import (
	"bytes"
	"crypto/sha256"
	"math/big"
	"os"
	"testing"

	edsa "github.com/modexp-token/modexp-token/engine/alg/dsa"
	"github.com/modexp-token/modexp-token/token/ck"
)

// TestDSAParameterGen: C_GenerateKey with CKM_DSA_PARAMETER_GEN makes a
// domain parameters object whose values make keys that sign.
func TestDSAParameterGen(t *testing.T) {
	m, _, sh := readyToken(t)
	h, err := m.GenerateKey(sh, &Mechanism{Type: ck.CKM_DSA_PARAMETER_GEN}, []Attribute{aULong(ck.CKA_PRIME_BITS, 1024)})
	must(t, err)
	if v := attrValue(t, m, sh, h, ck.CKA_CLASS); !bytes.Equal(v, ck.ULong(ck.CKO_DOMAIN_PARAMETERS)) {
		t.Fatalf("class %x", v)
	}
	if v := attrValue(t, m, sh, h, ck.CKA_LOCAL); !bytes.Equal(v, ck.Bool(true)) {
		t.Fatalf("CKA_LOCAL %x", v)
	}
	if v := attrValue(t, m, sh, h, ck.CKA_SUB_PRIME_BITS); !bytes.Equal(v, ck.ULong(160)) {
		t.Fatalf("CKA_SUB_PRIME_BITS %x", v)
	}
	p := &edsa.Parameters{
		P: new(big.Int).SetBytes(attrValue(t, m, sh, h, ck.CKA_PRIME)),
		Q: new(big.Int).SetBytes(attrValue(t, m, sh, h, ck.CKA_SUBPRIME)),
		G: new(big.Int).SetBytes(attrValue(t, m, sh, h, ck.CKA_BASE)),
	}
	if p.Size() != (edsa.Size{L: 1024, N: 160}) {
		t.Fatalf("size %v", p.Size())
	}
	pub, priv := genDSA(t, m, sh, p, false)
	msg := []byte("generated parameters")
	sig, err := signWith(t, m, sh, priv, ck.CKM_DSA_SHA256, msg)
	must(t, err)
	d := sha256.Sum256(msg)
	verifyDSA(t, p, new(big.Int).SetBytes(attrValue(t, m, sh, pub, ck.CKA_VALUE)), d[:], sig)
	if hs := find(t, m, sh, aULong(ck.CKA_CLASS, ck.CKO_DOMAIN_PARAMETERS)); len(hs) != 1 || hs[0] != h {
		t.Fatalf("found %v", hs)
	}

	gen := func(tmpl ...Attribute) error {
		_, err := m.GenerateKey(sh, &Mechanism{Type: ck.CKM_DSA_PARAMETER_GEN}, tmpl)
		return err
	}
	wantRV(t, gen(), ck.CKR_TEMPLATE_INCOMPLETE)
	wantRV(t, gen(aULong(ck.CKA_PRIME_BITS, 2048), aULong(ck.CKA_SUB_PRIME_BITS, 160)), ck.CKR_ATTRIBUTE_VALUE_INVALID)
	wantRV(t, gen(aULong(ck.CKA_PRIME_BITS, 1536)), ck.CKR_ATTRIBUTE_VALUE_INVALID)
	wantRV(t, gen(aULong(ck.CKA_PRIME_BITS, 1024), aBytes(ck.CKA_PRIME, p.P.Bytes())), ck.CKR_ATTRIBUTE_READ_ONLY)
	wantRV(t, gen(aULong(ck.CKA_PRIME_BITS, 1024), aULong(ck.CKA_KEY_TYPE, ck.CKK_DH)), ck.CKR_TEMPLATE_INCONSISTENT)
}

// TestDomainParametersImport: C_CreateObject of DSA and DH domain
// parameters, checked like keys' parameters.
func TestDomainParametersImport(t *testing.T) {
	m, _, sh := readyToken(t)
	p := dsaParams(t, 2048, 256)
	base := []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DOMAIN_PARAMETERS), aULong(ck.CKA_KEY_TYPE, ck.CKK_DSA)}
	h, err := m.CreateObject(sh, append(base, dsaDomain(p)...))
	must(t, err)
	if v := attrValue(t, m, sh, h, ck.CKA_PRIME_BITS); !bytes.Equal(v, ck.ULong(2048)) {
		t.Fatalf("CKA_PRIME_BITS %x", v)
	}
	if v := attrValue(t, m, sh, h, ck.CKA_LOCAL); !bytes.Equal(v, ck.Bool(false)) {
		t.Fatalf("CKA_LOCAL %x", v)
	}
	bad := append(base, dsaDomain(p)...)
	bad[len(bad)-1] = aBytes(ck.CKA_BASE, []byte{2})
	_, err = m.CreateObject(sh, bad)
	wantRV(t, err, ck.CKR_ATTRIBUTE_VALUE_INVALID)
	_, err = m.CreateObject(sh, append(base, dsaDomain(p)[:2]...))
	wantRV(t, err, ck.CKR_TEMPLATE_INCOMPLETE)
	_, err = m.CreateObject(sh, append(append(base, dsaDomain(p)...), aULong(ck.CKA_PRIME_BITS, 1024)))
	wantRV(t, err, ck.CKR_TEMPLATE_INCONSISTENT)

	g := ffdheGroup(t, "ffdhe3072")
	dh, err := m.CreateObject(sh, append([]Attribute{aULong(ck.CKA_CLASS, ck.CKO_DOMAIN_PARAMETERS),
		aULong(ck.CKA_KEY_TYPE, ck.CKK_DH)}, dhDomain(g)...))
	must(t, err)
	if v := attrValue(t, m, sh, dh, ck.CKA_PRIME_BITS); !bytes.Equal(v, ck.ULong(3072)) {
		t.Fatalf("DH CKA_PRIME_BITS %x", v)
	}
	_, err = m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DOMAIN_PARAMETERS), aULong(ck.CKA_KEY_TYPE, ck.CKK_RSA)})
	wantRV(t, err, ck.CKR_ATTRIBUTE_VALUE_INVALID)
}

// TestDHParameterGen: CKM_DH_PKCS_PARAMETER_GEN's checks always; a
// 1024-bit generation (seconds to a minute) with MODEXP_SLOW=1.
func TestDHParameterGen(t *testing.T) {
	m, _, sh := readyToken(t)
	gen := func(tmpl ...Attribute) (uint64, error) {
		return m.GenerateKey(sh, &Mechanism{Type: ck.CKM_DH_PKCS_PARAMETER_GEN}, tmpl)
	}
	_, err := gen()
	wantRV(t, err, ck.CKR_TEMPLATE_INCOMPLETE)
	_, err = gen(aULong(ck.CKA_PRIME_BITS, 512))
	wantRV(t, err, ck.CKR_ATTRIBUTE_VALUE_INVALID)
	if os.Getenv("MODEXP_SLOW") != "1" {
		t.Skip("a 1024-bit generation: set MODEXP_SLOW=1")
	}
	h, err := gen(aULong(ck.CKA_PRIME_BITS, 1024))
	must(t, err)
	grp := ffdheGroup(t, "ffdhe2048")
	grp.P = new(big.Int).SetBytes(attrValue(t, m, sh, h, ck.CKA_PRIME))
	grp.G = new(big.Int).SetBytes(attrValue(t, m, sh, h, ck.CKA_BASE))
	pubA, privA := genDH(t, m, sh, grp)
	pubB, privB := genDH(t, m, sh, grp)
	za, err := deriveSecret(t, m, sh, privA, attrValue(t, m, sh, pubB, ck.CKA_VALUE))
	must(t, err)
	zb, err := deriveSecret(t, m, sh, privB, attrValue(t, m, sh, pubA, ck.CKA_VALUE))
	must(t, err)
	if !bytes.Equal(za, zb) {
		t.Fatal("secrets differ")
	}
}
