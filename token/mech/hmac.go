package mech

// The HMAC mechanisms: CKM_SHA_1_HMAC, CKM_SHA224_HMAC, CKM_SHA256_HMAC,
// CKM_SHA384_HMAC, CKM_SHA512_HMAC (PKCS#11 3.0 Current Mechanisms
// §2.20–2.25), CKM_SHA512_224_HMAC, CKM_SHA512_256_HMAC, CKM_SHA3_224_HMAC
// to CKM_SHA3_512_HMAC (3.0), each with its _GENERAL form, and
// CKM_MD5_HMAC(_GENERAL) (legacy: for old data, as SoftHSMv2 offers it):
// sign and verify, single- and multi-part, with crypto/hmac.
//
//   - Keys: CKK_GENERIC_SECRET (as SoftHSMv2 accepts for every HMAC) and
//     the HMAC key type of the mechanism's hash (CKK_SHA256_HMAC for
//     CKM_SHA256_HMAC ...); 1 byte to 64 KiB
//     (CK_MECHANISM_INFO sizes in bytes).
//   - The _GENERAL forms take CK_MAC_GENERAL_PARAMS: the MAC length, 1 to
//     the hash size (CKR_MECHANISM_PARAM_INVALID otherwise); the MAC is
//     the leading bytes of the full HMAC.
//   - Verification compares in constant time (crypto/subtle); a MAC of the
//     wrong length is CKR_SIGNATURE_LEN_RANGE, a wrong one
//     CKR_SIGNATURE_INVALID.

import (
	"crypto"
	"crypto/hmac"
	"hash"

	"github.com/modexp-token/modexp-token/token/ck"
)

// HMACMechs lists the HMAC mechanisms with their hash and key type.
var HMACMechs = []struct {
	MAC, General, KeyType uint64
	Hash                  crypto.Hash
}{
	{ck.CKM_SHA_1_HMAC, ck.CKM_SHA_1_HMAC_GENERAL, ck.CKK_SHA_1_HMAC, crypto.SHA1},
	{ck.CKM_SHA224_HMAC, ck.CKM_SHA224_HMAC_GENERAL, ck.CKK_SHA224_HMAC, crypto.SHA224},
	{ck.CKM_SHA256_HMAC, ck.CKM_SHA256_HMAC_GENERAL, ck.CKK_SHA256_HMAC, crypto.SHA256},
	{ck.CKM_SHA384_HMAC, ck.CKM_SHA384_HMAC_GENERAL, ck.CKK_SHA384_HMAC, crypto.SHA384},
	{ck.CKM_SHA512_HMAC, ck.CKM_SHA512_HMAC_GENERAL, ck.CKK_SHA512_HMAC, crypto.SHA512},
	{ck.CKM_SHA512_224_HMAC, ck.CKM_SHA512_224_HMAC_GENERAL, ck.CKK_SHA512_224_HMAC, crypto.SHA512_224},
	{ck.CKM_SHA512_256_HMAC, ck.CKM_SHA512_256_HMAC_GENERAL, ck.CKK_SHA512_256_HMAC, crypto.SHA512_256},
	{ck.CKM_SHA3_224_HMAC, ck.CKM_SHA3_224_HMAC_GENERAL, ck.CKK_SHA3_224_HMAC, crypto.SHA3_224},
	{ck.CKM_SHA3_256_HMAC, ck.CKM_SHA3_256_HMAC_GENERAL, ck.CKK_SHA3_256_HMAC, crypto.SHA3_256},
	{ck.CKM_SHA3_384_HMAC, ck.CKM_SHA3_384_HMAC_GENERAL, ck.CKK_SHA3_384_HMAC, crypto.SHA3_384},
	{ck.CKM_SHA3_512_HMAC, ck.CKM_SHA3_512_HMAC_GENERAL, ck.CKK_SHA3_512_HMAC, crypto.SHA3_512},
	{ck.CKM_MD5_HMAC, ck.CKM_MD5_HMAC_GENERAL, ck.CKK_MD5_HMAC, crypto.MD5},
}

// hmacMechanisms is the HMAC family.
func hmacMechanisms() []Mechanism {
	var ms []Mechanism
	for _, hm := range HMACMechs {
		h := hm.Hash
		newMAC := func(op Op) (hash.Hash, error) {
			k, err := op.Key().SecretValue()
			if err != nil {
				return nil, err
			}
			return hmac.New(h.New, k), nil
		}
		for _, typ := range []uint64{hm.MAC, hm.General} {
			m := &macMech{
				MechBase: MechBase{
					Type: typ, KeyTypes: []uint64{ck.CKK_GENERIC_SECRET, hm.KeyType},
					MinBits: genericMinBytes, MaxBits: GenericMaxBytes, SizeInBytes: true,
				},
				newMAC: newMAC,
			}
			if typ == hm.General {
				m.maxLen = h.Size()
			}
			ms = append(ms, m)
		}
	}
	return ms
}
