package token

// C_FindObjectsInit, C_FindObjects, C_FindObjectsFinal: exact byte match
// on any attribute, over the objects visible in the current login state.

import (
	"slices"

	"github.com/modexp-token/modexp-token/token/ck"
)

// findState is an active search: the matching handles not yet returned.
type findState struct {
	handles []uint64
}

// FindObjectsInit is C_FindObjectsInit. It notices other processes'
// changes (the keystore's generation) before searching.
func (m *Module) FindObjectsInit(sh uint64, tmpl []Attribute) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	if ss.find != nil {
		return ck.Errorf(ck.CKR_OPERATION_ACTIVE, "search active")
	}
	s := ss.slot
	// The store is asked without the slot lock (cache.go): a search
	// during a leader election does not hold up other sessions' signing.
	if err := s.refresh(false); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var found []uint64
	if id, ok := templateID(tmpl); ok {
		// Through the CKA_ID index: no scan of every object.
		cands := s.idIndexLocked()[string(id)]
		s.stats.examined.Add(uint64(len(cands)))
		for _, h := range cands {
			if o, ok := s.objects[h]; ok && s.visibleLocked(o) && matches(o, tmpl) {
				found = append(found, h)
			}
		}
	} else if class, ok := templateClass(tmpl); ok && s.classWorthLocked(class) {
		// Through the CKA_CLASS index (findindex.go): the objects of
		// the class only.
		cands := s.classCandidatesLocked(class)
		s.stats.examined.Add(uint64(len(cands)))
		for h := range cands {
			if o, ok := s.objects[h]; ok && s.visibleLocked(o) && matches(o, tmpl) {
				found = append(found, h)
			}
		}
	} else {
		s.stats.examined.Add(uint64(len(s.objects)))
		for h, o := range s.objects {
			if s.visibleLocked(o) && matches(o, tmpl) {
				found = append(found, h)
			}
		}
	}
	slices.Sort(found)
	ss.find = &findState{handles: found}
	return nil
}

// templateID returns the CKA_ID value of a search template, if any.
func templateID(tmpl []Attribute) ([]byte, bool) {
	for _, a := range tmpl {
		if a.Type == ck.CKA_ID {
			return a.Value, true
		}
	}
	return nil, false
}

// idIndexLocked returns the CKA_ID index (cache.go), building it if the
// cache was never loaded whole.
func (s *slot) idIndexLocked() map[string][]uint64 {
	if s.idIndex == nil {
		s.stats.indexRebuilds.Add(1)
		s.stats.examined.Add(uint64(len(s.objects)))
		s.buildIndexLocked()
	}
	return s.idIndex
}

// matches reports whether every template attribute is present in o with
// the same bytes; values the caller may not read never match. The values
// are compared first: the schema is looked up only for a candidate.
func matches(o *object, tmpl []Attribute) bool {
	if len(tmpl) == 0 {
		return true
	}
	for _, a := range tmpl {
		v, ok := o.attrs[a.Type]
		if !ok || string(v) != string(a.Value) {
			return false
		}
	}
	sch, _ := objectSchema(o.attrs)
	for _, a := range tmpl {
		if !readable(sch[a.Type], o.attrs) {
			return false
		}
	}
	return true
}

// FindObjects is C_FindObjects: up to max more handles.
func (m *Module) FindObjects(sh uint64, max int) ([]uint64, error) {
	ss, err := m.lock(sh)
	if err != nil {
		return nil, err
	}
	defer ss.mu.Unlock()
	if ss.find == nil {
		return nil, ck.Errorf(ck.CKR_OPERATION_NOT_INITIALIZED, "no search")
	}
	if max < 0 {
		max = 0
	}
	n := min(max, len(ss.find.handles))
	out := slices.Clone(ss.find.handles[:n])
	ss.find.handles = ss.find.handles[n:]
	return out, nil
}

// FindObjectsFinal is C_FindObjectsFinal.
func (m *Module) FindObjectsFinal(sh uint64) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	if ss.find == nil {
		return ck.Errorf(ck.CKR_OPERATION_NOT_INITIALIZED, "no search")
	}
	ss.find = nil
	return nil
}
