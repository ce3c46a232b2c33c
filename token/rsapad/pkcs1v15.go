package rsapad

import (
	"crypto"
	"crypto/subtle"
	"fmt"
	"io"
)

// pkcs1v15Overhead is the least padding of PKCS#1 v1.5: 0x00, the block
// type, eight bytes of PS and the 0x00 separator.
const pkcs1v15Overhead = 11

// digestInfoPrefix is the DER of DigestInfo (RFC 8017 §9.2, note 1) up to
// the digest's OCTET STRING contents.
var digestInfoPrefix = map[crypto.Hash][]byte{
	crypto.SHA1:   {0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a, 0x05, 0x00, 0x04, 0x14},
	crypto.SHA224: {0x30, 0x2d, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x04, 0x05, 0x00, 0x04, 0x1c},
	crypto.SHA256: {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20},
	crypto.SHA384: {0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02, 0x05, 0x00, 0x04, 0x30},
	crypto.SHA512: {0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03, 0x05, 0x00, 0x04, 0x40},
	// id-sha3-224 ... id-sha3-512: 2.16.840.1.101.3.4.2.7 to .10 (RFC 8702).
	crypto.SHA3_224: {0x30, 0x2d, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x07, 0x05, 0x00, 0x04, 0x1c},
	crypto.SHA3_256: {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x08, 0x05, 0x00, 0x04, 0x20},
	crypto.SHA3_384: {0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x09, 0x05, 0x00, 0x04, 0x30},
	crypto.SHA3_512: {0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x0a, 0x05, 0x00, 0x04, 0x40},
	// id-md5, 1.2.840.113549.2.5 (RFC 8017 §9.2 note 1): DigestInfo only,
	// for CKM_MD5_RSA_PKCS (old signatures); never PSS, OAEP or MGF1.
	crypto.MD5: {0x30, 0x20, 0x30, 0x0c, 0x06, 0x08, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x05, 0x05, 0x00, 0x04, 0x10},
}

// DigestInfo returns the DER encoding of the DigestInfo of digest under h
// (AlgorithmIdentifier with explicit NULL parameters, then the digest as an
// OCTET STRING): the t that EMSA-PKCS1-v1_5 pads for the hashed
// CKM_SHA*_RSA_PKCS mechanisms. len(digest) must be h.Size()
// (ErrDigestLength); h must be supported (ErrHashUnsupported).
func DigestInfo(h crypto.Hash, digest []byte) ([]byte, error) {
	prefix, ok := digestInfoPrefix[h]
	if !ok {
		return nil, fmt.Errorf("rsapad: DigestInfo: hash %v: %w", h, ErrHashUnsupported)
	}
	if len(digest) != h.Size() {
		return nil, fmt.Errorf("rsapad: DigestInfo: %v digest of %d bytes: %w", h, len(digest), ErrDigestLength)
	}
	t := make([]byte, 0, len(prefix)+len(digest))
	return append(append(t, prefix...), digest...), nil
}

// EncodePKCS1v15Sign returns the k-byte EMSA-PKCS1-v1_5 encoding of t,
// 0x00 ‖ 0x01 ‖ 0xFF… ‖ 0x00 ‖ t with at least eight 0xFF bytes
// (RFC 8017 §9.2 steps 3–5). t is a DigestInfo (see [DigestInfo]) or, for
// CKM_RSA_PKCS, the caller's data as is. It fails with ErrMessageTooLong if
// len(t) > k−11 and with ErrKeyTooSmall if k < 11.
func EncodePKCS1v15Sign(t []byte, k int) ([]byte, error) {
	if k < pkcs1v15Overhead {
		return nil, fmt.Errorf("rsapad: PKCS#1 v1.5 signature: modulus of %d bytes: %w", k, ErrKeyTooSmall)
	}
	if len(t) > k-pkcs1v15Overhead {
		return nil, fmt.Errorf("rsapad: PKCS#1 v1.5 signature: %d bytes, at most %d: %w", len(t), k-pkcs1v15Overhead, ErrMessageTooLong)
	}
	em := make([]byte, k)
	em[1] = 0x01
	ps := em[2 : k-len(t)-1]
	for i := range ps {
		ps[i] = 0xff
	}
	// em[k-len(t)-1] stays 0x00.
	copy(em[k-len(t):], t)
	return em, nil
}

// VerifyPKCS1v15Sign checks that em, the output of the public operation on
// a signature (modulus length), is exactly EncodePKCS1v15Sign(t, len(em)).
// It returns nil on a match, an error wrapping ErrVerification on a
// mismatch, and the error of [EncodePKCS1v15Sign] (ErrMessageTooLong,
// ErrKeyTooSmall) if t cannot be encoded in len(em) bytes.
func VerifyPKCS1v15Sign(t, em []byte) error {
	want, err := EncodePKCS1v15Sign(t, len(em))
	if err != nil {
		return err
	}
	if subtle.ConstantTimeCompare(want, em) != 1 {
		return fmt.Errorf("rsapad: PKCS#1 v1.5 signature: encoding mismatch: %w", ErrVerification)
	}
	return nil
}

// EncodePKCS1v15Encrypt returns the k-byte RSAES-PKCS1-v1_5 encoding of
// msg, 0x00 ‖ 0x02 ‖ PS ‖ 0x00 ‖ msg with PS at least eight nonzero random
// bytes read from rand (RFC 8017 §7.2.1 step 2). It fails with
// ErrMessageTooLong if len(msg) > k−11, ErrKeyTooSmall if k < 11,
// ErrInvalidParameter if rand is nil, and with rand's error wrapped if
// reading fails.
func EncodePKCS1v15Encrypt(msg []byte, k int, rand io.Reader) ([]byte, error) {
	if k < pkcs1v15Overhead {
		return nil, fmt.Errorf("rsapad: PKCS#1 v1.5 encryption: modulus of %d bytes: %w", k, ErrKeyTooSmall)
	}
	if len(msg) > k-pkcs1v15Overhead {
		return nil, fmt.Errorf("rsapad: PKCS#1 v1.5 encryption: %d bytes, at most %d: %w", len(msg), k-pkcs1v15Overhead, ErrMessageTooLong)
	}
	if rand == nil {
		return nil, fmt.Errorf("rsapad: PKCS#1 v1.5 encryption: nil random source: %w", ErrInvalidParameter)
	}
	em := make([]byte, k)
	em[1] = 0x02
	ps := em[2 : k-len(msg)-1]
	if err := nonZeroRandom(ps, rand); err != nil {
		return nil, fmt.Errorf("rsapad: PKCS#1 v1.5 encryption: padding: %w", err)
	}
	copy(em[k-len(msg):], msg)
	return em, nil
}

// nonZeroRandom fills b with random bytes from rand, none of them zero.
func nonZeroRandom(b []byte, rand io.Reader) error {
	if _, err := io.ReadFull(rand, b); err != nil {
		return err
	}
	var one [1]byte
	for i := range b {
		for b[i] == 0 {
			if _, err := io.ReadFull(rand, one[:]); err != nil {
				return err
			}
			b[i] = one[0]
		}
	}
	return nil
}

// checkType2 checks em (len(em) = k ≥ 11) as 0x00 ‖ 0x02 ‖ PS ‖ 0x00 ‖ M
// with PS at least eight nonzero bytes, in constant time: good is 1 when
// it is, and sep the index of the separator (M = em[sep+1:]). Every byte is
// examined the same way whatever its value.
func checkType2(em []byte) (good, sep int) {
	good = subtle.ConstantTimeByteEq(em[0], 0x00) & subtle.ConstantTimeByteEq(em[1], 0x02)
	// Find the first zero byte after the block type without branching on
	// any byte's value. sep is its index once found; searching is 1 until
	// then.
	searching := 1
	for i := 2; i < len(em); i++ {
		isZero := subtle.ConstantTimeByteEq(em[i], 0x00)
		sep = subtle.ConstantTimeSelect(searching&isZero, i, sep)
		searching = subtle.ConstantTimeSelect(isZero, 0, searching)
	}
	good &= 1 - searching
	// PS = em[2:sep] must be at least eight bytes.
	good &= subtle.ConstantTimeLessOrEq(2+8, sep)
	return good, sep
}
