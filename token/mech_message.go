package token

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

// messageCipher is an AEAD mechanism that serves message-based encryption
// and decryption (CKF_MESSAGE_ENCRYPT, CKF_MESSAGE_DECRYPT).
type messageCipher interface {
	mechanism
	// checkMessageParam checks a message's parameter before any work.
	checkMessageParam(p *GCMMessageParams) error
	// beginMessage starts one message under op's key: the IV generated
	// (encryption, when p asks for it) or checked, the AAD bound.
	beginMessage(op opView, p *GCMMessageParams, aad []byte, encrypt bool) (*aeadMessage, error)
}

// The flags of the message-based functions.
const (
	messageKinds = ck.CKF_MESSAGE_ENCRYPT | ck.CKF_MESSAGE_DECRYPT | ck.CKF_MESSAGE_SIGN | ck.CKF_MESSAGE_VERIFY
	messageMask  = messageKinds | ck.CKF_MULTI_MESSAGE
)

// messageFlags are the CKF_MESSAGE_* flags m's interfaces earn: a
// messageCipher encrypts and decrypts messages, every signer and verifier
// signs and verifies them, all of them in parts too (CKF_MULTI_MESSAGE).
func messageFlags(m mechanism) uint64 {
	var f uint64
	if _, ok := m.(messageCipher); ok {
		f |= ck.CKF_MESSAGE_ENCRYPT | ck.CKF_MESSAGE_DECRYPT
	}
	if _, ok := m.(signer); ok {
		f |= ck.CKF_MESSAGE_SIGN
	}
	if _, ok := m.(verifier); ok {
		f |= ck.CKF_MESSAGE_VERIFY
	}
	if f != 0 {
		f |= ck.CKF_MULTI_MESSAGE
	}
	return f
}
