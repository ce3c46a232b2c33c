package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain points XDG_STATE_HOME at a temporary directory: where the
// machine has no system log, the module's warnings go to the per-user log
// under it (syslog.go), never to the real user's.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "modexp-cgo-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_STATE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
