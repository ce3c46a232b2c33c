package token

// Secret keys (CKO_SECRET_KEY): CKK_AES, CKK_GENERIC_SECRET, CKK_HKDF and
// the HMAC key types (CKK_SHA*_HMAC, CKK_SHA3_*_HMAC, CKK_MD5_HMAC); C_GenerateKey with CKM_AES_KEY_GEN and
// CKM_GENERIC_SECRET_KEY_GEN (the mechanisms: mech/keygen.go); and
// createSecretKey, the one way C_UnwrapKey and C_DeriveKey make a secret
// key from bytes.
//
//   - CKA_VALUE is the key, stored sealed (fSecret) and readable only of a
//     key that is not sensitive and is extractable. AES keys are 16, 24
//     or 32 bytes; the others at least 1 byte (CKR_ATTRIBUTE_VALUE_INVALID).
//   - CKA_VALUE_LEN is set by the token to the value's length. The standard
//     forbids it in C_CreateObject and C_UnwrapKey templates of AES keys;
//     the token accepts it there when it states the true length (clients
//     send it), and answers CKR_TEMPLATE_INCONSISTENT when it does not.
//     C_GenerateKey requires it (CKR_TEMPLATE_INCOMPLETE).
//   - CKA_CHECK_VALUE is the key check value: for AES the first 3 bytes of
//     the AES-ECB encryption of a zero block, for the others the first 3
//     bytes of SHA-1 of the value (PKCS#11 3.0 §4.10 and the key types'
//     sections). Given in a template it must be that value
//     (CKR_ATTRIBUTE_VALUE_INVALID), or empty: the key then has none.
//   - Defaults follow the private keys': CKA_PRIVATE, CKA_SENSITIVE true,
//     CKA_EXTRACTABLE false; CKA_ENCRYPT, CKA_DECRYPT, CKA_SIGN, CKA_VERIFY
//     true; CKA_WRAP, CKA_UNWRAP, CKA_DERIVE false.
//   - CKA_LOCAL is true only for generated keys; CKA_ALWAYS_SENSITIVE and
//     CKA_NEVER_EXTRACTABLE as objects.go's buildObjectFrom says.
//
// Key sizes in CK_MECHANISM_INFO: bytes for the AES mechanisms and the HMAC
// mechanisms, bits for CKM_GENERIC_SECRET_KEY_GEN (the units each
// mechanism's section of the standard uses).

import (
	"bytes"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// GenerateKey is C_GenerateKey: a new secret key of the mechanism's key
// type (CKA_CLASS defaults to CKO_SECRET_KEY, CKA_KEY_TYPE to the
// mechanism's first key type).
func (m *Module) GenerateKey(sh uint64, cm *Mechanism, tmpl []Attribute) (uint64, error) {
	ss, err := m.lock(sh)
	if err != nil {
		return 0, err
	}
	defer ss.mu.Unlock()
	if cm == nil {
		return 0, ck.Errorf(ck.CKR_ARGUMENTS_BAD, "no mechanism")
	}
	mc := mech.Registry[cm.Type]
	if pg, ok := mc.(mech.ParamGenerator); ok {
		return ss.generateDomainParams(pg, cm, tmpl)
	}
	kg, ok := mc.(mech.KeyGenerator)
	if !ok {
		return 0, ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s does not generate keys", ck.Name("CKM_", cm.Type))
	}
	t, err := ss.generateTemplate(mc, cm, tmpl, ck.CKO_SECRET_KEY)
	if err != nil {
		return 0, err
	}
	if err := ss.checkTemplateWritable(t, true); err != nil {
		return 0, err
	}
	key, err := kg.GenerateKey(t)
	if err != nil {
		return 0, err
	}
	h, err := ss.createSecretKey(t, key, keyOrigin{mode: modeGenerate, mech: cm.Type})
	clear(key)
	return h, err
}

// generateTemplate is what C_GenerateKey checks before it generates
// anything, for a key or domain parameters of class: the mechanism offered
// by the slot, its parameter, and the template (CKA_CLASS defaults to
// class, CKA_KEY_TYPE to the mechanism's first key type and must be one it
// makes, every attribute known and settable on generation).
func (ss *session) generateTemplate(mc mech.Mechanism, cm *Mechanism, tmpl []Attribute, class uint64) (attr.Map, error) {
	if _, ok := ss.slot.mechanismInfo(mc); !ok {
		return nil, ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s not offered by this slot", ck.Name("CKM_", cm.Type))
	}
	if _, err := mech.BindParam(mc, cm); err != nil {
		return nil, err
	}
	t, err := parseTemplate(tmpl)
	if err != nil {
		return nil, err
	}
	if err := defaultULong(t, ck.CKA_CLASS, class); err != nil {
		return nil, err
	}
	if v, ok := t[ck.CKA_KEY_TYPE]; !ok {
		t[ck.CKA_KEY_TYPE] = ck.ULong(mc.Base().KeyTypes[0])
	} else if kt, ok := ck.ParseULong(v); !ok || !mc.Base().AcceptsKeyType(kt) {
		return nil, ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "CKA_KEY_TYPE does not match %s", ck.Name("CKM_", cm.Type))
	}
	if _, _, err := checkTemplate(t, modeGenerate); err != nil {
		return nil, err
	}
	return t, nil
}

// checkTemplateWritable applies the session and login rules to a
// generation template before any work: CKA_TOKEN (default false) and
// CKA_PRIVATE (default private).
func (ss *session) checkTemplateWritable(t attr.Map, private bool) error {
	probe := attr.Map{ck.CKA_TOKEN: attr.False, ck.CKA_PRIVATE: ck.Bool(private)}
	for _, k := range []uint64{ck.CKA_TOKEN, ck.CKA_PRIVATE} {
		if v, ok := t[k]; ok {
			probe[k] = v
		}
	}
	_, login := ss.slot.currentEpoch()
	return ss.checkWritable(probe, login)
}

// createSecretKey makes a secret key object holding value, as C_UnwrapKey
// and C_DeriveKey (and C_GenerateKey) do, and returns its handle.
//
// Contract:
//   - The caller holds ss.mu (it got ss from Module.lock) and not the
//     slot's lock; createSecretKey takes the slot lock to store the key.
//   - tmpl is the caller's template (parseTemplate'd). CKA_CLASS defaults
//     to CKO_SECRET_KEY (another class is CKR_TEMPLATE_INCONSISTENT) and
//     CKA_KEY_TYPE to CKK_GENERIC_SECRET. The template is checked as for
//     key generation: an attribute unknown to the key type is
//     CKR_ATTRIBUTE_TYPE_INVALID, CKA_VALUE or a token-set attribute
//     (CKA_LOCAL, CKA_ALWAYS_SENSITIVE...) CKR_ATTRIBUTE_READ_ONLY, only the
//     SO may set CKA_TRUSTED. Defaults are applied.
//   - value is the key (not kept: copied). Its length must fit the key
//     type (AES 16/24/32 bytes: CKR_ATTRIBUTE_VALUE_INVALID); a
//     CKA_VALUE_LEN in the template must equal it
//     (CKR_TEMPLATE_INCONSISTENT): derive mechanisms size their output
//     first (derivedKeyLen, derive.go). CKA_VALUE_LEN and CKA_CHECK_VALUE
//     are set.
//   - origin.mode is modeUnwrap, modeDerive (origin.base: the base key's
//     attributes) or modeGenerate (origin.mech: the mechanism). CKA_LOCAL
//     is true only for modeGenerate, CKA_KEY_GEN_MECHANISM is
//     CK_UNAVAILABLE_INFORMATION otherwise; CKA_ALWAYS_SENSITIVE and
//     CKA_NEVER_EXTRACTABLE are false for unwrapped keys, inherited from
//     the base key (and the new key's CKA_SENSITIVE, CKA_EXTRACTABLE) for
//     derived keys.
//   - Session and login rules last: a token object in a R/O session is
//     CKR_SESSION_READ_ONLY, a private object without the user logged in
//     CKR_USER_NOT_LOGGED_IN. Nothing is stored on any error.
func (ss *session) createSecretKey(tmpl attr.Map, value []byte, origin keyOrigin) (uint64, error) {
	t := tmpl.Clone()
	if err := defaultULong(t, ck.CKA_CLASS, ck.CKO_SECRET_KEY); err != nil {
		return 0, err
	}
	if _, ok := t[ck.CKA_KEY_TYPE]; !ok {
		t[ck.CKA_KEY_TYPE] = ck.ULong(ck.CKK_GENERIC_SECRET)
	}
	if origin.mode == modeCreate {
		return 0, ck.Errorf(ck.CKR_GENERAL_ERROR, "createSecretKey: use C_CreateObject's path")
	}
	s := ss.slot
	if s.safePolicy() {
		if err := newKeyPolicy(t, origin); err != nil {
			return 0, err
		}
	}
	_, login := s.currentEpoch()
	a, sch, err := buildObjectFrom(t, attr.Map{ck.CKA_VALUE: bytes.Clone(value)}, origin, login)
	if err != nil {
		return 0, err
	}
	o, err := ss.storeNew(a, sch)
	if err != nil {
		return 0, err
	}
	kt, _ := a.ULong(ck.CKA_KEY_TYPE)
	s.log.Info("secret key made", "how", origin.mode.String(), "handle", o.handle,
		"key_type", ck.Name("CKK_", kt), "bytes", len(value), "token", o.isToken())
	return o.handle, nil
}

// String names a creation mode in logs.
func (c createMode) String() string {
	switch c {
	case modeCreate:
		return "create"
	case modeGenerate:
		return "generate"
	case modeUnwrap:
		return "unwrap"
	case modeDerive:
		return "derive"
	}
	return "unknown"
}

// secretValue returns the value of a secret key object for an operation
// (CKR_USER_NOT_LOGGED_IN while it is sealed).
func (o *object) secretValue() ([]byte, error) {
	v, ok := o.attrs[ck.CKA_VALUE]
	if !ok || !o.complete {
		return nil, ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "secret key value is sealed")
	}
	return v, nil
}
