//go:build !linux

package keystore

import "time"

// No kernel keyring outside Linux: the PIN cache stays in the process.

func keyringRead(string) ([]byte, time.Duration, bool) { return nil, 0, false }
func keyringWrite(string, []byte, time.Duration)       {}
func keyringForget(string)                             {}

// KeyringAvailable reports whether this process may use the kernel
// keyring: never outside Linux.
func KeyringAvailable() bool { return false }
