package keystore

import "errors"

// Sentinel errors. Every error the package returns wraps at most a few of
// these, with context (the file path, the object ID, the attribute type);
// test for them with [errors.Is].
var (
	// ErrNotInitialized: there is no token file (or it holds no token
	// record yet). InitToken creates one.
	ErrNotInitialized = errors.New("keystore: token not initialized")

	// ErrCorrupt: the token file exists but cannot be trusted: it is not a
	// bbolt file, it is truncated, a record does not decode, a sealed
	// attribute fails authentication, or its schema is unknown. The file is
	// never repaired or re-created silently: move it away to start again.
	ErrCorrupt = errors.New("keystore: token file corrupt")

	// ErrSchemaVersion: the file was written by a newer keystore (its schema
	// version is higher than this code knows). Returned wrapped together with
	// ErrCorrupt.
	ErrSchemaVersion = errors.New("keystore: unsupported schema version")

	// ErrUnsealFailed: a sealed attribute did not authenticate under the
	// token key: it was altered, or moved to another object or attribute
	// type. Returned wrapped together with ErrCorrupt.
	ErrUnsealFailed = errors.New("keystore: sealed attribute failed authentication")

	// ErrUnauthentic: an object record failed its whole-record check (its
	// MAC is wrong or missing where one is needed, or it stores a private
	// value in the clear; auth.go). Returned wrapped together with
	// ErrCorrupt; listings leave such records out instead.
	ErrUnauthentic = errors.New("keystore: object record failed authentication")

	// ErrPINIncorrect: the PIN is wrong; the failure was counted and
	// persisted.
	ErrPINIncorrect = errors.New("keystore: PIN incorrect")

	// ErrPINLocked: too many consecutive wrong PINs; even the right PIN is
	// refused. The SO unlocks the user with InitUserPIN; a locked SO PIN
	// can only be cleared by moving the token file away.
	ErrPINLocked = errors.New("keystore: PIN locked")

	// ErrPINNotSet: the user PIN was never initialised (C_Login before
	// C_InitPIN).
	ErrPINNotSet = errors.New("keystore: user PIN not initialized")

	// ErrNotFound: no object with that ID.
	ErrNotFound = errors.New("keystore: object not found")

	// ErrLocked: another process held the token file's lock for longer than
	// Options.LockTimeout.
	ErrLocked = errors.New("keystore: token file busy")

	// ErrKeyMismatch: the Key does not belong to this token (it was
	// unlocked before the token was re-initialised), or a non-SO key was
	// used where the SO must be logged in.
	ErrKeyMismatch = errors.New("keystore: key does not belong to this token")

	// ErrClosed: the Store was closed.
	ErrClosed = errors.New("keystore: store closed")
)
