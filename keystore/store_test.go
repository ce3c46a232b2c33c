package keystore

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestOpenMissingFile(t *testing.T) {
	path := tokenPath(t)
	s := openStore(t, path, testOptions())
	calls := []struct {
		name string
		call func() error
	}{
		{"Token", func() error { _, err := s.Token(); return err }},
		{"Generation", func() error { _, err := s.Generation(); return err }},
		{"Objects", func() error { _, _, err := s.Objects(nil); return err }},
		{"Login", func() error { _, err := s.Login(SO, soPIN); return err }},
		{"Put", func() error { _, err := s.Put(nil, Object{}); return err }},
		{"Delete", func() error { return s.Delete(1) }},
		{"SetPIN", func() error { return s.SetPIN(SO, soPIN, userPIN) }},
	}
	for _, c := range calls {
		wantErr(t, c.name, c.call(), ErrNotInitialized)
	}
	if !onFile() {
		if dump := rawOf(t, path).dump(); len(dump) != 0 {
			t.Fatalf("the store wrote under the prefix: %q", dump)
		}
		return
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the store created %s (stat: %v)", filepath.Dir(path), err)
	}
}

func TestInitTokenCreatesFile(t *testing.T) {
	path := tokenPath(t)
	s := openStore(t, path, testOptions())
	if err := s.InitToken(soPIN, "my token"); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{filepath.Dir(path): 0o700, path: 0o600} {
		if !onFile() {
			break
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", p, got, want)
		}
	}
	tr, err := s.Token()
	if err != nil {
		t.Fatal(err)
	}
	if tr.Label != "my token" || !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(tr.Serial) ||
		tr.UserPINSet || tr.SOTriesLeft != DefaultMaxPINTries || tr.MaxPINTries != DefaultMaxPINTries || tr.Generation == 0 {
		t.Fatalf("token record %+v", tr)
	}
	// A second store on the same file (another process's view) agrees.
	tr2, err := openStore(t, path, testOptions()).Token()
	if err != nil || tr2 != tr {
		t.Fatalf("second store: %+v, %v; want %+v", tr2, err, tr)
	}
}

// highWater is the size the bbolt file's meta page claims.
func highWater(t *testing.T, path string) int64 {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	_ = db.View(func(tx *bolt.Tx) error { n = tx.Size(); return nil })
	return n
}

// rawUpdate edits a token file directly through bbolt.
func rawUpdate(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCorruptFiles: a token whose store holds something that is not a
// sound token is refused whole (ErrCorrupt) by every call, and left as it
// is. The cases marked file damage the bbolt file itself (its bytes, its
// length, its meta pages): there is no such thing in etcd, and they run on
// the file only; the others edit what is stored (as someone who can
// write the file or the etcd prefix) and run on both backends.
func TestCorruptFiles(t *testing.T) {
	garbage := func(n int) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			b := make([]byte, n)
			_, _ = rand.Read(b)
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name    string
		file    bool // damages the bbolt file's format: file only
		corrupt func(t *testing.T, path string)
		also    error
		objects int
	}{
		{"garbage 100 bytes", true, garbage(100), nil, 0},
		{"garbage 64 KiB", true, garbage(64 << 10), nil, 0},
		{"text file", true, func(t *testing.T, path string) {
			_ = os.WriteFile(path, bytes.Repeat([]byte("not a token\n"), 2000), 0o600)
		}, nil, 0},
		{"truncated to half", true, func(t *testing.T, path string) {
			// Half of what the meta page says the database uses (the file
			// itself may be larger: bbolt grows it ahead).
			hw := highWater(t, path)
			if size := int64(len(readFile(t, path))); hw > size || hw < 4*4096 {
				t.Fatalf("unexpected high water %d, size %d", hw, size)
			}
			if err := os.Truncate(path, hw/2); err != nil {
				t.Fatal(err)
			}
		}, nil, 100},
		{"meta pages zeroed", true, func(t *testing.T, path string) {
			b := readFile(t, path)
			clear(b[:8192])
			_ = os.WriteFile(path, b, 0o600)
		}, nil, 0},
		{"other data", false, func(t *testing.T, path string) {
			// Another bbolt file; in etcd, other keys under the prefix.
			raw := rawOf(t, path)
			raw.remove()
			raw.createBucket([]byte("other"))
			raw.put([]byte("other"), []byte("k"), []byte("v"))
		}, nil, 0},
		{"newer schema", false, func(t *testing.T, path string) {
			rawOf(t, path).put(bucketMeta, keySchema, binary.BigEndian.AppendUint32(nil, SchemaVersion+1))
		}, ErrSchemaVersion, 0},
		{"token record garbage", false, func(t *testing.T, path string) {
			rawOf(t, path).put(bucketToken, keyRecord, []byte{1, 2, 3})
		}, nil, 0},
		{"token bucket missing", false, func(t *testing.T, path string) {
			rawOf(t, path).deleteBucket(bucketToken)
		}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.file && !onFile() {
				t.Skip("damages the bbolt file format: file only")
			}
			s, key := initStore(t, testOptions())
			for i := range max(tt.objects, 3) {
				if _, err := s.Put(key, Object{Attrs: map[uint64][]byte{1: bytes.Repeat([]byte{byte(i)}, 300), 2: {3}}, Sealed: map[uint64]bool{2: true}}); err != nil {
					t.Fatal(err)
				}
			}
			tt.corrupt(t, s.path)
			before := rawOf(t, s.path).dump()
			targets := []error{ErrCorrupt}
			if tt.also != nil {
				targets = append(targets, tt.also)
			}

			_, err := openStoreErr(t, s.path, testOptions())
			wantErr(t, "Open", err, targets...)
			_, err = s.Token()
			wantErr(t, "Token", err, targets...)
			_, err = s.Generation()
			wantErr(t, "Generation", err, targets...)
			_, _, err = s.Objects(key)
			wantErr(t, "Objects", err, targets...)
			_, err = s.Put(nil, Object{Attrs: map[uint64][]byte{1: {1}}})
			wantErr(t, "Put", err, targets...)
			_, err = s.Login(SO, soPIN)
			wantErr(t, "Login", err, targets...)
			err = s.InitToken(soPIN, "again")
			wantErr(t, "InitToken", err, targets...)
			if after := rawOf(t, s.path).dump(); !bytes.Equal(before, after) {
				t.Fatalf("the corrupt token was modified")
			}
		})
	}
}

func TestEmptyFileIsUninitialized(t *testing.T) {
	path := tokenPath(t)
	_ = os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, path, testOptions())
	_, err := s.Token()
	wantErr(t, "Token", err, ErrNotInitialized)
	if err := s.InitToken(soPIN, "x"); err != nil {
		t.Fatalf("InitToken on an empty file: %v", err)
	}
	if _, err := s.Login(SO, soPIN); err != nil {
		t.Fatal(err)
	}
}

func TestLockTimeout(t *testing.T) {
	s, key := initStore(t, testOptions())
	opts := testOptions()
	opts.LockTimeout = 150 * time.Millisecond
	busy := openStore(t, s.path, opts)

	// Another holder of the write lock (as another process would be).
	db, err := bolt.Open(s.path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = busy.Token()
	wantErr(t, "Token while locked", err, ErrLocked)
	if d := time.Since(start); d < opts.LockTimeout/2 {
		t.Fatalf("gave up after %v, before the %v timeout", d, opts.LockTimeout)
	}
	_, err = busy.Put(key, Object{Attrs: map[uint64][]byte{1: {1}}})
	wantErr(t, "Put while locked", err, ErrLocked)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := busy.Put(key, Object{Attrs: map[uint64][]byte{1: {1}}}); err != nil {
		t.Fatalf("Put after release: %v", err)
	}
}

func TestClosedStore(t *testing.T) {
	s, _ := initStore(t, testOptions())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := s.Token()
	wantErr(t, "Token after Close", err, ErrClosed)
}

func TestGenerationCountsChanges(t *testing.T) {
	s, key := initStore(t, testOptions())
	so, err := s.Login(SO, soPIN)
	if err != nil {
		t.Fatal(err)
	}
	defer so.Wipe()
	var id uint64
	steps := []struct {
		name    string
		change  bool
		do      func() error
		wantErr error
	}{
		{"Put new", true, func() (err error) { id, err = s.Put(nil, Object{Attrs: map[uint64][]byte{1: {1}}}); return err }, nil},
		{"Put update", true, func() error { _, err := s.Put(nil, Object{ID: id, Attrs: map[uint64][]byte{1: {2}}}); return err }, nil},
		{"Objects", false, func() error { _, _, err := s.Objects(key); return err }, nil},
		{"right login", false, func() error { k, err := s.Login(User, userPIN); k.Wipe(); return err }, nil},
		{"wrong login", true, func() error { _, err := s.Login(User, soPIN); return err }, ErrPINIncorrect},
		{"right login resets", true, func() error { k, err := s.Login(User, userPIN); k.Wipe(); return err }, nil},
		{"SetPIN", true, func() error { return s.SetPIN(User, userPIN, userPIN) }, nil},
		{"InitUserPIN", true, func() error { return s.InitUserPIN(so, userPIN) }, nil},
		{"Delete", true, func() error { return s.Delete(id) }, nil},
		{"Delete missing", false, func() error { return s.Delete(id) }, ErrNotFound},
		{"InitToken", true, func() error { return s.InitToken(soPIN, "new") }, nil},
	}
	prev, err := s.Generation()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		err := st.do()
		if st.wantErr == nil && err != nil || st.wantErr != nil && !errors.Is(err, st.wantErr) {
			t.Fatalf("%s: %v, want %v", st.name, err, st.wantErr)
		}
		g, err := s.Generation()
		if err != nil {
			t.Fatal(err)
		}
		if st.change && g != prev+1 || !st.change && g != prev {
			t.Fatalf("%s: generation %d → %d (change %v)", st.name, prev, g, st.change)
		}
		prev = g
	}
}

func TestBackup(t *testing.T) {
	s, key := initStore(t, testOptions())
	id, err := s.Put(key, Object{Attrs: map[uint64][]byte{1: []byte("pub"), 2: []byte("secret")}, Sealed: map[uint64]bool{2: true}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := s.Backup(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("Backup: %d, %v (buffer %d)", n, err, buf.Len())
	}
	// A backup is a token file, of a token in a file or in etcd.
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(copyPath, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Open(copyPath, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// And it restores into a fresh token of the backend.
	r := openStore(t, tokenPath(t), testOptions())
	if n, err := RestoreTo(r, bytes.NewReader(buf.Bytes()), false); err != nil || n != int64(buf.Len()) {
		t.Fatalf("RestoreTo: %d, %v", n, err)
	}
	for _, c := range []*Store{c, r} {
		k, err := c.Login(User, userPIN)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := c.Get(k, id)
		k.Wipe()
		if err != nil || string(obj.Attrs[2]) != "secret" {
			t.Fatalf("%s: restored object %+v, %v", c.Path(), obj, err)
		}
	}
}

// A read-write open of a truncated file makes bbolt panic (or fault) while
// loading the freelist; the store must report ErrCorrupt and release the
// file lock. Put avoids that path with a read-only check first, so call
// the inner open directly.
func TestBboltPanicReleasesLock(t *testing.T) {
	s, key := initStore(t, testOptions())
	for i := range 200 {
		if _, err := s.Put(key, Object{Attrs: map[uint64][]byte{1: bytes.Repeat([]byte{byte(i)}, 300), 2: {3}}, Sealed: map[uint64]bool{2: true}}); err != nil {
			t.Fatal(err)
		}
	}
	size := int64(len(readFile(t, s.path)))
	if err := os.Truncate(s.path, size/2); err != nil {
		t.Fatal(err)
	}
	err := s.runOnce(modeWrite, func(*bolt.Tx) error { return nil })
	wantErr(t, "read-write open of a truncated file", err, ErrCorrupt)
	if !strings.Contains(err.Error(), "bbolt failed") {
		t.Fatalf("did not exercise the recovered-panic path: %v", err)
	}
	opts := testOptions()
	opts.LockTimeout = 200 * time.Millisecond
	_, err = openStore(t, tokenPath(t), opts).Token() // unrelated file: sanity
	wantErr(t, "Token of a missing file", err, ErrNotInitialized)
	s.opts.LockTimeout = 200 * time.Millisecond
	_, err = s.Token()
	if errors.Is(err, ErrLocked) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("after the recovered panic: %v, want ErrCorrupt (lock released)", err)
	}
}

// Goroutines of one process share a Store (and a second Store on the same
// file, as another component of the process might): no call fails.
func TestConcurrentGoroutines(t *testing.T) {
	s, key := initStore(t, testOptions())
	other := openStore(t, s.path, testOptions())
	const workers, rounds = 4, 10
	errs := make(chan error, workers)
	for w := range workers {
		st := s
		if w%2 == 1 {
			st = other
		}
		go func() {
			for i := range rounds {
				id, err := st.Put(key, Object{Attrs: map[uint64][]byte{3: {byte(w), byte(i)}, 0x11: {1}}, Sealed: map[uint64]bool{0x11: true}})
				if err == nil {
					_, _, err = st.Objects(key)
				}
				if err == nil && i%2 == 0 {
					err = st.Delete(id)
				}
				if err == nil {
					var k *Key
					k, err = st.Login(User, userPIN)
					k.Wipe()
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	objs, _, err := s.Objects(key)
	if err != nil || len(objs) != workers*rounds/2 {
		t.Fatalf("%d objects, %v; want %d", len(objs), err, workers*rounds/2)
	}
}
