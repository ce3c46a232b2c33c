package keystore

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// Object is a stored object: its attributes by type. Sealed lists the types
// whose values are encrypted at rest (private objects' attributes, sensitive
// values); other attributes are stored in the clear so public objects are
// readable without a PIN. Entries of Sealed for types absent from Attrs are
// not stored.
type Object struct {
	ID     uint64 // stable, assigned by Put when 0
	Attrs  map[uint64][]byte
	Sealed map[uint64]bool
	// Verified (read only): the record's MAC was checked under the token
	// key (auth.go). False for every object read without a key, and for
	// public objects stored without a MAC.
	Verified bool
}

func idKey(id uint64) []byte { return binary.BigEndian.AppendUint64(nil, id) }

// viewSealed runs f in one read transaction with the sealer for key (nil
// for a nil key, wiped when f returns) and the token's generation.
func (s *Store) viewSealed(key *Key, f func(tx kvTx, sl *sealer, gen uint64) error) error {
	return s.view(func(tx kvTx) error {
		sl, err := s.openSealer(tx, key)
		if err != nil {
			return err
		}
		defer sl.wipe()
		gen, err := generation(tx)
		if err != nil {
			return err
		}
		return f(tx, sl, gen)
	})
}

// openSealer returns the sealer for key on the token of tx (nil for a nil
// key). In a write transaction with a key, a file of schema version 2 is
// upgraded first (auth.go).
func (s *Store) openSealer(tx kvTx, key *Key) (*sealer, error) {
	rec, err := loadToken(tx)
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, nil
	}
	sl, err := key.sealer(rec.Serial)
	if err != nil {
		return nil, err
	}
	if tx.Writable() {
		if err := upgradeAuth(tx, sl, s.logRefusedMigration); err != nil {
			sl.wipe()
			return nil, err
		}
	}
	return sl, nil
}

// logRefusedMigration logs a record the migration to schema 3 left alone.
func (s *Store) logRefusedMigration(msg string, args ...any) {
	s.opts.Logger.Error("keystore: "+msg, append([]any{"path", s.path}, args...)...)
}

// toObject decodes a stored record into an Object, opening sealed values
// and checking the record's MAC when sl is not nil; schema is the file's
// schema version (auth.go). Every error concerns this record only.
func toObject(id uint64, v []byte, sl *sealer, schema uint32) (Object, error) {
	rec, err := decodeObjectRecord(v)
	if err != nil {
		return Object{}, fmt.Errorf("keystore: object %d: %w: %w", id, ErrCorrupt, err)
	}
	if err := rec.checkPolicy(id, schema); err != nil {
		return Object{}, err
	}
	obj := Object{ID: id, Attrs: make(map[uint64][]byte, len(rec.Attrs))}
	if sl != nil && rec.MAC != nil {
		if err := rec.verify(id, sl); err != nil {
			return Object{}, err
		}
		obj.Verified = true
	}
	label := aadAttr
	if schema < SchemaAuth {
		label = aadAttrV1
	}
	for _, a := range rec.Attrs {
		if !a.Sealed {
			obj.Attrs[a.Type] = a.Value
			continue
		}
		if obj.Sealed == nil {
			obj.Sealed = make(map[uint64]bool, len(rec.Attrs))
		}
		obj.Sealed[a.Type] = true
		if sl == nil {
			continue
		}
		pt, err := sl.openLabel(label, id, a.Type, a.Value)
		if err != nil {
			return Object{}, err
		}
		obj.Attrs[a.Type] = pt
	}
	return obj, nil
}

// refuse logs a record left out of a listing.
func (s *Store) refuse(id uint64, err error) {
	s.opts.Logger.Error("keystore: object record refused", "path", s.path, "id", id, "err", err)
}

// Objects returns every object with the generation it reflects. With key
// nil, sealed attributes are absent from Attrs (Sealed still lists them;
// Sealed is nil for an object with nothing sealed). Records that fail
// their checks (auth.go) are left out and logged.
// One read transaction; cost is linear in the number of objects.
func (s *Store) Objects(key *Key) ([]Object, uint64, error) {
	var objs []Object
	var gen uint64
	err := s.viewSealed(key, func(tx kvTx, sl *sealer, g uint64) error {
		var err error
		gen = g
		objs, err = s.objectsTx(tx, sl)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return objs, gen, nil
}

// Get returns the object with id (ErrNotFound if none; ErrCorrupt with
// ErrUnauthentic or ErrUnsealFailed for a refused record, auth.go). With
// key nil, sealed attributes are absent from Attrs.
func (s *Store) Get(key *Key, id uint64) (Object, error) {
	var obj Object
	err := s.view(func(tx kvTx) error {
		sl, err := s.openSealer(tx, key)
		if err != nil {
			return err
		}
		defer sl.wipe()
		v := tx.Bucket(bucketObjects).Get(idKey(id))
		if v == nil {
			return fmt.Errorf("keystore: object %d: %w", id, ErrNotFound)
		}
		obj, err = toObject(id, v, sl, schemaVersion(tx))
		if err != nil {
			s.refuse(id, err)
		}
		return err
	})
	return obj, err
}

// Put stores obj (new if ID is 0), sealing Sealed attributes under key, and
// returns its ID. key may be nil only if nothing is sealed. Putting a
// non-zero ID that is not stored fails with ErrNotFound (an object deleted
// by another process is not resurrected). The object replaces the stored
// one whole. One write transaction.
func (s *Store) Put(key *Key, obj Object) (uint64, error) {
	ids, err := s.PutObjects(key, []Object{obj})
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// PutObjects stores several objects as Put does, all in one write
// transaction: a crash or an error stores all of them or none (a key pair
// made by C_GenerateKeyPair is never left half stored). It returns their
// IDs in order.
func (s *Store) PutObjects(key *Key, objs []Object) ([]uint64, error) {
	for _, obj := range objs {
		for t := range obj.Attrs {
			if obj.Sealed[t] && key == nil {
				return nil, fmt.Errorf("keystore: put: sealed attributes need a key: %w", ErrKeyMismatch)
			}
		}
	}
	var ids []uint64
	err := s.update(func(tx kvTx) error {
		ids = ids[:0]
		sl, err := s.openSealer(tx, key)
		if err != nil {
			return err
		}
		defer sl.wipe()
		gen, err := bumpGeneration(tx)
		if err != nil {
			return err
		}
		for _, obj := range objs {
			id, err := putTx(tx, sl, obj, schemaVersion(tx))
			if err != nil {
				return err
			}
			if err := logPut(tx, id, gen); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// putTx writes one object in tx, MAC'd when sl is
// not nil (the file is then of schema version 3 or later: openSealer upgraded it).
// A record that would need a MAC (auth.go) is refused without a key.
func putTx(tx kvTx, sl *sealer, obj Object, schema uint32) (uint64, error) {
	types := make([]uint64, 0, len(obj.Attrs))
	for t := range obj.Attrs {
		types = append(types, t)
	}
	slices.Sort(types)
	id := obj.ID
	objects := tx.Bucket(bucketObjects)
	var err error
	if id == 0 {
		if id, err = objects.NextSequence(); err != nil {
			return 0, fmt.Errorf("keystore: allocate object ID: %w", err)
		}
	} else if objects.Get(idKey(id)) == nil {
		return 0, fmt.Errorf("keystore: put object %d: %w", id, ErrNotFound)
	}
	rec := &objectRecord{Attrs: make([]storedAttr, 0, len(types))}
	for _, t := range types {
		a := storedAttr{Type: t, Sealed: obj.Sealed[t], Value: obj.Attrs[t]}
		if a.Sealed {
			if a.Value, err = sl.seal(id, t, obj.Attrs[t]); err != nil {
				return 0, err
			}
		}
		if a.Value == nil {
			a.Value = []byte{}
		}
		rec.Attrs = append(rec.Attrs, a)
	}
	if err := rec.checkPolicy(id, 0); err != nil {
		return 0, err
	}
	var mac func([]byte) []byte
	switch {
	case sl != nil && schema >= SchemaAuth:
		mac = sl.macFor(id)
	case rec.protected():
		return 0, fmt.Errorf("keystore: put object %d: a private, trusted or key object needs the token key: %w", id, ErrKeyMismatch)
	}
	if err := objects.Put(idKey(id), encodeObjectRecord(rec, mac)); err != nil {
		return 0, fmt.Errorf("keystore: write object %d: %w", id, err)
	}
	return id, nil
}

// Delete removes the object with id (ErrNotFound if none). One write
// transaction.
func (s *Store) Delete(id uint64) error {
	return s.update(func(tx kvTx) error {
		if err := checkSchema(tx); err != nil {
			return err
		}
		objects := tx.Bucket(bucketObjects)
		k := idKey(id)
		if objects.Get(k) == nil {
			return fmt.Errorf("keystore: delete object %d: %w", id, ErrNotFound)
		}
		if err := objects.Delete(k); err != nil {
			return fmt.Errorf("keystore: delete object %d: %w", id, err)
		}
		gen, err := bumpGeneration(tx)
		if err != nil {
			return err
		}
		return logDelete(tx, id, gen)
	})
}
