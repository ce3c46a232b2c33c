//go:build modexp_testhooks

package main

import (
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/modexp-token/modexp-token/engine/cores"
)

// TestCallersGrowProcs: with more calls in the module at once than
// GOMAXPROCS, GOMAXPROCS grows to hold them (the next power of two),
// while the engines' core count stays at the CPUs. The calls are held in
// the module (the test hook) until all are in.
func TestCallersGrowProcs(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set: the module keeps it")
	}
	cpus := cores.Count()
	before := runtime.GOMAXPROCS(0)
	callers := before + 1
	want := 1
	for want < callers {
		want *= 2
	}
	want = min(want, cores.MaxPerCore*cpus)
	var in sync.WaitGroup
	in.Add(callers)
	release := make(chan struct{})
	testHookEnter = func() { in.Done(); <-release }
	defer func() { testHookEnter = nil }()
	var done sync.WaitGroup
	for range callers {
		done.Go(func() { tsGetInfo(3) })
	}
	in.Wait()
	got := runtime.GOMAXPROCS(0)
	close(release)
	done.Wait()
	if got != want {
		t.Errorf("%d calls in the module at GOMAXPROCS %d: GOMAXPROCS %d, want %d", callers, before, got, want)
	}
	if n := cores.Count(); n != cpus {
		t.Errorf("cores.Count %d after the raise, want the %d CPUs", n, cpus)
	}
}
