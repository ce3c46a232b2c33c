package token

// The mechanisms. A mechanism is a value whose type says what it does.
//
//   - Every mechanism embeds mechBase, the common part: its CKM_ value, key
//     sizes and their unit, the key types it accepts, whether the slot's
//     engine bounds it, and its offer on a slot (available).
//   - The operations it serves are the small interfaces below that its
//     type implements (signer, verifier, encrypter, decrypter,
//     streamCipher, digester, keyGenerator, keyPairGenerator,
//     paramGenerator, wrapper, unwrapper, deriver, encapsulator,
//     decapsulator, messageCipher), found by type
//     assertion. Its CK_MECHANISM_INFO flags are derived from them when the
//     registry is built (newRegistry), so a flag never claims an operation
//     the value cannot do; the CKF_MESSAGE_* flags too (messageFlags, in
//     message.go: every signer, verifier and messageCipher).
//   - Parameters: a mechanism that takes one implements paramTaker:
//     withParam parses the CK_MECHANISM parameter into the mechanism's own
//     typed field and returns that bound copy, which then serves the
//     operation. Any other mechanism takes none (bindParam's default:
//     CKR_MECHANISM_PARAM_INVALID). A parameter that must fit the key is
//     checked by the bound mechanism's checkKey (keyChecker) at Init.
//   - Accumulation: a signature or MAC mechanism that takes C_SignUpdate
//     implements multiPart: its accumulator (a running digest, MAC or
//     message buffer, made at Init) is what Update feeds and what the
//     signature is computed over at Final; without one (or with a nil one)
//     the mechanism is one-shot (C_Sign, C_Verify only). An encryption
//     mechanism that takes C_EncryptUpdate is a streamCipher
//     (symstream.go); an encrypter or decrypter alone is one-shot.
//
// The families live in mech_*.go, the registry in registry.go: adding a
// mechanism is one file and one line there.

import (
	"crypto"
	"fmt"
	"hash"
	"slices"

	"github.com/modexp-token/modexp-token/token/ck"
)

// mechanism is a registered mechanism (or one bound to its parameter).
type mechanism interface {
	base() *mechBase
}

// mechBase is the common part of every mechanism.
type mechBase struct {
	typ uint64
	// flags are the CK_MECHANISM_INFO flags: those of the operations the
	// mechanism implements (set by newRegistry) and ext.
	flags uint64
	// ext are capability flags beyond the operations (CKF_EC_*).
	ext              uint64
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
}

func (b *mechBase) base() *mechBase { return b }

// name is the mechanism's CKM_ name.
func (b *mechBase) name() string { return ck.Name("CKM_", b.typ) }

// sizeUnit names the unit of the mechanism's key sizes.
func (b *mechBase) sizeUnit() string {
	if b.sizeInBytes {
		return "bytes"
	}
	return "bits"
}

func (b *mechBase) acceptsKeyType(kt uint64) bool { return slices.Contains(b.keyTypes, kt) }

// The operations. The input of sign and verify is the data of a one-shot
// mechanism, or the Sum of the accumulator of a multiPart one.
type (
	signer interface {
		mechanism
		sign(op *operation, input []byte) ([]byte, error)
	}
	verifier interface {
		mechanism
		verify(op *operation, input, sig []byte) error
	}
	// multiPart is the accumulation policy of a signer/verifier that takes
	// Update: accumulator makes, at Init, what Update feeds (nil: the
	// mechanism, or this use of it, is one-shot).
	multiPart interface {
		mechanism
		accumulator(op *operation) (hash.Hash, error)
	}
	encrypter interface {
		mechanism
		encrypt(op *operation, in []byte) ([]byte, error)
	}
	decrypter interface {
		mechanism
		decrypt(op *operation, in []byte) ([]byte, error)
	}
	// streamCipher encrypts and decrypts in one or several parts through
	// the symStream it makes at Init (symstream.go).
	streamCipher interface {
		mechanism
		newStream(op *operation) (symStream, error)
	}
	// digester is a digest mechanism (C_Digest*).
	digester interface {
		mechanism
		newDigest() hash.Hash
	}
	// keyPairGenerator returns the generated values of the public and
	// private key (the templates have been checked against the schemas).
	keyPairGenerator interface {
		mechanism
		generateKeyPair(s *slot, pub, priv attrMap) (pubVals, privVals attrMap, err error)
	}
	// keyGenerator returns the CKA_VALUE of a new secret key
	// (C_GenerateKey) for a template already checked against the schema,
	// with CKA_CLASS and CKA_KEY_TYPE set (secretkey.go).
	keyGenerator interface {
		mechanism
		generateKey(tmpl attrMap) ([]byte, error)
	}
	// paramGenerator returns the generated values of a new
	// CKO_DOMAIN_PARAMETERS object (C_GenerateKey; domain.go) for a
	// checked template.
	paramGenerator interface {
		mechanism
		generateParams(s *slot, tmpl attrMap) (attrMap, error)
	}
	// wrapper encrypts key material (a secret key's value, a private
	// key's PKCS#8) under op.key for C_WrapKey (wrap.go); wrapsPrivate:
	// private keys too, not only secret keys.
	wrapper interface {
		mechanism
		wrap(op *operation, material []byte) ([]byte, error)
		wrapsPrivate() bool
	}
	// unwrapper decrypts it for C_UnwrapKey.
	unwrapper interface {
		mechanism
		unwrap(op *operation, wrapped []byte) ([]byte, error)
		wrapsPrivate() bool
	}
	// deriver is C_DeriveKey's work (derive.go): from the operation's
	// base key and the bound parameter it returns the CKA_VALUE of the
	// new secret key that tmpl (defaults applied) describes.
	deriver interface {
		mechanism
		derive(op *operation, tmpl attrMap) ([]byte, error)
	}
	// encapsulator is C_EncapsulateKey's work (kem.go): with the
	// operation's public key it makes a fresh shared secret and its
	// ciphertext; ciphertextLen is the ciphertext's length for that key
	// (the two-call length rule).
	encapsulator interface {
		mechanism
		ciphertextLen(op *operation) (int, error)
		encapsulate(op *operation) (ciphertext, secret []byte, err error)
	}
	// decapsulator is C_DecapsulateKey's: the shared secret of a
	// ciphertext under the operation's private key.
	decapsulator interface {
		mechanism
		decapsulate(op *operation, ciphertext []byte) (secret []byte, err error)
	}
	// paramTaker parses its CK_MECHANISM parameter and returns itself
	// bound to it.
	paramTaker interface {
		mechanism
		withParam(cm *Mechanism) (mechanism, error)
	}
	// keyChecker checks the bound mechanism against the operation's key
	// at Init (a salt that must fit the modulus, a curve the slot must
	// serve).
	keyChecker interface {
		mechanism
		checkKey(op *operation) error
	}
)

// opFlag is the CK_MECHANISM_INFO flag of each kind of operation.
var opFlag = [opKinds]uint64{
	opSign:    ck.CKF_SIGN,
	opVerify:  ck.CKF_VERIFY,
	opEncrypt: ck.CKF_ENCRYPT,
	opDecrypt: ck.CKF_DECRYPT,
	opDigest:  ck.CKF_DIGEST,
	opDerive:  ck.CKF_DERIVE,

	opMessageEncrypt: ck.CKF_MESSAGE_ENCRYPT,
	opMessageDecrypt: ck.CKF_MESSAGE_DECRYPT,
	opMessageSign:    ck.CKF_MESSAGE_SIGN,
	opMessageVerify:  ck.CKF_MESSAGE_VERIFY,
}

// operationFlags are the CK_MECHANISM_INFO flags of the operations m
// implements.
func operationFlags(m mechanism) uint64 {
	var f uint64
	set := func(ok bool, flag uint64) {
		if ok {
			f |= flag
		}
	}
	_, stream := m.(streamCipher)
	_, ok := m.(signer)
	set(ok, ck.CKF_SIGN)
	_, ok = m.(verifier)
	set(ok, ck.CKF_VERIFY)
	_, ok = m.(encrypter)
	set(ok || stream, ck.CKF_ENCRYPT)
	_, ok = m.(decrypter)
	set(ok || stream, ck.CKF_DECRYPT)
	_, ok = m.(digester)
	set(ok, ck.CKF_DIGEST)
	_, ok = m.(keyGenerator)
	_, ok2 := m.(paramGenerator)
	set(ok || ok2, ck.CKF_GENERATE)
	_, ok = m.(keyPairGenerator)
	set(ok, ck.CKF_GENERATE_KEY_PAIR)
	_, ok = m.(wrapper)
	set(ok, ck.CKF_WRAP)
	_, ok = m.(unwrapper)
	set(ok, ck.CKF_UNWRAP)
	_, ok = m.(deriver)
	set(ok, ck.CKF_DERIVE)
	_, ok = m.(encapsulator)
	set(ok, ck.CKF_ENCAPSULATE)
	_, ok = m.(decapsulator)
	set(ok, ck.CKF_DECAPSULATE)
	return f | messageFlags(m)
}

// operationMask are the flags operationFlags may set.
const operationMask = ck.CKF_SIGN | ck.CKF_VERIFY | ck.CKF_ENCRYPT | ck.CKF_DECRYPT | ck.CKF_DIGEST |
	ck.CKF_GENERATE | ck.CKF_GENERATE_KEY_PAIR | ck.CKF_WRAP | ck.CKF_UNWRAP | ck.CKF_DERIVE |
	ck.CKF_ENCAPSULATE | ck.CKF_DECAPSULATE | messageMask

// offers reports whether the mechanism serves kind.
func offers(m mechanism, kind opKind) bool { return m.base().flags&opFlag[kind] != 0 }

// newRegistry indexes the families' mechanisms by CKM_ value and sets
// their flags; a mechanism registered twice, one that serves no
// operation, or one whose ext claims an operation is a programming error.
func newRegistry(families ...[]mechanism) map[uint64]mechanism {
	reg := map[uint64]mechanism{}
	for _, fam := range families {
		for _, m := range fam {
			b := m.base()
			if _, dup := reg[b.typ]; dup {
				panic(fmt.Sprintf("token: mechanism %s registered twice", b.name()))
			}
			ops := operationFlags(m)
			if ops == 0 || b.ext&operationMask != 0 || b.flags != 0 {
				panic(fmt.Sprintf("token: mechanism %s: operations %#x, ext %#x, preset flags %#x", b.name(), ops, b.ext, b.flags))
			}
			if _, ok := m.(digester); !ok && len(b.keyTypes) == 0 {
				panic(fmt.Sprintf("token: mechanism %s accepts no key type", b.name()))
			}
			b.flags = ops | b.ext
			reg[b.typ] = m
		}
	}
	return reg
}

// bindParam returns m bound to cm's parameter: withParam's answer, or m
// itself when cm has no parameter (the default: a mechanism takes none).
func bindParam(m mechanism, cm *Mechanism) (mechanism, error) {
	if p, ok := m.(paramTaker); ok {
		return p.withParam(cm)
	}
	if err := noParam(m, cm); err != nil {
		return nil, err
	}
	return m, nil
}

// noParam refuses any parameter.
func noParam(m mechanism, cm *Mechanism) error {
	if len(cm.Param) != 0 || cm.decoded() {
		return ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s takes no parameter", m.base().name())
	}
	return nil
}

// decoded reports whether the C layer decoded a structured parameter (a
// mechanism that takes raw bytes refuses one).
func (m *Mechanism) decoded() bool {
	return m.PSS != nil || m.OAEP != nil || m.ECDH != nil || m.EdDSA != nil || m.GCM != nil || m.EncryptData != nil ||
		m.HKDF != nil || m.SignContext != nil
}

// hashMech pairs a CKM_ value with its hash (the tables of the digest
// and hash-then-sign mechanisms).
type hashMech struct {
	typ  uint64
	hash crypto.Hash
}

// perHash makes one mechanism for each entry of a hash table.
func perHash(table []hashMech, mk func(typ uint64, h crypto.Hash) mechanism) []mechanism {
	ms := make([]mechanism, len(table))
	for i, hm := range table {
		ms[i] = mk(hm.typ, hm.hash)
	}
	return ms
}

// hashThenSign is the accumulation policy of a signature family: its
// CKM_*_SHA* forms hash the data (Update feeds a digest of hash, Final
// signs the digest); with hash 0 (CKM_RSA_PKCS_PSS, CKM_ECDSA, CKM_DSA)
// the mechanism is one-shot and signs its input as the hash.
type hashThenSign struct{ hash crypto.Hash }

func (p hashThenSign) accumulator(*operation) (hash.Hash, error) {
	if p.hash == 0 {
		return nil, nil
	}
	return p.hash.New(), nil
}
