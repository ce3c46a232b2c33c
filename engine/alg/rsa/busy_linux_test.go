//go:build linux

package rsa

import "testing"

// TestMachineBusyLinux reads the machine's load twice (the second from
// the cached sample) and the CPU count.
func TestMachineBusyLinux(t *testing.T) {
	if n := hostCPUs(); n < 1 {
		t.Fatalf("hostCPUs = %d", n)
	}
	machineBusySample.at.Store(0)
	a := machineBusyLinux()
	b := machineBusyLinux()
	if a != b {
		t.Errorf("the cached sample differs from the one just taken: %v, %v", a, b)
	}
	t.Logf("%d online CPUs; machine busy: %v", hostCPUs(), a)
}
