package keystore

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"testing"
)

func TestObjectsRoundTrip(t *testing.T) {
	s, key := initStore(t, testOptions())
	big := make([]byte, 100<<10)
	_, _ = rand.Read(big)
	objs := []Object{
		{Attrs: map[uint64][]byte{0: {3}, 3: []byte("public label"), tID: {1, 2}}},
		{Attrs: map[uint64][]byte{0: {3}, 0x11: []byte("private value"), 0x2: {1}}, Sealed: map[uint64]bool{0x11: true, 0x2: true}},
		{Attrs: map[uint64][]byte{0x120: {}, 0x121: nil}, Sealed: map[uint64]bool{0x121: true}},
		{Attrs: map[uint64][]byte{0x11: big, 1 << 63: []byte("max type")}, Sealed: map[uint64]bool{0x11: true, 0x999: true, 1 << 63: false}},
		{Attrs: map[uint64][]byte{}},
	}
	for i := range objs {
		id, err := s.Put(key, objs[i])
		if err != nil {
			t.Fatalf("Put %d: %v", i, err)
		}
		if id == 0 {
			t.Fatal("Put assigned ID 0")
		}
		objs[i].ID = id
	}
	got, gen, err := s.Objects(key)
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := s.Generation(); gen != g {
		t.Fatalf("Objects reported generation %d, file has %d", gen, g)
	}
	if len(got) != len(objs) {
		t.Fatalf("%d objects, want %d", len(got), len(objs))
	}
	for i := range objs {
		if !sameObject(got[i], objs[i]) {
			t.Errorf("object %d (ID %d) differs from what was put", i, objs[i].ID)
		}
		one, err := s.Get(key, objs[i].ID)
		if err != nil || !sameObject(one, objs[i]) {
			t.Errorf("Get %d: differs from what was put (err %v)", objs[i].ID, err)
		}
	}

	// Without a key: sealed values are absent but still listed.
	public, _, err := s.Objects(nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range public {
		for typ, v := range objs[i].Attrs {
			sealed := objs[i].Sealed[typ]
			pv, present := o.Attrs[typ]
			switch {
			case sealed && (present || !o.Sealed[typ]):
				t.Errorf("object %d attribute %#x: sealed value visible without key or not listed", i, typ)
			case !sealed && (!present || !bytes.Equal(pv, v)):
				t.Errorf("object %d attribute %#x: clear value missing without key", i, typ)
			}
		}
	}
}

func TestPutUpdateDelete(t *testing.T) {
	s, key := initStore(t, testOptions())
	id, err := s.Put(key, Object{Attrs: map[uint64][]byte{1: []byte("a"), 2: []byte("b")}, Sealed: map[uint64]bool{2: true}})
	if err != nil {
		t.Fatal(err)
	}
	upd := Object{ID: id, Attrs: map[uint64][]byte{1: []byte("a2"), 3: []byte("c")}, Sealed: map[uint64]bool{1: true}}
	if got, err := s.Put(key, upd); err != nil || got != id {
		t.Fatalf("update: %d, %v", got, err)
	}
	obj, err := s.Get(key, id)
	if err != nil || !sameObject(obj, upd) {
		t.Fatalf("after update: %+v, %v", obj, err)
	}
	_, err = s.Put(key, Object{ID: id + 100, Attrs: map[uint64][]byte{1: {1}}})
	wantErr(t, "Put of an unknown ID", err, ErrNotFound)
	_, err = s.Put(nil, Object{Attrs: map[uint64][]byte{1: {1}}, Sealed: map[uint64]bool{1: true}})
	wantErr(t, "sealed Put without key", err, ErrKeyMismatch)

	if err := s.Delete(id); err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(key, id)
	wantErr(t, "Get deleted", err, ErrNotFound)
	wantErr(t, "Delete twice", s.Delete(id), ErrNotFound)
	_, err = s.Put(key, upd)
	wantErr(t, "Put of a deleted object", err, ErrNotFound)
}

func TestSealedPlaintextNotInFile(t *testing.T) {
	s, key := initStore(t, testOptions())
	secret := []byte("SECRET-PRIME-FACTOR-0123456789-abcdef")
	sealedID := []byte("SEALED-CKA-ID-VALUE-42")
	public := []byte("PUBLIC-MODULUS-9876543210-fedcba")
	if _, err := s.Put(key, Object{
		Attrs:  map[uint64][]byte{0x124: secret, tID: sealedID, 0x120: public},
		Sealed: map[uint64]bool{0x124: true, tID: true},
	}); err != nil {
		t.Fatal(err)
	}
	raw := rawOf(t, s.path).dump()
	for _, tt := range []struct {
		name  string
		value []byte
		want  bool
	}{
		{"sealed attribute", secret, false},
		{"sealed CKA_ID (also in the index)", sealedID, false},
		{"PIN", userPIN, false},
		{"SO PIN", soPIN, false},
		{"clear attribute", public, true},
	} {
		if got := bytes.Contains(raw, tt.value); got != tt.want {
			t.Errorf("%s: found in the store = %v, want %v", tt.name, got, tt.want)
		}
	}
	// The token key itself is not in the file either.
	key.mu.RLock()
	defer key.mu.RUnlock()
	if bytes.Contains(raw, key.key[:]) {
		t.Error("token key found in the store")
	}
}

// Sealed values are bound to their object and attribute: swapping two
// sealed blobs in the stored records makes them fail authentication.
func TestSealedValuesAreBound(t *testing.T) {
	tests := []struct {
		name       string
		a, b       Object
		typA, typB uint64
	}{
		{"across objects",
			Object{Attrs: map[uint64][]byte{0x11: []byte("value of A!")}, Sealed: map[uint64]bool{0x11: true}},
			Object{Attrs: map[uint64][]byte{0x11: []byte("value of B!")}, Sealed: map[uint64]bool{0x11: true}},
			0x11, 0x11},
		{"across attributes",
			Object{Attrs: map[uint64][]byte{0x122: []byte("exponent 1"), 0x123: []byte("exponent 2")}, Sealed: map[uint64]bool{0x122: true, 0x123: true}},
			Object{},
			0x122, 0x123},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, key := initStore(t, testOptions())
			idA, err := s.Put(key, tt.a)
			if err != nil {
				t.Fatal(err)
			}
			idB := idA
			if tt.b.Attrs != nil {
				if idB, err = s.Put(key, tt.b); err != nil {
					t.Fatal(err)
				}
			}
			blobA, blobB := storedValue(t, s.path, idA, tt.typA), storedValue(t, s.path, idB, tt.typB)
			if len(blobA) != len(blobB) {
				t.Fatalf("test values must have equal lengths")
			}
			raw := rawOf(t, s.path)
			ids := []uint64{idA}
			if idB != idA {
				ids = append(ids, idB)
			}
			swapped := 0
			for _, id := range ids {
				rec := raw.get(bucketObjects, idKey(id))
				i, j := bytes.Index(rec, blobA), bytes.Index(rec, blobB)
				if i >= 0 {
					copy(rec[i:], blobB)
					swapped++
				}
				if j >= 0 {
					copy(rec[j:], blobA)
					swapped++
				}
				raw.put(bucketObjects, idKey(id), rec)
			}
			if swapped != 2 {
				t.Fatalf("sealed blobs found %d times in the records, want 2", swapped)
			}

			// The record MACs fail first (auth.go); the objects are
			// left out of listings.
			objs, _, err := s.Objects(key)
			if err != nil {
				t.Fatalf("Objects after swap: %v", err)
			}
			for _, o := range objs {
				if o.ID == idA || o.ID == idB {
					t.Fatalf("object %d served after the swap", o.ID)
				}
			}
			_, err = s.Get(key, idA)
			wantErr(t, "Get after swap", err, ErrUnauthentic, ErrCorrupt)
			// Without the key nothing is unsealed, so listing still works.
			if _, _, err := s.Objects(nil); err != nil {
				t.Fatalf("Objects(nil) after swap: %v", err)
			}
		})
	}
}

// storedValue reads the stored (sealed) bytes of one attribute.
func storedValue(t *testing.T, path string, id, typ uint64) []byte {
	t.Helper()
	rec, err := decodeObjectRecord(rawOf(t, path).get(bucketObjects, idKey(id)))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, a := range rec.Attrs {
		if a.Type == typ && a.Sealed {
			out = a.Value
		}
	}
	if out == nil {
		t.Fatalf("object %d has no sealed attribute %#x", id, typ)
	}
	return out
}

func TestWipedKey(t *testing.T) {
	s, _ := initStore(t, testOptions())
	k, err := s.Login(User, userPIN)
	if err != nil {
		t.Fatal(err)
	}
	k.Wipe()
	if k.key != [tokenKeySize]byte{} {
		t.Fatal("Wipe left key material")
	}
	_, _, err = s.Objects(k)
	wantErr(t, "Objects with a wiped key", err, ErrKeyMismatch)
}

// bulkBatch objects a transaction in the bulk loads of TestManyObjects and
// TestChangesCostIsTheChange: an object put by PutObjects is about three
// etcd operations (60 objects were 183), and etcd refuses a transaction of
// more than --max-txn-ops (128 by default, kept in the tests' members).
const bulkBatch = 20

func TestManyObjects(t *testing.T) {
	if testing.Short() {
		t.Skip("many objects")
	}
	s, key := initStore(t, testOptions())
	const n = 2000
	// Bulk-load in raw transactions (Put does one fsync per object) of
	// bulkBatch objects, under etcd's --max-txn-ops (TestOnEtcd).
	for done := 0; done < n; done += bulkBatch {
		err := s.update(func(tx kvTx) error {
			sl, err := s.openSealer(tx, key)
			if err != nil {
				return err
			}
			b := tx.Bucket(bucketObjects)
			for range min(bulkBatch, n-done) {
				id, _ := b.NextSequence()
				v, err := sl.seal(id, 0x11, []byte("private"))
				if err != nil {
					return err
				}
				rec := objectRecord{Attrs: []storedAttr{{Type: 3, Value: fmt.Appendf(nil, "obj %d", id)}, {Type: 0x11, Sealed: true, Value: v}}}
				if err := b.Put(idKey(id), encodeObjectRecord(&rec, sl.macFor(id))); err != nil {
					return err
				}
			}
			_, err = bumpGeneration(tx)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	objs, _, err := s.Objects(key)
	if err != nil || len(objs) != n {
		t.Fatalf("Objects: %d, %v", len(objs), err)
	}
	for _, o := range objs {
		if string(o.Attrs[3]) != fmt.Sprintf("obj %d", o.ID) || string(o.Attrs[0x11]) != "private" {
			t.Fatalf("object %d: %q %q", o.ID, o.Attrs[3], o.Attrs[0x11])
		}
	}
}
