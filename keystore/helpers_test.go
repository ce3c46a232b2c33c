package keystore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Test PINs.
var (
	soPIN   = []byte("so-pin-1234")
	userPIN = []byte("user-pin-5678")
)

// testOptions are cheap: tests must not pay the default Argon2id cost.
func testOptions() Options {
	return Options{KDF: InsecureTestKDFParams, AllowWeakKDF: true, LockTimeout: 10 * time.Second}
}

// fixtureCopy puts testdata/name (a token file of schema version schema)
// where a fresh token path of the test's backend is: a copy of the file in
// a temporary directory, or (TestOnEtcd) its records copied into etcd as
// store copy does. It returns the path.
func fixtureCopy(t *testing.T, name string, schema uint32) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "token.db")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	if openHook != nil {
		file, err := Open(path, testOptions())
		must(t, err)
		dst := openStore(t, tokenPath(t), testOptions())
		if _, err := Copy(dst, file); err != nil {
			t.Fatalf("copy the fixture %s into %s: %v", name, dst.path, err)
		}
		path = dst.path
	}
	if v := schemaOf(t, path); v != schema {
		t.Fatalf("fixture %s: schema %d, want %d", name, v, schema)
	}
	return path
}

// tokenPath is a token file in a fresh directory that does not exist yet.
func tokenPath(t testing.TB) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "token", "token.db")
}

// The backend of the tests' tokens
//
// Tests open stores with openStore (or openStoreErr) on a path, and reach
// below the keystore with rawOf: by default a token file. TestOnEtcd
// (backends_etcd_test.go, build tag modexp_etcd) sets the hooks and runs
// the tests of backendTests (backends_test.go) again with every token in
// etcd: a path then names a key prefix, and a Store's own path
// ("etcd:" + prefix) names the same one.
var (
	openHook func(t *testing.T, path string, opts Options) (*Store, error)
	rawHook  func(t *testing.T, path string) rawStore
)

// backendEnv is the environment a child process (TestTwoProcesses) needs
// to open the parent's tokens in the same backend, and backendFromEnv,
// called first in that child, takes it up (both set by TestOnEtcd).
var (
	backendEnv     []string
	backendFromEnv func(t *testing.T)
)

// onFile reports whether the tests' tokens are in files (not TestOnEtcd).
func onFile() bool { return openHook == nil }

// openStoreErr opens the token at path in the test's backend.
func openStoreErr(t *testing.T, path string, opts Options) (*Store, error) {
	t.Helper()
	var s *Store
	var err error
	if openHook != nil {
		s, err = openHook(t, path, opts)
	} else {
		s, err = Open(path, opts)
	}
	if err == nil {
		t.Cleanup(func() { _ = s.Close() })
	}
	return s, err
}

func openStore(t *testing.T, path string, opts Options) *Store {
	t.Helper()
	s, err := openStoreErr(t, path, opts)
	if err != nil {
		t.Fatalf("Open %s: %v", path, err)
	}
	return s
}

// rawStore is direct access to a token's stored records, below the
// keystore: what someone who can write the token file, or the token's
// etcd prefix (an etcd administrator, docs/FLEET.md), can do. Each call is
// a transaction of its own on the file, a request of its own to etcd
// (with the etcd client, not through the keystore: no commit key is put,
// so hosts' caches are not told). A missing bucket fails the test, except
// in all and hasBucket.
type rawStore interface {
	get(bucket, key []byte) []byte
	put(bucket, key, value []byte)
	// all returns the bucket's keys and values (nil: no such bucket).
	all(bucket []byte) map[string][]byte
	hasBucket(name []byte) bool
	createBucket(name []byte)
	deleteBucket(name []byte)
	// dump returns everything stored for the token (the file's bytes,
	// or every key and value under the prefix): for "unchanged" and
	// "never stored in the clear" checks.
	dump() []byte
	// remove deletes the whole token (the file, or every key under the
	// prefix).
	remove()
}

// rawOf is direct access to the token at path (a Store's Path() too).
func rawOf(t *testing.T, path string) rawStore {
	t.Helper()
	if rawHook != nil {
		return rawHook(t, path)
	}
	return fileRaw{t, path}
}

// fileRaw is rawStore on a token file, through bbolt.
type fileRaw struct {
	t    *testing.T
	path string
}

func (r fileRaw) bucket(tx *bolt.Tx, name []byte) *bolt.Bucket {
	b := tx.Bucket(name)
	if b == nil {
		r.t.Fatalf("%s: no bucket %q", r.path, name)
	}
	return b
}

func (r fileRaw) get(bucket, key []byte) []byte {
	var v []byte
	rawView(r.t, r.path, func(tx *bolt.Tx) error { v = bytes.Clone(r.bucket(tx, bucket).Get(key)); return nil })
	return v
}

func (r fileRaw) put(bucket, key, value []byte) {
	// Without fsync: tests edit thousands of times (TestTamperByteByByte).
	db, err := bolt.Open(r.path, 0o600, &bolt.Options{NoSync: true})
	must(r.t, err)
	must(r.t, db.Update(func(tx *bolt.Tx) error { return r.bucket(tx, bucket).Put(key, value) }))
	must(r.t, db.Close())
}

func (r fileRaw) all(bucket []byte) map[string][]byte {
	var m map[string][]byte
	rawView(r.t, r.path, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		if b == nil {
			return nil
		}
		m = map[string][]byte{}
		return b.ForEach(func(k, v []byte) error { m[string(k)] = bytes.Clone(v); return nil })
	})
	return m
}

func (r fileRaw) hasBucket(name []byte) bool {
	var has bool
	rawView(r.t, r.path, func(tx *bolt.Tx) error { has = tx.Bucket(name) != nil; return nil })
	return has
}

func (r fileRaw) createBucket(name []byte) {
	rawUpdate(r.t, r.path, func(tx *bolt.Tx) error { _, err := tx.CreateBucket(name); return err })
}

func (r fileRaw) deleteBucket(name []byte) {
	rawUpdate(r.t, r.path, func(tx *bolt.Tx) error { return tx.DeleteBucket(name) })
}

func (r fileRaw) dump() []byte { return readFile(r.t, r.path) }

func (r fileRaw) remove() {
	if err := os.Remove(r.path); err != nil {
		r.t.Fatal(err)
	}
}

// initStore returns an initialised store with SO and user PINs set, and
// the user's key.
func initStore(t *testing.T, opts Options) (*Store, *Key) {
	t.Helper()
	s := openStore(t, tokenPath(t), opts)
	return s, initWith(t, s)
}

// initWith initialises s (SO and user PINs) and returns the user's key.
func initWith(t testing.TB, s *Store) *Key {
	t.Helper()
	if err := s.InitToken(soPIN, "test token"); err != nil {
		t.Fatalf("InitToken: %v", err)
	}
	so, err := s.Login(SO, soPIN)
	if err != nil {
		t.Fatalf("Login(SO): %v", err)
	}
	defer so.Wipe()
	if err := s.InitUserPIN(so, userPIN); err != nil {
		t.Fatalf("InitUserPIN: %v", err)
	}
	key, err := s.Login(User, userPIN)
	if err != nil {
		t.Fatalf("Login(User): %v", err)
	}
	t.Cleanup(key.Wipe)
	return key
}

func wantErr(t *testing.T, what string, err error, targets ...error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %v", what, targets)
	}
	for _, target := range targets {
		if !errors.Is(err, target) {
			t.Fatalf("%s: error %q is not %q", what, err, target)
		}
	}
}

// sameObject reports whether got is what Put stored for want: same ID,
// attribute values and sealed set (want.Sealed entries that are false or
// name absent attributes are not stored, as documented).
func sameObject(got, want Object) bool {
	if got.ID != want.ID || len(got.Attrs) != len(want.Attrs) {
		return false
	}
	for t, v := range want.Attrs {
		w, ok := got.Attrs[t]
		if !ok || !bytes.Equal(v, w) || got.Sealed[t] != want.Sealed[t] {
			return false
		}
	}
	for t, v := range got.Sealed {
		if _, ok := got.Attrs[t]; !ok || !v {
			return false
		}
	}
	return true
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tID is CKA_ID.
const tID = 0x102

// findByID returns the objects of s whose CKA_ID is value, read with key
// (a sealed CKA_ID is found only with the key), and the generation.
func findByID(s *Store, key *Key, value []byte) ([]Object, uint64, error) {
	objs, gen, err := s.Objects(key)
	if err != nil {
		return nil, 0, err
	}
	var found []Object
	for _, o := range objs {
		if v, ok := o.Attrs[tID]; ok && bytes.Equal(v, value) {
			found = append(found, o)
		}
	}
	return found, gen, nil
}
