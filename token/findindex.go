package token

// The CKA_CLASS index of a slot's object cache: the handles of the cached
// objects by class. A search whose template names a class but no CKA_ID
// (libp11's engine looks for every private key on each key load: in a
// server that loads the key per TLS handshake, on every handshake)
// examines the objects of that class only, not every object on the token.
//
// It lives and dies with the CKA_ID index (cache.go): built with it by
// buildIndexLocked, kept up to date by indexAddLocked and
// indexRemoveLocked, valid whenever idIndex is not nil. Like it, a
// superset: entries may be stale (a handle removed at logout), and every
// candidate is matched against the template. CKA_CLASS never changes, so
// a snapshot replacing another under the same handle keeps its entry.

import (
	"github.com/modexp-token/modexp-token/token/ck"
)

// buildClassIndexLocked builds the CKA_CLASS index from the cache.
func (s *slot) buildClassIndexLocked() {
	s.classIndex = make(map[uint64]map[uint64]struct{})
	for h, o := range s.objects {
		s.classAdd(o.class(), h)
	}
}

// classAdd enters handle h under class c.
func (s *slot) classAdd(c, h uint64) {
	hs := s.classIndex[c]
	if hs == nil {
		hs = make(map[uint64]struct{})
		s.classIndex[c] = hs
	}
	hs[h] = struct{}{}
}

// classIndexAddLocked enters o in the CKA_CLASS index (if it is built).
func (s *slot) classIndexAddLocked(o *object) {
	if s.classIndex == nil || o == nil {
		return
	}
	s.classAdd(o.class(), o.handle)
}

// classIndexRemoveLocked removes o's entry from the CKA_CLASS index.
func (s *slot) classIndexRemoveLocked(o *object) {
	if s.classIndex == nil || o == nil {
		return
	}
	c := o.class()
	if hs := s.classIndex[c]; hs != nil {
		delete(hs, o.handle)
		if len(hs) == 0 {
			delete(s.classIndex, c)
		}
	}
}

// templateClass returns the class a search template names, if any (and
// parses: a value that does not is matched by a scan, and matches
// nothing).
func templateClass(tmpl []Attribute) (uint64, bool) {
	for _, a := range tmpl {
		if a.Type == ck.CKA_CLASS {
			return ck.ParseULong(a.Value)
		}
	}
	return 0, false
}

// classWorthLocked reports whether a search by class c is better served
// by the CKA_CLASS index than by a scan of every object: unless the class
// holds most of the cache (more than three quarters), when walking its
// handles and looking each up costs more than the scan (a listing of
// every public key of a token of 100,000 public keys, BenchmarkLargeToken
// in alternating runs: 168–178 ms through the index, 115–166 ms by the
// scan).
func (s *slot) classWorthLocked(c uint64) bool {
	return len(s.classCandidatesLocked(c))*4 <= len(s.objects)*3
}

// classCandidatesLocked returns the handles of the cached objects of
// class c (a superset), building the indexes if need be.
func (s *slot) classCandidatesLocked(c uint64) map[uint64]struct{} {
	s.idIndexLocked()
	if s.classIndex == nil {
		// The CKA_ID index was built before this one existed.
		s.buildClassIndexLocked()
	}
	return s.classIndex[c]
}
