package test

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

const (
	soPIN   = "87654321"
	userPIN = "123456"
)

// p11 is pkcs11-tool on the module, in one test's token environment.
type p11 struct {
	t   *testing.T
	env []string
	dir string
}

func newP11(t *testing.T) *p11 {
	t.Helper()
	e2e.NeedTool(t, "pkcs11-tool")
	e2e.NeedTool(t, "openssl")
	env, dir := tokenEnv(t)
	return &p11{t: t, env: env, dir: dir}
}

// run runs pkcs11-tool; a non-zero exit fails the test.
func (p *p11) run(args ...string) string {
	p.t.Helper()
	return e2e.MustRun(p.t, p.env, "pkcs11-tool", append([]string{"--module", libPath}, args...)...)
}

// try runs pkcs11-tool and returns its output and error.
func (p *p11) try(args ...string) (string, error) {
	p.t.Helper()
	return runCmd(p.t, p.env, "pkcs11-tool", append([]string{"--module", libPath}, args...)...)
}

func (p *p11) openssl(args ...string) string {
	p.t.Helper()
	return e2e.MustRun(p.t, p.env, "openssl", args...)
}

func (p *p11) path(name string) string { return filepath.Join(p.dir, name) }

func (p *p11) write(name string, data []byte) string {
	p.t.Helper()
	if err := os.WriteFile(p.path(name), data, 0o600); err != nil {
		p.t.Fatal(err)
	}
	return p.path(name)
}

func (p *p11) read(name string) []byte {
	p.t.Helper()
	b, err := os.ReadFile(p.path(name))
	if err != nil {
		p.t.Fatal(err)
	}
	return b
}

// initToken initialises the token with the SO PIN and the user PIN.
func (p *p11) initToken() {
	p.t.Helper()
	out := p.run("--init-token", "--label", "pkcs11-tool test", "--so-pin", soPIN)
	if !strings.Contains(out, "successfully initialized") {
		p.t.Fatalf("--init-token:\n%s", out)
	}
	out = p.run("--login", "--login-type", "so", "--so-pin", soPIN, "--init-pin", "--pin", userPIN)
	if !strings.Contains(out, "User PIN successfully initialized") {
		p.t.Fatalf("--init-pin:\n%s", out)
	}
}

// genKey generates an RSA-2048 key pair with id and exports the public key
// as PEM; it returns the PEM path and the parsed key.
func (p *p11) genKey(id, label string) (string, *rsa.PublicKey) {
	p.t.Helper()
	p.run("--login", "--pin", userPIN, "--keypairgen", "--key-type", "rsa:2048", "--id", id, "--label", label)
	return p.exportPub(id)
}

func (p *p11) exportPub(id string) (string, *rsa.PublicKey) {
	p.t.Helper()
	der := p.path("pub-" + id + ".der")
	p.run("--read-object", "--type", "pubkey", "--id", id, "--output-file", der)
	pemPath := p.path("pub-" + id + ".pem")
	p.openssl("pkey", "-pubin", "-inform", "DER", "-in", der, "-out", pemPath)
	block, _ := pem.Decode(p.read("pub-" + id + ".pem"))
	if block == nil {
		p.t.Fatal("exported public key: no PEM block")
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		p.t.Fatalf("exported public key: %v", err)
	}
	pub, ok := k.(*rsa.PublicKey)
	if !ok || pub.N.BitLen() != 2048 {
		p.t.Fatalf("exported public key is %T", k)
	}
	return pemPath, pub
}

// TestPkcs11ToolRSA: init, PIN, RSA-2048 generation, signatures verified by
// openssl and crypto/rsa, encryption by openssl decrypted on the token.
func TestPkcs11ToolRSA(t *testing.T) {
	p := newP11(t)
	p.initToken()
	pubPEM, pub := p.genKey("01", "tool-key")

	msg := p.write("msg.txt", []byte("signed by ModExp Token through pkcs11-tool\n"))
	digest := sha256.Sum256(p.read("msg.txt"))
	dgst := p.write("msg.sha256", digest[:])

	t.Run("SHA256-RSA-PKCS", func(t *testing.T) {
		p.run("--login", "--pin", userPIN, "--sign", "--id", "01", "--mechanism", "SHA256-RSA-PKCS",
			"--input-file", msg, "--output-file", p.path("pkcs1.sig"))
		out := p.openssl("dgst", "-sha256", "-verify", pubPEM, "-signature", p.path("pkcs1.sig"), msg)
		if !strings.Contains(out, "Verified OK") {
			t.Fatalf("openssl dgst -verify:\n%s", out)
		}
		if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], p.read("pkcs1.sig")); err != nil {
			t.Fatalf("crypto/rsa: %v", err)
		}
	})
	t.Run("RSA-PKCS-PSS over a SHA-256 digest", func(t *testing.T) {
		p.run("--login", "--pin", userPIN, "--sign", "--id", "01", "--mechanism", "RSA-PKCS-PSS",
			"--hash-algorithm", "SHA256", "--mgf", "MGF1-SHA256", "--salt-len", "32",
			"--input-file", dgst, "--output-file", p.path("pss.sig"))
		out := p.openssl("pkeyutl", "-verify", "-pubin", "-inkey", pubPEM, "-in", dgst,
			"-sigfile", p.path("pss.sig"), "-pkeyopt", "digest:sha256",
			"-pkeyopt", "rsa_padding_mode:pss", "-pkeyopt", "rsa_pss_saltlen:32")
		if !strings.Contains(out, "Signature Verified Successfully") {
			t.Fatalf("openssl pkeyutl -verify:\n%s", out)
		}
		err := rsa.VerifyPSS(pub, crypto.SHA256, digest[:], p.read("pss.sig"), &rsa.PSSOptions{SaltLength: 32})
		if err != nil {
			t.Fatalf("crypto/rsa: %v", err)
		}
	})
	t.Run("SHA256-RSA-PKCS-PSS", func(t *testing.T) {
		p.run("--login", "--pin", userPIN, "--sign", "--id", "01", "--mechanism", "SHA256-RSA-PKCS-PSS",
			"--mgf", "MGF1-SHA256", "--salt-len", "32",
			"--input-file", msg, "--output-file", p.path("sha256pss.sig"))
		out := p.openssl("dgst", "-sha256", "-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:32",
			"-verify", pubPEM, "-signature", p.path("sha256pss.sig"), msg)
		if !strings.Contains(out, "Verified OK") {
			t.Fatalf("openssl dgst -verify (PSS):\n%s", out)
		}
	})
	t.Run("token verify detects a bad signature", func(t *testing.T) {
		sig := p.read("pkcs1.sig")
		sig[10] ^= 1
		bad := p.write("bad.sig", sig)
		out, _ := p.try("--verify", "--id", "01", "--mechanism", "SHA256-RSA-PKCS",
			"--input-file", msg, "--signature-file", bad)
		if !strings.Contains(out, "CKR_SIGNATURE_INVALID") && !strings.Contains(out, "Invalid signature") {
			t.Fatalf("pkcs11-tool --verify of a tampered signature:\n%s", out)
		}
		out, _ = p.try("--verify", "--id", "01", "--mechanism", "SHA256-RSA-PKCS",
			"--input-file", msg, "--signature-file", p.path("pkcs1.sig"))
		if !strings.Contains(out, "Signature is valid") {
			t.Fatalf("pkcs11-tool --verify of a good signature:\n%s", out)
		}
	})
	plain := p.write("plain.txt", []byte("the secret the token must recover"))
	for _, c := range []struct {
		name, mech string
		pkeyopts   []string
		extra      []string
	}{
		{"OAEP-SHA256", "RSA-PKCS-OAEP",
			[]string{"rsa_padding_mode:oaep", "rsa_oaep_md:sha256", "rsa_mgf1_md:sha256"},
			[]string{"--hash-algorithm", "SHA256", "--mgf", "MGF1-SHA256"}},
		{"PKCS#1 v1.5", "RSA-PKCS", []string{"rsa_padding_mode:pkcs1"}, nil},
	} {
		t.Run("decrypt "+c.name, func(t *testing.T) {
			ct := p.path("ct-" + c.mech)
			args := []string{"pkeyutl", "-encrypt", "-pubin", "-inkey", pubPEM, "-in", plain, "-out", ct}
			for _, o := range c.pkeyopts {
				args = append(args, "-pkeyopt", o)
			}
			p.openssl(args...)
			out := p.path("pt-" + c.mech)
			p.run(append([]string{"--login", "--pin", userPIN, "--decrypt", "--id", "01", "--mechanism", c.mech,
				"--input-file", ct, "--output-file", out}, c.extra...)...)
			got, err := os.ReadFile(out)
			if err != nil || !bytes.Equal(got, p.read("plain.txt")) {
				t.Fatalf("decrypted %q (%v), want %q", got, err, p.read("plain.txt"))
			}
		})
	}
}

// TestPkcs11ToolImport imports a key made by openssl and signs with it.
func TestPkcs11ToolImport(t *testing.T) {
	p := newP11(t)
	p.initToken()
	keyPEM := p.path("imported.pem")
	p.openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", keyPEM)
	pubPEM := p.path("imported.pub.pem")
	p.openssl("pkey", "-in", keyPEM, "-pubout", "-out", pubPEM)
	p.run("--login", "--pin", userPIN, "--write-object", keyPEM, "--type", "privkey", "--id", "02", "--label", "imported")
	msg := p.write("msg.txt", []byte("signed with an imported key\n"))
	p.run("--login", "--pin", userPIN, "--sign", "--id", "02", "--mechanism", "SHA256-RSA-PKCS",
		"--input-file", msg, "--output-file", p.path("imp.sig"))
	out := p.openssl("dgst", "-sha256", "-verify", pubPEM, "-signature", p.path("imp.sig"), msg)
	if !strings.Contains(out, "Verified OK") {
		t.Fatalf("openssl dgst -verify:\n%s", out)
	}
	// The private key stays private: its secret parts are not readable.
	out, _ = p.try("--login", "--pin", userPIN, "--read-object", "--type", "privkey", "--id", "02",
		"--output-file", p.path("leak.der"))
	if _, err := os.Stat(p.path("leak.der")); err == nil {
		if b := p.read("leak.der"); len(b) > 0 {
			t.Fatalf("the imported private key could be read out (%d bytes):\n%s", len(b), out)
		}
	}
}

// TestPkcs11ToolWrongPIN: a wrong PIN is CKR_PIN_INCORRECT and changes
// nothing; the right PIN still works.
func TestPkcs11ToolWrongPIN(t *testing.T) {
	p := newP11(t)
	p.initToken()
	p.genKey("03", "pin-test")
	objects := func() string {
		return p.run("--login", "--pin", userPIN, "--list-objects")
	}
	before := objects()
	out, err := p.try("--login", "--pin", "999999", "--list-objects")
	if err == nil || !strings.Contains(out, "CKR_PIN_INCORRECT") {
		t.Fatalf("wrong PIN: err %v, output:\n%s", err, out)
	}
	out, err = p.try("--login", "--pin", "999999", "--keypairgen", "--key-type", "rsa:2048", "--id", "04")
	if err == nil || !strings.Contains(out, "CKR_PIN_INCORRECT") {
		t.Fatalf("key generation with a wrong PIN: err %v, output:\n%s", err, out)
	}
	if after := objects(); after != before {
		t.Fatalf("objects changed after wrong PINs:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// The wrong-PIN counter shows, and the right PIN resets it.
	info := p.run("--list-token-slots")
	if !strings.Contains(info, "token initialized") {
		t.Errorf("token slots:\n%s", info)
	}
}

// TestPkcs11ToolSelfTest runs pkcs11-tool's own test suite, logged in, and
// reads its verdict: the exit status alone proves nothing. Without
// --allow-sw pkcs11-tool skips the signature tests (it looks for a
// mechanism flagged CKF_HW, which the software engine honestly does not
// claim); with it, they run too.
func TestPkcs11ToolSelfTest(t *testing.T) {
	p := newP11(t)
	p.initToken()
	p.genKey("05", "self-test")
	for _, c := range []struct {
		name string
		args []string
		must []string // lines the run must show
	}{
		{"--test --login", []string{"--test", "--login", "--pin", userPIN},
			[]string{"Verify (currently only for RSA)", "Decryption (currently only for RSA)", "RSA-PKCS: OK"}},
		{"--test --login --allow-sw", []string{"--test", "--login", "--pin", userPIN, "--allow-sw"},
			[]string{"Signatures (currently only for RSA)", "SHA256-RSA-PKCS: OK", "SHA1-RSA-PKCS: OK", "RSA-PKCS: OK"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := p.try(c.args...)
			if err != nil {
				t.Errorf("pkcs11-tool %v: %v", c.args, err)
			}
			if !regexp.MustCompile(`(?m)^No errors$`).MatchString(out) {
				t.Fatalf("pkcs11-tool %v did not report \"No errors\":\n%s", c.args, out)
			}
			if n := regexp.MustCompile(`(?m)^[0-9]+ errors?$`).FindString(out); n != "" {
				t.Errorf("pkcs11-tool %v reported %q:\n%s", c.args, n, out)
			}
			for _, m := range c.must {
				if !strings.Contains(out, m) {
					t.Errorf("pkcs11-tool %v output lacks %q:\n%s", c.args, m, out)
				}
			}
			for _, bad := range []string{"ERR:", "FAILED", "CKR_GENERAL_ERROR", "CKR_ARGUMENTS_BAD"} {
				if strings.Contains(out, bad) {
					t.Errorf("pkcs11-tool %v output holds %q:\n%s", c.args, bad, out)
				}
			}
		})
	}
}
