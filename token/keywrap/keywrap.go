// Package keywrap is AES key wrap (RFC 3394, NIST SP 800-38F "KW") and AES
// key wrap with padding (RFC 5649, SP 800-38F "KWP") over a cipher.Block:
// the algorithms of CKM_AES_KEY_WRAP, CKM_AES_KEY_WRAP_PAD and
// CKM_AES_KEY_WRAP_KWP.
//
// Unwrapping checks the integrity value in constant time, and for KWP the
// length indicator and the zero padding too, so that every malformed input
// fails the same way ([ErrIntegrity]) after the same work. The package
// never keeps its inputs; the caller wipes plaintexts it no longer needs.
package keywrap

import (
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"errors"
)

// Errors. Unwrap and UnwrapPad answer ErrIntegrity for any wrapped key that
// does not authenticate, ErrLength for a length no wrap can produce; Wrap
// and WrapPad answer ErrLength for a plaintext they cannot wrap, ErrIV for
// an initial value of the wrong size.
var (
	ErrIntegrity = errors.New("keywrap: integrity check failed")
	ErrLength    = errors.New("keywrap: bad length")
	ErrIV        = errors.New("keywrap: bad initial value length")
)

// DefaultIV is RFC 3394's initial value; DefaultAIV is the first half of
// RFC 5649's alternative initial value (the second half is the length).
var (
	DefaultIV  = []byte{0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6}
	DefaultAIV = []byte{0xA6, 0x59, 0x59, 0xA6}
)

// maxBlocks bounds the plaintext (RFC 5649's 32-bit length indicator).
const maxBlocks = 1 << 29

// Wrap is RFC 3394's key wrap of plain (a multiple of 8 bytes, at least 16)
// with the initial value iv (nil: DefaultIV; else 8 bytes).
func Wrap(b cipher.Block, iv, plain []byte) ([]byte, error) {
	if iv == nil {
		iv = DefaultIV
	}
	if len(iv) != 8 {
		return nil, ErrIV
	}
	if len(plain)%8 != 0 || len(plain) < 16 || len(plain)/8 > maxBlocks {
		return nil, ErrLength
	}
	out := make([]byte, 8+len(plain))
	copy(out, iv)
	copy(out[8:], plain)
	wrapBlocks(b, out)
	return out, nil
}

// Unwrap undoes Wrap: wrapped is a multiple of 8 bytes, at least 24.
func Unwrap(b cipher.Block, iv, wrapped []byte) ([]byte, error) {
	if iv == nil {
		iv = DefaultIV
	}
	if len(iv) != 8 {
		return nil, ErrIV
	}
	if len(wrapped)%8 != 0 || len(wrapped) < 24 || len(wrapped)/8 > maxBlocks+1 {
		return nil, ErrLength
	}
	buf := append([]byte(nil), wrapped...)
	unwrapBlocks(b, buf)
	if subtle.ConstantTimeCompare(buf[:8], iv) != 1 {
		clear(buf)
		return nil, ErrIntegrity
	}
	out := append([]byte(nil), buf[8:]...)
	clear(buf)
	return out, nil
}

// WrapPad is RFC 5649's key wrap with padding of plain (1 byte or more)
// with the initial value prefix aiv (nil: DefaultAIV; else 4 bytes).
func WrapPad(b cipher.Block, aiv, plain []byte) ([]byte, error) {
	if aiv == nil {
		aiv = DefaultAIV
	}
	if len(aiv) != 4 {
		return nil, ErrIV
	}
	if len(plain) == 0 || len(plain) > 8*maxBlocks {
		return nil, ErrLength
	}
	padded := (len(plain) + 7) &^ 7
	out := make([]byte, 8+padded)
	copy(out, aiv)
	binary.BigEndian.PutUint32(out[4:8], uint32(len(plain)))
	copy(out[8:], plain)
	if padded == 8 {
		b.Encrypt(out, out)
		return out, nil
	}
	wrapBlocks(b, out)
	return out, nil
}

// UnwrapPad undoes WrapPad: wrapped is a multiple of 8 bytes, at least 16.
func UnwrapPad(b cipher.Block, aiv, wrapped []byte) ([]byte, error) {
	if aiv == nil {
		aiv = DefaultAIV
	}
	if len(aiv) != 4 {
		return nil, ErrIV
	}
	if len(wrapped)%8 != 0 || len(wrapped) < 16 || len(wrapped)/8 > maxBlocks+1 {
		return nil, ErrLength
	}
	buf := append([]byte(nil), wrapped...)
	if len(buf) == 16 {
		b.Decrypt(buf, buf)
	} else {
		unwrapBlocks(b, buf)
	}
	n := len(buf) - 8 // padded plaintext length
	mli32 := binary.BigEndian.Uint32(buf[4:8])
	mli := int(mli32 & 0x7fffffff) // the comparisons below take 31-bit values
	ok := subtle.ConstantTimeCompare(buf[:4], aiv)
	ok &= subtle.ConstantTimeEq(int32(mli32>>31), 0)
	// n-8 < mli ≤ n, as constant-time comparisons of public n with mli.
	ok &= subtle.ConstantTimeLessOrEq(n-7, mli) & subtle.ConstantTimeLessOrEq(mli, n)
	// Every byte of the last block at or past mli is zero.
	var pad byte
	for i := n - 8; i < n; i++ {
		past := byte(subtle.ConstantTimeLessOrEq(mli, i)) // i ≥ mli
		pad |= buf[8+i] & -past
	}
	ok &= subtle.ConstantTimeByteEq(pad, 0)
	if ok != 1 {
		clear(buf)
		return nil, ErrIntegrity
	}
	out := append([]byte(nil), buf[8:8+mli]...)
	clear(buf)
	return out, nil
}

// wrapBlocks is RFC 3394's wrapping process W over buf = A | R[1..n],
// in place (n ≥ 2).
func wrapBlocks(b cipher.Block, buf []byte) {
	n := len(buf)/8 - 1
	var blk [16]byte
	copy(blk[:8], buf[:8])
	for j := 0; j < 6; j++ {
		for i := 1; i <= n; i++ {
			r := buf[8*i : 8*i+8]
			copy(blk[8:], r)
			b.Encrypt(blk[:], blk[:])
			t := uint64(n*j + i)
			binary.BigEndian.PutUint64(blk[:8], binary.BigEndian.Uint64(blk[:8])^t)
			copy(r, blk[8:])
		}
	}
	copy(buf[:8], blk[:8])
	clear(blk[:])
}

// unwrapBlocks is RFC 3394's unwrapping process W⁻¹ over buf = C[0..n],
// in place: buf becomes A | R[1..n].
func unwrapBlocks(b cipher.Block, buf []byte) {
	n := len(buf)/8 - 1
	var blk [16]byte
	copy(blk[:8], buf[:8])
	for j := 5; j >= 0; j-- {
		for i := n; i >= 1; i-- {
			r := buf[8*i : 8*i+8]
			t := uint64(n*j + i)
			binary.BigEndian.PutUint64(blk[:8], binary.BigEndian.Uint64(blk[:8])^t)
			copy(blk[8:], r)
			b.Decrypt(blk[:], blk[:])
			copy(r, blk[8:])
		}
	}
	copy(buf[:8], blk[:8])
	clear(blk[:])
}
