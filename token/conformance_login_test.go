package token

// Conformance of the token and login state machine (PKCS#11 3.0 §5.5–5.7)
// against the standard and SoftHSMv2/kryoptic: C_GetTokenInfo, C_InitToken,
// C_InitPIN, C_SetPIN, C_Login/C_Logout and the session states.

import (
	"bytes"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// tokenFlags reads the token's flags.
func tokenFlags(t *testing.T, m *Module, slot uint64) uint64 {
	t.Helper()
	ti, err := m.TokenInfo(slot)
	must(t, err)
	return ti.Flags
}

func TestConformanceTokenInfoFields(t *testing.T) {
	m, slot := newModule(t)
	cases := []struct {
		name  string
		setup func(t *testing.T)
		check func(t *testing.T, ti TokenInfo)
	}{
		{"uninitialised", func(*testing.T) {}, func(t *testing.T, ti TokenInfo) {
			want := uint64(ck.CKF_RNG | ck.CKF_LOGIN_REQUIRED | ck.CKF_RESTORE_KEY_NOT_NEEDED)
			if ti.Flags != want {
				t.Errorf("flags %#x, want %#x", ti.Flags, want)
			}
		}},
		{"initialised, no user PIN", func(t *testing.T) {
			must(t, m.InitToken(slot, []byte(testSOPIN), "Conf"))
		}, func(t *testing.T, ti TokenInfo) {
			want := uint64(ck.CKF_RNG | ck.CKF_LOGIN_REQUIRED | ck.CKF_RESTORE_KEY_NOT_NEEDED | ck.CKF_TOKEN_INITIALIZED)
			if ti.Flags != want {
				t.Errorf("flags %#x, want %#x", ti.Flags, want)
			}
			if ti.Label != "Conf" {
				t.Errorf("label %q", ti.Label)
			}
		}},
		{"user PIN set", func(t *testing.T) {
			sh := openRW(t, m, slot)
			must(t, m.Login(sh, ck.CKU_SO, []byte(testSOPIN)))
			must(t, m.InitPIN(sh, []byte(testUserPIN)))
			must(t, m.CloseSession(sh))
		}, func(t *testing.T, ti TokenInfo) {
			want := uint64(ck.CKF_RNG | ck.CKF_LOGIN_REQUIRED | ck.CKF_RESTORE_KEY_NOT_NEEDED | ck.CKF_TOKEN_INITIALIZED | ck.CKF_USER_PIN_INITIALIZED)
			if ti.Flags != want {
				t.Errorf("flags %#x, want %#x", ti.Flags, want)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.setup(t)
			ti, err := m.TokenInfo(slot)
			must(t, err)
			c.check(t, ti)
			// Fields that hold in every state.
			if ti.Flags&ck.CKF_CLOCK_ON_TOKEN != 0 || ti.UTCTime != "" {
				t.Errorf("no clock: flags %#x, utcTime %q", ti.Flags, ti.UTCTime)
			}
			if ti.MaxSessionCount != ck.CK_EFFECTIVELY_INFINITE || ti.MaxRwSessionCount != ck.CK_EFFECTIVELY_INFINITE {
				t.Errorf("max sessions %d/%d", ti.MaxSessionCount, ti.MaxRwSessionCount)
			}
			for _, v := range []uint64{ti.TotalPublicMemory, ti.FreePublicMemory, ti.TotalPrivateMemory, ti.FreePrivateMemory} {
				if v != ck.CK_UNAVAILABLE_INFORMATION {
					t.Errorf("memory field %d, want CK_UNAVAILABLE_INFORMATION", v)
				}
			}
			if ti.MinPinLen != minPINLen || ti.MaxPinLen != maxPINLen {
				t.Errorf("PIN lengths %d..%d", ti.MinPinLen, ti.MaxPinLen)
			}
			if ti.ManufacturerID != manufacturer || ti.Model == "" || len(ti.Model) > 16 ||
				len(ti.SerialNumber) == 0 || len(ti.SerialNumber) > 16 || len(ti.Label) > 32 {
				t.Errorf("identity %+v", ti)
			}
		})
	}
}

func TestConformanceSessionCounts(t *testing.T) {
	m, slot := newModule(t)
	initToken(t, m, slot)
	var open []uint64
	steps := []struct {
		rw         bool
		close      int // index into open to close instead of opening; -1: open
		total, rws uint64
	}{
		{false, -1, 1, 0},
		{true, -1, 2, 1},
		{true, -1, 3, 2},
		{false, -1, 4, 2},
		{false, 1, 3, 1},
		{false, 0, 2, 1},
	}
	for i, st := range steps {
		if st.close >= 0 {
			must(t, m.CloseSession(open[st.close]))
		} else if st.rw {
			open = append(open, openRW(t, m, slot))
		} else {
			open = append(open, openRO(t, m, slot))
		}
		ti, err := m.TokenInfo(slot)
		must(t, err)
		if ti.SessionCount != st.total || ti.RwSessionCount != st.rws {
			t.Fatalf("step %d: sessions %d/%d, want %d/%d", i, ti.SessionCount, ti.RwSessionCount, st.total, st.rws)
		}
	}
	must(t, m.CloseAllSessions(slot))
	ti, _ := m.TokenInfo(slot)
	if ti.SessionCount != 0 || ti.RwSessionCount != 0 {
		t.Fatalf("after C_CloseAllSessions %d/%d", ti.SessionCount, ti.RwSessionCount)
	}
}

// TestConformancePINCounters: wrong PINs set COUNT_LOW, FINAL_TRY and LOCKED
// for the user and for the SO (max_pin_tries = 3 in the test config); a
// right PIN clears them.
func TestConformancePINCounters(t *testing.T) {
	for _, who := range []struct {
		name                 string
		user                 uint64
		pin                  string
		low, final, locked   uint64
		otherLow, otherFinal uint64
	}{
		{"user", ck.CKU_USER, testUserPIN, ck.CKF_USER_PIN_COUNT_LOW, ck.CKF_USER_PIN_FINAL_TRY, ck.CKF_USER_PIN_LOCKED, ck.CKF_SO_PIN_COUNT_LOW, ck.CKF_SO_PIN_FINAL_TRY},
		{"SO", ck.CKU_SO, testSOPIN, ck.CKF_SO_PIN_COUNT_LOW, ck.CKF_SO_PIN_FINAL_TRY, ck.CKF_SO_PIN_LOCKED, ck.CKF_USER_PIN_COUNT_LOW, ck.CKF_USER_PIN_FINAL_TRY},
	} {
		t.Run(who.name, func(t *testing.T) {
			m, slot := newModule(t)
			initToken(t, m, slot)
			sh := openRW(t, m, slot)
			mask := who.low | who.final | who.locked
			// Good login then logout: no flag.
			must(t, m.Login(sh, who.user, []byte(who.pin)))
			must(t, m.Logout(sh))
			steps := []struct {
				pin  string
				rv   ck.Error
				want uint64
			}{
				{"wrong-1", ck.CKR_PIN_INCORRECT, who.low},
				{who.pin, ck.CKR_OK, 0}, // a right PIN resets the count
				{"wrong-1", ck.CKR_PIN_INCORRECT, who.low},
				{"wrong-2", ck.CKR_PIN_INCORRECT, who.low | who.final},
				{"wrong-3", ck.CKR_PIN_INCORRECT, who.locked},
				{who.pin, ck.CKR_PIN_LOCKED, who.locked},
			}
			for i, st := range steps {
				err := m.Login(sh, who.user, []byte(st.pin))
				if !isRV(err, st.rv) {
					t.Fatalf("step %d: login %v, want %v", i, err, st.rv)
				}
				if err == nil {
					must(t, m.Logout(sh))
				}
				f := tokenFlags(t, m, slot)
				if f&mask != st.want {
					t.Fatalf("step %d: PIN flags %#x, want %#x", i, f&mask, st.want)
				}
				if f&(who.otherLow|who.otherFinal) != 0 {
					t.Fatalf("step %d: the other PIN's flags moved: %#x", i, f)
				}
			}
			if who.user == ck.CKU_SO {
				// A locked SO PIN also refuses C_InitToken.
				must(t, m.CloseSession(sh))
				wantRV(t, m.InitToken(slot, []byte(testSOPIN), "x"), ck.CKR_PIN_LOCKED)
			}
		})
	}
}

func TestConformanceInitToken(t *testing.T) {
	m, slot := newModule(t)
	// A session on an uninitialised token is allowed (C_InitToken is done
	// without one); logins fail as nobody has a PIN yet.
	sh := openRW(t, m, slot)
	wantRV(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)), ck.CKR_USER_PIN_NOT_INITIALIZED)
	wantRV(t, m.Login(sh, ck.CKU_SO, []byte(testSOPIN)), ck.CKR_USER_PIN_NOT_INITIALIZED)
	_, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DATA), aBool(ck.CKA_TOKEN, true)})
	if err == nil {
		t.Fatal("token object created on an uninitialised token")
	}
	must(t, m.CloseSession(sh))

	padded := "Padded" + strings.Repeat(" ", 26)
	full := strings.Repeat("L", 32)
	cases := []struct {
		name   string
		pin    string
		label  string
		rv     ck.Error
		label2 string // label in C_GetTokenInfo afterwards ("" if unchanged)
	}{
		{"PIN too short", "abc", "x", ck.CKR_PIN_LEN_RANGE, ""},
		{"PIN too long", strings.Repeat("p", maxPINLen+1), "x", ck.CKR_PIN_LEN_RANGE, ""},
		{"first init, blank-padded label", testSOPIN, padded, ck.CKR_OK, "Padded"},
		{"re-init, wrong SO PIN", "not-the-so-pin", "y", ck.CKR_PIN_INCORRECT, "Padded"},
		{"re-init, 32-char label", testSOPIN, full, ck.CKR_OK, full},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantRV(t, m.InitToken(slot, []byte(c.pin), c.label), c.rv)
			if c.label2 != "" {
				ti, err := m.TokenInfo(slot)
				must(t, err)
				if ti.Label != c.label2 {
					t.Fatalf("label %q, want %q", ti.Label, c.label2)
				}
			}
		})
	}

	// Re-initialisation wipes every object and the user PIN.
	sh = openRW(t, m, slot)
	must(t, m.Login(sh, ck.CKU_SO, []byte(testSOPIN)))
	must(t, m.InitPIN(sh, []byte(testUserPIN)))
	must(t, m.Logout(sh))
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	_, err = m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DATA), aBool(ck.CKA_TOKEN, true), aBool(ck.CKA_PRIVATE, false), aStr(ck.CKA_LABEL, "public")})
	must(t, err)
	_, err = m.CreateObject(sh, rsaKeyTemplate(testRSAKey, false))
	must(t, err)
	if n := len(find(t, m, sh)); n != 2 {
		t.Fatalf("%d objects before re-init", n)
	}
	wantRV(t, m.InitToken(slot, []byte(testSOPIN), "again"), ck.CKR_SESSION_EXISTS)
	ro := openRO(t, m, slot)
	must(t, m.CloseSession(sh))
	wantRV(t, m.InitToken(slot, []byte(testSOPIN), "again"), ck.CKR_SESSION_EXISTS) // R/O sessions count too
	must(t, m.CloseSession(ro))
	must(t, m.InitToken(slot, []byte(testSOPIN), "again"))
	if f := tokenFlags(t, m, slot); f&ck.CKF_USER_PIN_INITIALIZED != 0 {
		t.Fatalf("user PIN survived re-init: %#x", f)
	}
	sh = openRW(t, m, slot)
	if n := len(find(t, m, sh)); n != 0 {
		t.Fatalf("%d objects after re-init", n)
	}
	wantRV(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)), ck.CKR_USER_PIN_NOT_INITIALIZED)
}

// noLogin marks "nobody logged in" (CKU_SO is 0).
const noLogin = ^uint64(0)

// TestConformanceSessionStates walks the five CKS_ states and, in each,
// the calls whose answer depends on the state.
func TestConformanceSessionStates(t *testing.T) {
	cases := []struct {
		name  string
		rw    bool
		login uint64 // noLogin: public
		state uint64
		// expected answers in that state
		initPIN, setPIN, loginSO, loginUser, logout ck.Error
	}{
		{"RO public", false, noLogin, ck.CKS_RO_PUBLIC_SESSION,
			ck.CKR_USER_NOT_LOGGED_IN, ck.CKR_SESSION_READ_ONLY, ck.CKR_SESSION_READ_ONLY_EXISTS, ck.CKR_OK, ck.CKR_USER_NOT_LOGGED_IN},
		{"RW public", true, noLogin, ck.CKS_RW_PUBLIC_SESSION,
			ck.CKR_USER_NOT_LOGGED_IN, ck.CKR_OK, ck.CKR_OK, ck.CKR_OK, ck.CKR_USER_NOT_LOGGED_IN},
		{"RO user", false, ck.CKU_USER, ck.CKS_RO_USER_FUNCTIONS,
			ck.CKR_USER_NOT_LOGGED_IN, ck.CKR_SESSION_READ_ONLY, ck.CKR_USER_ANOTHER_ALREADY_LOGGED_IN, ck.CKR_USER_ALREADY_LOGGED_IN, ck.CKR_OK},
		{"RW user", true, ck.CKU_USER, ck.CKS_RW_USER_FUNCTIONS,
			ck.CKR_USER_NOT_LOGGED_IN, ck.CKR_OK, ck.CKR_USER_ANOTHER_ALREADY_LOGGED_IN, ck.CKR_USER_ALREADY_LOGGED_IN, ck.CKR_OK},
		{"RW SO", true, ck.CKU_SO, ck.CKS_RW_SO_FUNCTIONS,
			ck.CKR_OK, ck.CKR_OK, ck.CKR_USER_ALREADY_LOGGED_IN, ck.CKR_USER_ANOTHER_ALREADY_LOGGED_IN, ck.CKR_OK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, slot := newModule(t)
			initToken(t, m, slot)
			var sh uint64
			if c.rw {
				sh = openRW(t, m, slot)
			} else {
				sh = openRO(t, m, slot)
			}
			pin := map[uint64]string{ck.CKU_USER: testUserPIN, ck.CKU_SO: testSOPIN}
			if c.login != noLogin {
				must(t, m.Login(sh, c.login, []byte(pin[c.login])))
			}
			si, err := m.SessionInfo(sh)
			must(t, err)
			wantFlags := uint64(ck.CKF_SERIAL_SESSION)
			if c.rw {
				wantFlags |= ck.CKF_RW_SESSION
			}
			if si.State != c.state || si.Flags != wantFlags || si.SlotID != slot || si.DeviceError != 0 {
				t.Fatalf("session info %+v, want state %d flags %#x", si, c.state, wantFlags)
			}
			err = m.InitPIN(sh, []byte("fresh-user-pin"))
			wantRV(t, err, c.initPIN)
			if err == nil {
				pin[ck.CKU_USER] = "fresh-user-pin"
			}
			// C_SetPIN changes the PIN of the state's user: the user's in
			// public and user sessions, the SO's in SO sessions.
			who := uint64(ck.CKU_USER)
			if c.login == ck.CKU_SO {
				who = ck.CKU_SO
			}
			err = m.SetPIN(sh, []byte(pin[who]), []byte("changed-pin"))
			wantRV(t, err, c.setPIN)
			if err == nil {
				if c.login != noLogin {
					must(t, m.Logout(sh))
				}
				wantRV(t, m.Login(sh, who, []byte(pin[who])), ck.CKR_PIN_INCORRECT)
				must(t, m.Login(sh, who, []byte("changed-pin")))
				if c.login == noLogin {
					must(t, m.Logout(sh))
				}
				pin[who] = "changed-pin"
			}
			err = m.Login(sh, ck.CKU_SO, []byte(pin[ck.CKU_SO]))
			wantRV(t, err, c.loginSO)
			if err == nil {
				must(t, m.Logout(sh))
			}
			err = m.Login(sh, ck.CKU_USER, []byte(pin[ck.CKU_USER]))
			if !isRV(err, c.loginUser) {
				t.Fatalf("user login: %v, want %v", err, c.loginUser)
			}
			if err == nil {
				must(t, m.Logout(sh))
			}
			wantRV(t, m.Logout(sh), c.logout)
			si, _ = m.SessionInfo(sh)
			if public := map[bool]uint64{false: ck.CKS_RO_PUBLIC_SESSION, true: ck.CKS_RW_PUBLIC_SESSION}[c.rw]; si.State != public {
				t.Fatalf("after logout state %d, want %d", si.State, public)
			}
			// Unknown user types.
			for _, ut := range []uint64{3, 7, 0xFFFFFFFF} {
				wantRV(t, m.Login(sh, ut, []byte(testUserPIN)), ck.CKR_USER_TYPE_INVALID)
			}
		})
	}
}

// TestConformanceLoginClosesAndLogout: login is per token; C_CloseSession of
// the last session and C_CloseAllSessions log out; the SO cannot coexist
// with R/O sessions.
func TestConformanceLoginClosesAndLogout(t *testing.T) {
	m, slot := newModule(t)
	initToken(t, m, slot)
	a, b := openRW(t, m, slot), openRO(t, m, slot)
	must(t, m.Login(a, ck.CKU_USER, []byte(testUserPIN)))
	must(t, m.CloseAllSessions(slot))
	c := openRW(t, m, slot)
	if si, _ := m.SessionInfo(c); si.State != ck.CKS_RW_PUBLIC_SESSION {
		t.Fatalf("C_CloseAllSessions kept the login: state %d", si.State)
	}
	wantRV(t, m.Logout(c), ck.CKR_USER_NOT_LOGGED_IN)
	for _, h := range []uint64{a, b} {
		_, err := m.SessionInfo(h)
		wantRV(t, err, ck.CKR_SESSION_HANDLE_INVALID)
	}
	// SO logged in: R/O sessions refused; R/W allowed.
	must(t, m.Login(c, ck.CKU_SO, []byte(testSOPIN)))
	_, err := m.OpenSession(slot, ck.CKF_SERIAL_SESSION)
	wantRV(t, err, ck.CKR_SESSION_READ_WRITE_SO_EXISTS)
	d := openRW(t, m, slot)
	if si, _ := m.SessionInfo(d); si.State != ck.CKS_RW_SO_FUNCTIONS {
		t.Fatalf("new R/W session while SO logged in: state %d", si.State)
	}
	must(t, m.CloseSession(c))
	if si, _ := m.SessionInfo(d); si.State != ck.CKS_RW_SO_FUNCTIONS {
		t.Fatal("closing one session logged out")
	}
	must(t, m.CloseSession(d))
	e := openRO(t, m, slot)
	if si, _ := m.SessionInfo(e); si.State != ck.CKS_RO_PUBLIC_SESSION {
		t.Fatal("closing the last session did not log the SO out")
	}
}

// TestConformanceContextSpecific: CKU_CONTEXT_SPECIFIC only after an Init
// with a CKA_ALWAYS_AUTHENTICATE key, once per operation.
func TestConformanceContextSpecific(t *testing.T) {
	m, _, sh := readyToken(t)
	plain, err := m.CreateObject(sh, rsaKeyTemplate(testRSAKey, true))
	must(t, err)
	always, err := m.CreateObject(sh, rsaKeyTemplate(testRSAKey, true, aBool(ck.CKA_ALWAYS_AUTHENTICATE, true)))
	must(t, err)
	mc := &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}
	data := []byte("context specific")

	wantRV(t, m.Login(sh, ck.CKU_CONTEXT_SPECIFIC, []byte(testUserPIN)), ck.CKR_OPERATION_NOT_INITIALIZED)
	must(t, m.SignInit(sh, mc, plain))
	wantRV(t, m.Login(sh, ck.CKU_CONTEXT_SPECIFIC, []byte(testUserPIN)), ck.CKR_OPERATION_NOT_INITIALIZED)
	ref, _, err := m.Sign(sh, data, Out{Cap: 512})
	must(t, err)

	steps := []struct {
		name    string
		context string // "" no context login
		loginRV ck.Error
		signRV  ck.Error
	}{
		{"no context login", "", 0, ck.CKR_USER_NOT_LOGGED_IN},
		{"wrong PIN", "wrong-pin", ck.CKR_PIN_INCORRECT, ck.CKR_USER_NOT_LOGGED_IN},
		{"right PIN", testUserPIN, 0, 0},
		{"again needs a new login", "", 0, ck.CKR_USER_NOT_LOGGED_IN},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			must(t, m.SignInit(sh, mc, always))
			if st.context != "" {
				wantRV(t, m.Login(sh, ck.CKU_CONTEXT_SPECIFIC, []byte(st.context)), st.loginRV)
			}
			sig, _, err := m.Sign(sh, data, Out{Cap: 512})
			wantRV(t, err, st.signRV)
			if err == nil && !bytes.Equal(sig, ref) {
				t.Fatal("signature differs from the same key's")
			}
			// Whatever the outcome, the operation is over.
			_, _, err = m.Sign(sh, data, Out{Cap: 512})
			wantRV(t, err, ck.CKR_OPERATION_NOT_INITIALIZED)
		})
	}
	// Context login needs the user logged in.
	must(t, m.SignInit(sh, mc, always))
	must(t, m.Logout(sh))
	wantRV(t, m.Login(sh, ck.CKU_CONTEXT_SPECIFIC, []byte(testUserPIN)), ck.CKR_USER_NOT_LOGGED_IN)
}

// TestConformanceLogoutInvalidatesPrivateHandles: after C_Logout the
// application's handles to private objects are invalid, even after a new
// login, and private session objects are destroyed (PKCS#11 3.0 §5.6
// C_Logout).
func TestConformanceLogoutInvalidatesPrivateHandles(t *testing.T) {
	m, slot, sh := readyToken(t)
	data := func(token, private bool, label string) uint64 {
		h, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DATA), aBool(ck.CKA_TOKEN, token),
			aBool(ck.CKA_PRIVATE, private), aStr(ck.CKA_LABEL, label), aStr(ck.CKA_VALUE, label)})
		must(t, err)
		return h
	}
	objs := []struct {
		label          string
		token, private bool
	}{
		{"pub-session", false, false},
		{"priv-session", false, true},
		{"pub-token", true, false},
		{"priv-token", true, true},
	}
	handles := map[string]uint64{}
	for _, o := range objs {
		handles[o.label] = data(o.token, o.private, o.label)
	}
	must(t, m.Logout(sh))
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	for _, o := range objs {
		_, err := m.GetAttributeValue(sh, handles[o.label], []uint64{ck.CKA_LABEL})
		if o.private {
			wantRV(t, err, ck.CKR_OBJECT_HANDLE_INVALID)
		} else {
			wantRV(t, err, ck.CKR_OK)
		}
		found := find(t, m, sh, aStr(ck.CKA_LABEL, o.label))
		switch {
		case o.private && !o.token:
			if len(found) != 0 {
				t.Errorf("%s survived logout: %v", o.label, found)
			}
		case o.private:
			if len(found) != 1 || found[0] == handles[o.label] {
				t.Errorf("%s: found %v, old handle %d", o.label, found, handles[o.label])
			}
		default:
			if len(found) != 1 || found[0] != handles[o.label] {
				t.Errorf("%s: found %v, want %d", o.label, found, handles[o.label])
			}
		}
	}
	_ = slot
}
