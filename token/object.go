package token

// The object model. An object is an immutable snapshot of attributes
// behind a handle: a change makes a new snapshot under the same handle, so
// readers never lock the attributes and an operation keeps the snapshot it
// started with. Token objects mirror keystore objects (by store ID) and keep
// their handle across reloads; session objects live in memory and belong to
// the session that made them.

import (
	"sync"
	"sync/atomic"

	"github.com/modexp-token/modexp-token/keystore"
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// object is one snapshot of a token or session object.
type object struct {
	handle  uint64
	storeID uint64 // keystore ID of a token object, 0 for session objects
	owner   uint64 // session handle of a session object
	attrs   attr.Map
	sealed  map[uint64]bool // types stored sealed (token objects)
	// complete: every attribute is present (sealed values were unlocked).
	complete bool

	// prepared is the key prepared for the slot's engine (a *guard.RSAKey for
	// RSA; other key types keep their own form), made once per snapshot
	// under prepOnce and dropped with the snapshot or at logout. It is
	// read without the lock (Cached, the operations' fast path): the
	// sessions of every thread read the same key object, and a lock taken
	// per operation would move its cache line between their cores.
	prepOnce sync.Mutex
	prepared atomic.Pointer[preparedKey]
}

// preparedKey holds an object's prepared key.
type preparedKey struct{ v any }

// dropPrepared forgets the prepared key (logout, close).
func (o *object) dropPrepared() {
	o.prepOnce.Lock()
	o.prepared.Store(nil)
	o.prepOnce.Unlock()
}

// Cache is mech.Key's: the cached value when match accepts it, else
// build's (kept when it succeeds), unless sealed says the private values
// are not open.
// Cached is mech.Key's.
func (o *object) Cached() any {
	if p := o.prepared.Load(); p != nil {
		return p.v
	}
	return nil
}

func (o *object) Cache(match func(any) bool, sealed func() error, build func() (any, error)) (any, error) {
	o.prepOnce.Lock()
	defer o.prepOnce.Unlock()
	if p := o.prepared.Load(); p != nil && match(p.v) {
		return p.v, nil
	}
	if sealed != nil && !o.complete {
		return nil, sealed()
	}
	v, err := build()
	if err != nil {
		return nil, err
	}
	o.prepared.Store(&preparedKey{v: v})
	return v, nil
}

func (o *object) class() uint64 {
	c, _ := o.attrs.ULong(ck.CKA_CLASS)
	return c
}

func (o *object) keyType() uint64 {
	k, ok := o.attrs.ULong(ck.CKA_KEY_TYPE)
	if !ok {
		return ^uint64(0)
	}
	return k
}

func (o *object) isToken() bool   { return o.attrs.Bool(ck.CKA_TOKEN) }
func (o *object) isPrivate() bool { return o.attrs.Bool(ck.CKA_PRIVATE) }

// size is C_GetObjectSize: the bytes of all attribute values.
func (o *object) size() uint64 {
	var n uint64
	for _, v := range o.attrs {
		n += uint64(len(v)) + 16
	}
	return n
}

// sameAttrs reports whether two snapshots hold the same attributes.
func sameAttrs(a, b attr.Map) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || string(v) != string(w) {
			return false
		}
	}
	return true
}

// fromStore makes a snapshot of a keystore object; the snapshot takes
// so's maps (the keystore returns fresh ones).
func fromStore(handle uint64, so keystore.Object) *object {
	o := &object{handle: handle, storeID: so.ID, attrs: attr.Map(so.Attrs), sealed: so.Sealed, complete: true}
	for t, s := range so.Sealed {
		if _, ok := o.attrs[t]; s && !ok {
			o.complete = false
		}
	}
	return o
}

// stripped returns the snapshot without its sealed values (after logout).
func (o *object) stripped() *object {
	if o.storeID == 0 || len(o.sealed) == 0 {
		return o
	}
	n := &object{handle: o.handle, storeID: o.storeID, owner: o.owner, attrs: attr.Map{}, sealed: o.sealed}
	for k, v := range o.attrs {
		if !o.sealed[k] {
			n.attrs[k] = v
		}
	}
	return n
}
