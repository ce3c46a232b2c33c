package token

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/modexp-token/modexp-token/keystore"
	"github.com/modexp-token/modexp-token/token/ck"
)

// BenchmarkLogin: C_Login + C_Logout with the right user PIN at the
// Argon2id floor (t=2, 19 MiB, `init --pin-cost floor`), by pin_cache
// mode: "argon2id" pays the KDF every time (pin_cache = "off"),
// "process" is a repeated login in one module, "keyring new module" is
// the first login of a freshly loaded module (a new process) of a token
// whose PIN another module checked (the login timed, not the load).
//
//	go test -run - -bench Login -benchtime 20x ./token
func BenchmarkLogin(b *testing.B) {
	cases := []struct {
		name, mode string
		fresh      bool
	}{
		{"argon2id", "off", false},
		{"process", "process", false},
		{"keyring new module", "keyring", true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if c.mode == "keyring" && !keystore.KeyringAvailable() {
				b.Skip("no kernel keyring here")
			}
			dir := b.TempDir()
			conf := filepath.Join(dir, "modexp.toml")
			body := fmt.Sprintf("[[slot]]\ntoken_file = \"token.db\"\nengine = \"soft\"\nkdf_time = 2\nkdf_memory_kib = %d\nkdf_threads = 1\npin_cache = %q\n", 19*1024, c.mode)
			if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
				b.Fatal(err)
			}
			b.Setenv("MODEXP_TOKEN_CONF", conf)
			b.Setenv("MODEXP_TOKEN_LOG", "")
			m, err := LoadFromEnv()
			if err != nil {
				b.Fatal(err)
			}
			slot := m.SlotList(true)[0]
			if err := m.InitToken(slot, []byte(testSOPIN), "bench"); err != nil {
				b.Fatal(err)
			}
			sh, _ := m.OpenSession(slot, ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
			if err := m.Login(sh, ck.CKU_SO, []byte(testSOPIN)); err != nil {
				b.Fatal(err)
			}
			if err := m.InitPIN(sh, []byte(testUserPIN)); err != nil {
				b.Fatal(err)
			}
			_ = m.Logout(sh)
			if err := m.Login(sh, ck.CKU_USER, []byte(testUserPIN)); err != nil { // remembered from here
				b.Fatal(err)
			}
			_ = m.Logout(sh)
			b.Cleanup(func() {
				m.CloseAllSessions(slot)
				_ = m.InitToken(slot, []byte(testSOPIN), "done") // revokes the keyring entries
				m.Close()
			})
			b.ResetTimer()
			for range b.N {
				mm, h := m, sh
				if c.fresh {
					b.StopTimer() // the login alone: loading is timed elsewhere
					if mm, err = LoadFromEnv(); err != nil {
						b.Fatal(err)
					}
					h, _ = mm.OpenSession(slot, ck.CKF_SERIAL_SESSION)
					b.StartTimer()
				}
				if err := mm.Login(h, ck.CKU_USER, []byte(testUserPIN)); err != nil {
					b.Fatal(err)
				}
				_ = mm.Logout(h)
				if c.fresh {
					b.StopTimer()
					mm.Close()
					b.StartTimer()
				}
			}
		})
	}
}
