package token

// C_DeriveKey: the common part of every key-derivation mechanism.
//
// A derive mechanism is a deriver (mech/mechanism.go). DeriveKey checks what
// every derivation shares — the mechanism offered by the slot
// (CKF_DERIVE), its parameter, the base key (a private key, or for the AES
// derivations by data encryption a secret key, of a type the mechanism
// accepts, with CKA_DERIVE true, the mechanism in its
// CKA_ALLOWED_MECHANISMS, its private values unsealed) and the template
// (class CKO_SECRET_KEY, the default; key type CKK_GENERIC_SECRET when
// absent; the base key's CKA_DERIVE_TEMPLATE added to it, a conflicting
// value CKR_TEMPLATE_INCONSISTENT) — then asks the mechanism for the new
// key's value and stores it as a secret key built from the template
// (storeDerivedKey).
//
// The mechanism computes the value for the template it is given:
// derivedKeyLen gives the byte length the template asks for (CKA_VALUE_LEN,
// or the key type's length), from the mechanism's natural output length.
// CKM_DH_PKCS_DERIVE's parameter (the peer's public value) arrives as
// Mechanism.Param; ECDH's as Mechanism.ECDH; the AES derivations by data
// encryption's as Mechanism.EncryptData (mech/aes_derive.go); HKDF's as
// Mechanism.HKDF (mech/hkdf.go).
//
// The derived key is not "local" (CKA_LOCAL false, no
// CKA_KEY_GEN_MECHANISM); CKA_ALWAYS_SENSITIVE is true only if the base
// key's was and the new key is sensitive, CKA_NEVER_EXTRACTABLE only if the
// base key's was and the new key is not extractable (PKCS#11 3.0 §4.10).

import (
	"bytes"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// DeriveKey is C_DeriveKey: it derives a secret key (or, with
// CKM_HKDF_DATA, a data object) from the base key with mechanism cm and
// returns the new object's handle.
func (m *Module) DeriveKey(sh uint64, cm *Mechanism, baseKey uint64, tmpl []Attribute) (uint64, error) {
	ss, err := m.lock(sh)
	if err != nil {
		return 0, err
	}
	defer ss.mu.Unlock()
	if cm == nil {
		return 0, ck.Errorf(ck.CKR_ARGUMENTS_BAD, "no mechanism")
	}
	// The base key first: an invalid handle is CKR_OBJECT_HANDLE_INVALID
	// whatever the mechanism, as in C_WrapKey and C_UnwrapKey.
	key, epoch, _, err := ss.slot.keyObject(baseKey)
	if err != nil {
		return 0, err
	}
	mc, ok := mech.Registry[cm.Type].(mech.Deriver)
	if !ok {
		return 0, ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s does not derive keys", ck.Name("CKM_", cm.Type))
	}
	s := ss.slot
	info, ok := s.mechanismInfo(mc)
	if !ok || info.Flags&ck.CKF_DERIVE == 0 {
		return 0, ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s cannot derive on this slot's engine", ck.Name("CKM_", cm.Type))
	}
	bound, err := mech.BindParam(mc, cm)
	if err != nil {
		return 0, err
	}
	mc = bound.(mech.Deriver)
	t, err := parseTemplate(tmpl)
	if err != nil {
		return 0, err
	}
	dd, data := mc.(mech.DataDeriver)
	data = data && dd.DerivesData()
	if data {
		if err := defaultULong(t, ck.CKA_CLASS, ck.CKO_DATA); err != nil {
			return 0, ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "%s makes data objects (CKO_DATA)", ck.Name("CKM_", cm.Type))
		}
	} else if err := derivedKeyTemplate(t, key); err != nil {
		return 0, err
	}
	if _, ok := t[ck.CKA_VALUE]; ok {
		return 0, ck.Errorf(ck.CKR_ATTRIBUTE_READ_ONLY, "CKA_VALUE of a derived key is set by the token")
	}
	// A secret key may be the base key too (the derivations by data
	// encryption); the mechanism's key types then tell whether it fits.
	class, wantClass := key.class(), keyClassFor[mech.OpDerive]
	if class == ck.CKO_SECRET_KEY {
		wantClass = ck.CKO_SECRET_KEY
	}
	switch {
	case class != ck.CKO_PUBLIC_KEY && class != ck.CKO_PRIVATE_KEY && class != ck.CKO_SECRET_KEY:
		return 0, ck.Errorf(ck.CKR_KEY_HANDLE_INVALID, "object %d is not a key", baseKey)
	case class != wantClass || !mc.Base().AcceptsKeyType(key.keyType()):
		return 0, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "%s with %s of type %s", ck.Name("CKM_", cm.Type),
			ck.Name("CKO_", class), ck.Name("CKK_", key.keyType()))
	}
	if !key.attrs.Bool(ck.CKA_DERIVE) {
		return 0, ck.Errorf(ck.CKR_KEY_FUNCTION_NOT_PERMITTED, "key %d: CKA_DERIVE is false", baseKey)
	}
	if !allowsMechanism(key.attrs, cm.Type) {
		return 0, ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s not in the key's CKA_ALLOWED_MECHANISMS", ck.Name("CKM_", cm.Type))
	}
	if !key.complete {
		return 0, ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "private key values are sealed")
	}
	if s.safePolicy() {
		if err := derivePolicy(key, baseKey, mc, data); err != nil {
			return 0, err
		}
		if !data {
			if err := newKeyPolicy(t, keyOrigin{mode: modeDerive, base: key.attrs}); err != nil {
				return 0, err
			}
		}
	}
	op := &operation{kind: mech.OpDerive, mech: mc, key: key, slot: s, needLogin: true, epoch: epoch}
	size := uint64(op.KeyBits())
	if mc.Base().SizeInBytes {
		size /= 8
	}
	if size < info.MinKeySize || size > info.MaxKeySize {
		return 0, ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "%d-%s key, %s takes %d..%d", size, mc.Base().SizeUnit(), ck.Name("CKM_", cm.Type), info.MinKeySize, info.MaxKeySize)
	}
	if err := op.checkKey(); err != nil {
		return 0, err
	}
	value, err := mc.Derive(op, t)
	if err != nil {
		return 0, err
	}
	defer clear(value)
	store, what := ss.storeDerivedKey, "key derived"
	if data {
		store, what = ss.storeDerivedData, "data derived"
	}
	h, err := store(t, value, key)
	if err != nil {
		return 0, err
	}
	s.log.Info(what, "mechanism", ck.Name("CKM_", cm.Type), "base", baseKey, "handle", h)
	return h, nil
}

// derivedKeyTemplate completes the template of a derived key: the base
// key's CKA_DERIVE_TEMPLATE, CKA_CLASS CKO_SECRET_KEY and CKA_KEY_TYPE
// CKK_GENERIC_SECRET by default.
func derivedKeyTemplate(t attr.Map, base *object) error {
	if err := mergeKeyTemplate(t, base, ck.CKA_DERIVE_TEMPLATE); err != nil {
		return err
	}
	if err := defaultULong(t, ck.CKA_CLASS, ck.CKO_SECRET_KEY); err != nil {
		return ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "C_DeriveKey makes secret keys (CKO_SECRET_KEY)")
	}
	if _, ok := t[ck.CKA_KEY_TYPE]; !ok {
		t[ck.CKA_KEY_TYPE] = ck.ULong(ck.CKK_GENERIC_SECRET)
	}
	if _, ok := t.ULong(ck.CKA_KEY_TYPE); !ok {
		return mech.Invalid(ck.CKA_KEY_TYPE, "malformed")
	}
	return nil
}

// storeDerivedData stores the data object tmpl describes with CKA_VALUE
// value (CKA_VALUE_LEN, the length asked for, is not a data object's
// attribute) and returns its handle. CKA_PRIVATE defaults to true: the
// value is secret material.
func (ss *session) storeDerivedData(tmpl attr.Map, value []byte, _ *object) (uint64, error) {
	t := tmpl.Clone()
	delete(t, ck.CKA_VALUE_LEN)
	if _, ok := t[ck.CKA_PRIVATE]; !ok {
		t[ck.CKA_PRIVATE] = ck.Bool(true)
	}
	t[ck.CKA_VALUE] = bytes.Clone(value)
	o, err := ss.createObject(t)
	if err != nil {
		return 0, err
	}
	return o.handle, nil
}

// storeDerivedKey stores the secret key that tmpl describes with CKA_VALUE
// value, derived from base, and returns its handle (createSecretKey,
// secretkey.go).
func (ss *session) storeDerivedKey(tmpl attr.Map, value []byte, base *object) (uint64, error) {
	return ss.createSecretKey(tmpl, value, keyOrigin{mode: modeDerive, base: base.attrs})
}
