package clients

// These tests reach the module through p11-kit's remoting: the test binary
// loads p11-kit-client.so (C), which runs `p11-kit remote <module>` as a
// child process (exec mode: P11_KIT_SERVER_ADDRESS='|p11-kit remote
// /abs/path/libmodexp-pkcs11.so') and speaks p11-kit's RPC protocol over its
// stdin/stdout. So crypto11 and miekg/pkcs11 run in-process here. Loading
// the module itself into a Go program (a second Go runtime in the process,
// unsupported upstream) is the other path: crypto11suite_test.go runs
// crypto11's own suite both ways and stresses the in-process one.
//
// p11-kit 0.24's RPC forwards only mechanisms on its allow-list
// (p11_rpc_mechanism_is_supported). Measured on this module (see
// TestCrypto11/mechanisms-through-p11-kit): SHA224-RSA-PKCS, the five
// SHA*-RSA-PKCS-PSS and the SHA224 digest are hidden; measured on SoftHSMv2
// also AES-GCM, AES-CBC(-PAD), AES-CTR, AES-CMAC, DES3-CBC, DSA-SHA*,
// ECDH1-DERIVE and EDDSA. What crypto11 v1.6.2 uses for asymmetric keys is
// all on the list: it hashes in Go and signs with CKM_RSA_PKCS (its own
// DigestInfo), CKM_RSA_PKCS_PSS (with CK_RSA_PKCS_PSS_PARAMS),
// CKM_ECDSA and CKM_DSA, decrypts with CKM_RSA_PKCS and CKM_RSA_PKCS_OAEP,
// generates with CKM_RSA_PKCS_KEY_PAIR_GEN, CKM_EC_KEY_PAIR_GEN and
// CKM_DSA_KEY_PAIR_GEN. The crypto11 features the allow-list hides are its
// symmetric ones (AES-GCM, AES-CBC/CBC-PAD and DES3 block modes through
// NewGCM/NewCBC); the DSA-SHA* mechanisms it hides, crypto11 does not use.

import (
	"bytes"
	"crypto"
	"crypto/dsa" //nolint:staticcheck // deprecated; crypto11 takes its parameters and checks here
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	_ "crypto/sha1" // crypto.SHA1.New
	"crypto/sha256"
	_ "crypto/sha512" // crypto.SHA384/SHA512.New
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ThalesGroup/crypto11"
	"github.com/miekg/pkcs11"
)

// remoteEnv puts the token's environment and P11_KIT_SERVER_ADDRESS into
// this process's environment for the duration of the test: p11-kit-client
// starts `p11-kit remote` with it. Tests that call it cannot be parallel.
func (tk *testToken) remoteEnv(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(p11KitClient); err != nil {
		t.Fatalf("p11-kit client module missing (Debian p11-kit-modules): %v", err)
	}
	needTools(t, "p11-kit")
	for _, kv := range tk.env {
		k, v, _ := strings.Cut(kv, "=")
		if k != "PATH" {
			t.Setenv(k, v)
		}
	}
	t.Setenv("MODEXP_TOKEN_LOG", "") // the module must not write to the RPC pipe; a log file is fine but not wanted here
	t.Setenv("P11_KIT_SERVER_ADDRESS", "|p11-kit remote "+tk.module)
}

// withRemote opens p11-kit-client.so through miekg/pkcs11, logs in to the
// test token and runs f with a session; it finalises at the end.
func withRemote(t *testing.T, f func(p *pkcs11.Ctx, slot uint, s pkcs11.SessionHandle)) {
	t.Helper()
	p := pkcs11.New(p11KitClient)
	if p == nil {
		t.Fatalf("load %s failed", p11KitClient)
	}
	defer p.Destroy()
	if err := p.Initialize(); err != nil {
		t.Fatalf("C_Initialize through p11-kit-client: %v", err)
	}
	defer p.Finalize()
	slots, err := p.GetSlotList(true)
	if err != nil || len(slots) == 0 {
		t.Fatalf("C_GetSlotList through p11-kit-client: %v %v", slots, err)
	}
	var slot uint
	found := false
	for _, s := range slots {
		if ti, err := p.GetTokenInfo(s); err == nil && strings.TrimRight(ti.Label, " ") == tokenLabel {
			slot, found = s, true
		}
	}
	if !found {
		t.Fatalf("no token %q through p11-kit-client (slots %v)", tokenLabel, slots)
	}
	s, err := p.OpenSession(slot, pkcs11.CKF_SERIAL_SESSION|pkcs11.CKF_RW_SESSION)
	if err != nil {
		t.Fatalf("C_OpenSession: %v", err)
	}
	defer p.CloseSession(s)
	if err := p.Login(s, pkcs11.CKU_USER, userPIN); err != nil {
		t.Fatalf("C_Login: %v", err)
	}
	f(p, slot, s)
}

// TestCrypto11 uses the token from Go with github.com/ThalesGroup/crypto11
// over p11-kit-client.so: random numbers, RSA and ECDSA key generation,
// PKCS#1 v1.5, PSS and OAEP, finding and deleting keys, certificates.
// Every result is checked with Go's own crypto.
func TestCrypto11(t *testing.T) {
	tk := newToken(t)
	tk.remoteEnv(t)

	t.Run("mechanisms-through-p11-kit", func(t *testing.T) {
		tk := tk.with(t)
		direct := tk.mechanisms()
		withRemote(t, func(p *pkcs11.Ctx, slot uint, _ pkcs11.SessionHandle) {
			ms, err := p.GetMechanismList(slot)
			if err != nil {
				t.Fatalf("C_GetMechanismList: %v", err)
			}
			have := map[uint]bool{}
			for _, m := range ms {
				have[m.Mechanism] = true
			}
			// What crypto11 needs for RSA and ECDSA keys.
			need := map[string]uint{"RSA-PKCS-KEY-PAIR-GEN": pkcs11.CKM_RSA_PKCS_KEY_PAIR_GEN, "RSA-PKCS": pkcs11.CKM_RSA_PKCS,
				"RSA-PKCS-PSS": pkcs11.CKM_RSA_PKCS_PSS, "RSA-PKCS-OAEP": pkcs11.CKM_RSA_PKCS_OAEP,
				"ECDSA-KEY-PAIR-GEN": pkcs11.CKM_EC_KEY_PAIR_GEN, "ECDSA": pkcs11.CKM_ECDSA}
			for name, m := range need {
				if _, listed := direct[name]; listed && !have[m] {
					t.Errorf("%s is listed by the module but hidden by p11-kit: crypto11 needs it", name)
				}
			}
		})
		// The hidden set by name, for docs/USAGE.md.
		remote := tk.remoteMechanismNames()
		var hidden []string
		for name := range direct {
			if !remote[name] {
				hidden = append(hidden, name)
			}
		}
		sort.Strings(hidden)
		t.Logf("mechanisms hidden by p11-kit's RPC allow-list: %v (%d of %d visible)", hidden, len(remote), len(direct))
	})

	ctx, err := crypto11.Configure(&crypto11.Config{Path: p11KitClient, TokenLabel: tokenLabel, Pin: userPIN})
	if err != nil {
		t.Fatalf("crypto11.Configure through p11-kit-client: %v", err)
	}
	defer func() {
		if err := ctx.Close(); err != nil {
			t.Errorf("crypto11 Close: %v", err)
		}
	}()

	t.Run("random", func(t *testing.T) {
		r, err := ctx.NewRandomReader()
		if err != nil {
			t.Fatal(err)
		}
		a, b := make([]byte, 64), make([]byte, 64)
		for _, buf := range [][]byte{a, b} {
			if n, err := r.Read(buf); err != nil || n != len(buf) {
				t.Fatalf("C_GenerateRandom: %d bytes, %v", n, err)
			}
		}
		if bytes.Equal(a, b) || bytes.Equal(a, make([]byte, 64)) {
			t.Fatalf("two random reads: %x and %x", a, b)
		}
	})

	var rsaKey crypto11.SignerDecrypter
	t.Run("rsa-generate", func(t *testing.T) {
		k, err := ctx.GenerateRSAKeyPairWithLabel([]byte{0xc1}, []byte("c11-rsa"), 2048)
		if err != nil {
			t.Fatalf("GenerateRSAKeyPair: %v", err)
		}
		pub, ok := k.Public().(*rsa.PublicKey)
		if !ok || pub.N.BitLen() != 2048 {
			t.Fatalf("generated public key %T, want RSA-2048", k.Public())
		}
		rsaKey = k
	})
	if rsaKey == nil {
		t.Fatal("no RSA key: the remaining subtests need it")
	}
	rsaPub := rsaKey.Public().(*rsa.PublicKey)
	msg := []byte("signed by crypto11 through p11-kit remote")

	t.Run("rsa-pkcs1v15", func(t *testing.T) {
		for _, h := range []crypto.Hash{crypto.SHA1, crypto.SHA224, crypto.SHA256, crypto.SHA384, crypto.SHA512} {
			d := digest(h, msg)
			sig, err := rsaKey.Sign(rand.Reader, d, h)
			if err != nil {
				t.Fatalf("%v: Sign: %v", h, err)
			}
			if err := rsa.VerifyPKCS1v15(rsaPub, h, d, sig); err != nil {
				t.Errorf("%v: PKCS#1 v1.5 signature does not verify: %v", h, err)
			}
		}
	})

	t.Run("rsa-pss", func(t *testing.T) {
		for _, h := range []crypto.Hash{crypto.SHA1, crypto.SHA224, crypto.SHA256, crypto.SHA384, crypto.SHA512} {
			// crypto11 refuses rsa.PSSSaltLengthAuto (= 0): it cannot size the salt.
			for _, salt := range []int{rsa.PSSSaltLengthEqualsHash, 32} {
				d := digest(h, msg)
				opts := &rsa.PSSOptions{SaltLength: salt, Hash: h}
				sig, err := rsaKey.Sign(rand.Reader, d, opts)
				if err != nil {
					t.Fatalf("%v salt %d: Sign: %v", h, salt, err)
				}
				if err := rsa.VerifyPSS(rsaPub, h, d, sig, opts); err != nil {
					t.Errorf("%v salt %d: PSS signature does not verify: %v", h, salt, err)
				}
			}
		}
	})

	t.Run("rsa-decrypt", func(t *testing.T) {
		secret := []byte("a session key, say")
		ct, err := rsa.EncryptPKCS1v15(rand.Reader, rsaPub, secret)
		if err != nil {
			t.Fatal(err)
		}
		if pt, err := rsaKey.Decrypt(rand.Reader, ct, nil); err != nil || !bytes.Equal(pt, secret) {
			t.Errorf("PKCS#1 v1.5 decrypt: %q, %v", pt, err)
		}
		for _, c := range []struct {
			h     crypto.Hash
			label []byte
		}{{crypto.SHA1, nil}, {crypto.SHA256, nil}, {crypto.SHA256, []byte("label")}, {crypto.SHA512, nil}} {
			ct, err := rsa.EncryptOAEP(c.h.New(), rand.Reader, rsaPub, secret, c.label)
			if err != nil {
				t.Fatal(err)
			}
			pt, err := rsaKey.Decrypt(rand.Reader, ct, &rsa.OAEPOptions{Hash: c.h, Label: c.label})
			if tk.kind == kindSoftHSM && (c.h != crypto.SHA1 || c.label != nil) {
				// SoftHSMv2 2.6 does OAEP with SHA-1 and no label only.
				t.Logf("SoftHSM: OAEP %v label %q: %v (known SoftHSM limitation)", c.h, c.label, err)
				continue
			}
			if err != nil || !bytes.Equal(pt, secret) {
				t.Errorf("OAEP %v label %q decrypt: %q, %v", c.h, c.label, pt, err)
			}
		}
	})

	t.Run("find-and-certificates", func(t *testing.T) {
		byID, err := ctx.FindKeyPair([]byte{0xc1}, nil)
		if err != nil || byID == nil {
			t.Fatalf("FindKeyPair by ID: %v, %v", byID, err)
		}
		byLabel, err := ctx.FindKeyPair(nil, []byte("c11-rsa"))
		if err != nil || byLabel == nil {
			t.Fatalf("FindKeyPair by label: %v, %v", byLabel, err)
		}
		if !rsaPub.Equal(byID.Public()) || !rsaPub.Equal(byLabel.Public()) {
			t.Fatal("found keys differ from the generated one")
		}
		// A self-signed certificate signed by the found key.
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(7512), Subject: pkix.Name{CommonName: "crypto11 test"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, rsaPub, byID)
		if err != nil {
			t.Fatalf("x509.CreateCertificate with the token key: %v", err)
		}
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		if err := cert.CheckSignatureFrom(cert); err != nil {
			t.Fatalf("self-signed certificate does not verify: %v", err)
		}
		if err := ctx.ImportCertificateWithLabel([]byte{0xc1}, []byte("c11-cert"), cert); err != nil {
			t.Fatalf("ImportCertificate: %v", err)
		}
		got, err := ctx.FindCertificate([]byte{0xc1}, nil, nil)
		if err != nil || got == nil || !bytes.Equal(got.Raw, der) {
			t.Fatalf("FindCertificate: %v, %v", got, err)
		}
		if err := ctx.DeleteCertificate([]byte{0xc1}, nil, nil); err != nil {
			t.Fatalf("DeleteCertificate: %v", err)
		}
		if got, err := ctx.FindCertificate([]byte{0xc1}, nil, nil); err != nil || got != nil {
			t.Fatalf("certificate still found after delete: %v, %v", got, err)
		}
	})

	t.Run("ecdsa", func(t *testing.T) {
		tk := tk.with(t)
		tk.requireECDSA()
		for i, curve := range []elliptic.Curve{elliptic.P256(), elliptic.P384(), elliptic.P521()} {
			k, err := ctx.GenerateECDSAKeyPairWithLabel([]byte{0xe0 + byte(i)}, []byte("c11-"+curve.Params().Name), curve)
			if err != nil {
				t.Fatalf("%s: GenerateECDSAKeyPair: %v", curve.Params().Name, err)
			}
			pub, ok := k.Public().(*ecdsa.PublicKey)
			if !ok || pub.Curve != curve {
				t.Fatalf("%s: generated public key %T", curve.Params().Name, k.Public())
			}
			d := digest(crypto.SHA256, msg)
			sig, err := k.Sign(rand.Reader, d, crypto.SHA256)
			if err != nil {
				t.Fatalf("%s: Sign: %v", curve.Params().Name, err)
			}
			if !ecdsa.VerifyASN1(pub, d, sig) {
				t.Errorf("%s: ECDSA signature does not verify", curve.Params().Name)
			}
			if err := k.Delete(); err != nil {
				t.Errorf("%s: Delete: %v", curve.Params().Name, err)
			}
		}
	})

	// crypto11 generates DSA keys with CKM_DSA_KEY_PAIR_GEN on the domain
	// parameters it is given and signs digests with CKM_DSA (both on
	// p11-kit's allow-list), returning a DER signature.
	t.Run("dsa", func(t *testing.T) {
		params := dsaTestParams(t)
		k, err := ctx.GenerateDSAKeyPairWithLabel([]byte{0xd5}, []byte("c11-dsa"), &params)
		if err != nil {
			t.Fatalf("GenerateDSAKeyPair: %v", err)
		}
		pub, ok := k.Public().(*dsa.PublicKey)
		if !ok || pub.P.Cmp(params.P) != 0 {
			t.Fatalf("generated public key %T", k.Public())
		}
		d := digest(crypto.SHA256, msg)
		sig, err := k.Sign(rand.Reader, d, crypto.SHA256)
		if err != nil {
			t.Fatalf("Sign: %v", err)
		}
		var rs struct{ R, S *big.Int }
		if _, err := asn1.Unmarshal(sig, &rs); err != nil {
			t.Fatalf("signature %x: %v", sig, err)
		}
		if !dsa.Verify(pub, d, rs.R, rs.S) {
			t.Error("DSA signature does not verify (crypto/dsa)")
		}
		if err := k.Delete(); err != nil {
			t.Errorf("Delete: %v", err)
		}
	})

	t.Run("delete", func(t *testing.T) {
		if err := rsaKey.Delete(); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		// crypto11 answers "not found" with an error, or with nil, nil.
		if k, err := ctx.FindKeyPair([]byte{0xc1}, nil); k != nil || (err != nil && !strings.Contains(err.Error(), "not found")) {
			t.Fatalf("key pair still found after Delete: %v, %v", k, err)
		}
	})
}

// remoteMechanismNames lists the mechanisms visible through
// p11-kit-client.so by pkcs11-tool's names (pkcs11-tool runs `p11-kit
// remote` itself, from the environment set by remoteEnv).
func (tk *testToken) remoteMechanismNames() map[string]bool {
	tk.t.Helper()
	r := tk.mustRunEnv([]string{"P11_KIT_SERVER_ADDRESS=|p11-kit remote " + tk.module},
		"pkcs11-tool", "--module", p11KitClient, "--list-mechanisms")
	m := map[string]bool{}
	for _, line := range strings.Split(r.stdout, "\n") {
		if sub := mechLine.FindStringSubmatch(line); sub != nil {
			m[sub[1]] = true
		}
	}
	return m
}

// digest hashes msg with h.
func digest(h crypto.Hash, msg []byte) []byte {
	if h == crypto.SHA256 {
		d := sha256.Sum256(msg)
		return d[:]
	}
	w := h.New()
	w.Write(msg)
	return w.Sum(nil)
}
