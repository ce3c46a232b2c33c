//go:build race

package chip

// raceEnabled trims the heaviest simulations: the race detector slows the
// simulators' word loops tenfold.
const raceEnabled = true
