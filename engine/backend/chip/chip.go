package chip

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modexp-token/modexp-token/engine"
)

func init() {
	engine.Register("chip", func(arg string) (engine.Engine, error) { return New(arg) })
}

// ErrInvalidPoint: a curve point given to an EC operation is not on the curve.
var ErrInvalidPoint = errors.New("chip: point not on curve")

// Profiles lists the chip profiles New accepts.
func Profiles() []string { return []string{"cryptech", "orup561", "pukcc"} }

// New makes the simulator named by spec (the part of an engine spec after
// "chip:", e.g. "orup561,f=30e6,nw=5"). See the package documentation for
// the options of each profile.
func New(spec string) (engine.Engine, error) {
	sp, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	var e engine.Engine
	switch sp.Profile {
	case "orup561":
		e, err = newOrup(sp)
	case "pukcc":
		e, err = newPUKCC(sp)
	case "cryptech":
		e, err = newCryptech(sp)
	default:
		return nil, fmt.Errorf("chip: unknown profile %q (want one of %s): %w", sp.Profile, strings.Join(Profiles(), ", "), engine.ErrUnsupported)
	}
	if err != nil {
		return nil, err
	}
	if err := sp.checkUsed(); err != nil {
		return nil, err
	}
	return e, nil
}

// faultKind is an injected fault shared by every profile (in addition to
// the physical faults of a profile's own knobs).
type faultKind int

const (
	faultNone      faultKind = iota
	faultZero                // every result is all zero
	faultZeroAbove           // results for moduli above faultBits bits are all zero
	faultBitflip             // one random bit of every result is flipped
)

// common holds what every profile shares: the spec, the time scale, the
// injected faults and the fault randomness.
type common struct {
	name      string // "chip:" + canonical spec
	timeScale float64
	fault     faultKind
	faultBits int
	seed      uint64
	calls     atomic.Uint64
}

func (c *common) parseCommon(sp *Spec) error {
	c.name = "chip:" + sp.String()
	var err error
	if c.timeScale, err = sp.float("time_scale", 0, 0, 1e6); err != nil {
		return err
	}
	seed, err := sp.float("seed", 0, 0, 1<<53)
	if err != nil {
		return err
	}
	c.seed = uint64(seed)
	if !sp.Has("seed") {
		c.seed = rand.Uint64()
	}
	f := sp.str("fault", "none")
	switch {
	case f == "none":
	case f == "zero":
		c.fault = faultZero
	case f == "bitflip":
		c.fault = faultBitflip
	case strings.HasPrefix(f, "zero-above:"):
		n, err := strconv.Atoi(strings.TrimPrefix(f, "zero-above:"))
		if err != nil || n < 0 {
			return fmt.Errorf("chip: fault %q: want zero-above:BITS", f)
		}
		c.fault, c.faultBits = faultZeroAbove, n
	default:
		return fmt.Errorf("chip: unknown fault %q (want none, zero, bitflip or zero-above:BITS)", f)
	}
	return nil
}

// rng returns a fresh source for one operation's physical or injected
// faults: reproducible from seed=, different for every call.
func (c *common) rng() *rand.Rand {
	return rand.New(rand.NewPCG(c.seed, c.calls.Add(1)))
}

// injected applies the injected fault to a result of an operation on a
// bits-long modulus. It reports whether the result was replaced by zeros
// (so callers may skip computing it).
func (c *common) zeroes(bits int) bool {
	return c.fault == faultZero || (c.fault == faultZeroAbove && bits > c.faultBits)
}

func (c *common) inject(out []byte, bits int) {
	if c.zeroes(bits) {
		clear(out)
		return
	}
	if c.fault == faultBitflip && len(out) > 0 {
		i := c.rng().IntN(len(out) * 8)
		out[len(out)-1-i/8] ^= 1 << (i % 8)
	}
}

// settle sleeps time_scale × the simulated device time, so that a demo
// feels like the hardware. It returns early with ctx's error.
func (c *common) settle(ctx context.Context, cost engine.Cost) error {
	if c.timeScale <= 0 {
		return ctx.Err()
	}
	d := time.Duration(float64(cost.Device) * c.timeScale)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// modulus is the prepared modulus every profile uses; pre holds the
// profile's own per-modulus constants.
type modulus struct {
	n     *big.Int
	b     []byte
	owner any
	pre   any
}

func (m *modulus) BitLen() int   { return m.n.BitLen() }
func (m *modulus) Bytes() []byte { return append([]byte(nil), m.b...) }
func (m *modulus) size() int     { return len(m.b) }

// parseModulus checks an odd modulus > 1 and its size bounds.
func parseModulus(profile string, n []byte, minBits, maxBits int) (*big.Int, error) {
	m := new(big.Int).SetBytes(n)
	if m.Sign() == 0 || m.Bit(0) == 0 || m.Cmp(big.NewInt(1)) == 0 {
		return nil, fmt.Errorf("chip: %s: modulus must be odd and > 1: %w", profile, engine.ErrInvalidModulus)
	}
	if maxBits > 0 && m.BitLen() > maxBits {
		return nil, fmt.Errorf("chip: %s: %d-bit modulus exceeds the %d-bit limit: %w", profile, m.BitLen(), maxBits, engine.ErrOperandTooLarge)
	}
	if m.BitLen() < minBits {
		return nil, fmt.Errorf("chip: %s: %d-bit modulus is below the %d-bit minimum: %w", profile, m.BitLen(), minBits, engine.ErrUnsupported)
	}
	return m, nil
}

// baseBelow parses base and checks base < m.
func baseBelow(profile string, base []byte, m *big.Int) (*big.Int, error) {
	x := new(big.Int).SetBytes(base)
	if x.Cmp(m) >= 0 {
		return nil, fmt.Errorf("chip: %s: base is not below the modulus: %w", profile, engine.ErrOperandTooLarge)
	}
	return x, nil
}

// fixed returns x big-endian in exactly size bytes; a value too long (a
// corrupted result) keeps its low-order bytes, as an output register would.
func fixed(x *big.Int, size int) []byte {
	out := make([]byte, size)
	b := x.Bytes()
	if len(b) > size {
		b = b[len(b)-size:]
	}
	copy(out[size-len(b):], b)
	return out
}

// seconds converts cycles at f Hz to a duration.
func seconds(cycles float64, f float64) time.Duration {
	return time.Duration(cycles / f * 1e9)
}
