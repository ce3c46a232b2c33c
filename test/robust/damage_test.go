package robust

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/modexp-token/modexp-token/token/ck"
)

// importedToken is an initialised token holding an imported RSA key
// (label "imp", CKA_ID 01) whose private values the test knows.
func importedToken(t *testing.T) (*tok, *rsa.PrivateKey) {
	t.Helper()
	k := newTok(t, "")
	k.initToken(t)
	priv, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(k.dir, "imp.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(priv)})
	if err := os.WriteFile(keyFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	k.mustCLI(t, "keys", "import", "--file", keyFile, "--label", "imp", "--id", "01")
	if err := os.Remove(keyFile); err != nil {
		t.Fatal(err)
	}
	return k, priv
}

// signsWith checks through package token that the token's key "imp"
// signs, verified with pub.
func signsWith(t *testing.T, k *tok, pub *rsa.PublicKey) {
	t.Helper()
	x := loadModule(t, k)
	defer x.m.Close()
	sh := x.session(ck.CKU_USER, userPIN)
	keys := x.find(sh, ulongAttr(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), bytesAttr(ck.CKA_ID, []byte{1}))
	if len(keys) != 1 {
		t.Fatalf("key imp: %d private keys", len(keys))
	}
	msg := []byte("after the restore")
	sig, err := x.sign(sh, keys[0], msg)
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	if err := verify(pub, msg, sig); err != nil {
		t.Fatalf("signature: %v", err)
	}
}

// goPanic matches the runtime's report of an unrecovered panic.
var goPanic = regexp.MustCompile(`(?m)^(panic: |goroutine \d+ \[)`)

// notCrashed fails if a host process died of a signal or printed a Go
// panic.
func notCrashed(t *testing.T, what string, out string, err error) {
	t.Helper()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("%s crashed (%v):\n%s", what, ws.Signal(), out)
		}
	}
	if goPanic.MatchString(out) {
		t.Fatalf("%s panicked:\n%s", what, out)
	}
}

// TestDamagedTokenFile damages the token file in several ways and checks
// that the CLI and the module (pkcs11-tool on libmodexp-pkcs11.so) give a
// clear error and a log line, never crash, never re-create the file (even
// C_InitToken is refused), and that restore from a backup taken online
// brings the key back.
func TestDamagedTokenFile(t *testing.T) {
	k, priv := importedToken(t)
	backup := filepath.Join(k.dir, "token.backup")
	out := k.mustCLI(t, "backup", "--out", backup)
	if !strings.Contains(out, "backed up") {
		t.Fatalf("backup output: %q", out)
	}
	if _, err := k.cli(k.env, "backup", "--out", backup); err == nil {
		t.Fatal("backup overwrote an existing file")
	}
	good, err := os.ReadFile(k.file)
	if err != nil {
		t.Fatal(err)
	}
	scribble := func(from, to int) func([]byte) []byte {
		return func(b []byte) []byte {
			b = bytes.Clone(b)
			for i := from; i < min(to, len(b)); i++ {
				b[i] = byte(i*7) ^ 0xa5
			}
			return b
		}
	}
	// bbolt grows its file ahead of the data: truncate below the size its
	// meta page claims, or nothing is lost.
	db, err := bolt.Open(k.file, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var used int
	_ = db.View(func(tx *bolt.Tx) error { used = int(tx.Size()); return nil })
	db.Close()
	damages := []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"truncated to half", func(b []byte) []byte { return b[:used/2] }},
		{"last page cut", func(b []byte) []byte { return b[:used-4096] }},
		{"truncated to 100 bytes", func(b []byte) []byte { return b[:100] }},
		{"meta pages scribbled", scribble(0, 8192)},
		{"data pages scribbled", scribble(8192, 1<<30)},
		{"not a token file", func([]byte) []byte { return bytes.Repeat([]byte("hello\n"), 3000) }},
	}
	_, err = exec.LookPath("pkcs11-tool")
	havePKCS11Tool := err == nil
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			bad := d.damage(good)
			if err := os.WriteFile(k.file, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			_ = os.Remove(k.log)
			for _, args := range [][]string{{"keys", "list"}, {"init", "--label", "again"}, {"pin", "change"}} {
				out, err := k.cli(k.with("MODEXP_TOKEN_NEW_PIN="+newPIN), args...)
				notCrashed(t, "modexp-token "+args[0], out, err)
				if err == nil {
					t.Fatalf("modexp-token %v on a damaged file succeeded:\n%s", args, out)
				}
				if !strings.Contains(out, "corrupt") && !strings.Contains(out, "NOT_RECOGNIZED") && !strings.Contains(out, "DEVICE_ERROR") {
					t.Errorf("modexp-token %v: error does not say what is wrong:\n%s", args, out)
				}
			}
			if havePKCS11Tool && libErr == nil {
				for _, args := range [][]string{{"-T"}, {"-O", "--login", "--pin", userPIN},
					{"--init-token", "--label", "again", "--so-pin", soPIN}} {
					cmd := exec.Command("pkcs11-tool", append([]string{"--module", libPath}, args...)...)
					cmd.Env = k.env
					b, err := cmd.CombinedOutput()
					notCrashed(t, "pkcs11-tool "+args[0], string(b), err)
					if args[0] != "-T" && err == nil {
						t.Errorf("pkcs11-tool %v on a damaged file succeeded:\n%s", args, b)
					}
				}
			}
			now, err := os.ReadFile(k.file)
			if err != nil || !bytes.Equal(now, bad) {
				t.Fatalf("the damaged file was changed or re-created (%v)", err)
			}
			logText, _ := os.ReadFile(k.log)
			if !strings.Contains(string(logText), "token file corrupt") {
				t.Errorf("no log line about the damaged file in %s:\n%s", k.log, logText)
			}
			out, err := k.cli(k.env, "restore", "--yes", "--in", backup)
			if err != nil {
				t.Fatalf("restore: %v\n%s", err, out)
			}
			signsWith(t, k, &priv.PublicKey)
		})
	}

	// A damaged backup is refused and the token file left alone.
	damagedBackup := filepath.Join(k.dir, "damaged.backup")
	if err := os.WriteFile(damagedBackup, scribble(4096, 12288)(good), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(k.file)
	out, err = k.cli(k.env, "restore", "--yes", "--in", damagedBackup)
	notCrashed(t, "restore", out, err)
	if err == nil || !strings.Contains(out, "corrupt") {
		t.Fatalf("restore of a damaged backup: %v\n%s", err, out)
	}
	if after, _ := os.ReadFile(k.file); !bytes.Equal(before, after) {
		t.Fatal("a refused restore changed the token file")
	}
	signsWith(t, k, &priv.PublicKey)
}
