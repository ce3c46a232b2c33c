// Package robust holds the reliability tests of ModExp Token: several real
// processes on one token file (the C host through libmodexp-pkcs11.so, the
// CLI, and robusthelper driving package token), kill -9 at random moments,
// damaged token files, backup and restore, PIN lockout across processes,
// and a search of the token file and the logs for private key material.
//
// TestMain builds what the tests run into a temporary directory (the go
// build cache makes this cheap after the first time): the CLI, the
// PKCS#11 module (with the Makefile's export map), robusthelper and the C
// signer. Every test uses its own token file under t.TempDir(), with cheap
// Argon2id parameters from the slot configuration.
//
// ROBUST_CRASHES sets the number of kill -9 rounds of TestKillNine
// (default 100; 20 with -short).
package robust

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
	"golang.org/x/sys/unix"
)

// Built by TestMain.
var (
	repoRoot  string
	binDir    string
	cliPath   string // modexp-token
	libPath   string // libmodexp-pkcs11.so
	helperBin string // robusthelper
	signerBin string // csigner/signer.c
	libErr    error  // why the module or the C signer could not be built
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	repoRoot = e2e.Root()
	var err error
	binDir, err = os.MkdirTemp("", "modexp-robust-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(binDir)
	cliPath = filepath.Join(binDir, "modexp-token")
	helperBin = filepath.Join(binDir, "robusthelper")
	libPath = filepath.Join(binDir, "libmodexp-pkcs11.so")
	signerBin = filepath.Join(binDir, "signer")
	for _, b := range [][]string{
		{"go", "build", "-o", cliPath, "./cmd/modexp-token"},
		{"go", "build", "-o", helperBin, "./test/robust/robusthelper"},
	} {
		if err := e2e.Build(b...); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	// The module: a private copy, so that a parallel `go test ./...` does
	// not race with test/ over build/libmodexp-pkcs11.so.
	libErr = e2e.BuildLibAt(libPath)
	if libErr == nil {
		libErr = e2e.Build("gcc", "-Wall", "-Wextra", "-Werror", "-O1", "-o", signerBin,
			filepath.Join(repoRoot, "test", "robust", "csigner", "signer.c"), "-ldl")
	}
	return m.Run()
}

// needLib fails the test when the module or the C signer did not build.
func needLib(t *testing.T) {
	t.Helper()
	if libErr != nil {
		t.Fatalf("module not built: %v", libErr)
	}
}

// PINs of the test tokens.
const (
	soPIN   = "so-pin-4321"
	userPIN = "user-pin-1234"
	newPIN  = "new-pin-9876"
)

// tok is one test's token: its directory, configuration and environment.
type tok struct {
	dir, conf, file, log string
	env                  []string
}

// newTok writes a configuration for a token file in a fresh directory,
// with cheap Argon2id parameters and extra slot settings.
func newTok(t *testing.T, extra string) *tok {
	t.Helper()
	tk := e2e.NewToken(t, "robust", extra)
	return &tok{dir: tk.Dir, conf: tk.Conf, file: tk.File, log: tk.Log, env: tk.With(
		"MODEXP_TOKEN_SO_PIN="+soPIN, "MODEXP_TOKEN_PIN="+userPIN,
		"ROBUST_SO_PIN="+soPIN, "ROBUST_USER_PIN="+userPIN, "ROBUST_NEW_PIN="+newPIN)}
}

// with returns k's environment with more variables.
func (k *tok) with(vars ...string) []string { return append(append([]string{}, k.env...), vars...) }

// setEnv points this process's token code (token.LoadFromEnv) at k.
func (k *tok) setEnv(t *testing.T) {
	t.Setenv("MODEXP_TOKEN_CONF", k.conf)
	t.Setenv("MODEXP_TOKEN_LOG", k.log)
	t.Setenv("MODEXP_TOKEN_ENGINE", "")
	t.Setenv("MODEXP_TOKEN_LOG_LEVEL", "")
}

// cli runs the CLI and returns its combined output and error.
func (k *tok) cli(env []string, args ...string) (string, error) {
	cmd := exec.Command(cliPath, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// mustCLI is cli with the token's environment, failing on error.
func (k *tok) mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, err := k.cli(k.env, args...)
	if err != nil {
		t.Fatalf("modexp-token %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// initToken initialises k's token with both PINs through the CLI.
func (k *tok) initToken(t *testing.T) {
	t.Helper()
	k.mustCLI(t, "init", "--label", "robust")
}

// monotonic is CLOCK_MONOTONIC in nanoseconds, the clock of the events the
// helper processes print.
func monotonic(t *testing.T) int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatal(err)
	}
	return ts.Nano()
}
