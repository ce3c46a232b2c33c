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
//     gcmIVKeys most recently used keys, each IV kept as itself when it is
//     shorter than 16 bytes (the usual 12), else as a 16-byte SHA-256
//     prefix (a false refusal needs a 128-bit collision). At most about
//     gcmIVKeys × gcmIVWindow × 64 bytes ≈ 16 MiB, allocated as used.
//     The key used least recently is forgotten when a new key needs room.
//   - Decryption is not checked (it repeats the encryption's IV).
//   - Each key's window has its own lock, and finding it takes none (a
//     sync.Map): sessions of different threads encrypting under different
//     keys share nothing, under one key only that key's window.

import (
	"crypto/sha256"
	"sync"
	"sync/atomic"

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

// ivDigest is a remembered IV: an IV of up to 15 bytes itself, its length
// in the last byte; a longer one the first 16 bytes of its SHA-256.
type ivDigest [16]byte

// digestIV is iv's ivDigest.
func digestIV(iv []byte) ivDigest {
	var d ivDigest
	if len(iv) < len(d) {
		copy(d[:], iv)
		d[len(d)-1] = byte(len(iv))
		return d
	}
	sum := sha256.Sum256(iv)
	return ivDigest(sum[:16])
}

// ivRing is one key's window: the set of its last IVs and their order.
type ivRing struct {
	mu      sync.Mutex
	dead    bool // evicted: a use that found it looks again
	set     map[ivDigest]struct{}
	order   []ivDigest // a ring of at most gcmIVWindow, next is the oldest once full
	next    int
	lastUse atomic.Uint64 // gcmIVs.tick at the key's last use
}

// gcmIVs is a Module's window of caller IVs.
type gcmIVs struct {
	keys sync.Map // gcmKeyID → *ivRing
	mu   sync.Mutex
	n    int // keys held, under mu (which adds and evicts)
	// tick orders the keys' uses (LRU); a use of the key used last
	// leaves it alone, so one hot key writes nothing shared but its ring.
	tick atomic.Uint64
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
	d := digestIV(iv)
	for {
		r := w.ring(key)
		r.mu.Lock()
		if r.dead {
			r.mu.Unlock()
			continue
		}
		if t := w.tick.Load(); r.lastUse.Load() != t {
			r.lastUse.Store(w.tick.Add(1))
		}
		fresh := r.add(d)
		r.mu.Unlock()
		return fresh
	}
}

// add records d in r and reports whether it was not there. r.mu is held.
func (r *ivRing) add(d ivDigest) bool {
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

// ring is key's window, made (evicting the key used least recently when
// gcmIVKeys are held) if the key has none.
func (w *gcmIVs) ring(key gcmKeyID) *ivRing {
	if r, ok := w.keys.Load(key); ok {
		return r.(*ivRing)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if r, ok := w.keys.Load(key); ok {
		return r.(*ivRing)
	}
	if w.n >= gcmIVKeys {
		w.evictLRU()
	}
	r := &ivRing{set: map[ivDigest]struct{}{}}
	r.lastUse.Store(w.tick.Add(1))
	w.keys.Store(key, r)
	w.n++
	return r
}

// evictLRU forgets the key used least recently. w.mu is held.
func (w *gcmIVs) evictLRU() {
	var oldest any
	var victim *ivRing
	w.keys.Range(func(k, v any) bool {
		r := v.(*ivRing)
		if victim == nil || r.lastUse.Load() < victim.lastUse.Load() {
			oldest, victim = k, r
		}
		return true
	})
	if victim == nil {
		return
	}
	victim.mu.Lock()
	victim.dead = true
	victim.mu.Unlock()
	w.keys.Delete(oldest)
	w.n--
}
