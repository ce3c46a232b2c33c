// Package test holds the end-to-end tests of ModExp Token: they build
// libmodexp-pkcs11.so once and drive it with real hosts (a C client that
// dlopens it, pkcs11-tool, openssl), each test on a token file in its own
// t.TempDir() with HOME and XDG_DATA_HOME pointing there too.
package test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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
	repoRoot = filepath.Dir(wd)
	// The Makefile knows the flags (version script); `make lib` builds only
	// the module, so a broken CLI does not stop these tests.
	cmd := exec.Command("make", "-s", "-C", repoRoot, "lib")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "make lib: %v\n%s", err, out)
		return 1
	}
	libPath = filepath.Join(repoRoot, "build", "libmodexp-pkcs11.so")
	return m.Run()
}

// tokenEnv is a process environment for one test's private token: a config
// naming a token file in dir, cheap PIN hashing, HOME, XDG_DATA_HOME and the
// module log in dir.
func tokenEnv(t *testing.T) (env []string, dir string) {
	t.Helper()
	dir = t.TempDir()
	conf := filepath.Join(dir, "modexp-token.toml")
	body := fmt.Sprintf(`[[slot]]
label = "integration"
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
	env = append(os.Environ(),
		"MODEXP_TOKEN_CONF="+conf,
		"MODEXP_TOKEN_LOG="+filepath.Join(dir, "module.log"),
		"HOME="+filepath.Join(dir, "home"),
		"XDG_DATA_HOME="+filepath.Join(dir, "data"),
	)
	return env, dir
}

// runCmd runs name with args in env and returns stdout+stderr.
func runCmd(t *testing.T, env []string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.String(), err
}

// mustRun is runCmd that fails the test on a non-zero exit.
func mustRun(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	out, err := runCmd(t, env, name, args...)
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return out
}

// needTool skips the test when a host program is missing (make deps installs
// them).
func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not installed (run make deps)", name)
	}
}
