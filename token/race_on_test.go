//go:build race

package token

// raceEnabled: the race detector slows SLH-DSA's hashing about tenfold,
// so its slowest cases are left to the runs without it.
const raceEnabled = true
