package server

import (
	"context"
	"crypto/rand"
	"math/big"
	"slices"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire"
)

// CalibrationBudget bounds the time Calibrate spends measuring an engine.
const CalibrationBudget = 2 * time.Second

// calibrationReps is the number of timed runs per size; the median is kept.
const calibrationReps = 3

// Calibrate measures eng and returns the cost model INFO reports
// (wire.CostModel): the median of a few MODEXPs with full-length secret
// exponents at two widths (512 and 1024 bits, or the engine's limit),
// modulus preparation included as the server does it per request, fitted
// to the model's line; and one scalar multiplication on the first curve.
// It stops at CalibrationBudget (or ctx's end) and returns what it has: a
// slow engine (a chip with a large time_scale) may get a partial or empty
// model, which clients treat as unknown.
func Calibrate(ctx context.Context, eng engine.Engine) wire.CostModel {
	ctx, cancel := context.WithTimeout(ctx, CalibrationBudget)
	defer cancel()
	var cm wire.CostModel
	maxBits := eng.Info().MaxModulusBits
	var widths []int
	for _, w := range []int{512, 1024} {
		if maxBits == 0 || w <= maxBits {
			widths = append(widths, w)
		}
	}
	if len(widths) == 0 && maxBits >= 64 {
		widths = []int{maxBits}
	}
	var units []float64
	var times []time.Duration
	for _, w := range widths {
		t, ok := timeModExp(ctx, eng, w)
		if !ok {
			break
		}
		units = append(units, wire.Units(w, w))
		times = append(times, t)
	}
	switch len(times) {
	case 1:
		cm.FixedNS, cm.ModExpPS = wire.FitModExp(units[0], times[0], 0, 0)
	case 2:
		cm.FixedNS, cm.ModExpPS = wire.FitModExp(units[0], times[0], units[1], times[1])
	}
	if ee, ok := engine.As[engine.ECEngine](eng); ok {
		for _, name := range eng.Info().Curves {
			c := wire.LookupCurve(name)
			if c == nil {
				continue
			}
			if t, ok := timeECMul(ctx, ee, c); ok {
				f := c.P.BitLen()
				cm.ECPS = max(1, uint64(float64(t)*1000/wire.Units(f, f)))
			}
			break
		}
	}
	return cm
}

func median(ts []time.Duration) time.Duration {
	slices.Sort(ts)
	return ts[len(ts)/2]
}

// timeModExp times NewModulus+Exp at bits with a full-length exponent.
func timeModExp(ctx context.Context, eng engine.Engine, bits int) (time.Duration, bool) {
	n := randOdd(bits)
	base := new(big.Int).Rsh(n, 1).Bytes()
	exp := randOdd(bits).Bytes()
	var ts []time.Duration
	for range calibrationReps + 1 { // the first run warms up
		start := time.Now()
		m, err := eng.NewModulus(n.Bytes())
		if err != nil {
			return 0, false
		}
		if _, _, err := eng.Exp(ctx, m, base, exp); err != nil {
			return 0, false
		}
		ts = append(ts, time.Since(start))
	}
	return median(ts[1:]), true
}

// timeECMul times a scalar multiplication of the generator.
func timeECMul(ctx context.Context, ee engine.ECEngine, c *wire.Curve) (time.Duration, bool) {
	k := new(big.Int).Rsh(c.P, 2).Bytes()
	var ts []time.Duration
	for range calibrationReps + 1 {
		start := time.Now()
		if _, _, _, err := ee.ScalarBaseMult(ctx, c.Name, k); err != nil {
			return 0, false
		}
		ts = append(ts, time.Since(start))
	}
	return median(ts[1:]), true
}

// randOdd is a random odd number of exactly bits bits.
func randOdd(bits int) *big.Int {
	b := make([]byte, (bits+7)/8)
	rand.Read(b)
	v := new(big.Int).SetBytes(b)
	for i := bits; i < len(b)*8; i++ {
		v.SetBit(v, i, 0)
	}
	v.SetBit(v, bits-1, 1)
	return v.SetBit(v, 0, 1)
}
