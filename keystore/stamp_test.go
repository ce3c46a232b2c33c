package keystore

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// changesNone fails unless Changes(key, since) answers "nothing changed"
// at since, and reports whether the stamp answered it.
func changesNone(t *testing.T, s *Store, key *Key, since uint64) bool {
	t.Helper()
	before := s.stamps.stampHits()
	changed, deleted, gen, full, err := s.Changes(key, since)
	if err != nil || full || len(changed) != 0 || len(deleted) != 0 || gen != since {
		t.Fatalf("Changes(%d): %d changed, %v deleted, gen %d, full=%v, %v", since, len(changed), deleted, gen, full, err)
	}
	return s.stamps.stampHits() > before
}

// TestChangesStamp: an unchanged file is answered from its stamp; every
// kind of change (a write by another Store on the file, a restore renamed
// over it, a truncation, a removal, another or a wiped key) takes the long
// way and gets its true answer.
func TestChangesStamp(t *testing.T) {
	s, key := initStore(t, testOptions())
	_, err := s.Put(key, labelled("a"))
	must(t, err)
	g := mustGen(t, s)
	changesNone(t, s, key, g) // the long way: nothing remembered yet
	for i := range 3 {
		if !changesNone(t, s, key, g) {
			t.Fatalf("call %d on an unchanged file not answered by the stamp", i)
		}
	}
	// Another key (here none) is not the remembered one.
	if changesNone(t, s, nil, g) {
		t.Fatal("Changes with another key answered by the stamp")
	}
	changesNone(t, s, key, g)

	// Another process's write (another Store on the file).
	other := openStore(t, s.path, testOptions())
	_, err = other.Put(key, labelled("b"))
	must(t, err)
	hits := s.stamps.stampHits()
	changed, _, g2, full, err := s.Changes(key, g)
	if err != nil || full || len(changed) != 1 || g2 <= g || s.stamps.stampHits() != hits {
		t.Fatalf("after another Store's put: %d changed, full=%v, gen %d→%d, %v", len(changed), full, g, g2, err)
	}
	changesNone(t, s, key, g2)
	if !changesNone(t, s, key, g2) {
		t.Fatal("not answered by the stamp after the change was seen")
	}
	// The older generation is not the remembered one.
	changed, _, _, _, err = s.Changes(key, g)
	if err != nil || len(changed) != 1 {
		t.Fatalf("Changes from the older generation: %d changed, %v", len(changed), err)
	}

	// A delete by this Store.
	must(t, other.Delete(changed[0].ID))
	_, deleted, g3, _, err := s.Changes(key, g2)
	if err != nil || len(deleted) != 1 || g3 <= g2 {
		t.Fatalf("after a delete: %v deleted, gen %d→%d, %v", deleted, g2, g3, err)
	}
	changesNone(t, s, key, g3)

	// A restore renamed over the path, of the file as it is now: same
	// content, another file.
	backup := backupBytes(t, s)
	_, err = Restore(s.path, bytes.NewReader(backup), testOptions())
	must(t, err)
	hits = s.stamps.stampHits()
	_, _, g4, full, err := s.Changes(key, g3)
	if err != nil || !full || g4 <= g3 || s.stamps.stampHits() != hits {
		t.Fatalf("after Restore: full=%v, gen %d→%d, %v", full, g3, g4, err)
	}
	changesNone(t, s, key, g4)
	if !changesNone(t, s, key, g4) {
		t.Fatal("not answered by the stamp after the restore was seen")
	}

	// A wiped key gets its error.
	k2, err := s.Login(User, userPIN)
	must(t, err)
	changesNone(t, s, k2, g4)
	changesNone(t, s, k2, g4)
	k2.Wipe()
	_, _, _, _, err = s.Changes(k2, g4)
	wantErr(t, "Changes with a wiped key", err, ErrKeyMismatch)

	// A truncated file is refused, not answered from the stamp.
	changesNone(t, s, key, g4)
	fi, err := os.Stat(s.path)
	must(t, err)
	must(t, os.Truncate(s.path, fi.Size()/2))
	_, _, _, _, err = s.Changes(key, g4)
	wantErr(t, "Changes on a truncated file", err, ErrCorrupt)

	// A removed file is an uninitialised token.
	must(t, os.Remove(s.path))
	_, _, _, _, err = s.Changes(key, g4)
	wantErr(t, "Changes on a removed file", err, ErrNotInitialized)
}

// TestChangesStampConcurrent: a cache kept by Changes while another Store
// writes ends equal to the file (run with -race).
func TestChangesStampConcurrent(t *testing.T) {
	s, key := initStore(t, testOptions())
	other := openStore(t, s.path, testOptions())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 40 {
			id, err := other.Put(key, labelled(string(rune('a'+i%26))))
			if err != nil {
				t.Error(err)
				return
			}
			if i%3 == 0 {
				if err := other.Delete(id); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	cache := map[uint64]Object{}
	var gen uint64
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		gen, _ = applyChanges(t, s, key, cache, gen)
	}
	gen, _ = applyChanges(t, s, key, cache, gen)
	sameCache(t, s, key, cache)
	changesNone(t, s, key, gen)
	if !changesNone(t, s, key, gen) {
		t.Fatal("not answered by the stamp at the end")
	}
}

// BenchmarkChangesUnchanged is the question a cache asks before every
// search, on a file nobody changed.
func BenchmarkChangesUnchanged(b *testing.B) {
	for _, stamp := range []bool{false, true} {
		name := "transaction"
		if stamp {
			name = "stamp"
		}
		b.Run(name, func(b *testing.B) {
			s, err := Open(tokenPath(b), testOptions())
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			key := initWith(b, s)
			if _, err := s.Put(key, labelled("a")); err != nil {
				b.Fatal(err)
			}
			g := mustGen(b, s)
			b.ReportAllocs()
			for b.Loop() {
				if !stamp {
					s.stamps.forget()
				}
				if _, _, _, _, err := s.Changes(key, g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestReadStampPageSizes: the stamp holds both meta pages whatever the
// file's page size (one read for 4 KiB pages, two otherwise), and a file
// that is not bbolt's has none.
func TestReadStampPageSizes(t *testing.T) {
	for _, ps := range []int{4096, 16384} {
		path := filepath.Join(t.TempDir(), "db")
		db, err := bolt.Open(path, 0o600, &bolt.Options{PageSize: ps})
		must(t, err)
		must(t, db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("b")); return err }))
		must(t, db.Close())
		raw, err := os.ReadFile(path)
		must(t, err)
		var st fileStamp
		if !readStamp(append([]byte(path), 0), &st) {
			t.Fatalf("page size %d: no stamp", ps)
		}
		if !bytes.Equal(st.meta0[:], raw[:stampMetaBytes]) || !bytes.Equal(st.meta1[:], raw[ps:ps+stampMetaBytes]) {
			t.Fatalf("page size %d: the stamp's meta pages are not the file's", ps)
		}
	}
	path := filepath.Join(t.TempDir(), "not-bbolt")
	must(t, os.WriteFile(path, bytes.Repeat([]byte{7}, 9000), 0o600))
	var st fileStamp
	if readStamp(append([]byte(path), 0), &st) || readStamp([]byte(path), &st) || readStamp(nil, &st) || readStamp([]byte{0}, &st) {
		t.Fatal("a stamp of a file that is not bbolt's, or of a path without its NUL")
	}
}

// stampHits returns how many Changes calls the stamp answered.
func (c *stampCache) stampHits() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits
}
