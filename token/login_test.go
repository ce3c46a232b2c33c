package token

import (
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

func TestTokenInfoLifecycle(t *testing.T) {
	m, slot := newModule(t)
	ti, err := m.TokenInfo(slot)
	must(t, err)
	if ti.Flags&ck.CKF_TOKEN_INITIALIZED != 0 || ti.Flags&ck.CKF_RNG == 0 {
		t.Fatalf("fresh token flags %#x", ti.Flags)
	}
	if ti.ManufacturerID != "ModExp Token" || ti.MinPinLen != 4 || ti.MaxPinLen != 255 || ti.Model == "" {
		t.Fatalf("token info %+v", ti)
	}
	// Login on an uninitialised token.
	sh := openRW(t, m, slot)
	wantRV(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)), ck.CKR_USER_PIN_NOT_INITIALIZED)
	// C_InitToken with a session open.
	wantRV(t, m.InitToken(slot, []byte(testSOPIN), "x"), ck.CKR_SESSION_EXISTS)
	must(t, m.CloseSession(sh))
	wantRV(t, m.InitToken(slot, []byte("abc"), "x"), ck.CKR_PIN_LEN_RANGE)
	must(t, m.InitToken(slot, []byte(testSOPIN), "Label One"))
	ti, err = m.TokenInfo(slot)
	must(t, err)
	if ti.Flags&ck.CKF_TOKEN_INITIALIZED == 0 || ti.Flags&ck.CKF_USER_PIN_INITIALIZED != 0 || ti.Label != "Label One" || len(ti.SerialNumber) != 16 {
		t.Fatalf("after init: %+v", ti)
	}
	sh = openRW(t, m, slot)
	wantRV(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)), ck.CKR_USER_PIN_NOT_INITIALIZED)
	must(t, m.Login(sh, ck.CKU_SO, []byte(testSOPIN)))
	wantRV(t, m.InitPIN(sh, []byte("12")), ck.CKR_PIN_LEN_RANGE)
	must(t, m.InitPIN(sh, []byte(testUserPIN)))
	ti, _ = m.TokenInfo(slot)
	if ti.Flags&ck.CKF_USER_PIN_INITIALIZED == 0 || ti.SessionCount != 1 || ti.RwSessionCount != 1 {
		t.Fatalf("after InitPIN: %+v", ti)
	}
	must(t, m.Logout(sh))
	// Wrong user PINs count down and lock (max_pin_tries = 3).
	wantRV(t, m.Login(sh, ck.CKU_USER, []byte("wrong-pin")), ck.CKR_PIN_INCORRECT)
	ti, _ = m.TokenInfo(slot)
	if ti.Flags&ck.CKF_USER_PIN_COUNT_LOW == 0 {
		t.Fatalf("no COUNT_LOW after a wrong PIN: %#x", ti.Flags)
	}
	wantRV(t, m.Login(sh, ck.CKU_USER, []byte("wrong-pin")), ck.CKR_PIN_INCORRECT)
	ti, _ = m.TokenInfo(slot)
	if ti.Flags&ck.CKF_USER_PIN_FINAL_TRY == 0 {
		t.Fatalf("no FINAL_TRY: %#x", ti.Flags)
	}
	wantRV(t, m.Login(sh, ck.CKU_USER, []byte("wrong-pin")), ck.CKR_PIN_INCORRECT)
	wantRV(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)), ck.CKR_PIN_LOCKED)
	ti, _ = m.TokenInfo(slot)
	if ti.Flags&ck.CKF_USER_PIN_LOCKED == 0 {
		t.Fatalf("no LOCKED: %#x", ti.Flags)
	}
	// The SO unlocks by setting a new user PIN.
	must(t, m.Login(sh, ck.CKU_SO, []byte(testSOPIN)))
	must(t, m.InitPIN(sh, []byte("new-user-pin")))
	must(t, m.Logout(sh))
	must(t, m.Login(sh, ck.CKU_USER, []byte("new-user-pin")))
}

func TestSessionStates(t *testing.T) {
	m, slot := newModule(t)
	initToken(t, m, slot)
	_, err := m.OpenSession(slot, ck.CKF_RW_SESSION)
	wantRV(t, err, ck.CKR_SESSION_PARALLEL_NOT_SUPPORTED)
	_, err = m.OpenSession(12345, ck.CKF_SERIAL_SESSION)
	wantRV(t, err, ck.CKR_SLOT_ID_INVALID)

	ro := openRO(t, m, slot)
	rw := openRW(t, m, slot)
	if ro == 0 || rw == 0 || ro == rw {
		t.Fatalf("handles %d %d", ro, rw)
	}
	state := func(sh uint64) uint64 {
		t.Helper()
		si, err := m.SessionInfo(sh)
		must(t, err)
		return si.State
	}
	if state(ro) != ck.CKS_RO_PUBLIC_SESSION || state(rw) != ck.CKS_RW_PUBLIC_SESSION {
		t.Fatal("public states")
	}
	// SO login with a R/O session open.
	wantRV(t, m.Login(rw, ck.CKU_SO, []byte(testSOPIN)), ck.CKR_SESSION_READ_ONLY_EXISTS)
	wantRV(t, m.Login(rw, 7, []byte(testSOPIN)), ck.CKR_USER_TYPE_INVALID)
	wantRV(t, m.Logout(rw), ck.CKR_USER_NOT_LOGGED_IN)
	// User login is per token: every session sees it.
	must(t, m.Login(ro, ck.CKU_USER, []byte(testUserPIN)))
	if state(ro) != ck.CKS_RO_USER_FUNCTIONS || state(rw) != ck.CKS_RW_USER_FUNCTIONS {
		t.Fatal("user states")
	}
	wantRV(t, m.Login(rw, ck.CKU_USER, []byte(testUserPIN)), ck.CKR_USER_ALREADY_LOGGED_IN)
	wantRV(t, m.Login(rw, ck.CKU_SO, []byte(testSOPIN)), ck.CKR_USER_ANOTHER_ALREADY_LOGGED_IN)
	// C_SetPIN in a R/O session.
	wantRV(t, m.SetPIN(ro, []byte(testUserPIN), []byte("other-pin")), ck.CKR_SESSION_READ_ONLY)
	wantRV(t, m.SetPIN(rw, []byte(testUserPIN), []byte("abc")), ck.CKR_PIN_LEN_RANGE)
	wantRV(t, m.SetPIN(rw, []byte("not-the-pin"), []byte("other-pin")), ck.CKR_PIN_INCORRECT)
	must(t, m.SetPIN(rw, []byte(testUserPIN), []byte("other-pin")))
	// C_InitPIN needs the SO.
	wantRV(t, m.InitPIN(rw, []byte("abcd")), ck.CKR_USER_NOT_LOGGED_IN)
	must(t, m.Logout(ro))
	if state(rw) != ck.CKS_RW_PUBLIC_SESSION {
		t.Fatal("logout is per token")
	}
	must(t, m.CloseSession(ro))
	wantRV(t, m.CloseSession(ro), ck.CKR_SESSION_HANDLE_INVALID)
	// SO session, then no R/O sessions may be opened.
	must(t, m.Login(rw, ck.CKU_SO, []byte(testSOPIN)))
	if state(rw) != ck.CKS_RW_SO_FUNCTIONS {
		t.Fatal("SO state")
	}
	_, err = m.OpenSession(slot, ck.CKF_SERIAL_SESSION)
	wantRV(t, err, ck.CKR_SESSION_READ_WRITE_SO_EXISTS)
	// The SO changes its own PIN in its session.
	must(t, m.SetPIN(rw, []byte(testSOPIN), []byte("so-other")))
	// Closing the last session logs out.
	must(t, m.CloseSession(rw))
	rw = openRW(t, m, slot)
	if state(rw) != ck.CKS_RW_PUBLIC_SESSION {
		t.Fatal("closing the last session did not log out")
	}
	must(t, m.Login(rw, ck.CKU_USER, []byte("other-pin")))
	must(t, m.CloseAllSessions(slot))
	wantRV(t, m.Logout(rw), ck.CKR_SESSION_HANDLE_INVALID)
	ti, _ := m.TokenInfo(slot)
	if ti.SessionCount != 0 {
		t.Fatalf("sessions left: %d", ti.SessionCount)
	}
}

func TestReloadAfterClose(t *testing.T) {
	testConfig(t, "")
	m, err := LoadFromEnv()
	must(t, err)
	slot := m.SlotList(true)[0]
	initToken(t, m, slot)
	sh := openRW(t, m, slot)
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	must(t, m.Close())
	must(t, m.Close()) // idempotent
	m2 := load(t)
	if got := m2.SlotList(true); len(got) != 1 || got[0] != slot {
		t.Fatalf("slot id changed: %v vs %d", got, slot)
	}
	sh = openRW(t, m2, slot)
	si, _ := m2.SessionInfo(sh)
	if si.State != ck.CKS_RW_PUBLIC_SESSION {
		t.Fatal("login survived Close")
	}
	must(t, m2.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
}

func TestUnknownEngineFailsLoad(t *testing.T) {
	testConfig(t, "")
	t.Setenv("MODEXP_TOKEN_ENGINE", "warp-drive")
	if _, err := LoadFromEnv(); err == nil {
		t.Fatal("unknown engine accepted")
	}
}
