package token

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/config"
	"github.com/modexp-token/modexp-token/token/mech"
)

// Library identity.
const (
	manufacturer       = "ModExp Token"
	libraryDescription = "ModExp Token PKCS#11 module"
)

var (
	libraryVersion  = Version{Major: 0, Minor: 1}
	cryptokiVersion = Version{Major: 3, Minor: 0}
)

// FallbackLogHandler, when set (once, before the first Load), receives the
// module's log records when the configuration names no log file. The C layer
// sets it to the system log (warnings and errors only); the CLI and the
// tests leave it nil, which discards.
var FallbackLogHandler slog.Handler

// ParentRanSelfTests, set by the C layer before Load in a forked child's
// copy of the library whose parent had the module initialised (cgo/fork.c,
// docs/FORK.md), skips the engines' self-tests at slot open: the parent ran
// them on the same code and configuration, and every result is checked
// before release anyway. The guard's status then says "not run".
var ParentRanSelfTests bool

// Module is the loaded PKCS#11 module: configuration, slots, tokens and
// sessions. One Module lives between C_Initialize and C_Finalize.
type Module struct {
	log      *slog.Logger
	files    []io.Closer
	slots    []*slot
	slotByID map[uint64]*slot
	soft     engine.Engine // fallback engine shared by slots with fallback "soft"

	// mu serialises the changes of sessions (an open, a close) with
	// closed. The lookup of every call (session) takes no lock: a
	// lock's cache line would move between the cores of the threads
	// whose sessions it finds.
	mu       sync.RWMutex
	sessions sync.Map // handle → *session
	closed   bool

	// traceCalls: the log takes debug records, so the C layer logs one
	// record per call (LogCall).
	traceCalls bool

	// handles numbers sessions and objects from one counter: every handle
	// is distinct, never 0 and never reused within the Module's life.
	handles atomic.Uint64

	// gcmIVs is the window of caller-chosen AES-GCM IVs (gcmiv.go).
	gcmIVs gcmIVs
	// gcmCounters are the AES-GCM IV counters of the key objects (gcmgen.go).
	gcmCounters gcmCounters
}

// LoadFromEnv reads the configuration (MODEXP_TOKEN_CONF, MODEXP_TOKEN_ENGINE,
// defaults) and opens every slot's engine and token file. An unknown engine
// or a bad configuration is an error (the C layer answers C_Initialize with
// it), never a silent default.
func LoadFromEnv() (*Module, error) {
	cfg, err := config.FromEnv()
	if err != nil {
		return nil, fmt.Errorf("token: %w: %w", ck.CKR_FUNCTION_FAILED, err)
	}
	return Load(cfg)
}

// Load opens the module described by cfg. On error nothing stays open.
func Load(cfg *config.Config) (m *Module, err error) {
	m = &Module{log: slog.New(slog.DiscardHandler), slotByID: map[uint64]*slot{}}
	defer func() {
		if err != nil {
			m.log.Error("module load failed", "err", err)
			m.Close()
			m, err = nil, fmt.Errorf("token: %w: %w", ck.CKR_FUNCTION_FAILED, err)
		}
	}()
	level, err := cfg.Level()
	if err != nil {
		return m, err
	}
	if cfg.Log != "" {
		if m.log, err = m.openLog(cfg.Log, level); err != nil {
			return m, err
		}
	} else if h := FallbackLogHandler; h != nil {
		m.log = slog.New(h)
	}
	m.traceCalls = m.log.Enabled(context.Background(), slog.LevelDebug)
	for _, sc := range cfg.Slots {
		s, err := m.openSlot(sc, level)
		if err != nil {
			return m, err
		}
		m.slots = append(m.slots, s)
		m.slotByID[s.id] = s
	}
	attrs := []any{"config", cfg.Source, "slots", len(m.slots)}
	var notes []string
	if e, err := m.softEngine(); err == nil { // the kernel it runs on
		if d, ok := engine.As[engine.Describer](e); ok {
			more, n := d.Describe()
			attrs, notes = append(attrs, more...), n
		}
	}
	m.log.Info("module loaded", attrs...)
	for _, n := range notes {
		m.log.Warn("software engine kernel", "note", n)
	}
	return m, nil
}

// openLog opens (appending) a log file and returns a logger writing to it.
func (m *Module) openLog(path string, level slog.Level) (*slog.Logger, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("token: open log %s: %w", path, err)
	}
	m.files = append(m.files, f)
	return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: level})), nil
}

// softEngine returns the shared software fallback engine.
func (m *Module) softEngine() (engine.Engine, error) {
	if m.soft == nil {
		e, err := engine.Open(config.DefaultEngine)
		if err != nil {
			return nil, err
		}
		m.soft = e
	}
	return m.soft, nil
}

// Close wipes keys, closes every session, token file and engine and the
// log files. A new Load after it starts clean. Close is idempotent.
func (m *Module) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	var sessions []*session
	m.sessions.Range(func(h, s any) bool {
		sessions = append(sessions, s.(*session))
		m.sessions.Delete(h)
		return true
	})
	m.mu.Unlock()
	for _, sl := range m.slots {
		// Before the sessions' close logs out (which forgets private
		// objects and strips sealed values).
		sl.mu.Lock()
		sl.wipeSecretsLocked()
		sl.mu.Unlock()
	}
	for _, s := range sessions {
		s.close()
	}
	var errs []error
	for _, s := range m.slots {
		errs = append(errs, s.close())
	}
	if m.soft != nil {
		errs = append(errs, m.soft.Close())
	}
	if m.log != nil {
		m.log.Info("module closed")
	}
	for _, f := range m.files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// Info is C_GetInfo.
func (m *Module) Info() ModuleInfo {
	return ModuleInfo{
		CryptokiVersion:    cryptokiVersion,
		ManufacturerID:     manufacturer,
		LibraryDescription: libraryDescription,
		LibraryVersion:     libraryVersion,
	}
}

// SlotList is C_GetSlotList: every slot has a token, so tokenPresent does
// not change the list. The order is the configuration's.
func (m *Module) SlotList(tokenPresent bool) []uint64 {
	ids := make([]uint64, len(m.slots))
	for i, s := range m.slots {
		ids[i] = s.id
	}
	return ids
}

func (m *Module) slot(id uint64) (*slot, error) {
	s, ok := m.slotByID[id]
	if !ok {
		return nil, ck.Errorf(ck.CKR_SLOT_ID_INVALID, "slot 0x%x", id)
	}
	return s, nil
}

// session returns the open session with handle h.
func (m *Module) session(h uint64) (*session, error) {
	s, ok := m.sessions.Load(h)
	if !ok {
		return nil, ck.Errorf(ck.CKR_SESSION_HANDLE_INVALID, "session %d", h)
	}
	return s.(*session), nil
}

// newHandle returns a fresh session or object handle.
func (m *Module) newHandle() uint64 { return m.handles.Add(1) }

// SlotInfo is C_GetSlotInfo.
func (m *Module) SlotInfo(id uint64) (SlotInfo, error) {
	s, err := m.slot(id)
	if err != nil {
		return SlotInfo{}, err
	}
	desc := fmt.Sprintf("%s (%s)", s.cfg.Label, s.engineName())
	if len(desc) > 64 {
		desc = desc[:64]
	}
	flags := uint64(ck.CKF_TOKEN_PRESENT)
	if d := s.down.Load(); d != nil && d.code == ck.CKR_TOKEN_NOT_PRESENT {
		flags = 0 // the store refuses this host: as good as no token
	}
	return SlotInfo{
		Description:     desc,
		ManufacturerID:  manufacturer,
		Flags:           flags,
		HardwareVersion: libraryVersion,
		FirmwareVersion: libraryVersion,
	}, nil
}

// StoreStatus is whether a slot's token store is usable, and if not why.
type StoreStatus struct {
	Usable bool
	Cause  string    // "connection refused", "timeout", "TLS: unknown CA", "permission denied on the prefix", ...
	Code   uint64    // what calls get meanwhile: CKR_DEVICE_ERROR or CKR_TOKEN_NOT_PRESENT
	Since  time.Time // when it became unusable
}

// StoreStatus reports whether slot id's token store is usable: an etcd
// store that did not answer within the connect budget, or refused access,
// is not (its calls fail at once while it is tried again in the
// background).
func (m *Module) StoreStatus(id uint64) (StoreStatus, error) {
	s, err := m.slot(id)
	if err != nil {
		return StoreStatus{}, err
	}
	d := s.down.Load()
	if d == nil {
		return StoreStatus{Usable: true}, nil
	}
	return StoreStatus{Cause: d.cause, Code: uint64(d.code), Since: d.since}, nil
}

// TokenInfo is C_GetTokenInfo.
func (m *Module) TokenInfo(id uint64) (TokenInfo, error) {
	s, err := m.slot(id)
	if err != nil {
		return TokenInfo{}, err
	}
	return s.tokenInfo()
}

// MechanismList is C_GetMechanismList, sorted by value.
func (m *Module) MechanismList(id uint64) ([]uint64, error) {
	s, err := m.slot(id)
	if err != nil {
		return nil, err
	}
	list := make([]uint64, 0, len(mech.Order))
	for _, t := range mech.Order {
		if _, ok := s.mechanismInfo(mech.Registry[t]); ok {
			list = append(list, t)
		}
	}
	return list, nil
}

// MechanismInfo is C_GetMechanismInfo.
func (m *Module) MechanismInfo(id, mc uint64) (MechanismInfo, error) {
	s, err := m.slot(id)
	if err != nil {
		return MechanismInfo{}, err
	}
	if mm, ok := mech.Registry[mc]; ok {
		if info, ok := s.mechanismInfo(mm); ok {
			return info, nil
		}
	}
	return MechanismInfo{}, ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s", ck.Name("CKM_", mc))
}

// OpenSession is C_OpenSession.
func (m *Module) OpenSession(id, flags uint64) (uint64, error) {
	sl, err := m.slot(id)
	if err != nil {
		return 0, err
	}
	if flags&ck.CKF_SERIAL_SESSION == 0 {
		return 0, ck.Errorf(ck.CKR_SESSION_PARALLEL_NOT_SUPPORTED, "CKF_SERIAL_SESSION not set")
	}
	if d := sl.down.Load(); d != nil {
		return 0, d.err // unusable store: no session until it is back
	}
	s := &session{h: m.newHandle(), slot: sl, rw: flags&ck.CKF_RW_SESSION != 0}
	if err := sl.addSession(s); err != nil {
		return 0, err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		sl.removeSession(s)
		return 0, ck.Errorf(ck.CKR_CRYPTOKI_NOT_INITIALIZED, "module closed")
	}
	m.sessions.Store(s.h, s)
	m.mu.Unlock()
	sl.log.Debug("session opened", "session", s.h, "rw", s.rw)
	return s.h, nil
}

// CloseSession is C_CloseSession. Closing the last session of a token logs
// it out.
func (m *Module) CloseSession(h uint64) error {
	m.mu.Lock()
	v, ok := m.sessions.LoadAndDelete(h)
	m.mu.Unlock()
	if !ok {
		return ck.Errorf(ck.CKR_SESSION_HANDLE_INVALID, "session %d", h)
	}
	s := v.(*session)
	s.close()
	s.slot.log.Debug("session closed", "session", h)
	return nil
}

// CloseAllSessions is C_CloseAllSessions.
func (m *Module) CloseAllSessions(id uint64) error {
	sl, err := m.slot(id)
	if err != nil {
		return err
	}
	m.mu.Lock()
	var victims []*session
	m.sessions.Range(func(h, v any) bool {
		if s := v.(*session); s.slot == sl {
			victims = append(victims, s)
			m.sessions.Delete(h)
		}
		return true
	})
	m.mu.Unlock()
	for _, s := range victims {
		s.close()
	}
	return nil
}

// SessionInfo is C_GetSessionInfo.
func (m *Module) SessionInfo(h uint64) (SessionInfo, error) {
	s, err := m.session(h)
	if err != nil {
		return SessionInfo{}, err
	}
	flags := uint64(ck.CKF_SERIAL_SESSION)
	if s.rw {
		flags |= ck.CKF_RW_SESSION
	}
	return SessionInfo{SlotID: s.slot.id, State: s.state(), Flags: flags}, nil
}
