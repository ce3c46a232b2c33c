package keystore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// TokenRecord is the token's public record.
type TokenRecord struct {
	Label         string
	Serial        string // 16 hex chars, random at init
	UserPINSet    bool
	SOTriesLeft   int       // consecutive wrong SO PINs still allowed
	UserTriesLeft int       // likewise for the user PIN (MaxPINTries while unset)
	MaxPINTries   int       // the limit that applies (the token's, or this Store's if lower)
	KDF           KDFParams // the Argon2id parameters of the next PIN record written
	Policy        Policy    // the token's stored policy (zero: none stored yet)
	Generation    uint64    // bumped by every change of any kind
}

// Token returns the token record (ErrNotInitialized if none).
func (s *Store) Token() (TokenRecord, error) {
	var tr TokenRecord
	err := s.view(func(tx kvTx) error {
		rec, err := loadToken(tx)
		if err != nil {
			return err
		}
		gen, err := generation(tx)
		if err != nil {
			return err
		}
		limit := s.maxTries(rec)
		tr = TokenRecord{
			Label:         rec.Label,
			Serial:        rec.Serial,
			UserPINSet:    rec.User != nil,
			SOTriesLeft:   max(0, limit-int(rec.SO.Tries)),
			UserTriesLeft: limit,
			MaxPINTries:   limit,
			KDF:           s.kdfFor(rec),
			Generation:    gen,
		}
		if rec.Policy != nil {
			tr.Policy = *rec.Policy
		}
		if rec.User != nil {
			tr.UserTriesLeft = max(0, limit-int(rec.User.Tries))
		}
		return nil
	})
	return tr, err
}

// Generation is the current change counter (cheap: one read transaction);
// callers use it to notice other processes' changes. It only grows, also
// across InitToken.
func (s *Store) Generation() (uint64, error) {
	var g uint64
	err := s.view(func(tx kvTx) error {
		if _, err := loadToken(tx); err != nil {
			return err
		}
		var err error
		g, err = generation(tx)
		return err
	})
	return g, err
}

// errExists: a token appeared while InitToken was creating the file.
var errExists = errors.New("keystore: token exists")

// InitToken is InitTokenPolicy with the Store's Options as the policy.
func (s *Store) InitToken(soPIN []byte, label string) error {
	return s.InitTokenPolicy(soPIN, label, Policy{})
}

// InitTokenPolicy (re)initialises the token: new serial and token key, SO
// PIN record, no user PIN, every object destroyed, and p stored as the
// token's policy (zero fields: the Store's Options). The policy's KDF is
// refused below MinKDFParams unless Options.AllowWeakKDF. If the token exists, soPIN
// must match its SO PIN (ErrPINIncorrect otherwise, counted like a login;
// ErrPINLocked when locked). A missing file is created (directory 0700,
// file 0600); a corrupt file is refused with ErrCorrupt and left alone.
// One transaction.
func (s *Store) InitTokenPolicy(soPIN []byte, label string, p Policy) error {
	if p.MaxPINTries <= 0 {
		p.MaxPINTries = s.opts.MaxPINTries
	}
	if p.KDF == (KDFParams{}) {
		p.KDF = s.opts.KDF
	}
	if err := p.KDF.validate(); err != nil {
		return fmt.Errorf("keystore: policy: %w", err)
	}
	if p.KDF.below(MinKDFParams) && !s.opts.AllowWeakKDF {
		return fmt.Errorf("keystore: policy: argon2id t=%d m=%d KiB is below the floor t=%d m=%d KiB",
			p.KDF.Time, p.KDF.MemoryKiB, MinKDFParams.Time, MinKDFParams.MemoryKiB)
	}
	if p.MaxPINTries > 1<<20 {
		return fmt.Errorf("keystore: policy: %d PIN tries", p.MaxPINTries)
	}
	if len(label) > maxLabelLen {
		return fmt.Errorf("keystore: label of %d bytes exceeds %d", len(label), maxLabelLen)
	}
	tokenKey := make([]byte, tokenKeySize)
	defer clear(tokenKey)
	serialBytes := make([]byte, serialLen/2)
	if _, err := rand.Read(tokenKey); err != nil {
		return fmt.Errorf("keystore: token key: %w", err)
	}
	if _, err := rand.Read(serialBytes); err != nil {
		return fmt.Errorf("keystore: serial: %w", err)
	}
	serial := hex.EncodeToString(serialBytes)
	pending, err := newPendingPIN(soPIN, p.KDF)
	if err != nil {
		return err
	}
	defer pending.wipe()
	newRecord := func() (*tokenRecord, error) {
		so, err := pending.record(tokenKey, SO, serial)
		if err != nil {
			return nil, err
		}
		return &tokenRecord{Label: label, Serial: serial, SO: *so, Policy: &p}, nil
	}

	// An existing token: the old SO PIN decides.
	_, err = s.Token()
	if err == nil {
		return s.changePINs(SO, soPIN, func(tx kvTx, rec *tokenRecord, _ *Key) error {
			if err := wipeObjects(tx); err != nil {
				return err
			}
			fresh, err := newRecord()
			if err != nil {
				return err
			}
			*rec = *fresh // checkPIN saves rec
			return nil
		})
	}
	if !errors.Is(err, ErrNotInitialized) {
		return err // corrupt, busy...: never overwrite
	}

	// No token yet: create the file and the schema.
	if dir := filepath.Dir(s.path); dir != "" && s.remote == nil {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("keystore: create directory: %w", err)
		}
	}
	err = s.updateMode(modeCreate, func(tx kvTx) error {
		switch err := checkSchema(tx); {
		case err == nil:
			return errExists // another process initialised it meanwhile
		case !errors.Is(err, ErrNotInitialized):
			return err
		}
		if err := createSchema(tx); err != nil {
			return err
		}
		rec, err := newRecord()
		if err != nil {
			return err
		}
		return saveTokenChange(tx, rec)
	})
	if errors.Is(err, errExists) {
		return s.InitTokenPolicy(soPIN, label, p)
	}
	return err
}

// wipeObjects destroys every object and the change log,
// keeping the ID sequence so IDs are never reused.
func wipeObjects(tx kvTx) error {
	// Every cache must reload: the log starts again at the generation
	// this transaction ends with (InitToken bumps it once).
	g, err := generation(tx)
	if err != nil {
		return err
	}
	if err := resetLog(tx, g+1); err != nil {
		return err
	}
	seq := tx.Bucket(bucketObjects).Sequence()
	for _, name := range [][]byte{bucketObjects} {
		if err := tx.DeleteBucket(name); err != nil {
			return fmt.Errorf("keystore: delete bucket %q: %w", name, err)
		}
		if _, err := tx.CreateBucket(name); err != nil {
			return fmt.Errorf("keystore: create bucket %q: %w", name, err)
		}
	}
	if err := tx.Bucket(bucketObjects).SetSequence(seq); err != nil {
		return fmt.Errorf("keystore: keep object sequence: %w", err)
	}
	return nil
}
