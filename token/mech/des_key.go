package mech

// DES key types (PKCS#11 3.0 Current Mechanisms §6.4–6.5; the mechanisms:
// des.go): CKK_DES (8 bytes), CKK_DES2 (16: K1‖K2, used as K1‖K2‖K1)
// and CKK_DES3 (24). A value of another length is
// CKR_ATTRIBUTE_VALUE_INVALID. Parity bits are set on generated keys and
// not checked on imported ones. CKA_CHECK_VALUE is the first 3 bytes of
// the ECB encryption of a zero block. Everything else is as for the other
// secret keys (token/secretkey.go).

import (
	"crypto/des"
	"fmt"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// DESKeyLen is the value length of each DES key type.
var DESKeyLen = map[uint64]int{ck.CKK_DES: 8, ck.CKK_DES2: 16, ck.CKK_DES3: 24}

func init() {
	for kt, n := range DESKeyLen {
		registerKeyType(&KeyType{
			typ: kt, Secret: true, SecretSchema: secretValueSchema, Bits: secretBits,
			CompleteSecret: func(a attr.Map) error {
				if len(a[ck.CKA_VALUE]) != n {
					return Invalid(ck.CKA_VALUE, fmt.Sprintf("%s key of %d bytes, want %d", ck.Name("CKK_", kt), len(a[ck.CKA_VALUE]), n))
				}
				return completeSecret(a, DESKCV)
			},
		})
	}
}

// DESKCV is the first 3 bytes of the ECB encryption of a zero block.
func DESKCV(key []byte) []byte {
	b, err := desCipher(key)
	if err != nil {
		return []byte{}
	}
	var blk [des.BlockSize]byte
	b.Encrypt(blk[:], blk[:])
	return blk[:3:3]
}
