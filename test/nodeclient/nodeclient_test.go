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

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// TestMain builds the module (make lib) before the tests.
func TestMain(m *testing.M) { os.Exit(e2e.Main(m)) }

// Secrets of the throwaway tokens.
const (
	tokenLabel = "t"
	soPIN      = "12345678"
	userPIN    = "1234"
	softHSMLib = "/usr/lib/softhsm/libsofthsm2.so"
)

// nodeModules returns build/nodeclient/node_modules with the pinned
// pkcs11js and graphene-pk11 (testdata/package.json), installing them with
// npm when absent or stale. It skips the test when node or npm is missing
// or the npm registry cannot be reached, and fails it when the install
// fails otherwise (e.g. the addon does not compile).
func nodeModules(t *testing.T) string {
	t.Helper()
	e2e.NeedTool(t, "node", "npm") // Debian package nodejs (nodesource's ships npm)
	want, err := os.ReadFile(filepath.Join("testdata", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e2e.Root(), "build", "nodeclient")
	nm := filepath.Join(dir, "node_modules")
	have, _ := os.ReadFile(filepath.Join(dir, "package.json"))
	_, addonErr := os.Stat(filepath.Join(nm, "pkcs11js", "build", "Release", "pkcs11.node"))
	_, grapheneErr := os.Stat(filepath.Join(nm, "graphene-pk11", "package.json"))
	_, nobleErr := os.Stat(filepath.Join(nm, "@noble", "post-quantum", "package.json"))
	if bytes.Equal(have, want) && addonErr == nil && grapheneErr == nil && nobleErr == nil {
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
func runSuite(t *testing.T, nm, kind string) []result {
	t.Helper()
	return runScript(t, nm, kind, "suite.js")
}

// runScript is runSuite with another script of testdata.
func runScript(t *testing.T, nm, kind, name string) []result {
	t.Helper()
	var module string
	var env []string
	switch kind {
	case "modexp":
		module = e2e.Lib()
		// key_policy = "standard": graphene's wrap and derive cases are
		// attacks the safe policy refuses (docs/THREATS.md).
		tk := e2e.NewToken(t, tokenLabel, "key_policy = \"standard\"")
		env = tk.With("NODE_PATH=" + nm)
		e2e.MustRun(t, env, "pkcs11-tool", "--module", module, "--init-token", "--label", tokenLabel, "--so-pin", soPIN)
		e2e.MustRun(t, env, "pkcs11-tool", "--module", module, "--login", "--login-type", "so", "--so-pin", soPIN, "--init-pin", "--pin", userPIN)
	case "softhsm":
		module = softHSMLib
		dir := t.TempDir()
		tokens := filepath.Join(dir, "tokens")
		if err := os.Mkdir(tokens, 0o700); err != nil {
			t.Fatal(err)
		}
		confPath := filepath.Join(dir, "softhsm2.conf")
		conf := fmt.Sprintf("directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n", tokens)
		if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		env = append(os.Environ(), "SOFTHSM2_CONF="+confPath, "HOME="+dir, "NODE_PATH="+nm)
		e2e.MustRun(t, env, "softhsm2-util", "--init-token", "--free", "--label", tokenLabel, "--so-pin", soPIN, "--pin", userPIN)
	}
	script, err := filepath.Abs(filepath.Join("testdata", name))
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
		t.Fatalf("nodeclient: node %s on %s: %v\n%s%s", name, kind, err, out, stderr.Bytes())
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
	e2e.NeedTool(t, "pkcs11-tool", "softhsm2-util")
	nm := nodeModules(t)
	ours := runSuite(t, nm, "modexp")
	theirs := runSuite(t, nm, "softhsm")
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

// TestNodeNobleCrossCheck: @noble/post-quantum 0.7.1, a second
// implementation, verifies the module's ML-DSA-65 and SLH-DSA-SHA2-128f
// signatures, and the module verifies noble's (testdata/pq.mjs); a
// changed signature fails both ways.
func TestNodeNobleCrossCheck(t *testing.T) {
	e2e.NeedTool(t, "pkcs11-tool")
	nm := nodeModules(t)
	rs := runScript(t, nm, "modexp", "pq.mjs")
	for _, r := range rs {
		if !r.OK {
			t.Errorf("%s: %s", r.Case, r.Err)
		}
	}
	if len(rs) != 4 {
		t.Fatalf("%d cases ran, want 4: %+v", len(rs), rs)
	}
}
