package nodeclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/modexp-token/modexp-token/engine/backend/all" // the engines a slot may name
	"github.com/modexp-token/modexp-token/test/internal/e2e"
	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// nobleModules returns build/noble/node_modules with the pinned
// @noble/post-quantum (testdata/noble/package.json, pure JavaScript),
// installing it with npm when absent or stale; it skips the test when node
// or npm is missing or the registry cannot be reached.
func nobleModules(t *testing.T) string {
	t.Helper()
	e2e.NeedTool(t, "node", "npm")
	want, err := os.ReadFile(filepath.Join("testdata", "noble", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e2e.Root(), "build", "noble")
	nm := filepath.Join(dir, "node_modules")
	have, _ := os.ReadFile(filepath.Join(dir, "package.json"))
	if _, err := os.Stat(filepath.Join(nm, "@noble", "post-quantum", "package.json")); err == nil && bytes.Equal(have, want) {
		return nm
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		s := string(out)
		for _, sign := range []string{"ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET", "network"} {
			if strings.Contains(s, sign) {
				t.Skipf("noble: the npm registry is unreachable: %s", lastLines(s, 5))
			}
		}
		t.Fatalf("npm install @noble/post-quantum: %v\n%s", err, lastLines(s, 20))
	}
	return nm
}

// TestNobleMLKEM cross-checks the token's ML-KEM with @noble/post-quantum,
// an independent implementation: for each parameter set the token
// generates a key pair and encapsulates; noble, given the key's seed,
// derives the same public key and decapsulates the token's ciphertext to
// the token's secret, and encapsulates to the token's public key; the
// token decapsulates noble's ciphertext to noble's secret. The token runs
// in this process (its Go API: Node's PKCS#11 libraries have no
// C_EncapsulateKey yet).
func TestNobleMLKEM(t *testing.T) {
	nm := nobleModules(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "modexp.toml")
	body := "[[slot]]\nlabel = \"noble\"\ntoken_file = \"token.db\"\nengine = \"soft\"\nkdf_time = 1\nkdf_memory_kib = 64\nkdf_threads = 1\nkdf_insecure = true\n"
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MODEXP_TOKEN_CONF", conf)
	t.Setenv("MODEXP_TOKEN_LOG", "")
	m, err := token.LoadFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	slot := m.SlotList(true)[0]
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(m.InitToken(slot, []byte(soPIN), tokenLabel))
	sh, err := m.OpenSession(slot, ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
	must(err)
	must(m.Login(sh, ck.CKU_SO, []byte(soPIN)))
	must(m.InitPIN(sh, []byte(userPIN)))
	must(m.Logout(sh))
	must(m.Login(sh, ck.CKU_USER, []byte(userPIN)))
	read := func(h, typ uint64) []byte {
		t.Helper()
		res, err := m.GetAttributeValue(sh, h, []uint64{typ})
		must(err)
		if res[0].Err != 0 {
			t.Fatalf("%s: %v", ck.Name("CKA_", typ), ck.Error(res[0].Err))
		}
		return res[0].Value
	}
	open := []token.Attribute{{Type: ck.CKA_SENSITIVE, Value: ck.Bool(false)}, {Type: ck.CKA_EXTRACTABLE, Value: ck.Bool(true)}}
	mech := &token.Mechanism{Type: ck.CKM_ML_KEM}

	// An ES module resolves packages from its own directory upwards (not
	// NODE_PATH): run a copy placed next to node_modules.
	script, err := os.ReadFile(filepath.Join("testdata", "noble", "mlkem.mjs"))
	must(err)
	copyPath := filepath.Join(filepath.Dir(nm), "mlkem.mjs")
	must(os.WriteFile(copyPath, script, 0o644))
	cmd := exec.Command("node", copyPath)
	stdin, err := cmd.StdinPipe()
	must(err)
	stdout, err := cmd.StdoutPipe()
	must(err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	must(cmd.Start())
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	for _, c := range []struct {
		name string
		set  uint64
	}{{"ML-KEM-512", ck.CKP_ML_KEM_512}, {"ML-KEM-768", ck.CKP_ML_KEM_768}, {"ML-KEM-1024", ck.CKP_ML_KEM_1024}} {
		pub, priv, err := m.GenerateKeyPair(sh, &token.Mechanism{Type: ck.CKM_ML_KEM_KEY_PAIR_GEN},
			[]token.Attribute{{Type: ck.CKA_PARAMETER_SET, Value: ck.ULong(c.set)}}, open)
		must(err)
		ct, _, h1, err := m.EncapsulateKey(sh, mech, pub, open, token.Out{Cap: 4096})
		must(err)
		in, _ := json.Marshal(map[string]string{"set": c.name, "seed": hex.EncodeToString(read(priv, ck.CKA_SEED)),
			"ek": hex.EncodeToString(read(pub, ck.CKA_VALUE)), "ct": hex.EncodeToString(ct)})
		if _, err := stdin.Write(append(in, '\n')); err != nil {
			t.Fatalf("to node: %v\n%s", err, stderr.String())
		}
		if !lines.Scan() {
			t.Fatalf("%s: no answer from node: %v\n%s", c.name, lines.Err(), stderr.String())
		}
		var out struct {
			EkMatch     bool
			K1, Ct2, K2 string
		}
		must(json.Unmarshal(lines.Bytes(), &out))
		if !out.EkMatch {
			t.Errorf("%s: noble derives another public key from the token's seed", c.name)
		}
		if k1 := hex.EncodeToString(read(h1, ck.CKA_VALUE)); out.K1 != k1 {
			t.Errorf("%s: noble decapsulates the token's ciphertext to %s, the token encapsulated %s", c.name, out.K1, k1)
		}
		ct2, err := hex.DecodeString(out.Ct2)
		must(err)
		h2, err := m.DecapsulateKey(sh, mech, priv, open, ct2)
		must(err)
		if k2 := hex.EncodeToString(read(h2, ck.CKA_VALUE)); k2 != out.K2 {
			t.Errorf("%s: the token decapsulates noble's ciphertext to %s, noble encapsulated %s", c.name, k2, out.K2)
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
}
