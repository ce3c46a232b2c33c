package keystore

import (
	"encoding/binary"
	"fmt"
)

// The change log (schema version 2)
//
// A process that caches objects notices another process's change through
// the generation counter; Changes then tells it what changed, so it can
// update its cache at a cost proportional to the change instead of the
// token's size. Every write transaction that puts or deletes objects
// records, at the generation it ends with:
//
//   - for each object written, its stamp (stamps: id → gen) and an entry
//     gen ‖ id in changed, replacing the entry of its previous write: changed
//     holds every live object once, so "what changed since G" is a cursor
//     seek to G+1, whatever the number of objects;
//   - for each object deleted, a tombstone gen ‖ id in deleted (and its
//     stamp and changed entry go).
//
// Tombstones are pruned when they are more than maxLogAge generations old;
// pruning moves changesfrom past them, and a caller asking for changes since
// a generation older than changesfrom is told to reload everything (full).
// InitToken (which destroys every object), Restore (another file) and the
// migration from version 1 (no log before it) set changesfrom too.

// maxLogAge is how many generations a tombstone is kept: a cache that is
// more than this many changes behind reloads everything. A variable for
// tests.
var maxLogAge uint64 = 10000

func genIDKey(gen, id uint64) []byte {
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k, gen)
	binary.BigEndian.PutUint64(k[8:], id)
	return k
}

// changesFrom reads the oldest generation the log answers for.
func changesFrom(tx kvTx) (uint64, error) {
	v := tx.Bucket(bucketMeta).Get(keyChangesFrom)
	if len(v) != 8 {
		return 0, fmt.Errorf("keystore: %s: bad changesfrom field: %w", tx.Path(), ErrCorrupt)
	}
	return binary.BigEndian.Uint64(v), nil
}

func setChangesFrom(tx kvTx, g uint64) error {
	if err := tx.Bucket(bucketMeta).Put(keyChangesFrom, binary.BigEndian.AppendUint64(nil, g)); err != nil {
		return fmt.Errorf("keystore: write changesfrom: %w", err)
	}
	return nil
}

// raiseChangesFrom sets changesfrom to g if that is later.
func raiseChangesFrom(tx kvTx, g uint64) error {
	cur, err := changesFrom(tx)
	if err != nil {
		return err
	}
	if g <= cur {
		return nil
	}
	return setChangesFrom(tx, g)
}

// unstamp removes id's stamp and changed entry (if any).
func unstamp(tx kvTx, id uint64) error {
	stamps := tx.Bucket(bucketStamps)
	k := idKey(id)
	old := stamps.Get(k)
	if old == nil {
		return nil
	}
	if len(old) != 8 {
		return fmt.Errorf("keystore: %s: bad stamp of object %d: %w", tx.Path(), id, ErrCorrupt)
	}
	if err := tx.Bucket(bucketChanged).Delete(genIDKey(binary.BigEndian.Uint64(old), id)); err != nil {
		return fmt.Errorf("keystore: change log of object %d: %w", id, err)
	}
	if err := stamps.Delete(k); err != nil {
		return fmt.Errorf("keystore: change log of object %d: %w", id, err)
	}
	return nil
}

// logPut records that object id was written at generation gen.
func logPut(tx kvTx, id, gen uint64) error {
	if err := unstamp(tx, id); err != nil {
		return err
	}
	if err := tx.Bucket(bucketStamps).Put(idKey(id), binary.BigEndian.AppendUint64(nil, gen)); err != nil {
		return fmt.Errorf("keystore: change log of object %d: %w", id, err)
	}
	if err := tx.Bucket(bucketChanged).Put(genIDKey(gen, id), []byte{}); err != nil {
		return fmt.Errorf("keystore: change log of object %d: %w", id, err)
	}
	return nil
}

// logDelete records that object id was deleted at generation gen and
// prunes tombstones maxLogAge or more generations old.
func logDelete(tx kvTx, id, gen uint64) error {
	if err := unstamp(tx, id); err != nil {
		return err
	}
	deleted := tx.Bucket(bucketDeleted)
	if err := deleted.Put(genIDKey(gen, id), []byte{}); err != nil {
		return fmt.Errorf("keystore: tombstone of object %d: %w", id, err)
	}
	if gen <= maxLogAge {
		return nil
	}
	cutoff := gen - maxLogAge
	var pruned uint64
	c := deleted.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.First() {
		if len(k) != 16 {
			return fmt.Errorf("keystore: %s: bad tombstone %x: %w", tx.Path(), k, ErrCorrupt)
		}
		g := binary.BigEndian.Uint64(k)
		if g > cutoff {
			break
		}
		if err := c.Delete(); err != nil {
			return fmt.Errorf("keystore: prune tombstones: %w", err)
		}
		pruned = g
	}
	if pruned == 0 {
		return nil
	}
	return raiseChangesFrom(tx, pruned)
}

// resetLog empties the change log and makes it start at generation from
// (InitToken: every object is gone, every cache must reload).
func resetLog(tx kvTx, from uint64) error {
	for _, name := range bucketsV2 {
		if err := tx.DeleteBucket(name); err != nil {
			return fmt.Errorf("keystore: delete bucket %q: %w", name, err)
		}
		if _, err := tx.CreateBucket(name); err != nil {
			return fmt.Errorf("keystore: create bucket %q: %w", name, err)
		}
	}
	return raiseChangesFrom(tx, from)
}

// Changes reports what changed in the objects since generation since (as
// returned by an earlier Objects, Changes or Generation): the objects
// written since, whole (decoded as Objects does: with key nil, sealed
// attributes are absent), the IDs of the objects deleted since, and the
// generation the answer reflects. One read transaction; its cost is
// proportional to the number of objects changed, not to the token's size.
//
// full reports that the log cannot answer (since is older than the log
// keeps, the token was re-initialised or restored, the file is still of
// schema version 1, or since is ahead of the file): changed then holds
// every object, as Objects would return them, and deleted is nil — the
// caller replaces its cache. An uninitialised token gives
// ErrNotInitialized.
//
// On a token file, when the file is in the state it was in at the last
// answer (generation since, the same key), the answer comes from a few
// system calls without a transaction (stamp.go).
func (s *Store) Changes(key *Key, since uint64) ([]Object, []uint64, uint64, bool, error) {
	if s.remote != nil || s.closed.Load() {
		return s.changes(key, since)
	}
	var st fileStamp
	stamped := s.stamps.read(s.path, &st)
	if s.stamps.unchanged(&st, stamped, since, key) {
		return nil, nil, since, false, nil
	}
	changed, deleted, gen, full, err := s.changes(key, since)
	if err != nil {
		s.stamps.forget()
	} else {
		s.stamps.remember(&st, stamped, gen, key)
	}
	return changed, deleted, gen, full, err
}

// changes is Changes in one read transaction.
func (s *Store) changes(key *Key, since uint64) (changed []Object, deleted []uint64, gen uint64, full bool, err error) {
	err = s.viewSealed(key, func(tx kvTx, sl *sealer, g uint64) error {
		changed, deleted, full, gen = nil, nil, false, g
		if since == gen {
			return nil
		}
		full = since > gen || schemaVersion(tx) < 2
		if !full {
			from, err := changesFrom(tx)
			if err != nil {
				return err
			}
			full = since < from
		}
		if full {
			changed, err = s.objectsTx(tx, sl)
			return err
		}
		start := genIDKey(since+1, 0)
		objects := tx.Bucket(bucketObjects)
		c := tx.Bucket(bucketChanged).Cursor()
		for k, _ := c.Seek(start); k != nil; k, _ = c.Next() {
			if len(k) != 16 {
				return fmt.Errorf("keystore: %s: bad change log key %x: %w", s.path, k, ErrCorrupt)
			}
			id := binary.BigEndian.Uint64(k[8:])
			v := objects.Get(k[8:])
			if v == nil {
				return fmt.Errorf("keystore: %s: change log names missing object %d: %w", s.path, id, ErrCorrupt)
			}
			obj, err := toObject(id, v, sl, schemaVersion(tx))
			if err != nil {
				// Refused: the caller's cache must drop what it holds.
				s.refuse(id, err)
				deleted = append(deleted, id)
				continue
			}
			changed = append(changed, obj)
		}
		c = tx.Bucket(bucketDeleted).Cursor()
		for k, _ := c.Seek(start); k != nil; k, _ = c.Next() {
			if len(k) != 16 {
				return fmt.Errorf("keystore: %s: bad tombstone %x: %w", s.path, k, ErrCorrupt)
			}
			deleted = append(deleted, binary.BigEndian.Uint64(k[8:]))
		}
		return nil
	})
	if err != nil {
		return nil, nil, 0, false, err
	}
	return changed, deleted, gen, full, nil
}

// objectsTx decodes every object of tx, leaving out (and logging) the
// records refused.
func (s *Store) objectsTx(tx kvTx, sl *sealer) ([]Object, error) {
	var objs []Object
	schema := schemaVersion(tx)
	c := tx.Bucket(bucketObjects).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 8 || v == nil {
			return nil, fmt.Errorf("keystore: %s: bad object key %x: %w", tx.Path(), k, ErrCorrupt)
		}
		id := binary.BigEndian.Uint64(k)
		obj, err := toObject(id, v, sl, schema)
		if err != nil {
			s.refuse(id, err)
			continue
		}
		objs = append(objs, obj)
	}
	return objs, nil
}
