package token

// Encryption and decryption: C_Encrypt*, C_Decrypt*. A StreamCipher
// (mech_aes_*.go) is multi-part through the SymStream made at Init
// (mech/symstream.go); an encrypter or decrypter alone (the RSA mechanisms) is
// one-shot: the Update and Final calls answer CKR_FUNCTION_NOT_SUPPORTED
// and end the operation.

import (
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// EncryptInit is C_EncryptInit.
func (m *Module) EncryptInit(sh uint64, mc *Mechanism, key uint64) error {
	return m.initOp(sh, mech.OpEncrypt, mc, key)
}

// Encrypt is C_Encrypt.
func (m *Module) Encrypt(sh uint64, in []byte, out Out) ([]byte, int, error) {
	return m.crypt(sh, mech.OpEncrypt, in, out)
}

// EncryptUpdate is C_EncryptUpdate (not supported by the RSA mechanisms).
func (m *Module) EncryptUpdate(sh uint64, in []byte, out Out) ([]byte, int, error) {
	return m.cryptUpdate(sh, mech.OpEncrypt, in, out)
}

// EncryptFinal is C_EncryptFinal (not supported by the RSA mechanisms).
func (m *Module) EncryptFinal(sh uint64, out Out) ([]byte, int, error) {
	return m.cryptFinal(sh, mech.OpEncrypt, out)
}

// DecryptInit is C_DecryptInit.
func (m *Module) DecryptInit(sh uint64, mc *Mechanism, key uint64) error {
	return m.initOp(sh, mech.OpDecrypt, mc, key)
}

// Decrypt is C_Decrypt.
func (m *Module) Decrypt(sh uint64, in []byte, out Out) ([]byte, int, error) {
	return m.crypt(sh, mech.OpDecrypt, in, out)
}

// DecryptUpdate is C_DecryptUpdate (not supported by the RSA mechanisms).
func (m *Module) DecryptUpdate(sh uint64, in []byte, out Out) ([]byte, int, error) {
	return m.cryptUpdate(sh, mech.OpDecrypt, in, out)
}

// DecryptFinal is C_DecryptFinal (not supported by the RSA mechanisms).
func (m *Module) DecryptFinal(sh uint64, out Out) ([]byte, int, error) {
	return m.cryptFinal(sh, mech.OpDecrypt, out)
}

func (m *Module) crypt(sh uint64, kind mech.OpKind, in []byte, out Out) ([]byte, int, error) {
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
	return ss.output(kind, callSingle, in, out, func(op *operation) ([]byte, error) {
		if err := op.checkUse(); err != nil {
			return nil, err
		}
		switch {
		case op.stream != nil:
			return mech.StreamOnce(op, in, out.Buf)
		case kind == mech.OpEncrypt:
			return op.mech.(mech.Encrypter).Encrypt(op, in)
		}
		return op.mech.(mech.Decrypter).Decrypt(op, in)
	})
}

// cryptUpdate is C_EncryptUpdate and C_DecryptUpdate: the output length is
// known before any work (SymStream.updateLen), so a length query or a short
// buffer leaves the operation as it was.
func (m *Module) cryptUpdate(sh uint64, kind mech.OpKind, in []byte, out Out) ([]byte, int, error) {
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
		return nil, 0, ss.fail(kind, op.singlePart())
	}
	if op.done {
		return nil, 0, ck.Errorf(ck.CKR_OPERATION_ACTIVE, "operation already finished; collect its result")
	}
	if err := op.checkUse(); err != nil {
		return nil, 0, ss.fail(kind, err)
	}
	need, err := op.stream.UpdateLen(len(in))
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
	dst := out.Buf
	if len(dst) < need || mech.Overlaps(dst, in) {
		dst = nil
	}
	r, err := op.stream.Update(dst, in)
	if err != nil {
		return nil, 0, ss.fail(kind, err)
	}
	return r, len(r), nil
}

// cryptFinal is C_EncryptFinal and C_DecryptFinal.
func (m *Module) cryptFinal(sh uint64, kind mech.OpKind, out Out) ([]byte, int, error) {
	ss, err := m.lock(sh)
	if err != nil {
		return nil, 0, err
	}
	defer ss.mu.Unlock()
	return ss.output(kind, callFinal, nil, out, func(op *operation) ([]byte, error) {
		if op.stream == nil {
			return nil, op.singlePart()
		}
		if err := op.checkUse(); err != nil {
			return nil, err
		}
		return op.stream.Final()
	})
}
