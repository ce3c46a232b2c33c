package clients

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMigrateFromSoftHSM moves the keys of a real SoftHSMv2 token into
// ours with `modexp-token keys migrate`: an RSA and an EC key pair and an
// AES key made extractable on SoftHSMv2, a non-extractable RSA key (which
// must stay, with the reason said), and a certificate. Then the moved
// private keys sign here (pkcs11-tool on our module) and openssl verifies
// the signatures with the public keys SoftHSMv2 holds; the AES key here
// encrypts what SoftHSMv2's decrypts. A second run finds everything
// already here.
func TestMigrateFromSoftHSM(t *testing.T) {
	if moduleKind(t) != kindModExp {
		t.Skip("migrates into our token")
	}
	needTools(t, "softhsm2-util", "pkcs11-tool", "openssl")
	if _, err := os.Stat(softHSMLib); err != nil {
		t.Fatalf("SoftHSMv2 missing (Debian softhsm2): %v", err)
	}
	// key_policy = "standard": the AES key made on SoftHSMv2 is not
	// sensitive, and keys migrate unwraps it with its attributes; the safe
	// policy makes every unwrapped key sensitive (docs/THREATS.md), and at
	// the default reports the key not moved.
	tk := newTokenWith(t, standardKeyPolicy)
	cli := ourCLI(t)

	// The SoftHSMv2 token, in a directory of its own.
	shDir := tk.path("softhsm")
	if err := os.MkdirAll(filepath.Join(shDir, "tokens"), 0o700); err != nil {
		t.Fatal(err)
	}
	shConf := tk.write("softhsm/softhsm2.conf", fmt.Sprintf("directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n", filepath.Join(shDir, "tokens")))
	shEnv := []string{"SOFTHSM2_CONF=" + shConf}
	tk.mustRunEnv(shEnv, "softhsm2-util", "--init-token", "--free", "--label", "legacy", "--so-pin", soPIN, "--pin", userPIN)
	sh := func(args ...string) result {
		t.Helper()
		return tk.mustRunEnv(shEnv, "pkcs11-tool", append([]string{"--module", softHSMLib, "--login", "--pin", userPIN}, args...)...)
	}
	sh("--keypairgen", "--key-type", "rsa:2048", "--label", "web-rsa", "--id", "01", "--extractable", "--usage-sign")
	sh("--keypairgen", "--key-type", "EC:prime256v1", "--label", "web-ec", "--id", "02", "--extractable", "--usage-sign")
	sh("--keygen", "--key-type", "AES:32", "--label", "backup-aes", "--id", "03", "--extractable")
	sh("--keypairgen", "--key-type", "rsa:2048", "--label", "pinned", "--id", "04", "--usage-sign")
	// A certificate (self-signed, made by openssl) on SoftHSMv2.
	tk.mustRun("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", tk.path("cert.key"),
		"-subj", "/CN=migrated", "-days", "2", "-outform", "DER", "-out", tk.path("cert.der"))
	sh("--write-object", tk.path("cert.der"), "--type", "cert", "--label", "web-cert", "--id", "05")

	env := append(append([]string{}, shEnv...), "MODEXP_TOKEN_FROM_PIN="+userPIN, "MODEXP_TOKEN_PIN="+userPIN)
	r := tk.runEnv(env, nil, cli, "keys", "migrate", "--from", softHSMLib, "--token", tokenLabel)
	t.Logf("keys migrate:\n%s", r.stdout)
	// One object cannot move: the exit status says so.
	if r.err == nil || !strings.Contains(r.stderr, "1 object(s) could not be moved") {
		t.Fatalf("keys migrate: %v, want exit 1 for the pinned key\n%s", r.err, r.combined())
	}
	for _, want := range []string{
		`moved    private rsa        label="web-rsa" id=01`,
		`moved    private ec         label="web-ec" id=02`,
		`moved    secret aes         label="backup-aes" id=03`,
		`NOT      private rsa        label="pinned" id=04: CKA_EXTRACTABLE is false`,
		`SKIPPED  public rsa         label="pinned" id=04: its private key did not move, so neither does it`,
		`copied   cert`,
		`6 moved, 0 already here, 1 not moved, 1 public key(s) left with their private keys`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the report lacks %q", want)
		}
	}

	// The moved keys sign here; openssl verifies with SoftHSMv2's public keys.
	msg := tk.write("msg", "moved from SoftHSMv2, signed by ModExp Token")
	digest := sha256.Sum256([]byte("moved from SoftHSMv2, signed by ModExp Token"))
	tk.write("msg.sha256", string(digest[:]))
	for _, k := range []struct{ id, mech, in, sigfmt string }{
		{"01", "SHA256-RSA-PKCS", "msg", ""},
		{"02", "ECDSA", "msg.sha256", "openssl"},
	} {
		args := []string{"--sign", "--mechanism", k.mech, "--id", k.id, "--input-file", tk.path(k.in), "--output-file", tk.path("sig-" + k.id)}
		if k.sigfmt != "" {
			args = append(args, "--signature-format", k.sigfmt)
		}
		tk.p11Login(args...)
		sh("--read-object", "--type", "pubkey", "--id", k.id, "--output-file", tk.path("shpub-"+k.id+".der"))
		tk.mustRun("openssl", "pkey", "-pubin", "-inform", "DER", "-in", tk.path("shpub-"+k.id+".der"), "-out", tk.path("shpub-"+k.id+".pem"))
		v := tk.run("openssl", "dgst", "-sha256", "-verify", tk.path("shpub-"+k.id+".pem"), "-signature", tk.path("sig-"+k.id), msg)
		if v.err != nil || !strings.Contains(v.stdout, "Verified OK") {
			t.Errorf("key %s moved here: its signature does not verify with SoftHSMv2's public key: %v\n%s", k.id, v.err, v.combined())
		}
	}
	// The moved AES key decrypts what SoftHSMv2's encrypts (AES-CBC-PAD).
	iv := "000102030405060708090a0b0c0d0e0f"
	plain := tk.write("plain", "sixteen-byte blk and some more")
	sh("--encrypt", "--mechanism", "AES-CBC-PAD", "--id", "03", "--iv", iv, "--input-file", plain, "--output-file", tk.path("ct"))
	tk.p11Login("--decrypt", "--mechanism", "AES-CBC-PAD", "--id", "03", "--iv", iv, "--input-file", tk.path("ct"), "--output-file", tk.path("back"))
	if got := string(tk.read("back")); got != "sixteen-byte blk and some more" {
		t.Errorf("the moved AES key decrypts to %q", got)
	}
	// Moved keys are not local, and keep their usage.
	list := tk.p11Login("--list-objects", "--type", "privkey").stdout
	if !strings.Contains(list, "web-rsa") || strings.Contains(list, "pinned") {
		t.Errorf("private keys here:\n%s", list)
	}

	// Again: everything that moved is already here.
	r = tk.runEnv(env, nil, cli, "keys", "migrate", "--from", softHSMLib, "--token", tokenLabel)
	if !strings.Contains(r.stdout, "0 moved, 6 already here, 1 not moved, 1 public key(s) left with their private keys") {
		t.Errorf("second run:\n%s", r.combined())
	}
}
