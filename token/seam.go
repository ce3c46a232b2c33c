package token

// The state's side of the seam: *slot, *object and *operation are the
// mech.Slot, mech.Key and mech.Op the mechanism library (token/mech)
// receives. The interfaces and their contract are token/mech/seam.go.

import (
	"hash"
	"log/slog"

	"github.com/modexp-token/modexp-token/engine/guard"
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/config"
	"github.com/modexp-token/modexp-token/token/mech"
)

var _ mech.Slot = (*slot)(nil)

// Guard is mech.Slot's.
func (s *slot) Guard() *guard.Guard { return s.guard }

// Policy is mech.Slot's.
func (s *slot) Policy() *config.Slot { return &s.cfg }

// Log is mech.Slot's.
func (s *slot) Log() *slog.Logger { return s.log }

// EngineErr is mech.Slot's (engineErr).
func (s *slot) EngineErr(what string, err error) error { return s.engineErr(what, err) }

// EngineName is mech.Slot's (engineName).
func (s *slot) EngineName() string { return s.engineName() }

// MechanismInfo is mech.Slot's (mechanismInfo).
func (s *slot) MechanismInfo(m mech.Mechanism) (MechanismInfo, bool) { return s.mechanismInfo(m) }

// UseGCMIV is mech.Slot's: the module's window of caller IVs (a key that
// is not one of the state's objects has no window: always fresh).
func (s *slot) UseGCMIV(k mech.Key, iv []byte) bool {
	o, ok := k.(*object)
	if !ok {
		return true
	}
	return s.m.gcmIVs.use(gcmKeyOf(s, o), iv)
}

// GenerateGCMIV is mech.Slot's (generateIV).
func (s *slot) GenerateGCMIV(k mech.Key, iv []byte, fixedBits int, gen uint64) error {
	o, ok := k.(*object)
	if !ok {
		return ck.Errorf(ck.CKR_KEY_HANDLE_INVALID, "CKM_AES_GCM: no key object to generate an IV for")
	}
	return generateIV(s, o, iv, fixedBits, gen)
}

// KeyObject is mech.Slot's (keyObject).
func (s *slot) KeyObject(h uint64) (mech.Key, error) {
	o, _, _, err := s.keyObject(h)
	if err != nil {
		return nil, err
	}
	return o, nil
}

var _ mech.Key = (*object)(nil)

// Attrs is mech.Key's.
func (o *object) Attrs() attr.Map { return o.attrs }

// Handle is mech.Key's.
func (o *object) Handle() uint64 { return o.handle }

// Class is mech.Key's (class).
func (o *object) Class() uint64 { return o.class() }

// KeyType is mech.Key's (keyType).
func (o *object) KeyType() uint64 { return o.keyType() }

// Complete is mech.Key's.
func (o *object) Complete() bool { return o.complete }

// SecretValue is mech.Key's (secretValue).
func (o *object) SecretValue() ([]byte, error) { return o.secretValue() }

var _ mech.Op = (*operation)(nil)

// Key is mech.Op's.
func (op *operation) Key() mech.Key {
	if op.key == nil {
		return nil
	}
	return op.key
}

// Kind is mech.Op's.
func (op *operation) Kind() mech.OpKind { return op.kind }

// Accumulator is mech.Op's.
func (op *operation) Accumulator() hash.Hash { return op.digest }

// Stream is mech.Op's.
func (op *operation) Stream() mech.SymStream { return op.stream }

// Slot is the operation's slot as the mechanism side sees it.
func (op *operation) Slot() mech.Slot { return op.slot }

// OutBuf is mech.Op's.
func (op *operation) OutBuf(n int) []byte {
	if len(op.out) < n {
		return nil
	}
	return op.out[:0]
}
