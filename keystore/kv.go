package keystore

import (
	bolt "go.etcd.io/bbolt"
)

// The backend seam
//
// Everything the keystore stores (the token record, objects, the change
// log) is written once, against a small transactional
// key-value interface shaped like the subset of bbolt it uses: named
// buckets of sorted byte keys, a sequence per bucket, cursors, and
// transactions that are either read-only snapshots or serializable
// read-write transactions (all their writes or none).
//
// The token file implements it directly (boltTx wraps a *bolt.Tx: no copy,
// no extra round trip). An etcd cluster implements it with optimistic
// transactions (etcd.go): reads at one revision, writes buffered, and a
// commit that succeeds only if nothing was committed to the token since
// that revision; a conflict runs the transaction again.

// kvTx is one transaction on a token's store.
type kvTx interface {
	// Bucket returns the named bucket, nil if it does not exist.
	Bucket(name []byte) kvBucket
	// CreateBucket makes a bucket that must not exist.
	CreateBucket(name []byte) (kvBucket, error)
	// CreateBucketIfNotExists returns the named bucket, made if missing.
	CreateBucketIfNotExists(name []byte) (kvBucket, error)
	// DeleteBucket removes a bucket and everything in it.
	DeleteBucket(name []byte) error
	// Writable reports whether this is a read-write transaction.
	Writable() bool
	// Empty reports whether the store holds no bucket at all.
	Empty() bool
	// Path names the store in messages (a file path, or etcd's prefix).
	Path() string
}

// kvBucket is a bucket of a transaction. Slices returned by Get and
// cursors are valid only during the transaction and must not be changed.
type kvBucket interface {
	Get(key []byte) []byte
	Put(key, value []byte) error
	Delete(key []byte) error
	Cursor() kvCursor
	NextSequence() (uint64, error)
	Sequence() uint64
	SetSequence(v uint64) error
}

// kvCursor walks a bucket in key order; a nil key means the end.
type kvCursor interface {
	First() (key, value []byte)
	Seek(seek []byte) (key, value []byte)
	Next() (key, value []byte)
	// Delete removes the key the cursor is on.
	Delete() error
}

// boltTx is the token file's transaction.
type boltTx struct{ *bolt.Tx }

// boltBucket is a bucket of the token file (one pointer: stored in an
// interface without an allocation).
type boltBucket struct{ *bolt.Bucket }

func (b boltBucket) Cursor() kvCursor { return b.Bucket.Cursor() }

func wrapBucket(b *bolt.Bucket) kvBucket {
	if b == nil {
		return nil
	}
	return boltBucket{b}
}

func (t boltTx) Bucket(name []byte) kvBucket { return wrapBucket(t.Tx.Bucket(name)) }

func (t boltTx) CreateBucket(name []byte) (kvBucket, error) {
	b, err := t.Tx.CreateBucket(name)
	return wrapBucket(b), err
}

func (t boltTx) CreateBucketIfNotExists(name []byte) (kvBucket, error) {
	b, err := t.Tx.CreateBucketIfNotExists(name)
	return wrapBucket(b), err
}

func (t boltTx) Empty() bool {
	empty := true
	_ = t.Tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
	return empty
}

func (t boltTx) Path() string { return t.Tx.DB().Path() }
