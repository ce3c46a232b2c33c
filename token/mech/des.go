package mech

// The DES family (PKCS#11 3.0 Current Mechanisms §6.4–6.5, as SoftHSMv2
// 2.6 lists it; the key types: des_key.go).
//
//   - CKM_DES_KEY_GEN, CKM_DES2_KEY_GEN and CKM_DES3_KEY_GEN make random
//     keys of their type's length with odd parity (no CKA_VALUE_LEN; one
//     stating the true length is accepted).
//   - CKM_DES_ECB, CKM_DES_CBC, CKM_DES_CBC_PAD (CKK_DES) and CKM_DES3_ECB,
//     CKM_DES3_CBC, CKM_DES3_CBC_PAD (CKK_DES2, CKK_DES3) encrypt, decrypt,
//     wrap and unwrap as the AES modes do (aes_cbc.go), with 8-byte
//     blocks and an 8-byte IV.
//   - CKM_DES3_CMAC and CKM_DES3_CMAC_GENERAL (NIST SP 800-38B over triple
//     DES: an 8-byte MAC, the _GENERAL form 1 to 8 bytes) sign and verify
//     (aes_cmac.go's CMAC at a 64-bit block).
//   - CKM_DES_ECB_ENCRYPT_DATA, CKM_DES_CBC_ENCRYPT_DATA and the DES3 ones
//     derive a key by encrypting the parameter's data (aes_derive.go's
//     rules at an 8-byte block; CBC takes CK_DES_CBC_ENCRYPT_DATA_PARAMS).
//   - Single DES is broken (its 56-bit key falls to exhaustive search)
//     and offered only because clients and test suites (pkcs11test's
//     fixtures) still use it; the slot option single_des = false takes the
//     single-DES mechanisms off the list (the CKK_DES key type stays).
//   - Timing: crypto/des looks its S-boxes up in tables indexed by key- and
//     data-dependent bits: DES is not constant-time in Go (nor in
//     OpenSSL's generic code), one more reason it is for legacy use only.
//
// Key sizes in CK_MECHANISM_INFO are bytes: 8 for DES, 16 to 24 for DES3.

import (
	"crypto/cipher"
	"crypto/des"
	"crypto/rand"
	"fmt"
	"hash"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// desBase and des3Base are the common parts of the single- and
// triple-DES mechanisms.
func desBase(typ uint64) MechBase {
	return MechBase{Type: typ, KeyTypes: []uint64{ck.CKK_DES}, MinBits: 8, MaxBits: 8, SizeInBytes: true, Available: singleDESAvailable}
}

func des3Base(typ uint64) MechBase {
	return MechBase{Type: typ, KeyTypes: []uint64{ck.CKK_DES3, ck.CKK_DES2}, MinBits: 16, MaxBits: 24, SizeInBytes: true}
}

// singleDESAvailable: the slot option single_des = false withdraws the
// single-DES mechanisms.
func singleDESAvailable(s Slot, _ *Info) bool { return s.Policy().SingleDESOn() }

// desMechanisms are the DES family.
func desMechanisms() []Mechanism {
	gen := func(typ, kt uint64) Mechanism {
		n := uint64(DESKeyLen[kt])
		b := MechBase{Type: typ, KeyTypes: []uint64{kt}, MinBits: n, MaxBits: n, SizeInBytes: true}
		if kt == ck.CKK_DES {
			b.Available = singleDESAvailable
		}
		return &desKeyGen{b}
	}
	mode := func(b MechBase, cbc, pad bool) Mechanism {
		return &aesBlockMode{MechBase: b, cbc: cbc, pad: pad, newCipher: desCipher, blockLen: des.BlockSize}
	}
	newMAC := func(op Op) (hash.Hash, error) {
		b, err := desBlock(op)
		if err != nil {
			return nil, err
		}
		return newCMAC(b), nil
	}
	data := func(b MechBase, cbc bool) Mechanism {
		return &EncryptData{MechBase: b, block: desBlock, bs: des.BlockSize, cbc: cbc}
	}
	return []Mechanism{
		gen(ck.CKM_DES_KEY_GEN, ck.CKK_DES),
		gen(ck.CKM_DES2_KEY_GEN, ck.CKK_DES2),
		gen(ck.CKM_DES3_KEY_GEN, ck.CKK_DES3),
		mode(desBase(ck.CKM_DES_ECB), false, false),
		mode(desBase(ck.CKM_DES_CBC), true, false),
		mode(desBase(ck.CKM_DES_CBC_PAD), true, true),
		mode(des3Base(ck.CKM_DES3_ECB), false, false),
		mode(des3Base(ck.CKM_DES3_CBC), true, false),
		mode(des3Base(ck.CKM_DES3_CBC_PAD), true, true),
		&macMech{MechBase: des3Base(ck.CKM_DES3_CMAC), newMAC: newMAC},
		&macMech{MechBase: des3Base(ck.CKM_DES3_CMAC_GENERAL), newMAC: newMAC, maxLen: des.BlockSize},
		data(desBase(ck.CKM_DES_ECB_ENCRYPT_DATA), false),
		data(desBase(ck.CKM_DES_CBC_ENCRYPT_DATA), true),
		data(des3Base(ck.CKM_DES3_ECB_ENCRYPT_DATA), false),
		data(des3Base(ck.CKM_DES3_CBC_ENCRYPT_DATA), true),
	}
}

// desKeyGen is CKM_DES_KEY_GEN, CKM_DES2_KEY_GEN or CKM_DES3_KEY_GEN.
type desKeyGen struct{ MechBase }

// GenerateKey returns a random key with odd parity in every byte.
func (mech *desKeyGen) GenerateKey(tmpl attr.Map) ([]byte, error) {
	n := int(mech.MinBits)
	if v, ok := tmpl.ULong(ck.CKA_VALUE_LEN); ok && v != uint64(n) {
		return nil, ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "%s makes %d-byte keys, CKA_VALUE_LEN is %d", mech.Name(), n, v)
	}
	key := make([]byte, n)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("token: random: %w: %w", ck.CKR_FUNCTION_FAILED, err)
	}
	for i, b := range key {
		key[i] = DESParity(b)
	}
	return key, nil
}

// DESParity returns b with its low bit set so that it has odd parity.
func DESParity(b byte) byte {
	b &^= 1
	p := b ^ b>>4
	p ^= p >> 2
	p ^= p >> 1
	return b | ^p&1
}

// desCipher is the cipher of a DES key: single DES (8 bytes), or triple
// DES (EDE) of a CKK_DES2 (K1‖K2‖K1) or CKK_DES3 value.
func desCipher(key []byte) (cipher.Block, error) {
	switch len(key) {
	case 8:
		return des.NewCipher(key)
	case 16:
		k := append(append(make([]byte, 0, 24), key...), key[:8]...)
		defer clear(k)
		return des.NewTripleDESCipher(k)
	case 24:
		return des.NewTripleDESCipher(key)
	}
	return nil, ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "DES key of %d bytes", len(key))
}

// desBlock returns the DES cipher of the operation's key.
func desBlock(op Op) (cipher.Block, error) {
	k, err := op.Key().SecretValue()
	if err != nil {
		return nil, err
	}
	return desCipher(k)
}
