package token

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	// The module opens engines by name; the tests, like cgo/ and cmd/, pick
	// every implementation.
	_ "github.com/modexp-token/modexp-token/engine/backend/all"
	"github.com/modexp-token/modexp-token/token/ck"
)

const (
	testSOPIN   = "so-secret"
	testUserPIN = "user-1234"
)

// writeConfig writes a one-slot configuration with cheap Argon2
// parameters (slot: the slot's other keys, one per line) into a temporary
// directory, points MODEXP_TOKEN_CONF at it and clears the environment
// overrides. It returns the configuration's and the module log's paths.
func writeConfig(t testing.TB, slot string) (conf, logPath string) {
	t.Helper()
	dir := t.TempDir()
	conf = filepath.Join(dir, "modexp.toml")
	logPath = filepath.Join(dir, "module.log")
	body := fmt.Sprintf(`log = %q
log_level = "debug"

[[slot]]
token_file = "token.db"
kdf_time = 1
kdf_memory_kib = 64
kdf_threads = 1
kdf_insecure = true
%s`, logPath, slot)
	if !strings.Contains(slot, "pin_cache") {
		// Remembered PINs stay in the process: tests leave nothing in
		// the user's keyring (TestLoginRemembered tries the keyring).
		body += "pin_cache = \"process\"\n"
	}
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MODEXP_TOKEN_CONF", conf)
	t.Setenv("MODEXP_TOKEN_ENGINE", "")
	t.Setenv("MODEXP_TOKEN_LOG", "")
	t.Setenv("MODEXP_TOKEN_LOG_LEVEL", "")
	return conf, logPath
}

// testConfig writes the configuration of most tests: one slot on the
// software engine, three PIN tries, and extra keys of the slot.
func testConfig(t *testing.T, extra string) string {
	t.Helper()
	conf, _ := writeConfig(t, "label = \"Test Token\"\nengine = \"soft\"\nmax_pin_tries = 3\n"+extra)
	return conf
}

// load opens the module from the environment and closes it at cleanup.
func load(t *testing.T) *Module {
	t.Helper()
	m, err := LoadFromEnv()
	if err != nil {
		t.Fatalf("LoadFromEnv: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// newModule is a loaded module with one fresh slot.
func newModule(t *testing.T) (*Module, uint64) {
	t.Helper()
	return newModuleWith(t, "")
}

// newModuleWith is newModule with extra keys of the slot.
func newModuleWith(t *testing.T, extra string) (*Module, uint64) {
	t.Helper()
	testConfig(t, extra)
	m := load(t)
	slots := m.SlotList(true)
	if len(slots) != 1 {
		t.Fatalf("slots = %v", slots)
	}
	return m, slots[0]
}

// readyToken is a module whose token is initialised with both PINs set,
// and a R/W session logged in as the user.
func readyToken(t *testing.T) (*Module, uint64, uint64) {
	t.Helper()
	return readyTokenWith(t, "")
}

// standardPolicy is the slot key that restores the standard's permissive
// key-management policy (docs/THREATS.md): for the tests of a mechanism's
// arithmetic that wrap under a key of a known value and read the
// unwrapped value back, which the safe policy refuses.
const standardPolicy = "key_policy = \"standard\"\n"

// readyTokenWith is readyToken with extra keys of the slot.
func readyTokenWith(t *testing.T, extra string) (*Module, uint64, uint64) {
	t.Helper()
	m, slot := newModuleWith(t, extra)
	initToken(t, m, slot)
	sh := openRW(t, m, slot)
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	return m, slot, sh
}

func initToken(t *testing.T, m *Module, slot uint64) {
	t.Helper()
	must(t, m.InitToken(slot, []byte(testSOPIN), "Test Token"))
	sh := openRW(t, m, slot)
	must(t, m.Login(sh, ck.CKU_SO, []byte(testSOPIN)))
	must(t, m.InitPIN(sh, []byte(testUserPIN)))
	must(t, m.CloseSession(sh))
}

func openRW(t *testing.T, m *Module, slot uint64) uint64 {
	t.Helper()
	sh, err := m.OpenSession(slot, ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
	must(t, err)
	return sh
}

func openRO(t *testing.T, m *Module, slot uint64) uint64 {
	t.Helper()
	sh, err := m.OpenSession(slot, ck.CKF_SERIAL_SESSION)
	must(t, err)
	return sh
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantRV fails unless err carries code (CKR_OK: nil).
func wantRV(t *testing.T, err error, code ck.Error) {
	t.Helper()
	if got := ck.RV(err); got != uint64(code) {
		t.Fatalf("got %v (%v), want %v", ck.Error(got), err, code)
	}
	if code == ck.CKR_OK && err != nil {
		t.Fatal(err)
	}
}

func isRV(err error, code ck.Error) bool {
	return ck.RV(err) == uint64(code) || (code == 0 && err == nil)
}

// Attribute builders.
func aULong(t, v uint64) Attribute     { return Attribute{Type: t, Value: ck.ULong(v)} }
func aBool(t uint64, v bool) Attribute { return Attribute{Type: t, Value: ck.Bool(v)} }
func aBytes(t uint64, v []byte) Attribute {
	return Attribute{Type: t, Value: v}
}
func aStr(t uint64, v string) Attribute { return Attribute{Type: t, Value: []byte(v)} }

// find returns every handle matching tmpl.
func find(t *testing.T, m *Module, sh uint64, tmpl ...Attribute) []uint64 {
	t.Helper()
	must(t, m.FindObjectsInit(sh, tmpl))
	var all []uint64
	for {
		hs, err := m.FindObjects(sh, 3)
		must(t, err)
		if len(hs) == 0 {
			break
		}
		all = append(all, hs...)
	}
	must(t, m.FindObjectsFinal(sh))
	return all
}

// attrValue reads one attribute, failing on any per-attribute error.
func attrValue(t *testing.T, m *Module, sh, obj, typ uint64) []byte {
	t.Helper()
	res, err := m.GetAttributeValue(sh, obj, []uint64{typ})
	must(t, err)
	if res[0].Err != 0 {
		t.Fatalf("%s: %v", ck.Name("CKA_", typ), ck.Error(res[0].Err))
	}
	return res[0].Value
}

// readyEngineToken is readyToken on a slot with the given engine and
// fallback policy; it returns the module log's path too.
func readyEngineToken(t *testing.T, engine, fallback string) (m *Module, slot, sh uint64, logPath string) {
	t.Helper()
	logPath = engineConfig(t, engine, fallback)
	m = load(t)
	slot = m.SlotList(true)[0]
	initToken(t, m, slot)
	sh = openRW(t, m, slot)
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	return m, slot, sh, logPath
}
