package keystore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
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

// fixtureCopy copies testdata/name (a token file of schema version
// schema) to a temporary directory and returns its path and contents.
func fixtureCopy(t *testing.T, name string, schema uint32) (string, []byte) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "token.db")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	if v := schemaOf(t, path); v != schema {
		t.Fatalf("fixture %s: schema %d, want %d", name, v, schema)
	}
	return path, src
}

// tokenPath is a token file in a fresh directory that does not exist yet.
func tokenPath(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "token", "token.db")
}

// openHook, when set (TestOnEtcd), opens the token named path in another
// backend instead of the file.
var openHook func(t *testing.T, path string, opts Options) *Store

func openStore(t *testing.T, path string, opts Options) *Store {
	t.Helper()
	if openHook != nil {
		return openHook(t, path, opts)
	}
	s, err := Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// initStore returns an initialised store with SO and user PINs set, and
// the user's key.
func initStore(t *testing.T, opts Options) (*Store, *Key) {
	t.Helper()
	s := openStore(t, tokenPath(t), opts)
	return s, initWith(t, s)
}

// initWith initialises s (SO and user PINs) and returns the user's key.
func initWith(t *testing.T, s *Store) *Key {
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
