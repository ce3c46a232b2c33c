package token

// opKind is a kind of cryptographic operation; a session has at most one
// active operation of each kind.
type opKind int

const (
	opSign opKind = iota
	opVerify
	opEncrypt
	opDecrypt
	opDigest
	// opDerive is C_DeriveKey: a single call, never installed in ops.
	opDerive
	// The message-based operations of PKCS#11 3.0 (message.go).
	opMessageEncrypt
	opMessageDecrypt
	opMessageSign
	opMessageVerify
	opKinds
)

var opNames = [opKinds]string{"sign", "verify", "encrypt", "decrypt", "digest", "derive",
	"message encrypt", "message decrypt", "message sign", "message verify"}
