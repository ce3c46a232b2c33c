package mech

// The message-based encryption of PKCS#11 3.0 as a mechanism sees it:
// the per-message parameter, what goes back, MessageCipher and the
// CKF_MESSAGE_* flags the interfaces earn.

import "github.com/modexp-token/modexp-token/token/ck"

// GCMMessageParams is CK_GCM_MESSAGE_PARAMS as the C layer decoded it: IV
// is a copy of the caller's pIv (ulIvLen bytes), Tag a copy of pTag
// (ulTagBits/8 bytes: the tag to check on decryption; unused on
// encryption).
type GCMMessageParams struct {
	IV        []byte
	FixedBits uint64 // ulIvFixedBits
	Generator uint64 // ivGenerator: a CKG_ value
	Tag       []byte
	TagBits   uint64
}

// MessageOut is what an encryption hands back through the caller's
// CK_GCM_MESSAGE_PARAMS: the IV the token generated (nil: the caller's,
// unchanged) and the tag (nil: none yet).
type MessageOut struct {
	IV, Tag []byte
}

// MessageCipher is an AEAD mechanism that serves message-based encryption
// and decryption (CKF_MESSAGE_ENCRYPT, CKF_MESSAGE_DECRYPT).
type MessageCipher interface {
	Mechanism
	// CheckMessageParam checks a message's parameter before any work.
	CheckMessageParam(p *GCMMessageParams) error
	// BeginMessage starts one message under op's key: the IV generated
	// (encryption, when p asks for it) or checked, the AAD bound.
	BeginMessage(op Op, p *GCMMessageParams, aad []byte, encrypt bool) (*AEADMessage, error)
}

// The flags of the message-based functions.
const (
	MessageKinds = ck.CKF_MESSAGE_ENCRYPT | ck.CKF_MESSAGE_DECRYPT | ck.CKF_MESSAGE_SIGN | ck.CKF_MESSAGE_VERIFY
	MessageMask  = MessageKinds | ck.CKF_MULTI_MESSAGE
)

// messageFlags are the CKF_MESSAGE_* flags m's interfaces earn: a
// MessageCipher encrypts and decrypts messages, every signer and verifier
// signs and verifies them, all of them in parts too (CKF_MULTI_MESSAGE).
func messageFlags(m Mechanism) uint64 {
	var f uint64
	if _, ok := m.(MessageCipher); ok {
		f |= ck.CKF_MESSAGE_ENCRYPT | ck.CKF_MESSAGE_DECRYPT
	}
	if _, ok := m.(Signer); ok {
		f |= ck.CKF_MESSAGE_SIGN
	}
	if _, ok := m.(Verifier); ok {
		f |= ck.CKF_MESSAGE_VERIFY
	}
	if f != 0 {
		f |= ck.CKF_MULTI_MESSAGE
	}
	return f
}
