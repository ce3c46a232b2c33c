package token

// The window of caller-chosen AES-GCM IVs (docs/THREATS.md, GCM): an
// encryption whose caller IV one key object already used within the window
// is refused with CKR_MECHANISM_PARAM_INVALID at C_EncryptInit, before any
// output. A repeated IV under one key leaks the keystream xor of the two
// messages and lets the GHASH key be solved for (forgeries).
//
//   - The window is per Module, in memory: one process. Two processes (or
//     one process before and after a restart) do not see each other's IVs;
//     the token-generated IVs are the only guarantee across processes.
//   - A key object is its token object's keystore ID in its slot (stable
//     across cache snapshots), or its session object's handle (never reused
//     in the Module's life). A copy of a key (C_CopyObject, an unwrap of the
//     same value) is another object with a window of its own.
//   - Memory is bounded: the last gcmIVWindow IVs of each of the
//     gcmIVKeys most recently used keys, each IV kept as a 16-byte SHA-256
//     prefix (a false refusal needs a 128-bit collision). At most about
//     gcmIVKeys × gcmIVWindow × 64 bytes ≈ 16 MiB, allocated as used.
//     The key used least recently is forgotten when a new key needs room.
//   - Decryption is not checked (it repeats the encryption's IV).

import (
	"crypto/sha256"
	"sync"

	"github.com/modexp-token/modexp-token/token/mech"
)

// Bounds of the caller-IV window.
const (
	gcmIVKeys = 64 // key objects remembered
)

// gcmKeyID names a key object for the window.
type gcmKeyID struct {
	slot, storeID, handle uint64
}

// ivDigest is a remembered IV.
type ivDigest [16]byte

// ivRing is one key's window: the set of its last IVs and their order.
type ivRing struct {
	set     map[ivDigest]struct{}
	order   []ivDigest // a ring of at most gcmIVWindow, next is the oldest once full
	next    int
	lastUse uint64
}

// gcmIVs is a Module's window of caller IVs.
type gcmIVs struct {
	mu   sync.Mutex
	keys map[gcmKeyID]*ivRing
	tick uint64
}

// gcmKeyOf is the window's name of key o on slot s.
func gcmKeyOf(s *slot, o *object) gcmKeyID {
	id := gcmKeyID{slot: s.id}
	if o.storeID != 0 {
		id.storeID = o.storeID
	} else {
		id.handle = o.handle
	}
	return id
}

// use records iv for key and reports whether it is new within the window.
func (w *gcmIVs) use(key gcmKeyID, iv []byte) bool {
	sum := sha256.Sum256(iv)
	d := ivDigest(sum[:16])
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.keys == nil {
		w.keys = map[gcmKeyID]*ivRing{}
	}
	w.tick++
	r := w.keys[key]
	if r == nil {
		if len(w.keys) >= gcmIVKeys {
			w.evictLRU()
		}
		r = &ivRing{set: map[ivDigest]struct{}{}}
		w.keys[key] = r
	}
	r.lastUse = w.tick
	if _, seen := r.set[d]; seen {
		return false
	}
	if len(r.order) < mech.GCMIVWindow {
		r.order = append(r.order, d)
	} else {
		delete(r.set, r.order[r.next])
		r.order[r.next] = d
		r.next = (r.next + 1) % mech.GCMIVWindow
	}
	r.set[d] = struct{}{}
	return true
}

// evictLRU forgets the key used least recently. w.mu is held.
func (w *gcmIVs) evictLRU() {
	var oldest gcmKeyID
	first := true
	var min uint64
	for k, r := range w.keys {
		if first || r.lastUse < min {
			oldest, min, first = k, r.lastUse, false
		}
	}
	delete(w.keys, oldest)
}
