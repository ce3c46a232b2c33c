package cores

import (
	"runtime"
	"sync"
	"testing"
)

// withProcs runs f with GOMAXPROCS n and the package as at a program's
// start with the GOMAXPROCS variable env, and restores both after.
func withProcs(t *testing.T, n int, env string, f func()) {
	t.Helper()
	defer start("") // after GOMAXPROCS is back
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n))
	start(env)
	f()
}

// TestGrow: from 2 CPUs, GOMAXPROCS follows the callers up by powers of
// two to 8 per CPU, never down, while Count stays at the CPUs.
func TestGrow(t *testing.T) {
	withProcs(t, 2, "", func() {
		for _, c := range []struct{ callers, procs int }{
			{0, 2}, {1, 2}, {2, 2}, {3, 4}, {4, 4}, {2, 4}, {5, 8}, {9, 16}, {1000, 16}, {17, 16}, {1, 16},
		} {
			Grow(c.callers)
			if got := runtime.GOMAXPROCS(0); got != c.procs {
				t.Fatalf("after Grow(%d): GOMAXPROCS %d, want %d", c.callers, got, c.procs)
			}
			if got := Count(); got != 2 {
				t.Fatalf("after Grow(%d): Count %d, want the 2 CPUs", c.callers, got)
			}
		}
	})
}

// TestGrowOperatorsChoice: with the GOMAXPROCS variable set, Grow leaves
// GOMAXPROCS alone and Count follows it.
func TestGrowOperatorsChoice(t *testing.T) {
	withProcs(t, 3, "3", func() {
		Grow(64)
		if got := runtime.GOMAXPROCS(0); got != 3 {
			t.Fatalf("GOMAXPROCS %d after Grow(64) with GOMAXPROCS=3 set, want 3", got)
		}
		if got := Count(); got != 3 {
			t.Fatalf("Count %d, want 3", got)
		}
	})
}

// TestGrowConcurrent: racing callers raise GOMAXPROCS to the bound once
// the peak reaches it, and Count is the CPUs throughout (run with -race).
func TestGrowConcurrent(t *testing.T) {
	withProcs(t, 1, "", func() {
		var wg sync.WaitGroup
		for i := range 32 {
			wg.Go(func() {
				Grow(i + 1)
				if n := Count(); n != 1 {
					t.Errorf("Count %d during the raises, want 1", n)
				}
			})
		}
		wg.Wait()
		if got := runtime.GOMAXPROCS(0); got != MaxPerCore {
			t.Fatalf("GOMAXPROCS %d after callers up to 32 on 1 CPU, want %d", got, MaxPerCore)
		}
	})
}

// TestEnterRoomy: host calls counted by Enter grow GOMAXPROCS, and Roomy
// holds while GOMAXPROCS leaves a P for each of them; without host calls
// (a Go program, modexpd) it does not.
func TestEnterRoomy(t *testing.T) {
	withProcs(t, 1, "", func() {
		if Roomy() {
			t.Fatal("Roomy with no host call in Go")
		}
		for range 3 {
			Enter()
		}
		if got := runtime.GOMAXPROCS(0); got != 4 || !Roomy() {
			t.Fatalf("3 host calls on 1 CPU: GOMAXPROCS %d (want 4), Roomy %v (want true)", got, Roomy())
		}
		for range 3 {
			Leave()
		}
		if Roomy() {
			t.Fatal("Roomy after every host call left")
		}
	})
	withProcs(t, 1, "1", func() { // the operator's GOMAXPROCS: no room for two
		Enter()
		Enter()
		defer Leave()
		defer Leave()
		if Roomy() {
			t.Fatal("Roomy with 2 host calls at the operator's GOMAXPROCS 1")
		}
	})
}
