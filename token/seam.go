package token

// The seam between the PKCS#11 state (module, slot, session, object) and
// the mechanism library (mech_*.go, the key types *_key.go, pkcs8*.go,
// symstream.go, keytype.go, mechanism.go, ec_explicit.go: the files
// seam_test.go lists).
//
// A mechanism receives its operation as an opView: the key, the kind of
// operation, the accumulator and stream made at Init, and the slot as a
// slotView, which is the guard that runs its private operations
// (engine/guard: fallback, known-answer tests, accounting), the slot's
// policy switches, its logger, and how an engine failure becomes a CK_RV.
// A key object is a keyView: its attributes, its handle, and its prepared
// form, kept by the state's cache (preparedKey, object.go) while the key
// types say only how to build it. *operation, *slot and *object implement
// the three; no function of the mechanism side names those types
// (TestMechanismsSeeOnlyTheSeam). The step left is the move of the
// mechanism side into its own package behind these interfaces.

import (
	"hash"
	"log/slog"

	"github.com/modexp-token/modexp-token/engine/guard"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/config"
)

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

// UseGCMIV is slotView's: the module's window of caller IVs (a key that
// is not one of the state's objects has no window: always fresh).
func (s *slot) UseGCMIV(k keyView, iv []byte) bool {
	o, ok := k.(*object)
	if !ok {
		return true
	}
	return s.m.gcmIVs.use(gcmKeyOf(s, o), iv)
}

// GenerateGCMIV is slotView's (generateIV).
func (s *slot) GenerateGCMIV(k keyView, iv []byte, fixedBits int, gen uint64) error {
	o, ok := k.(*object)
	if !ok {
		return ck.Errorf(ck.CKR_KEY_HANDLE_INVALID, "CKM_AES_GCM: no key object to generate an IV for")
	}
	return generateIV(s, o, iv, fixedBits, gen)
}

// KeyObject is slotView's (keyObject).
func (s *slot) KeyObject(h uint64) (keyView, error) {
	o, _, _, err := s.keyObject(h)
	if err != nil {
		return nil, err
	}
	return o, nil
}

var _ keyView = (*object)(nil)

// Attrs is keyView's.
func (o *object) Attrs() attrMap { return o.attrs }

// Handle is keyView's.
func (o *object) Handle() uint64 { return o.handle }

// Class is keyView's (class).
func (o *object) Class() uint64 { return o.class() }

// KeyType is keyView's (keyType).
func (o *object) KeyType() uint64 { return o.keyType() }

// Complete is keyView's.
func (o *object) Complete() bool { return o.complete }

// SecretValue is keyView's (secretValue).
func (o *object) SecretValue() ([]byte, error) { return o.secretValue() }

var _ opView = (*operation)(nil)

// Key is opView's.
func (op *operation) Key() keyView {
	if op.key == nil {
		return nil
	}
	return op.key
}

// Kind is opView's.
func (op *operation) Kind() opKind { return op.kind }

// Accumulator is opView's.
func (op *operation) Accumulator() hash.Hash { return op.digest }

// Stream is opView's.
func (op *operation) Stream() symStream { return op.stream }

// view is the operation's slot as the mechanism side sees it.
func (op *operation) view() slotView { return op.slot }
