//go:build race

package report

// raceEnabled skips the chart data: the race detector slows the simulators'
// word loops tenfold.
const raceEnabled = true
