package keystore

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// File layout (schema version 4)
//
//	meta     "kind"       "modexp-token keystore"
//	         "schema"     uint32 big-endian: schema version
//	         "generation" uint64 big-endian: bumped by every change
//	         "changesfrom" uint64 big-endian (version 2): the change log
//	                      below answers "what changed since G" for every
//	                      G ≥ changesfrom; older G get "reload everything"
//	token    "record"     token record (records.go)
//	objects  id (uint64 big-endian) → object record; the bucket sequence
//	         allocates IDs and is never reset, so IDs are not reused
//	stamps   (version 2) id → uint64 generation of the object's last write
//	changed  (version 2) gen ‖ id → empty: each live object once, at the
//	         generation of its last write (an object with no stamp was
//	         last written before changesfrom)
//	deleted  (version 2) gen ‖ id → empty: tombstones; at most
//	         maxTombstones are kept, the oldest pruned (changesfrom moves
//	         past them)
//
// Version 4: version 3 without the CKA_ID index (buckets "index" and
// "indexrev", a persisted lookup by CKA_ID kept up to date by every write).
// Nothing read it: the token answers C_FindObjects from its cache, which
// holds every object and keeps its own CKA_ID index (token/find.go), and
// the change log keeps the caches of every process in step. Migration
// 3→4 (first write transaction, no key needed) deletes the two buckets;
// the records and their MACs are untouched. Files of versions 1 and 2
// keep their (from now on stale, never read) index buckets until the
// upgrade to version 3, which goes on to version 4 in the same
// transaction (upgradeAuth).
//
// Version 3 (auth.go): the same buckets as version 2; object records
// written with the token key end with a MAC, and sealed values use a new
// AAD label. Migration 2→3 needs the token key: it runs in the first write
// transaction that has it (Login runs one), not in the first write.
//
// Version 1 had no change log. Migration 1→2 (first write transaction)
// creates the three buckets empty and sets changesfrom to the file's
// generation: no object needs a stamp, since none changed after it. A
// version-1 file read before any write answers every Changes call with a
// full reload. A version-1 keystore refuses a version-2 file
// (ErrSchemaVersion): upgrade every process sharing a token together.
//
// Migrations: a file with a lower schema version is upgraded to
// keylessVersion in the first write transaction by the functions in
// migrations, and to SchemaVersion by the first one with the token key
// (upgradeAuth); a higher version is refused with ErrSchemaVersion (a
// newer keystore wrote it). A version-3 file is refused by a version-2
// keystore, a version-4 file by a version-3 one: upgrade every process
// sharing a token together.

// SchemaVersion is the schema version this code reads and writes.
const SchemaVersion = 4

// schemaNoIndex is the first schema version without the CKA_ID index.
const schemaNoIndex = 4

// keylessVersion is the version the migrations that need no key reach.
const keylessVersion = 2

const fileKind = "modexp-token keystore"

var (
	bucketMeta     = []byte("meta")
	bucketToken    = []byte("token")
	bucketObjects  = []byte("objects")
	bucketIndex    = []byte("index")    // versions 1–3 only
	bucketIndexRev = []byte("indexrev") // versions 1–3 only
	bucketStamps   = []byte("stamps")
	bucketChanged  = []byte("changed")
	bucketDeleted  = []byte("deleted")

	keyKind        = []byte("kind")
	keySchema      = []byte("schema")
	keyGeneration  = []byte("generation")
	keyRecord      = []byte("record")
	keyChangesFrom = []byte("changesfrom")
)

// bucketsV1 are the buckets of every schema version (besides the index
// buckets versions 1–3 also have); bucketsV2 those version 2 adds (the
// change log, changes.go).
var (
	bucketsV1 = [][]byte{bucketToken, bucketObjects}
	bucketsV2 = [][]byte{bucketStamps, bucketChanged, bucketDeleted}
)

// migrations[v] upgrades a file from schema version v to v+1 inside a
// write transaction.
var migrations = map[uint32]func(kvTx) error{
	1: migrate1to2,
}

// migrate1to2 adds the change log: empty buckets, complete from the
// file's current generation on (nothing is known of earlier changes).
func migrate1to2(tx kvTx) error {
	for _, b := range bucketsV2 {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return fmt.Errorf("keystore: create bucket %q: %w", b, err)
		}
	}
	g, err := generation(tx)
	if err != nil {
		return err
	}
	return setChangesFrom(tx, g)
}

// migrate3to4 drops the CKA_ID index (buckets absent already are fine)
// and sets the schema version.
func migrate3to4(tx kvTx) error {
	for _, b := range [][]byte{bucketIndex, bucketIndexRev} {
		if tx.Bucket(b) == nil {
			continue
		}
		if err := tx.DeleteBucket(b); err != nil {
			return fmt.Errorf("keystore: migrate schema 3→4: delete bucket %q: %w", b, err)
		}
	}
	if err := tx.Bucket(bucketMeta).Put(keySchema, binary.BigEndian.AppendUint32(nil, schemaNoIndex)); err != nil {
		return fmt.Errorf("keystore: write schema version: %w", err)
	}
	return nil
}

// schemaVersion reads the (already checked) schema version of tx's file.
func schemaVersion(tx kvTx) uint32 {
	return binary.BigEndian.Uint32(tx.Bucket(bucketMeta).Get(keySchema))
}

// checkSchema verifies that tx holds a token file of a known schema
// version. A file with no buckets at all is an uninitialised bbolt file
// (ErrNotInitialized); anything else unexpected is ErrCorrupt.
func checkSchema(tx kvTx) error {
	path := tx.Path()
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		if tx.Empty() {
			return fmt.Errorf("keystore: %s: no token: %w", path, ErrNotInitialized)
		}
		return fmt.Errorf("keystore: %s: not a token file (no meta bucket): %w", path, ErrCorrupt)
	}
	if string(meta.Get(keyKind)) != fileKind {
		return fmt.Errorf("keystore: %s: not a token file (kind %q): %w", path, meta.Get(keyKind), ErrCorrupt)
	}
	v := meta.Get(keySchema)
	if len(v) != 4 {
		return fmt.Errorf("keystore: %s: bad schema version field: %w", path, ErrCorrupt)
	}
	switch version := binary.BigEndian.Uint32(v); {
	case version > SchemaVersion:
		return fmt.Errorf("keystore: %s: schema version %d is newer than this keystore's %d (upgrade the module): %w: %w",
			path, version, SchemaVersion, ErrCorrupt, ErrSchemaVersion)
	case version < 1:
		return fmt.Errorf("keystore: %s: schema version %d: %w: %w", path, version, ErrCorrupt, ErrSchemaVersion)
	case version < keylessVersion:
		if !tx.Writable() {
			// Readable as is until the next write migrates it.
			return checkBuckets(tx, bucketsV1)
		}
		if err := migrate(tx, version); err != nil {
			return err
		}
	case version == schemaNoIndex-1 && tx.Writable():
		if err := migrate3to4(tx); err != nil {
			return err
		}
	}
	if err := checkBuckets(tx, bucketsV1); err != nil {
		return err
	}
	return checkBuckets(tx, bucketsV2)
}

func checkBuckets(tx kvTx, names [][]byte) error {
	for _, b := range names {
		if tx.Bucket(b) == nil {
			return fmt.Errorf("keystore: %s: bucket %q missing: %w", tx.Path(), b, ErrCorrupt)
		}
	}
	return nil
}

// migrate runs the migrations that need no key, up to keylessVersion.
func migrate(tx kvTx, from uint32) error {
	for v := from; v < keylessVersion; v++ {
		m, ok := migrations[v]
		if !ok {
			return fmt.Errorf("keystore: no migration from schema version %d: %w", v, ErrSchemaVersion)
		}
		if err := m(tx); err != nil {
			return fmt.Errorf("keystore: migrate schema %d→%d: %w", v, v+1, err)
		}
	}
	return tx.Bucket(bucketMeta).Put(keySchema, binary.BigEndian.AppendUint32(nil, keylessVersion))
}

// createSchema makes the buckets of a new token file.
func createSchema(tx kvTx) error {
	meta, err := tx.CreateBucket(bucketMeta)
	if err != nil {
		return fmt.Errorf("keystore: create meta bucket: %w", err)
	}
	for k, v := range map[string][]byte{
		string(keyKind):        []byte(fileKind),
		string(keySchema):      binary.BigEndian.AppendUint32(nil, SchemaVersion),
		string(keyGeneration):  binary.BigEndian.AppendUint64(nil, 0),
		string(keyChangesFrom): binary.BigEndian.AppendUint64(nil, 0),
	} {
		if err := meta.Put([]byte(k), v); err != nil {
			return fmt.Errorf("keystore: write meta: %w", err)
		}
	}
	for _, b := range append(slices.Clone(bucketsV1), bucketsV2...) {
		if _, err := tx.CreateBucket(b); err != nil {
			return fmt.Errorf("keystore: create bucket %q: %w", b, err)
		}
	}
	return nil
}

// generation reads the change counter.
func generation(tx kvTx) (uint64, error) {
	v := tx.Bucket(bucketMeta).Get(keyGeneration)
	if len(v) != 8 {
		return 0, fmt.Errorf("keystore: %s: bad generation field: %w", tx.Path(), ErrCorrupt)
	}
	return binary.BigEndian.Uint64(v), nil
}

// bumpGeneration increments the change counter; every write transaction
// calls it once.
func bumpGeneration(tx kvTx) (uint64, error) {
	g, err := generation(tx)
	if err != nil {
		return 0, err
	}
	g++
	if err := tx.Bucket(bucketMeta).Put(keyGeneration, binary.BigEndian.AppendUint64(nil, g)); err != nil {
		return 0, fmt.Errorf("keystore: write generation: %w", err)
	}
	return g, nil
}

// loadToken checks the schema and decodes the token record.
func loadToken(tx kvTx) (*tokenRecord, error) {
	if err := checkSchema(tx); err != nil {
		return nil, err
	}
	v := tx.Bucket(bucketToken).Get(keyRecord)
	if v == nil {
		return nil, fmt.Errorf("keystore: %s: token record missing: %w", tx.Path(), ErrCorrupt)
	}
	rec, err := decodeTokenRecord(v)
	if err != nil {
		return nil, fmt.Errorf("keystore: %s: %w: %w", tx.Path(), ErrCorrupt, err)
	}
	return rec, nil
}

// saveToken writes the token record.
func saveToken(tx kvTx, rec *tokenRecord) error {
	if err := tx.Bucket(bucketToken).Put(keyRecord, encodeTokenRecord(rec)); err != nil {
		return fmt.Errorf("keystore: write token record: %w", err)
	}
	return nil
}

// saveTokenChange writes the token record and counts the change (a PIN
// or the token itself changed), for other processes to see.
func saveTokenChange(tx kvTx, rec *tokenRecord) error {
	if err := saveToken(tx, rec); err != nil {
		return err
	}
	_, err := bumpGeneration(tx)
	return err
}
