package keystore

import (
	"bytes"
	"fmt"
)

// UserType selects a PIN record.
type UserType int

// PIN owners.
const (
	SO   UserType = 0 // CKU_SO
	User UserType = 1 // CKU_USER
)

func (u UserType) String() string {
	switch u {
	case SO:
		return "SO"
	case User:
		return "user"
	}
	return fmt.Sprintf("UserType(%d)", int(u))
}

func (u UserType) valid() error {
	if u != SO && u != User {
		return fmt.Errorf("keystore: unknown user type %d", int(u))
	}
	return nil
}

// PIN checking
//
// A PIN attempt reads the PIN record (salt, parameters, wrapped key, tries)
// in a read transaction, derives the key with Argon2id outside any lock,
// then decides in a second transaction against the record as it is then:
// locked (tries ≥ MaxPINTries) → ErrPINLocked whatever the PIN; wrong →
// tries+1 persisted, ErrPINIncorrect; right → tries reset. A right PIN with
// no failures to reset needs no write. If the record changed in between
// (another process set the PIN), the attempt starts again.

const pinRetries = 3

// checkPIN verifies pin for who and returns the unlocked key. If then is
// not nil it runs in the write transaction that accepted the PIN and may
// change rec (which is saved afterwards).
func (s *Store) checkPIN(who UserType, pin []byte, then func(tx kvTx, rec *tokenRecord, key *Key) error) (*Key, error) {
	if err := who.valid(); err != nil {
		return nil, err
	}
	for range pinRetries {
		var snap pinRecord
		var serial string
		err := s.view(func(tx kvTx) error {
			rec, err := loadToken(tx)
			if err != nil {
				return err
			}
			pr := rec.pin(who)
			if pr == nil {
				return fmt.Errorf("keystore: %s: %w", s.path, ErrPINNotSet)
			}
			snap, serial = *pr, rec.Serial
			return nil
		})
		if err != nil {
			return nil, err
		}

		// A remembered right PIN skips Argon2id (pincache.go); any other
		// PIN pays it, and is decided (counted) below as before.
		kek := s.cachedKEK(who, serial, &snap, pin)
		cached := kek != nil
		if !cached {
			kek = deriveKEK(pin, snap.Salt, snap.KDF)
		}
		key := &Key{serial: serial, who: who, remembered: cached}
		ok := unwrapTokenKey(&key.key, kek, snap.Wrapped, who, serial)
		if ok && !cached && then == nil {
			s.rememberPIN(who, serial, &snap, pin, kek)
		}
		clear(kek)

		same := func(rec *tokenRecord) (*pinRecord, bool) {
			pr := rec.pin(who)
			return pr, pr != nil && rec.Serial == serial && pr.KDF == snap.KDF &&
				bytes.Equal(pr.Salt, snap.Salt) && bytes.Equal(pr.Wrapped, snap.Wrapped)
		}

		var outcome error
		changed := false
		if ok && snap.Tries == 0 && then == nil {
			// Fast path: confirm nothing changed meanwhile, no write.
			err = s.view(func(tx kvTx) error {
				rec, err := loadToken(tx)
				if err != nil {
					return err
				}
				pr, same := same(rec)
				changed = !same || pr.Tries != 0
				return nil
			})
			if err == nil && !changed {
				return key, nil
			}
			if err != nil {
				key.Wipe()
				return nil, err
			}
			// Changed: decide in a write transaction below.
		}
		err = s.update(func(tx kvTx) error {
			rec, err := loadToken(tx)
			if err != nil {
				return err
			}
			pr, same := same(rec)
			if !same {
				changed = true
				return errNoWrite
			}
			changed = false
			switch {
			case int(pr.Tries) >= s.maxTries(rec):
				outcome = fmt.Errorf("keystore: %s PIN: %w", who, ErrPINLocked)
				return errNoWrite
			case !ok:
				pr.Tries++
				outcome = fmt.Errorf("keystore: %s PIN (%d tries left): %w", who, max(0, s.maxTries(rec)-int(pr.Tries)), ErrPINIncorrect)
			default:
				if pr.Tries == 0 && then == nil {
					return errNoWrite
				}
				pr.Tries = 0
				if then != nil {
					if err := then(tx, rec, key); err != nil {
						return err
					}
				}
			}
			return saveTokenChange(tx, rec)
		})
		if err == nil && changed {
			key.Wipe()
			continue
		}
		if err == nil {
			err = outcome
		}
		if err != nil {
			key.Wipe()
			return nil, err
		}
		return key, nil
	}
	return nil, fmt.Errorf("keystore: %s: %s PIN record kept changing during login: %w", s.path, who, ErrLocked)
}

// Login checks the PIN of who (counting failures, persisted) and returns
// the unlocked token key. Every attempt pays the Argon2id derivation, even
// when the PIN is locked, except a right PIN remembered by
// Options.PINCache (pincache.go). Errors: ErrPINIncorrect, ErrPINLocked,
// ErrPINNotSet (user PIN never set), ErrNotInitialized.
//
// A file of schema version 2 is upgraded to version 3 (its records
// MAC'd, auth.go) by the first login; a failed upgrade fails the login.
func (s *Store) Login(who UserType, pin []byte) (*Key, error) {
	key, err := s.checkPIN(who, pin, nil)
	if err != nil {
		return nil, err
	}
	if err := s.upgrade(key); err != nil {
		key.Wipe()
		return nil, err
	}
	return key, nil
}

// upgrade runs the migrations that need the token key, if the file needs
// them, and gives a token without a stored policy this Store's (one read
// transaction when nothing is needed).
func (s *Store) upgrade(key *Key) error {
	var need bool
	err := s.view(func(tx kvTx) error {
		rec, err := loadToken(tx)
		if err != nil {
			return err
		}
		need = schemaVersion(tx) < SchemaVersion || rec.Policy == nil
		return nil
	})
	if err != nil || !need {
		return err
	}
	return s.update(func(tx kvTx) error {
		sl, err := s.openSealer(tx, key) // upgrades the schema
		sl.wipe()
		if err != nil {
			return err
		}
		rec, err := loadToken(tx)
		if err != nil || rec.Policy != nil {
			return err
		}
		rec.Policy = &Policy{MaxPINTries: s.opts.MaxPINTries, KDF: s.opts.KDF}
		return saveTokenChange(tx, rec)
	})
}

// newPINKDF reads the token's policy and returns the Argon2id parameters
// of a new PIN record (before the transaction that stores it: the lock is
// never held across Argon2id).
func (s *Store) newPINKDF() (KDFParams, error) {
	var p KDFParams
	err := s.view(func(tx kvTx) error {
		rec, err := loadToken(tx)
		if err != nil {
			return err
		}
		p = s.kdfFor(rec)
		return nil
	})
	return p, err
}

// SetPIN changes who's PIN from oldPIN to newPIN (a wrong oldPIN counts as
// a failed attempt). The new PIN record gets a fresh salt and the Store's
// current KDF parameters.
func (s *Store) SetPIN(who UserType, oldPIN, newPIN []byte) error {
	if err := who.valid(); err != nil {
		return err
	}
	kdf, err := s.newPINKDF()
	if err != nil {
		return err
	}
	pending, err := newPendingPIN(newPIN, kdf)
	if err != nil {
		return err
	}
	defer pending.wipe()
	return s.changePINs(who, oldPIN, func(tx kvTx, rec *tokenRecord, key *Key) error {
		pr, err := pending.record(key.key[:], who, rec.Serial)
		if err != nil {
			return err
		}
		if who == SO {
			rec.SO = *pr
		} else {
			rec.User = pr
		}
		return nil
	})
}

// changePINs checks who's pin as checkPIN does and lets change rewrite
// the token record in the same transaction; then it wipes the key
// checkPIN made and forgets the PINs remembered for the record as it was
// (pincache.go), so that no old PIN opens the token from the cache.
func (s *Store) changePINs(who UserType, pin []byte, change func(tx kvTx, rec *tokenRecord, key *Key) error) error {
	var old tokenRecord
	key, err := s.checkPIN(who, pin, func(tx kvTx, rec *tokenRecord, key *Key) error {
		old = rec.pinsOnly()
		return change(tx, rec, key)
	})
	if err != nil {
		return err
	}
	key.Wipe()
	s.forgetPINs(&old)
	return nil
}

// InitUserPIN sets (or resets, clearing the lockout) the user PIN; soKey,
// returned by Login(SO, ...), proves the SO is logged in (ErrKeyMismatch
// for a user's key or a key of an earlier initialisation).
func (s *Store) InitUserPIN(soKey *Key, pin []byte) error {
	if soKey == nil || soKey.who != SO {
		return fmt.Errorf("keystore: InitUserPIN needs the SO's key: %w", ErrKeyMismatch)
	}
	kdf, err := s.newPINKDF()
	if err != nil {
		return err
	}
	pending, err := newPendingPIN(pin, kdf)
	if err != nil {
		return err
	}
	defer pending.wipe()
	var old tokenRecord
	err = s.update(func(tx kvTx) error {
		rec, err := loadToken(tx)
		if err != nil {
			return err
		}
		old = rec.pinsOnly()
		soKey.mu.RLock()
		defer soKey.mu.RUnlock()
		if soKey.wiped || soKey.serial != rec.Serial {
			return fmt.Errorf("keystore: InitUserPIN: stale or wiped SO key: %w", ErrKeyMismatch)
		}
		rec.User, err = pending.record(soKey.key[:], User, rec.Serial)
		if err != nil {
			return err
		}
		return saveTokenChange(tx, rec)
	})
	if err == nil {
		s.forgetPINs(&old)
	}
	return err
}
