// Package stress holds the bad-argument and load tests of ModExp Token's C
// ABI: two C hosts that dlopen libmodexp-pkcs11.so, csrc/badargs.c (every
// entry point of the 2.40 and 3.0 function lists with NULLs, zero and huge
// lengths, stale handles and wrong session states, before C_Initialize and
// after C_Finalize) and csrc/stress.c (32 threads, 256 sessions, mixed
// signing, verification, searches, key generation and destruction, with
// the process's RSS sampled). See README.md.
//
// TestMain builds the module into a temporary directory (with the
// Makefile's export map; a private copy, so that parallel test runs do not
// race over build/) and compiles the C programs with
// gcc -O2 -pthread -Wall -Wextra -Werror. STRESS_LIB names a prebuilt
// module to use instead. Every test runs on its own token under
// t.TempDir() (HOME and XDG_DATA_HOME there too), with cheap Argon2id
// parameters from the slot configuration.
//
// STRESS_OPS sets the operation count of TestStress (default 6000; 1000
// with -short), STRESS_THREADS and STRESS_SESSIONS its threads and
// sessions per thread (32 and 8), STRESS_RSS_MIB the bound on RSS growth
// (20).
package stress

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// Filled by TestMain.
var (
	libPath   string
	badargs   string // compiled csrc/badargs.c
	stressBin string // compiled csrc/stress.c
	buildErr  error
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "modexp-stress-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	buildErr = buildAll(dir)
	return m.Run()
}

// buildAll builds the module (unless STRESS_LIB names one) and the two C
// programs into dir.
func buildAll(dir string) error {
	libPath = os.Getenv("STRESS_LIB")
	if libPath == "" {
		libPath = filepath.Join(dir, "libmodexp-pkcs11.so")
		if err := e2e.BuildLibAt(libPath); err != nil {
			return fmt.Errorf("stress: %w", err)
		}
	}
	badargs = filepath.Join(dir, "badargs")
	stressBin = filepath.Join(dir, "stress")
	for _, p := range [][2]string{{badargs, "badargs.c"}, {stressBin, "stress.c"}} {
		if err := e2e.Build("gcc", "-O2", "-pthread", "-Wall", "-Wextra", "-Werror",
			"-I", filepath.Join(e2e.Root(), "cgo"), "-o", p[0],
			filepath.Join(e2e.Root(), "test", "stress", "csrc", p[1]), "-ldl"); err != nil {
			return fmt.Errorf("stress: %w", err)
		}
	}
	return nil
}

// needBuild fails the test when the module or a C program did not build.
func needBuild(t *testing.T) {
	t.Helper()
	if buildErr != nil {
		t.Fatalf("build: %v", buildErr)
	}
}

// PINs of the test tokens.
const (
	soPIN   = "stress-so-4321"
	userPIN = "stress-user-1234"
)

// token is one test's private token.
type token struct {
	dir, log string
	env      []string
}

// newToken writes a slot configuration for a token file in t.TempDir(),
// with cheap Argon2id, and the environment pointing there.
func newToken(t *testing.T) *token {
	t.Helper()
	tk := e2e.NewToken(t, "stress", "")
	return &token{dir: tk.Dir, log: tk.Log, env: tk.Env}
}

// runC runs a C program with the token's environment under a deadline and
// returns its stdout, its stderr and its error (a timeout is an error).
func (k *token) runC(t *testing.T, timeout time.Duration, bin string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = k.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("stress: %s: no end after %v (hang?): %w", filepath.Base(bin), timeout, ctx.Err())
	}
	t.Logf("%s ran %.1f s", filepath.Base(bin), time.Since(start).Seconds())
	return out.String(), errOut.String(), err
}

// checkLog fails the test when the module log reports a recovered panic.
func (k *token) checkLog(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(k.log)
	if err != nil {
		if os.IsNotExist(err) {
			return
		}
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "panic") {
			t.Errorf("module log: %s", line)
		}
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
