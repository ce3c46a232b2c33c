//go:build race

package enginetest

// raceEnabled is true when built with the race detector, which slows the
// arithmetic about tenfold: the suite then defaults to Short and to
// moduli of at most 2048 bits.
const raceEnabled = true
