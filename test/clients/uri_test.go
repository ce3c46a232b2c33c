package clients

import (
	"regexp"
	"strings"
	"testing"
)

// uriPattern finds the PKCS#11 URIs in `modexp-token keys list` output.
var uriPattern = regexp.MustCompile(`pkcs11:\S+`)

// TestURIs takes the URIs that `modexp-token keys list` prints and pastes
// them into OpenSSL (libp11) and GnuTLS's p11tool: each selects its key,
// and only it. One label has a space, so the URIs must be percent-encoded
// right.
func TestURIs(t *testing.T) {
	t.Parallel()
	tk := newToken(t)
	if tk.kind != kindModExp {
		t.Skip("modexp-token keys list administers our token only")
	}
	needTools(t, "p11tool")
	cli := ourCLI(t)
	pinEnv := []string{"MODEXP_TOKEN_PIN=" + userPIN}
	tk.mustRunEnv(pinEnv, cli, "keys", "generate", "--type", "rsa:2048", "--label", "web key", "--id", "0a")
	tk.genRSA("01", "other", 2048)
	pubWeb, _ := tk.publicKey("0a")
	pubOther, _ := tk.publicKey("01")

	out := tk.mustRunEnv(pinEnv, cli, "keys", "list").stdout
	var privURI, pubURI string
	for _, u := range uriPattern.FindAllString(out, -1) {
		if !strings.Contains(u, "object=web%20key") {
			continue
		}
		switch {
		case strings.Contains(u, "type=private"):
			privURI = u
		case strings.Contains(u, "type=public"):
			pubURI = u
		}
	}
	if privURI == "" || pubURI == "" {
		t.Fatalf("keys list printed no private and public URI for \"web key\":\n%s", out)
	}
	t.Logf("private key URI: %s", privURI)

	t.Run("openssl-sign", func(t *testing.T) {
		tk := tk.with(t)
		msg := tk.write("msg", "selected by URI\n")
		sig := tk.path("msg.sig")
		tk.mustRunEnv(tk.engineEnv(), "openssl", "dgst", "-sha256", "-engine", "pkcs11", "-keyform", "engine",
			"-sign", privURI+"?pin-source=file:"+tk.pinFile, "-out", sig, msg)
		if r := tk.run("openssl", "dgst", "-sha256", "-verify", pubWeb, "-signature", sig, msg); r.err != nil {
			t.Fatalf("signature by %s does not verify with key 0a: %s", privURI, r.combined())
		}
		if r := tk.run("openssl", "dgst", "-sha256", "-verify", pubOther, "-signature", sig, msg); r.err == nil {
			t.Fatalf("signature by %s verifies with the other key", privURI)
		}
	})

	t.Run("openssl-public-key", func(t *testing.T) {
		tk := tk.with(t)
		r := tk.mustRunEnv(tk.engineEnv(), "openssl", "pkey", "-engine", "pkcs11", "-inform", "engine", "-pubin",
			"-in", pubURI, "-pubout")
		if got, want := pemBody(r.stdout), pemBody(string(tk.read("pub-0a.pem"))); got == "" || got != want {
			t.Fatalf("openssl loaded %s as\n%s\nwant\n%s", pubURI, r.stdout, tk.read("pub-0a.pem"))
		}
	})

	t.Run("p11tool", func(t *testing.T) {
		tk := tk.with(t)
		for _, u := range []string{privURI, pubURI} {
			r := tk.gnutls("p11tool", "--provider", tk.module, "--login", "--list-all", u)
			if n := strings.Count(r.stdout, "URL: "); n != 1 || !strings.Contains(r.stdout, "Label: web key") {
				t.Errorf("p11tool --list-all %s selected %d objects:\n%s", u, n, r.stdout)
			}
		}
		r := tk.gnutls("p11tool", "--provider", tk.module, "--login", "--test-sign", privURI)
		if !strings.Contains(r.combined(), "Verifying against public key in the token... ok") {
			t.Errorf("p11tool --test-sign %s:\n%s", privURI, r.combined())
		}
	})
}

// pemBody is the base64 body of a PEM text, without its armour lines.
func pemBody(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if line != "" && !strings.HasPrefix(line, "-----") {
			b.WriteString(strings.TrimSpace(line))
		}
	}
	return b.String()
}
