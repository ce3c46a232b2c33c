package token

// PKCS#11 3.2's verification with the signature given at Init:
// C_VerifySignatureInit, C_VerifySignature, C_VerifySignatureUpdate,
// C_VerifySignatureFinal. The operation is a verify operation (the same
// mechanisms, keys and checks as C_VerifyInit, and the session's one
// verify slot: C_VerifyInit while it is active is CKR_OPERATION_ACTIVE)
// that keeps the signature; the C_Verify functions refuse it, and the
// C_VerifySignature functions refuse a C_VerifyInit operation, with
// CKR_OPERATION_NOT_INITIALIZED, leaving it active. The verification
// itself is C_Verify's or C_VerifyFinal's, with the kept signature.

import (
	"bytes"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// errSigGiven refuses a C_Verify function on a C_VerifySignatureInit
// operation.
func errSigGiven(fn string) error {
	return ck.Errorf(ck.CKR_OPERATION_NOT_INITIALIZED, "%s on an operation begun by C_VerifySignatureInit", fn)
}

// VerifySignatureInit is C_VerifySignatureInit.
func (m *Module) VerifySignatureInit(sh uint64, mc *Mechanism, key uint64, sig []byte) error {
	if err := m.initOp(sh, mech.OpVerify, mc, key); err != nil {
		return err
	}
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	op, err := ss.active(mech.OpVerify)
	if err != nil {
		return err
	}
	op.sigGiven, op.signature = true, bytes.Clone(sig)
	return nil
}

// sigOp returns the active C_VerifySignatureInit operation.
func (ss *session) sigOp(fn string) (*operation, error) {
	op, err := ss.active(mech.OpVerify)
	if err != nil {
		return nil, err
	}
	if !op.sigGiven {
		return nil, ck.Errorf(ck.CKR_OPERATION_NOT_INITIALIZED, "%s on an operation begun by C_VerifyInit", fn)
	}
	return op, nil
}

// VerifySignature is C_VerifySignature (single-part); it ends the
// operation.
func (m *Module) VerifySignature(sh uint64, in []byte) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	op, err := ss.sigOp("C_VerifySignature")
	if err != nil {
		return err
	}
	if op.multi {
		return ss.fail(mech.OpVerify, ck.Errorf(ck.CKR_OPERATION_ACTIVE, "C_VerifySignature after C_VerifySignatureUpdate"))
	}
	ss.end(mech.OpVerify)
	input := in
	if op.digest != nil {
		op.digest.Write(in)
		input = op.digest.Sum(nil)
	}
	return op.mech.(mech.Verifier).Verify(op, input, op.signature)
}

// VerifySignatureUpdate is C_VerifySignatureUpdate.
func (m *Module) VerifySignatureUpdate(sh uint64, in []byte) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	if _, err := ss.sigOp("C_VerifySignatureUpdate"); err != nil {
		return err
	}
	return ss.update(mech.OpVerify, in)
}

// VerifySignatureFinal is C_VerifySignatureFinal; it ends the operation.
func (m *Module) VerifySignatureFinal(sh uint64) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	op, err := ss.sigOp("C_VerifySignatureFinal")
	if err != nil {
		return err
	}
	ss.end(mech.OpVerify)
	if op.digest == nil {
		return op.singlePart()
	}
	return op.mech.(mech.Verifier).Verify(op, op.digest.Sum(nil), op.signature)
}
