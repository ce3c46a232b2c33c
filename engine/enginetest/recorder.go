package enginetest

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/modexp-token/modexp-token/engine"
)

// Recorder wraps an engine for the tests of the algorithms above it
// (engine/alg/dsa, engine/alg/dh): it records the secret exponents it is given and
// corrupts its results by Mode. Only Exp and ExpVarTime are wrapped: the
// wrapped engine's optional interfaces (ExpPair...) are hidden, so that no
// exponentiation bypasses the faults; a test adds them on its own type.
// A public exponentiation panics: the callers never ask one here.
type Recorder struct {
	engine.Engine
	// Mode is what happens to each result: "" nothing; "flip" its last
	// bit flips; "flip-second" a bit flips in every second result only
	// (the two halves of a pair disagree); "zero" it is zeroed; "long" it
	// gains a leading zero byte; "identity" the exponent is ignored (the
	// base comes back); "device-error" an error wrapping engine.ErrDevice
	// instead.
	Mode string

	mu   sync.Mutex
	exps [][]byte
}

// Exps returns copies of the exponents given so far, in order.
func (r *Recorder) Exps() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.exps...)
}

// Info is the wrapped engine's, named recorder:<Mode>.
func (r *Recorder) Info() engine.Info {
	i := r.Engine.Info()
	i.Name = "recorder:" + r.Mode
	return i
}

// Exp is [engine.Engine]'s: the exponent is secret.
func (r *Recorder) Exp(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return r.expMode(ctx, m, base, exp, false)
}

// ExpVarTime is [engine.Engine]'s: the exponent is public.
func (r *Recorder) ExpVarTime(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return r.expMode(ctx, m, base, exp, true)
}

func (r *Recorder) expMode(ctx context.Context, m engine.Modulus, base, exp []byte, public bool) ([]byte, engine.Cost, error) {
	if public {
		panic("secret exponentiation asked as public")
	}
	r.mu.Lock()
	r.exps = append(r.exps, bytes.Clone(exp))
	n := len(r.exps)
	r.mu.Unlock()
	out, c, err := engine.ExpMode(ctx, r.Engine, m, base, exp, public)
	if err != nil {
		return out, c, err
	}
	switch r.Mode {
	case "flip":
		out[len(out)-1] ^= 1
	case "flip-second":
		if n%2 == 0 {
			out[3] ^= 0x40
		}
	case "zero":
		clear(out)
	case "long":
		out = append([]byte{0}, out...)
	case "identity":
		out = append(make([]byte, len(out)-len(base)), base...)
	case "device-error":
		return nil, c, fmt.Errorf("recorder: %w", engine.ErrDevice)
	}
	return out, c, nil
}
