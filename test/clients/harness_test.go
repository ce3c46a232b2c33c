package clients

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/modexp-token/modexp-token/engine/backend/all" // the engines the in-process token names
	"github.com/modexp-token/modexp-token/test/internal/e2e"

	_ "github.com/modexp-token/modexp-token/engine/backend/all" // the engines the token opens in process
)

// Fixed secrets of every test token. They protect throw-away tokens in
// temporary directories only.
const (
	tokenLabel = "t"
	soPIN      = "12345678"
	userPIN    = "1234"
)

// Paths of the system pieces the tests use (Debian amd64 layout).
const (
	softHSMLib     = "/usr/lib/softhsm/libsofthsm2.so"
	p11KitClient   = "/usr/lib/x86_64-linux-gnu/pkcs11/p11-kit-client.so"
	commandTimeout = 3 * time.Minute
)

// Module kinds selected by MODEXP_CLIENTS_MODULE.
const (
	kindModExp  = "modexp"
	kindSoftHSM = "softhsm"
)

// moduleKind returns the module under test: ours unless
// MODEXP_CLIENTS_MODULE says otherwise.
func moduleKind(t *testing.T) string {
	t.Helper()
	switch k := os.Getenv("MODEXP_CLIENTS_MODULE"); k {
	case "", kindModExp:
		return kindModExp
	case kindSoftHSM:
		return kindSoftHSM
	default:
		t.Fatalf("MODEXP_CLIENTS_MODULE=%q: want %q or %q", k, kindModExp, kindSoftHSM)
		return ""
	}
}

// repoRoot is the directory holding go.mod (e2e.Root).
func repoRoot(t *testing.T) string {
	t.Helper()
	return e2e.Root()
}

// ourModule is the absolute path of the module built by `make build`, or
// MODEXP_CLIENTS_LIB.
func ourModule(t *testing.T) string {
	t.Helper()
	p := os.Getenv("MODEXP_CLIENTS_LIB")
	if p == "" {
		p = e2e.Lib()
	}
	p, err := filepath.Abs(p)
	if err != nil {
		t.Fatalf("clients: module path: %v", err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("clients: module not built (run `make build`): %v", err)
	}
	return p
}

// ourCLI is the absolute path of build/modexp-token.
func ourCLI(t *testing.T) string {
	t.Helper()
	p := filepath.Join(repoRoot(t), "build", "modexp-token")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("clients: CLI not built (run `make build`): %v", err)
	}
	return p
}

// needTools fails the test when a program is missing: the suite is only
// meaningful with the real clients (`make deps` installs them).
func needTools(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Fatalf("clients: %s not installed (run `make deps`): %v", n, err)
		}
	}
}

// testToken is one initialised token in a temporary directory, with the
// environment every client program of the test runs in.
type testToken struct {
	t       *testing.T
	kind    string // kindModExp or kindSoftHSM
	dir     string // the test's temporary directory
	module  string // absolute path of the PKCS#11 module
	env     []string
	pinFile string // the user PIN, without a newline
}

// newToken makes a fresh directory, points HOME, XDG_* and the module's
// configuration at it, and initialises a token labelled tokenLabel with
// soPIN and userPIN.
func newToken(t *testing.T) *testToken {
	t.Helper()
	return newTokenWith(t, "")
}

// standardKeyPolicy is the slot key that restores the standard's
// permissive key-management policy (docs/THREATS.md, "Tests that need
// key_policy = \"standard\""), for the tests whose checks are themselves
// one of the attacks the safe policy refuses.
const standardKeyPolicy = "key_policy = \"standard\"\n"

// newTokenWith is newToken with extra keys of our slot (ignored for
// SoftHSMv2).
func newTokenWith(t *testing.T, extra string) *testToken {
	t.Helper()
	needTools(t, "pkcs11-tool", "openssl")
	dir := t.TempDir()
	tk := &testToken{t: t, kind: moduleKind(t), dir: dir}
	home := tk.path("home")
	for _, d := range []string{home, tk.path("data"), tk.path("tmp"), filepath.Join(home, ".config")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	tk.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_DATA_HOME=" + tk.path("data"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"TMPDIR=" + tk.path("tmp"),
		"LC_ALL=C",
	}
	tk.pinFile = tk.write("user.pin", userPIN)
	switch tk.kind {
	case kindModExp:
		tk.module = ourModule(t)
		// Fast PIN hashing: these tokens guard nothing.
		conf := fmt.Sprintf("[[slot]]\nlabel = %q\ntoken_file = %q\nengine = \"soft\"\n%s%s", tokenLabel, tk.path("token.db"), e2e.CheapKDF, extra)
		tk.env = append(tk.env, "MODEXP_TOKEN_CONF="+tk.write("modexp-token.toml", conf))
		if e := os.Getenv("MODEXP_TOKEN_ENGINE"); e != "" {
			tk.env = append(tk.env, "MODEXP_TOKEN_ENGINE="+e)
		}
		tk.p11("--init-token", "--label", tokenLabel, "--so-pin", soPIN)
		tk.p11("--login", "--login-type", "so", "--so-pin", soPIN, "--init-pin", "--pin", userPIN)
	case kindSoftHSM:
		needTools(t, "softhsm2-util")
		tk.module = softHSMLib
		if err := os.MkdirAll(tk.path("softhsm"), 0o700); err != nil {
			t.Fatal(err)
		}
		conf := fmt.Sprintf("directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n", tk.path("softhsm"))
		tk.env = append(tk.env, "SOFTHSM2_CONF="+tk.write("softhsm2.conf", conf))
		tk.mustRun("softhsm2-util", "--init-token", "--free", "--label", tokenLabel, "--so-pin", soPIN, "--pin", userPIN)
	}
	return tk
}

// with returns a copy of tk that reports to t: subtests use it so that a
// failure ends the subtest, not its parent.
func (tk *testToken) with(t *testing.T) *testToken {
	c := *tk
	c.t = t
	return &c
}

// path joins name to the token's directory.
func (tk *testToken) path(name ...string) string {
	return filepath.Join(append([]string{tk.dir}, name...)...)
}

// write writes content to a file in the token's directory and returns its
// path.
func (tk *testToken) write(name, content string) string {
	tk.t.Helper()
	p := tk.path(name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		tk.t.Fatalf("write %s: %v", p, err)
	}
	return p
}

// read returns the content of a file in the token's directory.
func (tk *testToken) read(name string) []byte {
	tk.t.Helper()
	b, err := os.ReadFile(tk.path(name))
	if err != nil {
		tk.t.Fatalf("read: %v", err)
	}
	return b
}

// result is what a finished command left behind.
type result struct {
	stdout, stderr string
	err            error
}

// combined is stdout then stderr, for error messages and output checks.
func (r result) combined() string { return r.stdout + r.stderr }

// command prepares name with the token's environment plus extra entries
// (later entries win), in the token's directory.
func (tk *testToken) command(ctx context.Context, extra []string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(append([]string(nil), tk.env...), extra...)
	cmd.Dir = tk.dir
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// runEnv runs a command to completion (at most commandTimeout) with stdin
// from stdin (nil: empty).
func (tk *testToken) runEnv(extra []string, stdin []byte, name string, args ...string) result {
	tk.t.Helper()
	ctx, cancel := context.WithTimeout(tk.t.Context(), commandTimeout)
	defer cancel()
	cmd := tk.command(ctx, extra, name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Stdin = bytes.NewReader(stdin)
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (timeout after %v)", err, commandTimeout)
	}
	return result{out.String(), errb.String(), err}
}

// run runs a command in the token's environment.
func (tk *testToken) run(name string, args ...string) result {
	tk.t.Helper()
	return tk.runEnv(nil, nil, name, args...)
}

// mustRunEnv runs a command and fails the test, with its output, when it
// does not exit 0.
func (tk *testToken) mustRunEnv(extra []string, name string, args ...string) result {
	tk.t.Helper()
	r := tk.runEnv(extra, nil, name, args...)
	if r.err != nil {
		tk.t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), r.err, r.stdout, r.stderr)
	}
	return r
}

// mustRun runs a command in the token's environment and fails on error.
func (tk *testToken) mustRun(name string, args ...string) result {
	tk.t.Helper()
	return tk.mustRunEnv(nil, name, args...)
}

// p11 runs pkcs11-tool on the module under test and fails on error.
func (tk *testToken) p11(args ...string) result {
	tk.t.Helper()
	return tk.mustRun("pkcs11-tool", append([]string{"--module", tk.module}, args...)...)
}

// p11Login runs pkcs11-tool logged in as the user.
func (tk *testToken) p11Login(args ...string) result {
	tk.t.Helper()
	return tk.p11(append([]string{"--login", "--pin", userPIN}, args...)...)
}

// mechLine is one line of `pkcs11-tool -M`: "  NAME, keySize={a,b}, flag, flag".
var mechLine = regexp.MustCompile(`^\s+([^,\s]+)(?:, keySize=\{[^}]*\})?(?:, (.*))?$`)

// mechanisms returns the module's mechanisms as pkcs11-tool names them,
// each with its capability flags.
func (tk *testToken) mechanisms() map[string][]string {
	tk.t.Helper()
	out := tk.p11("--list-mechanisms").stdout
	m := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		sub := mechLine.FindStringSubmatch(line)
		if sub == nil {
			continue
		}
		var flags []string
		if sub[2] != "" {
			for _, f := range strings.Split(sub[2], ",") {
				flags = append(flags, strings.TrimSpace(f))
			}
		}
		m[sub[1]] = flags
	}
	if len(m) == 0 {
		tk.t.Fatalf("pkcs11-tool -M listed no mechanism:\n%s", out)
	}
	return m
}

// requireECDSA fails the test, saying why, unless the module offers EC key
// generation and CKM_ECDSA. ECDSA is a feature of the token still being
// landed; its absence must show, not be skipped over.
func (tk *testToken) requireECDSA() {
	tk.t.Helper()
	m := tk.mechanisms()
	_, gen := m["ECDSA-KEY-PAIR-GEN"]
	_, sign := m["ECDSA"]
	if !gen || !sign {
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		sort.Strings(names)
		tk.t.Fatalf("module %s does not list CKM_EC_KEY_PAIR_GEN (%v) and CKM_ECDSA (%v) in `pkcs11-tool -M`: "+
			"ECDSA has not landed in the token yet; mechanisms: %v", tk.module, gen, sign, names)
	}
}

// genRSA makes an RSA key pair on the token.
func (tk *testToken) genRSA(idHex, label string, bits int) {
	tk.t.Helper()
	tk.p11Login("--keypairgen", "--key-type", fmt.Sprintf("rsa:%d", bits), "--id", idHex, "--label", label)
}

// genEC makes an EC key pair on the token; curve is an OpenSSL name
// (prime256v1, secp384r1, secp521r1).
func (tk *testToken) genEC(idHex, label, curve string) {
	tk.t.Helper()
	tk.p11Login("--keypairgen", "--key-type", "EC:"+curve, "--id", idHex, "--label", label)
}

// publicKey reads the public key with the given ID from the token (without
// logging in), checks it parses, and writes it as PEM; it returns the PEM
// file's path and the key. RSA keys come from `pkcs11-tool --read-object`;
// EC keys from the CKA_EC_PARAMS and CKA_EC_POINT that `pkcs11-tool -O`
// prints, because pkcs11-tool 0.23's --read-object fails on P-384 keys
// ("cannot create EVP_PKEY", seen with SoftHSMv2).
func (tk *testToken) publicKey(idHex string) (string, crypto.PublicKey) {
	tk.t.Helper()
	var der []byte
	list := objectListing(tk.p11("--list-objects", "--type", "pubkey").stdout, idHex)
	if list == "" {
		tk.t.Fatalf("no public key with ID %s on the token", idHex)
	}
	if ed, ok, err := edPublicKey(list); ok {
		if err != nil {
			tk.t.Fatalf("Ed25519 public key %s: %v\n%s", idHex, err, list)
		}
		if der, err = x509.MarshalPKIXPublicKey(ed); err != nil {
			tk.t.Fatal(err)
		}
	} else if strings.Contains(list, "EC_POINT:") {
		pub, err := ecPublicKey(list)
		if err != nil {
			tk.t.Fatalf("EC public key %s: %v\n%s", idHex, err, list)
		}
		if der, err = x509.MarshalPKIXPublicKey(pub); err != nil {
			tk.t.Fatal(err)
		}
	} else {
		name := "pub-" + idHex + ".der"
		tk.p11("--read-object", "--type", "pubkey", "--id", idHex, "--output-file", tk.path(name))
		der = tk.read(name)
	}
	pub, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		tk.t.Fatalf("public key %s from the token does not parse as SubjectPublicKeyInfo: %v (% x)", idHex, err, der)
	}
	p := tk.write("pub-"+idHex+".pem", string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})))
	return p, pub
}

// objectListing returns the block of `pkcs11-tool -O` output that
// describes the object with ID idHex (pkcs11-tool 0.23 lists every object
// whatever --id says), or "".
func objectListing(out, idHex string) string {
	idLine := regexp.MustCompile(`(?m)^\s+ID:\s+` + idHex + `$`)
	var blocks []string
	for _, line := range strings.Split(out, "\n") {
		if line != "" && line[0] != ' ' && line[0] != '\t' {
			blocks = append(blocks, "")
		}
		if len(blocks) > 0 {
			blocks[len(blocks)-1] += line + "\n"
		}
	}
	for _, b := range blocks {
		if idLine.MatchString(b) {
			return b
		}
	}
	return ""
}

// Named curves by the DER of their OID (CKA_EC_PARAMS).
var curveByParams = map[string]elliptic.Curve{
	"06052b81040021":       elliptic.P224(),
	"06082a8648ce3d030107": elliptic.P256(),
	"06052b81040022":       elliptic.P384(),
	"06052b81040023":       elliptic.P521(),
}

var (
	ecPointLine  = regexp.MustCompile(`EC_POINT:\s+([0-9a-f]+)`)
	ecParamsLine = regexp.MustCompile(`EC_PARAMS:\s+([0-9a-f]+)`)
)

// ecPublicKey builds an EC public key from pkcs11-tool's listing of one
// public key object. CKA_EC_POINT must be a DER OCTET STRING holding the
// uncompressed point (PKCS#11 3.0 §2.3.3; what OpenSSL's and OpenSC's
// clients expect).
func ecPublicKey(listing string) (*ecdsa.PublicKey, error) {
	pm, cm := ecPointLine.FindStringSubmatch(listing), ecParamsLine.FindStringSubmatch(listing)
	if pm == nil || cm == nil {
		return nil, errors.New("no EC_POINT or EC_PARAMS in the listing")
	}
	curve, ok := curveByParams[cm[1]]
	if !ok {
		return nil, fmt.Errorf("unknown EC_PARAMS %s", cm[1])
	}
	point, err := hex.DecodeString(pm[1])
	if err != nil {
		return nil, err
	}
	var inner []byte
	if rest, err := asn1.Unmarshal(point, &inner); err != nil || len(rest) != 0 {
		return nil, fmt.Errorf("CKA_EC_POINT %x is not a DER OCTET STRING: %v", point, err)
	}
	x, y := elliptic.Unmarshal(curve, inner) //nolint:staticcheck // the plain uncompressed form is what we check
	if x == nil {
		return nil, fmt.Errorf("CKA_EC_POINT %x is not an uncompressed point on %s", inner, curve.Params().Name)
	}
	return &ecdsa.PublicKey{Curve: curve, X: x, Y: y}, nil
}

// Ed25519's CKA_EC_PARAMS as pkcs11-tool prints them: the PrintableString
// "edwards25519" and the OID 1.3.101.112.
var edwardsParams = map[string]bool{"130c656477617264733235353139": true, "06032b6570": true}

// edPublicKey builds an Ed25519 public key from pkcs11-tool's listing of
// one public key object; ok is false if the key is not on Ed25519.
// CKA_EC_POINT must be the DER OCTET STRING of the 32-byte key.
func edPublicKey(listing string) (pub ed25519.PublicKey, ok bool, err error) {
	pm, cm := ecPointLine.FindStringSubmatch(listing), ecParamsLine.FindStringSubmatch(listing)
	if pm == nil || cm == nil || !edwardsParams[cm[1]] {
		return nil, false, nil
	}
	point, err := hex.DecodeString(pm[1])
	if err != nil {
		return nil, true, err
	}
	var inner []byte
	if rest, err := asn1.Unmarshal(point, &inner); err != nil || len(rest) != 0 || len(inner) != ed25519.PublicKeySize {
		return nil, true, fmt.Errorf("CKA_EC_POINT %x is not a DER OCTET STRING of 32 bytes", point)
	}
	return ed25519.PublicKey(inner), true, nil
}

// uri is a PKCS#11 URI of an object of the test token; with pin set it
// carries pin-source pointing at the PIN file (libp11 reads it).
func (tk *testToken) uri(label, typ string, pin bool) string {
	u := fmt.Sprintf("pkcs11:token=%s;object=%s;type=%s", tokenLabel, label, typ)
	if pin {
		u += "?pin-source=file:" + tk.pinFile
	}
	return u
}

// decodeHex is hex.DecodeString for test constants.
func decodeHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// server is a background process (a TLS server, an agent) that the test
// stops at its end.
type server struct {
	cmd    *exec.Cmd
	out    *e2e.SyncBuffer
	done   chan struct{}
	waitMu sync.Mutex
	err    error
}

// startServer starts a long-running command and waits (at most 2 minutes,
// a hang guard) until its combined output contains ready. Its stdin stays
// open (s_server ends at end of input) until the test ends; the process is
// killed then.
func (tk *testToken) startServer(extra []string, ready, name string, args ...string) *server {
	tk.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := tk.command(ctx, extra, name, args...)
	s := &server{cmd: cmd, out: &e2e.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = s.out, s.out
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		tk.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		tk.t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		err := cmd.Wait()
		s.waitMu.Lock()
		s.err = err
		s.waitMu.Unlock()
		close(s.done)
	}()
	tk.t.Cleanup(func() {
		stdin.Close()
		cancel() // kills the process
		select {
		case <-s.done:
		case <-time.After(time.Minute):
			tk.t.Errorf("%s did not exit after kill", name)
		}
	})
	deadline := time.After(2 * time.Minute)
	for !strings.Contains(s.out.String(), ready) {
		select {
		case <-s.done:
			tk.t.Fatalf("%s exited before it was ready (%v):\n%s", name, s.exitErr(), s.out.String())
		case <-deadline:
			tk.t.Fatalf("%s not ready after 2 minutes (waiting for %q):\n%s", name, ready, s.out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return s
}

func (s *server) exitErr() error {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	return s.err
}

// wait waits (bounded) for the server to exit by itself and returns its
// output.
func (s *server) wait(t *testing.T, d time.Duration) string {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(d):
		t.Errorf("server did not exit within %v:\n%s", d, s.out.String())
	}
	return s.out.String()
}
