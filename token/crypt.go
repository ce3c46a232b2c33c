package token

// Encryption and decryption: C_Encrypt*, C_Decrypt* and the RSA mechanisms
// (PKCS#1 v1.5 block type 2, raw X.509, OAEP). RSA encryption is
// single-part (PKCS#11 3.0 §2.1.6–2.1.8): the Update and Final calls answer
// CKR_FUNCTION_NOT_SUPPORTED and end the operation. The symmetric
// mechanisms (mech_aes_*.go) are multi-part through a symStream made at
// Init (symstream.go).

import (
	"crypto/rand"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/rsapad"
)

// EncryptInit is C_EncryptInit.
func (m *Module) EncryptInit(sh uint64, mech *Mechanism, key uint64) error {
	return m.initOp(sh, opEncrypt, mech, key)
}

// Encrypt is C_Encrypt.
func (m *Module) Encrypt(sh uint64, in []byte, out Out) ([]byte, int, error) {
	return m.crypt(sh, opEncrypt, in, out)
}

// EncryptUpdate is C_EncryptUpdate (not supported by the RSA mechanisms).
func (m *Module) EncryptUpdate(sh uint64, in []byte, out Out) ([]byte, int, error) {
	return m.cryptUpdate(sh, opEncrypt, in, out)
}

// EncryptFinal is C_EncryptFinal (not supported by the RSA mechanisms).
func (m *Module) EncryptFinal(sh uint64, out Out) ([]byte, int, error) {
	return m.cryptFinal(sh, opEncrypt, out)
}

// DecryptInit is C_DecryptInit.
func (m *Module) DecryptInit(sh uint64, mech *Mechanism, key uint64) error {
	return m.initOp(sh, opDecrypt, mech, key)
}

// Decrypt is C_Decrypt.
func (m *Module) Decrypt(sh uint64, in []byte, out Out) ([]byte, int, error) {
	return m.crypt(sh, opDecrypt, in, out)
}

// DecryptUpdate is C_DecryptUpdate (not supported by the RSA mechanisms).
func (m *Module) DecryptUpdate(sh uint64, in []byte, out Out) ([]byte, int, error) {
	return m.cryptUpdate(sh, opDecrypt, in, out)
}

// DecryptFinal is C_DecryptFinal (not supported by the RSA mechanisms).
func (m *Module) DecryptFinal(sh uint64, out Out) ([]byte, int, error) {
	return m.cryptFinal(sh, opDecrypt, out)
}

func (m *Module) crypt(sh uint64, kind opKind, in []byte, out Out) ([]byte, int, error) {
	ss, err := m.lock(sh)
	if err != nil {
		return nil, 0, err
	}
	defer ss.mu.Unlock()
	if op := ss.ops[kind]; op != nil && op.multi {
		// C_Encrypt/C_Decrypt always end the operation unless they report a
		// length.
		return nil, 0, ss.fail(kind, ck.Errorf(ck.CKR_OPERATION_ACTIVE, "single-part call after an Update"))
	}
	return ss.output(kind, out, func(op *operation) ([]byte, error) {
		if err := op.checkUse(); err != nil {
			return nil, err
		}
		if kind == opEncrypt {
			return op.mech.encrypt(op, in)
		}
		return op.mech.decrypt(op, in)
	})
}

// cryptUpdate is C_EncryptUpdate and C_DecryptUpdate: the output length is
// known before any work (symStream.updateLen), so a length query or a short
// buffer leaves the operation as it was.
func (m *Module) cryptUpdate(sh uint64, kind opKind, in []byte, out Out) ([]byte, int, error) {
	ss, err := m.lock(sh)
	if err != nil {
		return nil, 0, err
	}
	defer ss.mu.Unlock()
	op, err := ss.active(kind)
	if err != nil {
		return nil, 0, err
	}
	if op.stream == nil {
		return nil, 0, ss.fail(kind, ck.Errorf(ck.CKR_FUNCTION_NOT_SUPPORTED, "%s is single-part", ck.Name("CKM_", op.mech.typ)))
	}
	if op.done {
		return nil, 0, ck.Errorf(ck.CKR_OPERATION_ACTIVE, "operation already finished; collect its result")
	}
	if err := op.checkUse(); err != nil {
		return nil, 0, ss.fail(kind, err)
	}
	need, err := op.stream.updateLen(len(in))
	if err != nil {
		return nil, 0, ss.fail(kind, err)
	}
	if out.Query {
		return nil, need, nil
	}
	if out.Cap < need {
		return nil, need, ck.Errorf(ck.CKR_BUFFER_TOO_SMALL, "need %d bytes, have %d", need, out.Cap)
	}
	op.multi = true
	r, err := op.stream.update(in)
	if err != nil {
		return nil, 0, ss.fail(kind, err)
	}
	return r, len(r), nil
}

// cryptFinal is C_EncryptFinal and C_DecryptFinal.
func (m *Module) cryptFinal(sh uint64, kind opKind, out Out) ([]byte, int, error) {
	ss, err := m.lock(sh)
	if err != nil {
		return nil, 0, err
	}
	defer ss.mu.Unlock()
	return ss.output(kind, out, func(op *operation) ([]byte, error) {
		if op.stream == nil {
			return nil, ck.Errorf(ck.CKR_FUNCTION_NOT_SUPPORTED, "%s is single-part", ck.Name("CKM_", op.mech.typ))
		}
		if err := op.checkUse(); err != nil {
			return nil, err
		}
		return op.stream.final()
	})
}

// checkCipherLen: an RSA ciphertext is exactly the modulus length.
func checkCipherLen(op *operation, in []byte) error {
	if len(in) != op.keyBytes() {
		return ck.Errorf(ck.CKR_ENCRYPTED_DATA_LEN_RANGE, "ciphertext of %d bytes, want %d", len(in), op.keyBytes())
	}
	return nil
}

// decryptRaw runs the private operation on a ciphertext.
func decryptRaw(op *operation, in []byte) ([]byte, error) {
	if err := checkCipherLen(op, in); err != nil {
		return nil, err
	}
	em, err := op.rsaPrivate(in)
	return em, withCode(err, ck.CKR_DATA_INVALID, ck.CKR_ENCRYPTED_DATA_INVALID)
}

func rsaPKCSEncrypt(op *operation, in []byte) ([]byte, error) {
	k := op.keyBytes()
	if err := dataLen("CKM_RSA_PKCS encrypt", len(in), k-11); err != nil {
		return nil, err
	}
	em, err := rsapad.EncodePKCS1v15Encrypt(in, k, rand.Reader)
	if err != nil {
		return nil, padErr("encrypt", err, ck.CKR_DATA_LEN_RANGE)
	}
	return op.rsaPublic(em)
}

// rsaPKCSDecrypt decrypts with implicit rejection (rsapad/implicit.go): a
// ciphertext whose padding is invalid gives CKR_OK and a synthetic message
// derived from the private exponent and the ciphertext, so neither the
// return code nor the output length says whether the padding was valid,
// and the decoding runs in constant time. Only public facts fail: a
// ciphertext that is not k bytes (CKR_ENCRYPTED_DATA_LEN_RANGE) or not
// below the modulus (CKR_ENCRYPTED_DATA_INVALID). The slot option
// rsa_pkcs_decrypt = false disables the mechanism for decryption.
func rsaPKCSDecrypt(op *operation, in []byte) ([]byte, error) {
	em, err := decryptRaw(op, in)
	if err != nil {
		return nil, err
	}
	k := op.keyBytes()
	irKey, err := rsapad.ImplicitRejectionKey(op.key.attrs[ck.CKA_PRIVATE_EXPONENT], k)
	if err != nil {
		return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored RSA key: %v", err)
	}
	defer clear(irKey)
	msg, err := rsapad.DecodePKCS1v15EncryptImplicit(em, in, irKey, k)
	clear(em)
	if err != nil {
		return nil, padErr("decrypt", err, ck.CKR_ENCRYPTED_DATA_INVALID)
	}
	return msg, nil
}

func rsaRawEncrypt(op *operation, in []byte) ([]byte, error) {
	k := op.keyBytes()
	if err := dataLen("CKM_RSA_X_509 encrypt", len(in), k); err != nil {
		return nil, err
	}
	return op.rsaPublic(leftPad(in, k))
}

func rsaRawDecrypt(op *operation, in []byte) ([]byte, error) { return decryptRaw(op, in) }

func rsaOAEPEncrypt(op *operation, in []byte) ([]byte, error) {
	p := op.params.(*oaepParams)
	em, err := rsapad.EncodeOAEP(in, p.label, op.keyBytes(), p.hash, p.mgf, rand.Reader)
	if err != nil {
		return nil, padErr("encrypt", err, ck.CKR_DATA_LEN_RANGE)
	}
	return op.rsaPublic(em)
}

func rsaOAEPDecrypt(op *operation, in []byte) ([]byte, error) {
	p := op.params.(*oaepParams)
	em, err := decryptRaw(op, in)
	if err != nil {
		return nil, err
	}
	msg, err := rsapad.DecodeOAEP(em, p.label, op.keyBytes(), p.hash, p.mgf)
	if err != nil {
		return nil, padErr("decrypt", err, ck.CKR_ENCRYPTED_DATA_INVALID)
	}
	return msg, nil
}
