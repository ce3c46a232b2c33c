package token

// Token initialisation, PINs and the login state machine (PKCS#11 3.0
// §5.6, §5.7). Login state belongs to the token: every session of the
// application shares it.

import (
	"strings"

	"github.com/modexp-token/modexp-token/keystore"
	"github.com/modexp-token/modexp-token/token/ck"
)

// checkPINLen screens a PIN before any KDF runs and before any try can be
// counted: an empty PIN (NULL_PTR or length 0: this token has no protected
// authentication path, so there is nothing to log in with) is
// CKR_ARGUMENTS_BAD, as SoftHSMv2 answers; one outside minPINLen..maxPINLen
// is CKR_PIN_LEN_RANGE. No PIN of this token can have either length, so
// neither answer tells a caller anything about the PIN, and a
// misconfigured client sending no PIN can no longer lock the token.
func checkPINLen(pin []byte) error {
	if len(pin) == 0 {
		return ck.Errorf(ck.CKR_ARGUMENTS_BAD, "empty PIN (this token has no protected authentication path)")
	}
	if len(pin) < minPINLen || len(pin) > maxPINLen {
		return ck.Errorf(ck.CKR_PIN_LEN_RANGE, "PIN of %d bytes (want %d..%d)", len(pin), minPINLen, maxPINLen)
	}
	return nil
}

// InitToken is C_InitToken: it (re)initialises the token with the SO PIN,
// destroying every object. No session may be open. The slot's
// max_pin_tries and kdf_* become the token's policy (InitTokenPolicy).
func (m *Module) InitToken(id uint64, soPIN []byte, label string) error {
	return m.InitTokenPolicy(id, soPIN, label, keystore.Policy{})
}

// InitTokenPolicy is InitToken storing p as the token's PIN policy (zero
// fields: the slot's configuration): the lockout limit and the least
// Argon2id parameters that every later process applies, its own
// configuration able only to make them stricter (`modexp-token init`'s
// flags).
func (m *Module) InitTokenPolicy(id uint64, soPIN []byte, label string, p keystore.Policy) error {
	s, err := m.slot(id)
	if err != nil {
		return err
	}
	if err := checkPINLen(soPIN); err != nil {
		return err
	}
	label = strings.TrimRight(label, " \x00")
	if len(label) > 32 {
		return ck.Errorf(ck.CKR_ARGUMENTS_BAD, "label longer than 32 bytes")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.sessions) > 0 {
		return ck.Errorf(ck.CKR_SESSION_EXISTS, "%d sessions open", len(s.sessions))
	}
	if err := s.ensureTokenDir(); err != nil {
		return err
	}
	st, err := s.st()
	if err != nil {
		return s.storeErr("init token", err)
	}
	err = st.InitTokenPolicy(soPIN, label, p)
	s.recordChangedLocked(err)
	if err != nil {
		return s.storeErr("init token", err)
	}
	s.logoutLocked()
	s.objects, s.byStore, s.loaded = map[uint64]*object{}, map[uint64]*object{}, false
	s.idIndex = nil
	s.ver++
	s.log.Info("token initialised", "label", label)
	return nil
}

// InitPIN is C_InitPIN: the SO sets the user PIN in a R/W SO session.
func (m *Module) InitPIN(sh uint64, pin []byte) error {
	ss, err := m.session(sh)
	if err != nil {
		return err
	}
	s := ss.slot
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.login != soLoggedIn {
		return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "C_InitPIN needs the SO")
	}
	if !ss.rw {
		return ck.Errorf(ck.CKR_SESSION_READ_ONLY, "C_InitPIN in a read-only session")
	}
	if err := checkPINLen(pin); err != nil {
		return err
	}
	st, err := s.st()
	if err != nil {
		return s.storeErr("init user PIN", err)
	}
	key := s.key
	s.unlocked(func() { err = st.InitUserPIN(key, pin) }) // Argon2id and a write: cache.go
	s.recordChangedLocked(err)
	if err != nil {
		return s.storeErr("init user PIN", err)
	}
	s.log.Info("user PIN initialised")
	return nil
}

// SetPIN is C_SetPIN: the SO's PIN in a R/W SO session, the user's
// otherwise (R/W user or public session).
func (m *Module) SetPIN(sh uint64, oldPIN, newPIN []byte) error {
	ss, err := m.session(sh)
	if err != nil {
		return err
	}
	s := ss.slot
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ss.rw {
		return ck.Errorf(ck.CKR_SESSION_READ_ONLY, "C_SetPIN in a read-only session")
	}
	if err := checkPINLen(oldPIN); err != nil {
		return err // before the KDF: no try used
	}
	if err := checkPINLen(newPIN); err != nil {
		return err
	}
	who := keystore.User
	if s.login == soLoggedIn {
		who = keystore.SO
	}
	st, err := s.st()
	if err != nil {
		return s.storeErr("set PIN", err)
	}
	s.unlocked(func() { err = st.SetPIN(who, oldPIN, newPIN) }) // Argon2id and a write: cache.go
	s.recordChangedLocked(err)
	if err != nil {
		return s.storeErr("set PIN", err)
	}
	s.log.Info("PIN changed", "so", who == keystore.SO)
	return nil
}

// Login is C_Login for CKU_SO, CKU_USER and CKU_CONTEXT_SPECIFIC.
func (m *Module) Login(sh, userType uint64, pin []byte) error {
	ss, err := m.session(sh)
	if err != nil {
		return err
	}
	if userType == ck.CKU_CONTEXT_SPECIFIC {
		return ss.contextLogin(pin)
	}
	var who keystore.UserType
	var state loginState
	switch userType {
	case ck.CKU_SO:
		who, state = keystore.SO, soLoggedIn
	case ck.CKU_USER:
		who, state = keystore.User, userLoggedIn
	default:
		return ck.Errorf(ck.CKR_USER_TYPE_INVALID, "user type %d", userType)
	}
	if err := checkPINLen(pin); err != nil {
		return err // the arguments first, before the KDF: no try used
	}
	s := ss.slot
	// One login of this process at a time; the slot lock is released
	// while the store checks the PIN (Argon2id, a counted write) and the
	// objects are read with the key: signing goes on meanwhile.
	s.loginMu.Lock()
	defer s.loginMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loginAllowedLocked(ss, state); err != nil {
		return err
	}
	st, err := s.st()
	if err != nil {
		return s.storeErr("login", err)
	}
	var key *keystore.Key
	var f fetched
	ver := s.ver
	s.unlocked(func() {
		if key, err = st.Login(who, pin); err == nil {
			// Private objects and sealed values appear with the key.
			f = s.fetch(st, key, false, 0)
		}
	})
	s.recordChangedLocked(err)
	if err != nil {
		if ck.RV(s.storeErr("", err)) == uint64(ck.CKR_TOKEN_NOT_RECOGNIZED) {
			// Uninitialised token: nobody has a PIN yet.
			return ck.Errorf(ck.CKR_USER_PIN_NOT_INITIALIZED, "token not initialised")
		}
		s.log.Info("login failed", "so", who == keystore.SO, "err", err)
		return s.storeErr("login", err)
	}
	for try := 0; s.ver != ver && try < 3; try++ {
		// The cache moved meanwhile (another host's change applied):
		// the objects are read again.
		ver = s.ver
		s.unlocked(func() { f = s.fetch(st, key, false, 0) })
	}
	if err := s.loginAllowedLocked(ss, state); err != nil {
		key.Wipe() // things changed while the PIN was checked
		return err
	}
	s.key = key
	s.setLoginLocked(state)
	s.ver++
	if s.ver == ver+1 {
		err = s.applyFetchLocked(f, true)
	} else {
		err = s.reloadLocked()
	}
	if err != nil {
		s.logoutLocked()
		return err
	}
	pinCheck := "argon2id"
	if key.Remembered() {
		pinCheck = "remembered"
	}
	s.log.Info("logged in", "so", who == keystore.SO, "pin_check", pinCheck)
	return nil
}

// loginAllowedLocked checks that ss may log in as state now.
func (s *slot) loginAllowedLocked(ss *session, state loginState) error {
	if _, ok := s.sessions[ss.h]; !ok {
		return ck.Errorf(ck.CKR_SESSION_HANDLE_INVALID, "session %d closed", ss.h)
	}
	switch s.login {
	case state:
		return ck.Errorf(ck.CKR_USER_ALREADY_LOGGED_IN, "already logged in")
	case userLoggedIn, soLoggedIn:
		return ck.Errorf(ck.CKR_USER_ANOTHER_ALREADY_LOGGED_IN, "another user is logged in")
	}
	if state == soLoggedIn {
		for _, o := range s.sessions {
			if !o.rw {
				return ck.Errorf(ck.CKR_SESSION_READ_ONLY_EXISTS, "SO login with read-only sessions open")
			}
		}
	}
	return nil
}

// Logout is C_Logout.
func (m *Module) Logout(sh uint64) error {
	ss, err := m.session(sh)
	if err != nil {
		return err
	}
	s := ss.slot
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.login == loggedOut {
		return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "not logged in")
	}
	s.logoutLocked()
	s.log.Info("logged out")
	return nil
}

// logoutLocked wipes the token key, forgets private objects (their handles
// end), drops sealed values and prepared keys from the cache and bumps the
// epoch (operations started before it that need the login fail).
func (s *slot) logoutLocked() {
	if s.key != nil {
		s.key.Wipe()
		s.key = nil
	}
	s.ver++
	if s.login == loggedOut {
		return
	}
	s.setLoginLocked(loggedOut)
	for h, o := range s.objects {
		if o.isPrivate() {
			// PKCS#11 3.0 §5.6 C_Logout: the application's handles to
			// private objects become invalid, even across a new login
			// (token objects get new handles when the next login reloads
			// them), and private session objects are destroyed.
			delete(s.objects, h)
			if o.storeID != 0 {
				delete(s.byStore, o.storeID)
			}
			o.dropPrepared()
			continue
		}
		n := o.stripped()
		if n != o {
			s.objects[h] = n
			if o.storeID != 0 {
				s.byStore[o.storeID] = n
			}
			continue
		}
		o.dropPrepared()
	}
}
