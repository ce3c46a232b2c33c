package rsapad

import (
	"bytes"
	"crypto"
	"errors"
	"math/big"
	"testing"

	"github.com/modexp-token/modexp-token/test/vectors/wycheproof"
)

// Project Wycheproof vectors (test/vectors/wycheproof: one copy of each file,
// shared with engine/alg/rsa's tests). Every test case runs: "valid" must be
// accepted with the expected result, "invalid" rejected (by the raw RSA
// step's range checks or by this package), and "acceptable" follows the
// policy in acceptablePolicy.

// acceptablePolicy says, per Wycheproof flag, whether this package accepts
// test cases marked "acceptable" with that flag. Every acceptable case must
// carry a flag listed here.
var acceptablePolicy = map[string]bool{
	// DigestInfo without the NULL parameters. RFC 8017 §9.2 note 1 gives
	// the NULL form only, and VerifyPKCS1v15Sign compares against the one
	// valid encoding, so it is rejected (as crypto/rsa does).
	"MissingNull": false,
}

// loadWycheproof reads one of the shared vector files, failing (not
// skipping) the test if it is missing, malformed, or of another schema.
func loadWycheproof(t *testing.T, name, schema string) *wycheproof.RSAFile {
	t.Helper()
	f, err := wycheproof.RSA(name, schema)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func wpHash(t *testing.T, name string) crypto.Hash {
	t.Helper()
	h, ok := map[string]crypto.Hash{
		"SHA-1": crypto.SHA1, "SHA-224": crypto.SHA224, "SHA-256": crypto.SHA256,
		"SHA-384": crypto.SHA384, "SHA-512": crypto.SHA512,
	}[name]
	if !ok {
		t.Fatalf("unknown hash %q", name)
	}
	return h
}

// tally counts outcomes so every file's log shows where cases were decided.
type tally struct {
	validOK, rejectedRaw, rejectedPad, acceptable int
}

// judge checks one test case's outcome: rawErr from the raw RSA step, err
// from this package (only meaningful if rawErr is nil), and ok whether the
// result (message, verification) matched the vector when err is nil.
func (c *tally) judge(t *testing.T, tc wycheproof.Test, rawErr, err error, ok bool) {
	t.Helper()
	accepted := rawErr == nil && err == nil && ok
	switch tc.Result {
	case "valid":
		if !accepted {
			t.Errorf("tcId %d (%s %v): valid case rejected: raw %v, pad %v, result ok %v", tc.TcID, tc.Comment, tc.Flags, rawErr, err, ok)
			return
		}
		c.validOK++
	case "invalid":
		switch {
		case accepted:
			t.Errorf("tcId %d (%s %v): invalid case accepted", tc.TcID, tc.Comment, tc.Flags)
		case err == nil && rawErr == nil:
			t.Errorf("tcId %d (%s %v): invalid case gave a wrong result without an error", tc.TcID, tc.Comment, tc.Flags)
		case rawErr != nil:
			c.rejectedRaw++
		default:
			c.rejectedPad++
		}
	case "acceptable":
		c.acceptable++
		known := false
		for _, f := range tc.Flags {
			if want, ok := acceptablePolicy[f]; ok {
				known = true
				if accepted != want {
					t.Errorf("tcId %d (%v): acceptable case accepted=%v, policy says %v", tc.TcID, tc.Flags, accepted, want)
				}
			}
		}
		if !known {
			t.Errorf("tcId %d (%v): acceptable case with no documented policy", tc.TcID, tc.Flags)
		}
	default:
		t.Fatalf("tcId %d: unknown result %q", tc.TcID, tc.Result)
	}
}

func (c *tally) log(t *testing.T) {
	t.Logf("valid accepted %d; invalid rejected by raw RSA step %d, by rsapad %d; acceptable %d",
		c.validOK, c.rejectedRaw, c.rejectedPad, c.acceptable)
}

func TestWycheproofPSS(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"rsa_pss_2048_sha256_mgf1_32_test.json",
		"rsa_pss_4096_sha512_mgf1_32_test.json",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := loadWycheproof(t, name, "rsassa_pss_verify_schema_v1.json")
			var c tally
			for _, g := range f.TestGroups {
				h, mgf := wpHash(t, g.SHA), wpHash(t, g.MGFSHA)
				n := new(big.Int).SetBytes(g.PublicKey.Modulus)
				e := new(big.Int).SetBytes(g.PublicKey.PublicExponent)
				for _, tc := range g.Tests {
					em, rawErr := rawExp(n, e, tc.Sig)
					var err error
					if rawErr == nil {
						err = VerifyPSS(digestOf(h, tc.Msg), em, n.BitLen()-1, h, mgf, g.SLen)
						if err != nil && !errors.Is(err, ErrVerification) {
							t.Errorf("tcId %d: error %v does not wrap ErrVerification", tc.TcID, err)
						}
					}
					c.judge(t, tc, rawErr, err, true)
				}
			}
			c.log(t)
		})
	}
}

func TestWycheproofPKCS1v15Sign(t *testing.T) {
	t.Parallel()
	f := loadWycheproof(t, "rsa_signature_2048_sha256_test.json", "rsassa_pkcs1_verify_schema_v1.json")
	var c tally
	for _, g := range f.TestGroups {
		h := wpHash(t, g.SHA)
		n := new(big.Int).SetBytes(g.PublicKey.Modulus)
		e := new(big.Int).SetBytes(g.PublicKey.PublicExponent)
		for _, tc := range g.Tests {
			em, rawErr := rawExp(n, e, tc.Sig)
			var err error
			if rawErr == nil {
				di, derr := DigestInfo(h, digestOf(h, tc.Msg))
				if derr != nil {
					t.Fatal(derr)
				}
				err = VerifyPKCS1v15Sign(di, em)
				if err != nil && !errors.Is(err, ErrVerification) {
					t.Errorf("tcId %d: error %v does not wrap ErrVerification", tc.TcID, err)
				}
			}
			c.judge(t, tc, rawErr, err, true)
		}
	}
	c.log(t)
}

func TestWycheproofOAEP(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"rsa_oaep_2048_sha1_mgf1sha1_test.json",
		"rsa_oaep_2048_sha256_mgf1sha256_test.json",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := loadWycheproof(t, name, "rsaes_oaep_decrypt_schema_v1.json")
			var c tally
			for _, g := range f.TestGroups {
				h, mgf := wpHash(t, g.SHA), wpHash(t, g.MGFSHA)
				n := new(big.Int).SetBytes(g.PrivateKey.Modulus)
				d := new(big.Int).SetBytes(g.PrivateKey.PrivateExponent)
				k := (n.BitLen() + 7) / 8
				for _, tc := range g.Tests {
					em, rawErr := rawExp(n, d, tc.Ct)
					var err error
					var got []byte
					if rawErr == nil {
						got, err = DecodeOAEP(em, tc.Label, k, h, mgf)
						if err != nil && err != ErrDecryption {
							t.Errorf("tcId %d: error %v is not ErrDecryption itself", tc.TcID, err)
						}
					}
					c.judge(t, tc, rawErr, err, bytes.Equal(got, tc.Msg))
				}
			}
			c.log(t)
		})
	}
}

func TestWycheproofPKCS1v15Decrypt(t *testing.T) {
	t.Parallel()
	f := loadWycheproof(t, "rsa_pkcs1_2048_test.json", "rsaes_pkcs1_decrypt_schema_v1.json")
	var c tally
	for _, g := range f.TestGroups {
		n := new(big.Int).SetBytes(g.PrivateKey.Modulus)
		d := new(big.Int).SetBytes(g.PrivateKey.PrivateExponent)
		k := (n.BitLen() + 7) / 8
		for _, tc := range g.Tests {
			em, rawErr := rawExp(n, d, tc.Ct)
			var err error
			var got []byte
			if rawErr == nil {
				got, err = DecodePKCS1v15Encrypt(em, k)
				if err != nil && err != ErrDecryption {
					t.Errorf("tcId %d: error %v is not ErrDecryption itself", tc.TcID, err)
				}
				// Implicit rejection agrees on every valid padding and
				// answers every invalid one with a message, no error.
				irKey, _ := ImplicitRejectionKey(g.PrivateKey.PrivateExponent, k)
				ir, irErr := DecodePKCS1v15EncryptImplicit(em, leftPad(tc.Ct, k), irKey, k)
				switch {
				case irErr != nil:
					t.Errorf("tcId %d: implicit rejection: %v", tc.TcID, irErr)
				case err == nil && !bytes.Equal(ir, got):
					t.Errorf("tcId %d: implicit rejection gave %x for a valid padding, want %x", tc.TcID, ir, got)
				case len(ir) > k-11:
					t.Errorf("tcId %d: implicit rejection gave %d bytes", tc.TcID, len(ir))
				}
			}
			c.judge(t, tc, rawErr, err, bytes.Equal(got, tc.Msg))
		}
	}
	c.log(t)
}
