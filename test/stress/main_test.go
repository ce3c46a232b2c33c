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
)

// Filled by TestMain.
var (
	repoRoot  string
	libPath   string
	badargs   string // compiled csrc/badargs.c
	stressBin string // compiled csrc/stress.c
	buildErr  error
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
		if err := build("go", "build", "-buildmode=c-shared",
			"-ldflags=-extldflags=-Wl,--version-script="+filepath.Join(repoRoot, "cgo", "exports.map"),
			"-o", libPath, "./cgo"); err != nil {
			return err
		}
	}
	badargs = filepath.Join(dir, "badargs")
	stressBin = filepath.Join(dir, "stress")
	for _, p := range [][2]string{{badargs, "badargs.c"}, {stressBin, "stress.c"}} {
		if err := build("gcc", "-O2", "-pthread", "-Wall", "-Wextra", "-Werror",
			"-I", filepath.Join(repoRoot, "cgo"), "-o", p[0],
			filepath.Join(repoRoot, "test", "stress", "csrc", p[1]), "-ldl"); err != nil {
			return err
		}
	}
	return nil
}

func build(args ...string) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("stress: %s: %w\n%s", strings.Join(args, " "), err, out)
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
	dir := t.TempDir()
	conf := filepath.Join(dir, "modexp.toml")
	body := fmt.Sprintf("[[slot]]\nlabel = \"stress\"\ntoken_file = %q\nengine = \"soft\"\n"+
		"kdf_time = 1\nkdf_memory_kib = 64\nkdf_threads = 1\nkdf_insecure = true\n", filepath.Join(dir, "token.db"))
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"home", "data"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	k := &token{dir: dir, log: filepath.Join(dir, "module.log")}
	k.env = append(os.Environ(),
		"MODEXP_TOKEN_CONF="+conf, "MODEXP_TOKEN_LOG="+k.log, "MODEXP_TOKEN_ENGINE=",
		"HOME="+filepath.Join(dir, "home"), "XDG_DATA_HOME="+filepath.Join(dir, "data"))
	return k
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
