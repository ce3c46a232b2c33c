package rsapad

import (
	"crypto"
	"crypto/subtle"
	"fmt"
	"io"
)

// pssLayout checks the parameters common to EncodePSS and VerifyPSS and
// returns emLen, the byte length of the encoded message.
func pssLayout(mHash []byte, emBits int, h, mgfHash crypto.Hash, saltLen int) (int, error) {
	if err := checkHashes(h, mgfHash); err != nil {
		return 0, err
	}
	if len(mHash) != h.Size() {
		return 0, fmt.Errorf("rsapad: PSS: %v digest of %d bytes: %w", h, len(mHash), ErrDigestLength)
	}
	if saltLen < 0 {
		return 0, fmt.Errorf("rsapad: PSS: salt length %d: %w", saltLen, ErrInvalidParameter)
	}
	if emBits < 1 {
		return 0, fmt.Errorf("rsapad: PSS: %d-bit encoding: %w", emBits, ErrKeyTooSmall)
	}
	emLen := emBits/8 + (emBits%8+7)/8 // (emBits+7)/8 without overflow
	// RFC 8017 §9.1.1 step 3, emLen < hLen+sLen+2, written so that no
	// saltLen overflows; emBits ≥ 8hLen+8sLen+9 follows from it, since
	// DB's 0x01 byte then sits below the cleared top bits.
	if saltLen > emLen-h.Size()-2 {
		return 0, fmt.Errorf("rsapad: PSS: %d-bit encoding, %v, %d-byte salt: %w", emBits, h, saltLen, ErrKeyTooSmall)
	}
	return emLen, nil
}

// pssHash returns H = Hash(0x00×8 ‖ mHash ‖ salt) (RFC 8017 §9.1.1 step 6).
func pssHash(h crypto.Hash, mHash, salt []byte) []byte {
	d := h.New()
	var zeros [8]byte
	d.Write(zeros[:])
	d.Write(mHash)
	d.Write(salt)
	return d.Sum(nil)
}

// EncodePSS returns the EMSA-PSS encoding (RFC 8017 §9.1.1) of the message
// digest mHash (len h.Size(), else ErrDigestLength) with a saltLen-byte
// random salt read from rand and MGF1 over mgfHash. emBits is modBits−1;
// the result has emLen = (emBits+7)/8 bytes, one fewer than the modulus
// when modBits ≡ 1 (mod 8) (see the package doc). saltLen may be anything
// from 0 to emLen−h.Size()−2 (ErrKeyTooSmall beyond, ErrInvalidParameter if
// negative). A nil rand is accepted only when saltLen is 0.
func EncodePSS(mHash []byte, emBits int, h, mgfHash crypto.Hash, saltLen int, rand io.Reader) ([]byte, error) {
	emLen, err := pssLayout(mHash, emBits, h, mgfHash, saltLen)
	if err != nil {
		return nil, err
	}
	hLen := h.Size()
	em := make([]byte, emLen)
	dbLen := emLen - hLen - 1
	db, hPart := em[:dbLen], em[dbLen:emLen-1]

	// DB = PS (zeros) ‖ 0x01 ‖ salt, the salt read straight into place.
	salt := db[dbLen-saltLen:]
	if saltLen > 0 {
		if rand == nil {
			return nil, fmt.Errorf("rsapad: PSS: nil random source: %w", ErrInvalidParameter)
		}
		if _, err := io.ReadFull(rand, salt); err != nil {
			return nil, fmt.Errorf("rsapad: PSS: salt: %w", err)
		}
	}
	db[dbLen-saltLen-1] = 0x01
	copy(hPart, pssHash(h, mHash, salt))

	mgf1XOR(db, mgfHash, hPart)
	db[0] &= 0xff >> (8*emLen - emBits)
	em[emLen-1] = 0xbc
	return em, nil
}

// VerifyPSS checks that em is an EMSA-PSS encoding (RFC 8017 §9.1.2) of the
// message digest mHash with exactly saltLen bytes of salt, hash h and MGF1
// over mgfHash; emBits is modBits−1. em is either emLen = (emBits+7)/8
// bytes, or the modulus-length output of the public operation, one byte
// longer, whose first byte must then be zero. It returns nil if the
// encoding is consistent, an error wrapping ErrVerification if it is not,
// and ErrDigestLength, ErrInvalidParameter, ErrKeyTooSmall or
// ErrHashUnsupported for parameters that no em could satisfy.
func VerifyPSS(mHash, em []byte, emBits int, h, mgfHash crypto.Hash, saltLen int) error {
	emLen, err := pssLayout(mHash, emBits, h, mgfHash, saltLen)
	if err != nil {
		return err
	}
	if len(em) == emLen+1 {
		if em[0] != 0 {
			return fmt.Errorf("rsapad: PSS: encoded message exceeds %d bits: %w", emBits, ErrVerification)
		}
		em = em[1:]
	}
	if len(em) != emLen {
		return fmt.Errorf("rsapad: PSS: encoded message of %d bytes, want %d: %w", len(em), emLen, ErrVerification)
	}
	if em[emLen-1] != 0xbc {
		return fmt.Errorf("rsapad: PSS: trailer 0x%02x: %w", em[emLen-1], ErrVerification)
	}
	hLen := h.Size()
	dbLen := emLen - hLen - 1
	topMask := byte(0xff >> (8*emLen - emBits))
	if em[0]&^topMask != 0 {
		return fmt.Errorf("rsapad: PSS: encoded message exceeds %d bits: %w", emBits, ErrVerification)
	}
	hPart := em[dbLen : emLen-1]
	db := append([]byte{}, em[:dbLen]...)
	mgf1XOR(db, mgfHash, hPart)
	db[0] &= topMask

	psLen := dbLen - saltLen - 1
	for _, b := range db[:psLen] {
		if b != 0 {
			return fmt.Errorf("rsapad: PSS: nonzero padding: %w", ErrVerification)
		}
	}
	if db[psLen] != 0x01 {
		return fmt.Errorf("rsapad: PSS: no 0x01 before a %d-byte salt: %w", saltLen, ErrVerification)
	}
	salt := db[dbLen-saltLen:]
	if subtle.ConstantTimeCompare(pssHash(h, mHash, salt), hPart) != 1 {
		return fmt.Errorf("rsapad: PSS: hash mismatch: %w", ErrVerification)
	}
	return nil
}
