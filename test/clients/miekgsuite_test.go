package clients

// miekg/pkcs11's own test suite (the Go binding every Go PKCS#11 client,
// crypto11 included, is built on) against the module and against
// SoftHSMv2, side by side.
//
// The suite is github.com/miekg/pkcs11 at the version go.mod pins, as the
// Go module cache holds it: the test copies the module's directory into a
// temporary directory (the suite reads softhsm2.conf, zconst.go and
// pkcs11t.h from its working directory and points SOFTHSM2_CONF at its own
// softhsm2.conf, whose token directory is the relative test_data), builds
// its test binary offline once and runs it unmodified in two fresh copies.
// Upstream's CI runs it on SoftHSMv2 with a token labelled "softhsm token"
// and user PIN 1234 (test_data); both runs here get a token like that, made
// afresh: SoftHSMv2's in the copy's test_data (emptied first) through the
// suite's own softhsm2.conf, ours in a token file beside it. The library is
// named by SOFTHSM_LIB, as upstream's tests read it.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// miekgAccepted are the upstream tests ours may fail where SoftHSMv2
// passes, each with its reason: checks of SoftHSMv2's identity, not of a
// behaviour.
var miekgAccepted = map[string]string{
	"TestGetInfo": "asserts CK_INFO.manufacturerID is \"SoftHSM\"; ours says \"ModExp Token\"",
}

// miekgNotRun are the parts of upstream's suite that never run, on either
// module, as the suite ships them (named so that the report is complete).
var miekgNotRun = []struct{ name, why string }{
	{"testParallel", "disabled upstream (lower-case name: \"fill out the correct values in hsm.db\")"},
	{"TestSymmetricEncryption/Encrypt/Empty and EncryptUpdate/Empty", "commented out upstream (\"Broken in SoftHSMv2\"); ours encrypts an empty input with AES-CBC, ECB and CBC-PAD (token's TestConformanceSymmetricLengths)"},
}

// miekgResult matches a test's result line, subtests (indented) included.
var miekgResult = regexp.MustCompile(`(?m)^\s*--- (PASS|FAIL|SKIP): (\S+)`)

// miekgRun is one run of the suite: each test's result and the output.
type miekgRun struct {
	result map[string]string // test (or subtest) name → PASS, FAIL or SKIP
	out    string
}

// runMiekgSuite runs the suite's binary in a fresh copy of src against
// kind's module, with a token made the way upstream's setup expects.
func runMiekgSuite(t *testing.T, bin, src, kind string) miekgRun {
	t.Helper()
	const label, pin = "softhsm token", "1234"
	dir := t.TempDir()
	if err := copyTree(src, dir); err != nil {
		t.Fatal(err)
	}
	// The shipped token in test_data (whose SO PIN nothing says) goes;
	// softhsm2.conf still names the emptied directory.
	if err := os.RemoveAll(filepath.Join(dir, "test_data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "test_data"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "SOFTHSM_TOKENLABEL="+label, "SOFTHSM_PIN="+pin,
		"SOFTHSM2_CONF="+filepath.Join(dir, "softhsm2.conf"), "MODEXP_TOKEN_LOG=")
	setup := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, b)
		}
	}
	switch kind {
	case kindSoftHSM:
		needTools(t, "softhsm2-util")
		env = append(env, "SOFTHSM_LIB="+softHSMLib)
		setup("softhsm2-util", "--init-token", "--free", "--label", label, "--so-pin", soPIN, "--pin", pin)
	default:
		needTools(t, "pkcs11-tool")
		module := ourModule(t)
		conf := filepath.Join(dir, "modexp-token.toml")
		body := fmt.Sprintf("[[slot]]\nlabel = %q\ntoken_file = %q\nengine = \"soft\"\n%s", label, filepath.Join(dir, "token.db"), e2e.CheapKDF)
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		env = append(env, "SOFTHSM_LIB="+module, "MODEXP_TOKEN_CONF="+conf)
		setup("pkcs11-tool", "--module", module, "--init-token", "--label", label, "--so-pin", soPIN)
		setup("pkcs11-tool", "--module", module, "--login", "--login-type", "so", "--so-pin", soPIN, "--init-pin", "--pin", pin)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.v", "-test.timeout", "150s")
	cmd.Dir, cmd.Env = dir, env
	b, err := cmd.CombinedOutput()
	r := miekgRun{result: map[string]string{}, out: string(b)}
	for _, m := range miekgResult.FindAllStringSubmatch(r.out, -1) {
		r.result[m[2]] = m[1]
	}
	if err != nil && !strings.Contains(r.out, "--- FAIL") {
		t.Fatalf("miekg/pkcs11's suite on %s: %v\n%s", kind, err, tail(r.out, 60))
	}
	return r
}

// TestMiekgSuite runs miekg/pkcs11's own tests on SoftHSMv2 and on the
// module: every test SoftHSMv2 passes must pass on ours, but those of
// miekgAccepted; every failure and skip is logged with upstream's message.
func TestMiekgSuite(t *testing.T) {
	bin, src := buildUpstreamSuite(t, "github.com/miekg/pkcs11", "pkcs11")
	soft := runMiekgSuite(t, bin, src, kindSoftHSM)
	ours := runMiekgSuite(t, bin, src, kindModExp)
	for _, n := range miekgNotRun {
		t.Logf("not run (upstream): %s: %s", n.name, n.why)
	}
	var names []string
	for n := range soft.result {
		names = append(names, n)
	}
	for n := range ours.result {
		if _, ok := soft.result[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	count := map[string]int{}
	for _, n := range names {
		s, o := soft.result[n], ours.result[n]
		count[o]++
		switch {
		case o == "PASS":
		case o == "FAIL" && s == "PASS" && miekgAccepted[n] != "":
			t.Logf("accepted failure: %s (SoftHSMv2 passes): %s\n%s", n, miekgAccepted[n], miekgReason(ours.out, n))
		case o == "" && s == "PASS":
			t.Errorf("%s passes on SoftHSMv2 but did not run on ours", n)
		case s == "PASS":
			t.Errorf("%s: %s on ours, PASS on SoftHSMv2:\n%s", n, o, miekgReason(ours.out, n))
		default:
			t.Logf("%s: %s on ours, %q on SoftHSMv2:\n%s", n, o, s, miekgReason(ours.out, n))
		}
		if s != "PASS" && s != "" {
			t.Logf("SoftHSMv2: %s %s:\n%s", n, s, miekgReason(soft.out, n))
		}
	}
	for n := range miekgAccepted {
		if ours.result[n] == "PASS" {
			t.Logf("%s is accepted as failing but passes: drop it from miekgAccepted", n)
		}
	}
	if count["PASS"] < 20 {
		t.Errorf("only %d of miekg/pkcs11's tests passed on ours\n%s", count["PASS"], tail(ours.out, 60))
	}
	t.Logf("miekg/pkcs11's suite on ours: %d passed, %d failed, %d skipped (of %d; SoftHSMv2 ran %d)",
		count["PASS"], count["FAIL"], count["SKIP"], len(names), len(soft.result))
}

// miekgReason is the output of test name up to its result line: the
// messages it logged.
func miekgReason(out, name string) string {
	start := strings.Index(out, "=== RUN   "+name+"\n")
	if start < 0 {
		return "    (no output)"
	}
	rest := out[start:]
	if end := miekgResult.FindStringIndex(rest); end != nil {
		rest = rest[:end[0]]
	}
	var lines []string
	for _, l := range strings.Split(rest, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "pkcs11_test.go:33: loading") || strings.HasPrefix(l, "=== RUN") || l == "" {
			continue
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}
