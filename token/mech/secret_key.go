package mech

// The secret key types (AES, generic, HMAC, HKDF): sizes, schema and
// completion with the check value.

import (
	"bytes"
	"crypto/aes"
	"crypto/sha1"
	"fmt"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// Secret key sizes (bytes).
const (
	genericMinBytes = 1
	GenericMaxBytes = 64 << 10 // generated and imported generic/HMAC keys
)

// hmacKeyTypes are the HMAC key types (generic secret keys serve every
// HMAC mechanism too).
var hmacKeyTypes = []uint64{ck.CKK_SHA_1_HMAC, ck.CKK_SHA224_HMAC, ck.CKK_SHA256_HMAC, ck.CKK_SHA384_HMAC, ck.CKK_SHA512_HMAC,
	ck.CKK_MD5_HMAC, ck.CKK_SHA512_224_HMAC, ck.CKK_SHA512_256_HMAC,
	ck.CKK_SHA3_224_HMAC, ck.CKK_SHA3_256_HMAC, ck.CKK_SHA3_384_HMAC, ck.CKK_SHA3_512_HMAC}

// secretValueSchema is the schema of the secret key types: the secret key
// attributes, CKA_VALUE (sealed) and CKA_VALUE_LEN.
var secretValueSchema = attr.SecretKeySchema.With(attr.Schema{
	ck.CKA_VALUE:     {Kind: attr.KindBytes, Flags: attr.Required | attr.Fixed | attr.Generated | attr.Secret},
	ck.CKA_VALUE_LEN: {Kind: attr.KindULong, Flags: attr.Fixed},
})

// secretBits is a secret key's size in bits.
func secretBits(a attr.Map) int {
	if v, ok := a[ck.CKA_VALUE]; ok {
		return 8 * len(v)
	}
	n, _ := a.ULong(ck.CKA_VALUE_LEN) // sealed value: its stated length
	return int(8 * min(n, 1<<40))
}

func init() {
	sch := secretValueSchema
	registerKeyType(&KeyType{
		typ: ck.CKK_AES, Secret: true, SecretSchema: sch, Bits: secretBits,
		CompleteSecret: func(a attr.Map) error { return completeSecret(a, AESKCV) },
	})
	for _, kt := range append([]uint64{ck.CKK_GENERIC_SECRET, ck.CKK_HKDF}, hmacKeyTypes...) {
		registerKeyType(&KeyType{
			typ: kt, Secret: true, SecretSchema: sch, Bits: secretBits,
			CompleteSecret: func(a attr.Map) error { return completeSecret(a, sha1KCV) },
		})
	}
}

// CheckSecretLen checks a value length against the key type.
func CheckSecretLen(kt uint64, n int) error {
	if kt == ck.CKK_AES {
		if n != 16 && n != 24 && n != 32 {
			return Invalid(ck.CKA_VALUE, fmt.Sprintf("AES key of %d bytes, want 16, 24 or 32", n))
		}
		return nil
	}
	if n < genericMinBytes || n > GenericMaxBytes {
		return Invalid(ck.CKA_VALUE, fmt.Sprintf("secret key of %d bytes, want %d to %d", n, genericMinBytes, GenericMaxBytes))
	}
	return nil
}

// completeSecret checks a secret key's value and sets CKA_VALUE_LEN and
// CKA_CHECK_VALUE (see the file comment).
func completeSecret(a attr.Map, kcv func([]byte) []byte) error {
	v := a[ck.CKA_VALUE]
	kt, _ := a.ULong(ck.CKA_KEY_TYPE)
	if err := CheckSecretLen(kt, len(v)); err != nil {
		return err
	}
	if given, ok := a.ULong(ck.CKA_VALUE_LEN); ok && given != uint64(len(v)) {
		return Inconsistent(fmt.Sprintf("CKA_VALUE_LEN %d, value of %d bytes", given, len(v)))
	}
	a[ck.CKA_VALUE_LEN] = ck.ULong(uint64(len(v)))
	want := kcv(v)
	if given, ok := a[ck.CKA_CHECK_VALUE]; ok && len(given) != 0 && !bytes.Equal(given, want) {
		return Invalid(ck.CKA_CHECK_VALUE, "does not match the key")
	} else if ok && len(given) == 0 {
		return nil
	}
	a[ck.CKA_CHECK_VALUE] = want
	return nil
}

// AESKCV is the first 3 bytes of AES-ECB(key, 0^128).
func AESKCV(key []byte) []byte {
	b, err := aes.NewCipher(key)
	if err != nil {
		return []byte{}
	}
	var blk [aes.BlockSize]byte
	b.Encrypt(blk[:], blk[:])
	return blk[:3:3]
}

// sha1KCV is the first 3 bytes of SHA-1(key).
func sha1KCV(key []byte) []byte {
	h := sha1.Sum(key)
	return h[:3:3]
}
