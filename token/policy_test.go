package token

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestConfigCannotLoosenLockout is issue 17's fifth attack: a process
// whose configuration said max_pin_tries = 100 got 100 guesses on a token
// initialised with 3. The limit is the token's now.
func TestConfigCannotLoosenLockout(t *testing.T) {
	conf := testConfig(t, "") // max_pin_tries = 3
	m := load(t)
	slot := m.SlotList(true)[0]
	initToken(t, m, slot)
	m.Close()

	loose := filepath.Join(filepath.Dir(conf), "loose.toml")
	body := fmt.Sprintf("[[slot]]\ntoken_file = %q\nengine = \"soft\"\nmax_pin_tries = 100\n"+
		"kdf_time = 1\nkdf_memory_kib = 64\nkdf_threads = 1\nkdf_insecure = true\n", filepath.Join(filepath.Dir(conf), "token.db"))
	must(t, os.WriteFile(loose, []byte(body), 0o600))
	t.Setenv("MODEXP_TOKEN_CONF", loose)
	m = load(t)
	slot = m.SlotList(true)[0]
	sh := openRW(t, m, slot)
	for i := range 3 {
		if err := m.Login(sh, ck.CKU_USER, []byte("wrong-pin")); !isRV(err, ck.CKR_PIN_INCORRECT) {
			t.Fatalf("wrong PIN %d: %v", i+1, err)
		}
	}
	wantRV(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)), ck.CKR_PIN_LOCKED)
	ti, err := m.TokenInfo(slot)
	must(t, err)
	if ti.Flags&ck.CKF_USER_PIN_LOCKED == 0 {
		t.Fatalf("token info flags %#x: not locked", ti.Flags)
	}
}
