package ck

// PKCS#11 3.0 values of the message-based functions (base specification
// §5.x, "Message-based encryption" ... "Message-based verification") and
// of CK_GCM_MESSAGE_PARAMS (current mechanisms §2.x, AES-GCM), absent from
// p11-kit's header. CKG_GENERATE_COUNTER_XOR (3.2) is in v32.go.
const (
	// CK_MECHANISM_INFO flags: the mechanism serves C_MessageEncryptInit,
	// C_MessageDecryptInit, C_MessageSignInit, C_MessageVerifyInit, and
	// (CKF_MULTI_MESSAGE) the Begin/Next calls. C_SessionCancel takes the
	// first four too.
	CKF_MESSAGE_ENCRYPT = 0x2
	CKF_MESSAGE_DECRYPT = 0x4
	CKF_MESSAGE_SIGN    = 0x8
	CKF_MESSAGE_VERIFY  = 0x10
	CKF_MULTI_MESSAGE   = 0x20

	// CKF_END_OF_MESSAGE: the flag of C_EncryptMessageNext and
	// C_DecryptMessageNext marking the last part of a message.
	CKF_END_OF_MESSAGE = 0x1

	// CK_GENERATOR_FUNCTION: how the token makes a message's IV.
	CKG_NO_GENERATE      = 0x0
	CKG_GENERATE         = 0x1
	CKG_GENERATE_COUNTER = 0x2
	CKG_GENERATE_RANDOM  = 0x3
)
