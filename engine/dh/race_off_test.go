//go:build !race

package dh

const raceEnabled = false
