package keystore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Copying a token between stores
//
// Copy moves a token from one store to another (a file to etcd, etcd to a
// file) record by record, as stored: the token record with its PIN
// records, the objects with their sealed values and MACs, and the change
// log (not the CKA_ID index of a version-3 file, which nothing reads).
// Nothing is opened or re-sealed (no PIN is needed), and the copy opens
// with the same PINs. The source is read in one read
// transaction (a consistent copy, taken online). The destination is
// written in batches (etcd bounds the operations of one transaction),
// its meta bucket last: until the copy is complete the destination holds
// no readable token (ErrCorrupt), never a partial one that opens.

// copyBatch is the number of keys written per destination transaction.
const copyBatch = 100

// copyBuckets are the buckets a copy carries, meta last.
var copyBuckets = append(append([][]byte{}, append(bucketsV1, bucketsV2...)...), bucketMeta)

// Copy copies the token of src into dst, which must hold none
// (ErrTokenExists otherwise), and returns the number of objects copied.
func Copy(dst, src *Store) (int, error) {
	type bucket struct {
		name []byte
		seq  uint64
		kvs  [][2][]byte
	}
	var buckets []bucket
	objects := 0
	err := src.view(func(tx kvTx) error {
		buckets, objects = nil, 0
		if _, err := loadToken(tx); err != nil {
			return err
		}
		if schemaVersion(tx) < keylessVersion {
			return fmt.Errorf("keystore: copy %s: schema version %d: open it for writing once first (a login upgrades it)", src.path, schemaVersion(tx))
		}
		for _, name := range copyBuckets {
			b := tx.Bucket(name)
			bk := bucket{name: name, seq: b.Sequence()}
			c := b.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				bk.kvs = append(bk.kvs, [2][]byte{bytes.Clone(k), bytes.Clone(v)})
			}
			if bytes.Equal(name, bucketObjects) {
				objects = len(bk.kvs)
			}
			buckets = append(buckets, bk)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if dst.remote == nil {
		if err := os.MkdirAll(filepath.Dir(dst.path), 0o700); err != nil {
			return 0, fmt.Errorf("keystore: copy: create directory: %w", err)
		}
	}
	// The first transaction makes the buckets (not meta): the destination
	// must be empty.
	err = dst.updateMode(modeCreate, func(tx kvTx) error {
		if !tx.Empty() {
			return fmt.Errorf("keystore: copy to %s: %w", dst.path, ErrTokenExists)
		}
		for _, b := range buckets[:len(buckets)-1] {
			nb, err := tx.CreateBucket(b.name)
			if err != nil {
				return fmt.Errorf("keystore: copy: create bucket %q: %w", b.name, err)
			}
			if err := nb.SetSequence(b.seq); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, b := range buckets[:len(buckets)-1] {
		for i := 0; i < len(b.kvs); i += copyBatch {
			batch := b.kvs[i:min(i+copyBatch, len(b.kvs))]
			err := dst.updateMode(modeCreate, func(tx kvTx) error {
				nb := tx.Bucket(b.name)
				if nb == nil {
					return fmt.Errorf("keystore: copy to %s: bucket %q gone: %w", dst.path, b.name, ErrCorrupt)
				}
				for _, kv := range batch {
					if err := nb.Put(kv[0], kv[1]); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return 0, fmt.Errorf("keystore: copy to %s (incomplete: remove it before trying again): %w", dst.path, err)
			}
		}
	}
	meta := buckets[len(buckets)-1]
	err = dst.updateMode(modeCreate, func(tx kvTx) error {
		nb, err := tx.CreateBucket(meta.name)
		if err != nil {
			return err
		}
		for _, kv := range meta.kvs {
			if err := nb.Put(kv[0], kv[1]); err != nil {
				return err
			}
		}
		_, err = loadToken(tx)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("keystore: copy to %s (incomplete: remove it before trying again): %w", dst.path, err)
	}
	return objects, nil
}

// ErrTokenExists: the destination of a copy already holds a token (or
// something else).
var ErrTokenExists = errors.New("keystore: destination holds a token")

// backupRemote is Backup of a token not in a file: the token is copied
// (in one read transaction, as Copy reads) into a token file in a private
// temporary directory, whose bytes are the backup; the file is removed
// after. A backup of an etcd token is so a token file like any other: it
// restores to a file or to etcd (RestoreTo).
func (s *Store) backupRemote(w io.Writer) (int64, error) {
	dir, err := os.MkdirTemp("", "modexp-token-backup-*")
	if err != nil {
		return 0, fmt.Errorf("keystore: backup %s: %w", s.path, err)
	}
	defer os.RemoveAll(dir)
	tmp := &Store{path: filepath.Join(dir, "token.db"), opts: s.opts}
	if _, err := Copy(tmp, s); err != nil {
		return 0, fmt.Errorf("keystore: backup %s: %w", s.path, err)
	}
	return tmp.Backup(w)
}
