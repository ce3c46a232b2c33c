package mech

// The RSA mechanisms: CKM_RSA_PKCS_KEY_PAIR_GEN; CKM_RSA_PKCS (PKCS#1 v1.5
// signatures and block type 2 encryption, and wrapping), CKM_RSA_X_509
// (raw RSA), CKM_RSA_PKCS_PSS, CKM_RSA_PKCS_OAEP (encryption and
// wrapping), all one-shot (PKCS#11 3.0 Current Mechanisms §2.1.6–2.1.8:
// their Update and Final calls answer CKR_FUNCTION_NOT_SUPPORTED and end
// the operation); and the hash-then-sign CKM_SHA*_RSA_PKCS (and
// CKM_MD5_RSA_PKCS, for old signatures) and CKM_SHA*_RSA_PKCS_PSS,
// single- and multi-part. The private operation
// runs on the slot's engine (rsa_key.go).

import (
	"crypto"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"

	"github.com/modexp-token/modexp-token/engine/alg/rsa"
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/rsapad"
)

// RSA key sizes of the mechanisms (bits).
const (
	rsaMinBits = 1024
	rsaMaxBits = 8192
)

// defaultRSAExponent is F4.
const defaultRSAExponent = 65537

// The hashes of the hash-then-sign RSA mechanisms.
var (
	RSAPKCSHashMechs = []hashMech{
		{ck.CKM_SHA1_RSA_PKCS, crypto.SHA1}, {ck.CKM_SHA224_RSA_PKCS, crypto.SHA224},
		{ck.CKM_SHA256_RSA_PKCS, crypto.SHA256}, {ck.CKM_SHA384_RSA_PKCS, crypto.SHA384},
		{ck.CKM_SHA512_RSA_PKCS, crypto.SHA512},
		{ck.CKM_SHA3_224_RSA_PKCS, crypto.SHA3_224}, {ck.CKM_SHA3_256_RSA_PKCS, crypto.SHA3_256},
		{ck.CKM_SHA3_384_RSA_PKCS, crypto.SHA3_384}, {ck.CKM_SHA3_512_RSA_PKCS, crypto.SHA3_512},
		{ck.CKM_MD5_RSA_PKCS, crypto.MD5}, // old signatures only (as SoftHSMv2)
	}
	RSAPSSHashMechs = []hashMech{
		{ck.CKM_SHA1_RSA_PKCS_PSS, crypto.SHA1}, {ck.CKM_SHA224_RSA_PKCS_PSS, crypto.SHA224},
		{ck.CKM_SHA256_RSA_PKCS_PSS, crypto.SHA256}, {ck.CKM_SHA384_RSA_PKCS_PSS, crypto.SHA384},
		{ck.CKM_SHA512_RSA_PKCS_PSS, crypto.SHA512},
		{ck.CKM_SHA3_224_RSA_PKCS_PSS, crypto.SHA3_224}, {ck.CKM_SHA3_256_RSA_PKCS_PSS, crypto.SHA3_256},
		{ck.CKM_SHA3_384_RSA_PKCS_PSS, crypto.SHA3_384}, {ck.CKM_SHA3_512_RSA_PKCS_PSS, crypto.SHA3_512},
	}
)

// RSABase is the common part of an RSA mechanism.
func RSABase(typ uint64) MechBase {
	return MechBase{Type: typ, KeyTypes: []uint64{ck.CKK_RSA}, MinBits: rsaMinBits, MaxBits: rsaMaxBits, EngineBound: true}
}

// rsaMechanisms is the RSA family.
func rsaMechanisms() []Mechanism {
	pkcs := &rsaPKCS{RSABase(ck.CKM_RSA_PKCS)}
	pkcs.Available = rsaPKCSAvailable
	ms := []Mechanism{
		&rsaKeyPairGen{RSABase(ck.CKM_RSA_PKCS_KEY_PAIR_GEN)},
		pkcs,
		&RSARaw{RSABase(ck.CKM_RSA_X_509)},
		&rsaPSS{MechBase: RSABase(ck.CKM_RSA_PKCS_PSS)},
		&rsaOAEP{MechBase: RSABase(ck.CKM_RSA_PKCS_OAEP)},
	}
	ms = append(ms, perHash(RSAPKCSHashMechs, func(typ uint64, h crypto.Hash) Mechanism { return &rsaPKCSHash{RSABase(typ), hashThenSign{h}} })...)
	return append(ms, perHash(RSAPSSHashMechs, func(typ uint64, h crypto.Hash) Mechanism {
		return &rsaPSS{MechBase: RSABase(typ), hashThenSign: hashThenSign{h}}
	})...)
}

// rsaPKCSAvailable: the slot option rsa_pkcs_decrypt = false takes
// decryption (and unwrapping) from CKM_RSA_PKCS.
func rsaPKCSAvailable(s Slot, info *Info) bool {
	if !s.Policy().RSAPKCSDecryptOn() {
		info.Flags &^= ck.CKF_DECRYPT | ck.CKF_UNWRAP
	}
	return true
}

// rsaKeyPairGen is CKM_RSA_PKCS_KEY_PAIR_GEN.
type rsaKeyPairGen struct{ MechBase }

// GenerateKeyPair: CKA_MODULUS_BITS is required, CKA_PUBLIC_EXPONENT
// defaults to 65537.
func (m *rsaKeyPairGen) GenerateKeyPair(s Slot, pub, priv attr.Map) (attr.Map, attr.Map, error) {
	bv, ok := pub[ck.CKA_MODULUS_BITS]
	if !ok {
		return nil, nil, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "CKA_MODULUS_BITS missing")
	}
	bits, _ := ck.ParseULong(bv)
	info, _ := s.MechanismInfo(m)
	if bits < info.MinKeySize || bits > info.MaxKeySize {
		return nil, nil, ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "%d bits, want %d..%d", bits, info.MinKeySize, info.MaxKeySize)
	}
	e := defaultRSAExponent
	if ev, ok := pub[ck.CKA_PUBLIC_EXPONENT]; ok {
		var err error
		if e, err = rsaExponent(ev); err != nil {
			return nil, nil, err
		}
	}
	k, err := rsa.GenerateKey(bg, s.Guard().Engine(), rand.Reader, int(bits), e)
	if err != nil {
		return nil, nil, s.EngineErr("generate RSA key", err)
	}
	eb := big.NewInt(int64(e)).Bytes()
	dp, dq, qinv := k.Dp, k.Dq, k.Qinv // set by rsa.GenerateKey, in constant time
	pubVals := attr.Map{ck.CKA_MODULUS: k.N.Bytes(), ck.CKA_PUBLIC_EXPONENT: eb}
	privVals := attr.Map{
		ck.CKA_MODULUS: k.N.Bytes(), ck.CKA_PUBLIC_EXPONENT: eb,
		ck.CKA_PRIVATE_EXPONENT: k.D.Bytes(),
		ck.CKA_PRIME_1:          k.P.Bytes(), ck.CKA_PRIME_2: k.Q.Bytes(),
		ck.CKA_EXPONENT_1: dp.Bytes(), ck.CKA_EXPONENT_2: dq.Bytes(), ck.CKA_COEFFICIENT: qinv.Bytes(),
	}
	return pubVals, privVals, nil
}

// rsaPKCS is CKM_RSA_PKCS: one-shot signatures over a DigestInfo (or any
// data up to k−11 bytes), encryption, and wrapping of secret keys.
type rsaPKCS struct{ MechBase }

func (m *rsaPKCS) Sign(op Op, in []byte) ([]byte, error) {
	k := op.KeyBytes()
	if err := dataLen("CKM_RSA_PKCS sign", len(in), k-11); err != nil {
		return nil, err
	}
	em, err := rsapad.EncodePKCS1v15Sign(in, k)
	if err != nil {
		return nil, padErr("sign", err, ck.CKR_DATA_LEN_RANGE)
	}
	return rsaPrivate(op, em)
}

func (m *rsaPKCS) Verify(op Op, in, sig []byte) error {
	if err := dataLen("CKM_RSA_PKCS verify", len(in), op.KeyBytes()-11); err != nil {
		return err
	}
	em, err := recoverEM(op, sig)
	if err != nil {
		return err
	}
	if err := rsapad.VerifyPKCS1v15Sign(in, em); err != nil {
		return padErr("verify", err, ck.CKR_DATA_LEN_RANGE)
	}
	return nil
}

func (m *rsaPKCS) Encrypt(op Op, in []byte) ([]byte, error) {
	k := op.KeyBytes()
	if err := dataLen("CKM_RSA_PKCS encrypt", len(in), k-11); err != nil {
		return nil, err
	}
	em, err := rsapad.EncodePKCS1v15Encrypt(in, k, rand.Reader)
	if err != nil {
		return nil, padErr("encrypt", err, ck.CKR_DATA_LEN_RANGE)
	}
	return rsaPublicOp(op, em)
}

// Decrypt decrypts with implicit rejection (rsapad/implicit.go): a
// ciphertext whose padding is invalid gives CKR_OK and a synthetic message
// derived from the private exponent and the ciphertext, so neither the
// return code nor the output length says whether the padding was valid,
// and the decoding runs in constant time. Only public facts fail: a
// ciphertext that is not k bytes (CKR_ENCRYPTED_DATA_LEN_RANGE) or not
// below the modulus (CKR_ENCRYPTED_DATA_INVALID). The slot option
// rsa_pkcs_decrypt = false disables the mechanism for decryption.
func (m *rsaPKCS) Decrypt(op Op, in []byte) ([]byte, error) {
	em, err := decryptRaw(op, in)
	if err != nil {
		return nil, err
	}
	k := op.KeyBytes()
	irKey, err := rsapad.ImplicitRejectionKey(op.Key().Attrs()[ck.CKA_PRIVATE_EXPONENT], k)
	if err != nil {
		return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored RSA key: %v", err)
	}
	defer clear(irKey)
	msg, err := rsapad.DecodePKCS1v15EncryptImplicit(em, in, irKey, k)
	clear(em)
	if err != nil {
		return nil, padErr("decrypt", err, ck.CKR_ENCRYPTED_DATA_INVALID)
	}
	return msg, nil
}

func (m *rsaPKCS) Wrap(op Op, material []byte) ([]byte, error) {
	return rsaWrap(m.Encrypt(op, material))
}

func (m *rsaPKCS) Unwrap(op Op, wrapped []byte) ([]byte, error) {
	out, err := m.Decrypt(op, wrapped)
	return out, unwrapErr(err)
}

func (m *rsaPKCS) WrapsPrivate() bool { return false }

// rsaPKCSHash is CKM_SHA*_RSA_PKCS: the input of sign and verify is the
// digest of the data.
type rsaPKCSHash struct {
	MechBase
	hashThenSign
}

func (m *rsaPKCSHash) Sign(op Op, digest []byte) ([]byte, error) {
	t, err := rsapad.DigestInfo(m.hash, digest)
	if err != nil {
		return nil, padErr("sign", err, ck.CKR_KEY_SIZE_RANGE)
	}
	em, err := rsapad.EncodePKCS1v15Sign(t, op.KeyBytes())
	if err != nil {
		return nil, padErr("sign", err, ck.CKR_KEY_SIZE_RANGE)
	}
	return rsaPrivate(op, em)
}

func (m *rsaPKCSHash) Verify(op Op, digest, sig []byte) error {
	t, err := rsapad.DigestInfo(m.hash, digest)
	if err != nil {
		return padErr("verify", err, ck.CKR_KEY_SIZE_RANGE)
	}
	em, err := recoverEM(op, sig)
	if err != nil {
		return err
	}
	if err := rsapad.VerifyPKCS1v15Sign(t, em); err != nil {
		return padErr("verify", err, ck.CKR_KEY_SIZE_RANGE)
	}
	return nil
}

// RSARaw is CKM_RSA_X_509: raw RSA; the input is an integer below the
// modulus.
type RSARaw struct{ MechBase }

// Sign is Signer's: the private operation on the padded input.
func (m *RSARaw) Sign(op Op, in []byte) ([]byte, error) {
	k := op.KeyBytes()
	if err := dataLen("CKM_RSA_X_509 sign", len(in), k); err != nil {
		return nil, err
	}
	return rsaPrivate(op, leftPad(in, k))
}

// Verify is Verifier's.
func (m *RSARaw) Verify(op Op, in, sig []byte) error {
	k := op.KeyBytes()
	if err := dataLen("CKM_RSA_X_509 verify", len(in), k); err != nil {
		return err
	}
	em, err := recoverEM(op, sig)
	if err != nil {
		return err
	}
	if !EqualCT(em, leftPad(in, k)) {
		return ck.Errorf(ck.CKR_SIGNATURE_INVALID, "raw RSA signature mismatch")
	}
	return nil
}

// Encrypt is Encrypter's: the public operation.
func (m *RSARaw) Encrypt(op Op, in []byte) ([]byte, error) {
	k := op.KeyBytes()
	if err := dataLen("CKM_RSA_X_509 encrypt", len(in), k); err != nil {
		return nil, err
	}
	return rsaPublicOp(op, leftPad(in, k))
}

// Decrypt is Decrypter's.
func (m *RSARaw) Decrypt(op Op, in []byte) ([]byte, error) { return decryptRaw(op, in) }

// rsaPSS is CKM_RSA_PKCS_PSS (hash 0: one-shot, the input is the digest)
// and CKM_SHA*_RSA_PKCS_PSS (hash-then-sign with hash), bound to its
// CK_RSA_PKCS_PSS_PARAMS.
type rsaPSS struct {
	MechBase
	hashThenSign
	p pssParams
}

// pssParams are decoded CK_RSA_PKCS_PSS_PARAMS.
type pssParams struct {
	hash, mgf crypto.Hash
	saltLen   int
}

func (m *rsaPSS) withParam(cm *CKMechanism) (Mechanism, error) {
	if cm.PSS == nil || len(cm.Param) != 0 {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s needs CK_RSA_PKCS_PSS_PARAMS", m.Name())
	}
	h, err := rsapad.MechanismHash(cm.PSS.Hash)
	if err != nil {
		return nil, fmt.Errorf("token: PSS hashAlg: %w: %w", ck.CKR_MECHANISM_PARAM_INVALID, err)
	}
	mgf, err := rsapad.MGFHash(cm.PSS.MGF)
	if err != nil {
		return nil, fmt.Errorf("token: PSS mgf: %w: %w", ck.CKR_MECHANISM_PARAM_INVALID, err)
	}
	if m.hash != 0 && h != m.hash {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "PSS hashAlg %v does not match %s", h, m.Name())
	}
	if cm.PSS.SaltLen > rsaMaxBits/8 {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "PSS salt of %d bytes", cm.PSS.SaltLen)
	}
	b := *m
	b.p = pssParams{hash: h, mgf: mgf, saltLen: int(cm.PSS.SaltLen)}
	return &b, nil
}

// CheckKey: the salt must fit the key (emLen ≥ hLen + sLen + 2).
func (m *rsaPSS) CheckKey(op Op) error {
	p := m.p
	emBits := op.KeyBits() - 1
	emLen := (emBits + 7) / 8
	if p.saltLen > emLen-p.hash.Size()-2 {
		return ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "PSS salt of %d bytes does not fit a %d-bit key with %v", p.saltLen, emBits+1, p.hash)
	}
	return nil
}

func (m *rsaPSS) Sign(op Op, digest []byte) ([]byte, error) {
	p := m.p
	if len(digest) != p.hash.Size() {
		return nil, ck.Errorf(ck.CKR_DATA_LEN_RANGE, "PSS input of %d bytes, %v needs %d", len(digest), p.hash, p.hash.Size())
	}
	em, err := rsapad.EncodePSS(digest, op.KeyBits()-1, p.hash, p.mgf, p.saltLen, rand.Reader)
	if err != nil {
		return nil, padErr("sign", err, ck.CKR_DATA_LEN_RANGE)
	}
	return rsaPrivate(op, leftPad(em, op.KeyBytes()))
}

func (m *rsaPSS) Verify(op Op, digest, sig []byte) error {
	p := m.p
	if len(digest) != p.hash.Size() {
		return ck.Errorf(ck.CKR_DATA_LEN_RANGE, "PSS input of %d bytes, %v needs %d", len(digest), p.hash, p.hash.Size())
	}
	em, err := recoverEM(op, sig)
	if err != nil {
		return err
	}
	if err := rsapad.VerifyPSS(digest, em, op.KeyBits()-1, p.hash, p.mgf, p.saltLen); err != nil {
		return padErr("verify", err, ck.CKR_DATA_LEN_RANGE)
	}
	return nil
}

// rsaOAEP is CKM_RSA_PKCS_OAEP bound to its CK_RSA_PKCS_OAEP_PARAMS.
type rsaOAEP struct {
	MechBase
	p oaepParams
}

// oaepParams are decoded CK_RSA_PKCS_OAEP_PARAMS.
type oaepParams struct {
	hash, mgf crypto.Hash
	label     []byte
}

func (m *rsaOAEP) withParam(cm *CKMechanism) (Mechanism, error) {
	if cm.OAEP == nil || len(cm.Param) != 0 {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKM_RSA_PKCS_OAEP needs CK_RSA_PKCS_OAEP_PARAMS")
	}
	h, err := rsapad.MechanismHash(cm.OAEP.Hash)
	if err != nil {
		return nil, fmt.Errorf("token: OAEP hashAlg: %w: %w", ck.CKR_MECHANISM_PARAM_INVALID, err)
	}
	mgf, err := rsapad.MGFHash(cm.OAEP.MGF)
	if err != nil {
		return nil, fmt.Errorf("token: OAEP mgf: %w: %w", ck.CKR_MECHANISM_PARAM_INVALID, err)
	}
	// CKZ_DATA_SPECIFIED is the only source; 0 with no data (sent by some
	// clients for "no label") is accepted as the empty label.
	if cm.OAEP.Source != ck.CKZ_DATA_SPECIFIED && (cm.OAEP.Source != 0 || len(cm.OAEP.SourceData) != 0) {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "OAEP source 0x%X", cm.OAEP.Source)
	}
	b := *m
	b.p = oaepParams{hash: h, mgf: mgf, label: append([]byte(nil), cm.OAEP.SourceData...)}
	return &b, nil
}

// CheckKey: the key must hold two hashes and two bytes.
func (m *rsaOAEP) CheckKey(op Op) error {
	if k := op.KeyBytes(); k < 2*m.p.hash.Size()+2 {
		return ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "%d-byte key too small for OAEP with %v", k, m.p.hash)
	}
	return nil
}

func (m *rsaOAEP) Encrypt(op Op, in []byte) ([]byte, error) {
	p := m.p
	em, err := rsapad.EncodeOAEP(in, p.label, op.KeyBytes(), p.hash, p.mgf, rand.Reader)
	if err != nil {
		return nil, padErr("encrypt", err, ck.CKR_DATA_LEN_RANGE)
	}
	return rsaPublicOp(op, em)
}

func (m *rsaOAEP) Decrypt(op Op, in []byte) ([]byte, error) {
	p := m.p
	em, err := decryptRaw(op, in)
	if err != nil {
		return nil, err
	}
	msg, err := rsapad.DecodeOAEP(em, p.label, op.KeyBytes(), p.hash, p.mgf)
	if err != nil {
		return nil, padErr("decrypt", err, ck.CKR_ENCRYPTED_DATA_INVALID)
	}
	return msg, nil
}

func (m *rsaOAEP) Wrap(op Op, material []byte) ([]byte, error) {
	return rsaWrap(m.Encrypt(op, material))
}

func (m *rsaOAEP) Unwrap(op Op, wrapped []byte) ([]byte, error) {
	out, err := m.Decrypt(op, wrapped)
	return out, unwrapErr(err)
}

func (m *rsaOAEP) WrapsPrivate() bool { return false }

// rsaWrap is an RSA wrap's answer from its encryption's: a key too long
// for the modulus is CKR_KEY_SIZE_RANGE.
func rsaWrap(out []byte, err error) ([]byte, error) {
	if ck.RV(err) == uint64(ck.CKR_DATA_LEN_RANGE) {
		return nil, fmt.Errorf("%w: %w", ck.CKR_KEY_SIZE_RANGE, err)
	}
	return out, err
}

// checkSigLen: an RSA signature is exactly the modulus length.
func checkSigLen(op Op, sig []byte) error {
	if len(sig) != op.KeyBytes() {
		return ck.Errorf(ck.CKR_SIGNATURE_LEN_RANGE, "signature of %d bytes, want %d", len(sig), op.KeyBytes())
	}
	return nil
}

// recoverEM runs the public operation on a signature; a signature not
// below the modulus is invalid.
func recoverEM(op Op, sig []byte) ([]byte, error) {
	if err := checkSigLen(op, sig); err != nil {
		return nil, err
	}
	em, err := rsaPublicOp(op, sig)
	return em, withCode(err, ck.CKR_DATA_INVALID, ck.CKR_SIGNATURE_INVALID)
}

// checkCipherLen: an RSA ciphertext is exactly the modulus length.
func checkCipherLen(op Op, in []byte) error {
	if len(in) != op.KeyBytes() {
		return ck.Errorf(ck.CKR_ENCRYPTED_DATA_LEN_RANGE, "ciphertext of %d bytes, want %d", len(in), op.KeyBytes())
	}
	return nil
}

// decryptRaw runs the private operation on a ciphertext.
func decryptRaw(op Op, in []byte) ([]byte, error) {
	if err := checkCipherLen(op, in); err != nil {
		return nil, err
	}
	em, err := rsaPrivate(op, in)
	return em, withCode(err, ck.CKR_DATA_INVALID, ck.CKR_ENCRYPTED_DATA_INVALID)
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
