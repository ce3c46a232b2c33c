package mech

// HKDF (RFC 5869; PKCS#11 3.0 Current Mechanisms, HKDF): CKM_HKDF_DERIVE
// derives a secret key from a CKK_HKDF or CKK_GENERIC_SECRET base key,
// CKM_HKDF_DATA the same into a data object (CKO_DATA, CKA_VALUE the
// output; CKA_PRIVATE true unless the template says otherwise), and
// CKM_HKDF_KEY_GEN generates CKK_HKDF keys (pkcs11-provider uses them for
// HKDF and TLS 1.3 when the token offers them).
//
//   - The parameter is CK_HKDF_PARAMS, decoded by the C layer into
//     Mechanism.HKDF: bExtract and bExpand (at least one), the PRF's hash
//     (prfHashMechanism: CKM_SHA_1, CKM_SHA224 … CKM_SHA512,
//     CKM_SHA512_224, CKM_SHA512_256, CKM_SHA3_224 … CKM_SHA3_512), and for
//     Extract the salt: CKF_HKDF_SALT_NULL (HashLen zeros, RFC 5869 §2.2),
//     CKF_HKDF_SALT_DATA (pSalt, not empty) or CKF_HKDF_SALT_KEY (the value
//     of the secret key hSaltKey: CKK_HKDF or CKK_GENERIC_SECRET, with
//     CKA_DERIVE). pInfo is Expand's info. Anything else is
//     CKR_MECHANISM_PARAM_INVALID.
//   - Extract alone makes the PRK (HashLen bytes: the key takes its
//     leading CKA_VALUE_LEN bytes, all of them by default); Expand alone
//     takes the base key's value as the PRK. With Expand the new key needs
//     CKA_VALUE_LEN (derivedKeyLen: an AES key defaults to 32 bytes).
//   - The new key may be CKK_GENERIC_SECRET (the default), an HMAC key
//     type, CKK_AES or CKK_HKDF (so derivations chain, as TLS 1.3's do).
//     A CKM_HKDF_DATA template's CKA_VALUE_LEN is the output's length (1
//     to 1024 bytes; needed with Expand) and is not kept on the object.
//   - The base key may have any length: the standard asks for HashLen,
//     but RFC 5869 and TLS 1.3 (an ECDH secret under SHA-384) use others.

import (
	"crypto"
	"crypto/hkdf"
	"hash"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// hkdfMechanisms are CKM_HKDF_DERIVE, CKM_HKDF_DATA and CKM_HKDF_KEY_GEN.
func hkdfMechanisms() []Mechanism {
	base := func(typ uint64, keyTypes ...uint64) MechBase {
		return MechBase{Type: typ, KeyTypes: keyTypes, MinBits: genericMinBytes, MaxBits: GenericMaxBytes, SizeInBytes: true}
	}
	return []Mechanism{
		&hkdfDerive{MechBase: base(ck.CKM_HKDF_DERIVE, ck.CKK_HKDF, ck.CKK_GENERIC_SECRET)},
		&hkdfDerive{MechBase: base(ck.CKM_HKDF_DATA, ck.CKK_HKDF, ck.CKK_GENERIC_SECRET), data: true},
		&secretKeyGen{base(ck.CKM_HKDF_KEY_GEN, ck.CKK_HKDF)},
	}
}

// hkdfDerive is CKM_HKDF_DERIVE (or, data, CKM_HKDF_DATA), bound to its
// parameter.
type hkdfDerive struct {
	MechBase
	data bool
	p    HKDFParams
	hash crypto.Hash
}

// DerivesData: CKM_HKDF_DATA makes a data object (token/derive.go).
func (m *hkdfDerive) DerivesData() bool { return m.data }

// HKDFHash is the PRF hash of prfHashMechanism: a digest mechanism of the
// token but MD5.
func HKDFHash(mech uint64) (crypto.Hash, bool) {
	for _, d := range DigestMechs {
		if d.Type == mech && d.Hash != crypto.MD5 {
			return d.Hash, true
		}
	}
	return 0, false
}

// withParam checks CK_HKDF_PARAMS (see the file comment).
func (m *hkdfDerive) withParam(cm *CKMechanism) (Mechanism, error) {
	p := cm.HKDF
	bad := func(why string) error {
		return ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s: %s", m.Name(), why)
	}
	if p == nil || len(cm.Param) != 0 {
		return nil, bad("takes CK_HKDF_PARAMS")
	}
	if !p.Extract && !p.Expand {
		return nil, bad("neither bExtract nor bExpand")
	}
	h, ok := HKDFHash(p.PRF)
	if !ok {
		return nil, bad("prfHashMechanism " + ck.Name("CKM_", p.PRF) + " is not a hash of the token")
	}
	if p.Extract {
		switch p.SaltType {
		case ck.CKF_HKDF_SALT_NULL:
			if len(p.Salt) != 0 {
				return nil, bad("CKF_HKDF_SALT_NULL with salt data")
			}
		case ck.CKF_HKDF_SALT_DATA:
			if len(p.Salt) == 0 {
				return nil, bad("CKF_HKDF_SALT_DATA without salt data")
			}
		case ck.CKF_HKDF_SALT_KEY:
		default:
			return nil, bad("unknown ulSaltType")
		}
	}
	b := *m
	b.p, b.hash = *p, h
	return &b, nil
}

// Derive runs Extract and/or Expand over the base key's value.
func (m *hkdfDerive) Derive(op Op, tmpl attr.Map) ([]byte, error) {
	natural := 0
	if !m.p.Expand {
		natural = m.hash.Size()
	}
	length := DerivedKeyLen
	if m.data {
		length = derivedDataLen
	}
	n, err := length(tmpl, natural)
	if err != nil {
		return nil, err
	}
	ikm, err := op.Key().SecretValue()
	if err != nil {
		return nil, err
	}
	newHash := func() hash.Hash { return m.hash.New() }
	prk := ikm
	if m.p.Extract {
		salt, err := m.salt(op)
		if err != nil {
			return nil, err
		}
		if prk, err = hkdf.Extract(newHash, ikm, salt); err != nil {
			return nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "HKDF-Extract: %v", err)
		}
		defer clear(prk)
	}
	if !m.p.Expand {
		return append([]byte(nil), prk[:n]...), nil
	}
	out, err := hkdf.Expand(newHash, prk, string(m.p.Info), n)
	if err != nil {
		return nil, ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "HKDF-Expand of %d bytes: %v", n, err)
	}
	return out, nil
}

// salt is Extract's salt: nil for CKF_HKDF_SALT_NULL (HMAC pads it to
// HashLen zeros), the data, or the salt key's value.
func (m *hkdfDerive) salt(op Op) ([]byte, error) {
	switch m.p.SaltType {
	case ck.CKF_HKDF_SALT_DATA:
		return m.p.Salt, nil
	case ck.CKF_HKDF_SALT_KEY:
	default:
		return nil, nil
	}
	k, err := op.Slot().KeyObject(m.p.SaltKey)
	switch {
	case err != nil:
		return nil, err
	case k.Class() != ck.CKO_SECRET_KEY || (k.KeyType() != ck.CKK_HKDF && k.KeyType() != ck.CKK_GENERIC_SECRET):
		return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "salt key %d: not a CKK_HKDF or CKK_GENERIC_SECRET key", m.p.SaltKey)
	case !k.Attrs().Bool(ck.CKA_DERIVE):
		return nil, ck.Errorf(ck.CKR_KEY_FUNCTION_NOT_PERMITTED, "salt key %d: CKA_DERIVE is false", m.p.SaltKey)
	case !k.Complete():
		return nil, ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "salt key %d: sealed", m.p.SaltKey)
	}
	return k.SecretValue()
}
