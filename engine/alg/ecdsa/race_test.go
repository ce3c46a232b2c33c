//go:build race

package ecdsa

// raceBuild: the race detector's instrumentation allocates.
const raceBuild = true
