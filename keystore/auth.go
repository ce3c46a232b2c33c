package keystore

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// Whole-record authentication (schema version 3)
//
// Sealing (seal.go) protects each private value, not the object: before
// schema version 3 someone who could write the file could replace a sealed
// CKA_SENSITIVE by a clear FALSE, or plant an object. From schema version
// 3 on, every object record written with the token key ends with a MAC:
//
//	HMAC-SHA256(K_mac, "modexp-token/keystore/v3/object" ‖ serial ‖ id ‖ record)
//
// where K_mac = HKDF-SHA256(token key, info "modexp-token/keystore/v3
// object MAC key") and record is the stored record up to the MAC: its
// version byte, every attribute type, whether it is sealed, and its value
// (the clear value, or the sealed value's nonce, ciphertext and tag). The
// ID binds the record to its key in the objects bucket (records swapped
// between objects fail), the serial to the token's initialisation.
//
// Which records need a MAC (protected): those of a private key
// (CKO_PRIVATE_KEY) or a secret key (CKO_SECRET_KEY), of an object with
// CKA_PRIVATE or CKA_TRUSTED true, and of any object with a sealed
// attribute. A protected record without a MAC is refused, with or without
// the key. A private value (privateValueTypes) of a private or secret key
// stored in the clear is refused too. Refused records are left out of
// Objects and Changes (logged, as an error, to
// Options.Logger); Get returns ErrUnauthentic for them.
//
// When the MAC is checked: the MAC key needs the token key, hence a login.
// Reads with the key (every read of a logged-in process, so the full
// reload at C_Login and every later delta) check every MAC, and objects
// that passed are marked Verified. Reads without the key (before login:
// public objects are listable without a PIN) cannot check it: they serve
// the clear attributes unverified (the Verified field is false), and the
// token then reloads everything with the key at login.
//
// Objects that cannot have a MAC: a public object written by a session
// that is not logged in (PKCS#11 lets a R/W public session create public
// token objects) is stored without one, as a version-1 record, and served
// unverified even to a logged-in process. Such a record cannot be told
// from a MAC'd public record whose MAC an attacker stripped: integrity of
// public objects (certificates, public keys, data) is not guaranteed by
// the file. Nothing secret is in them, and a record that carries a
// private value, CKA_PRIVATE or CKA_TRUSTED true, or the class of a
// private or secret key cannot take that form.
//
// Migration 2→3 needs the token key, so it cannot run in the first write
// transaction like 1→2: a keystore of this version keeps reading and
// writing a version-2 file as version 2 (no MACs) until a transaction
// with the key (Login runs one) upgrades it. The upgrade opens every
// sealed value under the version-1 AAD label and seals it again under the
// version-3 one (aadAttr), then MACs the record. A record that does not
// decode, has a value that does not open, or a private value in the clear
// is left as it is (and so refused from then on) and logged. Re-sealing
// under a new label is what keeps a downgrade useless: a version-3 file
// set back to version 2, its records stripped of their MACs and edited,
// would be MAC'd by the next login's migration if its sealed values still
// opened as version-2 ones; they do not, so every record with a sealed
// value (every private or secret key) is refused. What the migration
// cannot detect is an edit made before it (the old format had no
// defence), nor a version-2 copy of the file kept from before the
// upgrade and put back (a rollback; docs/THREATS.md).

// SchemaAuth is the first schema version whose object records carry MACs.
const SchemaAuth = 3

const macLabel = "modexp-token/keystore/v3/object"

// Attribute types and classes the record policy reads (PKCS#11 values).
const (
	attrClass   = 0x0
	attrPrivate = 0x2
	attrTrusted = 0x86

	classPrivateKey = 3
	classSecretKey  = 4
)

// privateValueTypes are the attributes that hold a key's private value:
// CKA_VALUE (EC, EdDSA, DSA/DH private keys; secret keys) and the RSA
// private components. A private or secret key must store them sealed.
var privateValueTypes = []uint64{0x11, 0x123, 0x124, 0x125, 0x126, 0x127, 0x128}

// recordMAC computes the MAC of object id's record body (the record up to
// its MAC).
func (s *sealer) recordMAC(id uint64, body []byte) []byte {
	m := hmac.New(sha256.New, s.macKey)
	m.Write([]byte(macLabel))
	m.Write([]byte(s.serial))
	m.Write(binary.BigEndian.AppendUint64(nil, id))
	m.Write(body)
	return m.Sum(nil)
}

// macFor returns the MAC function encodeObjectRecord takes for object id.
func (s *sealer) macFor(id uint64) func([]byte) []byte {
	return func(body []byte) []byte { return s.recordMAC(id, body) }
}

// attr returns the stored attribute of type t (nil if absent).
func (r *objectRecord) attr(t uint64) *storedAttr {
	for i := range r.Attrs {
		if r.Attrs[i].Type == t {
			return &r.Attrs[i]
		}
	}
	return nil
}

// clearTrue reports whether attribute t is stored in the clear as CK_TRUE.
func (r *objectRecord) clearTrue(t uint64) bool {
	a := r.attr(t)
	return a != nil && !a.Sealed && len(a.Value) == 1 && a.Value[0] != 0
}

// keyClass reports whether the record is of a private or secret key (by
// its clear CKA_CLASS, a CK_ULONG in the module's 8-byte little-endian
// form).
func (r *objectRecord) keyClass() bool {
	a := r.attr(attrClass)
	if a == nil || a.Sealed || len(a.Value) != 8 {
		return false
	}
	c := binary.LittleEndian.Uint64(a.Value)
	return c == classPrivateKey || c == classSecretKey
}

// protected reports whether the record must carry a MAC.
func (r *objectRecord) protected() bool {
	if r.keyClass() || r.clearTrue(attrPrivate) || r.clearTrue(attrTrusted) {
		return true
	}
	for _, a := range r.Attrs {
		if a.Sealed {
			return true
		}
		// A sealed CKA_CLASS, CKA_PRIVATE or CKA_TRUSTED is itself a
		// sealed attribute: covered above.
	}
	return false
}

// checkPolicy refuses a record that stores a private value of a private or
// secret key in the clear, or a protected record without a MAC.
func (r *objectRecord) checkPolicy(id uint64, schema uint32) error {
	if r.keyClass() {
		for _, t := range privateValueTypes {
			if a := r.attr(t); a != nil && !a.Sealed {
				return fmt.Errorf("keystore: object %d: private value %#x stored in the clear: %w: %w", id, t, ErrCorrupt, ErrUnauthentic)
			}
		}
	}
	if schema >= SchemaAuth && r.MAC == nil && r.protected() {
		return fmt.Errorf("keystore: object %d: protected record without a MAC: %w: %w", id, ErrCorrupt, ErrUnauthentic)
	}
	if schema < SchemaAuth && r.MAC != nil {
		return fmt.Errorf("keystore: object %d: MAC'd record in a schema %d file: %w: %w", id, schema, ErrCorrupt, ErrUnauthentic)
	}
	return nil
}

// verify checks the record's MAC (a version-2 record and a sealer).
func (r *objectRecord) verify(id uint64, sl *sealer) error {
	if !hmac.Equal(sl.recordMAC(id, r.body), r.MAC) {
		return fmt.Errorf("keystore: object %d: record MAC mismatch: %w: %w", id, ErrCorrupt, ErrUnauthentic)
	}
	return nil
}

// upgradeAuth runs migration 2→3 in tx with sl if tx's file is of schema
// version 2 (checkSchema already ran); a no-op otherwise.
func upgradeAuth(tx kvTx, sl *sealer, log func(msg string, args ...any)) error {
	if schemaVersion(tx) >= SchemaAuth {
		return nil
	}
	if err := migrate2to3(tx, sl, log); err != nil {
		return fmt.Errorf("keystore: migrate schema 2→3: %w", err)
	}
	if err := migrate3to4(tx); err != nil {
		return err
	}
	_, err := bumpGeneration(tx)
	return err
}

// migrate2to3 re-seals every sealed value under the version-3 AAD label
// and MACs every record that passes; records that do not are left as they
// are (and refused from then on), and logged.
func migrate2to3(tx kvTx, sl *sealer, log func(msg string, args ...any)) error {
	objects := tx.Bucket(bucketObjects)
	type update struct {
		k, v []byte
	}
	var updates []update
	c := objects.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 8 || v == nil {
			return fmt.Errorf("%s: bad object key %x: %w", tx.Path(), k, ErrCorrupt)
		}
		id := binary.BigEndian.Uint64(k)
		nv, err := migrateRecord(id, v, sl)
		if err != nil {
			log("object record refused by the migration to schema 3", "id", id, "err", err)
			continue
		}
		updates = append(updates, update{binary.BigEndian.AppendUint64(nil, id), nv})
	}
	for _, u := range updates {
		if err := objects.Put(u.k, u.v); err != nil {
			return fmt.Errorf("write object %d: %w", binary.BigEndian.Uint64(u.k), err)
		}
	}
	return nil
}

// migrateRecord returns the version-3 form of a version-2 file's record.
func migrateRecord(id uint64, v []byte, sl *sealer) ([]byte, error) {
	rec, err := decodeObjectRecord(v)
	if err != nil {
		return nil, err
	}
	if err := rec.checkPolicy(id, SchemaAuth-1); err != nil {
		return nil, err
	}
	for i := range rec.Attrs {
		a := &rec.Attrs[i]
		if !a.Sealed {
			continue
		}
		pt, err := sl.openLabel(aadAttrV1, id, a.Type, a.Value)
		if err != nil {
			return nil, err
		}
		a.Value, err = sl.seal(id, a.Type, pt)
		clear(pt)
		if err != nil {
			return nil, err
		}
	}
	return encodeObjectRecord(rec, sl.macFor(id)), nil
}
