package token

// Starting an operation: the common part of C_SignInit, C_VerifyInit,
// C_EncryptInit, C_DecryptInit and C_DigestInit.

import (
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// keyClassFor is the key class each kind of operation uses.
var keyClassFor = [mech.OpKinds]uint64{
	mech.OpSign:    ck.CKO_PRIVATE_KEY,
	mech.OpDecrypt: ck.CKO_PRIVATE_KEY,
	mech.OpVerify:  ck.CKO_PUBLIC_KEY,
	mech.OpEncrypt: ck.CKO_PUBLIC_KEY,
	mech.OpDerive:  ck.CKO_PRIVATE_KEY,

	mech.OpMessageSign:    ck.CKO_PRIVATE_KEY,
	mech.OpMessageDecrypt: ck.CKO_PRIVATE_KEY,
	mech.OpMessageVerify:  ck.CKO_PUBLIC_KEY,
	mech.OpMessageEncrypt: ck.CKO_PUBLIC_KEY,
}

// rsaVerifyMinBits is the smallest RSA modulus C_VerifyInit takes: below
// the mechanisms' 1024 bits (CK_MECHANISM_INFO, key generation, every
// other operation), so that old certificates and signatures made with
// 512- to 1023-bit keys can still be checked, as SoftHSMv2 checks them
// (python-pkcs11's suite verifies a 512-bit certificate). A verification
// uses only public values; what a signature under such a key is worth is
// the caller's judgement.
const rsaVerifyMinBits = 512

// initOp checks mechanism, parameters and key and installs the operation.
func (m *Module) initOp(sh uint64, kind mech.OpKind, cm *Mechanism, keyHandle uint64) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	if ss.ops[kind] != nil {
		return ck.Errorf(ck.CKR_OPERATION_ACTIVE, "%s operation active", mech.OpNames[kind])
	}
	if cm == nil {
		return ck.Errorf(ck.CKR_ARGUMENTS_BAD, "no mechanism")
	}
	mc, ok := mech.Registry[cm.Type]
	if !ok || !mech.Offers(mc, kind) {
		if isMessageKind(kind) {
			// A message Init names an invalid key before a mechanism that
			// serves only the classic operation (test/stress's sweep).
			if _, _, _, err := ss.slot.keyObject(keyHandle); err != nil {
				return err
			}
		}
		return ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s cannot %s", ck.Name("CKM_", cm.Type), mech.OpNames[kind])
	}
	info := &ss.info
	if ok := ss.slot.mechanismInfoTo(info, mc); !ok || info.Flags&mech.OpFlag[kind] == 0 {
		return ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s cannot %s on this slot's engine", ck.Name("CKM_", cm.Type), mech.OpNames[kind])
	}
	// The key's handle before the mechanism's parameter: an invalid handle
	// is CKR_KEY_HANDLE_INVALID whatever the parameter (pkcs11test's
	// EncryptDecryptInitInvalid), as C_WrapKey and C_DeriveKey check theirs.
	var key *object
	var epoch uint64
	if kind != mech.OpDigest {
		if key, epoch, _, err = ss.slot.keyObject(keyHandle); err != nil {
			return err
		}
	}
	mc, err = bindFor(kind, mc, cm, ss.spareMechanism(kind))
	if err != nil {
		return err
	}
	op := ss.newOperation(kind, mc)
	if kind == mech.OpDigest {
		op.digest = mc.(mech.Digester).NewDigest()
		return ss.begin(op)
	}
	op.key = key
	// A secret key serves every kind of operation; the mechanism's key
	// types then tell whether it fits.
	class := key.class()
	wantClass := keyClassFor[kind]
	if class == ck.CKO_SECRET_KEY {
		wantClass = ck.CKO_SECRET_KEY
	}
	switch {
	case class != ck.CKO_PUBLIC_KEY && class != ck.CKO_PRIVATE_KEY && class != ck.CKO_SECRET_KEY:
		return ck.Errorf(ck.CKR_KEY_HANDLE_INVALID, "object %d is not a key", keyHandle)
	case class != wantClass || !mc.Base().AcceptsKeyType(key.keyType()):
		return ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "%s with %s of type %s", ck.Name("CKM_", cm.Type),
			ck.Name("CKO_", class), ck.Name("CKK_", key.keyType()))
	}
	if !key.attrs.Bool(usageAttr[kind]) {
		return ck.Errorf(ck.CKR_KEY_FUNCTION_NOT_PERMITTED, "key %d: %s is false", keyHandle, attr.Describe(usageAttr[kind]))
	}
	if !allowsMechanism(key.attrs, cm.Type) {
		return ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s not in the key's CKA_ALLOWED_MECHANISMS", ck.Name("CKM_", cm.Type))
	}
	size := uint64(op.KeyBits())
	if mc.Base().SizeInBytes {
		size /= 8
	}
	minSize := info.MinKeySize
	if kind == mech.OpVerify && key.keyType() == ck.CKK_RSA {
		minSize = min(minSize, rsaVerifyMinBits)
	}
	if size < minSize || size > info.MaxKeySize {
		return ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "%d-%s key, %s takes %d..%d", size, mc.Base().SizeUnit(), ck.Name("CKM_", cm.Type), minSize, info.MaxKeySize)
	}
	if err := op.checkKey(); err != nil {
		return err
	}
	if wantClass == ck.CKO_PRIVATE_KEY || wantClass == ck.CKO_SECRET_KEY {
		if !key.complete {
			return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "private key values are sealed")
		}
		op.needLogin, op.epoch = wantClass == ck.CKO_PRIVATE_KEY || key.isPrivate(), epoch
		op.needAuth = key.attrs.Bool(ck.CKA_ALWAYS_AUTHENTICATE)
	}
	if err := op.InitInput(); err != nil {
		return err
	}
	return ss.begin(op)
}

// checkKey runs the bound mechanism's check of its parameter against the
// operation's key (KeyChecker), if it has one.
func (op *operation) checkKey() error {
	if kc, ok := op.mech.(mech.KeyChecker); ok {
		return kc.CheckKey(op)
	}
	return nil
}

// InitInput applies the mechanism's accumulation policy at Init: the
// accumulator of a MultiPart signature or MAC, the SymStream of a
// StreamCipher; a one-shot mechanism gets neither.
func (op *operation) InitInput() error {
	var err error
	switch op.kind {
	case mech.OpSign, mech.OpVerify:
		if mp, ok := op.mech.(mech.MultiPart); ok {
			op.digest, err = mp.Accumulator(op)
		}
	case mech.OpEncrypt, mech.OpDecrypt:
		if sc, ok := op.mech.(mech.StreamCipher); ok {
			op.stream, err = sc.NewStream(op)
		}
	case mech.OpMessageEncrypt, mech.OpMessageDecrypt, mech.OpMessageSign, mech.OpMessageVerify:
		op.msg = &msgState{}
	}
	return err
}

// resetInput puts a single-part operation's input state back where the
// Init left it (a fresh accumulator, digest or SymStream), so that a
// single-part call can be computed again for another input. Only a
// single-part call uses it, and those are refused after an Update
// (op.multi): no Update's data is lost.
func (op *operation) resetInput() error {
	if op.kind == mech.OpDigest {
		op.digest = op.mech.(mech.Digester).NewDigest()
		return nil
	}
	op.digest, op.stream = nil, nil
	return op.InitInput()
}

// singlePart is the answer of a one-shot mechanism to an Update or Final
// call.
func (op *operation) singlePart() error {
	return ck.Errorf(ck.CKR_FUNCTION_NOT_SUPPORTED, "%s is single-part", op.mech.Base().Name())
}

// KeyBits is the size of the operation's key.
func (op *operation) KeyBits() int {
	kt, ok := mech.KeyTypes[op.key.keyType()]
	if !ok {
		return 0
	}
	return kt.Bits(op.key.attrs)
}

// KeyBytes is the byte length of the RSA modulus.
func (op *operation) KeyBytes() int { return (op.KeyBits() + 7) / 8 }
