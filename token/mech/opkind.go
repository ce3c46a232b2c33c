package mech

// OpKind is a kind of cryptographic operation; a session has at most one
// active operation of each kind.
type OpKind int

const (
	// OpSign ... OpDigest are the classic operations (C_SignInit ...).
	OpSign OpKind = iota
	OpVerify
	OpEncrypt
	OpDecrypt
	OpDigest
	// OpDerive is C_DeriveKey: a single call, never installed in ops.
	OpDerive
	// The message-based operations of PKCS#11 3.0 (token/message.go).
	OpMessageEncrypt
	OpMessageDecrypt
	OpMessageSign
	OpMessageVerify
	// OpKinds is the number of kinds.
	OpKinds
)

// OpNames are the kinds' names, for messages.
var OpNames = [OpKinds]string{"sign", "verify", "encrypt", "decrypt", "digest", "derive",
	"message encrypt", "message decrypt", "message sign", "message verify"}
