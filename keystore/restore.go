package keystore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Restoring a backup
//
// Restore never trusts the backup: it is written to a temporary file beside
// the token file and checked whole (bbolt's own page consistency check, the
// schema, the token record, every object record) before anything else
// happens. Only then is the token file replaced, by rename(2), so every
// reader sees either the old file or the new one, never a mixture.
//
// Processes that use the token while it is restored are not refused (the
// keystore keeps no file open between calls, so "in use" cannot be seen):
// Restore takes the token file's exclusive lock for the swap, so no
// transaction is in flight on the old file; a process that had opened the
// old file and was waiting for its lock notices the rename after locking
// (checkSame) and starts its transaction again on the new file. The
// restored file's generation is set above both the current and the
// backup's, so every process's object cache reloads. A process logged in
// to the token keeps working if the backup is of the same initialisation
// (same serial and token key); otherwise its next private operation fails
// (ErrKeyMismatch) and it must log in again with the backup's PINs.

// Restore replaces the token file at path by the backup read from r (as
// written by Store.Backup) and returns the number of bytes read. The backup
// is validated fully first; a backup that is not a sound token file gives
// ErrCorrupt and leaves path untouched. A missing token file is created.
func Restore(path string, r io.Reader, opts Options) (int64, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return 0, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("keystore: restore: create directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".restore-*")
	if err != nil {
		return 0, fmt.Errorf("keystore: restore: %w", err)
	}
	tmpPath := tmp.Name()
	defer os.Remove(tmpPath) // a no-op once renamed
	n, err := spool(tmp, r)
	if err != nil {
		return n, err
	}
	backupGen, err := validateBackup(tmpPath, o)
	if err != nil {
		return n, err
	}

	// Hold the current file's exclusive lock across the swap.
	release, curGen, err := lockForReplace(path, o)
	if err != nil {
		return n, err
	}
	defer release()
	gen := max(curGen, backupGen) + 1
	if err := setGeneration(tmpPath, gen); err != nil {
		return n, err
	}
	if err := os.Rename(tmpPath, path); err != nil {
		return n, fmt.Errorf("keystore: restore: replace %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // make the rename durable
		_ = d.Close()
	}
	return n, nil
}

// spool writes the backup read from r to the new file f (mode 0600) and
// closes it.
func spool(f *os.File, r io.Reader) (int64, error) {
	n, err := io.Copy(f, r)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("keystore: restore: write %s: %w", f.Name(), err)
	}
	return n, nil
}

// RestoreTo puts the token of the backup read from r (as Store.Backup
// writes it, of a token file or of a token in etcd) into dst, a token
// file or a token in etcd, and returns the number of bytes read. The
// backup is checked whole first, as Restore checks it: a bad one gives
// ErrCorrupt and leaves dst as it was. A store that holds a token, or
// anything else (a damaged token), is replaced only with replace, and
// otherwise refused with ErrTokenExists.
//
// For a token file this is Restore: the file replaced by rename. In etcd
// the replacement cannot be one transaction (etcd bounds the operations
// of one, and a token has many keys): the old token's buckets are deleted
// in one transaction, then the backup is copied in by Copy, its meta
// bucket last. Other hosts see the old token, then none (ErrNotInitialized,
// then ErrCorrupt while the copy runs), then the restored one, never a
// mixture. The restored generation is above both the old token's and the
// backup's and the change log starts there, so every host's object cache
// reloads whole, as after a file's restore.
func RestoreTo(dst *Store, r io.Reader, replace bool) (int64, error) {
	if !replace {
		if err := checkFree(dst); err != nil {
			return 0, err
		}
	}
	if dst.remote == nil {
		return Restore(dst.path, r, dst.opts)
	}
	dir, err := os.MkdirTemp("", "modexp-token-restore-*")
	if err != nil {
		return 0, fmt.Errorf("keystore: restore: %w", err)
	}
	defer os.RemoveAll(dir)
	tmp, err := os.OpenFile(filepath.Join(dir, "token.db"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, fmt.Errorf("keystore: restore: %w", err)
	}
	n, err := spool(tmp, r)
	if err != nil {
		return n, err
	}
	backupGen, err := validateBackup(tmp.Name(), dst.opts)
	if err != nil {
		return n, err
	}
	src := &Store{path: tmp.Name(), opts: dst.opts}
	var schema uint32
	if err := src.view(func(tx kvTx) error { schema = schemaVersion(tx); return nil }); err != nil {
		return n, err
	}
	if schema < keylessVersion {
		return n, fmt.Errorf("keystore: restore to %s: the backup has schema version %d, older than a token in etcd can be: restore it to a token file, open it for writing once (a login upgrades it), then copy it (store copy)", dst.path, schema)
	}
	curGen, _ := dst.Generation() // no token, or a damaged one: 0
	err = dst.updateMode(modeCreate, func(tx kvTx) error {
		if tx.Empty() {
			return errNoWrite
		}
		if !replace {
			return fmt.Errorf("keystore: restore to %s: %w", dst.path, ErrTokenExists)
		}
		for _, b := range tokenBuckets {
			if tx.Bucket(b) == nil {
				continue
			}
			if err := tx.DeleteBucket(b); err != nil {
				return fmt.Errorf("keystore: restore to %s: delete bucket %q: %w", dst.path, b, err)
			}
		}
		if !tx.Empty() {
			return fmt.Errorf("keystore: restore to %s: it holds keys that are not a token's (nothing deleted): clear the prefix first: %w", dst.path, ErrTokenExists)
		}
		return nil
	})
	if err != nil {
		return n, err
	}
	if err := setGeneration(src.path, max(curGen, backupGen)+1); err != nil {
		return n, err
	}
	if _, err := Copy(dst, src); err != nil {
		return n, fmt.Errorf("keystore: restore to %s (the old token is deleted: restore again, replacing): %w", dst.path, err)
	}
	return n, nil
}

// tokenBuckets are the buckets a token of any schema version may have.
var tokenBuckets = append(append(append([][]byte{}, bucketsV1...), bucketsV2...), bucketIndex, bucketIndexRev, bucketMeta)

// checkFree reports ErrTokenExists unless dst holds nothing: no token
// file, an empty one, or an etcd prefix without a token's keys. A damaged
// token is not nothing.
func checkFree(dst *Store) error {
	err := dst.view(func(tx kvTx) error {
		if tx.Empty() {
			return ErrNotInitialized
		}
		return nil
	})
	switch {
	case errors.Is(err, ErrNotInitialized):
		return nil
	case err == nil, errors.Is(err, ErrCorrupt):
		return fmt.Errorf("keystore: restore to %s: %w", dst.path, ErrTokenExists)
	}
	return err
}

// validateBackup checks a backup file whole and returns its generation.
func validateBackup(path string, o Options) (uint64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("keystore: restore: %w", err)
	}
	if fi.Size() == 0 {
		return 0, fmt.Errorf("keystore: restore: backup is empty: %w", ErrCorrupt)
	}
	s := &Store{path: path, opts: o}
	var gen uint64
	err = s.run(modeRead, func(btx *bolt.Tx) error {
		for cerr := range btx.Check() {
			return fmt.Errorf("keystore: restore: backup fails bbolt's check (%v): %w", cerr, ErrCorrupt)
		}
		tx := boltTx{btx}
		if _, err := loadToken(tx); err != nil {
			return err
		}
		var err error
		if gen, err = generation(tx); err != nil {
			return err
		}
		return btx.Bucket(bucketObjects).ForEach(func(k, v []byte) error {
			if len(k) != 8 || v == nil {
				return fmt.Errorf("keystore: restore: bad object key %x: %w", k, ErrCorrupt)
			}
			_, err := toObject(binary.BigEndian.Uint64(k), v, nil, schemaVersion(tx))
			return err
		})
	})
	if errors.Is(err, ErrNotInitialized) {
		return 0, fmt.Errorf("keystore: restore: backup holds no token: %w: %w", ErrCorrupt, err)
	}
	if err != nil {
		return 0, fmt.Errorf("keystore: restore: backup rejected: %w", err)
	}
	return gen, nil
}

// lockForReplace takes the exclusive lock of the token file at path (if it
// exists) and returns its release and the file's generation (0 when it is
// missing or unreadable: it is being replaced because it is damaged).
func lockForReplace(path string, o Options) (func(), uint64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return func() {}, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("keystore: restore: open %s: %w", path, err)
	}
	deadline := time.Now().Add(o.LockTimeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			_ = f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, 0, fmt.Errorf("keystore: restore: %s: lock not obtained in %v: %w", path, o.LockTimeout, ErrLocked)
			}
			return nil, 0, fmt.Errorf("keystore: restore: lock %s: %w", path, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	release := func() { _ = f.Close() } // closing drops the flock
	// Read the generation without bbolt's own open (which would try to
	// lock the file again through another descriptor and wait for us).
	gen := readGenerationUnlocked(path)
	return release, gen, nil
}

// readGenerationUnlocked reads a token file's generation while the caller
// holds its exclusive lock: bbolt is opened read-only without locking
// (Options.Timeout is irrelevant; flock is skipped with ReadOnly and a
// shared lock would block against our exclusive one, so a copy of the
// bytes is read instead). Damaged or missing: 0.
func readGenerationUnlocked(path string) (gen uint64) {
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 {
		return 0
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".gen-*")
	if err != nil {
		return 0
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		return 0
	}
	s := &Store{path: tmp.Name(), opts: Options{LockTimeout: time.Second, MaxPINTries: DefaultMaxPINTries, KDF: DefaultKDFParams}}
	_ = s.view(func(tx kvTx) error {
		if err := checkSchema(tx); err != nil {
			return err
		}
		g, err := generation(tx)
		gen = g
		return err
	})
	return gen
}

// setGeneration writes the change counter of a (validated, private) file.
func setGeneration(path string, gen uint64) error {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return fmt.Errorf("keystore: restore: reopen %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketMeta).Put(keyGeneration, binary.BigEndian.AppendUint64(nil, gen)); err != nil {
			return err
		}
		if tx.Bucket(bucketChanged) == nil {
			return nil // schema version 1: its migration starts the log
		}
		// Another file: every cache reloads it whole.
		return setChangesFrom(boltTx{tx}, gen)
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("keystore: restore: set generation: %w", err)
	}
	return nil
}
