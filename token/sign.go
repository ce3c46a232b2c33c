package token

// Signing and verification: C_Sign*, C_Verify* and the RSA signature
// mechanisms (PKCS#1 v1.5, raw X.509, PSS, and their hash-then-sign forms).

import (
	"crypto/rand"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/rsapad"
)

// SignInit is C_SignInit.
func (m *Module) SignInit(sh uint64, mech *Mechanism, key uint64) error {
	return m.initOp(sh, opSign, mech, key)
}

// Sign is C_Sign (single-part).
func (m *Module) Sign(sh uint64, in []byte, out Out) ([]byte, int, error) {
	ss, err := m.lock(sh)
	if err != nil {
		return nil, 0, err
	}
	defer ss.mu.Unlock()
	if op := ss.ops[opSign]; op != nil && op.multi {
		// C_Sign always ends the operation unless it reports a length.
		return nil, 0, ss.fail(opSign, ck.Errorf(ck.CKR_OPERATION_ACTIVE, "C_Sign after C_SignUpdate"))
	}
	return ss.output(opSign, out, func(op *operation) ([]byte, error) {
		if err := op.checkUse(); err != nil {
			return nil, err
		}
		input := in
		if op.digest != nil {
			op.digest.Write(in)
			input = op.digest.Sum(nil)
		}
		return op.mech.sign(op, input)
	})
}

// update feeds a multi-part sign or verify operation.
func (ss *session) update(kind opKind, in []byte) error {
	op, err := ss.active(kind)
	if err != nil {
		return err
	}
	if op.done {
		return ck.Errorf(ck.CKR_OPERATION_ACTIVE, "operation already finished; collect its result")
	}
	if op.mech.singlePart || op.digest == nil {
		return ss.fail(kind, ck.Errorf(ck.CKR_FUNCTION_NOT_SUPPORTED, "%s is single-part", ck.Name("CKM_", op.mech.typ)))
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
	return ss.update(opSign, in)
}

// SignFinal is C_SignFinal.
func (m *Module) SignFinal(sh uint64, out Out) ([]byte, int, error) {
	ss, err := m.lock(sh)
	if err != nil {
		return nil, 0, err
	}
	defer ss.mu.Unlock()
	return ss.output(opSign, out, func(op *operation) ([]byte, error) {
		if op.mech.singlePart || op.digest == nil {
			return nil, ck.Errorf(ck.CKR_FUNCTION_NOT_SUPPORTED, "%s is single-part", ck.Name("CKM_", op.mech.typ))
		}
		if err := op.checkUse(); err != nil {
			return nil, err
		}
		return op.mech.sign(op, op.digest.Sum(nil))
	})
}

// VerifyInit is C_VerifyInit.
func (m *Module) VerifyInit(sh uint64, mech *Mechanism, key uint64) error {
	return m.initOp(sh, opVerify, mech, key)
}

// Verify is C_Verify (single-part); it always ends the operation.
func (m *Module) Verify(sh uint64, in, sig []byte) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	op, err := ss.active(opVerify)
	if err != nil {
		return err
	}
	if op.multi {
		return ss.fail(opVerify, ck.Errorf(ck.CKR_OPERATION_ACTIVE, "C_Verify after C_VerifyUpdate"))
	}
	ss.end(opVerify)
	input := in
	if op.digest != nil {
		op.digest.Write(in)
		input = op.digest.Sum(nil)
	}
	return op.mech.verify(op, input, sig)
}

// VerifyUpdate is C_VerifyUpdate.
func (m *Module) VerifyUpdate(sh uint64, in []byte) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	return ss.update(opVerify, in)
}

// VerifyFinal is C_VerifyFinal; it always ends the operation.
func (m *Module) VerifyFinal(sh uint64, sig []byte) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	op, err := ss.active(opVerify)
	if err != nil {
		return err
	}
	ss.end(opVerify)
	if op.mech.singlePart || op.digest == nil {
		return ck.Errorf(ck.CKR_FUNCTION_NOT_SUPPORTED, "%s is single-part", ck.Name("CKM_", op.mech.typ))
	}
	return op.mech.verify(op, op.digest.Sum(nil), sig)
}

// checkSigLen: an RSA signature is exactly the modulus length.
func checkSigLen(op *operation, sig []byte) error {
	if len(sig) != op.keyBytes() {
		return ck.Errorf(ck.CKR_SIGNATURE_LEN_RANGE, "signature of %d bytes, want %d", len(sig), op.keyBytes())
	}
	return nil
}

// recover runs the public operation on a signature; a signature not below
// the modulus is invalid.
func recoverEM(op *operation, sig []byte) ([]byte, error) {
	if err := checkSigLen(op, sig); err != nil {
		return nil, err
	}
	em, err := op.rsaPublic(sig)
	return em, withCode(err, ck.CKR_DATA_INVALID, ck.CKR_SIGNATURE_INVALID)
}

// CKM_RSA_PKCS: the input is the DigestInfo (or any data up to k−11 bytes).
func rsaPKCSSign(op *operation, in []byte) ([]byte, error) {
	k := op.keyBytes()
	if err := dataLen("CKM_RSA_PKCS sign", len(in), k-11); err != nil {
		return nil, err
	}
	em, err := rsapad.EncodePKCS1v15Sign(in, k)
	if err != nil {
		return nil, padErr("sign", err, ck.CKR_DATA_LEN_RANGE)
	}
	return op.rsaPrivate(em)
}

func rsaPKCSVerify(op *operation, in, sig []byte) error {
	if err := dataLen("CKM_RSA_PKCS verify", len(in), op.keyBytes()-11); err != nil {
		return err
	}
	em, err := recoverEM(op, sig)
	if err != nil {
		return err
	}
	if err := rsapad.VerifyPKCS1v15Sign(in, em); err != nil {
		return padErr("verify", err, ck.CKR_DATA_LEN_RANGE)
	}
	return nil
}

// CKM_SHA*_RSA_PKCS: the input is the digest of the data.
func rsaPKCSHashSign(op *operation, digest []byte) ([]byte, error) {
	t, err := rsapad.DigestInfo(op.mech.hash, digest)
	if err != nil {
		return nil, padErr("sign", err, ck.CKR_KEY_SIZE_RANGE)
	}
	em, err := rsapad.EncodePKCS1v15Sign(t, op.keyBytes())
	if err != nil {
		return nil, padErr("sign", err, ck.CKR_KEY_SIZE_RANGE)
	}
	return op.rsaPrivate(em)
}

func rsaPKCSHashVerify(op *operation, digest, sig []byte) error {
	t, err := rsapad.DigestInfo(op.mech.hash, digest)
	if err != nil {
		return padErr("verify", err, ck.CKR_KEY_SIZE_RANGE)
	}
	em, err := recoverEM(op, sig)
	if err != nil {
		return err
	}
	if err := rsapad.VerifyPKCS1v15Sign(t, em); err != nil {
		return padErr("verify", err, ck.CKR_KEY_SIZE_RANGE)
	}
	return nil
}

// CKM_RSA_X_509: raw RSA; the input is an integer below the modulus.
func rsaRawSign(op *operation, in []byte) ([]byte, error) {
	k := op.keyBytes()
	if err := dataLen("CKM_RSA_X_509 sign", len(in), k); err != nil {
		return nil, err
	}
	return op.rsaPrivate(leftPad(in, k))
}

func rsaRawVerify(op *operation, in, sig []byte) error {
	k := op.keyBytes()
	if err := dataLen("CKM_RSA_X_509 verify", len(in), k); err != nil {
		return err
	}
	m, err := recoverEM(op, sig)
	if err != nil {
		return err
	}
	if !equalCT(m, leftPad(in, k)) {
		return ck.Errorf(ck.CKR_SIGNATURE_INVALID, "raw RSA signature mismatch")
	}
	return nil
}

// CKM_RSA_PKCS_PSS and CKM_SHA*_RSA_PKCS_PSS: the input is the digest.
func rsaPSSSign(op *operation, digest []byte) ([]byte, error) {
	p := op.params.(*pssParams)
	if len(digest) != p.hash.Size() {
		return nil, ck.Errorf(ck.CKR_DATA_LEN_RANGE, "PSS input of %d bytes, %v needs %d", len(digest), p.hash, p.hash.Size())
	}
	em, err := rsapad.EncodePSS(digest, op.keyBits()-1, p.hash, p.mgf, p.saltLen, rand.Reader)
	if err != nil {
		return nil, padErr("sign", err, ck.CKR_DATA_LEN_RANGE)
	}
	return op.rsaPrivate(leftPad(em, op.keyBytes()))
}

func rsaPSSVerify(op *operation, digest, sig []byte) error {
	p := op.params.(*pssParams)
	if len(digest) != p.hash.Size() {
		return ck.Errorf(ck.CKR_DATA_LEN_RANGE, "PSS input of %d bytes, %v needs %d", len(digest), p.hash, p.hash.Size())
	}
	em, err := recoverEM(op, sig)
	if err != nil {
		return err
	}
	if err := rsapad.VerifyPSS(digest, em, op.keyBits()-1, p.hash, p.mgf, p.saltLen); err != nil {
		return padErr("verify", err, ck.CKR_DATA_LEN_RANGE)
	}
	return nil
}
