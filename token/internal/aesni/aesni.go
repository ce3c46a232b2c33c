// Package aesni is AES for the token's chained modes, where Go's
// crypto/aes is called one block at a time: CBC encryption and CBC-MAC
// (the body of CMAC and AES-MAC). On amd64 with AES-NI and AVX the blocks
// of a whole call run in one kernel that keeps the round keys in registers
// (kernel_amd64.s, generated with its Go emulation by gen_amd64.go); CBC
// encryption and CBC-MAC are serial, so a block costs the latency of its
// rounds and the kernel's job is to add nothing to it. Elsewhere (or with
// the purego tag) the same functions run over crypto/aes.
//
// It is symmetric cryptography for the token's mechanisms, not
// arithmetic of the modular-exponentiation engine, hence under token/.
package aesni

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"unsafe"
)

// BlockSize is the AES block size in bytes.
const BlockSize = aes.BlockSize

// Key is an expanded AES encryption key. The zero Key is not usable: make
// one with NewKey.
type Key struct {
	rk     [15 * BlockSize]byte // round keys 0 to rounds, FIPS 197's w as bytes
	rounds int                  // 10, 12 or 14
	block  cipher.Block         // crypto/aes, where no kernel runs
}

// NewKey expands a 16-, 24- or 32-byte AES key.
func NewKey(key []byte) (*Key, error) {
	k := new(Key)
	switch len(key) {
	case 16, 24, 32:
	default:
		return nil, fmt.Errorf("aesni: key of %d bytes, want 16, 24 or 32", len(key))
	}
	k.rounds = len(key)/4 + 6
	if !haveKernel {
		b, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("aesni: %w", err)
		}
		k.block = b
		return k, nil
	}
	expandKey(k.rk[:], key, subWord)
	return k, nil
}

// Accelerated reports whether the key's operations run in the AES-NI
// kernels (otherwise over crypto/aes).
func (k *Key) Accelerated() bool { return k.block == nil }

// expandKey writes the round keys of key (FIPS 197 §5.2, KeyExpansion)
// into rk, with sub as SubWord. The words are little-endian, so that a
// round key's bytes are in memory in the order of the state's bytes;
// RotWord is then a rotation right by 8 bits and Rcon sits in the low
// byte. Only the public word index decides what is computed.
func expandKey(rk, key []byte, sub func(uint32) uint32) {
	nk := len(key) / 4
	total := 4 * (nk + 7) // 4·(rounds+1) words
	var ws [60]uint32
	w := ws[:total]
	for i := range nk {
		w[i] = binary.LittleEndian.Uint32(key[4*i:])
	}
	rcon := uint32(1)
	for i := nk; i < total; i++ {
		t := w[i-1]
		switch {
		case i%nk == 0:
			t = sub(t>>8|t<<24) ^ rcon
			rcon = uint32(xtimeByte(byte(rcon)))
		case nk > 6 && i%nk == 4:
			t = sub(t)
		}
		w[i] = w[i-nk] ^ t
	}
	for i, v := range w {
		binary.LittleEndian.PutUint32(rk[4*i:], v)
	}
	clear(w)
}

// xtimeByte is multiplication by x in GF(2⁸) (the next Rcon; public).
func xtimeByte(b byte) byte { return b<<1 ^ (b>>7)*0x1b }

// Encrypt encrypts one block from src into dst (which may be src).
func (k *Key) Encrypt(dst, src []byte) {
	if len(src) < BlockSize || len(dst) < BlockSize {
		panic("aesni: short block")
	}
	if k.block != nil {
		k.block.Encrypt(dst, src)
		return
	}
	var x [BlockSize]byte
	cbcMACKernel(k, &x, src[:BlockSize])
	copy(dst, x[:])
	clear(x[:])
}

// CBCEncrypt encrypts the whole blocks of src into dst in CBC mode from
// the chaining value iv, which it leaves at the last ciphertext block.
// dst is at least as long as src, and either src itself or disjoint from
// it.
func (k *Key) CBCEncrypt(iv *[BlockSize]byte, dst, src []byte) {
	checkBlocks(dst, src)
	if len(src) == 0 {
		return
	}
	if k.block == nil {
		cbcEncKernel(k, iv, dst, src)
		return
	}
	prev := iv[:]
	for i := 0; i < len(src); i += BlockSize {
		d := dst[i : i+BlockSize]
		subtle.XORBytes(d, src[i:i+BlockSize], prev)
		k.block.Encrypt(d, d)
		prev = d
	}
	copy(iv[:], prev)
}

// CBCMAC chains the whole blocks of src into x: x = E(x ⊕ m) for each
// block m (CBC-MAC; CMAC before its last block).
func (k *Key) CBCMAC(x *[BlockSize]byte, src []byte) {
	if len(src)%BlockSize != 0 {
		panic("aesni: input not full blocks")
	}
	if len(src) == 0 {
		return
	}
	if k.block == nil {
		cbcMACKernel(k, x, src)
		return
	}
	for i := 0; i < len(src); i += BlockSize {
		subtle.XORBytes(x[:], x[:], src[i:i+BlockSize])
		k.block.Encrypt(x[:], x[:])
	}
}

// checkBlocks panics, as crypto/cipher does, on a partial block, a short
// dst or an inexact overlap.
func checkBlocks(dst, src []byte) {
	if len(src)%BlockSize != 0 {
		panic("aesni: input not full blocks")
	}
	if len(dst) < len(src) {
		panic("aesni: output smaller than input")
	}
	if len(src) > 0 && inexactOverlap(dst[:len(src)], src) {
		panic("aesni: invalid buffer overlap")
	}
}

// inexactOverlap reports whether x and y (both non-empty) share memory
// without starting at the same address.
func inexactOverlap(x, y []byte) bool {
	xs, ys := uintptr(unsafe.Pointer(&x[0])), uintptr(unsafe.Pointer(&y[0]))
	return xs != ys && xs < ys+uintptr(len(y)) && ys < xs+uintptr(len(x))
}

// CBCEncrypter is CBC encryption under a Key as a cipher.BlockMode.
type CBCEncrypter struct {
	k  *Key
	iv [BlockSize]byte
}

// NewCBCEncrypter returns the CBC encrypter of k from a 16-byte iv.
func NewCBCEncrypter(k *Key, iv []byte) *CBCEncrypter {
	e := new(CBCEncrypter)
	e.Reset(k, iv)
	return e
}

// Reset makes e the CBC encrypter of k from a 16-byte iv, as
// NewCBCEncrypter does, in e's memory.
func (e *CBCEncrypter) Reset(k *Key, iv []byte) {
	if len(iv) != BlockSize {
		panic("aesni: IV length must equal block size")
	}
	e.k = k
	copy(e.iv[:], iv)
}

// BlockSize is 16.
func (e *CBCEncrypter) BlockSize() int { return BlockSize }

// CryptBlocks encrypts the whole blocks of src into dst, continuing the
// chain of the previous call (cipher.BlockMode).
func (e *CBCEncrypter) CryptBlocks(dst, src []byte) { e.k.CBCEncrypt(&e.iv, dst, src) }
