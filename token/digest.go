package token

// Digests (C_Digest*).

import (
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// DigestInit is C_DigestInit.
func (m *Module) DigestInit(sh uint64, mc *Mechanism) error {
	return m.initOp(sh, mech.OpDigest, mc, 0)
}

// Digest is C_Digest (single-part).
func (m *Module) Digest(sh uint64, in []byte, out Out) ([]byte, int, error) {
	ss, err := m.lock(sh)
	if err != nil {
		return nil, 0, err
	}
	defer ss.mu.Unlock()
	if op := ss.ops[mech.OpDigest]; op != nil && op.multi {
		// C_Digest always ends the operation unless it reports a length.
		return nil, 0, ss.fail(mech.OpDigest, ck.Errorf(ck.CKR_OPERATION_ACTIVE, "C_Digest after C_DigestUpdate"))
	}
	return ss.output(mech.OpDigest, callSingle, in, out, func(op *operation) ([]byte, error) {
		op.digest.Write(in)
		return op.digest.Sum(nil), nil
	})
}

// DigestUpdate is C_DigestUpdate.
func (m *Module) DigestUpdate(sh uint64, in []byte) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	op, err := ss.active(mech.OpDigest)
	if err != nil {
		return err
	}
	if op.done {
		return ck.Errorf(ck.CKR_OPERATION_ACTIVE, "digest finished; collect its result")
	}
	op.multi = true
	op.digest.Write(in)
	return nil
}

// DigestKey is C_DigestKey: it feeds a secret key's value to the active
// digest (sensitive keys too: the digest, not the value, leaves the
// token). The values of public and private keys are not digested: such a
// key answers CKR_KEY_INDIGESTIBLE, which ends the operation; so does a
// secret key whose value is sealed (not logged in).
func (m *Module) DigestKey(sh, key uint64) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	op, err := ss.active(mech.OpDigest)
	if err != nil {
		return err
	}
	if op.done {
		return ck.Errorf(ck.CKR_OPERATION_ACTIVE, "digest finished; collect its result")
	}
	o, err := ss.slot.object(key)
	if err != nil {
		return ss.fail(mech.OpDigest, ck.Errorf(ck.CKR_KEY_HANDLE_INVALID, "key %d", key))
	}
	switch c := o.class(); {
	case c != ck.CKO_PUBLIC_KEY && c != ck.CKO_PRIVATE_KEY && c != ck.CKO_SECRET_KEY:
		return ss.fail(mech.OpDigest, ck.Errorf(ck.CKR_KEY_HANDLE_INVALID, "object %d is not a key", key))
	case c != ck.CKO_SECRET_KEY:
		return ss.fail(mech.OpDigest, ck.Errorf(ck.CKR_KEY_INDIGESTIBLE, "key %d has no digestible value", key))
	}
	v, err := o.secretValue()
	if err != nil {
		return ss.fail(mech.OpDigest, ck.Errorf(ck.CKR_KEY_INDIGESTIBLE, "key %d: value sealed", key))
	}
	op.multi = true
	op.digest.Write(v)
	return nil
}

// DigestFinal is C_DigestFinal.
func (m *Module) DigestFinal(sh uint64, out Out) ([]byte, int, error) {
	ss, err := m.lock(sh)
	if err != nil {
		return nil, 0, err
	}
	defer ss.mu.Unlock()
	return ss.output(mech.OpDigest, callFinal, nil, out, func(op *operation) ([]byte, error) {
		return op.digest.Sum(nil), nil
	})
}
