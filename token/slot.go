package token

// A slot and its token: the engine, the keystore, the login state shared by
// every session of the application, and the object cache.

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"sync"
	"sync/atomic"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/rsa"
	"github.com/modexp-token/modexp-token/engine/guard"
	"github.com/modexp-token/modexp-token/keystore"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/config"
	"github.com/modexp-token/modexp-token/token/mech"
)

// PIN length limits (bytes), reported in CK_TOKEN_INFO.
const (
	minPINLen = 4
	maxPINLen = 255
)

// loginState is who is logged in to a token.
type loginState int

const (
	loggedOut loginState = iota
	userLoggedIn
	soLoggedIn
)

// slot is one slot with its token.
type slot struct {
	m     *Module
	id    uint64
	cfg   config.Slot
	guard *guard.Guard // the slot's engines and their health (engine/guard)
	log   *slog.Logger

	storeMu   sync.Mutex
	store     *keystore.Store // nil until opened (a corrupt file is retried)
	storeOpts keystore.Options
	// down is set while the store is unusable (an etcd cluster that did
	// not answer within the connect budget, or refused access): every
	// call fails at once with its reason while retryDown, started by
	// markDown, tries the store again in the background. retrying and
	// retryStop (closed by close) are guarded by storeMu; closed stops
	// any later open.
	down      atomic.Pointer[storeDown]
	retrying  bool
	retryStop chan struct{}
	closed    bool

	// A token in etcd notifies changes (cache.go): stale is set by every
	// notification, notify wakes follow, which refreshes the cache; done
	// ends it at close.
	stale  atomic.Bool
	notify chan struct{}
	done   chan struct{}
	// fetching counts the requests for the caches in flight (cache.go,
	// fetch, fetchRecord): a diagnostic for the tests.
	fetching atomic.Int32

	loginMu sync.Mutex // one C_Login at a time (taken before mu)
	// mu guards the state below. The lookups of every operation (keyObject)
	// take it shared, so that the sessions of different threads do not wait
	// for each other.
	mu    sync.RWMutex
	login loginState
	key   *keystore.Key // token key unlocked by the login, nil when logged out
	epoch uint64        // bumped at every login and logout
	// loginNow is epoch and login as one word (epoch<<2 | login), set with
	// them (setLoginLocked): what currentEpoch reads without the lock.
	loginNow atomic.Uint64
	sessions map[uint64]*session
	objects  map[uint64]*object // by handle: token and session objects
	byStore  map[uint64]*object // token objects by keystore ID
	gen      uint64             // keystore generation the cache reflects
	loaded   bool
	// ver counts the changes of the cached token objects (applyLocked,
	// this process's writes, logins and logouts, close): refresh applies
	// what the store said only if ver did not move while it asked.
	ver uint64
	// rec is the token record of a token in etcd (C_GetTokenInfo), kept
	// as fresh as the watch by follow (cache.go, tokenRecord); nil: ask
	// the store. Every read of it takes a ticket (recSeq); rec is the
	// answer of ticket recAt, and only a later ticket, above recFloor
	// (this process's own change of the record), replaces it.
	rec                     *keystore.TokenRecord
	recSeq, recAt, recFloor uint64
	// idIndex maps CKA_ID values to the handles of the objects that have
	// them (cache.go): built with every full load, updated by every change
	// of the cache; nil means not built (find.go builds it then). Entries
	// may be stale (an object stripped at logout, removed): searches match
	// every candidate against the template.
	idIndex map[string][]uint64
	// classIndex: the handles by CKA_CLASS, with idIndex (findindex.go).
	classIndex map[uint64]map[uint64]struct{}
	stats      cacheCounters // Module.CacheStats
}

// openSlot opens the engine and the token file of one configured slot.
func (m *Module) openSlot(sc config.Slot, level slog.Level) (*slot, error) {
	s := &slot{
		m: m, id: sc.ID, cfg: sc,
		sessions: map[uint64]*session{},
		objects:  map[uint64]*object{},
		byStore:  map[uint64]*object{},
	}
	s.log = m.log.With("slot", sc.ID)
	if sc.Log != "" {
		l, err := m.openLog(sc.Log, level)
		if err != nil {
			return nil, err
		}
		s.log = l.With("slot", sc.ID)
	}
	if err := s.openEngine(); err != nil { // engine.go
		return nil, err
	}
	s.storeOpts = keystore.Options{
		LockTimeout:  sc.LockTimeout.Duration,
		MaxPINTries:  sc.MaxPINTries,
		KDF:          keystore.KDFParams{Time: sc.KDFTime, MemoryKiB: sc.KDFMemoryKiB, Threads: sc.KDFThreads},
		AllowWeakKDF: sc.KDFInsecure,
		Logger:       s.log,
	}
	if sc.PINCache != config.PINCacheOff {
		s.storeOpts.PINCache = sc.PINCacheLifetime.Duration
		s.storeOpts.PINCacheKeyring = sc.PINCache == config.PINCacheKeyring
		if s.storeOpts.PINCacheKeyring && !keystore.KeyringAvailable() {
			s.log.Info("pin_cache = keyring: no kernel keyring here (keyctl missing or refused); right PINs are remembered in this process only")
		}
	}
	if _, err := s.st(); err != nil && !errors.Is(err, keystore.ErrCorrupt) && !errors.Is(err, keystore.ErrUnavailable) &&
		!errors.Is(err, keystore.ErrAccessDenied) {
		// A corrupt file leaves the slot up (CKR_TOKEN_NOT_RECOGNIZED in
		// its token info), and so does an etcd cluster that does not
		// answer within the connect budget or refuses access (the slot is
		// marked down with its reason and tried again in the background:
		// markDown); anything else (bad options) fails the load.
		s.guard.Close()
		return nil, fmt.Errorf("token: slot 0x%x: %w", sc.ID, err)
	}
	s.log.Info("slot opened", "token_store", sc.StoreName(), "engine", s.engineName(),
		"fallback", sc.Fallback, "exponent_blinding", sc.Blinding())
	switch {
	case ParentRanSelfTests:
		s.log.Info("engine self-test skipped: the parent process ran it, or runs it at its engine's first use (forked child's copy of the library)")
	case sc.Engine == config.DefaultEngine:
		// The software engine's self-test (26 ms of CPU at C_Initialize,
		// docs/FORK.md) waits for the first use: no result leaves before
		// its known-answer test, which runs after it.
		s.guard.DeferSelfTest()
	default:
		s.guard.SelfTest() // a device's health at open; a failure is logged and counted, results are checked anyway
	}
	return s, nil
}

// close wipes the login and closes the token file and the engine.
func (s *slot) close() error {
	s.mu.Lock()
	s.logoutLocked()
	s.objects, s.byStore, s.loaded = map[uint64]*object{}, map[uint64]*object{}, false
	s.idIndex = nil
	s.ver++
	s.mu.Unlock()
	s.storeMu.Lock()
	defer s.storeMu.Unlock()
	s.closed = true
	if s.retryStop != nil {
		close(s.retryStop)
		s.retryStop = nil
	}
	if s.done != nil {
		close(s.done)
		s.done = nil
	}
	var err error
	if s.store != nil {
		err = s.store.Close()
		s.store = nil
	}
	return errors.Join(err, s.guard.Close())
}

// st returns the slot's keystore, opening it on first use (and again after
// a failed open: the file may have been repaired or moved away). While the
// store is down (markDown) it fails at once with the reason.
func (s *slot) st() (*keystore.Store, error) {
	if d := s.down.Load(); d != nil {
		return nil, d.err
	}
	return s.openStore()
}

// storeDown is why a slot's store is unusable.
type storeDown struct {
	cause string   // keystore.Cause, or the error
	code  ck.Error // CKR_DEVICE_ERROR (unreachable) or CKR_TOKEN_NOT_PRESENT (access refused)
	since time.Time
	err   error // what calls get: the reason, the code and the store's error
}

// markDown marks the store unusable after the failed open err (storeMu
// held) and starts the background retries if they are not running.
func (s *slot) markDown(err error) {
	code := ck.CKR_DEVICE_ERROR
	if errors.Is(err, keystore.ErrAccessDenied) {
		code = ck.CKR_TOKEN_NOT_PRESENT
	}
	cause := keystore.Cause(err)
	if cause == "" {
		cause = err.Error()
	}
	d := &storeDown{cause: cause, code: code, since: time.Now()}
	if old := s.down.Load(); old != nil {
		d.since = old.since
	}
	d.err = fmt.Errorf("token: slot %d: token store %s unusable since %s: %s (tried again in the background): %w: %w",
		s.id, s.cfg.StoreName(), d.since.UTC().Format(time.RFC3339), cause, code, err)
	s.down.Store(d)
	s.log.Error("token store unusable", "token_store", s.cfg.StoreName(), "cause", cause,
		"code", ck.Name("CKR_", uint64(code)), "err", err)
	if !s.retrying && !s.closed {
		s.retrying, s.retryStop = true, make(chan struct{})
		go s.retryDown(s.retryStop)
	}
}

// retryDown tries a down store again, after 1 s, doubling to 30 s, until
// it opens (the slot works again) or the slot closes (stop).
func (s *slot) retryDown(stop chan struct{}) {
	pause := time.Second
	for {
		select {
		case <-stop:
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 30*time.Second)
		if _, err := s.openStore(); err == nil {
			s.log.Info("token store usable again", "token_store", s.cfg.StoreName())
			return
		}
	}
}

// openStore opens the slot's keystore unless it is open (st); an etcd
// store that is unreachable or refuses access is marked down.
func (s *slot) openStore() (*keystore.Store, error) {
	s.storeMu.Lock()
	defer s.storeMu.Unlock()
	if s.store != nil {
		return s.store, nil
	}
	if s.closed {
		return nil, fmt.Errorf("token: slot %d: closed: %w", s.id, ck.CKR_CRYPTOKI_NOT_INITIALIZED)
	}
	var st *keystore.Store
	var err error
	if sc := s.cfg; sc.Etcd() {
		st, err = keystore.OpenEtcd(keystore.EtcdConfig{
			Endpoints: sc.EtcdEndpoints, Prefix: sc.EtcdPrefix,
			CAFile: sc.EtcdCA, CertFile: sc.EtcdCert, KeyFile: sc.EtcdKey,
			DialTimeout: sc.EtcdDialTimeout.Duration, RequestTimeout: sc.EtcdRequestTimeout.Duration,
			ConnectTimeout: sc.ConnectBudget(),
		}, s.storeOpts)
	} else {
		st, err = keystore.Open(s.cfg.TokenFile, s.storeOpts)
	}
	if err != nil {
		switch {
		case errors.Is(err, keystore.ErrCorrupt):
			s.log.Error("token file corrupt", "token_store", s.cfg.StoreName(), "err", err)
		case s.cfg.Etcd() && (errors.Is(err, keystore.ErrUnavailable) || errors.Is(err, keystore.ErrAccessDenied)):
			s.markDown(err)
			return nil, s.down.Load().err
		case errors.Is(err, keystore.ErrUnavailable):
			s.log.Error("token store unreachable", "token_store", s.cfg.StoreName(), "err", err)
		}
		return nil, err
	}
	s.store = st
	if s.down.Load() != nil {
		s.down.Store(nil)
		s.retrying, s.retryStop = false, nil
	}
	if s.cfg.Etcd() && s.notify == nil {
		s.notify, s.done = make(chan struct{}, 1), make(chan struct{})
		go s.follow()
		st.Follow(s.changed)
	}
	return st, nil
}

// storeErr maps a keystore error to its CKR code, logging the unexpected.
func (s *slot) storeErr(what string, err error) error {
	var code ck.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &code):
		return err
	case errors.Is(err, keystore.ErrPINIncorrect):
		code = ck.CKR_PIN_INCORRECT
	case errors.Is(err, keystore.ErrPINLocked):
		code = ck.CKR_PIN_LOCKED
	case errors.Is(err, keystore.ErrPINNotSet):
		code = ck.CKR_USER_PIN_NOT_INITIALIZED
	case errors.Is(err, keystore.ErrNotFound):
		code = ck.CKR_OBJECT_HANDLE_INVALID
	case errors.Is(err, keystore.ErrNotInitialized):
		code = ck.CKR_TOKEN_NOT_RECOGNIZED
	case errors.Is(err, keystore.ErrCorrupt):
		code = ck.CKR_DEVICE_ERROR
		s.log.Error("token file corrupt", "op", what, "err", err)
	case errors.Is(err, keystore.ErrKeyMismatch):
		code = ck.CKR_USER_NOT_LOGGED_IN
		s.log.Warn("token re-initialised elsewhere: login no longer valid", "op", what)
	case errors.Is(err, keystore.ErrUnavailable):
		code = ck.CKR_DEVICE_ERROR
		s.log.Error("token store unreachable", "op", what, "err", err)
	case errors.Is(err, keystore.ErrLocked):
		code = ck.CKR_FUNCTION_FAILED
		s.log.Warn("token file busy", "op", what, "err", err)
	default:
		code = ck.CKR_FUNCTION_FAILED
		s.log.Error("keystore failure", "op", what, "err", err)
	}
	return fmt.Errorf("token: %s: %w: %w", what, code, err)
}

// engineErr maps an engine or engine/alg/rsa error of a private operation.
func (s *slot) engineErr(what string, err error) error {
	var code ck.Error
	switch {
	case errors.As(err, &code):
		return err
	case errors.Is(err, rsa.ErrFault), errors.Is(err, engine.ErrDevice):
		code = ck.CKR_DEVICE_ERROR
		s.log.Error("engine failure", "op", what, "engine", s.engineName(), "err", err)
	case errors.Is(err, engine.ErrOperandTooLarge), errors.Is(err, engine.ErrUnsupported):
		code = ck.CKR_KEY_SIZE_RANGE
	case errors.Is(err, rsa.ErrInputRange):
		code = ck.CKR_DATA_INVALID
	default:
		code = ck.CKR_FUNCTION_FAILED
		s.log.Error("operation failed", "op", what, "err", err)
	}
	return fmt.Errorf("token: %s: %w: %w", what, code, err)
}

// tokenInfo is C_GetTokenInfo.
func (s *slot) tokenInfo() (TokenInfo, error) {
	model := s.guard.Engine().Info().Model
	if len(model) > 16 {
		model = model[:16]
	}
	ti := TokenInfo{
		Label:             s.cfg.Label,
		ManufacturerID:    manufacturer,
		Model:             model,
		SerialNumber:      fmt.Sprintf("%016X", s.id),
		Flags:             ck.CKF_RNG | ck.CKF_LOGIN_REQUIRED | ck.CKF_RESTORE_KEY_NOT_NEEDED,
		MaxSessionCount:   ck.CK_EFFECTIVELY_INFINITE,
		MaxRwSessionCount: ck.CK_EFFECTIVELY_INFINITE,
		MaxPinLen:         maxPINLen,
		MinPinLen:         minPINLen,
		TotalPublicMemory: ck.CK_UNAVAILABLE_INFORMATION, FreePublicMemory: ck.CK_UNAVAILABLE_INFORMATION,
		TotalPrivateMemory: ck.CK_UNAVAILABLE_INFORMATION, FreePrivateMemory: ck.CK_UNAVAILABLE_INFORMATION,
		HardwareVersion: libraryVersion,
		FirmwareVersion: libraryVersion,
	}
	s.mu.Lock()
	for _, ss := range s.sessions {
		ti.SessionCount++
		if ss.rw {
			ti.RwSessionCount++
		}
	}
	s.mu.Unlock()
	st, err := s.st()
	var rec keystore.TokenRecord
	if err == nil {
		rec, err = s.tokenRecord(st)
	}
	switch {
	case errors.Is(err, keystore.ErrNotInitialized):
		return ti, nil
	case errors.Is(err, keystore.ErrCorrupt):
		s.log.Error("token file corrupt", "op", "C_GetTokenInfo", "err", err)
		return TokenInfo{}, fmt.Errorf("token: token info: %w: %w", ck.CKR_TOKEN_NOT_RECOGNIZED, err)
	case err != nil:
		return TokenInfo{}, s.storeErr("token info", err)
	}
	ti.Label = rec.Label
	ti.SerialNumber = rec.Serial
	ti.Flags |= ck.CKF_TOKEN_INITIALIZED
	if rec.UserPINSet {
		ti.Flags |= ck.CKF_USER_PIN_INITIALIZED
	}
	ti.Flags |= pinFlags(rec.UserTriesLeft, rec.MaxPINTries, ck.CKF_USER_PIN_COUNT_LOW, ck.CKF_USER_PIN_FINAL_TRY, ck.CKF_USER_PIN_LOCKED)
	ti.Flags |= pinFlags(rec.SOTriesLeft, rec.MaxPINTries, ck.CKF_SO_PIN_COUNT_LOW, ck.CKF_SO_PIN_FINAL_TRY, ck.CKF_SO_PIN_LOCKED)
	return ti, nil
}

// pinFlags derives the PIN counter flags from tries left.
func pinFlags(left, max int, low, final, locked uint64) uint64 {
	switch {
	case left <= 0:
		return locked
	case left == 1:
		return final | low
	case left < max:
		return low
	}
	return 0
}

// mechanismInfo is a mechanism's info on this slot's engine, and whether
// the slot offers the mechanism at all.
func (s *slot) mechanismInfo(m mech.Mechanism) (MechanismInfo, bool) {
	var info MechanismInfo
	ok := s.mechanismInfoTo(&info, m)
	return info, ok
}

// mechanismInfoTo is mechanismInfo into *info (zero when it reports
// false): C_SignInit passes its session's, which the offer's function
// value cannot make escape to the heap again.
func (s *slot) mechanismInfoTo(info *MechanismInfo, m mech.Mechanism) bool {
	mc := m.Base()
	*info = MechanismInfo{MinKeySize: mc.MinBits, MaxKeySize: mc.MaxBits, Flags: mc.Flags}
	if mc.Available != nil && !mc.Available(s, info) {
		*info = MechanismInfo{}
		return false
	}
	info.Flags = narrowMessageFlags(info.Flags)
	if mc.EngineBound {
		if max := uint64(s.guard.MaxRSAKeyBits()); max > 0 && max < info.MaxKeySize {
			info.MaxKeySize = max
		}
	}
	return true
}

// addSession registers a new session; with the SO logged in only R/W
// sessions may be opened.
func (s *slot) addSession(ss *session) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.login == soLoggedIn && !ss.rw {
		return ck.Errorf(ck.CKR_SESSION_READ_WRITE_SO_EXISTS, "SO logged in: read-only session refused")
	}
	s.sessions[ss.h] = ss
	return nil
}

// removeSession forgets a closed session and destroys its session objects;
// the last session's close logs the token out.
func (s *slot) removeSession(ss *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, ss.h)
	for h, o := range s.objects {
		if o.storeID == 0 && o.owner == ss.h {
			s.indexRemoveLocked(o)
			delete(s.objects, h)
		}
	}
	if len(s.sessions) == 0 && s.login != loggedOut {
		s.logoutLocked()
		s.log.Info("logged out: last session closed")
	}
}

// reloadLocked and refresh (the object cache following the token store)
// are in cache.go.

// visibleLocked reports whether o may be seen in the current login state.
func (s *slot) visibleLocked(o *object) bool {
	return !o.isPrivate() || s.login == userLoggedIn
}

// objectLocked finds a visible object by handle, refreshing the cache
// once if the handle is unknown (another process's object, for a token
// file), with the slot lock released meanwhile (cache.go, refresh): an
// unknown handle while the store does not answer holds up no signature.
// Callers call it before they read anything else under the lock.
func (s *slot) objectLocked(h uint64) (*object, error) {
	o, ok := s.objects[h]
	if !ok && h != 0 {
		var err error
		s.unlocked(func() { err = s.refresh(false) })
		if err != nil {
			return nil, err
		}
		o, ok = s.objects[h]
	}
	if !ok || !s.visibleLocked(o) {
		return nil, ck.Errorf(ck.CKR_OBJECT_HANDLE_INVALID, "object %d", h)
	}
	return o, nil
}

// object is objectLocked under the slot lock.
func (s *slot) object(h uint64) (*object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.objectLocked(h)
}

// keyObject finds a key object for an operation (CKR_KEY_HANDLE_INVALID):
// a cached, visible object under the shared lock, anything else (a
// refresh of the cache) under the exclusive one.
func (s *slot) keyObject(h uint64) (*object, uint64, loginState, error) {
	s.mu.RLock()
	if o, ok := s.objects[h]; ok && s.visibleLocked(o) {
		epoch, login := s.epoch, s.login
		s.mu.RUnlock()
		return o, epoch, login, nil
	}
	s.mu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	o, err := s.objectLocked(h)
	if err != nil {
		if ck.RV(err) == uint64(ck.CKR_OBJECT_HANDLE_INVALID) {
			return nil, 0, 0, ck.Errorf(ck.CKR_KEY_HANDLE_INVALID, "key %d", h)
		}
		return nil, 0, 0, err
	}
	return o, s.epoch, s.login, nil
}

// currentEpoch returns the login epoch and state, without the lock
// (loginNow).
func (s *slot) currentEpoch() (uint64, loginState) {
	v := s.loginNow.Load()
	return v >> 2, loginState(v & 3)
}

// setLoginLocked sets the login state and bumps the epoch (a login or a
// logout). s.mu is held.
func (s *slot) setLoginLocked(state loginState) {
	s.login = state
	s.epoch++
	s.loginNow.Store(s.epoch<<2 | uint64(state))
}

// ensureTokenDir creates the directory of the token file (0700).
func (s *slot) ensureTokenDir() error {
	if s.cfg.Etcd() {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(s.cfg.TokenFile), 0o700); err != nil {
		return fmt.Errorf("token: create token directory: %w: %w", ck.CKR_DEVICE_ERROR, err)
	}
	return nil
}
