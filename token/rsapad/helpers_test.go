package rsapad

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"testing"
)

// The raw RSA operation is not this package's business; tests do it with
// math/big, applying the checks RFC 8017 puts before the padding step
// (length of the input, input below the modulus) as the token will.

var errRawRange = errors.New("raw RSA: input out of range")

// rawExp returns in^exp mod n as a k-byte string, rejecting inputs that are
// not k bytes or not below n (RFC 8017 §5.1.2, §5.2.2, §7.1.2 step 1).
func rawExp(n, exp *big.Int, in []byte) ([]byte, error) {
	k := (n.BitLen() + 7) / 8
	if len(in) != k {
		return nil, fmt.Errorf("%w: %d bytes, want %d", errRawRange, len(in), k)
	}
	x := new(big.Int).SetBytes(in)
	if x.Cmp(n) >= 0 {
		return nil, fmt.Errorf("%w: not below the modulus", errRawRange)
	}
	return x.Exp(x, exp, n).FillBytes(make([]byte, k)), nil
}

// rawPublic is the public operation s^e mod n.
func rawPublic(pub *rsa.PublicKey, in []byte) ([]byte, error) {
	return rawExp(pub.N, big.NewInt(int64(pub.E)), in)
}

// rawPrivate is the private operation c^d mod n.
func rawPrivate(priv *rsa.PrivateKey, in []byte) ([]byte, error) {
	return rawExp(priv.N, priv.D, in)
}

// leftPad returns b left-padded with zeros to k bytes (b is at most k).
func leftPad(b []byte, k int) []byte {
	out := make([]byte, k)
	copy(out[k-len(b):], b)
	return out
}

// testKeySizes are the modulus sizes of the generated keys: a multiple of
// 8, modBits ≡ 1 (mod 8) (PSS encoding one byte shorter than the modulus),
// a partial top byte, and a common size.
var testKeySizes = []int{1024, 1025, 1031, 2048}

var testKeys = sync.OnceValues(func() (map[int]*rsa.PrivateKey, error) {
	keys := make(map[int]*rsa.PrivateKey)
	for _, bits := range testKeySizes {
		k, err := rsa.GenerateKey(rand.Reader, bits)
		if err != nil {
			return nil, fmt.Errorf("generate %d-bit key: %w", bits, err)
		}
		if k.N.BitLen() != bits {
			return nil, fmt.Errorf("generated %d-bit key, want %d", k.N.BitLen(), bits)
		}
		keys[bits] = k
	}
	return keys, nil
})

// keys returns the generated test keys, failing the test if generation did.
func keys(t testing.TB) map[int]*rsa.PrivateKey {
	t.Helper()
	ks, err := testKeys()
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

var allHashes = []crypto.Hash{crypto.SHA1, crypto.SHA224, crypto.SHA256, crypto.SHA384, crypto.SHA512,
	crypto.SHA3_224, crypto.SHA3_256, crypto.SHA3_384, crypto.SHA3_512}

// digestOf returns h(msg).
func digestOf(h crypto.Hash, msg []byte) []byte {
	d := h.New()
	d.Write(msg)
	return d.Sum(nil)
}

// mgf1Ref is MGF1 written out from RFC 8017 §B.2.1 as directly as possible,
// an independent reference for mgf1XOR.
func mgf1Ref(h crypto.Hash, seed []byte, length int) []byte {
	var t []byte
	for counter := uint32(0); len(t) < length; counter++ {
		c := []byte{byte(counter >> 24), byte(counter >> 16), byte(counter >> 8), byte(counter)}
		t = append(t, digestOf(h, append(append([]byte{}, seed...), c...))...)
	}
	return t[:length]
}

// xorBytes returns a XOR b (equal lengths).
func xorBytes(a, b []byte) []byte {
	out := make([]byte, len(a))
	for i := range a {
		out[i] = a[i] ^ b[i]
	}
	return out
}

// DecodePKCS1v15Encrypt returns the message inside em, a k-byte
// RSAES-PKCS1-v1_5 encoded message (the output of the private operation),
// checking 0x00 ‖ 0x02 ‖ PS ‖ 0x00 ‖ M with PS at least eight nonzero bytes
// (RFC 8017 §7.2.2 step 3). Every padding failure, including len(em) ≠ k,
// returns ErrDecryption itself. The padding is checked in constant time;
// only validity and, when valid, the message length leak (see the package
// doc). k < 11 fails with ErrKeyTooSmall. It is the explicit-rejection
// reference the implicit-rejection tests compare against; the token uses
// DecodePKCS1v15EncryptImplicit.
func DecodePKCS1v15Encrypt(em []byte, k int) ([]byte, error) {
	if k < pkcs1v15Overhead {
		return nil, fmt.Errorf("rsapad: PKCS#1 v1.5 decryption: modulus of %d bytes: %w", k, ErrKeyTooSmall)
	}
	if len(em) != k {
		return nil, ErrDecryption
	}
	good, sep := checkType2(em)
	if good != 1 {
		return nil, ErrDecryption
	}
	return append([]byte{}, em[sep+1:]...), nil
}
