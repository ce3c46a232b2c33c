package keystore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Record encoding
//
// Records are a compact, deterministic binary encoding of our own: a
// version byte, then fields in a fixed order; integers are minimal unsigned
// varints, byte strings are a varint length then the bytes, booleans one
// byte 0 or 1. Attributes are sorted by type, without duplicates. The
// decoder accepts exactly the encoder's output (no overlong varints, no
// trailing bytes, no unknown versions), so decode∘encode is the identity on
// every accepted input — the fuzz targets check that.

const recordVersion = 1

const (
	kdfArgon2id = 1

	minSaltLen  = 16
	maxSaltLen  = 64
	wrappedLen  = nonceSize + tokenKeySize + tagSize
	serialLen   = 16
	maxLabelLen = 1024
)

var errTrailing = errors.New("trailing bytes")

// pinRecord is what the file knows about one PIN: never the PIN itself.
type pinRecord struct {
	KDF     KDFParams
	Salt    []byte // Argon2id salt
	Wrapped []byte // nonce ‖ AES-256-GCM(token key) under the PIN-derived key
	Tries   uint32 // consecutive wrong PINs
}

// tokenRecord is the token's record in the token bucket.
//
// Version 2 adds the token's policy (nil in a version-1 record).
type tokenRecord struct {
	Label  string
	Serial string
	SO     pinRecord
	User   *pinRecord // nil until InitUserPIN
	Policy *Policy
}

const tokenRecordPolicy = 2 // token record version with a policy

// pin returns who's PIN record (nil if not set).
func (r *tokenRecord) pin(who UserType) *pinRecord {
	if who == SO {
		return &r.SO
	}
	return r.User
}

// storedAttr is one attribute as stored: the value in the clear, or (when
// Sealed) nonce ‖ AES-256-GCM ciphertext ‖ tag.
type storedAttr struct {
	Type   uint64
	Sealed bool
	Value  []byte
}

// objectRecord is an object as stored, keyed by its ID in the objects
// bucket. Attrs is sorted by Type.
//
// Record version 1 has no MAC; version 2 (schema version 3) ends with a
// macSize-byte HMAC-SHA256 over the rest of the record, bound to the token
// and the object ID (auth.go).
type objectRecord struct {
	Attrs []storedAttr
	MAC   []byte // nil: a version-1 record
	body  []byte // decoded version-2 records: the bytes the MAC covers
}

// Object record versions.
const (
	objectRecordPlain = 1
	objectRecordMACed = 2
	macSize           = 32
)

// encoder appends fields to a buffer.
type encoder struct{ b []byte }

func (e *encoder) byte(c byte)      { e.b = append(e.b, c) }
func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) bytes(p []byte)   { e.uvarint(uint64(len(p))); e.b = append(e.b, p...) }
func (e *encoder) string(s string)  { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) bool(v bool)      { e.byte(boolByte(v)) }
func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// decoder reads fields; the first error sticks and later reads return zero
// values, so callers check d.err once at the end.
type decoder struct {
	b   []byte
	err error
	// alias: bytes returns sub-slices of b instead of copies (b is then a
	// private copy of the record: one allocation for all its values).
	alias bool
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail("unexpected end of record")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	if n != uvarintLen(v) {
		d.fail("overlong varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// bytes reads a length-prefixed byte string of at most max bytes and
// returns a copy (decoded records never alias bbolt's memory).
func (d *decoder) bytes(max int) []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(max) {
		d.fail("field of %d bytes exceeds limit %d", n, max)
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("field of %d bytes overruns record", n)
		return nil
	}
	var p []byte
	if d.alias {
		p = d.b[:n:n] // full slice expression: an append never overwrites the next value
	} else {
		p = make([]byte, n)
		copy(p, d.b[:n])
	}
	d.b = d.b[n:]
	return p
}

func (d *decoder) bool() bool {
	switch c := d.byte(); c {
	case 0:
		return false
	case 1:
		return true
	default:
		d.fail("bad boolean %#x", c)
		return false
	}
}

func (d *decoder) finish() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = errTrailing
	}
	return d.err
}

func (e *encoder) pinRecord(p *pinRecord) {
	e.byte(kdfArgon2id)
	e.uvarint(uint64(p.KDF.Time))
	e.uvarint(uint64(p.KDF.MemoryKiB))
	e.byte(p.KDF.Threads)
	e.bytes(p.Salt)
	e.bytes(p.Wrapped)
	e.uvarint(uint64(p.Tries))
}

func (d *decoder) pinRecord() pinRecord {
	var p pinRecord
	if alg := d.byte(); d.err == nil && alg != kdfArgon2id {
		d.fail("unknown KDF %d", alg)
	}
	t, m := d.uvarint(), d.uvarint()
	if d.err == nil && (t > maxKDFTime || m > maxKDFMemoryKiB) {
		d.fail("argon2id parameters out of range")
	}
	p.KDF = KDFParams{Time: uint32(t), MemoryKiB: uint32(m), Threads: d.byte()}
	if d.err == nil {
		if err := p.KDF.validate(); err != nil {
			d.fail("%w", err)
		}
	}
	p.Salt = d.bytes(maxSaltLen)
	if d.err == nil && len(p.Salt) < minSaltLen {
		d.fail("salt of %d bytes too short", len(p.Salt))
	}
	p.Wrapped = d.bytes(wrappedLen)
	if d.err == nil && len(p.Wrapped) != wrappedLen {
		d.fail("wrapped key of %d bytes, want %d", len(p.Wrapped), wrappedLen)
	}
	tries := d.uvarint()
	if d.err == nil && tries > 1<<31 {
		d.fail("PIN tries %d out of range", tries)
	}
	p.Tries = uint32(tries)
	return p
}

// encodeTokenRecord returns r's encoding.
func encodeTokenRecord(r *tokenRecord) []byte {
	var e encoder
	if r.Policy != nil {
		e.byte(tokenRecordPolicy)
	} else {
		e.byte(recordVersion)
	}
	e.string(r.Label)
	e.string(r.Serial)
	e.pinRecord(&r.SO)
	e.bool(r.User != nil)
	if r.User != nil {
		e.pinRecord(r.User)
	}
	if p := r.Policy; p != nil {
		e.uvarint(uint64(p.MaxPINTries))
		e.uvarint(uint64(p.KDF.Time))
		e.uvarint(uint64(p.KDF.MemoryKiB))
		e.byte(p.KDF.Threads)
	}
	return e.b
}

// decodeTokenRecord parses a token record; the result does not alias b.
func decodeTokenRecord(b []byte) (*tokenRecord, error) {
	d := decoder{b: b}
	version := d.byte()
	if d.err == nil && version != recordVersion && version != tokenRecordPolicy {
		d.fail("unknown record version %d", version)
	}
	r := &tokenRecord{
		Label:  string(d.bytes(maxLabelLen)),
		Serial: string(d.bytes(serialLen)),
	}
	if d.err == nil && len(r.Serial) != serialLen {
		d.fail("serial of %d bytes, want %d", len(r.Serial), serialLen)
	}
	r.SO = d.pinRecord()
	if d.bool() {
		u := d.pinRecord()
		r.User = &u
	}
	if version == tokenRecordPolicy {
		tries, t, m := d.uvarint(), d.uvarint(), d.uvarint()
		p := &Policy{KDF: KDFParams{Time: uint32(t), MemoryKiB: uint32(m), Threads: d.byte()}}
		if d.err == nil && (tries < 1 || tries > 1<<20 || t > maxKDFTime || m > maxKDFMemoryKiB) {
			d.fail("policy out of range")
		}
		p.MaxPINTries = int(tries)
		if d.err == nil {
			if err := p.KDF.validate(); err != nil {
				d.fail("policy: %w", err)
			}
		}
		r.Policy = p
	}
	if err := d.finish(); err != nil {
		return nil, fmt.Errorf("token record: %w", err)
	}
	return r, nil
}

// encodeObjectRecord returns r's encoding; r.Attrs must be sorted by Type
// without duplicates (putTx ensures it). With mac nil it is a version-1
// record; otherwise mac is called with the version-2 record so far and
// returns the MAC that ends it.
func encodeObjectRecord(r *objectRecord, mac func(body []byte) []byte) []byte {
	n := 2 + macSize
	for _, a := range r.Attrs {
		n += 12 + len(a.Value)
	}
	e := encoder{b: make([]byte, 0, n)}
	if mac == nil {
		e.byte(objectRecordPlain)
	} else {
		e.byte(objectRecordMACed)
	}
	e.uvarint(uint64(len(r.Attrs)))
	for _, a := range r.Attrs {
		e.uvarint(a.Type)
		e.bool(a.Sealed)
		e.bytes(a.Value)
	}
	if mac != nil {
		e.b = append(e.b, mac(e.b)...)
	}
	return e.b
}

// decodeObjectRecord parses an object record; the result does not alias b
// (the values share one copy of the record: one allocation, not one per
// attribute — a token of 100,000 objects is decoded whole when it opens).
func decodeObjectRecord(b []byte) (*objectRecord, error) {
	c := bytes.Clone(b)
	d := decoder{b: c, alias: true}
	r := &objectRecord{}
	switch v := d.byte(); {
	case d.err != nil:
	case v == objectRecordMACed:
		if len(d.b) < macSize {
			d.fail("record of %d bytes too short for its MAC", len(d.b))
			break
		}
		n := len(d.b) - macSize
		r.MAC = d.b[n:]
		r.body = c[: 1+n : 1+n]
		d.b = d.b[:n:n]
	case v != objectRecordPlain:
		d.fail("unknown record version %d", v)
	}
	count := d.uvarint()
	// Each attribute takes at least 3 bytes: a bound on count that keeps
	// a hostile count from allocating.
	if d.err == nil && count > uint64(len(d.b))/3 {
		d.fail("attribute count %d overruns record", count)
	}
	if d.err == nil {
		r.Attrs = make([]storedAttr, 0, count)
	}
	for i := uint64(0); i < count && d.err == nil; i++ {
		a := storedAttr{Type: d.uvarint(), Sealed: d.bool()}
		a.Value = d.bytes(len(d.b))
		if d.err != nil {
			break
		}
		if i > 0 && a.Type <= r.Attrs[i-1].Type {
			d.fail("attribute %#x out of order", a.Type)
			break
		}
		if a.Sealed && len(a.Value) < nonceSize+tagSize {
			d.fail("sealed attribute %#x of %d bytes too short", a.Type, len(a.Value))
			break
		}
		r.Attrs = append(r.Attrs, a)
	}
	if err := d.finish(); err != nil {
		return nil, fmt.Errorf("object record: %w", err)
	}
	return r, nil
}
