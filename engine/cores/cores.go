// Package cores holds the number of goroutines that can compute at once,
// which the engines plan their parallelism with, and lets a host whose
// threads call into Go give the scheduler more Ps than that.
//
// Go sets GOMAXPROCS from the CPUs and the container's CPU limit: that is
// Count. A C thread calling into the module (cgo) needs a P to run Go;
// with more C threads in the module than Ps, each call that finds none
// sleeps until another thread gives one up, and on a virtual machine
// every such hand-off between threads on different CPUs costs a
// cross-CPU wake-up. Grow raises GOMAXPROCS for those threads (the
// kernel then shares the CPUs among them) while Count keeps reporting the
// CPUs, so that the software engine still runs one batch per core.
package cores

import (
	"math"
	"math/bits"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
)

// pinned is the CPU count once Grow has raised GOMAXPROCS above it (0
// before); procs is GOMAXPROCS as last set (math.MaxInt64 once Grow may
// not or need not raise it again); current is GOMAXPROCS as last set,
// always; hostCalls counts the host threads' calls in Go (Enter, Leave).
var (
	pinned, procs, current, hostCalls atomic.Int64
	mu                                sync.Mutex // serialises Grow's raises
)

func init() { start(os.Getenv("GOMAXPROCS")) }

// start sets the state up at the program's start, env being the
// GOMAXPROCS variable.
func start(env string) {
	pinned.Store(0)
	current.Store(int64(runtime.GOMAXPROCS(0)))
	if env != "" {
		procs.Store(math.MaxInt64) // the operator's choice: kept
		return
	}
	procs.Store(int64(runtime.GOMAXPROCS(0)))
}

// MaxPerCore bounds Grow: at most this many Ps per CPU.
const MaxPerCore = 8

// Count is the number of goroutines that can compute at once: GOMAXPROCS
// as Go set it (from the CPUs and the container's limit, or the
// GOMAXPROCS variable), not as Grow raised it. At least 1.
func Count() int {
	if n := pinned.Load(); n > 0 {
		return int(n)
	}
	return max(1, runtime.GOMAXPROCS(0))
}

// Grow makes room for callers goroutines of host threads to hold a P
// each: when they are more than GOMAXPROCS, it raises GOMAXPROCS to the
// next power of two at or above callers, at most MaxPerCore per CPU
// (Count). Raising stops the world once, so it happens at new peaks only
// (at most log2(MaxPerCore) times); GOMAXPROCS is never lowered, and Go
// no longer follows the container's CPU limit once it is raised. An
// operator's GOMAXPROCS variable is obeyed: Grow then does nothing. Safe
// for concurrent use; one atomic load when there is nothing to do.
func Grow(callers int) {
	if int64(callers) <= procs.Load() {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	p := procs.Load()
	if int64(callers) <= p {
		return
	}
	cpus := int64(Count())
	want := min(int64(1)<<bits.Len64(uint64(callers-1)), MaxPerCore*cpus)
	if want <= p {
		procs.Store(math.MaxInt64) // at the bound
		return
	}
	pinned.CompareAndSwap(0, cpus)
	runtime.GOMAXPROCS(int(want))
	current.Store(want)
	procs.Store(want)
}

// Enter counts a host thread's call into Go (a cgo export) and lets
// GOMAXPROCS grow with those calls (Grow). The call ends with Leave.
func Enter() { Grow(int(hostCalls.Add(1))) }

// Leave ends a call counted by Enter.
func Leave() { hostCalls.Add(-1) }

// Roomy reports whether the goroutines computing are host threads' calls
// (Enter) and GOMAXPROCS leaves a P for each of them: one that waits may
// then keep its P through a system call, since no other call needs it.
// A goroutine of a C thread that parks in the Go scheduler instead hands
// its P on and has it handed back through another thread (runtime's
// stoplockedm, startlockedm): two thread switches a wake-up where a wait
// in the kernel costs one.
func Roomy() bool {
	n := hostCalls.Load()
	return n > 0 && n <= current.Load()
}
