// Package e2e is the end-to-end harness of the packages under test/: the
// module built once per test binary with the Makefile's flags, a throwaway
// token environment (a t.TempDir() with a configuration file, cheap
// Argon2id parameters, HOME and XDG_DATA_HOME there too), host tool lookup,
// a command runner with a deadline, and the modexpd daemon started on a
// unix socket. A test package's TestMain is
//
//	func TestMain(m *testing.M) { os.Exit(e2e.Main(m)) }
//
// and its tests use Lib(), NewToken, Run and MustRun.
package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// DefaultTimeout bounds a command run by MustRun: a hang fails the test, it
// never blocks the suite.
const DefaultTimeout = 2 * time.Minute

var root = sync.OnceValues(func() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("e2e: no go.mod above the working directory")
		}
		dir = parent
	}
})

// Root returns the module root (the directory holding go.mod above the
// test's working directory). It panics when there is none: a test binary
// of this repository always runs below it.
func Root() string {
	r, err := root()
	if err != nil {
		panic(err)
	}
	return r
}

// Lib returns the path of the module Main built: build/libmodexp-pkcs11.so.
func Lib() string { return filepath.Join(Root(), "build", "libmodexp-pkcs11.so") }

// BuildLib builds the module with `make -s lib` (the Makefile knows the
// flags: the export map; only the module, so a broken CLI does not stop
// the module's tests).
func BuildLib() error { return Make("lib") }

// Make runs `make -s` on the targets in the module root (lib, lib-fleet:
// the Makefile knows the flags); the error carries make's output.
func Make(targets ...string) error {
	cmd := exec.Command("make", append([]string{"-s", "-C", Root()}, targets...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("make %s: %v\n%s", strings.Join(targets, " "), err, out)
	}
	return nil
}

// BuildLibAt builds a private copy of the module at path (go build with
// the export map, as the Makefile does), for packages whose tests must not
// race with the others over build/libmodexp-pkcs11.so.
func BuildLibAt(path string) error {
	return Build("go", "build", "-buildmode=c-shared",
		"-ldflags=-extldflags=-Wl,--version-script="+filepath.Join(Root(), "cgo", "exports.map"),
		"-o", path, "./cgo")
}

// Build runs a build command (go build, gcc ...) in the module root with
// cgo enabled; the error carries the command's output.
func Build(args ...string) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = Root()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// BuildCommands builds the named commands of cmd/ (modexpd, modexp-token)
// into dir.
func BuildCommands(dir string, names ...string) error {
	for _, c := range names {
		b := exec.Command("go", "build", "-o", filepath.Join(dir, c), "./cmd/"+c)
		b.Dir = Root()
		if out, err := b.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", c, err, out)
		}
	}
	return nil
}

// Main is the body of a test package's TestMain: it builds the module
// (BuildLib) and runs the tests, returning the exit code.
func Main(m *testing.M) int {
	if err := BuildLib(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// NeedTool skips the test when a host program is missing (make deps
// installs them).
func NeedTool(t testing.TB, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := exec.LookPath(name); err != nil {
			t.Skipf("%s not installed (run make deps)", name)
		}
	}
}

// Run runs name with args in env in its own process group, killed as a
// group at the deadline, and returns stdout+stderr. A timeout is an error
// that says so (a hang).
func Run(env []string, timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
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

// MustRun is Run with DefaultTimeout that fails the test on an error.
func MustRun(t testing.TB, env []string, name string, args ...string) string {
	t.Helper()
	out, err := Run(env, DefaultTimeout, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// CheapKDF are the slot lines of a throwaway token: Argon2id at its cheapest
// (kdf_insecure allows parameters below the floor; these tokens guard
// nothing).
const CheapKDF = "kdf_time = 1\nkdf_memory_kib = 64\nkdf_threads = 1\nkdf_insecure = true\n"

// Token is one test's throwaway token environment.
type Token struct {
	Dir  string   // the test's t.TempDir()
	Conf string   // the configuration file, named by MODEXP_TOKEN_CONF
	File string   // the token file
	Log  string   // the module's log, named by MODEXP_TOKEN_LOG
	Env  []string // this process's environment with the variables above, HOME and XDG_DATA_HOME in Dir
}

// NewToken writes a one-slot configuration in a fresh t.TempDir(): the slot
// labelled label on the soft engine with a token file in the directory,
// cheap Argon2id parameters (kdf_insecure), and extra slot lines (TOML,
// may be ""). MODEXP_TOKEN_ENGINE is emptied so that the caller's
// environment does not choose the engine.
func NewToken(t testing.TB, label, extra string) *Token {
	t.Helper()
	dir := t.TempDir()
	k := &Token{Dir: dir, Conf: filepath.Join(dir, "modexp-token.toml"),
		File: filepath.Join(dir, "token.db"), Log: filepath.Join(dir, "module.log")}
	body := fmt.Sprintf("[[slot]]\nlabel = %q\ntoken_file = %q\nengine = \"soft\"\n%s", label, k.File, CheapKDF)
	if extra != "" {
		body += strings.TrimSuffix(extra, "\n") + "\n"
	}
	if err := os.WriteFile(k.Conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"home", "data"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	k.Env = append(os.Environ(),
		"MODEXP_TOKEN_CONF="+k.Conf,
		"MODEXP_TOKEN_LOG="+k.Log,
		"MODEXP_TOKEN_ENGINE=",
		"HOME="+filepath.Join(dir, "home"),
		"XDG_DATA_HOME="+filepath.Join(dir, "data"),
	)
	return k
}

// Path is a file in the token's directory.
func (k *Token) Path(name string) string { return filepath.Join(k.Dir, name) }

// With returns the token's environment with more variables (later ones
// win).
func (k *Token) With(vars ...string) []string {
	return append(append([]string{}, k.Env...), vars...)
}
