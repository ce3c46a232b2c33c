package token

// CKM_AES_CMAC and CKM_AES_CMAC_GENERAL (PKCS#11 3.0 Current Mechanisms
// §2.10.8; NIST SP 800-38B, RFC 4493): sign and verify, single- and
// multi-part. CMAC is written here over crypto/aes (aesCMAC, a hash.Hash);
// the _GENERAL form takes CK_MAC_GENERAL_PARAMS (the MAC length, 1 to 16
// bytes) and returns the leading bytes of the full MAC. Verification
// compares in constant time; a MAC of the wrong length is
// CKR_SIGNATURE_LEN_RANGE.

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"hash"

	"github.com/modexp-token/modexp-token/token/ck"
)

// cmacMechanisms are CKM_AES_CMAC and CKM_AES_CMAC_GENERAL.
func cmacMechanisms() []mechanism {
	newMAC := func(op *operation) (hash.Hash, error) {
		b, err := op.aesBlock()
		if err != nil {
			return nil, err
		}
		return newCMAC(b), nil
	}
	return []mechanism{
		&macMech{mechBase: aesBase(ck.CKM_AES_CMAC), newMAC: newMAC},
		&macMech{mechBase: aesBase(ck.CKM_AES_CMAC_GENERAL), newMAC: newMAC, maxLen: aes.BlockSize},
	}
}

// aesCMAC is CMAC over a 128-bit block cipher.
type aesCMAC struct {
	b      cipher.Block
	k1, k2 [aes.BlockSize]byte
	x      [aes.BlockSize]byte // the chaining value
	buf    [aes.BlockSize]byte // the last, possibly partial, block
	n      int                 // bytes in buf
}

// newCMAC derives the subkeys (SP 800-38B §6.1).
func newCMAC(b cipher.Block) *aesCMAC {
	c := &aesCMAC{b: b}
	var l [aes.BlockSize]byte
	b.Encrypt(l[:], l[:])
	dbl(c.k1[:], l[:])
	dbl(c.k2[:], c.k1[:])
	return c
}

// dbl is doubling in GF(2^128): dst = src·x (the constant 0x87 folded in
// without a branch on the secret top bit).
func dbl(dst, src []byte) {
	msb := src[0] >> 7
	for i := 0; i < len(src)-1; i++ {
		dst[i] = src[i]<<1 | src[i+1]>>7
	}
	dst[len(src)-1] = src[len(src)-1]<<1 ^ byte(subtle.ConstantTimeSelect(int(msb), 0x87, 0))
}

func (c *aesCMAC) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		if c.n == aes.BlockSize {
			// buf is not the last block: chain it.
			subtle.XORBytes(c.x[:], c.x[:], c.buf[:])
			c.b.Encrypt(c.x[:], c.x[:])
			c.n = 0
		}
		k := copy(c.buf[c.n:], p)
		c.n += k
		p = p[k:]
	}
	return total, nil
}

func (c *aesCMAC) Sum(in []byte) []byte {
	var last, t [aes.BlockSize]byte
	copy(last[:], c.buf[:c.n])
	if c.n == aes.BlockSize {
		subtle.XORBytes(last[:], last[:], c.k1[:])
	} else {
		last[c.n] = 0x80
		subtle.XORBytes(last[:], last[:], c.k2[:])
	}
	subtle.XORBytes(t[:], c.x[:], last[:])
	c.b.Encrypt(t[:], t[:])
	return append(in, t[:]...)
}

func (c *aesCMAC) Reset() {
	c.x, c.buf, c.n = [aes.BlockSize]byte{}, [aes.BlockSize]byte{}, 0
}

func (c *aesCMAC) Size() int      { return aes.BlockSize }
func (c *aesCMAC) BlockSize() int { return aes.BlockSize }
