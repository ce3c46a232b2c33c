package clients

// TestPKCS11Tool's exercises of DSA and Diffie–Hellman. pkcs11-tool 0.23
// can neither generate nor import DSA or DH keys, nor derive with DH, nor
// generate domain parameters: the in-process child does those (a DSA key
// pair on the token for pkcs11-tool afterwards, DSA and DH parameters, a
// DH key pair and C_DeriveKey), and pkcs11-tool signs and verifies with
// the DSA key, checked with crypto/dsa.

import (
	"crypto"
	"crypto/dsa" //nolint:staticcheck // deprecated; the independent check of the token's DSA
	"crypto/rand"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/miekg/pkcs11"
	"github.com/modexp-token/modexp-token/engine/alg/dh/dhtest"
	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// dsaGenID is the CKA_ID of the DSA key pair the child generates.
const dsaGenID = "d5"

// dsaTestParams are the DSA-2048/256 domain parameters of
// engine/alg/dsa/testdata/params_2048_256.pem.
func dsaTestParams(t *testing.T) dsa.Parameters {
	t.Helper()
	p, q, g := e2e.DSAParams(t, "params_2048_256.pem")
	return dsa.Parameters{P: p, Q: q, G: g}
}

// dsaSignCases are TestPKCS11Tool's signatures with the DSA key the child
// generated (its y in data["dsa-y"]): pkcs11-tool --sign with CKM_DSA (of
// a SHA-256 digest) and CKM_DSA_SHA*, each r‖s checked with crypto/dsa.
func (ex *p11Exercises) dsaSignCases(t *testing.T, data map[string][]byte, names []string, msg []byte) []signCase {
	t.Helper()
	var cases []signCase
	for _, n := range names {
		if n != "DSA" && !strings.HasPrefix(n, "DSA-SHA") || !ex.has(n, "sign") {
			continue
		}
		if data["dsa-y"] == nil {
			t.Errorf("%s listed, but no DSA key could be generated (no DSA-KEY-PAIR-GEN)", n)
			continue
		}
		hn, in := "SHA256", msg
		if n == "DSA" {
			in = digest(crypto.SHA256, msg)
		} else {
			hn = strings.TrimPrefix(n, "DSA-")
		}
		h, ok := p11Hashes[hn]
		if !ok {
			continue // no exercise: reported by the deferred check
		}
		pub := &dsa.PublicKey{Parameters: dsaTestParams(t), Y: new(big.Int).SetBytes(data["dsa-y"])}
		size := (pub.Q.BitLen() + 7) / 8
		d := digest(h, msg)
		if len(d) > size {
			d = d[:size] // FIPS 186-4 §4.6: the leftmost N bits
		}
		cases = append(cases, signCase{n, dsaGenID, []string{"-m", n}, in, func(sig []byte) error {
			if len(sig) != 2*size {
				return fmt.Errorf("DSA signature is %d bytes, want r||s of %d", len(sig), 2*size)
			}
			if !dsa.Verify(pub, d, new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])) {
				return fmt.Errorf("DSA signature does not verify (crypto/dsa)")
			}
			return nil
		}})
	}
	return cases
}

// attr reads one attribute of an object.
func (c *inProcessClient) attr(o pkcs11.ObjectHandle, typ uint) []byte {
	c.t.Helper()
	a, err := c.p.GetAttributeValue(c.s, o, []*pkcs11.Attribute{pkcs11.NewAttribute(typ, nil)})
	if err != nil || len(a) != 1 {
		c.t.Fatalf("C_GetAttributeValue(0x%x): %v", typ, err)
	}
	return a[0].Value
}

// bigAttr reads an integer attribute.
func (c *inProcessClient) bigAttr(o pkcs11.ObjectHandle, typ uint) *big.Int {
	c.t.Helper()
	return new(big.Int).SetBytes(c.attr(o, typ))
}

// inSubgroup reports whether 1 < y < p−1 and y^q ≡ 1 (mod p).
func inSubgroup(y, p, q *big.Int) bool {
	pm1 := new(big.Int).Sub(p, big.NewInt(1))
	return y.Cmp(big.NewInt(1)) > 0 && y.Cmp(pm1) < 0 && new(big.Int).Exp(y, q, p).Cmp(big.NewInt(1)) == 0
}

// dsaDH is the child's part for DSA and DH: CKM_DSA_KEY_PAIR_GEN (a token
// key pair, CKA_ID dsaGenID, whose private key signs a digest checked here
// with crypto/dsa), CKM_DSA_PARAMETER_GEN (1024 bits: primes, q | p−1 and
// g of order q checked with math/big), CKM_DH_PKCS_PARAMETER_GEN (1024
// bits, under a few seconds: a safe prime and g of order (p−1)/2),
// CKM_DH_PKCS_KEY_PAIR_GEN on ffdhe2048 (RFC 7919) and
// CKM_DH_PKCS_DERIVE with a peer made here, whose secret math/big
// computes too.
func (c *inProcessClient) dsaDH() {
	t := c.t
	one := big.NewInt(1)

	// DSA key pair on the token.
	if c.offers(pkcs11.CKM_DSA_KEY_PAIR_GEN, pkcs11.CKM_DSA) {
		params := dsaTestParams(t)
		id := decodeHex(t, dsaGenID)
		pubH, privH, err := c.p.GenerateKeyPair(c.s, []*pkcs11.Mechanism{pkcs11.NewMechanism(pkcs11.CKM_DSA_KEY_PAIR_GEN, nil)},
			[]*pkcs11.Attribute{
				pkcs11.NewAttribute(pkcs11.CKA_PRIME, params.P.Bytes()), pkcs11.NewAttribute(pkcs11.CKA_SUBPRIME, params.Q.Bytes()),
				pkcs11.NewAttribute(pkcs11.CKA_BASE, params.G.Bytes()), pkcs11.NewAttribute(pkcs11.CKA_TOKEN, true),
				pkcs11.NewAttribute(pkcs11.CKA_VERIFY, true), pkcs11.NewAttribute(pkcs11.CKA_ID, id),
				pkcs11.NewAttribute(pkcs11.CKA_LABEL, "dsa-2048"),
			},
			[]*pkcs11.Attribute{
				pkcs11.NewAttribute(pkcs11.CKA_TOKEN, true), pkcs11.NewAttribute(pkcs11.CKA_PRIVATE, true),
				pkcs11.NewAttribute(pkcs11.CKA_SENSITIVE, true), pkcs11.NewAttribute(pkcs11.CKA_SIGN, true),
				pkcs11.NewAttribute(pkcs11.CKA_ID, id), pkcs11.NewAttribute(pkcs11.CKA_LABEL, "dsa-2048"),
			})
		if err != nil {
			t.Fatalf("C_GenerateKeyPair(CKM_DSA_KEY_PAIR_GEN): %v", err)
		}
		y := c.bigAttr(pubH, pkcs11.CKA_VALUE)
		pub := &dsa.PublicKey{Parameters: params, Y: y}
		d := digest(crypto.SHA256, []byte("signed in process"))
		sig := c.sign(pkcs11.NewMechanism(pkcs11.CKM_DSA, nil), privH, d)
		if !inSubgroup(y, params.P, params.Q) || len(sig) != 64 ||
			!dsa.Verify(pub, d, new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			t.Errorf("generated DSA key: y in the subgroup %v; its signature %x does not verify (crypto/dsa)", inSubgroup(y, params.P, params.Q), sig)
		} else {
			c.data("dsa-y", y.Bytes())
			c.exercised(pkcs11.CKM_DSA_KEY_PAIR_GEN, "DSA-KEY-PAIR-GEN", "generate_key_pair")
		}
	}

	// DSA domain parameters.
	if c.offers(pkcs11.CKM_DSA_PARAMETER_GEN) {
		dom, err := c.p.GenerateKey(c.s, []*pkcs11.Mechanism{pkcs11.NewMechanism(pkcs11.CKM_DSA_PARAMETER_GEN, nil)},
			[]*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_PRIME_BITS, 1024)})
		if err != nil {
			t.Fatalf("C_GenerateKey(CKM_DSA_PARAMETER_GEN): %v", err)
		}
		p, q, g := c.bigAttr(dom, pkcs11.CKA_PRIME), c.bigAttr(dom, pkcs11.CKA_SUBPRIME), c.bigAttr(dom, pkcs11.CKA_BASE)
		if p.BitLen() != 1024 || q.BitLen() != 160 || !p.ProbablyPrime(32) || !q.ProbablyPrime(32) ||
			new(big.Int).Mod(new(big.Int).Sub(p, one), q).Sign() != 0 || !inSubgroup(g, p, q) {
			t.Errorf("CKM_DSA_PARAMETER_GEN gave p %x, q %x, g %x: not DSA-1024/160 domain parameters", p, q, g)
		} else {
			c.exercised(pkcs11.CKM_DSA_PARAMETER_GEN, "DSA-PARAMETER-GEN", "generate")
		}
	}

	// DH domain parameters: a safe prime p = 2q + 1 and g of order q.
	if c.offers(pkcs11.CKM_DH_PKCS_PARAMETER_GEN) {
		dom, err := c.p.GenerateKey(c.s, []*pkcs11.Mechanism{pkcs11.NewMechanism(pkcs11.CKM_DH_PKCS_PARAMETER_GEN, nil)},
			[]*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_PRIME_BITS, 1024)})
		if err != nil {
			t.Fatalf("C_GenerateKey(CKM_DH_PKCS_PARAMETER_GEN): %v", err)
		}
		p, g := c.bigAttr(dom, pkcs11.CKA_PRIME), c.bigAttr(dom, pkcs11.CKA_BASE)
		q := new(big.Int).Rsh(p, 1)
		if p.BitLen() != 1024 || !p.ProbablyPrime(32) || !q.ProbablyPrime(32) || !inSubgroup(g, p, q) {
			t.Errorf("CKM_DH_PKCS_PARAMETER_GEN gave p %x, g %x: not a safe prime with g of order (p-1)/2", p, g)
		} else {
			c.exercised(pkcs11.CKM_DH_PKCS_PARAMETER_GEN, "DH-PKCS-PARAMETER-GEN", "generate")
		}
	}

	// DH key pair on ffdhe2048, and the derivation.
	if c.offers(pkcs11.CKM_DH_PKCS_KEY_PAIR_GEN, pkcs11.CKM_DH_PKCS_DERIVE) {
		grp := dhtest.KnownGroups()[0]
		if grp.Name != "ffdhe2048" {
			t.Fatalf("first known DH group %s", grp.Name)
		}
		dhPub, dhPriv, err := c.p.GenerateKeyPair(c.s, []*pkcs11.Mechanism{pkcs11.NewMechanism(pkcs11.CKM_DH_PKCS_KEY_PAIR_GEN, nil)},
			[]*pkcs11.Attribute{
				pkcs11.NewAttribute(pkcs11.CKA_PRIME, grp.P.Bytes()), pkcs11.NewAttribute(pkcs11.CKA_BASE, grp.G.Bytes()),
				pkcs11.NewAttribute(pkcs11.CKA_TOKEN, false),
			},
			[]*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_TOKEN, false), pkcs11.NewAttribute(pkcs11.CKA_DERIVE, true)})
		if err != nil {
			t.Fatalf("C_GenerateKeyPair(CKM_DH_PKCS_KEY_PAIR_GEN): %v", err)
		}
		q := new(big.Int).Rsh(grp.P, 1)
		tokenY := c.bigAttr(dhPub, pkcs11.CKA_VALUE)
		if !inSubgroup(tokenY, grp.P, q) {
			t.Errorf("CKM_DH_PKCS_KEY_PAIR_GEN: y %x is not in ffdhe2048's subgroup", tokenY)
		}
		peerX, err := rand.Int(rand.Reader, q)
		if err != nil {
			t.Fatal(err)
		}
		peerX.Add(peerX, one)
		peerY := new(big.Int).Exp(grp.G, peerX, grp.P)
		secretTmpl := []*pkcs11.Attribute{
			pkcs11.NewAttribute(pkcs11.CKA_CLASS, pkcs11.CKO_SECRET_KEY), pkcs11.NewAttribute(pkcs11.CKA_KEY_TYPE, pkcs11.CKK_GENERIC_SECRET),
			pkcs11.NewAttribute(pkcs11.CKA_TOKEN, false), pkcs11.NewAttribute(pkcs11.CKA_SENSITIVE, false),
			pkcs11.NewAttribute(pkcs11.CKA_EXTRACTABLE, true), pkcs11.NewAttribute(pkcs11.CKA_VALUE_LEN, 256), // the whole secret
		}
		z, err := c.p.DeriveKey(c.s, []*pkcs11.Mechanism{pkcs11.NewMechanism(pkcs11.CKM_DH_PKCS_DERIVE, peerY.Bytes())}, dhPriv, secretTmpl)
		if err != nil {
			t.Fatalf("C_DeriveKey(CKM_DH_PKCS_DERIVE): %v", err)
		}
		got := c.attr(z, pkcs11.CKA_VALUE)
		want := new(big.Int).Exp(tokenY, peerX, grp.P).FillBytes(make([]byte, 256))
		_, badErr := c.p.DeriveKey(c.s, []*pkcs11.Mechanism{pkcs11.NewMechanism(pkcs11.CKM_DH_PKCS_DERIVE, []byte{1})}, dhPriv, secretTmpl)
		// A peer value of 1 is refused (the exact code, CKR_MECHANISM_PARAM_INVALID,
		// is test/dsadh_test.go's to check; SoftHSMv2 answers CKR_GENERAL_ERROR).
		if string(got) != string(want) || badErr == nil {
			t.Errorf("CKM_DH_PKCS_DERIVE: %x, math/big %x; with the peer value 1: %v (want a refusal)", got, want, badErr)
		} else if inSubgroup(tokenY, grp.P, q) {
			// The secret agrees: the key pair is a pair.
			c.exercised(pkcs11.CKM_DH_PKCS_KEY_PAIR_GEN, "DH-PKCS-KEY-PAIR-GEN", "generate_key_pair")
			c.exercised(pkcs11.CKM_DH_PKCS_DERIVE, "DH-PKCS-DERIVE", "derive")
		}
	}
}
