// Package pyclient runs a PyKCS11 unittest suite (testdata/test_pykcs11.py,
// Debian's python3-pykcs11 with python3-cryptography as the independent
// check) against the module built by `make build` and against SoftHSMv2,
// and requires ours to pass every test SoftHSMv2 passes (in fact every test
// but those in knownUnsupported, which is empty). A second process
// (testdata/persist.py) then finds and uses the suite's token RSA key.
package pyclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// Secrets of the throw-away tokens.
const (
	tokenLabel = "t"
	soPIN      = "12345678"
	userPIN    = "1234"
)

// System pieces (Debian amd64 layout). Debian's python3-pykcs11 installs for
// /usr/bin/python3, not for whatever python3 comes first on PATH.
const (
	python     = "/usr/bin/python3"
	softHSMLib = "/usr/lib/softhsm/libsofthsm2.so"
	runTimeout = 5 * time.Minute // a hang guard
)

// knownUnsupported lists the tests our module may fail, with the reason; it
// is empty when every test passes.
var knownUnsupported = map[string]string{}

// repoRoot is the directory holding go.mod: go test runs in test/pyclient.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("pyclient: no go.mod two levels up: %v", err)
	}
	return dir
}

// needPyKCS11 fails the test when the Python side is missing (`make deps`).
func needPyKCS11(t *testing.T) {
	t.Helper()
	cmd := exec.Command(python, "-c", "import PyKCS11, cryptography")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pyclient: %s cannot import PyKCS11 and cryptography (run `make deps`): %v\n%s", python, err, out)
	}
}

// run executes cmd in env and fails the test on error.
func run(t *testing.T, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pyclient: %s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// newToken initialises a token of the given kind in a temporary directory
// and returns the module path and the environment to run clients in.
func newToken(t *testing.T, kind string) (module string, env []string) {
	t.Helper()
	dir := t.TempDir()
	env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir, "LC_ALL=C"}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	switch kind {
	case "modexp":
		module = filepath.Join(repoRoot(t), "build", "libmodexp-pkcs11.so")
		if _, err := os.Stat(module); err != nil {
			t.Fatalf("pyclient: module not built (run `make build`): %v", err)
		}
		// key_policy = "standard": the wrap tests unwrap as readable keys
		// and wrap sensitive keys under imported KEKs and RSA public keys
		// (docs/THREATS.md, "Tests that need key_policy = standard").
		conf := fmt.Sprintf("[[slot]]\nlabel = %q\ntoken_file = %q\nengine = \"soft\"\n"+
			"kdf_time = 1\nkdf_memory_kib = 64\nkdf_threads = 1\nkdf_insecure = true\nkey_policy = \"standard\"\n",
			tokenLabel, filepath.Join(dir, "token.db"))
		env = append(env, "MODEXP_TOKEN_CONF="+write("modexp-token.toml", conf),
			"MODEXP_TOKEN_LOG="+filepath.Join(dir, "module.log"))
		run(t, env, "pkcs11-tool", "--module", module, "--init-token", "--label", tokenLabel, "--so-pin", soPIN)
		run(t, env, "pkcs11-tool", "--module", module, "--login", "--login-type", "so", "--so-pin", soPIN,
			"--init-pin", "--pin", userPIN)
	case "softhsm":
		module = softHSMLib
		tokens := filepath.Join(dir, "softhsm")
		if err := os.MkdirAll(tokens, 0o700); err != nil {
			t.Fatal(err)
		}
		conf := fmt.Sprintf("directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n", tokens)
		env = append(env, "SOFTHSM2_CONF="+write("softhsm2.conf", conf))
		run(t, env, "softhsm2-util", "--init-token", "--free", "--label", tokenLabel, "--so-pin", soPIN, "--pin", userPIN)
	}
	return module, env
}

// runSuite runs the Python suite against a fresh token of kind and returns
// each test's outcome: pass, fail, error or skip.
func runSuite(t *testing.T, kind string) map[string]string {
	t.Helper()
	module, env := newToken(t, kind)
	results := filepath.Join(t.TempDir(), "results.json")
	script := filepath.Join(repoRoot(t), "test", "pyclient", "testdata", "test_pykcs11.py")
	env = append(env, "PYKCS11LIB="+module, "PYKCS11PIN="+userPIN, "PYKCS11SOPIN="+soPIN, "PYKCS11TOKEN="+tokenLabel,
		"PYKCS11RESULTS="+results)
	cmd := exec.Command(python, script)
	cmd.Env = env
	done := make(chan struct{})
	timer := time.AfterFunc(runTimeout, func() {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
		close(done)
	})
	out, err := cmd.CombinedOutput()
	timer.Stop()
	select {
	case <-done:
		t.Fatalf("pyclient: %s suite timed out after %v\n%s", kind, runTimeout, out)
	default:
	}
	if err != nil {
		t.Fatalf("pyclient: %s suite: %v\n%s", kind, err, out)
	}
	raw, err := os.ReadFile(results)
	if err != nil {
		t.Fatalf("pyclient: %s suite wrote no results: %v\n%s", kind, err, out)
	}
	var res map[string]string
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("pyclient: %s results: %v", kind, err)
	}
	if len(res) == 0 {
		t.Fatalf("pyclient: %s suite ran no tests\n%s", kind, out)
	}
	t.Logf("%s:\n%s", kind, out)

	// A new process (the module loaded afresh) finds the suite's token key.
	persist := exec.Command(python, filepath.Join(filepath.Dir(script), "persist.py"))
	persist.Env = env
	pout, err := persist.CombinedOutput()
	if err != nil || strings.TrimSpace(string(pout)) != "ok" {
		t.Errorf("pyclient: %s: the token key did not survive the process: %v\n%s", kind, err, pout)
	}
	return res
}

// TestPyKCS11 runs the suite on both modules and compares.
func TestPyKCS11(t *testing.T) {
	needPyKCS11(t)
	if _, err := exec.LookPath("pkcs11-tool"); err != nil {
		t.Fatalf("pyclient: pkcs11-tool not installed (run `make deps`): %v", err)
	}
	ours := runSuite(t, "modexp")
	var soft map[string]string
	if _, err := os.Stat(softHSMLib); errors.Is(err, os.ErrNotExist) {
		t.Fatalf("pyclient: SoftHSMv2 not installed (run `make deps`)")
	}
	soft = runSuite(t, "softhsm")

	names := make([]string, 0, len(ours))
	for n := range ours {
		names = append(names, n)
	}
	sort.Strings(names)
	var table strings.Builder
	fmt.Fprintf(&table, "%-48s %-8s %s\n", "test", "modexp", "softhsm")
	for _, n := range names {
		fmt.Fprintf(&table, "%-48s %-8s %s\n", n, ours[n], soft[n])
		if ours[n] == "pass" {
			continue
		}
		if why, ok := knownUnsupported[n]; ok {
			t.Logf("%s: %s on ours (known: %s)", n, ours[n], why)
			continue
		}
		if soft[n] == "pass" {
			t.Errorf("%s: %s on ours, passes on SoftHSMv2", n, ours[n])
		} else {
			t.Errorf("%s: %s on ours (SoftHSMv2: %s)", n, ours[n], soft[n])
		}
	}
	softPassed := 0
	for n, o := range soft {
		if _, ok := ours[n]; !ok {
			t.Errorf("%s ran on SoftHSMv2 only", n)
		}
		if o == "pass" {
			softPassed++
		}
	}
	// A check of the suite itself: SoftHSMv2 2.6 passes 63 of 67; far fewer
	// means the Python side, not a module, is broken.
	if softPassed < len(soft)*3/4 {
		t.Errorf("SoftHSMv2 passed only %d of %d tests: is the suite sound?", softPassed, len(soft))
	}
	t.Logf("outcomes:\n%s", table.String())
}
