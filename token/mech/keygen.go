package mech

// The secret key generation mechanisms: CKM_AES_KEY_GEN and
// CKM_GENERIC_SECRET_KEY_GEN (C_GenerateKey, token/secretkey.go).

import (
	"crypto/rand"
	"fmt"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// secretKeyGenMechanisms are CKM_AES_KEY_GEN and
// CKM_GENERIC_SECRET_KEY_GEN.
func secretKeyGenMechanisms() []Mechanism {
	return []Mechanism{
		&secretKeyGen{aesBase(ck.CKM_AES_KEY_GEN)},
		&secretKeyGen{MechBase{
			Type: ck.CKM_GENERIC_SECRET_KEY_GEN, MinBits: 8 * genericMinBytes, MaxBits: 8 * GenericMaxBytes,
			KeyTypes: append([]uint64{ck.CKK_GENERIC_SECRET}, hmacKeyTypes...),
		}},
	}
}

// secretKeyGen is CKM_AES_KEY_GEN or CKM_GENERIC_SECRET_KEY_GEN.
type secretKeyGen struct{ MechBase }

// GenerateKey: CKA_VALUE_LEN (bytes) is required and must fit the key
// type and the mechanism's sizes (CKR_ATTRIBUTE_VALUE_INVALID).
func (mech *secretKeyGen) GenerateKey(tmpl attr.Map) ([]byte, error) {
	v, ok := tmpl[ck.CKA_VALUE_LEN]
	if !ok {
		return nil, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "CKA_VALUE_LEN missing")
	}
	n, _ := ck.ParseULong(v)
	kt, _ := tmpl.ULong(ck.CKA_KEY_TYPE)
	size := n
	if !mech.SizeInBytes {
		size = 8 * n
	}
	if n > GenericMaxBytes || size < mech.MinBits || size > mech.MaxBits {
		return nil, Invalid(ck.CKA_VALUE_LEN, fmt.Sprintf("%d bytes, %s makes %d to %d %s", n,
			ck.Name("CKM_", mech.Type), mech.MinBits, mech.MaxBits, mech.SizeUnit()))
	}
	if err := CheckSecretLen(kt, int(n)); err != nil {
		return nil, Invalid(ck.CKA_VALUE_LEN, err.Error())
	}
	key := make([]byte, n)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("token: random: %w: %w", ck.CKR_FUNCTION_FAILED, err)
	}
	return key, nil
}
