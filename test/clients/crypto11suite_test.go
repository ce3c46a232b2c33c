package clients

// crypto11's own test suite against the module, in-process (the suite's
// test binary loads libmodexp-pkcs11.so itself: two Go runtimes in one
// process, which upstream Go does not support, golang/go#18976) and
// through p11-kit remoting; and a bounded stress of the in-process path
// under forced garbage collection and preemption.
//
// The suite is github.com/ThalesGroup/crypto11 v1.6.2 as the Go module
// cache holds it (go.mod pins it): the test copies it into a temporary
// directory (its tests read a file named "config" from their directory),
// builds its test binary offline and runs it. Nothing of it is copied into
// this repository.

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThalesGroup/crypto11"
	"github.com/miekg/pkcs11"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// crypto11Skips are the crypto11 tests not run, each with its reason.
// Every other test of the suite must pass (in -short mode), DSA and P-224
// included: no key family the suite uses is missing.
var crypto11Skips = []struct{ name, why string }{
	// Upstream's tests disagree with upstream's code; they fail the same way
	// against SoftHSMv2 (checked with MODEXP_CLIENTS_MODULE=softhsm).
	{"TestKeyPairDelete", "expects FindKeyPair to return nil, nil for a deleted key; crypto11 v1.6.2 returns an error"},
	{"TestKeyDelete", "expects FindKey to return nil, nil for a deleted key; crypto11 v1.6.2 returns an error"},
	{"TestAccessSameLibraryTwice", "expects FindKey to return nil, nil for a deleted key; crypto11 v1.6.2 returns an error"},
	{"TestNoLogin", "run alone (crypto11Alone)"},
	{"TestDeleteCertificate", "run alone (crypto11Alone)"},
	// crypto11 makes HMAC keys with nCipher's vendor mechanism first and
	// tries the next only after nShield's or CloudHSM's error codes; this
	// token (like SoftHSMv2, where crypto11 skips the test) answers the
	// standard's CKR_MECHANISM_INVALID. HMAC through crypto11 is tested in
	// TestCrypto11InProcessStress (crypto11HMAC: a CipherGeneric key, NewHMAC).
	{"TestHmac", "crypto11 falls back from CKM_NC_SHA*_HMAC_KEY_GEN only on nShield's error codes"},
}

// crypto11Alone are the crypto11 tests run apart from the suite, each in
// a run of its own on tokens of its own, with the reason.
var crypto11Alone = []struct{ name, why string }{
	{"TestNoLogin", "expects no login, but in the suite another context of the same process is logged in (login state is per application)"},
	{"TestDeleteCertificate", "deletes by serial alone and expects its own certificate gone; the serials are random below 20,000, " +
		"and the suite's earlier certificate tests leave two certificates on the token: one with the same serial (about one run " +
		"in 10,000) would be the one deleted"},
}

// crypto11RemoteSkips are skipped through p11-kit only: p11-kit 0.24's RPC
// forwards only mechanisms on its allow-list, which has no AES-GCM, and
// these tests use AES-GCM without asking whether the token offers it (the
// test binary panics in C_EncryptInit). The same tests pass in process.
// crypto11SubtestSkips are subtests skipped (a test and a subtest path):
// TestHardSymmetric's GCMSoft and GCMHard are the same calls on one key
// (crypto11 v1.6.2 uses the token's GCM in both), each sealing with the
// all-zero nonce, so the second repeats an IV on one key, which the token
// refuses (docs/THREATS.md, GCM). GCMSoft, the first, runs and passes.
var crypto11SubtestSkips = []struct{ test, sub, why string }{
	{"TestHardSymmetric", "AES128/GCMHard", "repeats GCMSoft's all-zero nonce on the same key"},
}

var crypto11RemoteSkips = []struct{ name, why string }{
	{"TestHardSymmetric", "uses CKM_AES_GCM, which p11-kit's RPC does not carry"},
	{"TestBlockMode", "uses CKM_AES_GCM, which p11-kit's RPC does not carry"},
}

// buildUpstreamSuite copies the Go module mod from the module cache into
// a temporary directory of t and compiles its tests there, offline, as
// name.test. It returns the binary and the copied source (the suites read
// files from their working directory).
func buildUpstreamSuite(t *testing.T, mod, name string) (bin, src string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mod).Output()
	if err != nil {
		t.Fatalf("go list %s: %v (run `go mod download`)", mod, err)
	}
	from := strings.TrimSpace(string(out))
	dir := t.TempDir()
	src = filepath.Join(dir, "src")
	if err := copyTree(from, src); err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(dir, name+".test")
	cmd := exec.Command("go", "test", "-c", "-o", bin, ".")
	cmd.Dir = src
	// The suite's own test dependencies (testify's, for crypto11) need not
	// be in the module cache of a fresh machine: go fetches them through
	// the environment's GOPROXY.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s's tests in %s (from %s): %v\n%s", mod, src, from, err, b)
	}
	return bin, src
}

// copyTree copies a directory of regular files (the module cache's are
// read-only; the copies are writable).
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}

// crypto11Tokens is a module configuration with the two tokens crypto11's
// suite expects ("token1" used throughout, "token2" for the wrong-PIN test),
// initialised; it returns the environment to run the suite in.
func crypto11Tokens(t *testing.T) (env []string, module string) {
	t.Helper()
	needTools(t, "pkcs11-tool")
	module = ourModule(t)
	dir := t.TempDir()
	conf := ""
	for _, l := range []string{"token1", "token2"} {
		conf += fmt.Sprintf("[[slot]]\nlabel = %q\ntoken_file = %q\nengine = \"soft\"\n%s\n",
			l, filepath.Join(dir, l+".db"), e2e.CheapKDF)
	}
	confPath := filepath.Join(dir, "modexp-token.toml")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	env = append(os.Environ(), "MODEXP_TOKEN_CONF="+confPath, "MODEXP_TOKEN_LOG=", "MODEXP_TOKEN_ENGINE=")
	for i, l := range []string{"token1", "token2"} {
		for _, args := range [][]string{
			{"--slot-index", strconv.Itoa(i), "--init-token", "--label", l, "--so-pin", soPIN},
			{"--slot-index", strconv.Itoa(i), "--login", "--login-type", "so", "--so-pin", soPIN, "--init-pin", "--pin", userPIN},
		} {
			cmd := exec.Command("pkcs11-tool", append([]string{"--module", module}, args...)...)
			cmd.Env = env
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("pkcs11-tool %v: %v\n%s", args, err, b)
			}
		}
	}
	return env, module
}

var crypto11Result = regexp.MustCompile(`(?m)^(--- (PASS|FAIL|SKIP): (\S+))`)

// runCrypto11Suite runs the suite's binary with config (its "config"
// file) and reports the top-level results.
func runCrypto11Suite(t *testing.T, bin, src string, env []string, config map[string]string, args ...string) (pass, fail, skip []string, out string) {
	t.Helper()
	dir := t.TempDir()
	if err := copyTree(src, dir); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(config)
	if err := os.WriteFile(filepath.Join(dir, "config"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"-test.v", "-test.short", "-test.timeout", "280s"}, args...)...)
	cmd.Dir = dir
	cmd.Env = env
	b, err := cmd.CombinedOutput()
	out = string(b)
	for _, m := range crypto11Result.FindAllStringSubmatch(out, -1) {
		if strings.Contains(m[3], "/") {
			continue // subtests count with their parent
		}
		switch m[2] {
		case "PASS":
			pass = append(pass, m[3])
		case "FAIL":
			fail = append(fail, m[3])
		case "SKIP":
			skip = append(skip, m[3])
		}
	}
	if err != nil && len(fail) == 0 {
		t.Fatalf("crypto11's suite: %v\n%s", err, failureReport(out, nil))
	}
	return pass, fail, skip, out
}

// failureReport is what a failed run of a go test -v binary says about
// its failure: each failed test's own lines (from its "=== RUN" to its
// "--- FAIL", which a long run's end may be far from), the start of a
// panic (a test timeout names the tests running, then the goroutines),
// and the output's last lines.
func failureReport(out string, failed []string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var b strings.Builder
	for _, name := range failed {
		start, end := -1, -1
		for i, l := range lines {
			switch {
			case start < 0 && l == "=== RUN   "+name:
				start = i
			case start >= 0 && strings.HasPrefix(l, "--- FAIL: "+name+" "):
				end = i
			}
			if end >= 0 {
				break
			}
		}
		if start < 0 || end < 0 {
			fmt.Fprintf(&b, "%s: no \"=== RUN\" ... \"--- FAIL\" lines in the output\n", name)
			continue
		}
		fmt.Fprintf(&b, "%s:\n%s\n", name, strings.Join(lines[start:end+1], "\n"))
	}
	for i, l := range lines {
		if strings.HasPrefix(l, "panic: ") {
			fmt.Fprintf(&b, "the panic:\n%s\n", strings.Join(lines[i:min(i+40, len(lines))], "\n"))
			break
		}
	}
	fmt.Fprintf(&b, "output (end):\n%s", tail(out, 60))
	return b.String()
}

// TestCrypto11Suite runs crypto11's own suite against the module, in
// process and through p11-kit remoting. Every test passes but those of
// crypto11Skips; those of crypto11Alone run alone, each on new tokens.
func TestCrypto11Suite(t *testing.T) {
	if testing.Short() {
		t.Skip("crypto11's suite takes about a minute (two runs of its RSA key generations)")
	}
	bin, src := buildUpstreamSuite(t, "github.com/ThalesGroup/crypto11", "crypto11")
	var names []string
	for _, s := range crypto11Skips {
		names = append(names, s.name)
		t.Logf("skipped: %s: %s", s.name, s.why)
	}
	for _, s := range crypto11Alone {
		t.Logf("run alone: %s: %s", s.name, s.why)
	}
	var subSkips string
	for _, s := range crypto11SubtestSkips {
		subSkips += "|^" + s.test + "$/^" + strings.ReplaceAll(s.sub, "/", "$/^") + "$"
		t.Logf("skipped: %s/%s: %s", s.test, s.sub, s.why)
	}
	remoteNames := append([]string(nil), names...)
	for _, s := range crypto11RemoteSkips {
		remoteNames = append(remoteNames, s.name)
		t.Logf("skipped through p11-kit: %s: %s", s.name, s.why)
	}
	modes := []struct {
		name   string
		skip   []string
		config func(module string) map[string]string
		env    func(env []string, module string) []string
	}{
		{"in-process", names, func(module string) map[string]string {
			return map[string]string{"Path": module, "TokenLabel": "token1", "Pin": userPIN}
		}, func(env []string, _ string) []string { return env }},
		{"p11-kit-remote", remoteNames, func(string) map[string]string {
			return map[string]string{"Path": p11KitClient, "TokenLabel": "token1", "Pin": userPIN}
		}, func(env []string, module string) []string {
			return append(env, "P11_KIT_SERVER_ADDRESS=|p11-kit remote "+module)
		}},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			if mode.name == "p11-kit-remote" {
				needTools(t, "p11-kit")
				if _, err := os.Stat(p11KitClient); err != nil {
					t.Fatalf("p11-kit client module missing (Debian p11-kit-modules): %v", err)
				}
			}
			env, module := crypto11Tokens(t)
			env = mode.env(env, module)
			start := time.Now()
			// Top-level alternatives: each is split at "/" into levels.
			skipRE := "^(" + strings.Join(mode.skip, "|") + ")$" + subSkips
			pass, fail, skip, out := runCrypto11Suite(t, bin, src, env, mode.config(module), "-test.skip", skipRE)
			for _, f := range fail {
				t.Errorf("crypto11 %s failed", f)
			}
			if len(fail) > 0 {
				t.Logf("%s", failureReport(out, fail))
			}
			if len(pass) < 25 {
				t.Errorf("only %d crypto11 tests passed", len(pass))
			}
			t.Logf("%s: %d passed, %d skipped by crypto11 (%v), %d failed, in %v", mode.name, len(pass), len(skip), skip, len(fail), time.Since(start).Round(time.Millisecond))
			for _, a := range crypto11Alone {
				env, module := crypto11Tokens(t)
				env = mode.env(env, module)
				pass, fail, _, out := runCrypto11Suite(t, bin, src, env, mode.config(module), "-test.run", "^"+a.name+"$")
				if len(fail) > 0 || len(pass) != 1 {
					t.Errorf("%s alone: passed %v, failed %v\n%s", a.name, pass, fail, failureReport(out, fail))
				}
			}
		})
	}
}

// TestCrypto11InProcessStress loads the module into a Go program (this test
// binary, re-run as a child) through crypto11 and has 8 goroutines sign
// with ECDSA and RSA and read random bytes for a few seconds while both Go
// runtimes collect garbage constantly (GOGC=5, and runtime.GC every 5 ms
// in the host) and preempt (the default asynchronous preemption, SIGURG).
// It must finish, every signature must verify, and the child must exit
// cleanly. Before the stress the child checks crypto11's HMAC against
// crypto/hmac (crypto11HMAC). -stress.seconds sets the duration.
func TestCrypto11InProcessStress(t *testing.T) {
	if os.Getenv("MODEXP_C11_STRESS_CHILD") == "1" {
		crypto11StressChild(t)
		return
	}
	env, module := crypto11Tokens(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^TestCrypto11InProcessStress$", "-test.v",
		fmt.Sprintf("-stress.seconds=%d", *stressSeconds))
	cmd.Env = append(env, "MODEXP_C11_STRESS_CHILD=1", "MODEXP_C11_MODULE="+module, "GOGC=5")
	b, err := cmd.CombinedOutput()
	out := string(b)
	if ctx.Err() != nil {
		t.Fatalf("the in-process stress hung (killed after 2 minutes):\n%s", tail(out, 40))
	}
	if err != nil || !strings.Contains(out, "STRESS OK") {
		t.Fatalf("in-process stress: %v\n%s", err, tail(out, 40))
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "STRESS OK") {
			t.Log(strings.TrimSpace(l))
		}
	}
}

// stressSeconds is how long TestCrypto11InProcessStress runs (the child
// is given the same flag).
var stressSeconds = flag.Int("stress.seconds", 3, "TestCrypto11InProcessStress: duration in seconds")

func crypto11StressChild(t *testing.T) {
	secs := *stressSeconds
	ctx, err := crypto11.Configure(&crypto11.Config{Path: os.Getenv("MODEXP_C11_MODULE"), TokenLabel: "token1", Pin: userPIN})
	if err != nil {
		t.Fatalf("crypto11.Configure (in-process): %v", err)
	}
	defer func() {
		if err := ctx.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	ec, err := ctx.GenerateECDSAKeyPair([]byte("stress-ec"), elliptic.P256())
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := ctx.GenerateRSAKeyPair([]byte("stress-rsa"), 2048)
	if err != nil {
		t.Fatal(err)
	}
	crypto11HMAC(t, ctx)
	ecPub := ec.Public().(*ecdsa.PublicKey)
	rnd, err := ctx.NewRandomReader()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Duration(secs) * time.Second)
	var calls, gcs atomic.Int64
	stop := make(chan struct{})
	go func() { // the host's collector, constantly
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				runtime.GC()
				gcs.Add(1)
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				msg := []byte(fmt.Sprintf("goroutine %d call %d", g, i))
				d := sha256.Sum256(msg)
				switch i % 4 {
				case 0:
					sig, err := rsaKey.Sign(rand.Reader, d[:], crypto.SHA256)
					if err != nil {
						errs <- fmt.Errorf("RSA sign: %w", err)
						return
					}
					if len(sig) != 256 {
						errs <- fmt.Errorf("RSA signature of %d bytes", len(sig))
						return
					}
				case 1:
					buf := make([]byte, 64)
					if _, err := rnd.Read(buf); err != nil || bytes.Equal(buf, make([]byte, 64)) {
						errs <- fmt.Errorf("random: %v", err)
						return
					}
				default:
					der, err := ec.Sign(rand.Reader, d[:], crypto.SHA256)
					if err != nil {
						errs <- fmt.Errorf("ECDSA sign: %w", err)
						return
					}
					if !ecdsa.VerifyASN1(ecPub, d[:], der) {
						errs <- fmt.Errorf("an ECDSA signature does not verify")
						return
					}
				}
				calls.Add(1)
				_ = big.NewInt(int64(i)) // some garbage of our own
			}
		}(g)
	}
	wg.Wait()
	close(stop)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	_ = rsaKey.Delete()
	_ = ec.Delete()
	fmt.Printf("STRESS OK: %d crypto11 calls from 8 goroutines in %d s, %d forced GCs in the host (GOGC=5 in both runtimes)\n", calls.Load(), secs, gcs.Load())
}

// TestFailureReport: a failed test's own lines are reported however far
// from the end they are, a timeout's panic from its start, and the end.
func TestFailureReport(t *testing.T) {
	var out strings.Builder
	out.WriteString("=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestDelete\n    cert_test.go:175: Should be nil\n" +
		"--- FAIL: TestDelete (2.00s)\n=== RUN   TestDeleteMore\n--- FAIL: TestDeleteMore (0.00s)\n")
	for i := range 200 {
		fmt.Fprintf(&out, "=== RUN   TestN%d\n--- PASS: TestN%d (0.00s)\n", i, i)
	}
	out.WriteString("panic: test timed out after 4m40s\n\trunning tests:\n\t\tTestSlow (1m0s)\n\ngoroutine 1 [running]:\n")
	got := failureReport(out.String(), []string{"TestDelete", "TestGone"})
	for _, want := range []string{
		"TestDelete:\n=== RUN   TestDelete\n    cert_test.go:175: Should be nil\n--- FAIL: TestDelete (2.00s)\n",
		"TestGone: no \"=== RUN\"",
		"the panic:\npanic: test timed out after 4m40s\n\trunning tests:\n\t\tTestSlow (1m0s)\n",
		"output (end):\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the report has no %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "TestDeleteMore") {
		t.Errorf("the report has a test that was not asked for (a name's prefix):\n%s", got)
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// crypto11HMAC makes a generic secret key with crypto11 (readable, so the
// test can check) and compares crypto11's HMAC-SHA256 and
// HMAC-SHA256-GENERAL (truncated to 16 bytes) through the module with
// crypto/hmac's.
func crypto11HMAC(t *testing.T, ctx *crypto11.Context) {
	t.Helper()
	tmpl, err := crypto11.NewAttributeSetWithID([]byte("stress-hmac"))
	if err != nil {
		t.Fatal(err)
	}
	_ = tmpl.Set(crypto11.CkaSensitive, false)
	_ = tmpl.Set(crypto11.CkaExtractable, true)
	key, err := ctx.GenerateSecretKeyWithAttributes(tmpl, 256, crypto11.CipherGeneric)
	if err != nil {
		t.Fatalf("GenerateSecretKey(CipherGeneric): %v", err)
	}
	defer func() { _ = key.Delete() }()
	v, err := ctx.GetAttribute(key, crypto11.CkaValue)
	if err != nil || len(v.Value) != 32 {
		t.Fatalf("CKA_VALUE of the HMAC key: %v", err)
	}
	msg := []byte("HMAC through crypto11, in process")
	want := hmac.New(sha256.New, v.Value)
	want.Write(msg)
	for _, c := range []struct {
		mech, length int
		want         []byte
	}{{pkcs11.CKM_SHA256_HMAC, 0, want.Sum(nil)}, {pkcs11.CKM_SHA256_HMAC_GENERAL, 16, want.Sum(nil)[:16]}} {
		h, err := key.NewHMAC(c.mech, c.length)
		if err != nil {
			t.Fatalf("NewHMAC(0x%x): %v", c.mech, err)
		}
		h.Write(msg[:10])
		h.Write(msg[10:])
		if got := h.Sum(nil); !bytes.Equal(got, c.want) {
			t.Fatalf("crypto11 HMAC (0x%x) %x, crypto/hmac %x", c.mech, got, c.want)
		}
	}
}
