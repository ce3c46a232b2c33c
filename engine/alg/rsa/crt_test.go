package rsa

import "testing"

// TestSplitCRTPolicy checks the adaptive policy's inputs: operations in
// flight against the engine's cores, and the machine's load.
func TestSplitCRTPolicy(t *testing.T) {
	defer func(f func() bool, p int) { machineBusy, crtPolicy = f, p }(machineBusy, crtPolicy)
	crtPolicy = crtAdaptive
	k := &Key{}
	pr := &prepared{parallel: true, cores: 2}
	for _, tc := range []struct {
		inFlight int64
		busy     bool
		want     bool
	}{{1, false, true}, {2, false, false}, {1, true, false}, {0, false, true}} {
		machineBusy = func() bool { return tc.busy }
		inFlight.Add(tc.inFlight)
		got := k.splitCRT(pr)
		inFlight.Add(-tc.inFlight)
		if got != tc.want {
			t.Errorf("in flight %d, machine busy %v: split %v, want %v", tc.inFlight, tc.busy, got, tc.want)
		}
	}
	if (&Key{}).splitCRT(&prepared{parallel: false, cores: 1}) {
		t.Error("split on a one-core engine")
	}
}
