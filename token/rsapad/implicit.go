package rsapad

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
)

// Implicit rejection (draft-irtf-cfrg-rsa-guidance, "Implicit rejection"
// for RSAES-PKCS1-v1_5; the method of OpenSSL 3.2 and later)
//
// A decryption that reports invalid padding is an oracle (Bleichenbacher;
// Marvin when only the time differs). With implicit rejection an invalid
// padding is not reported: the decryption returns a synthetic message
// derived from the private key and the ciphertext, so the same invalid
// ciphertext always gives the same message, and nobody without the key can
// tell it from a real one. Its length is drawn from the same key-dependent
// stream, so the output length reveals nothing either. The steps:
//
//	KDK    = HMAC-SHA256(key = SHA-256(I2OSP(d, k)), ciphertext as k bytes)
//	PRF(label, n bytes) = the first n bytes of
//	         HMAC-SHA256(KDK, I2OSP(i, 2) ‖ label ‖ I2OSP(8n, 2)), i = 0, 1, …
//	lengths = PRF("length", 256): 128 big-endian 16-bit candidates; each is
//	         masked to the bit length of k−10, and the last one below k−10
//	         is the synthetic length L (0 when none is)
//	synth  = PRF("message", k); the synthetic message is its last L bytes
//
// The real padding is checked, and the output chosen between the real
// message and the synthetic one, without branches or memory accesses that
// depend on secret data: every byte of both candidates is read and
// selected with masks, and both lengths are computed always.

// irLengthCandidates is how many 16-bit length candidates are drawn.
const irLengthCandidates = 128

// ImplicitRejectionKey returns SHA-256(I2OSP(d, k)), the HMAC key from
// which [DecodePKCS1v15EncryptImplicit] derives a ciphertext's key
// derivation key. d is the private exponent as a big-endian byte string
// (leading zero bytes allowed), k the modulus length in bytes; d must fit
// in k bytes (ErrInvalidParameter). The caller may keep the result with
// the key (it is as secret as d).
func ImplicitRejectionKey(d []byte, k int) ([]byte, error) {
	for len(d) > k && d[0] == 0 {
		d = d[1:]
	}
	if len(d) > k || k < pkcs1v15Overhead {
		return nil, fmt.Errorf("rsapad: implicit rejection: private exponent of %d bytes for a %d-byte modulus: %w", len(d), k, ErrInvalidParameter)
	}
	buf := make([]byte, k)
	copy(buf[k-len(d):], d)
	h := sha256.Sum256(buf)
	clear(buf)
	return h[:], nil
}

// irPRF fills out with the draft's PRF over label under kdk.
func irPRF(out []byte, kdk []byte, label string) {
	m := hmac.New(sha256.New, kdk)
	var iter, bits [2]byte
	binary.BigEndian.PutUint16(bits[:], uint16(8*len(out)))
	for i, pos := uint16(0), 0; pos < len(out); i, pos = i+1, pos+sha256.Size {
		m.Reset()
		binary.BigEndian.PutUint16(iter[:], i)
		m.Write(iter[:])
		m.Write([]byte(label))
		m.Write(bits[:])
		copy(out[pos:], m.Sum(nil))
	}
}

// DecodePKCS1v15EncryptImplicit is RSAES-PKCS1-v1_5 decoding with
// implicit rejection: it returns the message inside em (the k-byte output
// of the private operation on ciphertext) when the padding is valid, and
// otherwise the synthetic message of ciphertext under irKey (from
// [ImplicitRejectionKey]) — never an error for a bad padding. The only
// errors are about public sizes: k < 11 (ErrKeyTooSmall), len(em) or
// len(ciphertext) ≠ k, or a bad irKey (ErrInvalidParameter). Constant time
// in the contents of em; the time depends on k only, and the result's
// length is what it is.
func DecodePKCS1v15EncryptImplicit(em, ciphertext, irKey []byte, k int) ([]byte, error) {
	if k < pkcs1v15Overhead {
		return nil, fmt.Errorf("rsapad: PKCS#1 v1.5 decryption: modulus of %d bytes: %w", k, ErrKeyTooSmall)
	}
	if len(em) != k || len(ciphertext) != k || len(irKey) != sha256.Size || k > 1<<13-1 {
		return nil, fmt.Errorf("rsapad: implicit rejection: sizes em %d, ciphertext %d, key %d for k = %d: %w",
			len(em), len(ciphertext), len(irKey), k, ErrInvalidParameter)
	}

	// The synthetic message and its length.
	kdkMAC := hmac.New(sha256.New, irKey)
	kdkMAC.Write(ciphertext)
	kdk := kdkMAC.Sum(nil)
	synth := make([]byte, k)
	irPRF(synth, kdk, "message")
	var cands [2 * irLengthCandidates]byte
	irPRF(cands[:], kdk, "length")
	clear(kdk)
	maxLen := k - 10 // the synthetic length is below it: at most k − 11, as a real one
	mask := maxLen
	for s := 1; s < 16; s <<= 1 {
		mask |= mask >> s
	}
	synthLen := 0
	for i := 0; i < len(cands); i += 2 {
		c := int(binary.BigEndian.Uint16(cands[i:])) & mask
		synthLen = subtle.ConstantTimeSelect(subtle.ConstantTimeLessOrEq(c+1, maxLen), c, synthLen)
	}

	// The real padding, as DecodePKCS1v15Encrypt checks it.
	good, sep := checkType2(em)
	realLen := k - sep - 1

	// Select, reading every byte of both.
	mlen := subtle.ConstantTimeSelect(good, realLen, synthLen)
	sel := byte(-good) // 0xff when good
	for i := range synth {
		synth[i] = synth[i]&^sel | em[i]&sel
	}
	out := make([]byte, mlen)
	copy(out, synth[k-mlen:])
	clear(synth)
	return out, nil
}
