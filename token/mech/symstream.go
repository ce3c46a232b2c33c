package mech

// The symmetric operations' common shape. A StreamCipher gets a SymStream
// at Init: C_Encrypt and C_Decrypt run it once (update then final), the
// Update calls feed it with their output length known beforehand, and
// Final ends it. A MAC mechanism (macMech: HMAC, CMAC, CBC-MAC) is
// MultiPart: its accumulator is the running MAC in op.Accumulator(), which
// C_Sign*/C_Verify* feed like a hash-then-sign digest; its sign and verify
// then only truncate and compare.

import (
	"hash"
	"unsafe"

	"github.com/modexp-token/modexp-token/token/ck"
)

// SymStream is the state of one symmetric encryption or decryption.
type SymStream interface {
	// UpdateLen is the output length of an update with n more input
	// bytes, without changing the state; an input the mechanism cannot
	// take (too much buffered data) is an error.
	UpdateLen(n int) (int, error)
	// Update consumes in and returns updateLen(len(in)) output bytes,
	// written into dst when dst is at least that long (dst is then the
	// caller's output buffer, or nil: the output is allocated). dst and in
	// do not overlap (or, in a single-part call, start at one address).
	Update(dst, in []byte) ([]byte, error)
	// Final returns the last output: the remaining blocks, padding, the
	// tag; a length or padding error carries CKR_DATA_LEN_RANGE,
	// CKR_ENCRYPTED_DATA_LEN_RANGE or CKR_ENCRYPTED_DATA_INVALID.
	Final() ([]byte, error)
}

// MaxBuffered bounds the data a stream holds back until Final (AES-GCM
// buffers the whole message).
const MaxBuffered = 64 << 20

// onceStream is a SymStream that runs a whole single-part call straight
// into one output buffer: no input held back, no intermediate output (the
// single-part CBC and GCM calls; a 64 KiB message is then encrypted from
// the caller's input into the caller's output, with nothing allocated).
type onceStream interface {
	// onceLen is the output length of a single-part call on n input
	// bytes (for a padded decryption, an upper bound), or the length
	// error of that call.
	onceLen(n int) (int, error)
	// once runs the call, writing into dst (len(dst) == onceLen), which
	// is either disjoint from in or starts where in starts; it returns
	// the output, a prefix of dst. On an error dst holds no output.
	once(dst, in []byte) ([]byte, error)
}

// StreamOnce is C_Encrypt/C_Decrypt of a stream mechanism. dst, when long
// enough, receives the output (the caller's buffer: Out.Buf); otherwise the
// output is allocated.
func StreamOnce(op Op, in, dst []byte) ([]byte, error) {
	if os, ok := op.Stream().(onceStream); ok {
		n, err := os.onceLen(len(in))
		if err != nil {
			return nil, err
		}
		if len(dst) < n || overlapsInexactly(dst[:n], in) {
			dst = make([]byte, n)
		}
		return os.once(dst[:n], in)
	}
	n, err := op.Stream().UpdateLen(len(in))
	if err != nil {
		return nil, err
	}
	if overlapsInexactly(dst, in) { // in place is fine: nothing is held back yet
		dst = nil
	}
	a, err := op.Stream().Update(dst, in)
	if err != nil {
		return nil, err
	}
	b, err := op.Stream().Final()
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return a, nil
	}
	if len(a) == 0 {
		return b, nil
	}
	if len(dst) >= n+len(b) {
		return append(dst[:n:len(dst)], b...), nil
	}
	return append(a[:len(a):len(a)], b...), nil
}

// Overlaps reports whether x and y share memory.
func Overlaps(x, y []byte) bool {
	if len(x) == 0 || len(y) == 0 {
		return false
	}
	xs, ys := uintptr(unsafe.Pointer(&x[0])), uintptr(unsafe.Pointer(&y[0]))
	return xs < ys+uintptr(len(y)) && ys < xs+uintptr(len(x))
}

// overlapsInexactly reports whether x and y share memory without starting
// at the same address (an in-place call is fine, a shifted one is not).
func overlapsInexactly(x, y []byte) bool {
	return Overlaps(x, y) && &x[0] != &y[0]
}

// macMech is a MAC mechanism (hmac.go, aes_cmac.go,
// aes_mac.go): its accumulator is the running MAC, and sign and
// verify only truncate and compare. A _GENERAL form (maxLen > 0) takes
// CK_MAC_GENERAL_PARAMS, the MAC length n; the others take no parameter
// and give the full MAC (CKM_AES_MAC: its fixed n, half a block).
type macMech struct {
	MechBase
	newMAC func(op Op) (hash.Hash, error)
	maxLen int // the _GENERAL forms' longest MAC (0: not a _GENERAL form)
	n      int // the bound MAC length (0: the full output; CKM_AES_MAC: half a block)
}

// withParam decodes CK_MAC_GENERAL_PARAMS (a CK_ULONG, as raw bytes): 1
// to maxLen bytes, else CKR_MECHANISM_PARAM_INVALID.
func (m *macMech) withParam(cm *CKMechanism) (Mechanism, error) {
	if m.maxLen == 0 {
		if err := noParam(m, cm); err != nil {
			return nil, err
		}
		return m, nil
	}
	n, ok := ck.ParseULong(cm.Param)
	if !ok || cm.Decoded() {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s needs CK_MAC_GENERAL_PARAMS", m.Name())
	}
	if n < 1 || n > uint64(m.maxLen) {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s: MAC of %d bytes, want 1 to %d", m.Name(), n, m.maxLen)
	}
	b := *m
	b.n = int(n)
	return &b, nil
}

func (m *macMech) Accumulator(op Op) (hash.Hash, error) { return m.newMAC(op) }

// Sign returns the first macLen bytes of the MAC.
func (m *macMech) Sign(op Op, mac []byte) ([]byte, error) {
	return append([]byte(nil), mac[:m.macLen(op)]...), nil
}

// Verify compares a MAC in constant time; its length must be the
// mechanism's (CKR_SIGNATURE_LEN_RANGE).
func (m *macMech) Verify(op Op, mac, sig []byte) error {
	n := m.macLen(op)
	if len(sig) != n {
		return ck.Errorf(ck.CKR_SIGNATURE_LEN_RANGE, "MAC of %d bytes, want %d", len(sig), n)
	}
	if !EqualCT(mac[:n], sig) {
		return ck.Errorf(ck.CKR_SIGNATURE_INVALID, "MAC mismatch")
	}
	return nil
}

// macLen is the MAC length of the operation: the _GENERAL mechanisms'
// parameter, else the full output.
func (m *macMech) macLen(op Op) int {
	if m.n != 0 {
		return m.n
	}
	return op.Accumulator().Size()
}
