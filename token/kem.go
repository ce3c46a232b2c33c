package token

// C_EncapsulateKey and C_DecapsulateKey (PKCS#11 3.2): the common part of
// every key-encapsulation mechanism.
//
// A KEM mechanism is an Encapsulator and a Decapsulator (mech/mechanism.go).
// EncapsulateKey and DecapsulateKey check what both share — the mechanism
// offered by the slot (CKF_ENCAPSULATE, CKF_DECAPSULATE), its parameter,
// the key (a public key for encapsulation, a private key for
// decapsulation, of a type the mechanism accepts, with CKA_ENCAPSULATE or
// CKA_DECAPSULATE true, the mechanism in its CKA_ALLOWED_MECHANISMS) and
// the template of the new secret key (class CKO_SECRET_KEY, the default;
// key type CKK_GENERIC_SECRET when absent; the key's
// CKA_ENCAPSULATE_TEMPLATE or CKA_DECAPSULATE_TEMPLATE added to it, a
// conflicting value CKR_TEMPLATE_INCONSISTENT) — then ask the mechanism for
// the shared secret and store it as the new key's CKA_VALUE.
//
// The new key's length is the template's (derivedKeyLen, derive.go, with
// the shared secret's length as the natural one): a generic secret takes
// the whole secret without CKA_VALUE_LEN, an AES key 32 bytes; a shorter
// CKA_VALUE_LEN takes the secret's leading bytes, a longer one is
// CKR_TEMPLATE_INCONSISTENT. The key is made as a derived key
// (createSecretKey): CKA_LOCAL false. An encapsulated key's secret was
// drawn inside the token and left it only under the public key, so its
// CKA_ALWAYS_SENSITIVE and CKA_NEVER_EXTRACTABLE follow its own
// CKA_SENSITIVE and CKA_EXTRACTABLE; a decapsulated key's are inherited
// from the private key as for C_DeriveKey.
//
// The ciphertext of C_EncapsulateKey follows the two-call rule: a NULL
// buffer asks for its length (no key is made), a short one is
// CKR_BUFFER_TOO_SMALL with the length (no key is made). Nothing is
// stored on any error.

import (
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// kemCall is what EncapsulateKey and DecapsulateKey check alike.
type kemCall struct {
	ss   *session
	op   *operation
	tmpl attr.Map
	info MechanismInfo
}

// kemBegin checks the mechanism, its key and the template (see the file
// comment); the caller holds ss.mu.
func kemBegin(ss *session, kind mech.OpKind, cm *Mechanism, keyHandle uint64, tmpl []Attribute) (*kemCall, error) {
	if cm == nil {
		return nil, ck.Errorf(ck.CKR_ARGUMENTS_BAD, "no mechanism")
	}
	key, epoch, _, err := ss.slot.keyObject(keyHandle)
	if err != nil {
		return nil, err
	}
	flag, use, tmplAttr, wantClass, what := uint64(ck.CKF_ENCAPSULATE), uint64(ck.CKA_ENCAPSULATE), uint64(ck.CKA_ENCAPSULATE_TEMPLATE), uint64(ck.CKO_PUBLIC_KEY), "encapsulate"
	if kind == mech.OpDecrypt {
		flag, use, tmplAttr, wantClass, what = ck.CKF_DECAPSULATE, ck.CKA_DECAPSULATE, ck.CKA_DECAPSULATE_TEMPLATE, ck.CKO_PRIVATE_KEY, "decapsulate"
	}
	mc, ok := mech.Registry[cm.Type]
	if ok {
		_, enc := mc.(mech.Encapsulator)
		_, dec := mc.(mech.Decapsulator)
		ok = (kind == mech.OpEncrypt && enc) || (kind == mech.OpDecrypt && dec)
	}
	if !ok {
		return nil, ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s does not %s", ck.Name("CKM_", cm.Type), what)
	}
	s := ss.slot
	info, ok := s.mechanismInfo(mc)
	if !ok || info.Flags&flag == 0 {
		return nil, ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s cannot %s on this slot", ck.Name("CKM_", cm.Type), what)
	}
	bound, err := mech.BindParam(mc, cm)
	if err != nil {
		return nil, err
	}
	t, err := parseTemplate(tmpl)
	if err != nil {
		return nil, err
	}
	class := key.class()
	switch {
	case class != ck.CKO_PUBLIC_KEY && class != ck.CKO_PRIVATE_KEY && class != ck.CKO_SECRET_KEY:
		return nil, ck.Errorf(ck.CKR_KEY_HANDLE_INVALID, "object %d is not a key", keyHandle)
	case class != wantClass || !bound.Base().AcceptsKeyType(key.keyType()):
		return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "%s with %s of type %s", ck.Name("CKM_", cm.Type),
			ck.Name("CKO_", class), ck.Name("CKK_", key.keyType()))
	}
	if !key.attrs.Bool(use) {
		return nil, ck.Errorf(ck.CKR_KEY_FUNCTION_NOT_PERMITTED, "key %d: %s is false", keyHandle, attr.Describe(use))
	}
	if !allowsMechanism(key.attrs, cm.Type) {
		return nil, ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s not in the key's CKA_ALLOWED_MECHANISMS", ck.Name("CKM_", cm.Type))
	}
	if class == ck.CKO_PRIVATE_KEY && !key.complete {
		return nil, ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "private key values are sealed")
	}
	if err := mergeKeyTemplate(t, key, tmplAttr); err != nil {
		return nil, err
	}
	if err := defaultULong(t, ck.CKA_CLASS, ck.CKO_SECRET_KEY); err != nil {
		return nil, ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "C_%sKey makes secret keys (CKO_SECRET_KEY)", kemFuncName(kind))
	}
	if _, ok := t[ck.CKA_KEY_TYPE]; !ok {
		t[ck.CKA_KEY_TYPE] = ck.ULong(ck.CKK_GENERIC_SECRET)
	}
	if _, ok := t.ULong(ck.CKA_KEY_TYPE); !ok {
		return nil, mech.Invalid(ck.CKA_KEY_TYPE, "malformed")
	}
	if _, ok := t[ck.CKA_VALUE]; ok {
		return nil, ck.Errorf(ck.CKR_ATTRIBUTE_READ_ONLY, "CKA_VALUE of an encapsulated key is set by the token")
	}
	op := &operation{kind: kind, mech: bound, key: key, slot: s, needLogin: class == ck.CKO_PRIVATE_KEY, epoch: epoch}
	if err := op.checkKey(); err != nil {
		return nil, err
	}
	return &kemCall{ss: ss, op: op, tmpl: t, info: info}, nil
}

func kemFuncName(kind mech.OpKind) string {
	if kind == mech.OpDecrypt {
		return "Decapsulate"
	}
	return "Encapsulate"
}

// store makes the new secret key from the shared secret (see the file
// comment for its length and flags).
func (c *kemCall) store(secret []byte) (uint64, error) {
	n, err := mech.DerivedKeyLen(c.tmpl, len(secret))
	if err != nil {
		return 0, err
	}
	origin := keyOrigin{mode: modeDerive, base: c.op.key.attrs}
	if c.op.kind == mech.OpEncrypt {
		origin.base = attr.Map{ck.CKA_ALWAYS_SENSITIVE: attr.True, ck.CKA_NEVER_EXTRACTABLE: attr.True}
	}
	h, err := c.ss.createSecretKey(c.tmpl, secret[:n], origin)
	if err != nil {
		return 0, err
	}
	c.op.slot.log.Info("key "+kemFuncName(c.op.kind)+"d", "mechanism", c.op.mech.Base().Name(), "key", c.op.key.handle, "handle", h)
	return h, nil
}

// EncapsulateKey is C_EncapsulateKey: with the public key pubKey and
// mechanism cm it makes a shared secret, stores it as the secret key tmpl
// describes and returns the ciphertext (need: its length) and the new
// key's handle. With out.Query, or a buffer shorter than need, no key is
// made (the latter CKR_BUFFER_TOO_SMALL).
func (m *Module) EncapsulateKey(sh uint64, cm *Mechanism, pubKey uint64, tmpl []Attribute, out Out) (ct []byte, need int, h uint64, err error) {
	ss, err := m.lock(sh)
	if err != nil {
		return nil, 0, 0, err
	}
	defer ss.mu.Unlock()
	c, err := kemBegin(ss, mech.OpEncrypt, cm, pubKey, tmpl)
	if err != nil {
		return nil, 0, 0, err
	}
	mc := c.op.mech.(mech.Encapsulator)
	need, err = mc.CiphertextLen(c.op)
	if err != nil {
		return nil, 0, 0, err
	}
	// The template is checked before any secret is drawn.
	if _, err := mech.DerivedKeyLen(c.tmpl, kemSecretLen); err != nil {
		return nil, 0, 0, err
	}
	if out.Query {
		return nil, need, 0, nil
	}
	if out.Cap < need {
		return nil, need, 0, ck.Errorf(ck.CKR_BUFFER_TOO_SMALL, "ciphertext needs %d bytes, have %d", need, out.Cap)
	}
	ct, secret, err := mc.Encapsulate(c.op)
	if err != nil {
		return nil, 0, 0, err
	}
	defer clear(secret)
	h, err = c.store(secret)
	if err != nil {
		return nil, 0, 0, err
	}
	return ct, len(ct), h, nil
}

// DecapsulateKey is C_DecapsulateKey: the shared secret of ciphertext
// under the private key privKey, stored as the secret key tmpl describes;
// it returns the new key's handle.
func (m *Module) DecapsulateKey(sh uint64, cm *Mechanism, privKey uint64, tmpl []Attribute, ciphertext []byte) (uint64, error) {
	ss, err := m.lock(sh)
	if err != nil {
		return 0, err
	}
	defer ss.mu.Unlock()
	c, err := kemBegin(ss, mech.OpDecrypt, cm, privKey, tmpl)
	if err != nil {
		return 0, err
	}
	if _, err := mech.DerivedKeyLen(c.tmpl, kemSecretLen); err != nil {
		return 0, err
	}
	secret, err := c.op.mech.(mech.Decapsulator).Decapsulate(c.op, ciphertext)
	if err != nil {
		return 0, err
	}
	defer clear(secret)
	return c.store(secret)
}

// kemSecretLen is the shared secret's length of every KEM here (ML-KEM's
// 32 bytes).
const kemSecretLen = 32
