package token

// The DES key generators and Triple DES (PKCS#11 3.0 Current Mechanisms
// §6.4–6.5; the key types: des_key.go).
//
//   - CKM_DES_KEY_GEN and CKM_DES3_KEY_GEN make random keys of their type's
//     length (no CKA_VALUE_LEN; one stating the true length is accepted).
//     Two-key CKK_DES2 keys are imported (C_CreateObject, C_UnwrapKey),
//     not generated.
//   - CKM_DES3_ECB, CKM_DES3_CBC and CKM_DES3_CBC_PAD encrypt with CKK_DES2
//     and CKK_DES3 keys, as the AES modes do (mech_aes_cbc.go) with 8-byte
//     blocks and an 8-byte IV.
//   - Single DES encrypts nothing: its 56-bit key is found by exhaustive
//     search. A DES key can still be made, imported, found, wrapped and
//     digested (C_DigestKey), as clients and test suites (pkcs11test's
//     fixtures) expect; SoftHSMv2 on OpenSSL 3 offers the same.
//
// Key sizes in CK_MECHANISM_INFO are bytes.

import (
	"crypto/cipher"
	"crypto/des"
	"crypto/rand"
	"fmt"

	"github.com/modexp-token/modexp-token/token/ck"
)

// desMechanisms are the DES key generators and the Triple DES modes.
func desMechanisms() []mechanism {
	gen := func(typ, kt uint64) mechanism {
		n := uint64(desKeyLen[kt])
		return &desKeyGen{mechBase{typ: typ, keyTypes: []uint64{kt}, minBits: n, maxBits: n, sizeInBytes: true}}
	}
	mode := func(typ uint64, cbc, pad bool) mechanism {
		return &aesBlockMode{
			mechBase: mechBase{typ: typ, keyTypes: []uint64{ck.CKK_DES3, ck.CKK_DES2}, minBits: 16, maxBits: 24, sizeInBytes: true},
			cbc:      cbc, pad: pad, newCipher: tripleDES, blockLen: des.BlockSize,
		}
	}
	return []mechanism{
		gen(ck.CKM_DES_KEY_GEN, ck.CKK_DES),
		gen(ck.CKM_DES3_KEY_GEN, ck.CKK_DES3),
		mode(ck.CKM_DES3_ECB, false, false),
		mode(ck.CKM_DES3_CBC, true, false),
		mode(ck.CKM_DES3_CBC_PAD, true, true),
	}
}

// desKeyGen is CKM_DES_KEY_GEN or CKM_DES3_KEY_GEN.
type desKeyGen struct{ mechBase }

// generateKey returns a random key with odd parity in every byte.
func (mech *desKeyGen) generateKey(tmpl attrMap) ([]byte, error) {
	n := int(mech.minBits)
	if v, ok := tmpl.ulong(ck.CKA_VALUE_LEN); ok && v != uint64(n) {
		return nil, ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "%s makes %d-byte keys, CKA_VALUE_LEN is %d", mech.name(), n, v)
	}
	key := make([]byte, n)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("token: random: %w: %w", ck.CKR_FUNCTION_FAILED, err)
	}
	for i, b := range key {
		key[i] = desParity(b)
	}
	return key, nil
}

// desParity returns b with its low bit set so that it has odd parity.
func desParity(b byte) byte {
	b &^= 1
	p := b ^ b>>4
	p ^= p >> 2
	p ^= p >> 1
	return b | ^p&1
}

// tripleDES is the Triple DES cipher of a CKK_DES2 (K1‖K2‖K1) or CKK_DES3
// value.
func tripleDES(key []byte) (cipher.Block, error) {
	switch len(key) {
	case 16:
		key = append(append(make([]byte, 0, 24), key...), key[:8]...)
	case 24:
	default:
		return nil, ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "Triple DES key of %d bytes", len(key))
	}
	return des.NewTripleDESCipher(key)
}
