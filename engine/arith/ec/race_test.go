//go:build race

package ec

// raceBuild: the race detector slows math/big (the reference) tenfold, so
// tests draw fewer random cases; the edge cases stay.
const raceBuild = true
