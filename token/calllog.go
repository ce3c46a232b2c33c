package token

// Per-call debug records of the C layer (see cgo/trace.go): the module
// decides whether they are wanted and writes them to its log.

import (
	"context"
	"log/slog"
	"time"

	"github.com/modexp-token/modexp-token/token/ck"
)

// CallRecord is what the C layer knows of one PKCS#11 call. It holds
// handles, types and codes only: never a value the caller passed.
type CallRecord struct {
	Function            string    // "C_Sign"
	Start               time.Time // when the call entered the module
	Session, Slot       uint64
	HasSession, HasSlot bool
	Objects             []uint64 // key and object handles, in argument order
	Mechanism           uint64
	HasMechanism        bool
	Duration            time.Duration
	RV                  uint64
	Err                 error // the token's reason for a refusal (nil: none)
}

// TracingCalls reports whether the C layer should build a record per call:
// the module's log takes debug records.
func (m *Module) TracingCalls() bool { return m.traceCalls }

// LogCall writes one call record at debug level. The reason of a refusal
// is the token's error text, which names attributes, lengths and rules but
// never carries a key, PIN or data byte.
func (m *Module) LogCall(r *CallRecord) {
	attrs := make([]slog.Attr, 0, 8)
	attrs = append(attrs, slog.String("fn", r.Function))
	if r.HasSlot {
		attrs = append(attrs, slog.Uint64("slot", r.Slot))
	}
	if r.HasSession {
		attrs = append(attrs, slog.Uint64("session", r.Session))
	}
	if len(r.Objects) > 0 {
		attrs = append(attrs, slog.Any("objects", r.Objects))
	}
	if r.HasMechanism {
		attrs = append(attrs, slog.String("mechanism", ck.Name("CKM_", r.Mechanism)))
	}
	attrs = append(attrs, slog.Duration("duration", r.Duration), slog.String("rv", ck.Error(r.RV).Error()))
	if r.Err != nil {
		attrs = append(attrs, slog.String("reason", r.Err.Error()))
	}
	m.log.LogAttrs(context.Background(), slog.LevelDebug, "call", attrs...)
}
