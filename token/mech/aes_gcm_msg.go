package mech

// CKM_AES_GCM for the message-based functions (token/message.go): each message
// brings a CK_GCM_MESSAGE_PARAMS (PKCS#11 3.0 current mechanisms, AES-GCM).
//
//   - pIv is ulIvLen bytes (1 to 4096). On encryption, ivGenerator
//     CKG_NO_GENERATE takes the caller's IV, under the slot's
//     gcm_caller_iv switch and the repeated-IV window (token/gcmiv.go), as
//     C_EncryptInit does; CKG_GENERATE, CKG_GENERATE_COUNTER,
//     CKG_GENERATE_RANDOM and CKG_GENERATE_COUNTER_XOR have the token make
//     the bits after the first ulIvFixedBits (token/gcmgen.go), which must leave
//     at least one; the IV used is written back into pIv (the C layer).
//     Any other generator is CKR_MECHANISM_PARAM_INVALID. On decryption
//     pIv is the IV the encryption used; the generator and ulIvFixedBits
//     are not looked at.
//   - ulTagBits is one of GCM's tag lengths (as for CK_GCM_PARAMS); the
//     tag is written to pTag on encryption and read from it on decryption.

import (
	"github.com/modexp-token/modexp-token/token/ck"
)

// AEADMessage is one message of a message-based AES-GCM operation.
type AEADMessage struct {
	S         *gcmStream
	IV        []byte // the IV used
	Generated bool   // the token made iv (it goes back to the caller)
}

// CheckMessageParam is MessageCipher's.
func (m *AESGCM) CheckMessageParam(p *GCMMessageParams) error {
	if p == nil {
		return ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKM_AES_GCM: each message needs CK_GCM_MESSAGE_PARAMS")
	}
	if len(p.IV) < 1 || len(p.IV) > gcmMaxIV {
		return ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKM_AES_GCM: IV of %d bytes, want 1 to %d", len(p.IV), gcmMaxIV)
	}
	switch p.TagBits {
	case 32, 64, 96, 104, 112, 120, 128:
	default:
		return ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKM_AES_GCM: tag of %d bits", p.TagBits)
	}
	switch p.Generator {
	case ck.CKG_NO_GENERATE, ck.CKG_GENERATE, ck.CKG_GENERATE_COUNTER, ck.CKG_GENERATE_RANDOM, ck.CKG_GENERATE_COUNTER_XOR:
	default:
		return ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKM_AES_GCM: IV generator %#x", p.Generator)
	}
	return nil
}

// MessageIV is the IV of one message under op's key for the checked p:
// the caller's (checked and recorded on encryption), or generated.
func MessageIV(op Op, p *GCMMessageParams, encrypt bool) (iv []byte, generated bool, err error) {
	iv = append([]byte(nil), p.IV...)
	switch {
	case !encrypt:
		return iv, false, nil
	case p.Generator == ck.CKG_NO_GENERATE:
		return iv, false, checkCallerIV(op, iv)
	case p.FixedBits >= uint64(8*len(iv)):
		return nil, false, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKM_AES_GCM: ulIvFixedBits %d leaves none of the IV's %d bits to generate", p.FixedBits, 8*len(iv))
	}
	return iv, true, op.Slot().GenerateGCMIV(op.Key(), iv, int(p.FixedBits), p.Generator)
}

// BeginMessage is MessageCipher's.
func (m *AESGCM) BeginMessage(op Op, p *GCMMessageParams, aad []byte, encrypt bool) (*AEADMessage, error) {
	iv, generated, err := MessageIV(op, p, encrypt)
	if err != nil {
		return nil, err
	}
	am := &AEADMessage{IV: iv, Generated: generated}
	k, err := aesPrepared(op)
	if err != nil {
		return nil, err
	}
	gp := &gcmParam{iv: iv, aad: append([]byte(nil), aad...), TagLen: int(p.TagBits / 8), ivUsed: true}
	if am.S, err = newGCMStream(k, gp, encrypt); err != nil {
		return nil, err
	}
	return am, nil
}

// Finish ends the message with its last part: the ciphertext and the tag
// (encryption), or the plaintext once p's tag matched (decryption).
func (am *AEADMessage) Finish(last []byte, p *GCMMessageParams) ([]byte, *MessageOut, error) {
	s := am.S
	defer clear(s.Buf) // the buffered message, plaintext on encryption
	if _, err := s.Update(nil, last); err != nil {
		return nil, nil, err
	}
	if !s.encrypt {
		if len(p.Tag) != s.P.TagLen {
			return nil, nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKM_AES_GCM: a tag of %d bytes, ulTagBits says %d", len(p.Tag), s.P.TagLen)
		}
		s.Buf = append(s.Buf, p.Tag...)
		pt, err := s.Final()
		if err != nil {
			return nil, nil, err
		}
		return pt, &MessageOut{}, nil
	}
	sealed, err := s.Final()
	if err != nil {
		return nil, nil, err
	}
	n := len(sealed) - s.P.TagLen
	return sealed[:n], &MessageOut{Tag: sealed[n:]}, nil
}
