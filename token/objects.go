package token

// Object management: C_CreateObject, C_CopyObject, C_DestroyObject,
// C_GetObjectSize, C_GetAttributeValue, C_SetAttributeValue. Every check
// runs before anything is stored: a rejected template changes nothing.

import (
	"errors"

	"github.com/modexp-token/modexp-token/keystore"
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// createMode says how an object comes to be.
type createMode int

const (
	modeCreate   createMode = iota // C_CreateObject: imported
	modeGenerate                   // C_GenerateKey(Pair): made on the token
	modeUnwrap                     // C_UnwrapKey: imported under a wrapping key
	modeDerive                     // C_DeriveKey: derived from a base key
)

// keyOrigin is how a key comes to be, for the attributes the token sets
// (CKA_LOCAL, CKA_KEY_GEN_MECHANISM, CKA_ALWAYS_SENSITIVE,
// CKA_NEVER_EXTRACTABLE).
type keyOrigin struct {
	mode createMode
	// mech is the generating mechanism (modeGenerate), kept in
	// CKA_KEY_GEN_MECHANISM.
	mech uint64
	// base is the base key's attributes (modeDerive): the derived key is
	// always sensitive (never extractable) only if the base key was.
	base attr.Map
}

// buildObject checks a creation template against the object's schema and
// returns the complete attributes: template, generated values, defaults
// and the token-set attributes. genMech is the generating mechanism.
func buildObject(tmpl, generated attr.Map, mode createMode, genMech uint64, login loginState) (attr.Map, attr.Schema, error) {
	return buildObjectFrom(tmpl, generated, keyOrigin{mode: mode, mech: genMech}, login)
}

// buildObjectFrom is buildObject for a key of any origin.
func buildObjectFrom(tmpl, generated attr.Map, origin keyOrigin, login loginState) (attr.Map, attr.Schema, error) {
	mode := origin.mode
	sch, kt, err := checkTemplate(tmpl, mode)
	if err != nil {
		return nil, nil, err
	}
	class, _ := tmpl.ULong(ck.CKA_CLASS)
	a := tmpl.Clone()
	for t, v := range generated {
		a[t] = v
	}
	for t, spec := range sch {
		if _, ok := a[t]; ok {
			continue
		}
		if spec.Has(attr.Required) && mode == modeCreate {
			return nil, nil, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "%s missing", attr.Describe(t))
		}
		if spec.Default != nil {
			a[t] = spec.Default
		}
	}
	if a.Bool(ck.CKA_TRUSTED) && login != soLoggedIn {
		return nil, nil, ck.Errorf(ck.CKR_ATTRIBUTE_READ_ONLY, "only the SO may set CKA_TRUSTED")
	}
	isKey := class == ck.CKO_PUBLIC_KEY || class == ck.CKO_PRIVATE_KEY || class == ck.CKO_SECRET_KEY
	if isKey {
		local := mode == modeGenerate
		a[ck.CKA_LOCAL] = ck.Bool(local)
		a[ck.CKA_KEY_GEN_MECHANISM] = ck.ULong(ck.CK_UNAVAILABLE_INFORMATION)
		if local {
			a[ck.CKA_KEY_GEN_MECHANISM] = ck.ULong(origin.mech)
		}
	}
	if class == ck.CKO_PRIVATE_KEY || class == ck.CKO_SECRET_KEY {
		// PKCS#11 3.0 §4.9, §4.10: true only for keys made on the token
		// with the property throughout (derived keys: and the base key's).
		var always, never bool
		switch mode {
		case modeGenerate:
			always, never = true, true
		case modeDerive:
			always = origin.base.Bool(ck.CKA_ALWAYS_SENSITIVE)
			never = origin.base.Bool(ck.CKA_NEVER_EXTRACTABLE)
		}
		a[ck.CKA_ALWAYS_SENSITIVE] = ck.Bool(always && a.Bool(ck.CKA_SENSITIVE))
		a[ck.CKA_NEVER_EXTRACTABLE] = ck.Bool(never && !a.Bool(ck.CKA_EXTRACTABLE))
	}
	if kt != nil {
		var complete func(attr.Map) error
		switch class {
		case ck.CKO_PUBLIC_KEY:
			complete = kt.CompletePublic
		case ck.CKO_PRIVATE_KEY:
			complete = kt.CompletePrivate
		case ck.CKO_SECRET_KEY:
			complete = kt.CompleteSecret
		case ck.CKO_DOMAIN_PARAMETERS:
			a[ck.CKA_LOCAL] = ck.Bool(mode == modeGenerate)
			complete = kt.CompleteDomain
		}
		if err := complete(a); err != nil {
			return nil, nil, err
		}
	}
	return a, sch, nil
}

// checkTemplate finds a creation template's schema and checks each of its
// attributes: known to the object (CKR_ATTRIBUTE_TYPE_INVALID), well
// formed (CKR_ATTRIBUTE_VALUE_INVALID), settable by the application
// (CKR_ATTRIBUTE_READ_ONLY).
func checkTemplate(tmpl attr.Map, mode createMode) (attr.Schema, *mech.KeyType, error) {
	class, ok := tmpl.ULong(ck.CKA_CLASS)
	if !ok {
		if _, present := tmpl[ck.CKA_CLASS]; present {
			return nil, nil, mech.Invalid(ck.CKA_CLASS, "malformed")
		}
		return nil, nil, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "CKA_CLASS missing")
	}
	var sub uint64
	if t, ok := subTypeAttr(class); ok {
		v, present := tmpl[t]
		if !present {
			return nil, nil, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "%s missing", attr.Describe(t))
		}
		if sub, ok = ck.ParseULong(v); !ok {
			return nil, nil, mech.Invalid(t, "malformed")
		}
	}
	sch, kt, err := schemaFor(class, sub)
	if err != nil {
		return nil, nil, err
	}
	for t, v := range tmpl {
		spec, ok := sch[t]
		if !ok {
			return nil, nil, ck.Errorf(ck.CKR_ATTRIBUTE_TYPE_INVALID, "%s not an attribute of this object", attr.Describe(t))
		}
		if err := checkValue(t, spec.Kind, v); err != nil {
			return nil, nil, err
		}
		if spec.Has(attr.TokenSet) || (mode != modeCreate && spec.Has(attr.Generated)) {
			return nil, nil, ck.Errorf(ck.CKR_ATTRIBUTE_READ_ONLY, "%s is set by the token", attr.Describe(t))
		}
	}
	return sch, kt, nil
}

// applyChanges returns attrs changed by tmpl under the rules of
// C_SetAttributeValue (copy false) or of C_CopyObject's template (copy
// true, which may also set CKA_TOKEN, CKA_PRIVATE and CKA_MODIFIABLE).
//
// What a copy may change (PKCS#11 3.0 §5.7 C_CopyObject and the
// attribute tables' footnotes), checked here:
//   - CKA_TOKEN: either way (a session object copied to the token).
//   - CKA_PRIVATE: either way, except TRUE→FALSE on a private or secret
//     key (CKR_TEMPLATE_INCONSISTENT, as SoftHSMv2): a copy must not make
//     a key usable without login.
//   - CKA_MODIFIABLE: TRUE→FALSE only; a copy of an unmodifiable object is
//     unmodifiable.
//   - CKA_SENSITIVE and CKA_WRAP_WITH_TRUSTED: FALSE→TRUE only;
//     CKA_EXTRACTABLE and CKA_COPYABLE: TRUE→FALSE only (the copy keeps
//     CKA_ALWAYS_SENSITIVE and CKA_NEVER_EXTRACTABLE, which are fixed).
//   - CKA_TRUSTED: set only by the SO.
//   - the other attributes that C_SetAttributeValue may change (label,
//     ID, dates, usage flags, CKA_DESTROYABLE): only when the original is
//     modifiable (CKR_ACTION_PROHIBITED otherwise, as C_SetAttributeValue);
//     fixed attributes never (CKR_ATTRIBUTE_READ_ONLY).
func applyChanges(attrs attr.Map, sch attr.Schema, tmpl attr.Map, copy bool, login loginState) (attr.Map, error) {
	out := attrs.Clone()
	for t, v := range tmpl {
		spec, ok := sch[t]
		if !ok {
			return nil, ck.Errorf(ck.CKR_ATTRIBUTE_TYPE_INVALID, "%s not an attribute of this object", attr.Describe(t))
		}
		if err := checkValue(t, spec.Kind, v); err != nil {
			return nil, err
		}
		if string(attrs[t]) == string(v) {
			continue // setting the current value is always allowed
		}
		if spec.Has(attr.Fixed) && !(copy && spec.Has(attr.CopyChange)) {
			return nil, ck.Errorf(ck.CKR_ATTRIBUTE_READ_ONLY, "%s cannot change", attr.Describe(t))
		}
		if !attrs.Bool(ck.CKA_MODIFIABLE) && !(copy && copyTightens(t, v)) {
			return nil, ck.Errorf(ck.CKR_ACTION_PROHIBITED, "object is not modifiable")
		}
		switch t {
		case ck.CKA_PRIVATE:
			class, _ := attrs.ULong(ck.CKA_CLASS)
			if v[0] == 0 && (class == ck.CKO_PRIVATE_KEY || class == ck.CKO_SECRET_KEY) {
				return nil, ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "a copy of a %s cannot be public", ck.Name("CKO_", class))
			}
		case ck.CKA_MODIFIABLE: // true → false only (copy)
			if v[0] == 1 {
				return nil, ck.Errorf(ck.CKR_ATTRIBUTE_READ_ONLY, "a copy of an unmodifiable object is unmodifiable")
			}
		case ck.CKA_SENSITIVE, ck.CKA_WRAP_WITH_TRUSTED: // false → true only
			if attrs.Bool(t) {
				return nil, ck.Errorf(ck.CKR_ATTRIBUTE_READ_ONLY, "%s cannot be cleared", attr.Describe(t))
			}
		case ck.CKA_EXTRACTABLE, ck.CKA_COPYABLE: // true → false only
			if !attrs.Bool(t) {
				return nil, ck.Errorf(ck.CKR_ATTRIBUTE_READ_ONLY, "%s cannot be set again", attr.Describe(t))
			}
		case ck.CKA_TRUSTED:
			if v[0] == 1 && login != soLoggedIn {
				return nil, ck.Errorf(ck.CKR_ATTRIBUTE_READ_ONLY, "only the SO may set CKA_TRUSTED")
			}
		}
		out[t] = v
	}
	return out, nil
}

// copyTightens reports whether a copy's template entry (t, v) is one a
// copy of an unmodifiable object may still carry: where the copy lives
// (CKA_TOKEN, CKA_PRIVATE, checked further by applyChanges) or a change
// that only restricts it.
func copyTightens(t uint64, v []byte) bool {
	switch t {
	case ck.CKA_TOKEN, ck.CKA_PRIVATE:
		return true
	case ck.CKA_SENSITIVE, ck.CKA_WRAP_WITH_TRUSTED:
		return v[0] == 1
	case ck.CKA_EXTRACTABLE, ck.CKA_COPYABLE, ck.CKA_MODIFIABLE:
		return v[0] == 0
	}
	return false
}

// checkWritable applies the session and login rules for creating or
// changing an object with attrs a.
func (ss *session) checkWritable(a attr.Map, login loginState) error {
	if a.Bool(ck.CKA_TOKEN) && !ss.rw {
		return ck.Errorf(ck.CKR_SESSION_READ_ONLY, "token object in a read-only session")
	}
	if a.Bool(ck.CKA_PRIVATE) && login != userLoggedIn {
		return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "private object needs the user logged in")
	}
	return nil
}

// storeLocked persists (token objects) and caches a new snapshot of an
// object: handle 0 makes a new object. The slot lock is released while
// the store writes a token object (cache.go, adoptLocked).
func (s *slot) storeLocked(ss *session, handle uint64, old *object, a attr.Map, sch attr.Schema) (*object, error) {
	o := &object{handle: handle, attrs: a, complete: true}
	if old != nil {
		o.storeID, o.owner = old.storeID, old.owner
	}
	if a.Bool(ck.CKA_TOKEN) {
		sealed := sealedTypes(a, sch)
		if len(sealed) > 0 && s.key == nil {
			return nil, ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "sealed attributes need a login")
		}
		st, err := s.st()
		if err != nil {
			return nil, s.storeErr("store object", err)
		}
		key, put := s.key, keystore.Object{ID: o.storeID, Attrs: a.Clone(), Sealed: sealed}
		var id uint64
		s.unlocked(func() { id, err = st.Put(key, put) })
		if err != nil {
			if errors.Is(err, keystore.ErrNotInitialized) {
				return nil, ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "token not initialised")
			}
			return nil, s.storeErr("store object", err)
		}
		o.storeID, o.sealed = id, sealed
		if err := s.adoptLocked(o, old != nil); err != nil {
			return nil, err
		}
		return o, nil
	} else if old == nil {
		o.owner = ss.h
	}
	if o.handle == 0 {
		o.handle = s.m.newHandle()
	}
	s.objects[o.handle] = o
	s.indexReplaceLocked(old, o)
	return o, nil
}

// storeNew stores a new object with attributes a under the session and
// login rules (CKR_SESSION_READ_ONLY, CKR_USER_NOT_LOGGED_IN), checked
// under the slot lock it takes.
func (ss *session) storeNew(a attr.Map, sch attr.Schema) (*object, error) {
	s := ss.slot
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := ss.checkWritable(a, s.login); err != nil {
		return nil, err
	}
	return s.storeLocked(ss, 0, nil, a, sch)
}

// CreateObject is C_CreateObject.
func (m *Module) CreateObject(sh uint64, tmpl []Attribute) (uint64, error) {
	ss, err := m.lock(sh)
	if err != nil {
		return 0, err
	}
	defer ss.mu.Unlock()
	t, err := parseTemplate(tmpl)
	if err != nil {
		return 0, err
	}
	o, err := ss.createObject(t)
	if err != nil {
		return 0, err
	}
	ss.slot.log.Info("object created", "handle", o.handle, "class", ck.Name("CKO_", o.class()), "token", o.isToken())
	return o.handle, nil
}

// createObject builds the object template t describes, as C_CreateObject
// does, and stores it.
func (ss *session) createObject(t attr.Map) (*object, error) {
	if ss.slot.safePolicy() {
		if err := newKeyPolicy(t, keyOrigin{mode: modeCreate}); err != nil {
			return nil, err
		}
	}
	_, login := ss.slot.currentEpoch()
	a, sch, err := buildObject(t, nil, modeCreate, 0, login)
	if err != nil {
		return nil, err
	}
	return ss.storeNew(a, sch)
}

// CopyObject is C_CopyObject.
func (m *Module) CopyObject(sh, obj uint64, tmpl []Attribute) (uint64, error) {
	ss, err := m.lock(sh)
	if err != nil {
		return 0, err
	}
	defer ss.mu.Unlock()
	t, err := parseTemplate(tmpl)
	if err != nil {
		return 0, err
	}
	s := ss.slot
	s.mu.Lock()
	defer s.mu.Unlock()
	o, err := s.objectLocked(obj)
	if err != nil {
		return 0, err
	}
	if !o.attrs.Bool(ck.CKA_COPYABLE) {
		return 0, ck.Errorf(ck.CKR_ACTION_PROHIBITED, "object %d is not copyable", obj)
	}
	if !o.complete {
		return 0, ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "object values are sealed")
	}
	sch, _ := objectSchema(o.attrs)
	a, err := applyChanges(o.attrs, sch, t, true, s.login)
	if err != nil {
		return 0, err
	}
	if s.safePolicy() {
		if err := changePolicy(o.attrs, a); err != nil {
			return 0, err
		}
	}
	if err := ss.checkWritable(a, s.login); err != nil {
		return 0, err
	}
	n, err := s.storeLocked(ss, 0, nil, a, sch)
	if err != nil {
		return 0, err
	}
	s.log.Info("object copied", "from", obj, "handle", n.handle)
	return n.handle, nil
}

// DestroyObject is C_DestroyObject.
func (m *Module) DestroyObject(sh, obj uint64) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	s := ss.slot
	s.mu.Lock()
	defer s.mu.Unlock()
	o, err := s.objectLocked(obj)
	if err != nil {
		return err
	}
	if !o.attrs.Bool(ck.CKA_DESTROYABLE) {
		return ck.Errorf(ck.CKR_ACTION_PROHIBITED, "object %d is not destroyable", obj)
	}
	if o.storeID != 0 {
		if !ss.rw {
			return ck.Errorf(ck.CKR_SESSION_READ_ONLY, "token object in a read-only session")
		}
		st, err := s.st()
		if err != nil {
			return s.storeErr("destroy object", err)
		}
		// Without the slot lock (cache.go): the cache may have moved
		// meanwhile, so what is dropped is what it holds now.
		s.unlocked(func() { err = st.Delete(o.storeID) })
		if err != nil && !errors.Is(err, keystore.ErrNotFound) {
			return s.storeErr("destroy object", err)
		}
		if cur := s.byStore[o.storeID]; cur != nil {
			s.indexRemoveLocked(cur)
			delete(s.objects, cur.handle)
			delete(s.byStore, o.storeID)
		}
		s.ver++
	}
	s.indexRemoveLocked(o)
	delete(s.objects, obj)
	s.log.Info("object destroyed", "handle", obj)
	return nil
}

// GetObjectSize is C_GetObjectSize.
func (m *Module) GetObjectSize(sh, obj uint64) (uint64, error) {
	ss, err := m.session(sh)
	if err != nil {
		return 0, err
	}
	o, err := ss.slot.object(obj)
	if err != nil {
		return 0, err
	}
	return o.size(), nil
}

// GetAttributeValue answers each requested type; the error is for the call
// as a whole (bad session/object), per-attribute problems go in the results.
func (m *Module) GetAttributeValue(sh, obj uint64, types []uint64) ([]AttributeResult, error) {
	ss, err := m.session(sh)
	if err != nil {
		return nil, err
	}
	o, err := ss.slot.object(obj)
	if err != nil {
		return nil, err
	}
	sch, _ := objectSchema(o.attrs)
	res := make([]AttributeResult, len(types))
	for i, t := range types {
		spec, ok := sch[t]
		v, present := o.attrs[t]
		switch {
		case !ok:
			res[i].Err = uint64(ck.CKR_ATTRIBUTE_TYPE_INVALID)
		case !readable(spec, o.attrs) || (!present && o.sealed[t]):
			res[i].Err = uint64(ck.CKR_ATTRIBUTE_SENSITIVE)
		case !present && spec.Default != nil:
			// An attribute the schema gained after the object was stored.
			res[i].Value = append([]byte{}, spec.Default...)
		case !present:
			res[i].Err = uint64(ck.CKR_ATTRIBUTE_TYPE_INVALID)
		default:
			res[i].Value = append([]byte{}, v...)
		}
	}
	return res, nil
}

// SetAttributeValue is C_SetAttributeValue: all or nothing.
func (m *Module) SetAttributeValue(sh, obj uint64, tmpl []Attribute) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	t, err := parseTemplate(tmpl)
	if err != nil {
		return err
	}
	s := ss.slot
	s.mu.Lock()
	defer s.mu.Unlock()
	o, err := s.objectLocked(obj)
	if err != nil {
		return err
	}
	if !o.attrs.Bool(ck.CKA_MODIFIABLE) {
		return ck.Errorf(ck.CKR_ACTION_PROHIBITED, "object %d is not modifiable", obj)
	}
	if o.storeID != 0 && !ss.rw {
		return ck.Errorf(ck.CKR_SESSION_READ_ONLY, "token object in a read-only session")
	}
	if !o.complete {
		return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "object values are sealed")
	}
	sch, _ := objectSchema(o.attrs)
	a, err := applyChanges(o.attrs, sch, t, false, s.login)
	if err != nil {
		return err
	}
	if s.safePolicy() {
		if err := changePolicy(o.attrs, a); err != nil {
			return err
		}
	}
	if _, err := s.storeLocked(ss, o.handle, o, a, sch); err != nil {
		return err
	}
	return nil
}
