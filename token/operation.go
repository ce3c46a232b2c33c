package token

// Starting an operation (the common part of C_SignInit, C_VerifyInit,
// C_EncryptInit, C_DecryptInit, C_DigestInit) and the RSA primitives the
// mechanisms use.

import (
	"github.com/modexp-token/modexp-token/token/ck"
)

// keyClassFor is the key class each kind of operation uses.
var keyClassFor = [opKinds]uint64{
	opSign:    ck.CKO_PRIVATE_KEY,
	opDecrypt: ck.CKO_PRIVATE_KEY,
	opVerify:  ck.CKO_PUBLIC_KEY,
	opEncrypt: ck.CKO_PUBLIC_KEY,
	opDerive:  ck.CKO_PRIVATE_KEY,

	opMessageSign:    ck.CKO_PRIVATE_KEY,
	opMessageDecrypt: ck.CKO_PRIVATE_KEY,
	opMessageVerify:  ck.CKO_PUBLIC_KEY,
	opMessageEncrypt: ck.CKO_PUBLIC_KEY,
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
func (m *Module) initOp(sh uint64, kind opKind, cm *Mechanism, keyHandle uint64) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	if ss.ops[kind] != nil {
		return ck.Errorf(ck.CKR_OPERATION_ACTIVE, "%s operation active", opNames[kind])
	}
	if cm == nil {
		return ck.Errorf(ck.CKR_ARGUMENTS_BAD, "no mechanism")
	}
	mech, ok := mechanisms[cm.Type]
	if !ok || !offers(mech, kind) {
		if isMessageKind(kind) {
			// A message Init names an invalid key before a mechanism that
			// serves only the classic operation (test/stress's sweep).
			if _, _, _, err := ss.slot.keyObject(keyHandle); err != nil {
				return err
			}
		}
		return ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s cannot %s", ck.Name("CKM_", cm.Type), opNames[kind])
	}
	info, ok := ss.slot.mechanismInfo(mech)
	if !ok || info.Flags&opFlag[kind] == 0 {
		return ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s cannot %s on this slot's engine", ck.Name("CKM_", cm.Type), opNames[kind])
	}
	// The key's handle before the mechanism's parameter: an invalid handle
	// is CKR_KEY_HANDLE_INVALID whatever the parameter (pkcs11test's
	// EncryptDecryptInitInvalid), as C_WrapKey and C_DeriveKey check theirs.
	var key *object
	var epoch uint64
	if kind != opDigest {
		if key, epoch, _, err = ss.slot.keyObject(keyHandle); err != nil {
			return err
		}
	}
	mech, err = bindFor(kind, mech, cm)
	if err != nil {
		return err
	}
	op := &operation{kind: kind, mech: mech, slot: ss.slot}
	if kind == opDigest {
		op.digest = mech.(digester).newDigest()
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
	case class != wantClass || !mech.base().acceptsKeyType(key.keyType()):
		return ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "%s with %s of type %s", ck.Name("CKM_", cm.Type),
			ck.Name("CKO_", class), ck.Name("CKK_", key.keyType()))
	}
	if !key.attrs.bool(usageAttr[kind]) {
		return ck.Errorf(ck.CKR_KEY_FUNCTION_NOT_PERMITTED, "key %d: %s is false", keyHandle, describe(usageAttr[kind]))
	}
	if !key.attrs.allowsMechanism(cm.Type) {
		return ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s not in the key's CKA_ALLOWED_MECHANISMS", ck.Name("CKM_", cm.Type))
	}
	size := uint64(op.keyBits())
	if mech.base().sizeInBytes {
		size /= 8
	}
	minSize := info.MinKeySize
	if kind == opVerify && key.keyType() == ck.CKK_RSA {
		minSize = min(minSize, rsaVerifyMinBits)
	}
	if size < minSize || size > info.MaxKeySize {
		return ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "%d-%s key, %s takes %d..%d", size, mech.base().sizeUnit(), ck.Name("CKM_", cm.Type), minSize, info.MaxKeySize)
	}
	if err := op.checkKey(); err != nil {
		return err
	}
	if wantClass == ck.CKO_PRIVATE_KEY || wantClass == ck.CKO_SECRET_KEY {
		if !key.complete {
			return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "private key values are sealed")
		}
		op.needLogin, op.epoch = wantClass == ck.CKO_PRIVATE_KEY || key.isPrivate(), epoch
		op.needAuth = key.attrs.bool(ck.CKA_ALWAYS_AUTHENTICATE)
	}
	if err := op.initInput(); err != nil {
		return err
	}
	return ss.begin(op)
}

// checkKey runs the bound mechanism's check of its parameter against the
// operation's key (keyChecker), if it has one.
func (op *operation) checkKey() error {
	if kc, ok := op.mech.(keyChecker); ok {
		return kc.checkKey(op)
	}
	return nil
}

// initInput applies the mechanism's accumulation policy at Init: the
// accumulator of a multiPart signature or MAC, the symStream of a
// streamCipher; a one-shot mechanism gets neither.
func (op *operation) initInput() error {
	var err error
	switch op.kind {
	case opSign, opVerify:
		if mp, ok := op.mech.(multiPart); ok {
			op.digest, err = mp.accumulator(op)
		}
	case opEncrypt, opDecrypt:
		if sc, ok := op.mech.(streamCipher); ok {
			op.stream, err = sc.newStream(op)
		}
	case opMessageEncrypt, opMessageDecrypt, opMessageSign, opMessageVerify:
		op.msg = &msgState{}
	}
	return err
}

// resetInput puts a single-part operation's input state back where the
// Init left it (a fresh accumulator, digest or symStream), so that a
// single-part call can be computed again for another input. Only a
// single-part call uses it, and those are refused after an Update
// (op.multi): no Update's data is lost.
func (op *operation) resetInput() error {
	if op.kind == opDigest {
		op.digest = op.mech.(digester).newDigest()
		return nil
	}
	op.digest, op.stream = nil, nil
	return op.initInput()
}

// singlePart is the answer of a one-shot mechanism to an Update or Final
// call.
func (op *operation) singlePart() error {
	return ck.Errorf(ck.CKR_FUNCTION_NOT_SUPPORTED, "%s is single-part", op.mech.base().name())
}

// keyBits is the size of the operation's key.
func (op *operation) keyBits() int {
	kt, ok := keyTypes[op.key.keyType()]
	if !ok {
		return 0
	}
	return kt.bits(op.key.attrs)
}

// keyBytes is the byte length of the RSA modulus.
func (op *operation) keyBytes() int { return (op.keyBits() + 7) / 8 }
