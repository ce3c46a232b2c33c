package mech

// CKM_AES_CMAC and CKM_AES_CMAC_GENERAL (PKCS#11 3.0 Current Mechanisms
// §2.10.8; NIST SP 800-38B, RFC 4493): sign and verify, single- and
// multi-part. CMAC is written here over a cipher.Block (cmac, a
// hash.Hash; it serves CKM_DES3_CMAC too); the _GENERAL form takes
// CK_MAC_GENERAL_PARAMS (the MAC length, 1 to 16 bytes) and returns the
// leading bytes of the full MAC. Verification compares in constant time; a
// MAC of the wrong length is CKR_SIGNATURE_LEN_RANGE.

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"hash"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/internal/aesni"
)

// cmacMechanisms are CKM_AES_CMAC and CKM_AES_CMAC_GENERAL.
func cmacMechanisms() []Mechanism {
	newMAC := func(op Op) (hash.Hash, error) {
		k, err := aesPrepared(op)
		if err != nil {
			return nil, err
		}
		c := newCMAC(k.block)
		c.ni = k.ni
		return c, nil
	}
	return []Mechanism{
		&macMech{MechBase: aesBase(ck.CKM_AES_CMAC), newMAC: newMAC},
		&macMech{MechBase: aesBase(ck.CKM_AES_CMAC_GENERAL), newMAC: newMAC, maxLen: aes.BlockSize},
	}
}

// cmac is CMAC over a 128-bit (AES) or 64-bit (triple DES: des.go)
// block cipher. Write chains all the whole blocks it can at once, on the
// aesni kernel for AES (ni), holding back only the last block, which Sum
// finishes with a subkey.
type cmac struct {
	b      cipher.Block
	ni     *aesni.Key // AES: the same key for the kernel (nil: b block by block)
	k1, k2 []byte
	x      []byte // the chaining value
	buf    []byte // the last, possibly partial, block
	n      int    // bytes in buf
}

// newCMAC derives the subkeys (SP 800-38B §6.1).
func newCMAC(b cipher.Block) *cmac {
	bs := b.BlockSize()
	m := make([]byte, 4*bs)
	c := &cmac{b: b, k1: m[:bs:bs], k2: m[bs : 2*bs : 2*bs], x: m[2*bs : 3*bs : 3*bs], buf: m[3*bs:]}
	l := make([]byte, bs)
	b.Encrypt(l, l)
	dbl(c.k1, l)
	dbl(c.k2, c.k1)
	clear(l)
	return c
}

// dbl is doubling in GF(2^128) or GF(2^64): dst = src·x (the constant
// R_b, 0x87 or 0x1B, folded in without a branch on the secret top bit).
func dbl(dst, src []byte) {
	rb := 0x87
	if len(src) == 8 {
		rb = 0x1B
	}
	msb := src[0] >> 7
	for i := 0; i < len(src)-1; i++ {
		dst[i] = src[i]<<1 | src[i+1]>>7
	}
	dst[len(src)-1] = src[len(src)-1]<<1 ^ byte(subtle.ConstantTimeSelect(int(msb), rb, 0))
}

func (c *cmac) Write(p []byte) (int, error) {
	total := len(p)
	k := copy(c.buf[c.n:], p)
	c.n += k
	p = p[k:]
	if len(p) == 0 {
		return total, nil // buf may be the last block
	}
	// More follows: buf is not the last block, nor are the whole blocks of
	// p before its last 1 to bs bytes.
	c.chain(c.buf)
	bs := len(c.buf)
	whole := (len(p) - 1) / bs * bs
	c.chain(p[:whole])
	c.n = copy(c.buf, p[whole:])
	return total, nil
}

// chain runs x = E(x ⊕ m) over the whole blocks m of p.
func (c *cmac) chain(p []byte) {
	if c.ni != nil {
		c.ni.CBCMAC((*[aes.BlockSize]byte)(c.x), p)
		return
	}
	cbcChain(c.b, c.x, p)
}

// cbcChain is CBC-MAC's chaining block by block: x = E(x ⊕ m) over the
// whole blocks m of p.
func cbcChain(b cipher.Block, x, p []byte) {
	bs := len(x)
	for i := 0; i+bs <= len(p); i += bs {
		subtle.XORBytes(x, x, p[i:i+bs])
		b.Encrypt(x, x)
	}
}

func (c *cmac) Sum(in []byte) []byte {
	bs := len(c.buf)
	last := make([]byte, bs)
	copy(last, c.buf[:c.n])
	if c.n == bs {
		subtle.XORBytes(last, last, c.k1)
	} else {
		last[c.n] = 0x80
		subtle.XORBytes(last, last, c.k2)
	}
	subtle.XORBytes(last, c.x, last)
	c.b.Encrypt(last, last)
	return append(in, last...)
}

func (c *cmac) Reset() {
	clear(c.x)
	clear(c.buf)
	c.n = 0
}

func (c *cmac) Size() int      { return len(c.buf) }
func (c *cmac) BlockSize() int { return len(c.buf) }
