package token

// The message-based functions of PKCS#11 3.0 (base specification §5.x,
// message-based encryption, decryption, signing and verification):
// C_MessageEncryptInit, C_EncryptMessage, C_EncryptMessageBegin,
// C_EncryptMessageNext, C_MessageEncryptFinal and their decryption,
// signature and verification counterparts.
//
//   - A message operation is an operation kind of its own
//     (opMessageEncrypt ...), beside the classic ones in the session. It
//     lasts from its Init to its Final and serves any number of messages,
//     one at a time: each single-part (C_EncryptMessage) or begun and
//     continued (C_EncryptMessageBegin, C_EncryptMessageNext up to the part
//     flagged CKF_END_OF_MESSAGE; for signatures, the C_SignMessageNext
//     with a non-NULL pulSignatureLen).
//   - Init checks what the classic Init checks (initOp): the mechanism's
//     CKF_MESSAGE_* flag, the key, its usage attribute (CKA_ENCRYPT for
//     message encryption ...), its size, the login. An encryption mechanism
//     takes no parameter at Init, each message brings its own
//     (CK_GCM_MESSAGE_PARAMS: IV, generator, tag; mech/aes_gcm_msg.go); a
//     signature mechanism takes its usual parameter at Init and none per
//     message.
//   - An error ends the message in progress, not the operation (only Final
//     does, and a failed login check); CKR_BUFFER_TOO_SMALL and a length
//     report end nothing.
//   - The two-call convention: an AEAD's output length is known before any
//     work (the ciphertext is as long as the plaintext, the tag goes to the
//     parameter), so a length report computes nothing, generates no IV and
//     keeps nothing: every call that produces output is computed for its
//     own input. A signature's length report computes the signature and
//     keeps it with its data; a retry with other data computes afresh.
//   - Begin/Next of an AEAD buffers the message (at most maxBuffered
//     bytes): the ciphertext or plaintext comes whole with the last part,
//     and a plaintext only after its tag matched. A signature's parts feed
//     the mechanism's accumulator (a mechanism without a cloneable one has
//     its parts buffered instead).

import (
	"bytes"
	"hash"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// narrowMessageFlags drops the message flags whose classic operation a
// slot's offer dropped (a slot that cannot sign with a mechanism cannot
// sign messages with it).
func narrowMessageFlags(f uint64) uint64 {
	for _, p := range [...][2]uint64{
		{ck.CKF_MESSAGE_ENCRYPT, ck.CKF_ENCRYPT}, {ck.CKF_MESSAGE_DECRYPT, ck.CKF_DECRYPT},
		{ck.CKF_MESSAGE_SIGN, ck.CKF_SIGN}, {ck.CKF_MESSAGE_VERIFY, ck.CKF_VERIFY},
	} {
		if f&p[1] == 0 {
			f &^= p[0]
		}
	}
	if f&mech.MessageKinds == 0 {
		f &^= ck.CKF_MULTI_MESSAGE
	}
	return f
}

// isMessageKind reports a message-based operation kind.
func isMessageKind(kind mech.OpKind) bool {
	return kind >= mech.OpMessageEncrypt && kind <= mech.OpMessageVerify
}

// bindFor binds the mechanism to its Init parameter for kind: a message
// encryption or decryption takes none (each message brings its own).
// prev, when not nil, is the bound mechanism of the session's last ended
// operation of kind, whose memory the binding may reuse.
func bindFor(kind mech.OpKind, m mech.Mechanism, cm *Mechanism, prev mech.Mechanism) (mech.Mechanism, error) {
	if kind == mech.OpMessageEncrypt || kind == mech.OpMessageDecrypt {
		if len(cm.Param) != 0 || cm.Decoded() {
			return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s takes its parameter with each message, none at C_Message*Init", m.Base().Name())
		}
		return m, nil
	}
	return mech.BindParamReusing(m, cm, prev)
}

// msgState is a message operation's state between calls.
type msgState struct {
	active bool              // a message begun (Begin) and not finished
	aead   *mech.AEADMessage // the message of an encryption or decryption
	one    *operation        // the message of a signature or verification
	buf    []byte            // its parts, when one's accumulator cannot be cloned
	buffer bool              // parts go to buf, not to one.digest
	kept   []byte            // a signature computed for a length report
	keptIn []byte            // the data it was computed for
	keptBy int               // the call that kept it (keptSingle, keptNext)
}

// The calls that keep a signature for the two-call convention.
const (
	keptSingle = iota + 1 // C_SignMessage
	keptNext              // the last C_SignMessageNext
)

// endMessage forgets the message in progress (its buffered data wiped).
func (st *msgState) endMessage() {
	clear(st.buf)
	if st.aead != nil {
		clear(st.aead.S.Buf)
	}
	st.forget()
	*st = msgState{}
}

// forget drops a kept signature.
func (st *msgState) forget() {
	clear(st.keptIn)
	st.kept, st.keptIn, st.keptBy = nil, nil, 0
}

// msgActive returns the session's message operation of kind, its key's
// use checked (a failed check ends the operation).
func (ss *session) msgActive(kind mech.OpKind) (*operation, error) {
	op, err := ss.active(kind)
	if err != nil {
		return nil, err
	}
	if err := op.checkUse(); err != nil {
		return nil, ss.fail(kind, err)
	}
	return op, nil
}

// messageOp is one message's signature or verification operation (kind
// opSign or opVerify): the message operation's mechanism and key with a
// fresh accumulator.
func (op *operation) messageOp(kind mech.OpKind) (*operation, error) {
	one := &operation{kind: kind, mech: op.mech, key: op.key, slot: op.slot, needLogin: op.needLogin, epoch: op.epoch}
	if err := one.InitInput(); err != nil {
		return nil, err
	}
	return one, nil
}

// messageInit starts a message operation of kind.
func (m *Module) messageInit(sh uint64, kind mech.OpKind, mc *Mechanism, key uint64) error {
	return m.initOp(sh, kind, mc, key)
}

// messageFinal ends the message operation of kind.
func (m *Module) messageFinal(sh uint64, kind mech.OpKind) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	if _, err := ss.active(kind); err != nil {
		return err
	}
	ss.end(kind)
	return nil
}

// MessageEncryptInit is C_MessageEncryptInit.
func (m *Module) MessageEncryptInit(sh uint64, mc *Mechanism, key uint64) error {
	return m.messageInit(sh, mech.OpMessageEncrypt, mc, key)
}

// MessageDecryptInit is C_MessageDecryptInit.
func (m *Module) MessageDecryptInit(sh uint64, mc *Mechanism, key uint64) error {
	return m.messageInit(sh, mech.OpMessageDecrypt, mc, key)
}

// MessageSignInit is C_MessageSignInit.
func (m *Module) MessageSignInit(sh uint64, mc *Mechanism, key uint64) error {
	return m.messageInit(sh, mech.OpMessageSign, mc, key)
}

// MessageVerifyInit is C_MessageVerifyInit.
func (m *Module) MessageVerifyInit(sh uint64, mc *Mechanism, key uint64) error {
	return m.messageInit(sh, mech.OpMessageVerify, mc, key)
}

// MessageEncryptFinal is C_MessageEncryptFinal.
func (m *Module) MessageEncryptFinal(sh uint64) error {
	return m.messageFinal(sh, mech.OpMessageEncrypt)
}

// MessageDecryptFinal is C_MessageDecryptFinal.
func (m *Module) MessageDecryptFinal(sh uint64) error {
	return m.messageFinal(sh, mech.OpMessageDecrypt)
}

// MessageSignFinal is C_MessageSignFinal.
func (m *Module) MessageSignFinal(sh uint64) error { return m.messageFinal(sh, mech.OpMessageSign) }

// MessageVerifyFinal is C_MessageVerifyFinal.
func (m *Module) MessageVerifyFinal(sh uint64) error { return m.messageFinal(sh, mech.OpMessageVerify) }

// lenOut applies the two-call convention to an output of need bytes
// known before any work: ok reports that the output is to be computed.
func lenOut(need int, out Out) (ok bool, err error) {
	if out.Query {
		return false, nil
	}
	if out.Cap < need {
		return false, ck.Errorf(ck.CKR_BUFFER_TOO_SMALL, "need %d bytes, have %d", need, out.Cap)
	}
	return true, nil
}

// aeadLenErr is the length error of an AEAD's input.
func aeadLenErr(encrypt bool) ck.Error {
	if encrypt {
		return ck.CKR_DATA_LEN_RANGE
	}
	return ck.CKR_ENCRYPTED_DATA_LEN_RANGE
}

// onMessage runs fn on the session's message operation of kind, locked,
// its key's use checked: begun says fn continues a message (Next: one
// must be in progress) or starts one (single-part or Begin: none may be).
func (m *Module) onMessage(sh uint64, kind mech.OpKind, begun bool, fn func(op *operation, st *msgState) error) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	op, err := ss.msgActive(kind)
	if err != nil {
		return err
	}
	switch st := op.msg; {
	case begun && !st.active:
		return ck.Errorf(ck.CKR_OPERATION_NOT_INITIALIZED, "no message begun (C_*MessageBegin)")
	case !begun && st.active:
		return ck.Errorf(ck.CKR_OPERATION_ACTIVE, "a multi-part message is in progress (C_*MessageBegin)")
	}
	return fn(op, op.msg)
}

// cryptMessage is C_EncryptMessage and C_DecryptMessage: one message in a
// single part.
func (m *Module) cryptMessage(sh uint64, kind mech.OpKind, p *GCMMessageParams, aad, in []byte, out Out) (r []byte, need int, mo *MessageOut, err error) {
	encrypt := kind == mech.OpMessageEncrypt
	err = m.onMessage(sh, kind, false, func(op *operation, _ *msgState) error {
		mc := op.mech.(mech.MessageCipher)
		if err := mc.CheckMessageParam(p); err != nil {
			return err
		}
		if len(in) > mech.MaxBuffered {
			return ck.Errorf(aeadLenErr(encrypt), "a message of %d bytes, at most %d", len(in), mech.MaxBuffered)
		}
		need = len(in)
		if ok, err := lenOut(need, out); !ok {
			return err
		}
		am, err := mc.BeginMessage(op, p, aad, encrypt)
		if err != nil {
			return err
		}
		if r, mo, err = am.Finish(in, p); err != nil {
			return err
		}
		if am.Generated {
			mo.IV = am.IV
		}
		return nil
	})
	if err != nil && !isBufferTooSmall(err) {
		need = 0
	}
	return r, need, mo, err
}

// isBufferTooSmall reports a CKR_BUFFER_TOO_SMALL (whose need stands).
func isBufferTooSmall(err error) bool { return ck.RV(err) == uint64(ck.CKR_BUFFER_TOO_SMALL) }

// cryptMessageBegin is C_EncryptMessageBegin and C_DecryptMessageBegin.
func (m *Module) cryptMessageBegin(sh uint64, kind mech.OpKind, p *GCMMessageParams, aad []byte) (mo *MessageOut, err error) {
	err = m.onMessage(sh, kind, false, func(op *operation, st *msgState) error {
		mc := op.mech.(mech.MessageCipher)
		if err := mc.CheckMessageParam(p); err != nil {
			return err
		}
		am, err := mc.BeginMessage(op, p, aad, kind == mech.OpMessageEncrypt)
		if err != nil {
			return err
		}
		st.active, st.aead = true, am
		mo = &MessageOut{}
		if am.Generated {
			mo.IV = am.IV
		}
		return nil
	})
	return mo, err
}

// cryptMessageNext is C_EncryptMessageNext and C_DecryptMessageNext; end
// is CKF_END_OF_MESSAGE. Before the last part the output is empty. An
// error other than CKR_BUFFER_TOO_SMALL ends the message.
func (m *Module) cryptMessageNext(sh uint64, kind mech.OpKind, p *GCMMessageParams, in []byte, out Out, end bool) (r []byte, need int, mo *MessageOut, err error) {
	err = m.onMessage(sh, kind, true, func(op *operation, st *msgState) error {
		err := nextPart(op, st, p, in, out, end, &r, &need, &mo)
		if err != nil && !isBufferTooSmall(err) {
			st.endMessage()
		}
		return err
	})
	return r, need, mo, err
}

// nextPart is one C_*MessageNext of the message st holds.
func nextPart(op *operation, st *msgState, p *GCMMessageParams, in []byte, out Out, end bool, r *[]byte, need *int, mo **MessageOut) error {
	am := st.aead
	if p != nil {
		if err := op.mech.(mech.MessageCipher).CheckMessageParam(p); err != nil {
			return err
		}
		if int(p.TagBits/8) != am.S.P.TagLen {
			return ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "ulTagBits %d, the message began with %d", p.TagBits, 8*am.S.P.TagLen)
		}
	}
	if _, err := am.S.UpdateLen(len(in)); err != nil {
		return err
	}
	if !end {
		if ok, err := lenOut(0, out); !ok {
			return err
		}
		*r = []byte{}
		_, err := am.S.Update(nil, in)
		return err
	}
	if p == nil {
		return ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "the last part needs CK_GCM_MESSAGE_PARAMS (the tag)")
	}
	*need = len(am.S.Buf) + len(in)
	if ok, err := lenOut(*need, out); !ok {
		return err
	}
	var err error
	*r, *mo, err = am.Finish(in, p)
	st.endMessage()
	return err
}

// EncryptMessage is C_EncryptMessage: the ciphertext, and in MessageOut
// the tag and the IV the token generated.
func (m *Module) EncryptMessage(sh uint64, p *GCMMessageParams, aad, in []byte, out Out) ([]byte, int, *MessageOut, error) {
	return m.cryptMessage(sh, mech.OpMessageEncrypt, p, aad, in, out)
}

// EncryptMessageBegin is C_EncryptMessageBegin: MessageOut carries the IV
// the token generated.
func (m *Module) EncryptMessageBegin(sh uint64, p *GCMMessageParams, aad []byte) (*MessageOut, error) {
	return m.cryptMessageBegin(sh, mech.OpMessageEncrypt, p, aad)
}

// EncryptMessageNext is C_EncryptMessageNext; with end the ciphertext and
// the tag (MessageOut).
func (m *Module) EncryptMessageNext(sh uint64, p *GCMMessageParams, in []byte, out Out, end bool) ([]byte, int, *MessageOut, error) {
	return m.cryptMessageNext(sh, mech.OpMessageEncrypt, p, in, out, end)
}

// DecryptMessage is C_DecryptMessage: the plaintext, released only after
// the tag of p matched (CKR_ENCRYPTED_DATA_INVALID otherwise).
func (m *Module) DecryptMessage(sh uint64, p *GCMMessageParams, aad, in []byte, out Out) ([]byte, int, error) {
	r, n, _, err := m.cryptMessage(sh, mech.OpMessageDecrypt, p, aad, in, out)
	return r, n, err
}

// DecryptMessageBegin is C_DecryptMessageBegin.
func (m *Module) DecryptMessageBegin(sh uint64, p *GCMMessageParams, aad []byte) error {
	_, err := m.cryptMessageBegin(sh, mech.OpMessageDecrypt, p, aad)
	return err
}

// DecryptMessageNext is C_DecryptMessageNext; with end, the whole
// plaintext once the tag of p matched.
func (m *Module) DecryptMessageNext(sh uint64, p *GCMMessageParams, in []byte, out Out, end bool) ([]byte, int, error) {
	r, n, _, err := m.cryptMessageNext(sh, mech.OpMessageDecrypt, p, in, out, end)
	return r, n, err
}

// noMessageParam refuses a per-message parameter (the signature
// mechanisms take theirs at Init).
func noMessageParam(op *operation, hasParam bool) error {
	if hasParam {
		return ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s takes no per-message parameter", op.mech.Base().Name())
	}
	return nil
}

// keptOr returns the kept signature for (by, in), or computes and keeps
// it, then applies the two-call convention: released (and forgotten) when
// it fits.
func (st *msgState) keptOr(by int, in []byte, out Out, compute func() ([]byte, error)) ([]byte, int, bool, error) {
	if st.keptBy != by || !bytes.Equal(st.keptIn, in) {
		st.forget()
		r, err := compute()
		if err != nil {
			return nil, 0, false, err
		}
		st.kept, st.keptIn, st.keptBy = r, bytes.Clone(in), by
	}
	need := len(st.kept)
	if ok, err := lenOut(need, out); !ok {
		return nil, need, false, err
	}
	r := st.kept
	st.forget()
	return r, need, true, nil
}

// signInput feeds data to one's accumulator (if any) and returns what
// the mechanism signs or verifies.
func signInput(one *operation, data []byte) []byte {
	if one.digest == nil {
		return data
	}
	one.digest.Write(data)
	return one.digest.Sum(nil)
}

// onSigned is onMessage for a message sign or verify operation, which
// takes no per-message parameter (an error of a continued message ends
// it).
func (m *Module) onSigned(sh uint64, kind mech.OpKind, hasParam, begun bool, fn func(op *operation, st *msgState) error) error {
	return m.onMessage(sh, kind, begun, func(op *operation, st *msgState) error {
		if err := noMessageParam(op, hasParam); err != nil {
			if begun {
				st.endMessage()
			}
			return err
		}
		return fn(op, st)
	})
}

// SignMessage is C_SignMessage (hasParam: a non-NULL pParameter).
func (m *Module) SignMessage(sh uint64, hasParam bool, data []byte, out Out) (sig []byte, need int, err error) {
	err = m.onSigned(sh, mech.OpMessageSign, hasParam, false, func(op *operation, st *msgState) error {
		var done bool
		var err error
		sig, need, done, err = st.keptOr(keptSingle, data, out, func() ([]byte, error) {
			one, err := op.messageOp(mech.OpSign)
			if err != nil {
				return nil, err
			}
			return one.mech.(mech.Signer).Sign(one, signInput(one, data))
		})
		if done {
			op.authed = false // an always-authenticate key: one message per context login
		}
		return err
	})
	return sig, need, err
}

// beginSigned starts a message of a sign or verify operation.
func (m *Module) beginSigned(sh uint64, kind, one mech.OpKind, hasParam bool) error {
	return m.onSigned(sh, kind, hasParam, false, func(op *operation, st *msgState) error {
		o, err := op.messageOp(one)
		if err != nil {
			return err
		}
		st.forget()
		st.active, st.one, st.buffer = true, o, !cloneable(o.digest)
		return nil
	})
}

// cloneable reports whether h can be cloned (the last part's signature is
// then computed on a clone, so that a retry of the two-call convention
// finds the accumulator as it was).
func cloneable(h hash.Hash) bool {
	c, ok := h.(hash.Cloner)
	if !ok {
		return false
	}
	_, err := c.Clone()
	return err == nil
}

// feed adds a part to the message in progress (a message too long for
// the buffer ends).
func (st *msgState) feed(data []byte) error {
	st.forget()
	if !st.buffer {
		st.one.digest.Write(data)
		return nil
	}
	if len(st.buf)+len(data) > mech.MaxBuffered {
		st.endMessage()
		return ck.Errorf(ck.CKR_DATA_LEN_RANGE, "a message of more than %d bytes", mech.MaxBuffered)
	}
	st.buf = append(st.buf, data...)
	return nil
}

// lastInput returns what the mechanism signs or verifies for the message
// whose last part is data, leaving the message's state as it was, and
// the operation to sign or verify it with.
func (st *msgState) lastInput(data []byte) (*operation, []byte, error) {
	if st.buffer {
		one, err := st.one.messageOp(st.one.kind)
		if err != nil {
			return nil, nil, err
		}
		all := append(append(make([]byte, 0, len(st.buf)+len(data)), st.buf...), data...)
		return one, signInput(one, all), nil
	}
	c, err := st.one.digest.(hash.Cloner).Clone()
	if err != nil {
		return nil, nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "accumulator: %v", err)
	}
	c.Write(data)
	return st.one, c.Sum(nil), nil
}

// SignMessageBegin is C_SignMessageBegin.
func (m *Module) SignMessageBegin(sh uint64, hasParam bool) error {
	return m.beginSigned(sh, mech.OpMessageSign, mech.OpSign, hasParam)
}

// SignMessageNext is C_SignMessageNext: last (a non-NULL pulSignatureLen)
// ends the message with its signature under the two-call convention.
func (m *Module) SignMessageNext(sh uint64, hasParam bool, data []byte, last bool, out Out) (sig []byte, need int, err error) {
	err = m.onSigned(sh, mech.OpMessageSign, hasParam, true, func(op *operation, st *msgState) error {
		if !last {
			return st.feed(data)
		}
		var done bool
		var err error
		sig, need, done, err = st.keptOr(keptNext, data, out, func() ([]byte, error) {
			one, input, err := st.lastInput(data)
			if err != nil {
				return nil, err
			}
			return one.mech.(mech.Signer).Sign(one, input)
		})
		switch {
		case done:
			st.endMessage()
			op.authed = false
		case err != nil && ck.RV(err) != uint64(ck.CKR_BUFFER_TOO_SMALL):
			st.endMessage()
		}
		return err
	})
	return sig, need, err
}

// VerifyMessage is C_VerifyMessage: CKR_SIGNATURE_INVALID or
// CKR_SIGNATURE_LEN_RANGE for a signature that does not verify.
func (m *Module) VerifyMessage(sh uint64, hasParam bool, data, sig []byte) error {
	return m.onSigned(sh, mech.OpMessageVerify, hasParam, false, func(op *operation, _ *msgState) error {
		one, err := op.messageOp(mech.OpVerify)
		if err != nil {
			return err
		}
		return one.mech.(mech.Verifier).Verify(one, signInput(one, data), sig)
	})
}

// VerifyMessageBegin is C_VerifyMessageBegin.
func (m *Module) VerifyMessageBegin(sh uint64, hasParam bool) error {
	return m.beginSigned(sh, mech.OpMessageVerify, mech.OpVerify, hasParam)
}

// VerifyMessageNext is C_VerifyMessageNext: sig non-nil (pSignature
// non-NULL) is the last part, which ends the message with the verdict.
func (m *Module) VerifyMessageNext(sh uint64, hasParam bool, data, sig []byte) error {
	return m.onSigned(sh, mech.OpMessageVerify, hasParam, true, func(_ *operation, st *msgState) error {
		if sig == nil {
			return st.feed(data)
		}
		defer st.endMessage()
		one, input, err := st.lastInput(data)
		if err != nil {
			return err
		}
		return one.mech.(mech.Verifier).Verify(one, input, sig)
	})
}
