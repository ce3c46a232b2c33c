//go:build linux

package rsa

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// machineBusySample is the last sample of machineBusy: the time it was
// taken (Unix nanoseconds) and its value.
var machineBusySample struct {
	at   atomic.Int64
	busy atomic.Bool
}

// hostCPUs is the number of online CPUs of the machine (not only those of
// this process's affinity mask: /proc/loadavg counts the whole machine's
// tasks).
var hostCPUs = sync.OnceValue(func() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return runtime.NumCPU()
	}
	n := 0
	for _, r := range bytes.Split(bytes.TrimSpace(b), []byte(",")) {
		lo, hi, ok := bytes.Cut(r, []byte("-"))
		a, err1 := strconv.Atoi(string(lo))
		z := a
		var err2 error
		if ok {
			z, err2 = strconv.Atoi(string(hi))
		}
		if err1 != nil || err2 != nil || z < a {
			return runtime.NumCPU()
		}
		n += z - a + 1
	}
	return max(n, 1)
})

// machineBusyLinux reports whether, at the last sample, every CPU of the
// machine had a runnable task: the running count of /proc/loadavg (which
// includes the caller) at least the number of online CPUs. A second
// goroutine for the other CRT half would then wait for a CPU or take it
// from another process. Sampled at most every 50 ms (a read of a small
// /proc file, about 10 µs); false when /proc/loadavg cannot be read.
func machineBusyLinux() bool {
	now := time.Now().UnixNano()
	last := machineBusySample.at.Load()
	if now-last < int64(50*time.Millisecond) || !machineBusySample.at.CompareAndSwap(last, now) {
		return machineBusySample.busy.Load()
	}
	busy := false
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		// "0.52 0.58 0.59 3/467 12345": the fourth field is running/total.
		if f := bytes.Fields(b); len(f) >= 4 {
			if run, _, ok := bytes.Cut(f[3], []byte("/")); ok {
				if n, err := strconv.Atoi(string(run)); err == nil {
					busy = n >= hostCPUs()
				}
			}
		}
	}
	machineBusySample.busy.Store(busy)
	return busy
}

func init() { machineBusy = machineBusyLinux }
