package token

// The object cache of a slot follows the token file through the keystore's
// change log: on noticing a new generation it asks the keystore what changed
// since the generation it reflects (keystore.Store.Changes) and applies that
// delta — changed objects replace their snapshots under the same handles,
// new ones get handles, deleted ones go, and the CKA_ID index is updated for
// those objects only. A change by another process therefore costs in
// proportion to the change, not to the number of objects on the token. Only
// when the keystore cannot answer (the cache is too far behind, the token
// was re-initialised or restored, a schema-version-1 file) is the cache
// replaced whole, still keeping the handles of unchanged objects.
//
// The CKA_ID index (idIndex) is built with every full load and kept up to
// date by every change of the cache; searches by CKA_ID look up the index
// and examine only the objects it names (a superset: every candidate is
// matched against the template).

import (
	"errors"
	"slices"
	"sync/atomic"

	"github.com/modexp-token/modexp-token/keystore"
	"github.com/modexp-token/modexp-token/token/ck"
)

// CacheStats counts the work of a module's object caches since it was
// loaded (all slots together): a diagnostic for tests and benchmarks that
// must show that a search or a change costs what it should.
type CacheStats struct {
	FullLoads     uint64 // caches replaced whole from the keystore
	Deltas        uint64 // caches updated from the keystore's change log
	Decoded       uint64 // objects received from the keystore (full loads and deltas)
	Examined      uint64 // objects a search compared against its template
	IndexRebuilds uint64 // CKA_ID index builds outside a full load (a scan of the cache)
}

// cacheCounters are CacheStats as atomics.
type cacheCounters struct {
	fullLoads, deltas, decoded, examined, indexRebuilds atomic.Uint64
}

// CacheStats returns the object cache counters of every slot together.
func (m *Module) CacheStats() CacheStats {
	var st CacheStats
	for _, s := range m.slots {
		c := &s.stats
		st.FullLoads += c.fullLoads.Load()
		st.Deltas += c.deltas.Load()
		st.Decoded += c.decoded.Load()
		st.Examined += c.examined.Load()
		st.IndexRebuilds += c.indexRebuilds.Load()
	}
	return st
}

// reloadLocked replaces the object cache by every token object of the
// keystore, keeping the handles (and snapshots, with their prepared keys)
// of unchanged objects.
func (s *slot) reloadLocked() error {
	st, err := s.st()
	if err != nil {
		return s.storeErr("load objects", err)
	}
	objs, gen, err := st.Objects(s.key)
	if errors.Is(err, keystore.ErrNotInitialized) {
		objs, gen, err = nil, 0, nil
	}
	if err != nil {
		return s.storeErr("load objects", err)
	}
	s.applyLocked(objs, nil, gen, true)
	return nil
}

// refreshLocked brings the object cache up to date with the token file if
// another process (or this one) changed it since: the keystore's change log
// when it can answer, a full load otherwise.
func (s *slot) refreshLocked() error {
	if !s.loaded {
		return s.reloadLocked()
	}
	st, err := s.st()
	if err != nil {
		return s.storeErr("generation", err)
	}
	following := st.Following()
	if following && !s.stale.Swap(false) {
		return nil // notified of every change, and none since the last
	}
	changed, deleted, gen, full, err := st.Changes(s.key, s.gen)
	if errors.Is(err, keystore.ErrNotInitialized) {
		changed, deleted, gen, full, err = nil, nil, 0, true, nil
	}
	if err != nil {
		s.stale.Store(true)
		if errors.Is(err, keystore.ErrUnavailable) {
			// The cluster is out of reach: the cache as it is serves
			// searches (signing never asks the store).
			s.log.Warn("token store unreachable: serving the object cache as it was", "err", err)
			return nil
		}
		return s.storeErr("generation", err)
	}
	if !full && gen == s.gen {
		return nil
	}
	s.applyLocked(changed, deleted, gen, full)
	return nil
}

// changed is the keystore's notification of a change (a token in etcd,
// keystore.Store.Follow): it marks the cache stale and wakes follow. It
// never blocks (it runs on the store's watch goroutine).
func (s *slot) changed() {
	s.stale.Store(true)
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// follow applies notified changes to a loaded cache as they come, so a
// key made or deleted on another host is in this host's cache before
// anyone asks; it ends when the slot closes.
func (s *slot) follow() {
	s.storeMu.Lock()
	notify, done := s.notify, s.done
	s.storeMu.Unlock()
	for {
		select {
		case <-done:
			return
		case <-notify:
		}
		s.mu.Lock()
		if s.loaded {
			_ = s.refreshLocked() // errors are logged; the next search asks again
		}
		s.mu.Unlock()
	}
}

// applyLocked applies what the keystore reported: changed objects (every
// token object when full) and deleted IDs, at generation gen.
func (s *slot) applyLocked(changed []keystore.Object, deleted []uint64, gen uint64, full bool) {
	c := &s.stats
	c.decoded.Add(uint64(len(changed)))
	if full {
		c.fullLoads.Add(1)
		s.idIndex = nil // rebuilt below, once
		seen := make(map[uint64]*object, len(changed))
		for _, so := range changed {
			seen[so.ID] = s.upsertLocked(so)
		}
		for id, old := range s.byStore {
			if _, ok := seen[id]; !ok {
				delete(s.objects, old.handle)
			}
		}
		s.byStore = seen
		s.buildIndexLocked()
	} else {
		c.deltas.Add(1)
		for _, so := range changed {
			s.byStore[so.ID] = s.upsertLocked(so)
		}
		for _, id := range deleted {
			if old, ok := s.byStore[id]; ok {
				s.indexRemoveLocked(old)
				delete(s.objects, old.handle)
				delete(s.byStore, id)
			}
		}
	}
	s.gen, s.loaded = gen, true
}

// upsertLocked caches a keystore object under the handle it had (a new
// one if it is new) and returns its snapshot: the old one when nothing
// changed.
func (s *slot) upsertLocked(so keystore.Object) *object {
	old := s.byStore[so.ID]
	h := uint64(0)
	if old != nil {
		h = old.handle
	} else {
		h = s.m.newHandle()
	}
	o := fromStore(h, so)
	if old != nil && old.complete == o.complete && sameAttrs(old.attrs, o.attrs) {
		o = old
	}
	if old != o {
		s.indexReplaceLocked(old, o)
	}
	s.objects[h] = o
	return o
}

// buildIndexLocked builds the CKA_ID index from the cache.
func (s *slot) buildIndexLocked() {
	s.idIndex = make(map[string][]uint64)
	for h, o := range s.objects {
		if v, ok := o.attrs[ck.CKA_ID]; ok {
			s.idIndex[string(v)] = append(s.idIndex[string(v)], h)
		}
	}
}

// indexAddLocked enters o in the CKA_ID index (if it is built).
func (s *slot) indexAddLocked(o *object) {
	if s.idIndex == nil || o == nil {
		return
	}
	v, ok := o.attrs[ck.CKA_ID]
	if !ok {
		return
	}
	hs := s.idIndex[string(v)]
	if !slices.Contains(hs, o.handle) {
		s.idIndex[string(v)] = append(hs, o.handle)
	}
}

// indexRemoveLocked removes o's entry from the CKA_ID index.
func (s *slot) indexRemoveLocked(o *object) {
	if s.idIndex == nil || o == nil {
		return
	}
	v, ok := o.attrs[ck.CKA_ID]
	if !ok {
		return
	}
	hs := slices.DeleteFunc(s.idIndex[string(v)], func(h uint64) bool { return h == o.handle })
	if len(hs) == 0 {
		delete(s.idIndex, string(v))
	} else {
		s.idIndex[string(v)] = hs
	}
}

// indexReplaceLocked updates the CKA_ID index for the snapshot n replacing
// old under the same handle (old nil: a new object).
func (s *slot) indexReplaceLocked(old, n *object) {
	if old != nil && string(old.attrs[ck.CKA_ID]) == string(n.attrs[ck.CKA_ID]) {
		_, had := old.attrs[ck.CKA_ID]
		_, has := n.attrs[ck.CKA_ID]
		if had == has {
			return
		}
	}
	s.indexRemoveLocked(old)
	s.indexAddLocked(n)
}
