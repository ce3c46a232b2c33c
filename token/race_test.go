//go:build race

package token

// raceBuild: the race detector's instrumentation allocates.
const raceBuild = true
