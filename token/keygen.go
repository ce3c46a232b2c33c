package token

// C_GenerateKeyPair. The key is generated without any token lock held
// (RSA generation takes up to seconds); both templates are checked before
// and the objects stored after, all or nothing.

import (
	"cmp"
	"errors"

	"github.com/modexp-token/modexp-token/keystore"
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// GenerateKeyPair is C_GenerateKeyPair; it returns the public and the
// private key's handles.
func (m *Module) GenerateKeyPair(sh uint64, cm *Mechanism, pub, priv []Attribute) (uint64, uint64, error) {
	ss, err := m.lock(sh)
	if err != nil {
		return 0, 0, err
	}
	defer ss.mu.Unlock()
	if cm == nil {
		return 0, 0, ck.Errorf(ck.CKR_ARGUMENTS_BAD, "no mechanism")
	}
	mc, ok := mech.Registry[cm.Type].(mech.KeyPairGenerator)
	if !ok {
		return 0, 0, ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s does not generate key pairs", ck.Name("CKM_", cm.Type))
	}
	if _, err := mech.BindParam(mc, cm); err != nil {
		return 0, 0, err
	}
	s := ss.slot
	pt, err := parseTemplate(pub)
	if err != nil {
		return 0, 0, err
	}
	qt, err := parseTemplate(priv)
	if err != nil {
		return 0, 0, err
	}
	kt := mc.Base().KeyTypes[0]
	for _, c := range []struct {
		t     attr.Map
		class uint64
	}{{pt, ck.CKO_PUBLIC_KEY}, {qt, ck.CKO_PRIVATE_KEY}} {
		if err := defaultULong(c.t, ck.CKA_CLASS, c.class); err != nil {
			return 0, 0, err
		}
		if err := defaultULong(c.t, ck.CKA_KEY_TYPE, kt); err != nil {
			return 0, 0, err
		}
		if _, _, err := checkTemplate(c.t, modeGenerate); err != nil {
			return 0, 0, err
		}
	}
	_, login := s.currentEpoch()
	probePub, probePriv := pt.Clone(), qt.Clone()
	for t, spec := range attr.PrivateKeySchema {
		if _, ok := probePriv[t]; !ok && spec.Default != nil {
			probePriv[t] = spec.Default
		}
	}
	for _, a := range []attr.Map{probePub, probePriv} {
		if err := ss.checkWritable(a, login); err != nil {
			return 0, 0, err
		}
	}
	pubVals, privVals, err := mc.GenerateKeyPair(s, pt, qt)
	if err != nil {
		return 0, 0, err
	}
	pa, psch, err := buildObject(pt, pubVals, modeGenerate, cm.Type, login)
	if err != nil {
		return 0, 0, err
	}
	qa, qsch, err := buildObject(qt, privVals, modeGenerate, cm.Type, login)
	if err != nil {
		return 0, 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := ss.checkWritable(pa, s.login); err != nil {
		return 0, 0, err
	}
	if err := ss.checkWritable(qa, s.login); err != nil {
		return 0, 0, err
	}
	po, qo, err := s.storePairLocked(ss, pa, psch, qa, qsch)
	if err != nil {
		return 0, 0, err
	}
	s.log.Info("key pair generated", "mechanism", ck.Name("CKM_", cm.Type), "public", po.handle, "private", qo.handle)
	return po.handle, qo.handle, nil
}

// storePairLocked stores a generated key pair all or nothing: the token
// objects among the two in one keystore transaction (PutObjects), so a
// crash or a failure never leaves one half of the pair on the token.
func (s *slot) storePairLocked(ss *session, pa attr.Map, psch attr.Schema, qa attr.Map, qsch attr.Schema) (*object, *object, error) {
	objs := []*object{{attrs: pa, complete: true}, {attrs: qa, complete: true}}
	schs := []attr.Schema{psch, qsch}
	var puts []keystore.Object
	var idx []int
	for i, o := range objs {
		if !o.attrs.Bool(ck.CKA_TOKEN) {
			o.owner = ss.h
			continue
		}
		o.sealed = sealedTypes(o.attrs, schs[i])
		if len(o.sealed) > 0 && s.key == nil {
			return nil, nil, ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "sealed attributes need a login")
		}
		puts = append(puts, keystore.Object{Attrs: o.attrs.Clone(), Sealed: o.sealed})
		idx = append(idx, i)
	}
	if len(puts) > 0 {
		st, err := s.st()
		if err != nil {
			return nil, nil, s.storeErr("store key pair", err)
		}
		key := s.key
		var ids []uint64
		s.unlocked(func() { ids, err = st.PutObjects(key, puts) }) // cache.go, adoptLocked
		if err != nil {
			if errors.Is(err, keystore.ErrNotInitialized) {
				return nil, nil, ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "token not initialised")
			}
			return nil, nil, s.storeErr("store key pair", err)
		}
		for j, i := range idx {
			objs[i].storeID = ids[j]
		}
	}
	var adoptErr error
	for _, o := range objs {
		if o.storeID != 0 {
			adoptErr = cmp.Or(adoptErr, s.adoptLocked(o, false))
			continue
		}
		o.handle = s.m.newHandle()
		s.objects[o.handle] = o
		s.indexAddLocked(o)
	}
	if adoptErr != nil {
		return nil, nil, adoptErr
	}
	return objs[0], objs[1], nil
}

// defaultULong sets a CK_ULONG attribute when absent; a different value is
// CKR_TEMPLATE_INCONSISTENT.
func defaultULong(a attr.Map, t, v uint64) error {
	old, ok := a[t]
	if !ok {
		a[t] = ck.ULong(v)
		return nil
	}
	if got, ok := ck.ParseULong(old); !ok || got != v {
		return ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "%s does not match the mechanism", attr.Describe(t))
	}
	return nil
}
