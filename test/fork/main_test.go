// Package fork holds the end-to-end tests of the module in forking hosts
// (docs/FORK.md): a C program that initialises the module, logs in and forks
// children that sign (forksign.c), and nginx in its master/worker mode with
// keys on the token through libp11's engine. Every test runs on a private
// token in its own t.TempDir(), with a deadline: a hang fails, it never
// blocks the suite.
package fork

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Paths filled by TestMain.
var (
	repoRoot string // the module root
	libPath  string // build/libmodexp-pkcs11.so, freshly built
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	repoRoot = filepath.Dir(filepath.Dir(wd))
	cmd := exec.Command("make", "-s", "-C", repoRoot, "lib")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "make lib: %v\n%s", err, out)
		return 1
	}
	libPath = filepath.Join(repoRoot, "build", "libmodexp-pkcs11.so")
	return m.Run()
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
	needTool(t, "pkcs11-tool")
	dir := t.TempDir()
	conf := filepath.Join(dir, "modexp-token.toml")
	body := fmt.Sprintf(`[[slot]]
label = "t"
token_file = %q
engine = "soft"
kdf_time = 1
kdf_memory_kib = 64
kdf_threads = 1
kdf_insecure = true
`, filepath.Join(dir, "token.db"))
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"home", "data"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	tk := &token{t: t, dir: dir}
	tk.env = append(os.Environ(),
		"MODEXP_TOKEN_CONF="+conf,
		"MODEXP_TOKEN_LOG="+filepath.Join(dir, "module.log"),
		"HOME="+filepath.Join(dir, "home"),
		"XDG_DATA_HOME="+filepath.Join(dir, "data"),
	)
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
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(append([]string{}, tk.env...), extraEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return out.String(), fmt.Errorf("%s timed out after %v (a hang): %w", name, timeout, ctx.Err())
	}
	return out.String(), err
}

// path is a file in the token's directory.
func (tk *token) path(name string) string { return filepath.Join(tk.dir, name) }

// needTool skips the test when a host program is missing (make deps installs
// them).
func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not installed (run make deps)", name)
	}
}

// buildForksign compiles forksign.c into dir.
func buildForksign(t *testing.T, dir string) string {
	t.Helper()
	needTool(t, "gcc")
	bin := filepath.Join(dir, "forksign")
	src := filepath.Join(repoRoot, "test", "fork", "csrc", "forksign.c")
	if out, err := exec.Command("gcc", "-Wall", "-Wextra", "-Werror", "-O1", "-o", bin, src,
		"-ldl", "-lpthread").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}
