//go:build !linux

package soft

import "sync/atomic"

// haveFutex: no futex here; waiters sleep on their channel.
const haveFutex = false

func futexWait(*atomic.Uint32, uint32) {}

func futexWake(*atomic.Uint32) {}
