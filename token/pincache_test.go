package token

import (
	"os"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/keystore"
	"github.com/modexp-token/modexp-token/token/ck"
)

// TestLoginRemembered: by pin_cache mode, whether a repeated C_Login with
// the right PIN in one module, and the first one of another module of the
// same token (a new process), pay Argon2id ("pin_check" in the log); a
// wrong PIN is counted whatever the mode. The keyring entries are revoked
// at the end by re-initialising the token.
func TestLoginRemembered(t *testing.T) {
	cases := []struct {
		mode                string
		again, otherProcess string
		needKeyring         bool
	}{
		{"keyring", "remembered", "remembered", true},
		{"process", "remembered", "argon2id", false},
		{"off", "argon2id", "argon2id", false},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			if c.needKeyring && !keystore.KeyringAvailable() {
				t.Skip("no kernel keyring here (keyctl missing or refused)")
			}
			_, logPath := writeConfig(t, "engine = \"soft\"\nmax_pin_tries = 3\npin_cache = \""+c.mode+"\"\npin_cache_lifetime = \"1m\"\n")
			m := load(t)
			slot := m.SlotList(true)[0]
			initToken(t, m, slot)
			t.Cleanup(func() {
				// Re-initialising revokes the keyring entries of both PINs.
				m.CloseAllSessions(slot)
				must(t, m.InitToken(slot, []byte(testSOPIN), "done"))
			})
			checks := func() []string {
				b, err := os.ReadFile(logPath)
				must(t, err)
				var out []string
				for _, l := range strings.Split(string(b), "\n") {
					if strings.Contains(l, `msg="logged in"`) && strings.Contains(l, "so=false") {
						_, v, _ := strings.Cut(l, "pin_check=")
						out = append(out, v)
					}
				}
				return out
			}
			sh := openRW(t, m, slot)
			must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
			must(t, m.Logout(sh))
			must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
			must(t, m.Logout(sh))
			wantRV(t, m.Login(sh, ck.CKU_USER, []byte("wrong-pin")), ck.CKR_PIN_INCORRECT)
			if f := tokenFlags(t, m, slot); f&ck.CKF_USER_PIN_COUNT_LOW == 0 {
				t.Fatalf("flags %#x: the wrong PIN was not counted", f)
			}

			other := load(t) // a second module: what a new process sees
			osh := openRW(t, other, slot)
			must(t, other.Login(osh, ck.CKU_USER, []byte(testUserPIN)))
			must(t, other.CloseSession(osh))
			if f := tokenFlags(t, m, slot); f&ck.CKF_USER_PIN_COUNT_LOW != 0 {
				t.Fatalf("flags %#x: the right PIN did not reset the count", f)
			}
			want := []string{"argon2id", c.again, c.otherProcess}
			if got := checks(); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("pin checks %q, want %q", got, want)
			}
		})
	}
}
