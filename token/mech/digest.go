package mech

// The digest mechanisms (C_Digest*): CKM_SHA_1, CKM_SHA224 to CKM_SHA512,
// CKM_SHA512_224, CKM_SHA512_256 and CKM_SHA3_224 to CKM_SHA3_512, with
// Go's crypto packages; and CKM_MD5,
// broken for collisions, for old data only (as SoftHSMv2 offers it).

import (
	"crypto"
	_ "crypto/md5" // links crypto.MD5 (CKM_MD5, CKM_MD5_HMAC, CKM_MD5_RSA_PKCS)
	"hash"

	"github.com/modexp-token/modexp-token/token/ck"
)

// DigestMechs are the digest mechanisms and their hash.
var DigestMechs = []hashMech{
	{ck.CKM_SHA_1, crypto.SHA1}, {ck.CKM_SHA224, crypto.SHA224}, {ck.CKM_SHA256, crypto.SHA256},
	{ck.CKM_SHA384, crypto.SHA384}, {ck.CKM_SHA512, crypto.SHA512},
	{ck.CKM_SHA512_224, crypto.SHA512_224}, {ck.CKM_SHA512_256, crypto.SHA512_256},
	{ck.CKM_SHA3_224, crypto.SHA3_224}, {ck.CKM_SHA3_256, crypto.SHA3_256},
	{ck.CKM_SHA3_384, crypto.SHA3_384}, {ck.CKM_SHA3_512, crypto.SHA3_512},
	{ck.CKM_MD5, crypto.MD5},
}

// digestMechanisms is the digest family.
func digestMechanisms() []Mechanism {
	return perHash(DigestMechs, func(typ uint64, h crypto.Hash) Mechanism { return &digestMech{MechBase{Type: typ}, h} })
}

// digestMech is a digest mechanism.
type digestMech struct {
	MechBase
	hash crypto.Hash
}

func (m *digestMech) NewDigest() hash.Hash { return m.hash.New() }
