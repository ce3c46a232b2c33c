//go:build race

package dh

const raceEnabled = true
