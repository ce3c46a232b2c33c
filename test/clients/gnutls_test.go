package clients

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// gnutlsEnv gives GnuTLS tools the PINs (they never prompt in a test).
var gnutlsEnv = []string{"GNUTLS_PIN=" + userPIN, "GNUTLS_SO_PIN=" + soPIN}

// gnutls runs a GnuTLS tool with the PINs in its environment and fails on
// error. GnuTLS reports a C_Initialize that answers CKR_CANT_LOCK or
// CKR_NEED_TO_CREATE_THREADS as "Thread locking error"; the failure message
// says what GnuTLS passed, so the cause is not guessed at.
func (tk *testToken) gnutls(name string, args ...string) result {
	tk.t.Helper()
	r := tk.runEnv(gnutlsEnv, nil, name, args...)
	if r.err != nil {
		hint := ""
		if strings.Contains(r.stderr, "Thread locking error") {
			hint = "\nhint: GnuTLS calls C_Initialize with flags CKF_LIBRARY_CANT_CREATE_OS_THREADS|CKF_OS_LOCKING_OK " +
				"(seen with OpenSC's pkcs11-spy); the module must accept them (answering CKR_NEED_TO_CREATE_THREADS " +
				"or CKR_CANT_LOCK shuts out every GnuTLS program)"
		}
		tk.t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s%s", name, strings.Join(args, " "), r.err, r.stdout, r.stderr, hint)
	}
	return r
}

// asUser prefixes a command so that p11-kit reads the user configuration
// in $HOME/.config/pkcs11. p11-kit skips that configuration in a process
// whose real uid is 0 ("skipping user config in program running as root")
// and offers no variable to point it elsewhere; as root the command
// therefore runs in a new user namespace where the caller is uid 1000. The
// namespace changes no file permission of the caller (files it owns
// outside are its own inside) and touches nothing in /etc.
func asUser(name string, args ...string) (string, []string) {
	if os.Getuid() != 0 {
		return name, args
	}
	return "unshare", append([]string{"--user", "--map-user=1000", "--map-group=1000", name}, args...)
}

// installModuleFile writes dist/p11-kit/modexp-token.module into the
// test's ~/.config/pkcs11/modules with its module: line pointing at the
// module under test, and a pkcs11.conf that makes p11-kit load the user's
// modules only (the machine's modules, such as the system SoftHSM token, are
// none of the test's business).
func (tk *testToken) installModuleFile() {
	tk.t.Helper()
	src := filepath.Join(repoRoot(tk.t), "dist", "p11-kit", "modexp-token.module")
	b, err := os.ReadFile(src)
	if err != nil {
		tk.t.Fatalf("shipped p11-kit module file: %v", err)
	}
	var out []string
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(key) == "module" && !strings.HasPrefix(strings.TrimSpace(line), "#") {
			found = true
			val = strings.TrimSpace(val)
			if val != "libmodexp-pkcs11.so" && !strings.HasSuffix(val, "/libmodexp-pkcs11.so") {
				tk.t.Errorf("%s: module: %q does not name libmodexp-pkcs11.so", src, val)
			}
			line = "module: " + tk.module
		}
		out = append(out, line)
	}
	if !found {
		tk.t.Fatalf("%s has no module: line", src)
	}
	dir := tk.path("home", ".config", "pkcs11", "modules")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tk.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "modexp-token.module"), []byte(strings.Join(out, "\n")), 0o600); err != nil {
		tk.t.Fatal(err)
	}
	tk.write(filepath.Join("home", ".config", "pkcs11", "pkcs11.conf"), "user-config: only\n")
}

// TestP11KitModuleFile checks the shipped p11-kit module file: with it in
// the user configuration, `p11-kit list-modules` shows the module and its
// token, and GnuTLS finds the token without --provider.
func TestP11KitModuleFile(t *testing.T) {
	t.Parallel()
	needTools(t, "p11-kit", "p11tool")
	tk := newToken(t)
	tk.installModuleFile()

	t.Run("list-modules", func(t *testing.T) {
		tk := tk.with(t)
		name, args := asUser("p11-kit", "list-modules")
		r := tk.mustRun(name, args...)
		if !strings.Contains(r.stdout, "modexp-token: "+tk.module) {
			t.Fatalf("p11-kit list-modules does not show modexp-token: %s:\n%s", tk.module, r.combined())
		}
		if !regexp.MustCompile(`(?m)^\s+token: ` + tokenLabel + `$`).MatchString(r.stdout) {
			t.Errorf("p11-kit list-modules does not show token %q:\n%s", tokenLabel, r.combined())
		}
		if tk.kind == kindModExp && !strings.Contains(r.stdout, "library-manufacturer: ModExp Token") {
			t.Errorf("p11-kit list-modules does not show our manufacturer:\n%s", r.combined())
		}
	})

	t.Run("p11tool-through-config", func(t *testing.T) {
		tk := tk.with(t)
		name, args := asUser("p11tool", "--list-tokens")
		r := tk.gnutls(name, args...)
		if !regexp.MustCompile(`(?m)^\s+Label: ` + tokenLabel + `$`).MatchString(r.stdout) {
			t.Fatalf("p11tool --list-tokens (modules from the p11-kit configuration) does not show token %q:\n%s",
				tokenLabel, r.combined())
		}
	})
}

// TestGnuTLS drives GnuTLS's p11tool and certtool with the module given
// by --provider (no p11-kit configuration needed): key generation, listing
// after login, a test signature, and a self-signed certificate.
func TestGnuTLS(t *testing.T) {
	t.Parallel()
	needTools(t, "p11tool", "certtool")
	tk := newToken(t)
	p11tool := func(tk *testToken, args ...string) result {
		tk.t.Helper()
		return tk.gnutls("p11tool", append([]string{"--provider", tk.module}, args...)...)
	}
	tokenURI := "pkcs11:token=" + tokenLabel
	keyURI := "pkcs11:token=" + tokenLabel + ";object=gnutls-rsa;type=private"

	t.Run("generate-privkey", func(t *testing.T) {
		tk := tk.with(t)
		r := p11tool(tk, "--login", "--generate-privkey", "rsa", "--bits", "2048", "--label", "gnutls-rsa", "--id", "02",
			"--outfile", tk.path("gnutls-rsa.pub"), tokenURI)
		block, _ := pem.Decode(tk.read("gnutls-rsa.pub"))
		if block == nil {
			t.Fatalf("p11tool --generate-privkey wrote no PEM public key:\n%s", r.combined())
		}
		pub, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		_, onToken := tk.publicKey("02")
		if !publicKeysEqual(pub, onToken) {
			t.Fatalf("p11tool printed %v, the token holds %v", pub, onToken)
		}
	})

	t.Run("list-all", func(t *testing.T) {
		tk := tk.with(t)
		r := p11tool(tk, "--login", "--list-all", tokenURI)
		for _, want := range []string{"Type: Private key (RSA-2048)", "Type: Public key (RSA-2048)", "Label: gnutls-rsa", "ID: 02"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("p11tool --login --list-all lacks %q:\n%s", want, r.combined())
			}
		}
		// Without a login the private key stays hidden.
		r = p11tool(tk, "--list-all", tokenURI)
		if strings.Contains(r.stdout, "Private key") || !strings.Contains(r.stdout, "Public key (RSA-2048)") {
			t.Errorf("p11tool --list-all without login: want the public key only:\n%s", r.combined())
		}
	})

	t.Run("test-sign", func(t *testing.T) {
		tk := tk.with(t)
		r := p11tool(tk, "--login", "--test-sign", keyURI)
		out := r.combined()
		for _, want := range []string{"Signing using RSA-SHA256... ok", "Verifying against private key parameters... ok",
			"Verifying against public key in the token... ok"} {
			if !strings.Contains(out, want) {
				t.Errorf("p11tool --test-sign lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("certtool-self-signed", func(t *testing.T) {
		tk := tk.with(t)
		c := tk.certtoolSelfSigned(keyURI, "gnutls test")
		_, onToken := tk.publicKey("02")
		if !publicKeysEqual(c.PublicKey, onToken) {
			t.Fatalf("certificate key %v is not the token key %v", c.PublicKey, onToken)
		}
	})
}

// certtoolSelfSigned makes a self-signed CA certificate with certtool and
// the token key keyURI, checks that certtool and OpenSSL verify it, and
// returns it.
func (tk *testToken) certtoolSelfSigned(keyURI, cn string) *x509.Certificate {
	tk.t.Helper()
	tmpl := tk.write("cert.tmpl", fmt.Sprintf("cn = %q\nexpiration_days = 2\nca\ncert_signing_key\nsigning_key\n", cn))
	cert := tk.path("certtool-cert.pem")
	tk.gnutls("certtool", "--provider", tk.module, "--generate-self-signed",
		"--load-privkey", keyURI, "--template", tmpl, "--outfile", cert)
	r := tk.mustRun("certtool", "--verify", "--load-ca-certificate", cert, "--infile", cert)
	if !strings.Contains(r.combined(), "Chain verification output: Verified.") {
		tk.t.Errorf("certtool --verify:\n%s", r.combined())
	}
	if r := tk.mustRun("openssl", "verify", "-CAfile", cert, cert); !strings.Contains(r.stdout, ": OK") {
		tk.t.Errorf("openssl verify:\n%s", r.combined())
	}
	block, _ := pem.Decode(tk.read("certtool-cert.pem"))
	if block == nil {
		tk.t.Fatal("certtool wrote no PEM certificate")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		tk.t.Fatal(err)
	}
	return c
}
