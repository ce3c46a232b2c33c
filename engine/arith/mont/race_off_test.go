//go:build !race

package mont

const raceEnabled = false
