package mech

// The mechanisms. A mechanism is a value whose type says what it does.
//
//   - Every mechanism embeds MechBase, the common part: its CKM_ value, key
//     sizes and their unit, the key types it accepts, whether the slot's
//     engine bounds it, and its offer on a slot (available).
//   - The operations it serves are the small interfaces below that its
//     type implements (signer, verifier, encrypter, decrypter,
//     StreamCipher, digester, KeyGenerator, KeyPairGenerator,
//     ParamGenerator, wrapper, unwrapper, deriver, Encapsulator,
//     Decapsulator, MessageCipher), found by type
//     assertion. Its CK_MECHANISM_INFO flags are derived from them when the
//     registry is built (NewRegistry), so a flag never claims an operation
//     the value cannot do; the CKF_MESSAGE_* flags too (messageFlags, in
//     message.go: every signer, verifier and MessageCipher).
//   - Parameters: a mechanism that takes one implements paramTaker:
//     withParam parses the CK_MECHANISM parameter into the mechanism's own
//     typed field and returns that bound copy, which then serves the
//     operation. Any other mechanism takes none (BindParam's default:
//     CKR_MECHANISM_PARAM_INVALID). A parameter that must fit the key is
//     checked by the bound mechanism's checkKey (KeyChecker) at Init.
//   - Accumulation: a signature or MAC mechanism that takes C_SignUpdate
//     implements MultiPart: its accumulator (a running digest, MAC or
//     message buffer, made at Init) is what Update feeds and what the
//     signature is computed over at Final; without one (or with a nil one)
//     the mechanism is one-shot (C_Sign, C_Verify only). An encryption
//     mechanism that takes C_EncryptUpdate is a StreamCipher
//     (symstream.go); an encrypter or decrypter alone is one-shot.
//
// The families live in mech_*.go, the registry in registry.go: adding a
// mechanism is one file and one line there.

import (
	"crypto"
	"fmt"
	"hash"
	"slices"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// Mechanism is a registered mechanism (or one bound to its parameter).
type Mechanism interface {
	Base() *MechBase
}

// MechBase is the common part of every mechanism.
type MechBase struct {
	Type uint64
	// Flags are the CK_MECHANISM_INFO flags: those of the operations the
	// mechanism implements (set by NewRegistry) and ext.
	Flags uint64
	// Ext are capability flags beyond the operations (CKF_EC_*).
	Ext              uint64
	MinBits, MaxBits uint64 // key sizes for CK_MECHANISM_INFO
	// SizeInBytes: minBits and maxBits count bytes, not bits (the AES and
	// HMAC mechanisms, as the standard says for CK_MECHANISM_INFO).
	SizeInBytes bool
	// EngineBound: the private operation runs on the slot's engine, whose
	// limits may lower maxBits.
	EngineBound bool
	KeyTypes    []uint64 // CKK_ values the mechanism accepts
	// Available reports whether the slot can serve the mechanism (nil:
	// always), and may narrow its info (flags, key sizes) to what the
	// slot's engine and fallback policy can do.
	Available func(s Slot, info *Info) bool
}

// Base is Mechanism's: the common part.
func (b *MechBase) Base() *MechBase { return b }

// Name is the mechanism's CKM_ name.
func (b *MechBase) Name() string { return ck.Name("CKM_", b.Type) }

// SizeUnit names the unit of the mechanism's key sizes.
func (b *MechBase) SizeUnit() string {
	if b.SizeInBytes {
		return "bytes"
	}
	return "bits"
}

// AcceptsKeyType reports whether the mechanism takes keys of type kt.
func (b *MechBase) AcceptsKeyType(kt uint64) bool { return slices.Contains(b.KeyTypes, kt) }

// The operations. The input of sign and verify is the data of a one-shot
// mechanism, or the Sum of the accumulator of a MultiPart one.
type (
	// Signer signs.
	Signer interface {
		Mechanism
		Sign(op Op, input []byte) ([]byte, error)
	}
	// Verifier verifies.
	Verifier interface {
		Mechanism
		Verify(op Op, input, sig []byte) error
	}
	// MultiPart is the accumulation policy of a signer/verifier that takes
	// Update: accumulator makes, at Init, what Update feeds (nil: the
	// mechanism, or this use of it, is one-shot).
	MultiPart interface {
		Mechanism
		Accumulator(op Op) (hash.Hash, error)
	}
	// Encrypter encrypts in one part.
	Encrypter interface {
		Mechanism
		Encrypt(op Op, in []byte) ([]byte, error)
	}
	// Decrypter decrypts in one part.
	Decrypter interface {
		Mechanism
		Decrypt(op Op, in []byte) ([]byte, error)
	}
	// StreamCipher encrypts and decrypts in one or several parts through
	// the SymStream it makes at Init (symstream.go).
	StreamCipher interface {
		Mechanism
		NewStream(op Op) (SymStream, error)
	}
	// Digester is a digest mechanism (C_Digest*).
	Digester interface {
		Mechanism
		NewDigest() hash.Hash
	}
	// KeyPairGenerator returns the generated values of the public and
	// private key (the templates have been checked against the schemas).
	KeyPairGenerator interface {
		Mechanism
		GenerateKeyPair(s Slot, pub, priv attr.Map) (pubVals, privVals attr.Map, err error)
	}
	// KeyGenerator returns the CKA_VALUE of a new secret key
	// (C_GenerateKey) for a template already checked against the schema,
	// with CKA_CLASS and CKA_KEY_TYPE set (token/secretkey.go).
	KeyGenerator interface {
		Mechanism
		GenerateKey(tmpl attr.Map) ([]byte, error)
	}
	// ParamGenerator returns the generated values of a new
	// CKO_DOMAIN_PARAMETERS object (C_GenerateKey; token/domain.go) for a
	// checked template.
	ParamGenerator interface {
		Mechanism
		GenerateParams(s Slot, tmpl attr.Map) (attr.Map, error)
	}
	// Wrapper encrypts key material (a secret key's value, a private
	// key's PKCS#8) under op.Key() for C_WrapKey (token/wrap.go); wrapsPrivate:
	// private keys too, not only secret keys.
	Wrapper interface {
		Mechanism
		Wrap(op Op, material []byte) ([]byte, error)
		WrapsPrivate() bool
	}
	// Unwrapper decrypts it for C_UnwrapKey.
	Unwrapper interface {
		Mechanism
		Unwrap(op Op, wrapped []byte) ([]byte, error)
		WrapsPrivate() bool
	}
	// Deriver is C_DeriveKey's work (token/derive.go): from the operation's
	// base key and the bound parameter it returns the CKA_VALUE of the
	// new secret key that tmpl (defaults applied) describes.
	Deriver interface {
		Mechanism
		Derive(op Op, tmpl attr.Map) ([]byte, error)
	}
	// Encapsulator is C_EncapsulateKey's work (token/kem.go): with the
	// operation's public key it makes a fresh shared secret and its
	// ciphertext; ciphertextLen is the ciphertext's length for that key
	// (the two-call length rule).
	Encapsulator interface {
		Mechanism
		CiphertextLen(op Op) (int, error)
		Encapsulate(op Op) (ciphertext, secret []byte, err error)
	}
	// Decapsulator is C_DecapsulateKey's: the shared secret of a
	// ciphertext under the operation's private key.
	Decapsulator interface {
		Mechanism
		Decapsulate(op Op, ciphertext []byte) (secret []byte, err error)
	}
	// paramTaker parses its CK_MECHANISM parameter and returns itself
	// bound to it.
	paramTaker interface {
		Mechanism
		withParam(cm *CKMechanism) (Mechanism, error)
	}
	// KeyChecker checks the bound mechanism against the operation's key
	// at Init (a salt that must fit the modulus, a curve the slot must
	// serve).
	KeyChecker interface {
		Mechanism
		CheckKey(op Op) error
	}
)

// OpFlag is the CK_MECHANISM_INFO flag of each kind of operation.
var OpFlag = [OpKinds]uint64{
	OpSign:    ck.CKF_SIGN,
	OpVerify:  ck.CKF_VERIFY,
	OpEncrypt: ck.CKF_ENCRYPT,
	OpDecrypt: ck.CKF_DECRYPT,
	OpDigest:  ck.CKF_DIGEST,
	OpDerive:  ck.CKF_DERIVE,

	OpMessageEncrypt: ck.CKF_MESSAGE_ENCRYPT,
	OpMessageDecrypt: ck.CKF_MESSAGE_DECRYPT,
	OpMessageSign:    ck.CKF_MESSAGE_SIGN,
	OpMessageVerify:  ck.CKF_MESSAGE_VERIFY,
}

// OperationFlags are the CK_MECHANISM_INFO flags of the operations m
// implements.
func OperationFlags(m Mechanism) uint64 {
	var f uint64
	set := func(ok bool, flag uint64) {
		if ok {
			f |= flag
		}
	}
	_, stream := m.(StreamCipher)
	_, ok := m.(Signer)
	set(ok, ck.CKF_SIGN)
	_, ok = m.(Verifier)
	set(ok, ck.CKF_VERIFY)
	_, ok = m.(Encrypter)
	set(ok || stream, ck.CKF_ENCRYPT)
	_, ok = m.(Decrypter)
	set(ok || stream, ck.CKF_DECRYPT)
	_, ok = m.(Digester)
	set(ok, ck.CKF_DIGEST)
	_, ok = m.(KeyGenerator)
	_, ok2 := m.(ParamGenerator)
	set(ok || ok2, ck.CKF_GENERATE)
	_, ok = m.(KeyPairGenerator)
	set(ok, ck.CKF_GENERATE_KEY_PAIR)
	_, ok = m.(Wrapper)
	set(ok, ck.CKF_WRAP)
	_, ok = m.(Unwrapper)
	set(ok, ck.CKF_UNWRAP)
	_, ok = m.(Deriver)
	set(ok, ck.CKF_DERIVE)
	_, ok = m.(Encapsulator)
	set(ok, ck.CKF_ENCAPSULATE)
	_, ok = m.(Decapsulator)
	set(ok, ck.CKF_DECAPSULATE)
	return f | messageFlags(m)
}

// OperationMask are the flags operationFlags may set.
const OperationMask = ck.CKF_SIGN | ck.CKF_VERIFY | ck.CKF_ENCRYPT | ck.CKF_DECRYPT | ck.CKF_DIGEST |
	ck.CKF_GENERATE | ck.CKF_GENERATE_KEY_PAIR | ck.CKF_WRAP | ck.CKF_UNWRAP | ck.CKF_DERIVE |
	ck.CKF_ENCAPSULATE | ck.CKF_DECAPSULATE | MessageMask

// Offers reports whether the mechanism serves kind.
func Offers(m Mechanism, kind OpKind) bool { return m.Base().Flags&OpFlag[kind] != 0 }

// NewRegistry indexes the families' mechanisms by CKM_ value and sets
// their flags; a mechanism registered twice, one that serves no
// operation, or one whose ext claims an operation is a programming error.
func NewRegistry(families ...[]Mechanism) map[uint64]Mechanism {
	reg := map[uint64]Mechanism{}
	for _, fam := range families {
		for _, m := range fam {
			b := m.Base()
			if _, dup := reg[b.Type]; dup {
				panic(fmt.Sprintf("token: mechanism %s registered twice", b.Name()))
			}
			ops := OperationFlags(m)
			if ops == 0 || b.Ext&OperationMask != 0 || b.Flags != 0 {
				panic(fmt.Sprintf("token: mechanism %s: operations %#x, ext %#x, preset flags %#x", b.Name(), ops, b.Ext, b.Flags))
			}
			if _, ok := m.(Digester); !ok && len(b.KeyTypes) == 0 {
				panic(fmt.Sprintf("token: mechanism %s accepts no key type", b.Name()))
			}
			b.Flags = ops | b.Ext
			reg[b.Type] = m
		}
	}
	return reg
}

// BindParam returns m bound to cm's parameter: withParam's answer, or m
// itself when cm has no parameter (the default: a mechanism takes none).
func BindParam(m Mechanism, cm *CKMechanism) (Mechanism, error) {
	if p, ok := m.(paramTaker); ok {
		return p.withParam(cm)
	}
	if err := noParam(m, cm); err != nil {
		return nil, err
	}
	return m, nil
}

// rebinder is a paramTaker that can bind a parameter into the memory of an
// earlier binding of its own (rebind's prev), which no operation uses any
// more: the session's last operation of the kind, ended. A symmetric
// encryption's Init then allocates nothing. rebind makes a new binding
// when prev is not one of its own copies.
type rebinder interface {
	rebind(prev Mechanism, cm *CKMechanism) (Mechanism, error)
}

// BindParamReusing is BindParam that may overwrite prev, the bound
// mechanism of an ended operation that nothing uses any more (nil: none),
// instead of allocating a new binding.
func BindParamReusing(m Mechanism, cm *CKMechanism, prev Mechanism) (Mechanism, error) {
	if r, ok := m.(rebinder); ok && prev != nil {
		return r.rebind(prev, cm)
	}
	return BindParam(m, cm)
}

// noParam refuses any parameter.
func noParam(m Mechanism, cm *CKMechanism) error {
	if len(cm.Param) != 0 || cm.Decoded() {
		return ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s takes no parameter", m.Base().Name())
	}
	return nil
}

// Decoded reports whether the C layer decoded a structured parameter (a
// mechanism that takes raw bytes refuses one).
func (m *CKMechanism) Decoded() bool {
	return m.PSS != nil || m.OAEP != nil || m.ECDH != nil || m.EdDSA != nil || m.GCM != nil || m.EncryptData != nil ||
		m.HKDF != nil || m.SignContext != nil
}

// hashMech pairs a CKM_ value with its hash (the tables of the digest
// and hash-then-sign mechanisms).
type hashMech struct {
	Type uint64
	Hash crypto.Hash
}

// perHash makes one mechanism for each entry of a hash table.
func perHash(table []hashMech, mk func(typ uint64, h crypto.Hash) Mechanism) []Mechanism {
	ms := make([]Mechanism, len(table))
	for i, hm := range table {
		ms[i] = mk(hm.Type, hm.Hash)
	}
	return ms
}

// hashThenSign is the accumulation policy of a signature family: its
// CKM_*_SHA* forms hash the data (Update feeds a digest of hash, Final
// signs the digest); with hash 0 (CKM_RSA_PKCS_PSS, CKM_ECDSA, CKM_DSA)
// the mechanism is one-shot and signs its input as the hash.
type hashThenSign struct{ hash crypto.Hash }

func (p hashThenSign) Accumulator(Op) (hash.Hash, error) {
	if p.hash == 0 {
		return nil, nil
	}
	return p.hash.New(), nil
}
