package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// CostModel predicts how long a device takes (wall time on the device,
// queueing excluded) to answer an arithmetic request. It travels in INFO as
// the field COST_NS (TagCostNS), so a client can give each request a
// deadline in proportion to its work. The model is the one of
// research/ENGINES.md §D.3, reduced to three coefficients:
//
//	MODEXP      FixedNS + ModExpPS · e · w² / 1000   ns  (w = ⌈modulus bits / 64⌉, e = exponent bits)
//	MODEXP_CRT  FixedNS + 2 · ModExpPS · h · ⌈h/64⌉² / 1000   (h = ⌈bits of P·Q / 2⌉)
//	EC_MUL      FixedNS + ECPS · f · ⌈f/64⌉² / 1000   (f = field bits)
//
// A zero coefficient means "unknown": the prediction is then 0 and the
// client falls back to its fixed timeout.
type CostModel struct {
	FixedNS  uint64 // per request, nanoseconds
	ModExpPS uint64 // picoseconds per exponent bit per 64-bit word² of the modulus
	ECPS     uint64 // picoseconds per scalar bit per 64-bit word² of the field
}

// Limits on the coefficients a receiver accepts (anything above is
// nonsense, or an attempt to make the client wait forever).
const (
	maxFixedNS = uint64(10 * time.Minute)
	maxCoeffPS = 1_000_000_000 // 1 ms per unit
	costFields = 3
)

// Known reports whether the model predicts anything.
func (c CostModel) Known() bool { return c.ModExpPS != 0 || c.ECPS != 0 }

// Encode is the COST_NS field's value: FixedNS, ModExpPS and ECPS as three
// big-endian u64. Receivers read the first three and ignore any more
// (room for later coefficients).
func (c CostModel) Encode() []byte {
	b := make([]byte, 0, 8*costFields)
	b = binary.BigEndian.AppendUint64(b, c.FixedNS)
	b = binary.BigEndian.AppendUint64(b, c.ModExpPS)
	return binary.BigEndian.AppendUint64(b, c.ECPS)
}

// ParseCostModel reads a COST_NS value: a multiple of 8 bytes, at least 24,
// with each coefficient within its limit.
func ParseCostModel(b []byte) (CostModel, error) {
	if len(b) < 8*costFields || len(b)%8 != 0 {
		return CostModel{}, fmt.Errorf("wire: COST_NS of %d bytes (want a multiple of 8, at least %d)", len(b), 8*costFields)
	}
	c := CostModel{
		FixedNS:  binary.BigEndian.Uint64(b),
		ModExpPS: binary.BigEndian.Uint64(b[8:]),
		ECPS:     binary.BigEndian.Uint64(b[16:]),
	}
	if c.FixedNS > maxFixedNS || c.ModExpPS > maxCoeffPS || c.ECPS > maxCoeffPS {
		return CostModel{}, fmt.Errorf("wire: COST_NS out of range (%d ns, %d ps, %d ps)", c.FixedNS, c.ModExpPS, c.ECPS)
	}
	return c, nil
}

func words(bits int) float64 { return float64((bits + 63) / 64) }

func (c CostModel) predict(coeff uint64, units float64) time.Duration {
	if coeff == 0 || units <= 0 {
		return 0
	}
	ns := float64(c.FixedNS) + float64(coeff)*units/1000
	return time.Duration(min(ns, float64(math.MaxInt64/2)))
}

// ModExp predicts a MODEXP with a modulus of modBits and an exponent of
// expBits (0: unknown model).
func (c CostModel) ModExp(modBits, expBits int) time.Duration {
	w := words(modBits)
	return c.predict(c.ModExpPS, float64(max(expBits, 1))*w*w)
}

// ModExpCRT predicts a MODEXP_CRT whose P·Q has nBits.
func (c CostModel) ModExpCRT(nBits int) time.Duration {
	h := (nBits + 1) / 2
	w := words(h)
	return c.predict(c.ModExpPS, 2*float64(h)*w*w)
}

// ECMul predicts an EC_MUL on a field of fieldBits.
func (c CostModel) ECMul(fieldBits int) time.Duration {
	w := words(fieldBits)
	return c.predict(c.ECPS, float64(fieldBits)*w*w)
}

// FitModExp returns the MODEXP coefficients that pass through two measurements
// (units = e·w², as in the model; u1 < u2), never negative. With one
// measurement (u2 == 0) the fixed part is 0.
func FitModExp(u1 float64, t1 time.Duration, u2 float64, t2 time.Duration) (fixedNS, ps uint64) {
	if u2 <= u1 || t2 <= 0 {
		if u1 <= 0 || t1 <= 0 {
			return 0, 0
		}
		return 0, uint64(max(1, math.Round(float64(t1)*1000/u1)))
	}
	slope := float64(t2-t1) * 1000 / (u2 - u1) // ps per unit
	if slope <= 0 {
		return 0, uint64(max(1, math.Round(float64(t2)*1000/u2)))
	}
	fixed := float64(t1) - slope*u1/1000
	if fixed < 0 {
		fixed = 0
	}
	return uint64(fixed), uint64(min(math.Round(slope), maxCoeffPS))
}

// Units is e·w² for a modulus of modBits and an exponent of expBits: what
// ModExpPS multiplies.
func Units(modBits, expBits int) float64 {
	w := words(modBits)
	return float64(expBits) * w * w
}
