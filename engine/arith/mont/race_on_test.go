//go:build race

package mont

// raceEnabled: the race detector slows the arithmetic about tenfold, so
// the largest sizes are left to the runs without it.
const raceEnabled = true
