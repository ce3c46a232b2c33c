package clients

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// opensslConf is the minimal configuration that loads libp11's engine
// for our module; it is given (as OPENSSL_CONF) only to the commands that
// use a key on the token. docs/USAGE.md prints the same file.
func (tk *testToken) opensslConf() string {
	conf := e2e.OpenSSLEngineConf(tk.module)
	return tk.write("openssl.cnf", conf)
}

// engineEnv is the extra environment of an openssl command that loads the
// engine.
func (tk *testToken) engineEnv() []string {
	return []string{"OPENSSL_CONF=" + tk.opensslConf()}
}

// selfSignedCert makes a self-signed certificate for CN=localhost with the
// token key label, through `openssl req -engine pkcs11`, and checks that
// plain openssl verifies it and that it holds the token's public key.
func (tk *testToken) selfSignedCert(label, idHex, name string) string {
	tk.t.Helper()
	cert := tk.path(name)
	tk.mustRunEnv(tk.engineEnv(), "openssl", "req", "-new", "-x509", "-engine", "pkcs11", "-keyform", "engine",
		"-key", tk.uri(label, "private", true), "-subj", "/CN=localhost", "-days", "2", "-sha256", "-out", cert)
	r := tk.mustRun("openssl", "verify", "-CAfile", cert, cert)
	if !strings.Contains(r.stdout, ": OK") {
		tk.t.Fatalf("openssl verify of the self-signed certificate: %s", r.combined())
	}
	_, want := tk.publicKey(idHex)
	block, _ := pem.Decode(tk.read(name))
	if block == nil {
		tk.t.Fatalf("%s is not PEM", name)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		tk.t.Fatal(err)
	}
	if !publicKeysEqual(c.PublicKey, want) {
		tk.t.Fatalf("certificate public key %v is not the token key %v", c.PublicKey, want)
	}
	return cert
}

// publicKeysEqual compares RSA and ECDSA public keys.
func publicKeysEqual(a, b any) bool {
	switch k := a.(type) {
	case *rsa.PublicKey:
		return k.Equal(b)
	case *ecdsa.PublicKey:
		return k.Equal(b)
	}
	return reflect.DeepEqual(a, b)
}

// TestOpenSSLEngine drives OpenSSL 3 through libp11's engine
// (libengine-pkcs11-openssl) with keys addressed by pkcs11: URIs: a
// signature, a self-signed certificate, and TLS 1.3 servers whose
// CertificateVerify the token signs.
func TestOpenSSLEngine(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(e2e.LibP11Engine); err != nil {
		t.Fatalf("libp11 engine missing (Debian libengine-pkcs11-openssl): %v", err)
	}
	tk := newToken(t)
	tk.genRSA("01", "rsa", 2048)
	msg := tk.write("msg.txt", "signed through libp11\n")

	t.Run("sign-and-verify", func(t *testing.T) {
		tk := tk.with(t)
		sig := tk.path("msg.sig")
		tk.mustRunEnv(tk.engineEnv(), "openssl", "dgst", "-sha256", "-engine", "pkcs11", "-keyform", "engine",
			"-sign", tk.uri("rsa", "private", true), "-out", sig, msg)
		pub, _ := tk.publicKey("01")
		r := tk.mustRun("openssl", "dgst", "-sha256", "-verify", pub, "-signature", sig, msg)
		if !strings.Contains(r.stdout, "Verified OK") {
			t.Fatalf("openssl dgst -verify: %s", r.combined())
		}
		other := tk.write("other.txt", "not what was signed\n")
		if r := tk.run("openssl", "dgst", "-sha256", "-verify", pub, "-signature", sig, other); r.err == nil ||
			!strings.Contains(r.stdout, "Verification failure") {
			t.Fatalf("signature verified over a different message: %v %s", r.err, r.combined())
		}
	})

	t.Run("self-signed-certificate", func(t *testing.T) {
		tk := tk.with(t)
		tk.selfSignedCert("rsa", "01", "rsa-cert.pem")
	})

	t.Run("tls13-rsa-pss", func(t *testing.T) {
		tk := tk.with(t)
		cert := tk.selfSignedCert("rsa", "01", "tls-rsa-cert.pem")
		out := tk.tlsHandshake("rsa", cert, "rsa_pss_rsae_sha256")
		for _, want := range []string{"Protocol version: TLSv1.3", "Signature type: RSA-PSS", "Hash used: SHA256", "Verification: OK"} {
			if !strings.Contains(out, want) {
				t.Errorf("s_client output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("tls13-ecdsa-p256", func(t *testing.T) {
		tk := tk.with(t)
		tk.requireECDSA()
		tk.genEC("02", "ec", "prime256v1")
		_, pub := tk.publicKey("02")
		if k, ok := pub.(*ecdsa.PublicKey); !ok || k.Curve != elliptic.P256() {
			t.Fatalf("token key 02 is %T, want a P-256 key", pub)
		}
		cert := tk.selfSignedCert("ec", "02", "tls-ec-cert.pem")
		out := tk.tlsHandshake("ec", cert, "ecdsa_secp256r1_sha256")
		for _, want := range []string{"Protocol version: TLSv1.3", "Signature type: ECDSA", "Hash used: SHA256", "Verification: OK"} {
			if !strings.Contains(out, want) {
				t.Errorf("s_client output lacks %q:\n%s", want, out)
			}
		}
	})
}

// tlsHandshake runs `openssl s_server` on 127.0.0.1 with the token key
// label and cert, connects `openssl s_client` (plain OpenSSL, no engine)
// that verifies the server against cert and offers only sigalg, and returns
// the client's -brief output. The server accepts one connection and is
// killed at the end of the test in any case.
func (tk *testToken) tlsHandshake(label, cert, sigalg string) string {
	tk.t.Helper()
	port := e2e.FreePort(tk.t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	srv := tk.startServer(tk.engineEnv(), "ACCEPT", "openssl", "s_server", "-engine", "pkcs11", "-keyform", "engine",
		"-key", tk.uri(label, "private", true), "-cert", cert, "-accept", addr, "-tls1_3", "-naccept", "1")
	r := tk.runEnv(nil, []byte("Q\n"), "openssl", "s_client", "-connect", addr, "-tls1_3", "-sigalgs", sigalg,
		"-CAfile", cert, "-verify_return_error", "-brief")
	if r.err != nil {
		tk.t.Fatalf("s_client: %v\n%s\nserver:\n%s", r.err, r.combined(), srv.out.String())
	}
	srv.wait(tk.t, time.Minute) // a hang guard
	return r.combined()
}
