// Package cputime measures CPU time per call for the CPU-time tests of the
// engines (MODEXP_CPUTIME=1 go test -run CPUTime, docs/PERFORMANCE.md): on a
// shared machine wall-clock benchmarks mostly measure waiting for a core,
// while the CPU time of the batch least disturbed by neighbours (cache and
// TLB evictions, preemption) is a stable figure. Nothing but tests imports
// it.
package cputime

import (
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// OptIn skips t unless MODEXP_CPUTIME=1: the CPU-time tests take seconds
// and report figures rather than assert them.
func OptIn(t testing.TB) {
	t.Helper()
	if os.Getenv("MODEXP_CPUTIME") != "1" {
		t.Skip("set MODEXP_CPUTIME=1")
	}
}

// Thread is the calling OS thread's CPU time (CLOCK_THREAD_CPUTIME_ID,
// nanosecond resolution; getrusage counts in scheduler ticks).
func Thread() time.Duration { return clock(unix.CLOCK_THREAD_CPUTIME_ID) }

// Process is the CPU time of the whole process: every thread, the Go
// runtime's included (CLOCK_PROCESS_CPUTIME_ID).
func Process() time.Duration { return clock(unix.CLOCK_PROCESS_CPUTIME_ID) }

func clock(id int32) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(id, &ts); err != nil {
		panic(err)
	}
	return time.Duration(ts.Nano())
}

// MinThread runs f batches times, iters calls each, on one locked OS
// thread, and returns the smallest thread CPU time per call.
func MinThread(batches, iters int, f func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return minPerCall(Thread, batches, iters, f)
}

// MinProcess is MinThread with the process's CPU time: for work that runs
// on several threads (a private operation's CRT halves, the runtime).
func MinProcess(batches, iters int, f func()) time.Duration {
	return minPerCall(Process, batches, iters, f)
}

func minPerCall(now func() time.Duration, batches, iters int, f func()) time.Duration {
	best := time.Duration(1<<63 - 1)
	for range batches {
		c0 := now()
		for range iters {
			f()
		}
		if d := (now() - c0) / time.Duration(iters); d < best {
			best = d
		}
	}
	return best
}
