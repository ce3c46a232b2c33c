package token

// The mechanisms registry. A mechanism is a small value: its flags and key
// sizes, the key types it accepts, how it decodes its parameter, and the
// functions it implements (nil: not supported). Adding ECDSA is adding
// entries with CKK_EC in keyTypes and their sign/verify functions.

import (
	"crypto"
	"errors"
	"fmt"
	"hash"
	"slices"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/rsapad"
)

// mechanism describes one CKM_ value.
type mechanism struct {
	typ              uint64
	flags            uint64 // CKF_SIGN, CKF_VERIFY, ... as in CK_MECHANISM_INFO
	minBits, maxBits uint64 // key sizes for CK_MECHANISM_INFO
	// sizeInBytes: minBits and maxBits count bytes, not bits (the AES and
	// HMAC mechanisms, as the standard says for CK_MECHANISM_INFO).
	sizeInBytes bool
	// engineBound: the private operation runs on the slot's engine, whose
	// limits may lower maxBits.
	engineBound bool
	keyTypes    []uint64 // CKK_ values the mechanism accepts
	// available reports whether the slot can serve the mechanism (nil:
	// always), and may narrow its info (flags, key sizes) to what the
	// slot's engine and fallback policy can do.
	available func(s *slot, info *MechanismInfo) bool
	// hash: the digest of a digest mechanism, or the hash of hash-then-sign.
	hash crypto.Hash
	// singlePart: sign/verify/encrypt/decrypt take no Update.
	singlePart bool
	// params decodes and checks the CK_MECHANISM parameter (nil: the
	// mechanism takes none).
	params func(mech *mechanism, m *Mechanism) (any, error)
	// checkKey checks the parameters against the key at Init.
	checkKey func(op *operation) error

	// Operations: input is the data (or, for hash-then-sign, its digest).
	sign    func(op *operation, input []byte) ([]byte, error)
	verify  func(op *operation, input, sig []byte) error
	encrypt func(op *operation, in []byte) ([]byte, error)
	decrypt func(op *operation, in []byte) ([]byte, error)
	// generateKeyPair returns the generated values of the public and
	// private key (the templates have been checked against the schemas).
	generateKeyPair func(s *slot, pub, priv attrMap) (kt uint64, pubVals, privVals attrMap, err error)
	// wrap encrypts key material (a secret key's value, a private key's
	// PKCS#8) under op.key for C_WrapKey; unwrap decrypts it for
	// C_UnwrapKey (wrap.go). wrapsPrivate: the mechanism also wraps
	// private keys (as PKCS#8), not only secret keys.
	wrap         func(op *operation, material []byte) ([]byte, error)
	unwrap       func(op *operation, wrapped []byte) ([]byte, error)
	wrapsPrivate bool
	// derive is C_DeriveKey's work (see derive.go): from the operation's
	// base key and decoded parameter it returns the CKA_VALUE of the new
	// secret key that tmpl (defaults applied) describes.
	derive func(op *operation, tmpl attrMap) ([]byte, error)
	// newStream makes the state of a symmetric encryption or decryption
	// at Init (symstream.go); its encrypt and decrypt are streamOnce.
	newStream func(op *operation) (symStream, error)
	// newMAC makes the running MAC of a MAC mechanism at Init, kept in
	// op.digest (symstream.go).
	newMAC func(op *operation) (hash.Hash, error)
	// generateKey returns the CKA_VALUE of a new secret key (C_GenerateKey)
	// for a template already checked against the schema, with CKA_CLASS
	// and CKA_KEY_TYPE set (secretkey.go).
	generateKey func(mech *mechanism, tmpl attrMap) ([]byte, error)
	// generateParams returns the generated values of a new
	// CKO_DOMAIN_PARAMETERS object (C_GenerateKey with a parameter
	// generation mechanism; domain.go) for a checked template.
	generateParams func(s *slot, tmpl attrMap) (attrMap, error)
}

// sizeUnit names the unit of the mechanism's key sizes.
func (m *mechanism) sizeUnit() string {
	if m.sizeInBytes {
		return "bytes"
	}
	return "bits"
}

// supports reports whether the mechanism implements kind.
func (m *mechanism) supports(kind opKind) bool {
	switch kind {
	case opSign:
		return m.sign != nil
	case opVerify:
		return m.verify != nil
	case opEncrypt:
		return m.encrypt != nil
	case opDecrypt:
		return m.decrypt != nil
	case opDigest:
		return m.flags&ck.CKF_DIGEST != 0
	case opDerive:
		return m.derive != nil
	}
	return false
}

// decode checks and decodes a CK_MECHANISM's parameter.
func (m *mechanism) decode(cm *Mechanism) (any, error) {
	if m.params != nil {
		return m.params(m, cm)
	}
	if len(cm.Param) != 0 || cm.PSS != nil || cm.OAEP != nil || cm.ECDH != nil || cm.EdDSA != nil || cm.GCM != nil || cm.EncryptData != nil {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s takes no parameter", ck.Name("CKM_", m.typ))
	}
	return nil, nil
}

func (m *mechanism) acceptsKeyType(kt uint64) bool { return slices.Contains(m.keyTypes, kt) }

// mechanisms is the registry by CKM_ value.
var mechanisms = map[uint64]*mechanism{}

func registerMechanism(m *mechanism) {
	if _, dup := mechanisms[m.typ]; dup {
		panic(fmt.Sprintf("token: mechanism 0x%X registered twice", m.typ))
	}
	mechanisms[m.typ] = m
}

// RSA key sizes of the mechanisms (bits).
const (
	rsaMinBits = 1024
	rsaMaxBits = 8192
)

// hashes of the hash-then-sign and digest mechanisms.
var (
	digestMechs = []struct {
		typ  uint64
		hash crypto.Hash
	}{
		{ck.CKM_SHA_1, crypto.SHA1}, {ck.CKM_SHA224, crypto.SHA224}, {ck.CKM_SHA256, crypto.SHA256},
		{ck.CKM_SHA384, crypto.SHA384}, {ck.CKM_SHA512, crypto.SHA512},
		{ck.CKM_SHA3_224, crypto.SHA3_224}, {ck.CKM_SHA3_256, crypto.SHA3_256},
		{ck.CKM_SHA3_384, crypto.SHA3_384}, {ck.CKM_SHA3_512, crypto.SHA3_512},
	}
	rsaPKCSHashMechs = []struct {
		typ  uint64
		hash crypto.Hash
	}{
		{ck.CKM_SHA1_RSA_PKCS, crypto.SHA1}, {ck.CKM_SHA224_RSA_PKCS, crypto.SHA224},
		{ck.CKM_SHA256_RSA_PKCS, crypto.SHA256}, {ck.CKM_SHA384_RSA_PKCS, crypto.SHA384},
		{ck.CKM_SHA512_RSA_PKCS, crypto.SHA512},
		{ck.CKM_SHA3_224_RSA_PKCS, crypto.SHA3_224}, {ck.CKM_SHA3_256_RSA_PKCS, crypto.SHA3_256},
		{ck.CKM_SHA3_384_RSA_PKCS, crypto.SHA3_384}, {ck.CKM_SHA3_512_RSA_PKCS, crypto.SHA3_512},
	}
	rsaPSSHashMechs = []struct {
		typ  uint64
		hash crypto.Hash
	}{
		{ck.CKM_SHA1_RSA_PKCS_PSS, crypto.SHA1}, {ck.CKM_SHA224_RSA_PKCS_PSS, crypto.SHA224},
		{ck.CKM_SHA256_RSA_PKCS_PSS, crypto.SHA256}, {ck.CKM_SHA384_RSA_PKCS_PSS, crypto.SHA384},
		{ck.CKM_SHA512_RSA_PKCS_PSS, crypto.SHA512},
		{ck.CKM_SHA3_224_RSA_PKCS_PSS, crypto.SHA3_224}, {ck.CKM_SHA3_256_RSA_PKCS_PSS, crypto.SHA3_256},
		{ck.CKM_SHA3_384_RSA_PKCS_PSS, crypto.SHA3_384}, {ck.CKM_SHA3_512_RSA_PKCS_PSS, crypto.SHA3_512},
	}
)

func init() {
	rsaKeys := []uint64{ck.CKK_RSA}
	rsa := func(m *mechanism) *mechanism {
		m.keyTypes, m.minBits, m.maxBits, m.engineBound = rsaKeys, rsaMinBits, rsaMaxBits, true
		return m
	}
	registerMechanism(rsa(&mechanism{
		typ: ck.CKM_RSA_PKCS_KEY_PAIR_GEN, flags: ck.CKF_GENERATE_KEY_PAIR,
		generateKeyPair: generateRSA,
	}))
	registerMechanism(rsa(&mechanism{
		typ: ck.CKM_RSA_PKCS, flags: ck.CKF_SIGN | ck.CKF_VERIFY | ck.CKF_ENCRYPT | ck.CKF_DECRYPT | ck.CKF_WRAP | ck.CKF_UNWRAP,
		singlePart: true,
		sign:       rsaPKCSSign, verify: rsaPKCSVerify, encrypt: rsaPKCSEncrypt, decrypt: rsaPKCSDecrypt,
		wrap: rsaWrapWith(rsaPKCSEncrypt), unwrap: rsaUnwrapWith(rsaPKCSDecrypt),
	}))
	registerMechanism(rsa(&mechanism{
		typ: ck.CKM_RSA_X_509, flags: ck.CKF_SIGN | ck.CKF_VERIFY | ck.CKF_ENCRYPT | ck.CKF_DECRYPT,
		singlePart: true,
		sign:       rsaRawSign, verify: rsaRawVerify, encrypt: rsaRawEncrypt, decrypt: rsaRawDecrypt,
	}))
	registerMechanism(rsa(&mechanism{
		typ: ck.CKM_RSA_PKCS_PSS, flags: ck.CKF_SIGN | ck.CKF_VERIFY,
		singlePart: true, params: pssParamsOf, checkKey: pssCheckKey,
		sign: rsaPSSSign, verify: rsaPSSVerify,
	}))
	registerMechanism(rsa(&mechanism{
		typ: ck.CKM_RSA_PKCS_OAEP, flags: ck.CKF_ENCRYPT | ck.CKF_DECRYPT | ck.CKF_WRAP | ck.CKF_UNWRAP,
		singlePart: true, params: oaepParamsOf, checkKey: oaepCheckKey,
		encrypt: rsaOAEPEncrypt, decrypt: rsaOAEPDecrypt,
		wrap: rsaWrapWith(rsaOAEPEncrypt), unwrap: rsaUnwrapWith(rsaOAEPDecrypt),
	}))
	for _, hm := range rsaPKCSHashMechs {
		registerMechanism(rsa(&mechanism{
			typ: hm.typ, flags: ck.CKF_SIGN | ck.CKF_VERIFY, hash: hm.hash,
			sign: rsaPKCSHashSign, verify: rsaPKCSHashVerify,
		}))
	}
	for _, hm := range rsaPSSHashMechs {
		registerMechanism(rsa(&mechanism{
			typ: hm.typ, flags: ck.CKF_SIGN | ck.CKF_VERIFY, hash: hm.hash,
			params: pssParamsOf, checkKey: pssCheckKey,
			sign: rsaPSSSign, verify: rsaPSSVerify,
		}))
	}
	for _, dm := range digestMechs {
		registerMechanism(&mechanism{typ: dm.typ, flags: ck.CKF_DIGEST, hash: dm.hash})
	}
}

// pssParams are decoded CK_RSA_PKCS_PSS_PARAMS.
type pssParams struct {
	hash, mgf crypto.Hash
	saltLen   int
}

func pssParamsOf(mech *mechanism, m *Mechanism) (any, error) {
	if m.PSS == nil || len(m.Param) != 0 {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s needs CK_RSA_PKCS_PSS_PARAMS", ck.Name("CKM_", mech.typ))
	}
	h, err := rsapad.MechanismHash(m.PSS.Hash)
	if err != nil {
		return nil, fmt.Errorf("token: PSS hashAlg: %w: %w", ck.CKR_MECHANISM_PARAM_INVALID, err)
	}
	mgf, err := rsapad.MGFHash(m.PSS.MGF)
	if err != nil {
		return nil, fmt.Errorf("token: PSS mgf: %w: %w", ck.CKR_MECHANISM_PARAM_INVALID, err)
	}
	if mech.hash != 0 && h != mech.hash {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "PSS hashAlg %v does not match %s", h, ck.Name("CKM_", mech.typ))
	}
	if m.PSS.SaltLen > rsaMaxBits/8 {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "PSS salt of %d bytes", m.PSS.SaltLen)
	}
	return &pssParams{hash: h, mgf: mgf, saltLen: int(m.PSS.SaltLen)}, nil
}

// pssCheckKey: the salt must fit the key (emLen ≥ hLen + sLen + 2).
func pssCheckKey(op *operation) error {
	p := op.params.(*pssParams)
	emBits := op.keyBits() - 1
	emLen := (emBits + 7) / 8
	if p.saltLen > emLen-p.hash.Size()-2 {
		return ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "PSS salt of %d bytes does not fit a %d-bit key with %v", p.saltLen, emBits+1, p.hash)
	}
	return nil
}

// oaepParams are decoded CK_RSA_PKCS_OAEP_PARAMS.
type oaepParams struct {
	hash, mgf crypto.Hash
	label     []byte
}

func oaepParamsOf(mech *mechanism, m *Mechanism) (any, error) {
	if m.OAEP == nil || len(m.Param) != 0 {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKM_RSA_PKCS_OAEP needs CK_RSA_PKCS_OAEP_PARAMS")
	}
	h, err := rsapad.MechanismHash(m.OAEP.Hash)
	if err != nil {
		return nil, fmt.Errorf("token: OAEP hashAlg: %w: %w", ck.CKR_MECHANISM_PARAM_INVALID, err)
	}
	mgf, err := rsapad.MGFHash(m.OAEP.MGF)
	if err != nil {
		return nil, fmt.Errorf("token: OAEP mgf: %w: %w", ck.CKR_MECHANISM_PARAM_INVALID, err)
	}
	// CKZ_DATA_SPECIFIED is the only source; 0 with no data (sent by some
	// clients for "no label") is accepted as the empty label.
	if m.OAEP.Source != ck.CKZ_DATA_SPECIFIED && (m.OAEP.Source != 0 || len(m.OAEP.SourceData) != 0) {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "OAEP source 0x%X", m.OAEP.Source)
	}
	return &oaepParams{hash: h, mgf: mgf, label: append([]byte(nil), m.OAEP.SourceData...)}, nil
}

func oaepCheckKey(op *operation) error {
	p := op.params.(*oaepParams)
	if k := op.keyBytes(); k < 2*p.hash.Size()+2 {
		return ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "%d-byte key too small for OAEP with %v", k, p.hash)
	}
	return nil
}

// padErr maps an rsapad error (see its package doc) to a CKR code.
func padErr(what string, err error, tooLong ck.Error) error {
	var code ck.Error
	switch {
	case errors.Is(err, rsapad.ErrHashUnsupported), errors.Is(err, rsapad.ErrInvalidParameter):
		code = ck.CKR_MECHANISM_PARAM_INVALID
	case errors.Is(err, rsapad.ErrDigestLength):
		code = ck.CKR_DATA_LEN_RANGE
	case errors.Is(err, rsapad.ErrMessageTooLong):
		code = tooLong
	case errors.Is(err, rsapad.ErrKeyTooSmall):
		code = ck.CKR_KEY_SIZE_RANGE
	case errors.Is(err, rsapad.ErrVerification):
		code = ck.CKR_SIGNATURE_INVALID
	case errors.Is(err, rsapad.ErrDecryption):
		code = ck.CKR_ENCRYPTED_DATA_INVALID
	default:
		code = ck.CKR_FUNCTION_FAILED
	}
	return fmt.Errorf("token: %s: %w: %w", what, code, err)
}
