// Package fork holds the end-to-end tests of the module in forking hosts
// (docs/FORK.md): a C program that initialises the module, logs in and forks
// children that sign (forksign.c), and nginx in its master/worker mode with
// keys on the token through libp11's engine. Every test runs on a private
// token in its own t.TempDir(), with a deadline: a hang fails, it never
// blocks the suite.
package fork

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// Paths of the module and what TestMain built.
var (
	repoRoot = e2e.Root() // the module root
	libPath  = e2e.Lib()  // build/libmodexp-pkcs11.so, freshly built
)

func TestMain(m *testing.M) {
	os.Exit(e2e.Main(m))
}

// The token's PINs and key labels.
const (
	soPIN   = "12345678"
	userPIN = "1234"
)

// token is one test's private token.
type token struct {
	t   *testing.T
	dir string
	env []string
	// ecErr says why there is no P-256 key ("" when there is one).
	ecErr string
}

// newToken makes a token in a t.TempDir() (config named by
// MODEXP_TOKEN_CONF, HOME and XDG_DATA_HOME there too), sets its PINs and
// generates an RSA-2048 key "rsa" (id 01) and, when the token offers
// CKM_EC_KEY_PAIR_GEN, a P-256 key "ec" (id 02).
func newToken(t *testing.T) *token {
	t.Helper()
	e2e.NeedTool(t, "pkcs11-tool")
	k := e2e.NewToken(t, "t", "")
	tk := &token{t: t, dir: k.Dir, env: k.Env}
	tk.p11(nil, "--init-token", "--label", "t", "--so-pin", soPIN)
	tk.p11(nil, "--login", "--login-type", "so", "--so-pin", soPIN, "--init-pin", "--pin", userPIN)
	tk.p11(nil, "--login", "--pin", userPIN, "--keypairgen", "--key-type", "rsa:2048", "--id", "01", "--label", "rsa")
	mechs := tk.p11(nil, "--list-mechanisms")
	if !strings.Contains(mechs, "ECDSA-KEY-PAIR-GEN") && !strings.Contains(mechs, "EC-KEY-PAIR-GEN") {
		tk.ecErr = "the token does not list CKM_EC_KEY_PAIR_GEN (ECDSA not in the token yet), so there is no P-256 key"
		return tk
	}
	tk.p11(nil, "--login", "--pin", userPIN, "--keypairgen", "--key-type", "EC:prime256v1", "--id", "02", "--label", "ec")
	return tk
}

// p11 runs pkcs11-tool on the module with extra environment and fails the
// test on an error.
func (tk *token) p11(extraEnv []string, args ...string) string {
	tk.t.Helper()
	out, err := tk.run(extraEnv, 60*time.Second, "pkcs11-tool", append([]string{"--module", libPath}, args...)...)
	if err != nil {
		tk.t.Fatalf("pkcs11-tool %v: %v\n%s", args, err, out)
	}
	return out
}

// run runs a command in the token's environment (plus extraEnv) in its own
// process group, killed as a group at the deadline; returns stdout+stderr.
func (tk *token) run(extraEnv []string, timeout time.Duration, name string, args ...string) (string, error) {
	return e2e.Run(append(append([]string{}, tk.env...), extraEnv...), timeout, name, args...)
}

// path is a file in the token's directory.
func (tk *token) path(name string) string { return filepath.Join(tk.dir, name) }

// buildForksign compiles forksign.c into dir.
func buildForksign(t *testing.T, dir string) string {
	t.Helper()
	e2e.NeedTool(t, "gcc")
	bin := filepath.Join(dir, "forksign")
	src := filepath.Join(repoRoot, "test", "fork", "csrc", "forksign.c")
	if out, err := exec.Command("gcc", "-Wall", "-Wextra", "-Werror", "-O1", "-o", bin, src,
		"-ldl", "-lpthread").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}
