package keystore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// backupBytes is a backup of s.
func backupBytes(t *testing.T, s *Store) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := s.Backup(&buf); err != nil {
		t.Fatalf("Backup: %v", err)
	}
	return buf.Bytes()
}

func TestRestoreRoundTrip(t *testing.T) {
	s, key := initStore(t, testOptions())
	keep, err := s.Put(key, Object{Attrs: map[uint64][]byte{1: []byte("kept"), 2: []byte("sealed value")}, Sealed: map[uint64]bool{2: true}})
	if err != nil {
		t.Fatal(err)
	}
	backup := backupBytes(t, s)
	// Changes after the backup: one more object, the kept one deleted.
	later, err := s.Put(key, Object{Attrs: map[uint64][]byte{1: []byte("later")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(keep); err != nil {
		t.Fatal(err)
	}
	genBefore, err := s.Generation()
	if err != nil {
		t.Fatal(err)
	}
	// Not over a token unless told to.
	before := rawOf(t, s.Path()).dump()
	_, err = RestoreTo(s, bytes.NewReader(backup), false)
	wantErr(t, "RestoreTo over a token", err, ErrTokenExists)
	if !bytes.Equal(rawOf(t, s.Path()).dump(), before) {
		t.Fatal("a refused restore changed the token")
	}
	n, err := RestoreTo(s, bytes.NewReader(backup), true)
	if err != nil || n != int64(len(backup)) {
		t.Fatalf("Restore: %d, %v (backup %d bytes)", n, err, len(backup))
	}
	genAfter, err := s.Generation()
	if err != nil {
		t.Fatal(err)
	}
	if genAfter <= genBefore {
		t.Fatalf("generation %d after restore, was %d: caches of other processes would not reload", genAfter, genBefore)
	}
	// The key unlocked before the restore still opens sealed values: same
	// initialisation.
	obj, err := s.Get(key, keep)
	if err != nil || string(obj.Attrs[2]) != "sealed value" {
		t.Fatalf("restored object: %+v, %v", obj, err)
	}
	if _, err := s.Get(key, later); !errors.Is(err, ErrNotFound) {
		t.Fatalf("object made after the backup: %v, want ErrNotFound", err)
	}
	k, err := s.Login(User, userPIN)
	if err != nil {
		t.Fatalf("login after restore: %v", err)
	}
	k.Wipe()
	if !onFile() {
		return
	}
	if fi, err := os.Stat(s.Path()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("restored file mode: %v, %v", fi, err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(s.Path()), ".*"))
	if len(leftovers) != 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
}

func TestRestoreRejectsBadBackups(t *testing.T) {
	s, key := initStore(t, testOptions())
	if _, err := s.Put(key, Object{Attrs: map[uint64][]byte{1: bytes.Repeat([]byte("x"), 5000)}}); err != nil {
		t.Fatal(err)
	}
	good := backupBytes(t, s)
	scribbled := bytes.Clone(good)
	for i := 4096 * 2; i < len(scribbled); i += 7 {
		scribbled[i] ^= 0x5a
	}
	// A bbolt file that is not a token file.
	otherPath := filepath.Join(t.TempDir(), "other.db")
	rawUpdate(t, otherPath, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("something"))
		if err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("v"))
	})
	// An empty bbolt file (no token yet).
	emptyPath := filepath.Join(t.TempDir(), "empty.db")
	rawUpdate(t, emptyPath, func(tx *bolt.Tx) error { return nil })
	// A token file whose only object record does not decode.
	badRecPath := filepath.Join(t.TempDir(), "badrec.db")
	if err := os.WriteFile(badRecPath, good, 0o600); err != nil {
		t.Fatal(err)
	}
	rawUpdate(t, badRecPath, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketObjects).Put(idKey(1), []byte{9, 9, 9})
	})
	tests := []struct {
		name   string
		backup []byte
	}{
		{"empty", nil},
		{"truncated", good[:len(good)/2]},
		{"garbage", bytes.Repeat([]byte("garbage!"), 4096)},
		{"scribbled pages", scribbled},
		{"not a token file", readFile(t, otherPath)},
		{"bbolt file without token", readFile(t, emptyPath)},
		{"undecodable object", readFile(t, badRecPath)},
	}
	before := rawOf(t, s.Path()).dump()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RestoreTo(s, bytes.NewReader(tc.backup), true)
			wantErr(t, "Restore", err, ErrCorrupt)
			if !bytes.Equal(rawOf(t, s.Path()).dump(), before) {
				t.Fatal("a rejected backup changed the token")
			}
		})
	}
	if !onFile() {
		return
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(s.Path()), ".*"))
	if len(leftovers) != 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
}

// The recovery path: the token file (or the etcd prefix) is damaged or
// gone, the backup replaces it.
func TestRestoreOverDamagedAndMissingFile(t *testing.T) {
	s, key := initStore(t, testOptions())
	id, err := s.Put(key, Object{Attrs: map[uint64][]byte{1: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	backup := backupBytes(t, s)
	for _, damage := range []string{"scribble", "missing"} {
		t.Run(damage, func(t *testing.T) {
			switch {
			case damage == "missing":
				rawOf(t, s.Path()).remove()
			case onFile():
				if err := os.WriteFile(s.Path(), bytes.Repeat([]byte{0xff}, len(backup)), 0o600); err != nil {
					t.Fatal(err)
				}
			default:
				rawOf(t, s.Path()).put(bucketToken, keyRecord, bytes.Repeat([]byte{0xff}, 100))
			}
			if _, err := s.Token(); damage != "missing" && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("damaged token: %v, want ErrCorrupt", err)
			}
			if damage != "missing" {
				_, err := RestoreTo(s, bytes.NewReader(backup), false)
				wantErr(t, "RestoreTo over a damaged token", err, ErrTokenExists)
			}
			if _, err := RestoreTo(s, bytes.NewReader(backup), damage != "missing"); err != nil {
				t.Fatalf("Restore: %v", err)
			}
			if obj, err := s.Get(key, id); err != nil || string(obj.Attrs[1]) != "v" {
				t.Fatalf("after restore: %+v, %v", obj, err)
			}
		})
	}
}

// A writer that opened the old file and was waiting for its lock when the
// file was replaced must write to the new file, not to the unlinked one.
// The file is replaced once the writer holds it open (seen in
// /proc/self/fd), not after a sleep; its lock timeout is a hang guard.
func TestWriteDuringRestoreLandsInNewFile(t *testing.T) {
	opts := testOptions()
	opts.LockTimeout = 2 * time.Minute
	s, key := initStore(t, opts)
	backup := backupBytes(t, s)
	f, err := os.OpenFile(s.Path(), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	type result struct {
		id  uint64
		err error
	}
	done := make(chan result, 1)
	held := openCount(t, s.Path())
	go func() {
		// The write transaction itself (Put's read-only check first would
		// hide the window): what Put runs after that check.
		var id uint64
		err := s.runReplaced(modeWrite, func(btx *bolt.Tx) error {
			tx := boltTx{btx}
			sl, err := s.openSealer(tx, key)
			if err != nil {
				return err
			}
			defer sl.wipe()
			id, err = putTx(tx, sl, Object{Attrs: map[uint64][]byte{1: []byte("during restore")}}, schemaVersion(tx))
			return err
		})
		done <- result{id, err}
	}()
	for deadline := time.Now().Add(2 * time.Minute); openCount(t, s.Path()) == held; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the writer never opened the token file")
		}
	}
	// The writer has opened the old file: it waits for the lock held here.
	// Replace the file as Restore does, while holding the old file's lock.
	newPath := s.Path() + ".new"
	if err := os.WriteFile(newPath, backup, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(newPath, s.Path()); err != nil {
		t.Fatal(err)
	}
	_ = f.Close() // releases the old file's lock
	r := <-done
	if r.err != nil {
		t.Fatalf("Put during restore: %v", r.err)
	}
	if obj, err := s.Get(key, r.id); err != nil || string(obj.Attrs[1]) != "during restore" {
		t.Fatalf("the write went to the replaced file: %+v, %v", obj, err)
	}
}

func TestPutObjectsAllOrNothing(t *testing.T) {
	s, key := initStore(t, testOptions())
	ids, err := s.PutObjects(key, []Object{
		{Attrs: map[uint64][]byte{tID: []byte("pair"), 1: []byte("pub")}},
		{Attrs: map[uint64][]byte{tID: []byte("pair"), 2: []byte("priv")}, Sealed: map[uint64]bool{2: true}},
	})
	if err != nil || len(ids) != 2 || ids[0] == ids[1] {
		t.Fatalf("PutObjects: %v, %v", ids, err)
	}
	found, _, err := findByID(s, key, []byte("pair"))
	if err != nil || len(found) != 2 {
		t.Fatalf("findByID: %d objects, %v", len(found), err)
	}
	gen, _ := s.Generation()
	// The second object names an ID that does not exist: nothing is stored.
	_, err = s.PutObjects(key, []Object{
		{Attrs: map[uint64][]byte{tID: []byte("half"), 1: []byte("pub")}},
		{ID: 999, Attrs: map[uint64][]byte{2: []byte("x")}},
	})
	wantErr(t, "PutObjects with a missing ID", err, ErrNotFound)
	if found, _, _ := findByID(s, key, []byte("half")); len(found) != 0 {
		t.Fatalf("half of a failed PutObjects was stored: %+v", found)
	}
	if g, _ := s.Generation(); g != gen {
		t.Fatalf("generation moved from %d to %d on a failed PutObjects", gen, g)
	}
	_, err = s.PutObjects(nil, []Object{{Attrs: map[uint64][]byte{2: []byte("x")}, Sealed: map[uint64]bool{2: true}}})
	wantErr(t, "PutObjects sealed without key", err, ErrKeyMismatch)
}

// openCount is how many of this process's file descriptors are open on
// path (by /proc/self/fd).
func openCount(t *testing.T, path string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == path {
			n++
		}
	}
	return n
}
