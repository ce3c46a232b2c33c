package keystore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
)

// ckULong is a CK_ULONG attribute value as the module stores it.
func ckULong(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// Attribute types of the fixture objects (PKCS#11 values).
const (
	tClass, tToken, tPrivate, tLabel, tValue        = 0x0, 0x1, 0x2, 0x3, 0x11
	tKeyType, tSensitive, tSign, tModulus, tPrivExp = 0x100, 0x103, 0x108, 0x120, 0x123
	tPrime1, tExtractable, tAlwaysSensitive         = 0x124, 0x162, 0x165
	tNeverExtractable, tModifiable                  = 0x164, 0x170
)

// Secret values of the fixture: none may ever be served but by its own,
// verified object.
var fixtureSecrets = [][]byte{[]byte("PRIVATE-EXPONENT-1"), []byte("PRIME-ONE-1"), []byte("PRIVATE-EXPONENT-2"), []byte("SECRET-KEY-VALUE-16")}

// fixtureObjects are the objects of a token as the module stores them: a
// public data object written without login, a private RSA key
// (CKA_PRIVATE true: everything but class, token, private sealed), a
// private key with CKA_PRIVATE false (only the private values sealed), a
// secret key, and a public key written while logged in.
func fixtureObjects() []Object {
	allSealed := func(o Object) Object {
		o.Sealed = map[uint64]bool{}
		for t := range o.Attrs {
			if t != tClass && t != tToken && t != tPrivate {
				o.Sealed[t] = true
			}
		}
		return o
	}
	return []Object{
		{Attrs: map[uint64][]byte{tClass: ckULong(0), tToken: {1}, tPrivate: {0}, tLabel: []byte("public data"), tID: []byte("id-pub")}},
		allSealed(Object{Attrs: map[uint64][]byte{tClass: ckULong(3), tToken: {1}, tPrivate: {1}, tKeyType: ckULong(0),
			tSensitive: {1}, tExtractable: {0}, tAlwaysSensitive: {1}, tNeverExtractable: {1}, tSign: {1}, tModifiable: {1},
			tModulus: []byte("modulus-1"), tPrivExp: fixtureSecrets[0], tPrime1: fixtureSecrets[1], tID: []byte("id-1")}}),
		{Attrs: map[uint64][]byte{tClass: ckULong(3), tToken: {1}, tPrivate: {0}, tKeyType: ckULong(0),
			tSensitive: {1}, tExtractable: {0}, tAlwaysSensitive: {1}, tNeverExtractable: {1}, tSign: {1}, tModifiable: {0},
			tModulus: []byte("modulus-2"), tPrivExp: fixtureSecrets[2], tID: []byte("id-2")},
			Sealed: map[uint64]bool{tPrivExp: true}},
		allSealed(Object{Attrs: map[uint64][]byte{tClass: ckULong(4), tToken: {1}, tPrivate: {1}, tKeyType: ckULong(0x1f),
			tSensitive: {1}, tExtractable: {0}, tValue: fixtureSecrets[3]}}),
		{Attrs: map[uint64][]byte{tClass: ckULong(2), tToken: {1}, tPrivate: {0}, tKeyType: ckULong(0),
			tModulus: []byte("modulus-1"), tID: []byte("id-1")}},
	}
}

// fixtureStore stores fixtureObjects (the first without a key) and returns
// the store, the user's key and the stored objects by ID.
func fixtureStore(t *testing.T) (*Store, *Key, map[uint64]Object) {
	t.Helper()
	s, key := initStore(t, testOptions())
	want := map[uint64]Object{}
	for i, o := range fixtureObjects() {
		k := key
		if i == 0 {
			k = nil
		}
		id, err := s.Put(k, o)
		must(t, err)
		o.ID = id
		want[id] = o
	}
	return s, key, want
}

// checkServed fails if objs (read with key when keyed) hold anything the
// tampering should not yield: a verified object that differs from what was
// stored, an unverified one that is a key, private or holds a sealed or
// secret value, or a secret value anywhere but in its own object.
func checkServed(t *testing.T, what string, objs []Object, want map[uint64]Object, keyed bool) {
	t.Helper()
	for _, o := range objs {
		w, known := want[o.ID]
		// Without the key nothing is verified: a protected object's clear
		// attributes may be edited, but no private value may appear
		// (checked below).
		if o.Verified {
			if !keyed || !known || !sameObject(o, w) {
				t.Fatalf("%s: verified object %d differs: %+v, stored %+v", what, o.ID, o, w)
			}
			continue
		}
		rec := objectRecord{}
		for typ, v := range o.Attrs {
			rec.Attrs = append(rec.Attrs, storedAttr{Type: typ, Value: v, Sealed: o.Sealed[typ]})
		}
		if keyed && (len(o.Sealed) > 0 || rec.protected()) {
			t.Fatalf("%s: unverified protected object %d served with the key: %+v", what, o.ID, o)
		}
		for _, v := range o.Attrs {
			for _, secret := range fixtureSecrets {
				if bytes.Contains(v, secret) {
					t.Fatalf("%s: secret %q served in unverified object %d", what, secret, o.ID)
				}
			}
		}
	}
}

func stripSealed(o Object) Object {
	n := Object{ID: o.ID, Attrs: map[uint64][]byte{}}
	for t, v := range o.Attrs {
		if !o.Sealed[t] {
			n.Attrs[t] = v
		}
	}
	return n
}

// rawRecords returns the stored records by ID.
func rawRecords(t *testing.T, path string) map[uint64][]byte {
	t.Helper()
	recs := map[uint64][]byte{}
	for k, v := range rawOf(t, path).all(bucketObjects) {
		recs[binary.BigEndian.Uint64([]byte(k))] = v
	}
	return recs
}

// TestTamperedRecordRefused is the attack of issue 17: the sealed
// CKA_SENSITIVE and CKA_EXTRACTABLE of a private key replaced by clear
// FALSE/TRUE (the record otherwise intact), an object planted, a private
// value stored in the clear. Before schema version 3 the first gave the
// key's private exponent to the next login.
func TestTamperedRecordRefused(t *testing.T) {
	edits := []struct {
		name string
		edit func(r *objectRecord)
	}{
		{"sensitive and extractable in the clear", func(r *objectRecord) {
			r.attr(tSensitive).Sealed, r.attr(tSensitive).Value = false, []byte{0}
			r.attr(tExtractable).Sealed, r.attr(tExtractable).Value = false, []byte{1}
		}},
		{"private flag cleared", func(r *objectRecord) { r.attr(tPrivate).Value = []byte{0} }},
		{"MAC stripped", func(r *objectRecord) { r.MAC = nil }},
		{"private exponent in the clear", func(r *objectRecord) {
			r.attr(tPrivExp).Sealed, r.attr(tPrivExp).Value = false, []byte("attacker's exponent")
		}},
	}
	for _, tt := range edits {
		t.Run(tt.name, func(t *testing.T) {
			s, key, want := fixtureStore(t)
			var victim uint64
			for id, o := range want {
				if bytes.Equal(o.Attrs[tModulus], []byte("modulus-1")) && o.Attrs[tPrivExp] != nil {
					victim = id
				}
			}
			raw := rawOf(t, s.path)
			r, err := decodeObjectRecord(raw.get(bucketObjects, idKey(victim)))
			must(t, err)
			tt.edit(r)
			var mac func([]byte) []byte
			if r.MAC != nil {
				mac = func([]byte) []byte { return r.MAC }
			}
			raw.put(bucketObjects, idKey(victim), encodeObjectRecord(r, mac))
			objs, _, err := s.Objects(key)
			must(t, err)
			checkServed(t, "keyed", objs, want, true)
			if slices.ContainsFunc(objs, func(o Object) bool { return o.ID == victim }) {
				t.Fatal("tampered object served")
			}
			if len(objs) != len(want)-1 {
				t.Fatalf("%d objects served, want the %d untouched", len(objs), len(want)-1)
			}
			_, err = s.Get(key, victim)
			wantErr(t, "Get", err, ErrCorrupt)
			objs, _, err = s.Objects(nil)
			must(t, err)
			checkServed(t, "unkeyed", objs, want, false)
		})
	}
	t.Run("planted", func(t *testing.T) {
		s, key, want := fixtureStore(t)
		for i, o := range fixtureObjects()[1:4] {
			// The record of a private or secret key, as a public session
			// (or an attacker) would write it without the key.
			var r objectRecord
			for _, typ := range slices.Sorted(mapsKeys(o.Attrs)) {
				r.Attrs = append(r.Attrs, storedAttr{Type: typ, Value: o.Attrs[typ]})
			}
			rawOf(t, s.path).put(bucketObjects, idKey(uint64(100+i)), encodeObjectRecord(&r, nil))
		}
		objs, _, err := s.Objects(key)
		must(t, err)
		checkServed(t, "keyed", objs, want, true)
		if len(objs) != len(want) {
			t.Fatalf("%d objects served, want %d", len(objs), len(want))
		}
		objs, _, err = s.Objects(nil)
		must(t, err)
		checkServed(t, "unkeyed", objs, want, false)
		// And a keyless Put of such an object is refused.
		_, err = s.Put(nil, Object{Attrs: map[uint64][]byte{tClass: ckULong(4), tLabel: []byte("x")}})
		wantErr(t, "keyless Put of a secret key", err, ErrKeyMismatch)
	})
}

func mapsKeys(m map[uint64][]byte) func(func(uint64) bool) {
	return func(yield func(uint64) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestTamperByteByByte edits the stored records as an attacker who can
// write the token file (or its etcd prefix) but knows no PIN would: every
// byte of every object record in turn has its low bit flipped (every byte
// that could be a flag is toggled), and every record is put in the place
// of every other. After each edit, the objects served with the key are
// either exactly what was stored (and verified) or public objects without
// anything sealed; no secret value ever leaves its own object, with or
// without the key.
func TestTamperByteByByte(t *testing.T) {
	s, key, want := fixtureStore(t)
	raw := rawOf(t, s.path)
	recs := rawRecords(t, s.path)
	edits := 0
	check := func(what string, id uint64, unkeyed bool) {
		objs, _, err := s.Objects(key)
		if err == nil {
			checkServed(t, what+" (keyed)", objs, want, true)
		}
		if unkeyed { // (sealed values stay sealed: cheap to skip per byte)
			objs, _, err = s.Objects(nil)
			if err == nil {
				checkServed(t, what+" (unkeyed)", objs, want, false)
			}
		}
		if o, err := s.Get(key, id); err == nil {
			checkServed(t, what+" (Get)", []Object{o}, want, true)
		}
		edits++
	}
	// Every byte on the file; every fifth in etcd (a request per edit and
	// per check): the records are the same bytes, read by the same code.
	stride := 1
	if !onFile() {
		stride = 5
	}
	ids := slices.Sorted(maps.Keys(recs))
	for _, id := range ids {
		rec := recs[id]
		for i := 0; i < len(rec); i += stride {
			flipped := bytes.Clone(rec)
			flipped[i] ^= 1
			raw.put(bucketObjects, idKey(id), flipped)
			check(fmt.Sprintf("object %d byte %d", id, i), id, i%8 == 0)
		}
		raw.put(bucketObjects, idKey(id), rec)
	}
	for _, a := range ids {
		for _, b := range ids {
			if a == b {
				continue
			}
			raw.put(bucketObjects, idKey(b), recs[a])
			check(fmt.Sprintf("record of %d as %d", a, b), b, true)
			raw.put(bucketObjects, idKey(b), recs[b])
		}
	}
	t.Logf("%d edits, none yielded a changed object or a secret", edits)
}

// TestMigrateV2 opens testdata/v2-token.db, written by the schema-version-2
// keystore (commit 4c214fb; PINs soPIN and userPIN; a public data object,
// a private key with CKA_PRIVATE true, one with CKA_PRIVATE false, a
// secret key): readable without a key as is, left at version 2 by
// keyless writes, upgraded by the first login with every object kept and
// MAC'd. A downgrade afterwards (schema set back to 2, MACs stripped, a
// clear CKA_SENSITIVE FALSE) gives nothing: the sealed values no longer
// open as version-2 ones, so the next login's migration refuses them.
func TestMigrateV2(t *testing.T) {
	path := fixtureCopy(t, "v2-token.db", 2)
	s := openStore(t, path, testOptions())
	before, _, err := s.Objects(nil)
	must(t, err)
	if len(before) != 4 {
		t.Fatalf("fixture holds %d objects, want 4", len(before))
	}
	_, err = s.Put(nil, Object{Attrs: map[uint64][]byte{tLabel: []byte("keyless")}})
	must(t, err)
	if v := schemaOf(t, path); v != 2 {
		t.Fatalf("a keyless write moved the schema to %d", v)
	}
	// (The index keeps a version-2 file readable by the keystore that
	// wrote it. store copy leaves it out: no such keystore reads etcd.)
	if onFile() && !hasIndex(t, path) {
		t.Fatal("a keyless write dropped the index of a version-2 file")
	}
	key, after := loginUpgrades(t, s, path, userPIN, 5)
	for i, o := range after[:4] {
		if !o.Verified {
			t.Fatalf("object %d not verified after the upgrade", o.ID)
		}
		if !sameObject(stripSealed(o), before[i]) {
			t.Fatalf("object %d changed: %+v → %+v", o.ID, before[i], o)
		}
	}
	if string(after[1].Attrs[tPrivExp]) != "private exponent" || string(after[3].Attrs[tValue]) != "0123456789abcdef" {
		t.Fatalf("sealed values after the upgrade: %q %q", after[1].Attrs[tPrivExp], after[3].Attrs[tValue])
	}
	if !after[4].Verified {
		t.Fatal("the migration left the keyless public object without a MAC")
	}

	// Downgrade attack.
	raw := rawOf(t, path)
	raw.put(bucketMeta, keySchema, binary.BigEndian.AppendUint32(nil, 2))
	for _, o := range after {
		r, err := decodeObjectRecord(raw.get(bucketObjects, idKey(o.ID)))
		must(t, err)
		r.MAC = nil
		if a := r.attr(tSensitive); a != nil {
			a.Sealed, a.Value = false, []byte{0}
		}
		raw.put(bucketObjects, idKey(o.ID), encodeObjectRecord(r, nil))
	}
	key.Wipe()
	key2, err := s.Login(User, userPIN)
	must(t, err)
	defer key2.Wipe()
	objs, _, err := s.Objects(key2)
	must(t, err)
	for _, o := range objs {
		if o.Attrs[tClass] != nil && binary.LittleEndian.Uint64(o.Attrs[tClass]) >= 3 {
			t.Fatalf("key object %d served after a downgrade: %+v", o.ID, o)
		}
	}
	if len(objs) != 2 {
		t.Fatalf("%d objects after the downgrade, want the 2 public ones", len(objs))
	}
}

// TestMigrateV3 makes a version-3 token (a version-4 one given back its
// schema number and the CKA_ID index buckets, with entries): read as is,
// and upgraded to version 4 by the first write, without a key, the index
// buckets dropped and every record's MAC still checking.
func TestMigrateV3(t *testing.T) {
	path := tokenPath(t)
	s := openStore(t, path, testOptions())
	key := initWith(t, s)
	_, err := s.PutObjects(key, []Object{
		{Attrs: map[uint64][]byte{tClass: ckULong(3), tID: []byte("pair"), tPrivExp: []byte("d")}, Sealed: map[uint64]bool{tPrivExp: true}},
		{Attrs: map[uint64][]byte{tClass: ckULong(2), tID: []byte("pair"), tModulus: []byte("n")}},
	})
	must(t, err)
	before, _, err := s.Objects(key)
	must(t, err)
	key.Wipe()
	must(t, s.Close())
	raw := rawOf(t, path)
	raw.put(bucketMeta, keySchema, binary.BigEndian.AppendUint32(nil, 3))
	raw.createBucket(bucketIndex)
	raw.createBucket(bucketIndexRev)
	for _, o := range before {
		entry := append([]byte{'c', 4, 'p', 'a', 'i', 'r'}, idKey(o.ID)...)
		raw.put(bucketIndex, entry, []byte{})
		raw.put(bucketIndexRev, idKey(o.ID), entry)
	}
	src := raw.dump()

	s = openStore(t, path, testOptions())
	if objs, _, err := s.Objects(nil); err != nil || len(objs) != len(before) {
		t.Fatalf("version-3 read: %d objects, %v", len(objs), err)
	}
	if !bytes.Equal(raw.dump(), src) {
		t.Fatal("reading a version-3 token changed it")
	}
	_, err = s.Put(nil, Object{Attrs: map[uint64][]byte{tLabel: []byte("keyless")}})
	must(t, err)
	if v := schemaOf(t, path); v != SchemaVersion || hasIndex(t, path) {
		t.Fatalf("after a keyless write: schema %d, index kept %v", v, hasIndex(t, path))
	}
	key, err = s.Login(User, userPIN)
	must(t, err)
	defer key.Wipe()
	after, _, err := s.Objects(key)
	must(t, err)
	if len(after) != len(before)+1 {
		t.Fatalf("%d objects after the upgrade, want %d", len(after), len(before)+1)
	}
	for i, o := range before {
		if !after[i].Verified || !reflect.DeepEqual(after[i], o) {
			t.Fatalf("object %d after the upgrade: %+v, was %+v", o.ID, after[i], o)
		}
	}
}
