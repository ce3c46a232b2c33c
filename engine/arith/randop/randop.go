// Package randop draws deterministic random operands from a seeded
// generator: the chip simulators' self-tests and reproduction table
// (cmd/modexp-token/report: the same seed gives the same numbers in both) and
// the engine conformance suite (engine/enginetest).
package randop

import (
	"math/big"
	"math/rand/v2"
)

// Odd returns a random odd modulus of exactly n bits.
func Odd(r *rand.Rand, n int) *big.Int {
	m := Bits(r, n)
	m.SetBit(m, n-1, 1)
	m.SetBit(m, 0, 1)
	return m
}

// Bits returns a random number of at most n bits.
func Bits(r *rand.Rand, n int) *big.Int {
	b := make([]byte, (n+7)/8)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	if extra := len(b)*8 - n; extra > 0 {
		b[0] &= 0xff >> extra
	}
	return new(big.Int).SetBytes(b)
}
