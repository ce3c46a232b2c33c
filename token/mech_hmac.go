package token

// CKM_SHA_1_HMAC, CKM_SHA224_HMAC, CKM_SHA256_HMAC, CKM_SHA384_HMAC,
// CKM_SHA512_HMAC and their _GENERAL forms (PKCS#11 3.0 Current Mechanisms
// §2.20–2.25): sign and verify, single- and multi-part, with crypto/hmac;
// and CKM_MD5_HMAC(_GENERAL) (§6.x, legacy: for old data, as SoftHSMv2
// offers it).
//
//   - Keys: CKK_GENERIC_SECRET (as SoftHSMv2 accepts for every HMAC) and
//     the CKK_SHA*_HMAC type of the mechanism's hash; 1 byte to 64 KiB
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

// hmacMechs lists the HMAC mechanisms with their hash and key type.
var hmacMechs = []struct {
	mac, general, keyType uint64
	hash                  crypto.Hash
}{
	{ck.CKM_SHA_1_HMAC, ck.CKM_SHA_1_HMAC_GENERAL, ck.CKK_SHA_1_HMAC, crypto.SHA1},
	{ck.CKM_SHA224_HMAC, ck.CKM_SHA224_HMAC_GENERAL, ck.CKK_SHA224_HMAC, crypto.SHA224},
	{ck.CKM_SHA256_HMAC, ck.CKM_SHA256_HMAC_GENERAL, ck.CKK_SHA256_HMAC, crypto.SHA256},
	{ck.CKM_SHA384_HMAC, ck.CKM_SHA384_HMAC_GENERAL, ck.CKK_SHA384_HMAC, crypto.SHA384},
	{ck.CKM_SHA512_HMAC, ck.CKM_SHA512_HMAC_GENERAL, ck.CKK_SHA512_HMAC, crypto.SHA512},
	{ck.CKM_MD5_HMAC, ck.CKM_MD5_HMAC_GENERAL, ck.CKK_MD5_HMAC, crypto.MD5},
}

// hmacMechanisms is the HMAC family.
func hmacMechanisms() []mechanism {
	var ms []mechanism
	for _, hm := range hmacMechs {
		h := hm.hash
		newMAC := func(op *operation) (hash.Hash, error) {
			k, err := op.key.secretValue()
			if err != nil {
				return nil, err
			}
			return hmac.New(h.New, k), nil
		}
		for _, typ := range []uint64{hm.mac, hm.general} {
			m := &macMech{
				mechBase: mechBase{
					typ: typ, keyTypes: []uint64{ck.CKK_GENERIC_SECRET, hm.keyType},
					minBits: genericMinBytes, maxBits: genericMaxBytes, sizeInBytes: true,
				},
				newMAC: newMAC,
			}
			if typ == hm.general {
				m.maxLen = h.Size()
			}
			ms = append(ms, m)
		}
	}
	return ms
}
