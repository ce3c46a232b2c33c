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
	return s.applyFetchLocked(s.fetch(st, s.key, false, 0), true)
}

// refresh brings the object cache up to date with the store if another
// process or host (or this one) changed it since: the keystore's change
// log when it can answer, a full load otherwise. A token in etcd asks
// nothing while its watch is live and notified nothing since, and (unless
// follower: the slot's follower, which waits for the store) nothing while
// the watch is down either: the cluster is out of reach or electing, the
// loaded cache answers at once, and the watch's return makes the follower
// catch up. The slot lock is not held while the store answers (a network
// round trip for a token in etcd, the request timeout when the cluster is
// out of reach): signing and every other use of the cache go on
// meanwhile. What the store reported is applied under the lock only if
// the cache did not change in between (s.ver: a login or logout, a write
// by this process, another refresh), so an older answer never replaces a
// newer state; otherwise the store is asked again, a few times at most
// (then the cache stays marked stale for the next call).
func (s *slot) refresh(follower bool) error {
	st, err := s.st()
	if err != nil {
		return s.storeErr("generation", err)
	}
	for range 4 {
		s.mu.Lock()
		loaded := s.loaded
		if loaded && s.cfg.Etcd() && !follower && !st.Following() {
			s.mu.Unlock()
			return nil
		}
		if loaded && st.Following() && !s.stale.Swap(false) {
			s.mu.Unlock()
			return nil
		}
		key, gen, ver := s.key, s.gen, s.ver
		s.mu.Unlock()
		// The key may be wiped meanwhile (a logout): the store then
		// refuses it (ErrKeyMismatch), and ver has moved anyway.
		f := s.fetch(st, key, loaded, gen)
		s.mu.Lock()
		if s.ver != ver {
			s.mu.Unlock()
			s.stale.Store(true)
			continue
		}
		err := s.applyFetchLocked(f, !loaded)
		s.mu.Unlock()
		return err
	}
	return nil
}

// fetched is what the store reported to a cache: changed objects (every
// token object when full) and deleted IDs at generation gen, or err.
type fetched struct {
	changed []keystore.Object
	deleted []uint64
	gen     uint64
	full    bool
	err     error
}

// fetch asks the store what changed since generation gen (loaded), or for
// every token object (not loaded), decoding with key (nil: logged out). It
// touches nothing of the slot but its counters.
func (s *slot) fetch(st *keystore.Store, key *keystore.Key, loaded bool, gen uint64) fetched {
	s.fetching.Add(1)
	defer s.fetching.Add(-1)
	var f fetched
	if loaded {
		f.changed, f.deleted, f.gen, f.full, f.err = st.Changes(key, gen)
	} else {
		f.changed, f.gen, f.err = st.Objects(key)
		f.full = true
	}
	if errors.Is(f.err, keystore.ErrNotInitialized) {
		f = fetched{full: true}
	}
	return f
}

// applyFetchLocked applies what fetch reported. A failed reload is an
// error (a login needs its private objects); a failed refresh of a loaded
// cache leaves it as it is, marked stale, and an unreachable store is then
// no error: the cache serves searches (logged).
func (s *slot) applyFetchLocked(f fetched, reload bool) error {
	if f.err != nil {
		if reload || !s.loaded {
			return s.storeErr("load objects", f.err)
		}
		s.stale.Store(true)
		if errors.Is(f.err, keystore.ErrUnavailable) {
			// The cluster is out of reach: the cache as it is serves
			// searches (signing never asks the store).
			s.log.Warn("token store unreachable: serving the object cache as it was", "err", f.err)
			return nil
		}
		return s.storeErr("generation", f.err)
	}
	if s.loaded && !f.full && f.gen == s.gen {
		return nil
	}
	s.applyLocked(f.changed, f.deleted, f.gen, f.full)
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
// anyone asks; it ends when the slot closes. It asks the store without
// the slot lock (refresh): a notification during a leader election, whose
// answer takes until the election ends or the request timeout, never
// holds up a signature.
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
		loaded := s.loaded
		s.mu.Unlock()
		if loaded {
			_ = s.refresh(true) // errors are logged; the watch's return asks again
		}
		if st, err := s.st(); err == nil {
			// The token record (one small read): C_GetTokenInfo answers
			// from it. A failure keeps the one cached.
			_, _ = s.fetchRecord(st)
		}
	}
}

// tokenRecord returns the token record (C_GetTokenInfo). A token in etcd
// answers from the one cached, which follow fetches again after every
// notified change (a PIN failure counted by another host, a label set):
// no request, so C_GetTokenInfo never waits on the network; with the
// cluster out of reach it answers what it last knew. The store is asked
// only when nothing is cached (the first call, after this process changed
// the record itself, an uninitialised token). A token file is read at
// every call (another process may have changed it, and nothing notifies).
func (s *slot) tokenRecord(st *keystore.Store) (keystore.TokenRecord, error) {
	if !s.cfg.Etcd() {
		return st.Token()
	}
	s.mu.Lock()
	if s.rec != nil {
		rec := *s.rec
		s.mu.Unlock()
		return rec, nil
	}
	s.mu.Unlock()
	return s.fetchRecord(st)
}

// fetchRecord reads the token record and caches it, unless a read begun
// after this one answered first, or this process changed the record
// since this one began (then the next call asks again).
func (s *slot) fetchRecord(st *keystore.Store) (keystore.TokenRecord, error) {
	s.mu.Lock()
	s.recSeq++
	seq := s.recSeq
	s.mu.Unlock()
	s.fetching.Add(1)
	rec, err := st.Token()
	s.fetching.Add(-1)
	if err == nil {
		s.mu.Lock()
		if seq > s.recAt && seq > s.recFloor {
			s.rec, s.recAt = &rec, seq
		}
		s.mu.Unlock()
	}
	return rec, err
}

// recordChangedLocked forgets the cached token record after this process
// asked the store to change it (a login attempt counts, a PIN set, an
// initialisation), unless the store was out of reach (nothing changed).
func (s *slot) recordChangedLocked(err error) {
	if errors.Is(err, keystore.ErrUnavailable) {
		return
	}
	s.rec = nil
	s.recFloor = s.recSeq
}

// unlocked runs f without the slot lock, which the caller holds before
// and after: a request to the store (a write, a login) during which
// signing and every other use of the cache go on. What the caller read
// under the lock before may have changed when f returns.
func (s *slot) unlocked(f func()) {
	s.mu.Unlock()
	defer s.mu.Lock()
	f()
}

// adoptLocked caches o, a token object this process has just written to
// the store with the slot lock released (a new object if !update, else a
// new snapshot of o.handle's), as the cache stands now: under the handle
// a refresh gave the object meanwhile (the follower may apply the write
// before the writer), and not at all if it can no longer be cached as it
// is — a private object with the user logged out meanwhile
// (CKR_USER_NOT_LOGGED_IN), an update of an object a refresh removed
// meanwhile (deleted by another host: CKR_OBJECT_HANDLE_INVALID). The
// write stands in the store either way, and the follower settles the
// cache from it.
func (s *slot) adoptLocked(o *object, update bool) error {
	cur := s.byStore[o.storeID]
	switch {
	case o.isPrivate() && s.login != userLoggedIn:
		if cur != nil {
			s.indexRemoveLocked(cur)
			delete(s.objects, cur.handle)
			delete(s.byStore, o.storeID)
		}
		s.ver++
		s.changed()
		return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "logged out while the object was stored")
	case update && cur == nil:
		s.changed()
		return ck.Errorf(ck.CKR_OBJECT_HANDLE_INVALID, "object %d deleted while it was stored", o.handle)
	case cur != nil:
		o.handle = cur.handle
	case o.handle == 0:
		o.handle = s.m.newHandle()
	}
	old := s.objects[o.handle]
	s.objects[o.handle] = o
	s.byStore[o.storeID] = o
	s.indexReplaceLocked(old, o)
	s.ver++
	return nil
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
	s.ver++
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
	s.buildClassIndexLocked() // findindex.go
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
	s.classIndexAddLocked(o)
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
	s.classIndexRemoveLocked(o)
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
