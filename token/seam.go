package token

// The seam between the PKCS#11 state (module, slot, session, object) and
// the mechanism library (mech_*.go, the key types *_key.go, pkcs8*.go).
//
// A mechanism or key type sees its slot only as a slotView: the guard
// that runs its private operations (engine/guard: fallback, known-answer
// tests, accounting), the slot's policy switches, its logger, and how an
// engine failure becomes a CK_RV. *slot implements it; no function of the
// mechanism side names *slot, and an operation hands its slot out only
// through operation.view. A key type's prepared form is kept by the
// state's cache (preparedKey, object.go): the key types say only how to
// build it. The next steps give mechanisms a narrow key value instead of
// *object, and move them to their own package behind these.

import (
	"log/slog"

	"github.com/modexp-token/modexp-token/engine/guard"
	"github.com/modexp-token/modexp-token/token/config"
)

// slotView is what a mechanism may use of its slot.
type slotView interface {
	// Guard is the slot's engine policy: every private operation runs
	// through it.
	Guard() *guard.Guard
	// Policy is the slot's configuration (fallback, legacy switches).
	Policy() *config.Slot
	// Log is the slot's logger.
	Log() *slog.Logger
	// EngineErr maps an engine error of the operation what to a CK_RV
	// error (and logs it).
	EngineErr(what string, err error) error
	// EngineName is the slot's engine spec, for messages.
	EngineName() string
	// MechanismInfo is what the slot offers of m (false: not at all).
	MechanismInfo(m mechanism) (MechanismInfo, bool)
	// UseGCMIV records a caller's AES-GCM IV for key and reports whether
	// it is fresh within the module's window (gcmiv.go).
	UseGCMIV(key gcmKeyID, iv []byte) bool
	// KeyObject is the key object of handle h for a mechanism's parameter
	// that names another key (an HKDF salt key).
	KeyObject(h uint64) (*object, uint64, loginState, error)
}

var _ slotView = (*slot)(nil)

// Guard is slotView's.
func (s *slot) Guard() *guard.Guard { return s.guard }

// Policy is slotView's.
func (s *slot) Policy() *config.Slot { return &s.cfg }

// Log is slotView's.
func (s *slot) Log() *slog.Logger { return s.log }

// EngineErr is slotView's (engineErr).
func (s *slot) EngineErr(what string, err error) error { return s.engineErr(what, err) }

// EngineName is slotView's (engineName).
func (s *slot) EngineName() string { return s.engineName() }

// MechanismInfo is slotView's (mechanismInfo).
func (s *slot) MechanismInfo(m mechanism) (MechanismInfo, bool) { return s.mechanismInfo(m) }

// UseGCMIV is slotView's: the module's window of caller IVs.
func (s *slot) UseGCMIV(key gcmKeyID, iv []byte) bool { return s.m.gcmIVs.use(key, iv) }

// KeyObject is slotView's (keyObject).
func (s *slot) KeyObject(h uint64) (*object, uint64, loginState, error) { return s.keyObject(h) }

// view is the operation's slot as the mechanism side sees it.
func (op *operation) view() slotView { return op.slot }
