package mech

// CKM_AES_MAC and CKM_AES_MAC_GENERAL (PKCS#11 3.0 Current Mechanisms,
// AES-MAC and general-length AES-MAC): CBC-MAC over AES, sign and verify,
// single- and multi-part; python-pkcs11 signs with CKM_AES_MAC by default.
//
//   - The MAC is the last block of the CBC encryption (zero IV) of the data
//     padded with zero bytes to a whole number of blocks (none added when
//     it is whole); empty data leaves the chaining value at zero, as
//     openCryptoki and kryoptic compute it.
//   - CKM_AES_MAC gives half a block (8 bytes), as the standard says;
//     CKM_AES_MAC_GENERAL takes CK_MAC_GENERAL_PARAMS, 1 to 16 bytes.
//     Both are the leading bytes of the last block.
//   - CBC-MAC is safe only for messages of one fixed length: prefer
//     CKM_AES_CMAC, which is CBC-MAC made safe for any length. These are
//     for clients and data that need them.

import (
	"crypto/aes"
	"hash"

	"github.com/modexp-token/modexp-token/token/ck"
)

// aesMACMechanisms are CKM_AES_MAC and CKM_AES_MAC_GENERAL.
func aesMACMechanisms() []Mechanism {
	newMAC := func(op Op) (hash.Hash, error) {
		k, err := aesPrepared(op)
		if err != nil {
			return nil, err
		}
		return &cbcMAC{k: k}, nil
	}
	return []Mechanism{
		&macMech{MechBase: aesBase(ck.CKM_AES_MAC), newMAC: newMAC, n: aes.BlockSize / 2},
		&macMech{MechBase: aesBase(ck.CKM_AES_MAC_GENERAL), newMAC: newMAC, maxLen: aes.BlockSize},
	}
}

// cbcMAC is CBC-MAC over AES with zero padding: Write chains the whole
// blocks at once on the aesni kernel, keeping a partial block back.
type cbcMAC struct {
	k   *aesKey
	x   [aes.BlockSize]byte // the chaining value
	buf [aes.BlockSize]byte // the partial block
	n   int                 // bytes in buf
}

func (c *cbcMAC) Write(p []byte) (int, error) {
	total := len(p)
	if c.n > 0 {
		k := copy(c.buf[c.n:], p)
		c.n += k
		p = p[k:]
		if c.n < aes.BlockSize {
			return total, nil
		}
		c.k.ni.CBCMAC(&c.x, c.buf[:])
		c.n = 0
	}
	whole := len(p) - len(p)%aes.BlockSize
	c.k.ni.CBCMAC(&c.x, p[:whole])
	c.n = copy(c.buf[:], p[whole:])
	return total, nil
}

// Sum appends the MAC: the chaining value after the partial block, if
// any, padded with zeros.
func (c *cbcMAC) Sum(in []byte) []byte {
	t := c.x
	if c.n > 0 {
		var last [aes.BlockSize]byte
		copy(last[:], c.buf[:c.n])
		c.k.ni.CBCMAC(&t, last[:])
	}
	return append(in, t[:]...)
}

func (c *cbcMAC) Reset() {
	c.x, c.buf, c.n = [aes.BlockSize]byte{}, [aes.BlockSize]byte{}, 0
}

func (c *cbcMAC) Size() int      { return aes.BlockSize }
func (c *cbcMAC) BlockSize() int { return aes.BlockSize }
