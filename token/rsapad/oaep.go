package rsapad

import (
	"crypto"
	"crypto/subtle"
	"fmt"
	"io"
)

// oaepCheck checks the parameters common to EncodeOAEP and DecodeOAEP.
func oaepCheck(k int, h, mgfHash crypto.Hash) error {
	if err := checkHashes(h, mgfHash); err != nil {
		return err
	}
	if k < 2*h.Size()+2 {
		return fmt.Errorf("rsapad: OAEP: modulus of %d bytes with %v: %w", k, h, ErrKeyTooSmall)
	}
	return nil
}

// EncodeOAEP returns the k-byte EME-OAEP encoding (RFC 8017 §7.1.1 step 2)
// of msg with the given label (PKCS#11's source data; nil and empty are the
// same), hash h and MGF1 over mgfHash, with a random seed read from rand.
// It fails with ErrKeyTooSmall if k < 2·h.Size()+2, ErrMessageTooLong if
// len(msg) > k−2·h.Size()−2, ErrInvalidParameter if rand is nil, and with
// rand's error wrapped if reading fails.
func EncodeOAEP(msg, label []byte, k int, h, mgfHash crypto.Hash, rand io.Reader) ([]byte, error) {
	if err := oaepCheck(k, h, mgfHash); err != nil {
		return nil, err
	}
	hLen := h.Size()
	if limit := k - 2*hLen - 2; len(msg) > limit {
		return nil, fmt.Errorf("rsapad: OAEP: %d bytes, at most %d: %w", len(msg), limit, ErrMessageTooLong)
	}
	if rand == nil {
		return nil, fmt.Errorf("rsapad: OAEP: nil random source: %w", ErrInvalidParameter)
	}
	em := make([]byte, k)
	seed, db := em[1:1+hLen], em[1+hLen:]
	if _, err := io.ReadFull(rand, seed); err != nil {
		return nil, fmt.Errorf("rsapad: OAEP: seed: %w", err)
	}
	// DB = lHash ‖ PS (zeros) ‖ 0x01 ‖ M.
	lHash := h.New()
	lHash.Write(label)
	lHash.Sum(db[:0])
	db[len(db)-len(msg)-1] = 0x01
	copy(db[len(db)-len(msg):], msg)

	mgf1XOR(db, mgfHash, seed)
	mgf1XOR(seed, mgfHash, db)
	return em, nil
}

// DecodeOAEP returns the message inside em, a k-byte EME-OAEP encoded
// message (the output of the private operation), given the label, hash h
// and MGF1 hash mgfHash it was encoded with (RFC 8017 §7.1.2 step 3).
// Every padding failure, including len(em) ≠ k and a label mismatch,
// returns ErrDecryption itself; the checks run in constant time and only
// validity and, when valid, the message length leak (see the package doc).
// Parameters no em could satisfy fail with ErrHashUnsupported or
// ErrKeyTooSmall (k < 2·h.Size()+2).
func DecodeOAEP(em, label []byte, k int, h, mgfHash crypto.Hash) ([]byte, error) {
	if err := oaepCheck(k, h, mgfHash); err != nil {
		return nil, err
	}
	if len(em) != k {
		return nil, ErrDecryption
	}
	hLen := h.Size()
	lHash := h.New()
	lHash.Write(label)
	wantLHash := lHash.Sum(nil)

	buf := append([]byte{}, em...)
	y := buf[0]
	seed, db := buf[1:1+hLen], buf[1+hLen:]
	mgf1XOR(seed, mgfHash, db)
	mgf1XOR(db, mgfHash, seed)

	good := subtle.ConstantTimeByteEq(y, 0x00)
	good &= subtle.ConstantTimeCompare(db[:hLen], wantLHash)

	// After lHash: zeros, then 0x01, then M. Find the 0x01 without
	// branching on any byte's value; any other byte before it is an error.
	rest := db[hLen:]
	searching, one, bad := 1, 0, 0
	for i := range rest {
		isZero := subtle.ConstantTimeByteEq(rest[i], 0x00)
		isOne := subtle.ConstantTimeByteEq(rest[i], 0x01)
		one = subtle.ConstantTimeSelect(searching&isOne, i, one)
		bad |= searching & (1 - isZero) & (1 - isOne)
		searching &= 1 - isOne
	}
	good &= 1 - searching
	good &= 1 - bad

	if good != 1 {
		return nil, ErrDecryption
	}
	return append([]byte{}, rest[one+1:]...), nil
}
