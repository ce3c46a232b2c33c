package keystore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Store is one token file (bbolt). Safe for concurrent use and for use by
// several processes at once: it holds the file lock only per transaction
// (a shared lock for reads, an exclusive one for writes), opening and
// closing the bbolt file around each.
type Store struct {
	path string
	opts Options
	// remote, when not nil, is the store the token lives in instead of a
	// file (etcd.go); path is then only its name in messages.
	remote remoteBackend
	// mu orders this process's own transactions (writers exclusive), so
	// goroutines of one process queue here instead of polling the flock.
	mu     sync.RWMutex
	closed atomic.Bool
	// stamps remembers the file's state at the last Changes answer
	// (stamp.go): "nothing changed" without a transaction.
	stamps stampCache
	// pins are the remembered PINs (pincache.go, Options.PINCache).
	pins pinCache
}

// Open opens (without creating) the token file at path. A missing file is
// not an error: the Store reports ErrNotInitialized until InitToken. An
// existing file is checked (bbolt structure, schema version, token record):
// a file that is not a token file, is truncated or damaged gives ErrCorrupt.
func Open(path string, opts Options) (*Store, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Store{path: path, opts: o}
	err = s.view(func(tx kvTx) error {
		_, err := loadToken(tx)
		return err
	})
	if err != nil && !errors.Is(err, ErrNotInitialized) {
		return nil, err
	}
	return s, nil
}

// Close releases the store. The file is not held open between calls, so
// Close only makes later calls fail with ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.forgetPINs(nil)
	if s.remote == nil {
		return nil
	}
	return s.remote.close()
}

// Path returns the token file's path.
func (s *Store) Path() string { return s.path }

// Backup writes a consistent copy of the token to w (one read
// transaction) and returns the number of bytes written: a token file, for
// a token in a file or in etcd alike (copy.go). Sealed attributes and
// wrapped keys stay sealed in the copy.
func (s *Store) Backup(w io.Writer) (int64, error) {
	if s.remote != nil {
		return s.backupRemote(w)
	}
	var n int64
	err := s.run(modeRead, func(tx *bolt.Tx) error {
		if _, err := loadToken(boltTx{tx}); err != nil {
			return err
		}
		var err error
		n, err = tx.WriteTo(w)
		if err != nil {
			return fmt.Errorf("keystore: backup %s: %w", s.path, err)
		}
		return nil
	})
	return n, err
}

// txMode says how a transaction opens the file.
type txMode int

const (
	modeRead   txMode = iota // read-only open, shared lock
	modeWrite                // read-write open of an existing file
	modeCreate               // read-write open, creating the file (InitToken only)
)

// errNoWrite, returned by an update function, rolls the transaction back
// without reporting an error (the function recorded its outcome itself).
var errNoWrite = errors.New("keystore: nothing to write")

// remoteBackend is a store other than the token file (the seam, kv.go).
type remoteBackend interface {
	// view runs fn in a read-only snapshot transaction.
	view(fn func(kvTx) error) error
	// update runs fn in a serializable read-write transaction, again
	// from the start if it conflicts with another writer; fn returning
	// errNoWrite rolls it back.
	update(fn func(kvTx) error) error
	// close releases the backend's connections.
	close() error
	// follow calls changed after every change to the token by anyone.
	follow(changed func())
	// following reports whether follow's watch is established now.
	following() bool
}

// Follow has changed called after every change committed to the token, by
// this process or another host, and whenever the notification stream is
// re-established (changes may have been missed meanwhile): the caller then
// asks Changes. It reports false for a token file (no notifications: ask
// Generation or Changes). Calls come from one goroutine, in order; Close
// stops them.
func (s *Store) Follow(changed func()) bool {
	if s.remote == nil || s.closed.Load() {
		return false
	}
	s.remote.follow(changed)
	return true
}

// Following reports whether Follow's notifications are flowing now: while
// true, a cache that applied every notified change is up to date without
// asking the store.
func (s *Store) Following() bool { return s.remote != nil && s.remote.following() }

func (s *Store) view(fn func(kvTx) error) error {
	if s.closed.Load() {
		return fmt.Errorf("keystore: %s: %w", s.path, ErrClosed)
	}
	if s.remote != nil {
		return s.remote.view(fn)
	}
	return s.run(modeRead, func(tx *bolt.Tx) error { return fn(boltTx{tx}) })
}

func (s *Store) update(fn func(kvTx) error) error {
	return s.updateMode(modeWrite, fn)
}

// updateMode is update, or with modeCreate the transaction that makes a
// new token (a file is created).
func (s *Store) updateMode(mode txMode, fn func(kvTx) error) error {
	if s.closed.Load() {
		return fmt.Errorf("keystore: %s: %w", s.path, ErrClosed)
	}
	if s.remote != nil {
		if mode == modeWrite {
			// A transaction must find a token, as with a file.
			inner := fn
			fn = func(tx kvTx) error {
				if tx.Empty() {
					return fmt.Errorf("keystore: %s: %w", s.path, ErrNotInitialized)
				}
				return inner(tx)
			}
		}
		err := s.remote.update(fn)
		if errors.Is(err, errNoWrite) {
			err = nil
		}
		return err
	}
	return s.run(mode, func(tx *bolt.Tx) error { return fn(boltTx{tx}) })
}

// run opens the file, runs fn in one transaction and closes the file.
//
// bbolt maps the file into memory and trusts what it finds there: a damaged
// file can make it panic, and pages past the end of a truncated file fault
// (SIGBUS). Both are turned into ErrCorrupt: faults become panics
// (debug.SetPanicOnFault) and panics are recovered here; the file descriptor
// (and with it the lock) is released through the OpenFile hook.
func (s *Store) run(mode txMode, fn func(*bolt.Tx) error) (err error) {
	if s.closed.Load() {
		return fmt.Errorf("keystore: %s: %w", s.path, ErrClosed)
	}
	if mode == modeRead {
		s.mu.RLock()
		defer s.mu.RUnlock()
	} else {
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	if mode != modeCreate {
		fi, err := os.Stat(s.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("keystore: %s: %w", s.path, ErrNotInitialized)
		case err != nil:
			return fmt.Errorf("keystore: %w", err)
		case fi.Size() == 0:
			// Nothing was ever written: no data to lose, not corrupt.
			return fmt.Errorf("keystore: %s: empty file: %w", s.path, ErrNotInitialized)
		}
	}
	if mode == modeWrite {
		// A read-only open first: it checks the file's length against its
		// meta page before a read-write open would load the freelist from
		// beyond the end of a truncated file.
		if err := s.runReplaced(modeRead, func(*bolt.Tx) error { return nil }); err != nil {
			return err
		}
	}
	return s.runReplaced(mode, fn)
}

// errReplaced: the path was renamed over (Restore) between bbolt's open
// and its lock; the transaction must run on the new file.
var errReplaced = errors.New("keystore: token file replaced during open")

// runReplaced is runOnce, started again (a few times) when the file was
// replaced by Restore while this process was waiting for its lock: a
// transaction on the old, unlinked file would be lost.
func (s *Store) runReplaced(mode txMode, fn func(*bolt.Tx) error) error {
	var err error
	for range 5 {
		if err = s.runOnce(mode, fn); !errors.Is(err, errReplaced) {
			return err
		}
	}
	return fmt.Errorf("keystore: %s: %w", s.path, ErrLocked)
}

// runOnce is run without the in-process lock and the checks on the path.
func (s *Store) runOnce(mode txMode, fn func(*bolt.Tx) error) (err error) {
	var file *os.File
	bopts := &bolt.Options{
		Timeout:  s.opts.LockTimeout,
		ReadOnly: mode == modeRead,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			if mode != modeCreate {
				flag &^= os.O_CREATE
			}
			f, err := os.OpenFile(name, flag, perm)
			file = f
			return f, err
		},
	}

	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if file != nil {
				// bbolt's memory map of the file is lost with its state
				// and keeps the open file alive, so closing alone would
				// not release the lock: unlock explicitly.
				_ = syscall.Flock(int(file.Fd()), syscall.LOCK_UN)
				_ = file.Close()
			}
			err = fmt.Errorf("keystore: %s: bbolt failed on the file (%v): %w", s.path, r, ErrCorrupt)
		}
	}()

	db, err := bolt.Open(s.path, 0o600, bopts)
	if err != nil {
		return s.openError(err)
	}
	txfn := func(tx *bolt.Tx) error {
		if err := s.checkSize(file, tx); err != nil {
			return err
		}
		if err := s.checkSame(file); err != nil {
			return err
		}
		return fn(tx)
	}
	if mode == modeRead {
		err = db.View(txfn)
	} else {
		err = db.Update(txfn)
	}
	if errors.Is(err, errNoWrite) {
		err = nil
	}
	if cerr := db.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("keystore: close %s: %w", s.path, cerr)
	}
	return err
}

// checkSize refuses a file shorter than its own meta page says (a
// truncated file): reading on would fault.
func (s *Store) checkSize(f *os.File, tx *bolt.Tx) error {
	if f == nil {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("keystore: %w", err)
	}
	if want := tx.Size(); fi.Size() < want {
		return fmt.Errorf("keystore: %s: truncated (%d bytes, database needs %d): %w", s.path, fi.Size(), want, ErrCorrupt)
	}
	return nil
}

// checkSame reports errReplaced when the path no longer names the file
// this transaction holds the lock of (Restore renamed a new file over it).
func (s *Store) checkSame(f *os.File) error {
	if f == nil {
		return nil
	}
	held, err := f.Stat()
	if err != nil {
		return fmt.Errorf("keystore: %w", err)
	}
	now, err := os.Stat(s.path)
	if err != nil || !os.SameFile(held, now) {
		return errReplaced
	}
	return nil
}

// openError classifies a bbolt.Open failure.
func (s *Store) openError(err error) error {
	var pathErr *fs.PathError
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return fmt.Errorf("keystore: %s: lock not obtained in %v: %w", s.path, s.opts.LockTimeout, ErrLocked)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("keystore: %s: %w", s.path, ErrNotInitialized)
	case errors.As(err, &pathErr):
		// Permission denied, I/O error...: not the file's content.
		return fmt.Errorf("keystore: open: %w", err)
	default:
		// Invalid meta pages, version or checksum mismatch, a page size
		// that cannot be mapped: the content is not a sound bbolt file.
		return fmt.Errorf("keystore: %s: not a readable bbolt file (%v): %w", s.path, err, ErrCorrupt)
	}
}
