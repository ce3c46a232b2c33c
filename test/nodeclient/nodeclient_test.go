package nodeclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Secrets of the throwaway tokens.
const (
	tokenLabel = "t"
	soPIN      = "12345678"
	userPIN    = "1234"
	softHSMLib = "/usr/lib/softhsm/libsofthsm2.so"
)

// repoRoot is the checkout: go test runs in test/nodeclient.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err == nil {
		_, err = os.Stat(filepath.Join(root, "go.mod"))
	}
	if err != nil {
		t.Fatalf("nodeclient: the checkout two levels up: %v", err)
	}
	return root
}

// run runs a command with env and fails the test with its output when it
// fails.
func run(t *testing.T, env []string, name string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// nodeModules returns build/nodeclient/node_modules with the pinned
// pkcs11js and graphene-pk11 (testdata/package.json), installing them with
// npm when absent or stale. It skips the test when node or npm is missing
// or the npm registry cannot be reached, and fails it when the install
// fails otherwise (e.g. the addon does not compile).
func nodeModules(t *testing.T, root string) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("nodeclient: %s not installed (Debian package nodejs, with npm; `make deps`)", tool)
		}
	}
	want, err := os.ReadFile(filepath.Join("testdata", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "build", "nodeclient")
	nm := filepath.Join(dir, "node_modules")
	have, _ := os.ReadFile(filepath.Join(dir, "package.json"))
	_, addonErr := os.Stat(filepath.Join(nm, "pkcs11js", "build", "Release", "pkcs11.node"))
	_, grapheneErr := os.Stat(filepath.Join(nm, "graphene-pk11", "package.json"))
	if bytes.Equal(have, want) && addonErr == nil && grapheneErr == nil {
		// The addon is tied to Node's ABI: a Node upgrade means a rebuild.
		load := exec.Command("node", "-e", `require("pkcs11js"); require("graphene-pk11")`)
		load.Env = append(os.Environ(), "NODE_PATH="+nm)
		if err := load.Run(); err == nil {
			return nm
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	// node-gyp would download Node's headers; the nodejs package ships them.
	nodedir := "/usr"
	if _, err := os.Stat("/usr/include/node/node.h"); err != nil {
		t.Skip("nodeclient: Node's headers (/usr/include/node/node.h) are missing: pkcs11js cannot be built offline")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--foreground-scripts", "--nodedir="+nodedir)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_nodedir="+nodedir, "npm_config_update_notifier=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		s := string(out)
		for _, sign := range []string{"ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET", "network"} {
			if strings.Contains(s, sign) {
				t.Skipf("nodeclient: the npm registry is unreachable (npm install pkcs11js graphene-pk11): %s", lastLines(s, 5))
			}
		}
		t.Fatalf("nodeclient: npm install in %s: %v\n%s", dir, err, s)
	}
	if _, err := os.Stat(filepath.Join(nm, "pkcs11js", "build", "Release", "pkcs11.node")); err != nil {
		t.Fatalf("nodeclient: npm install built no pkcs11js addon: %v\n%s", err, out)
	}
	return nm
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// result is one line of suite.js's output.
type result struct {
	Case string `json:"case"`
	OK   bool   `json:"ok"`
	Err  string `json:"err"`
}

// runSuite initialises a throwaway token of kind ("modexp" or "softhsm")
// and runs testdata/suite.js against it.
func runSuite(t *testing.T, root, nm, kind string) []result {
	t.Helper()
	dir := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir, "LC_ALL=C", "NODE_PATH=" + nm}
	var module string
	switch kind {
	case "modexp":
		module = filepath.Join(root, "build", "libmodexp-pkcs11.so")
		if _, err := os.Stat(module); err != nil {
			t.Fatalf("nodeclient: module not built (run `make build`): %v", err)
		}
		conf := fmt.Sprintf("[[slot]]\nlabel = %q\ntoken_file = %q\nengine = \"soft\"\n"+
			"kdf_time = 1\nkdf_memory_kib = 64\nkdf_threads = 1\nkdf_insecure = true\n", tokenLabel, filepath.Join(dir, "token.db"))
		confPath := filepath.Join(dir, "modexp-token.toml")
		if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		env = append(env, "MODEXP_TOKEN_CONF="+confPath, "MODEXP_TOKEN_LOG="+filepath.Join(dir, "module.log"))
		run(t, env, "pkcs11-tool", "--module", module, "--init-token", "--label", tokenLabel, "--so-pin", soPIN)
		run(t, env, "pkcs11-tool", "--module", module, "--login", "--login-type", "so", "--so-pin", soPIN, "--init-pin", "--pin", userPIN)
	case "softhsm":
		module = softHSMLib
		tokens := filepath.Join(dir, "tokens")
		if err := os.Mkdir(tokens, 0o700); err != nil {
			t.Fatal(err)
		}
		confPath := filepath.Join(dir, "softhsm2.conf")
		conf := fmt.Sprintf("directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n", tokens)
		if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		env = append(env, "SOFTHSM2_CONF="+confPath)
		run(t, env, "softhsm2-util", "--init-token", "--free", "--label", tokenLabel, "--so-pin", soPIN, "--pin", userPIN)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "suite.js"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script, module, tokenLabel, userPIN)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("nodeclient: node suite.js on %s: %v\n%s%s", kind, err, out, stderr.Bytes())
	}
	var rs []result
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("nodeclient: %s: output line %q: %v", kind, sc.Text(), err)
		}
		rs = append(rs, r)
	}
	if len(rs) == 0 {
		t.Fatalf("nodeclient: %s: no results\n%s", kind, stderr.Bytes())
	}
	return rs
}

// TestNodeClients runs the pkcs11js and graphene-pk11 suite against the
// module and SoftHSMv2: the module must pass every case, and every case
// SoftHSMv2 passes in particular.
func TestNodeClients(t *testing.T) {
	root := repoRoot(t)
	for _, tool := range []string{"pkcs11-tool", "softhsm2-util"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("nodeclient: %s not installed (run `make deps`)", tool)
		}
	}
	nm := nodeModules(t, root)
	ours := runSuite(t, root, nm, "modexp")
	theirs := runSuite(t, root, nm, "softhsm")
	soft := map[string]result{}
	for _, r := range theirs {
		soft[r.Case] = r
	}
	mark := func(r result, ok bool) string {
		switch {
		case !ok:
			return "(not run)"
		case r.OK:
			return "pass"
		default:
			return "FAIL: " + r.Err
		}
	}
	var table strings.Builder
	for _, r := range ours {
		s, ok := soft[r.Case]
		fmt.Fprintf(&table, "%-62s ours %-6s softhsm2 %s\n", r.Case, mark(r, true), mark(s, ok))
		if !r.OK {
			if ok && s.OK {
				t.Errorf("%s: fails on the module (%s) but passes on SoftHSMv2", r.Case, r.Err)
			} else {
				t.Errorf("%s: fails on the module: %s", r.Case, r.Err)
			}
		}
		delete(soft, r.Case)
	}
	for name := range soft {
		t.Errorf("%s: ran on SoftHSMv2 only (the suite stopped early on the module)", name)
	}
	t.Logf("cases (module vs SoftHSMv2):\n%s", table.String())
	if len(ours) < 30 {
		t.Errorf("only %d cases ran on the module", len(ours))
	}
}
