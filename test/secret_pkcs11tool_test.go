package test

import (
	"regexp"
	"strings"
	"testing"
)

// TestPkcs11ToolSecretKeys: pkcs11-tool generates AES and generic secret
// keys on the token and lists them with their check values.
func TestPkcs11ToolSecretKeys(t *testing.T) {
	p := newP11(t)
	p.initToken()
	p.run("--login", "--pin", userPIN, "--keygen", "--key-type", "AES:32", "--id", "01", "--label", "aes-key",
		"--private", "--sensitive")
	p.run("--login", "--pin", userPIN, "--keygen", "--key-type", "AES:16", "--id", "02", "--label", "aes-128",
		"--extractable")
	p.run("--login", "--pin", userPIN, "--keygen", "--key-type", "GENERIC:64", "--id", "03", "--label", "hmac-key")
	out := p.run("--login", "--pin", userPIN, "--list-objects", "--type", "secrkey")
	for _, want := range []string{"Secret Key Object; AES length 32", "aes-key", "Secret Key Object; AES length 16",
		"aes-128", "Secret Key Object; Generic secret length 64", "hmac-key"} {
		if !strings.Contains(out, want) {
			t.Errorf("--list-objects lacks %q:\n%s", want, out)
		}
	}
	// Without login the private key is not visible, the public ones are;
	// the sensitive key's value is not shown, the extractable one's is.
	if out := p.run("--list-objects", "--type", "secrkey"); strings.Contains(out, "aes-key") || !strings.Contains(out, "aes-128") {
		t.Errorf("private secret key listed without login, or public one not:\n%s", out)
	}
	if !regexp.MustCompile(`VALUE: +[0-9a-f]{32}\s+label: +aes-128`).MatchString(out) ||
		regexp.MustCompile(`VALUE: +[0-9a-f]+\s+label: +aes-key`).MatchString(out) {
		t.Errorf("CKA_VALUE shown wrongly:\n%s", out)
	}
	p.run("--login", "--pin", userPIN, "--delete-object", "--type", "secrkey", "--id", "02")
	if out := p.run("--login", "--pin", userPIN, "--list-objects", "--type", "secrkey"); strings.Contains(out, "aes-128") {
		t.Errorf("deleted key still listed:\n%s", out)
	}
}
