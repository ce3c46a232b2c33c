// Package wire is MXP/1, the ModExp device protocol: the encoding and
// decoding of its frames, shared by the client engine
// ([github.com/modexp-token/modexp-token/engine/backend/device]) and the daemon
// (cmd/modexpd). The full specification is docs/PROTOCOL.md.
//
// # Frames
//
// Every frame is a 4-byte big-endian length (the bytes that follow it), a
// fixed 12-byte header and a sequence of TLV fields:
//
//	u32 length   bytes after this field, HeaderLen ≤ length ≤ MaxFrame
//	u8  version  1
//	u8  kind     1 request, 2 response
//	u16 op
//	u32 id       request id, non-zero, echoed in the response (a response
//	             with id 0 reports a frame the daemon could not attribute)
//	u16 status   0 in requests
//	u16 flags    reserved: sent as 0, ignored
//	TLV*         u16 tag | u16 len | len bytes
//
// The header's layout is frozen across protocol versions, so a receiver can
// always answer a frame of an unknown version with [StatusBadVersion]
// addressed to the right request id.
//
// # What this package never does
//
// It does not touch the network beyond an [io.Reader] or [io.Writer], never
// allocates more than the frame length it has checked against its limit,
// and never panics on input (a fuzz target guards that).
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Protocol constants.
const (
	// Version is the protocol version this package speaks.
	Version uint8 = 1
	// MinVersion and MaxVersion bound the versions this package accepts.
	MinVersion uint8 = 1
	MaxVersion uint8 = 1
	// HeaderLen is the length of the fixed header after the length field.
	HeaderLen = 12
	// MaxFrame is the largest length field a receiver must accept.
	MaxFrame = 16384
	// DiscardLimit is the largest length field a receiver skips to stay in
	// step with the stream (answering StatusTooLarge); a larger length, or
	// one shorter than HeaderLen, is a broken stream and closes the
	// connection.
	DiscardLimit = 1 << 20
	// MaxOperand is the largest integer operand in bytes (8192 bits).
	MaxOperand = 1024
	// MaxMessage is the largest MESSAGE (error text) a sender should send.
	MaxMessage = 256
)

// Kind tells requests from responses.
type Kind uint8

// Frame kinds.
const (
	KindRequest  Kind = 1
	KindResponse Kind = 2
)

// Op is an operation code.
type Op uint16

// Operations. See docs/PROTOCOL.md for their fields.
const (
	OpInfo      Op = 0x0010 // capabilities and limits
	OpPing      Op = 0x0011 // echo PAYLOAD
	OpSelfTest  Op = 0x0012 // device-side known-answer tests
	OpStatus    Op = 0x0013 // daemon statistics (STATS, JSON)
	OpModExp    Op = 0x0021 // BASE^EXP mod MOD
	OpModExpCRT Op = 0x0022 // BASE^d mod P·Q from P, Q, DP, DQ, QINV
	// OpModExpPair is two independent exponentiations in one request:
	// BASE^EXP mod MOD and BASE2^EXP2 mod MOD2 (the two CRT halves of an
	// RSA private operation, so they cost one round trip instead of two).
	OpModExpPair Op = 0x0023
	OpECMul      Op = 0x0030 // SCALAR·(PX, PY), or SCALAR·G without PX, PY
	OpCancel     Op = 0x00F0 // cancel TARGET_ID; never answered
)

var opNames = map[Op]string{
	OpInfo: "INFO", OpPing: "PING", OpSelfTest: "SELFTEST", OpStatus: "STATUS",
	OpModExp: "MODEXP", OpModExpCRT: "MODEXP_CRT", OpModExpPair: "MODEXP_PAIR", OpECMul: "EC_MUL", OpCancel: "CANCEL",
}

// String is the op's name, or its number in hex when unknown.
func (o Op) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return fmt.Sprintf("OP_%#04x", uint16(o))
}

// Known reports whether o is an operation of this protocol version.
func (o Op) Known() bool { _, ok := opNames[o]; return ok }

// Status is a response's status code.
type Status uint16

// Status codes. See docs/PROTOCOL.md for when each is sent.
const (
	StatusOK               Status = 0
	StatusBadVersion       Status = 1  // version not spoken; PROTO_MIN/PROTO_MAX say which are
	StatusBadFrame         Status = 2  // malformed header or fields, id 0, duplicate tag
	StatusUnknownOp        Status = 3  // op not defined
	StatusBadArgument      Status = 4  // missing or malformed field, base ≥ modulus, ...
	StatusTooLarge         Status = 5  // frame or operand beyond the limits
	StatusBusy             Status = 6  // too many requests in flight; RETRY_AFTER_MS
	StatusTimeout          Status = 7  // the deadline passed on the device
	StatusCancelled        Status = 8  // cancelled by CANCEL
	StatusInvalidModulus   Status = 9  // modulus even, zero or one
	StatusUnsupported      Status = 10 // op or critical field the device cannot do
	StatusUnsupportedCurve Status = 11 // curve not in INFO's CURVES
	StatusPointNotOnCurve  Status = 12 // (PX, PY) not on the curve
	StatusFaultDetected    Status = 13 // the device noticed its own fault
	StatusSelfTestFailed   Status = 14 // SELFTEST found a wrong answer
	StatusInternal         Status = 15 // any other device failure
	StatusShuttingDown     Status = 16 // draining; reconnect later
)

var statusNames = [...]string{
	"OK", "BAD_VERSION", "BAD_FRAME", "UNKNOWN_OP", "BAD_ARGUMENT", "TOO_LARGE",
	"BUSY", "TIMEOUT", "CANCELLED", "INVALID_MODULUS", "UNSUPPORTED",
	"UNSUPPORTED_CURVE", "POINT_NOT_ON_CURVE", "FAULT_DETECTED",
	"SELFTEST_FAILED", "INTERNAL", "SHUTTING_DOWN",
}

// String is the status's name, or its number when unknown.
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("STATUS_%d", uint16(s))
}

// Tag names a TLV field. Tags at or above TagCritical are critical
// extensions: a receiver that does not know one must refuse the request
// (StatusUnsupported) instead of ignoring it. Unknown tags below it are
// ignored.
type Tag uint16

// Field tags.
const (
	// Operands (unsigned big-endian integers; leading zeros allowed).
	TagMod    Tag = 0x01
	TagBase   Tag = 0x02
	TagExp    Tag = 0x03
	TagP      Tag = 0x04
	TagQ      Tag = 0x05
	TagDP     Tag = 0x06
	TagDQ     Tag = 0x07
	TagQInv   Tag = 0x08
	TagCurve  Tag = 0x09 // ASCII curve name, e.g. "P-256"
	TagScalar Tag = 0x0A
	TagPX     Tag = 0x0C
	TagPY     Tag = 0x0D

	// Results.
	TagResult Tag = 0x10 // padded to the modulus length
	TagRX     Tag = 0x11 // padded to the field length
	TagRY     Tag = 0x12

	// MODEXP_PAIR's second exponentiation and its result.
	TagMod2    Tag = 0x14
	TagBase2   Tag = 0x15
	TagExp2    Tag = 0x16
	TagResult2 Tag = 0x17 // padded to MOD2's length

	// Cost of the operation.
	TagCycles   Tag = 0x20 // u64
	TagDeviceNS Tag = 0x21 // u64, nanoseconds
	TagEnergy   Tag = 0x22 // IEEE 754 binary64 bits, joules

	// Control.
	TagDeadlineMS   Tag = 0x30 // u32, budget in ms from receipt
	TagMode         Tag = 0x31 // u8 flags: ModePublic
	TagTargetID     Tag = 0x33 // u32, CANCEL's target
	TagRetryAfterMS Tag = 0x34 // u32, with BUSY and SHUTTING_DOWN
	TagMessage      Tag = 0x35 // UTF-8 error detail, ≤ MaxMessage bytes
	TagPayload      Tag = 0x36 // PING echo
	// TagSolo (u8 1) promises that the requester sends nothing more on
	// this connection until this request is answered, so the device may
	// serve it without reading on (e.g. on the thread that read it).
	TagSolo Tag = 0x38

	// INFO.
	TagModel        Tag = 0x40 // string
	TagFirmware     Tag = 0x41 // string
	TagProtoMin     Tag = 0x42 // u8
	TagProtoMax     Tag = 0x43 // u8
	TagMaxModBits   Tag = 0x44 // u32
	TagMaxCRTBits   Tag = 0x45 // u32, 0 when no native CRT
	TagCurves       Tag = 0x46 // comma-separated curve names
	TagNativeCRT    Tag = 0x47 // u8 bool
	TagCores        Tag = 0x48 // u32
	TagMaxInflight  Tag = 0x49 // u32, per connection
	TagMaxFrame     Tag = 0x4A // u32
	TagConstantTime Tag = 0x4B // u8 bool
	TagSimulated    Tag = 0x4C // u8 bool
	TagCostNS       Tag = 0x4D // CostModel: three big-endian u64 (FixedNS, ModExpPS, ECPS)
	TagCostModel    Tag = 0x4E // string: "none", or the backing engine's cost model
	TagEngine       Tag = 0x4F // string: the backing engine's name

	// STATUS.
	TagStats Tag = 0x50 // JSON document

	// INFO, later additions.
	TagOps Tag = 0x51 // the arithmetic ops served beyond MXP/1's first set: u16 each

	// TagCritical is the first critical tag.
	TagCritical Tag = 0x8000
)

// ModePublic in TagMode marks the exponent as public (variable time allowed).
const ModePublic = 0x01

// TLV is one field of a frame.
type TLV struct {
	Tag   Tag
	Value []byte
}

// Frame is one decoded frame.
type Frame struct {
	Version uint8
	Kind    Kind
	Op      Op
	ID      uint32
	Status  Status
	Flags   uint16
	Fields  []TLV
}

// NewRequest returns a request frame of the current version.
func NewRequest(op Op, id uint32) *Frame {
	return &Frame{Version: Version, Kind: KindRequest, Op: op, ID: id}
}

// NewResponse returns the response to req with the given status.
func NewResponse(req *Frame, st Status) *Frame {
	return &Frame{Version: Version, Kind: KindResponse, Op: req.Op, ID: req.ID, Status: st}
}

// Get returns the value of the field tagged t.
func (f *Frame) Get(t Tag) ([]byte, bool) {
	for _, fl := range f.Fields {
		if fl.Tag == t {
			return fl.Value, true
		}
	}
	return nil, false
}

// Add appends a field and returns f.
func (f *Frame) Add(t Tag, v []byte) *Frame {
	f.Fields = append(f.Fields, TLV{Tag: t, Value: v})
	return f
}

// AddString appends a string field.
func (f *Frame) AddString(t Tag, s string) *Frame { return f.Add(t, []byte(s)) }

// AddU8 appends a one-byte integer field.
func (f *Frame) AddU8(t Tag, v uint8) *Frame { return f.Add(t, []byte{v}) }

// AddU32 appends a four-byte integer field.
func (f *Frame) AddU32(t Tag, v uint32) *Frame {
	return f.Add(t, binary.BigEndian.AppendUint32(nil, v))
}

// AddU64 appends an eight-byte integer field.
func (f *Frame) AddU64(t Tag, v uint64) *Frame {
	return f.Add(t, binary.BigEndian.AppendUint64(nil, v))
}

// AddBool appends a one-byte boolean field.
func (f *Frame) AddBool(t Tag, v bool) *Frame {
	if v {
		return f.AddU8(t, 1)
	}
	return f.AddU8(t, 0)
}

// AddFloat appends an IEEE 754 binary64 field.
func (f *Frame) AddFloat(t Tag, v float64) *Frame { return f.AddU64(t, math.Float64bits(v)) }

// Uint returns the integer field t (1 to 8 bytes, big-endian). ok is false
// when the field is absent; err is set when it is present but malformed.
func (f *Frame) Uint(t Tag) (v uint64, ok bool, err error) {
	b, ok := f.Get(t)
	if !ok {
		return 0, false, nil
	}
	if len(b) == 0 || len(b) > 8 {
		return 0, true, fmt.Errorf("wire: field %#x: integer of %d bytes", uint16(t), len(b))
	}
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v, true, nil
}

// Float returns the binary64 field t.
func (f *Frame) Float(t Tag) (float64, bool, error) {
	b, ok := f.Get(t)
	if !ok {
		return 0, false, nil
	}
	if len(b) != 8 {
		return 0, true, fmt.Errorf("wire: field %#x: float of %d bytes", uint16(t), len(b))
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b)), true, nil
}

// Message returns the MESSAGE field, or "".
func (f *Frame) Message() string {
	b, _ := f.Get(TagMessage)
	return string(b)
}

// EncodedLen is the frame's length on the wire, length field included.
func (f *Frame) EncodedLen() int {
	n := 4 + HeaderLen
	for _, fl := range f.Fields {
		n += 4 + len(fl.Value)
	}
	return n
}

// Encoding errors.
var (
	// ErrFieldTooLong: a field value exceeds 65535 bytes.
	ErrFieldTooLong = errors.New("wire: field value too long")
	// ErrFrameTooLarge: the encoded frame exceeds MaxFrame.
	ErrFrameTooLarge = errors.New("wire: frame too large")
)

// Append appends the encoded frame, length field included, to dst.
func (f *Frame) Append(dst []byte) ([]byte, error) {
	n := f.EncodedLen() - 4
	if n > MaxFrame {
		return dst, fmt.Errorf("%w: %d bytes (max %d)", ErrFrameTooLarge, n, MaxFrame)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	dst = append(dst, f.Version, byte(f.Kind))
	dst = binary.BigEndian.AppendUint16(dst, uint16(f.Op))
	dst = binary.BigEndian.AppendUint32(dst, f.ID)
	dst = binary.BigEndian.AppendUint16(dst, uint16(f.Status))
	dst = binary.BigEndian.AppendUint16(dst, f.Flags)
	for _, fl := range f.Fields {
		if len(fl.Value) > math.MaxUint16 {
			return dst, fmt.Errorf("%w: tag %#x, %d bytes", ErrFieldTooLong, uint16(fl.Tag), len(fl.Value))
		}
		dst = binary.BigEndian.AppendUint16(dst, uint16(fl.Tag))
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(fl.Value)))
		dst = append(dst, fl.Value...)
	}
	return dst, nil
}

// WriteFrame encodes f and writes it with a single Write.
func WriteFrame(w io.Writer, f *Frame) error {
	b, err := f.Append(make([]byte, 0, f.EncodedLen()))
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("wire: write %v: %w", f.Op, err)
	}
	return nil
}

// FrameError is a frame the receiver could not accept. Status is what to
// answer; ID and Op address the answer (ID is 0 when the header could not be
// read). Fatal means the stream is out of step and must be closed.
type FrameError struct {
	Status Status
	ID     uint32
	Op     Op
	Kind   Kind
	Fatal  bool
	Reason string
}

// Error describes the problem.
func (e *FrameError) Error() string {
	return fmt.Sprintf("wire: %s: %s (id %d, op %v)", e.Status, e.Reason, e.ID, e.Op)
}

// Decode parses a frame body: the bytes after the length field. Values in
// the returned frame alias body. Duplicate tags, truncated fields, requests
// with id 0 and unknown kinds are errors of type *FrameError; an unknown version is a
// *FrameError with StatusBadVersion and the header's id and op.
func Decode(body []byte) (*Frame, error) {
	if len(body) < HeaderLen {
		return nil, &FrameError{Status: StatusBadFrame, Reason: fmt.Sprintf("frame of %d bytes, shorter than the header", len(body))}
	}
	f := &Frame{
		Version: body[0],
		Kind:    Kind(body[1]),
		Op:      Op(binary.BigEndian.Uint16(body[2:])),
		ID:      binary.BigEndian.Uint32(body[4:]),
		Status:  Status(binary.BigEndian.Uint16(body[8:])),
		Flags:   binary.BigEndian.Uint16(body[10:]),
	}
	bad := func(st Status, format string, args ...any) (*Frame, error) {
		return nil, &FrameError{Status: st, ID: f.ID, Op: f.Op, Kind: f.Kind, Reason: fmt.Sprintf(format, args...)}
	}
	if f.Version < MinVersion || f.Version > MaxVersion {
		return bad(StatusBadVersion, "version %d not spoken (%d..%d)", f.Version, MinVersion, MaxVersion)
	}
	if f.Kind != KindRequest && f.Kind != KindResponse {
		return bad(StatusBadFrame, "kind %d", f.Kind)
	}
	if f.ID == 0 && f.Kind == KindRequest {
		return bad(StatusBadFrame, "request id 0")
	}
	rest := body[HeaderLen:]
	var seen [32]uint64 // bitmap of the first 2048 tags, for duplicates
	for len(rest) > 0 {
		if len(rest) < 4 {
			return bad(StatusBadFrame, "truncated field header")
		}
		t := Tag(binary.BigEndian.Uint16(rest))
		n := int(binary.BigEndian.Uint16(rest[2:]))
		if len(rest)-4 < n {
			return bad(StatusBadFrame, "field %#x: %d bytes announced, %d left", uint16(t), n, len(rest)-4)
		}
		if int(t) < len(seen)*64 {
			if seen[t/64]&(1<<(t%64)) != 0 {
				return bad(StatusBadFrame, "duplicate field %#x", uint16(t))
			}
			seen[t/64] |= 1 << (t % 64)
		} else if _, dup := f.Get(t); dup {
			return bad(StatusBadFrame, "duplicate field %#x", uint16(t))
		}
		f.Fields = append(f.Fields, TLV{Tag: t, Value: rest[4 : 4+n : 4+n]})
		rest = rest[4+n:]
	}
	return f, nil
}

// ReadFrame reads one frame from r. A length above maxLen (at most
// DiscardLimit) is skipped, keeping the stream in step, and reported as a
// *FrameError with StatusTooLarge addressed to the frame's id; a length
// below HeaderLen or above DiscardLimit is a fatal *FrameError. I/O errors
// (io.EOF at a frame boundary included) are returned as they are, wrapped.
func ReadFrame(r io.Reader, maxLen int) (*Frame, error) {
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("wire: read length: %w", err)
	}
	n := binary.BigEndian.Uint32(lb[:])
	if n < HeaderLen || n > DiscardLimit {
		return nil, &FrameError{Status: StatusBadFrame, Fatal: true, Reason: fmt.Sprintf("length %d out of range", n)}
	}
	if int64(n) > int64(maxLen) {
		var hb [HeaderLen]byte
		if _, err := io.ReadFull(r, hb[:]); err != nil {
			return nil, fmt.Errorf("wire: read oversized header: %w", err)
		}
		if _, err := io.CopyN(io.Discard, r, int64(n)-HeaderLen); err != nil {
			return nil, fmt.Errorf("wire: skip oversized frame: %w", err)
		}
		return nil, &FrameError{
			Status: StatusTooLarge, Kind: Kind(hb[1]),
			Op: Op(binary.BigEndian.Uint16(hb[2:])), ID: binary.BigEndian.Uint32(hb[4:]),
			Reason: fmt.Sprintf("frame of %d bytes (max %d)", n, maxLen),
		}
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("wire: read frame body: %w", err)
	}
	return Decode(body)
}
