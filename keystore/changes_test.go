package keystore

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// labelled is a public object with label (attribute 3) and CKA_ID.
func labelled(label string) Object {
	return Object{Attrs: map[uint64][]byte{3: []byte(label), tID: []byte("id " + label)}}
}

func changedIDs(objs []Object) []uint64 {
	var ids []uint64
	for _, o := range objs {
		ids = append(ids, o.ID)
	}
	slices.Sort(ids)
	return ids
}

func mustGen(t testing.TB, s *Store) uint64 {
	t.Helper()
	g, err := s.Generation()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// applyChanges brings cache (by ID) from since to what Changes reports and
// returns the new generation.
func applyChanges(t *testing.T, s *Store, key *Key, cache map[uint64]Object, since uint64) (uint64, bool) {
	t.Helper()
	changed, deleted, gen, full, err := s.Changes(key, since)
	if err != nil {
		t.Fatalf("Changes(%d): %v", since, err)
	}
	if full {
		clear(cache)
		if deleted != nil {
			t.Fatalf("full answer with deletions %v", deleted)
		}
	}
	for _, o := range changed {
		cache[o.ID] = o
	}
	for _, id := range deleted {
		delete(cache, id)
	}
	return gen, full
}

// sameCache fails unless cache holds exactly what Objects returns.
func sameCache(t *testing.T, s *Store, key *Key, cache map[uint64]Object) {
	t.Helper()
	objs, _, err := s.Objects(key)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != len(cache) {
		t.Fatalf("cache has %d objects, store %d", len(cache), len(objs))
	}
	for _, o := range objs {
		if c, ok := cache[o.ID]; !ok || !sameObject(c, o) {
			t.Fatalf("object %d: cache %+v, store %+v", o.ID, c, o)
		}
	}
}

func TestChanges(t *testing.T) {
	s, key := initStore(t, testOptions())
	cache := map[uint64]Object{}
	gen, _ := applyChanges(t, s, key, cache, 0)
	sameCache(t, s, key, cache)

	a, err := s.Put(nil, labelled("a"))
	must(t, err)
	b, err := s.Put(nil, labelled("b"))
	must(t, err)
	sec := Object{Attrs: map[uint64][]byte{3: []byte("s"), 0x11: []byte("secret")}, Sealed: map[uint64]bool{0x11: true}}
	c, err := s.Put(key, sec)
	must(t, err)
	g1 := mustGen(t, s)

	steps := []struct {
		name        string
		do          func()
		wantChanged []uint64
		wantDeleted []uint64
	}{
		{"nothing", func() {}, nil, nil},
		{"update a", func() {
			o := labelled("a2")
			o.ID = a
			_, err := s.Put(nil, o)
			must(t, err)
		}, []uint64{a}, nil},
		{"delete b", func() { must(t, s.Delete(b)) }, nil, []uint64{b}},
		{"update a twice, sealed c once", func() {
			for _, l := range []string{"a3", "a4"} {
				o := labelled(l)
				o.ID = a
				_, err := s.Put(nil, o)
				must(t, err)
			}
			sec.ID = c
			sec.Attrs[0x11] = []byte("secret 2")
			_, err := s.Put(key, sec)
			must(t, err)
		}, []uint64{a, c}, nil},
		{"PIN change only", func() { must(t, s.SetPIN(User, userPIN, userPIN)) }, nil, nil},
	}
	since, _ := applyChanges(t, s, key, cache, gen)
	if since != g1 {
		t.Fatalf("generation %d, want %d", since, g1)
	}
	for _, st := range steps {
		st.do()
		changed, deleted, g, full, err := s.Changes(key, since)
		if err != nil || full {
			t.Fatalf("%s: full=%v err=%v", st.name, full, err)
		}
		if got := changedIDs(changed); !slices.Equal(got, st.wantChanged) {
			t.Fatalf("%s: changed %v, want %v", st.name, got, st.wantChanged)
		}
		if !slices.Equal(deleted, st.wantDeleted) {
			t.Fatalf("%s: deleted %v, want %v", st.name, deleted, st.wantDeleted)
		}
		if g != mustGen(t, s) {
			t.Fatalf("%s: generation %d, store at %d", st.name, g, mustGen(t, s))
		}
		for _, o := range changed {
			if o.ID == c && string(o.Attrs[0x11]) != "secret 2" {
				t.Fatalf("%s: sealed value %q", st.name, o.Attrs[0x11])
			}
		}
		applyChanges(t, s, key, cache, since)
		sameCache(t, s, key, cache)
		since = g
	}

	// Without a key, sealed values are absent but listed.
	changed, _, _, _, err := s.Changes(nil, g1)
	must(t, err)
	for _, o := range changed {
		if o.ID == c {
			if _, ok := o.Attrs[0x11]; ok || !o.Sealed[0x11] {
				t.Fatalf("keyless Changes: %+v", o)
			}
		}
	}
	// Changes since "now": empty.
	changed, deleted, g, full, err := s.Changes(key, since)
	if err != nil || full || changed != nil || deleted != nil || g != since {
		t.Fatalf("Changes(now): %v %v %d %v %v", changed, deleted, g, full, err)
	}
	// Since a generation ahead of the file (a file re-created): full.
	changed, _, _, full, err = s.Changes(key, since+100)
	if err != nil || !full || len(changed) != 2 {
		t.Fatalf("Changes(ahead): %d objects, full=%v, %v", len(changed), full, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestChangesCostIsTheChange checks, by counting, that an answer holds only
// the objects changed: a token of many objects, one changed.
func TestChangesCostIsTheChange(t *testing.T) {
	s, _ := initStore(t, testOptions())
	var objs []Object
	for i := range 3000 {
		objs = append(objs, labelled(string(binary.BigEndian.AppendUint32(nil, uint32(i)))))
	}
	var ids []uint64
	for batch := range slices.Chunk(objs, bulkBatch) {
		got, err := s.PutObjects(nil, batch)
		must(t, err)
		ids = append(ids, got...)
	}
	g := mustGen(t, s)
	o := labelled("changed")
	o.ID = ids[1234]
	_, err := s.Put(nil, o)
	must(t, err)
	must(t, s.Delete(ids[42]))
	changed, deleted, _, full, err := s.Changes(nil, g)
	if err != nil || full || len(changed) != 1 || changed[0].ID != ids[1234] || !slices.Equal(deleted, []uint64{ids[42]}) {
		t.Fatalf("Changes: %d changed, deleted %v, full=%v, %v", len(changed), deleted, full, err)
	}
}

func TestChangesAfterInitToken(t *testing.T) {
	s, key := initStore(t, testOptions())
	_, err := s.Put(nil, labelled("a"))
	must(t, err)
	g := mustGen(t, s)
	must(t, s.InitToken(soPIN, "again"))
	changed, deleted, g2, full, err := s.Changes(nil, g)
	if err != nil || !full || len(changed) != 0 || deleted != nil || g2 <= g {
		t.Fatalf("after InitToken: %d changed, %v deleted, full=%v, gen %d→%d, %v", len(changed), deleted, full, g, g2, err)
	}
	// The old key belongs to the previous initialisation.
	_, _, _, _, err = s.Changes(key, g)
	wantErr(t, "Changes with the old key", err, ErrKeyMismatch)
	// From the re-initialised state on, deltas again.
	_, err = s.Put(nil, labelled("b"))
	must(t, err)
	changed, _, _, full, err = s.Changes(nil, g2)
	if err != nil || full || len(changed) != 1 {
		t.Fatalf("after InitToken and a put: %d changed, full=%v, %v", len(changed), full, err)
	}
}

func TestTombstonesPruned(t *testing.T) {
	defer func(old uint64) { maxLogAge = old }(maxLogAge)
	maxLogAge = 6
	s, _ := initStore(t, testOptions())
	var ids []uint64
	for i := range 10 {
		id, err := s.Put(nil, labelled(string(rune('a'+i))))
		must(t, err)
		ids = append(ids, id)
	}
	old := mustGen(t, s)
	for _, id := range ids[:8] {
		must(t, s.Delete(id))
	}
	recent := mustGen(t, s) - 3
	changed, deleted, _, full, err := s.Changes(nil, old)
	if err != nil || !full || len(changed) != 2 || deleted != nil {
		t.Fatalf("Changes(old): %d changed, %v, full=%v, %v", len(changed), deleted, full, err)
	}
	changed, deleted, _, full, err = s.Changes(nil, recent)
	if err != nil || full || len(changed) != 0 || !slices.Equal(deleted, ids[5:8]) {
		t.Fatalf("Changes(recent): %d changed, %v, full=%v, %v", len(changed), deleted, full, err)
	}
	if n := len(rawOf(t, s.path).all(bucketDeleted)); n > int(maxLogAge) {
		t.Fatalf("%d tombstones kept, bound %d", n, maxLogAge)
	}
}

func rawView(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	must(t, err)
	defer db.Close()
	must(t, db.View(fn))
}

// hasIndex reports whether the token at path has either bucket of the
// CKA_ID index of schema versions 1–3.
func hasIndex(t *testing.T, path string) bool {
	t.Helper()
	raw := rawOf(t, path)
	return raw.hasBucket(bucketIndex) || raw.hasBucket(bucketIndexRev)
}

// schemaOf reads the schema version of the token at path as stored.
func schemaOf(t *testing.T, path string) uint32 {
	t.Helper()
	return binary.BigEndian.Uint32(rawOf(t, path).get(bucketMeta, keySchema))
}

// loginUpgrades logs the user in on s with pin, checks that the login
// upgraded the token at path to SchemaVersion without the persisted CKA_ID
// index, and returns the key (wiped when the test ends) and the objects it
// reads, n of them.
func loginUpgrades(t *testing.T, s *Store, path string, pin []byte, n int) (*Key, []Object) {
	t.Helper()
	key, err := s.Login(User, pin)
	must(t, err)
	t.Cleanup(key.Wipe)
	if v := schemaOf(t, path); v != SchemaVersion {
		t.Fatalf("schema after the login: %d", v)
	}
	if hasIndex(t, path) {
		t.Fatal("CKA_ID index kept by the upgrade")
	}
	after, _, err := s.Objects(key)
	must(t, err)
	if len(after) != n {
		t.Fatalf("%d objects after the upgrade, want %d", len(after), n)
	}
	return key, after
}

// TestMigrateV1 opens testdata/v1-token.db, written by the schema-version-1
// keystore (commit f0f30b3; file-only: backendTests): readable as is without a key (Changes answers
// full), upgraded in place by the first write (to version 2) and the first
// login (to version 3, auth.go, and on to version 4: the CKA_ID index
// dropped) with every object and sealed value kept, and deltas from the
// generation of the upgrade on.
func TestMigrateV1(t *testing.T) {
	path := fixtureCopy(t, "v1-token.db", 1)
	src := rawOf(t, path).dump()
	s := openStore(t, path, testOptions())
	before, g1, err := s.Objects(nil)
	must(t, err)
	if len(before) != 3 {
		t.Fatalf("fixture holds %d objects, want 3", len(before))
	}
	changed, _, g, full, err := s.Changes(nil, g1-1)
	if err != nil || !full || len(changed) != 3 || g != g1 {
		t.Fatalf("v1 Changes: %d, full=%v, %v", len(changed), full, err)
	}
	if !bytes.Equal(rawOf(t, path).dump(), src) {
		t.Fatal("reading a version-1 file changed it")
	}

	// The first write upgrades to version 2 (no key: no MACs yet).
	id, err := s.Put(nil, labelled("new"))
	must(t, err)
	if v := schemaOf(t, path); v != keylessVersion {
		t.Fatalf("schema after a write: %d", v)
	}
	g2 := mustGen(t, s)
	// The first login upgrades to version 3.
	key, after := loginUpgrades(t, s, path, []byte("user-pin-5678"), 4)
	for i, o := range before {
		if !after[i].Verified {
			t.Fatalf("object %d not MAC'd by the upgrade", o.ID)
		}
	}
	unkeyed, _, err := s.Objects(nil)
	must(t, err)
	for i, o := range before {
		if !reflect.DeepEqual(unkeyed[i], o) {
			t.Fatalf("object %d changed by the upgrade: %+v → %+v", o.ID, o, unkeyed[i])
		}
	}
	if string(after[1].Attrs[0x11]) != "secret value" {
		t.Fatalf("sealed value after the upgrade: %q", after[1].Attrs[0x11])
	}
	for _, tc := range []struct {
		key *Key
		id  string
		n   int
	}{{nil, "id-public", 1}, {key, "id-private", 1}, {nil, "id-private", 0}, {nil, "id new", 1}} {
		found, _, err := findByID(s, tc.key, []byte(tc.id))
		if err != nil || len(found) != tc.n {
			t.Fatalf("findByID(%q): %d, %v", tc.id, len(found), err)
		}
	}
	// A cache at the generation before the first upgrade gets a delta:
	// only the object of the upgrading write (the login's upgrade rewrites
	// records without changing them: no log entries).
	changed, deleted, _, full, err := s.Changes(key, g1)
	if err != nil || full || len(changed) != 1 || changed[0].ID != id || deleted != nil {
		t.Fatalf("Changes after the upgrade: %d, %v, full=%v, %v", len(changed), deleted, full, err)
	}
	if changed, _, _, full, err := s.Changes(key, g2); err != nil || full || len(changed) != 0 {
		t.Fatalf("Changes across the login's upgrade: %d, full=%v, %v", len(changed), full, err)
	}
	// Older: the log does not reach back.
	if _, _, _, full, _ := s.Changes(key, g1-1); !full {
		t.Fatal("Changes from before the upgrade is not full")
	}
	// Deletions of objects written before the upgrade are logged too.
	must(t, s.Delete(before[0].ID))
	g3 := mustGen(t, s)
	changed, deleted, _, full, err = s.Changes(key, g3-1)
	if err != nil || full || len(changed) != 0 || !slices.Equal(deleted, []uint64{before[0].ID}) {
		t.Fatalf("Changes after deleting an old object: %d, %v, full=%v, %v", len(changed), deleted, full, err)
	}
}

func TestChangesAfterRestore(t *testing.T) {
	s, key := initStore(t, testOptions())
	_, err := s.Put(nil, labelled("a"))
	must(t, err)
	backup := backupBytes(t, s)
	_, err = s.Put(nil, labelled("b"))
	must(t, err)
	g := mustGen(t, s)
	_, err = RestoreTo(s, bytes.NewReader(backup), true)
	must(t, err)
	changed, _, g2, full, err := s.Changes(key, g)
	if err != nil || !full || len(changed) != 1 || g2 <= g {
		t.Fatalf("after Restore: %d changed, full=%v, gen %d→%d, %v", len(changed), full, g, g2, err)
	}
}
