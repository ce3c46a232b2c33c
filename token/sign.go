package token

// Signing and verification: C_Sign*, C_Verify* for every signature and
// MAC mechanism (a signer and verifier, mech/mechanism.go). The mechanism's
// accumulation policy decides the shape: a MultiPart mechanism got its
// accumulator (op.digest) at Init, which C_Sign and the Update calls feed
// and whose Sum is signed; a one-shot mechanism (op.digest nil) signs the
// data of C_Sign as given and answers CKR_FUNCTION_NOT_SUPPORTED to
// Update and Final (ending the operation).

import (
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// SignInit is C_SignInit.
func (m *Module) SignInit(sh uint64, mc *Mechanism, key uint64) error {
	return m.initOp(sh, mech.OpSign, mc, key)
}

// Sign is C_Sign (single-part).
func (m *Module) Sign(sh uint64, in []byte, out Out) ([]byte, int, error) {
	ss, err := m.lock(sh)
	if err != nil {
		return nil, 0, err
	}
	defer ss.mu.Unlock()
	if op := ss.ops[mech.OpSign]; op != nil && op.multi {
		// C_Sign always ends the operation unless it reports a length.
		return nil, 0, ss.fail(mech.OpSign, ck.Errorf(ck.CKR_OPERATION_ACTIVE, "C_Sign after C_SignUpdate"))
	}
	return ss.output(mech.OpSign, callSingle, in, out, func(op *operation) ([]byte, error) {
		if err := op.checkUse(); err != nil {
			return nil, err
		}
		input := in
		if op.digest != nil {
			op.digest.Write(in)
			input = op.digest.Sum(op.sum[:0])
		}
		return signInto(op, input, out)
	})
}

// update feeds a multi-part sign or verify operation.
func (ss *session) update(kind mech.OpKind, in []byte) error {
	op, err := ss.active(kind)
	if err != nil {
		return err
	}
	if op.done {
		return ck.Errorf(ck.CKR_OPERATION_ACTIVE, "operation already finished; collect its result")
	}
	if op.digest == nil {
		return ss.fail(kind, op.singlePart())
	}
	if err := op.checkUse(); err != nil {
		return ss.fail(kind, err)
	}
	op.multi = true
	op.digest.Write(in)
	return nil
}

// SignUpdate is C_SignUpdate.
func (m *Module) SignUpdate(sh uint64, in []byte) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	return ss.update(mech.OpSign, in)
}

// SignFinal is C_SignFinal.
func (m *Module) SignFinal(sh uint64, out Out) ([]byte, int, error) {
	ss, err := m.lock(sh)
	if err != nil {
		return nil, 0, err
	}
	defer ss.mu.Unlock()
	return ss.output(mech.OpSign, callFinal, nil, out, func(op *operation) ([]byte, error) {
		if op.digest == nil {
			return nil, op.singlePart()
		}
		if err := op.checkUse(); err != nil {
			return nil, err
		}
		return signInto(op, op.digest.Sum(op.sum[:0]), out)
	})
}

// signInto signs input with op's mechanism, which may write the signature
// into the caller's buffer (out.Buf, mech.Op's OutBuf) instead of
// allocating, unless that buffer overlaps the input (a caller signing in
// place: the check before release reads the input again).
func signInto(op *operation, input []byte, out Out) ([]byte, error) {
	if !mech.Overlaps(out.Buf, input) {
		op.out = out.Buf
	}
	defer func() { op.out = nil }()
	return op.mech.(mech.Signer).Sign(op, input)
}

// VerifyInit is C_VerifyInit.
func (m *Module) VerifyInit(sh uint64, mc *Mechanism, key uint64) error {
	return m.initOp(sh, mech.OpVerify, mc, key)
}

// Verify is C_Verify (single-part); it always ends the operation.
func (m *Module) Verify(sh uint64, in, sig []byte) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	op, err := ss.active(mech.OpVerify)
	if err != nil {
		return err
	}
	if op.sigGiven {
		return errSigGiven("C_Verify")
	}
	if op.multi {
		return ss.fail(mech.OpVerify, ck.Errorf(ck.CKR_OPERATION_ACTIVE, "C_Verify after C_VerifyUpdate"))
	}
	ss.end(mech.OpVerify)
	input := in
	if op.digest != nil {
		op.digest.Write(in)
		input = op.digest.Sum(nil)
	}
	return op.mech.(mech.Verifier).Verify(op, input, sig)
}

// VerifyUpdate is C_VerifyUpdate.
func (m *Module) VerifyUpdate(sh uint64, in []byte) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	if op, err := ss.active(mech.OpVerify); err == nil && op.sigGiven {
		return errSigGiven("C_VerifyUpdate")
	}
	return ss.update(mech.OpVerify, in)
}

// VerifyFinal is C_VerifyFinal; it always ends the operation.
func (m *Module) VerifyFinal(sh uint64, sig []byte) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	op, err := ss.active(mech.OpVerify)
	if err != nil {
		return err
	}
	if op.sigGiven {
		return errSigGiven("C_VerifyFinal")
	}
	ss.end(mech.OpVerify)
	if op.digest == nil {
		return op.singlePart()
	}
	return op.mech.(mech.Verifier).Verify(op, op.digest.Sum(nil), sig)
}
