// Package keystore stores one PKCS#11 token in one bbolt file, or under one
// key prefix of an etcd cluster (etcd.go, build tag modexp_etcd; both
// behind the transactional seam of kv.go, docs/FLEET.md): the token record
// (label, serial, PIN records), and the objects with their attributes,
// private ones sealed. What follows says "the file"; on etcd the same
// records live under the prefix.
//
// # Keys and PINs
//
// A random 32-byte token key is made at InitToken. Each PIN record (SO and
// user) holds it wrapped with AES-256-GCM under a key derived from the PIN
// with Argon2id; the salt and Argon2id parameters are stored with the
// record, so the parameters can be raised later (new records use the
// token's Policy, or Options.KDF where costlier). The PIN itself is never
// stored. Consecutive wrong PINs are counted in the file per user type;
// after the token's limit (its Policy, stored at InitToken; a Store's
// Options.MaxPINTries may only lower it) the PIN is locked (ErrPINLocked
// even with the right PIN) until the SO re-initialises the user PIN
// (InitUserPIN) or the token (SO). Every attempt pays the
// Argon2id derivation, and the file lock is never held during it.
//
// # Sealed attributes
//
// Attributes listed in Object.Sealed are stored as AES-256-GCM ciphertext
// under a sub-key of the token key, with the object ID and attribute type
// as additional data: a sealed value altered, or moved to another object or
// attribute, fails with ErrUnsealFailed. Other attributes are stored in the
// clear, so public objects can be listed without a PIN.
//
// # Whole records
//
// From schema version 3 on, every object record written with the token
// key carries a MAC over the whole record (ID, attribute types, which are
// sealed, every value) under another sub-key; records of keys, of private
// or trusted objects, and of any object with a sealed value must carry one,
// and a private value in the clear is refused. Reads with the key check
// the MACs and leave refused records out (logged to Options.Logger);
// reads without a key serve public attributes unverified. The first login
// upgrades a version-2 file. The details, and what this does not cover,
// are in auth.go and docs/THREATS.md.
//
// # Several processes
//
// bbolt holds an exclusive file lock while a file is open for writing. A
// Store therefore never keeps the file open: each call opens it for one
// transaction (read-only, with a shared lock, for reads), waits at most
// Options.LockTimeout for the lock (ErrLocked after that), and closes it.
// Every change bumps a generation counter in the file; Generation is a
// cheap way for a caller that caches objects to notice other processes'
// changes, and Changes tells it what changed since the generation its
// cache reflects (objects written, IDs deleted: a change log in the file,
// schema version 2, see changes.go), so a cache of 100,000 objects is
// updated at the cost of the change. The Store itself caches no objects:
// it remembers only the file's stamp at the last Changes answer (its
// inode, times and both bbolt meta pages, stamp.go), so that asking again
// of an unchanged file costs a few system calls, not a transaction.
//
// # Damaged files
//
// A missing (or empty) file is an uninitialised token: nothing is created
// before InitToken. A file that is not a token file, is truncated, or holds
// records that do not decode gives ErrCorrupt, never a panic (bbolt's
// panics and faults on a damaged memory map are recovered) and never a
// silent re-creation: InitToken refuses it too.
//
// # What this package must never do
//
// Print (it is loaded into other programs; stdout may be an RPC pipe),
// keep the token file open between calls, hold the file lock across an
// Argon2id derivation, write a PIN or an unsealed private value to the
// file, or return slices that alias bbolt's memory map.
package keystore
