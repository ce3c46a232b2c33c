package token

import (
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestPINScreening checks that empty and out-of-range PINs are answered
// before the store is asked (CKR_ARGUMENTS_BAD, CKR_PIN_LEN_RANGE) by every
// call that takes a PIN, and that none of them uses up a try: after more
// bad calls than max_pin_tries (3) allows, the token shows no failed
// attempt and the right PINs still log in.
func TestPINScreening(t *testing.T) {
	m, slot := newModule(t)
	initToken(t, m, slot)
	long := []byte(strings.Repeat("p", maxPINLen+1))
	pins := []struct {
		name string
		pin  []byte
		rv   ck.Error
	}{
		{"nil", nil, ck.CKR_ARGUMENTS_BAD},
		{"empty", []byte{}, ck.CKR_ARGUMENTS_BAD},
		{"one byte", []byte("1"), ck.CKR_PIN_LEN_RANGE},
		{"below min", []byte("123"), ck.CKR_PIN_LEN_RANGE},
		{"above max", long, ck.CKR_PIN_LEN_RANGE},
	}
	calls := []struct {
		name string
		call func(t *testing.T, pin []byte) error
	}{
		{"C_Login user", func(t *testing.T, pin []byte) error {
			sh := openRO(t, m, slot)
			defer m.CloseSession(sh)
			return m.Login(sh, ck.CKU_USER, pin)
		}},
		{"C_Login SO", func(t *testing.T, pin []byte) error {
			sh := openRW(t, m, slot)
			defer m.CloseSession(sh)
			return m.Login(sh, ck.CKU_SO, pin)
		}},
		{"C_SetPIN old", func(t *testing.T, pin []byte) error {
			sh := openRW(t, m, slot)
			defer m.CloseSession(sh)
			return m.SetPIN(sh, pin, []byte("new-user-pin"))
		}},
		{"C_SetPIN new", func(t *testing.T, pin []byte) error {
			sh := openRW(t, m, slot)
			defer m.CloseSession(sh)
			return m.SetPIN(sh, []byte(testUserPIN), pin)
		}},
		{"C_InitPIN", func(t *testing.T, pin []byte) error {
			sh := openRW(t, m, slot)
			defer m.CloseSession(sh)
			must(t, m.Login(sh, ck.CKU_SO, []byte(testSOPIN)))
			defer m.Logout(sh)
			return m.InitPIN(sh, pin)
		}},
		{"C_InitToken", func(t *testing.T, pin []byte) error {
			return m.InitToken(slot, pin, "Test Token")
		}},
		{"C_Login context-specific", func(t *testing.T, pin []byte) error {
			sh := openRW(t, m, slot)
			defer m.CloseSession(sh)
			must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
			defer m.Logout(sh)
			_, aa := genKey(t, m, sh, 1024, false, aBool(ck.CKA_ALWAYS_AUTHENTICATE, true))
			must(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, aa))
			return m.Login(sh, ck.CKU_CONTEXT_SPECIFIC, pin)
		}},
	}
	for _, c := range calls {
		for _, p := range pins {
			t.Run(c.name+"/"+p.name, func(t *testing.T) {
				// Four rounds: one more than max_pin_tries.
				for range 4 {
					wantRV(t, c.call(t, p.pin), p.rv)
				}
				const failed = ck.CKF_USER_PIN_COUNT_LOW | ck.CKF_USER_PIN_FINAL_TRY | ck.CKF_USER_PIN_LOCKED |
					ck.CKF_SO_PIN_COUNT_LOW | ck.CKF_SO_PIN_FINAL_TRY | ck.CKF_SO_PIN_LOCKED
				if f := tokenFlags(t, m, slot); f&failed != 0 {
					t.Fatalf("token flags %#x after %s: a try was counted", f, p.name)
				}
			})
		}
	}
	// Neither PIN changed and both still log in.
	sh := openRW(t, m, slot)
	must(t, m.Login(sh, ck.CKU_SO, []byte(testSOPIN)))
	must(t, m.Logout(sh))
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
}
