package token

// The symmetric operations' common shape. An encryption or decryption
// mechanism with a newStream function gets a symStream at Init: C_Encrypt
// and C_Decrypt run it once (update then final), the Update calls feed it
// with their output length known beforehand, and Final ends it. A MAC
// mechanism (HMAC, CMAC) gets a running hash.Hash (newMAC) in op.digest,
// which C_Sign*/C_Verify* feed like a hash-then-sign digest; its sign and
// verify functions then only truncate and compare.

import (
	"hash"

	"github.com/modexp-token/modexp-token/token/ck"
)

// symStream is the state of one symmetric encryption or decryption.
type symStream interface {
	// updateLen is the output length of an update with n more input
	// bytes, without changing the state; an input the mechanism cannot
	// take (too much buffered data) is an error.
	updateLen(n int) (int, error)
	// update consumes in and returns updateLen(len(in)) output bytes.
	update(in []byte) ([]byte, error)
	// final returns the last output: the remaining blocks, padding, the
	// tag; a length or padding error carries CKR_DATA_LEN_RANGE,
	// CKR_ENCRYPTED_DATA_LEN_RANGE or CKR_ENCRYPTED_DATA_INVALID.
	final() ([]byte, error)
}

// maxBuffered bounds the data a stream holds back until Final (AES-GCM
// buffers the whole message).
const maxBuffered = 64 << 20

// streamOnce is C_Encrypt/C_Decrypt of a stream mechanism.
func streamOnce(op *operation, in []byte) ([]byte, error) {
	if _, err := op.stream.updateLen(len(in)); err != nil {
		return nil, err
	}
	a, err := op.stream.update(in)
	if err != nil {
		return nil, err
	}
	b, err := op.stream.final()
	if err != nil {
		return nil, err
	}
	if len(a) == 0 {
		return b, nil
	}
	return append(a, b...), nil
}

// initSymmetric prepares the stream or MAC of a symmetric operation at
// Init.
func (op *operation) initSymmetric() error {
	mech := op.mech
	var err error
	switch {
	case mech.newStream != nil && (op.kind == opEncrypt || op.kind == opDecrypt):
		op.stream, err = mech.newStream(op)
	case mech.newMAC != nil && (op.kind == opSign || op.kind == opVerify):
		var h hash.Hash
		h, err = mech.newMAC(op)
		op.digest = h
	}
	return err
}

// macSign returns the first op.macLen bytes of the MAC.
func macSign(op *operation, mac []byte) ([]byte, error) {
	return append([]byte(nil), mac[:op.macLen()]...), nil
}

// macVerify compares a MAC in constant time; its length must be the
// mechanism's (CKR_SIGNATURE_LEN_RANGE).
func macVerify(op *operation, mac, sig []byte) error {
	n := op.macLen()
	if len(sig) != n {
		return ck.Errorf(ck.CKR_SIGNATURE_LEN_RANGE, "MAC of %d bytes, want %d", len(sig), n)
	}
	if !equalCT(mac[:n], sig) {
		return ck.Errorf(ck.CKR_SIGNATURE_INVALID, "MAC mismatch")
	}
	return nil
}

// macLen is the MAC length of the operation: the _GENERAL mechanisms'
// parameter, else the full output.
func (op *operation) macLen() int {
	if n, ok := op.params.(macLenParam); ok {
		return int(n)
	}
	return op.digest.Size()
}

// macLenParam is a decoded CK_MAC_GENERAL_PARAMS.
type macLenParam uint64

// macGeneralParams decodes CK_MAC_GENERAL_PARAMS (a CK_ULONG, as raw
// bytes): 1 to max bytes, else CKR_MECHANISM_PARAM_INVALID.
func macGeneralParams(max int) func(mech *mechanism, m *Mechanism) (any, error) {
	return func(mech *mechanism, m *Mechanism) (any, error) {
		n, ok := ck.ParseULong(m.Param)
		if !ok || m.decoded() {
			return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s needs CK_MAC_GENERAL_PARAMS", ck.Name("CKM_", mech.typ))
		}
		if n < 1 || n > uint64(max) {
			return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s: MAC of %d bytes, want 1 to %d", ck.Name("CKM_", mech.typ), n, max)
		}
		return macLenParam(n), nil
	}
}

// decoded reports whether the C layer decoded a structured parameter (a
// mechanism that takes raw bytes refuses one).
func (m *Mechanism) decoded() bool {
	return m.PSS != nil || m.OAEP != nil || m.ECDH != nil || m.EdDSA != nil || m.GCM != nil
}
