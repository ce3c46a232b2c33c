package token

// C_WrapKey and C_UnwrapKey (PKCS#11 3.0 §5.18.5–5.18.6). A wrap
// mechanism is a wrapper and unwrapper (mech/mechanism.go): wrap encrypts the
// key material under the wrapping key, unwrap decrypts it. What the key
// material is belongs to the wrapped key, not to the mechanism: the
// CKA_VALUE of a secret key, the PKCS#8 PrivateKeyInfo (DER) of an RSA or
// EC private key (see mech/pkcs8.go).
//
// The order of the checks, where the standard leaves it open: arguments,
// the handles (wrapping or unwrapping key, key to wrap), mechanism,
// template (unwrap), the wrapping/unwrapping key against the mechanism
// (class and type, CKA_WRAP/CKA_UNWRAP, CKA_ALLOWED_MECHANISMS, size), the
// key to wrap (class, CKA_EXTRACTABLE, CKA_WRAP_WITH_TRUSTED, the wrapping
// key's CKA_WRAP_TEMPLATE), then login (sealed values) and the session
// rules of the new object.

import (
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// wrapOperation returns the operation of a wrap mechanism with wrapping
// key k (kind opEncrypt for wrap, opDecrypt for unwrap: the names and the
// key sizes of the mechanism info).
func wrapOperation(s *slot, mc mech.Mechanism, k *object, kind mech.OpKind) *operation {
	return &operation{kind: kind, mech: mc, key: k, slot: s}
}

// wrapMechanism finds a mechanism able to wrap (or unwrap, flag
// CKF_UNWRAP) on the slot and binds it to its parameter.
func (s *slot) wrapMechanism(cm *Mechanism, flag uint64) (mech.Mechanism, MechanismInfo, error) {
	if cm == nil {
		return nil, MechanismInfo{}, ck.Errorf(ck.CKR_ARGUMENTS_BAD, "no mechanism")
	}
	what := "wrap"
	if flag == ck.CKF_UNWRAP {
		what = "unwrap"
	}
	mc, ok := mech.Registry[cm.Type]
	if !ok || mc.Base().Flags&flag == 0 {
		return nil, MechanismInfo{}, ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s cannot %s", ck.Name("CKM_", cm.Type), what)
	}
	info, ok := s.mechanismInfo(mc)
	if !ok || info.Flags&flag == 0 {
		return nil, MechanismInfo{}, ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s cannot %s on this slot", ck.Name("CKM_", cm.Type), what)
	}
	bound, err := mech.BindParam(mc, cm)
	if err != nil {
		return nil, MechanismInfo{}, err
	}
	return bound, info, nil
}

// wrapKeyRoles are the CKR codes of one side (wrapping or unwrapping key).
type wrapKeyRole struct {
	class          uint64 // the class a key of this role has for a public-key mechanism
	handleInvalid  ck.Error
	typeMismatch   ck.Error
	sizeRange      ck.Error
	usage          uint64 // CKA_WRAP or CKA_UNWRAP
	roleName       string // "wrapping key"...
	privateNeedsIn bool   // the key's private values are used (unwrap with a private key)
}

var (
	wrappingRole = wrapKeyRole{class: ck.CKO_PUBLIC_KEY, handleInvalid: ck.CKR_WRAPPING_KEY_HANDLE_INVALID,
		typeMismatch: ck.CKR_WRAPPING_KEY_TYPE_INCONSISTENT, sizeRange: ck.CKR_WRAPPING_KEY_SIZE_RANGE,
		usage: ck.CKA_WRAP, roleName: "wrapping key"}
	unwrappingRole = wrapKeyRole{class: ck.CKO_PRIVATE_KEY, handleInvalid: ck.CKR_UNWRAPPING_KEY_HANDLE_INVALID,
		typeMismatch: ck.CKR_UNWRAPPING_KEY_TYPE_INCONSISTENT, sizeRange: ck.CKR_UNWRAPPING_KEY_SIZE_RANGE,
		usage: ck.CKA_UNWRAP, roleName: "unwrapping key"}
)

// findWrappingKey finds the wrapping (or unwrapping) key by handle.
func (s *slot) findWrappingKey(h uint64, role wrapKeyRole) (*object, uint64, error) {
	k, epoch, _, err := s.keyObject(h)
	if err != nil {
		if ck.RV(err) == uint64(ck.CKR_KEY_HANDLE_INVALID) {
			return nil, 0, ck.Errorf(role.handleInvalid, "%s %d", role.roleName, h)
		}
		return nil, 0, err
	}
	return k, epoch, nil
}

// checkWrappingKey checks the wrapping (or unwrapping) key k (handle h)
// against mech.
func checkWrappingKey(k *object, h uint64, s *slot, m mech.Mechanism, info MechanismInfo, role wrapKeyRole) error {
	mc := m.Base()
	class := k.class()
	switch {
	case class != ck.CKO_SECRET_KEY && class != ck.CKO_PUBLIC_KEY && class != ck.CKO_PRIVATE_KEY:
		return ck.Errorf(role.handleInvalid, "%s %d is not a key", role.roleName, h)
	case !mc.AcceptsKeyType(k.keyType()) || (class != ck.CKO_SECRET_KEY && class != role.class):
		return ck.Errorf(role.typeMismatch, "%s with %s of type %s", mc.Name(),
			ck.Name("CKO_", class), ck.Name("CKK_", k.keyType()))
	}
	if !k.attrs.Bool(role.usage) {
		return ck.Errorf(ck.CKR_KEY_FUNCTION_NOT_PERMITTED, "%s %d: %s is false", role.roleName, h, attr.Describe(role.usage))
	}
	if !allowsMechanism(k.attrs, mc.Type) {
		return ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s not in the %s's CKA_ALLOWED_MECHANISMS", mc.Name(), role.roleName)
	}
	op := &operation{mech: m, key: k, slot: s}
	size := uint64(op.KeyBits())
	if mc.SizeInBytes {
		size /= 8
	}
	if size < info.MinKeySize || size > info.MaxKeySize {
		return ck.Errorf(role.sizeRange, "%d-%s %s, %s takes %d..%d", size, mc.SizeUnit(), role.roleName, mc.Name(), info.MinKeySize, info.MaxKeySize)
	}
	if !k.complete {
		return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "%s values are sealed", role.roleName)
	}
	return nil
}

// WrapKey is C_WrapKey: it returns the wrapped key under the two-call
// convention of Out (the wrapped bytes are computed on every call: a
// length query costs one wrap).
func (m *Module) WrapKey(sh uint64, cm *Mechanism, wrappingKey, key uint64, out Out) ([]byte, int, error) {
	ss, err := m.lock(sh)
	if err != nil {
		return nil, 0, err
	}
	defer ss.mu.Unlock()
	s := ss.slot
	if cm == nil {
		return nil, 0, ck.Errorf(ck.CKR_ARGUMENTS_BAD, "no mechanism")
	}
	wk, _, err := s.findWrappingKey(wrappingKey, wrappingRole)
	if err != nil {
		return nil, 0, err
	}
	k, _, _, err := s.keyObject(key)
	if err != nil {
		return nil, 0, err
	}
	bound, info, err := s.wrapMechanism(cm, ck.CKF_WRAP)
	if err != nil {
		return nil, 0, err
	}
	mc := bound.(mech.Wrapper)
	if err := checkWrappingKey(wk, wrappingKey, s, mc, info, wrappingRole); err != nil {
		return nil, 0, err
	}
	if err := checkWrappable(wk, k, key); err != nil {
		return nil, 0, err
	}
	if s.safePolicy() {
		if err := wrapPolicy(wk, k, wrappingKey, key); err != nil {
			return nil, 0, err
		}
	}
	material, err := keyMaterial(k)
	if err != nil {
		return nil, 0, err
	}
	defer clear(material)
	if k.class() == ck.CKO_PRIVATE_KEY && !mc.WrapsPrivate() {
		return nil, 0, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "%s wraps secret keys only", mc.Base().Name())
	}
	op := wrapOperation(s, mc, wk, mech.OpEncrypt)
	if err := op.checkKey(); err != nil {
		return nil, 0, err
	}
	wrapped, err := mc.Wrap(op, material)
	if err != nil {
		return nil, 0, err
	}
	need := len(wrapped)
	if out.Query {
		return nil, need, nil
	}
	if out.Cap < need {
		return nil, need, ck.Errorf(ck.CKR_BUFFER_TOO_SMALL, "need %d bytes, have %d", need, out.Cap)
	}
	s.log.Debug("key wrapped", "mechanism", mc.Base().Name(), "wrapping_key", wrappingKey, "key", key)
	return wrapped, need, nil
}

// checkWrappable applies the wrapped key's rules: a secret or private
// key, extractable, wrapped with a trusted key if it asks for one, and
// matching the wrapping key's CKA_WRAP_TEMPLATE.
func checkWrappable(wk, k *object, h uint64) error {
	class := k.class()
	if class != ck.CKO_SECRET_KEY && class != ck.CKO_PRIVATE_KEY {
		return ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "object %d is a %s: only secret and private keys are wrapped", h, ck.Name("CKO_", class))
	}
	if !k.attrs.Bool(ck.CKA_EXTRACTABLE) {
		return ck.Errorf(ck.CKR_KEY_UNEXTRACTABLE, "key %d: CKA_EXTRACTABLE is false", h)
	}
	if k.attrs.Bool(ck.CKA_WRAP_WITH_TRUSTED) && !wk.attrs.Bool(ck.CKA_TRUSTED) {
		return ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "key %d has CKA_WRAP_WITH_TRUSTED and the wrapping key is not CKA_TRUSTED", h)
	}
	wt, err := templateAttr(wk.attrs, ck.CKA_WRAP_TEMPLATE)
	if err != nil {
		return ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "the wrapping key's CKA_WRAP_TEMPLATE: %v", err)
	}
	if !satisfies(k.attrs, wt) {
		return ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "key %d does not match the wrapping key's CKA_WRAP_TEMPLATE", h)
	}
	if !k.complete {
		return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "key %d values are sealed", h)
	}
	return nil
}

// UnwrapKey is C_UnwrapKey: it decrypts wrapped with the unwrapping key
// and creates a key object from the result and tmpl (merged with the
// unwrapping key's CKA_UNWRAP_TEMPLATE). The new key is not local, never
// always sensitive and never never-extractable.
func (m *Module) UnwrapKey(sh uint64, cm *Mechanism, unwrappingKey uint64, wrapped []byte, tmpl []Attribute) (uint64, error) {
	ss, err := m.lock(sh)
	if err != nil {
		return 0, err
	}
	defer ss.mu.Unlock()
	s := ss.slot
	if cm == nil {
		return 0, ck.Errorf(ck.CKR_ARGUMENTS_BAD, "no mechanism")
	}
	uk, epoch, err := s.findWrappingKey(unwrappingKey, unwrappingRole)
	if err != nil {
		return 0, err
	}
	bound, info, err := s.wrapMechanism(cm, ck.CKF_UNWRAP)
	if err != nil {
		return 0, err
	}
	mc := bound.(mech.Unwrapper)
	t, err := parseTemplate(tmpl)
	if err != nil {
		return 0, err
	}
	if err := checkWrappingKey(uk, unwrappingKey, s, mc, info, unwrappingRole); err != nil {
		return 0, err
	}
	if err := mergeKeyTemplate(t, uk, ck.CKA_UNWRAP_TEMPLATE); err != nil {
		return 0, err
	}
	class, ok := t.ULong(ck.CKA_CLASS)
	if !ok {
		return 0, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "C_UnwrapKey needs CKA_CLASS in the template")
	}
	if class != ck.CKO_SECRET_KEY && class != ck.CKO_PRIVATE_KEY {
		return 0, ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "C_UnwrapKey makes secret and private keys, not %s", ck.Name("CKO_", class))
	}
	if class == ck.CKO_PRIVATE_KEY && !mc.WrapsPrivate() {
		return 0, ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "%s unwraps secret keys only", mc.Base().Name())
	}
	if s.safePolicy() {
		if err := newKeyPolicy(t, keyOrigin{mode: modeUnwrap}); err != nil {
			return 0, err
		}
	}
	op := wrapOperation(s, mc, uk, mech.OpDecrypt)
	op.needLogin, op.epoch = true, epoch // the key is used within this call
	if err := op.checkKey(); err != nil {
		return 0, err
	}
	material, err := mc.Unwrap(op, wrapped)
	if err != nil {
		return 0, err
	}
	defer clear(material)
	if class == ck.CKO_SECRET_KEY {
		kt, ok := t.ULong(ck.CKA_KEY_TYPE)
		if !ok {
			kt = ck.CKK_GENERIC_SECRET
		}
		if err := mech.CheckSecretLen(kt, len(material)); err != nil {
			return 0, ck.Errorf(ck.CKR_WRAPPED_KEY_INVALID, "the unwrapped value (%d bytes) is no %s key", len(material), ck.Name("CKK_", kt))
		}
		return ss.createSecretKey(t, material, keyOrigin{mode: modeUnwrap})
	}
	_, login := s.currentEpoch()
	a, sch, err := unwrappedPrivate(t, material, login)
	if err != nil {
		return 0, err
	}
	o, err := ss.storeNew(a, sch)
	if err != nil {
		return 0, err
	}
	s.log.Info("key unwrapped", "mechanism", mc.Base().Name(), "handle", o.handle, "class", ck.Name("CKO_", class))
	return o.handle, nil
}

// mergeKeyTemplate adds the template that key k holds in attribute at
// (CKA_UNWRAP_TEMPLATE of an unwrapping key, CKA_DERIVE_TEMPLATE of a base
// key) to t; an attribute t gives with another value is
// CKR_TEMPLATE_INCONSISTENT.
func mergeKeyTemplate(t attr.Map, k *object, at uint64) error {
	ut, err := templateAttr(k.attrs, at)
	if err != nil {
		return ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "the key's %s: %v", attr.Describe(at), err)
	}
	for typ, v := range ut {
		if got, ok := t[typ]; ok && string(got) != string(v) {
			return ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "%s conflicts with the key's %s", attr.Describe(typ), attr.Describe(at))
		}
		t[typ] = v
	}
	return nil
}

// keyMaterial is what a wrap mechanism encrypts: a secret key's CKA_VALUE
// (a copy), a private key's PKCS#8 PrivateKeyInfo. The caller wipes it.
func keyMaterial(k *object) ([]byte, error) {
	switch k.class() {
	case ck.CKO_SECRET_KEY:
		v, err := k.secretValue()
		if err != nil {
			return nil, err
		}
		return append([]byte(nil), v...), nil
	case ck.CKO_PRIVATE_KEY:
		return mech.MarshalPKCS8(k)
	}
	return nil, ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "%s is not wrapped", ck.Name("CKO_", k.class()))
}

// unwrappedPrivate builds the attributes of an unwrapped private key from
// the template and the PKCS#8 material. CKA_KEY_TYPE defaults to the
// material's; the template may not give the key's values (they come from
// the wrapped key: CKR_ATTRIBUTE_READ_ONLY) except CKA_EC_PARAMS, which
// must then be the key's curve.
func unwrappedPrivate(t attr.Map, material []byte, login loginState) (attr.Map, attr.Schema, error) {
	kt, ok := t.ULong(ck.CKA_KEY_TYPE)
	if _, present := t[ck.CKA_KEY_TYPE]; present && !ok {
		return nil, nil, mech.Invalid(ck.CKA_KEY_TYPE, "malformed")
	}
	vals, found, err := mech.ParsePKCS8(material)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		t[ck.CKA_KEY_TYPE] = ck.ULong(found)
	} else if kt != found {
		return nil, nil, mech.Inconsistent("the wrapped key is a " + ck.Name("CKK_", found) + " key, the template says " + ck.Name("CKK_", kt))
	}
	if found == ck.CKK_EC_MONTGOMERY {
		mech.MontgomeryUnwrapParams(t, vals) // mech/pkcs8_pq.go
	}
	if err := mech.SameValues(t, vals); err != nil {
		return nil, nil, err
	}
	if found == ck.CKK_EC_EDWARDS {
		if _, ok := t[ck.CKA_EC_PARAMS]; !ok {
			t[ck.CKA_EC_PARAMS] = mech.Ed25519Printable // as SoftHSMv2 and pkcs11-tool name it
			if len(vals[ck.CKA_VALUE]) == mech.Edwards448.KeySize() {
				t[ck.CKA_EC_PARAMS] = mech.Ed448OID
			}
		}
	}
	return buildObjectFrom(t, vals, keyOrigin{mode: modeUnwrap}, login)
}
