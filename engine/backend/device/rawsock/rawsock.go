// Package rawsock reads and writes unix-socket connections without telling
// the Go scheduler about the system calls, for the two ends of MXP/1
// (engine/backend/device and cmd/modexpd/server).
//
// # Why
//
// A Go program whose Ps are all idle puts the runtime's monitor thread
// (sysmon) into a deep sleep. The next system call made through the
// syscall package (entersyscall) wakes it and resets its polling period to
// 20 µs, doubling only after 50 idle rounds: about 50–60 wake-ups over the
// next 1–2 ms. A device daemon or client that goes idle between requests —
// which is every request under a light load — pays this on each one; on
// the shared virtual machine of docs/DEVICE_PERF.md each wake-up cost
// ≈ 19 µs of CPU, ≈ 0.19 ms per RSA-2048 signature in modexpd alone
// (measured from the threads' /proc schedstat). The socket is
// non-blocking, so a read or write never blocks in the kernel, and the
// runtime gains nothing from being told: the same calls made with
// syscall.RawSyscall through the connection's syscall.RawConn (which
// still waits for readiness on the netpoller, with the connection's
// deadlines) leave sysmon asleep.
//
// # Waiting in the kernel (client side)
//
// A goroutine that waits for an answer on the netpoller is woken by
// another thread: the one blocked in epoll_wait takes the readiness, and
// when the waiting goroutine is locked to its thread — every call into the
// PKCS#11 module from a C thread is — it must then wake that thread too,
// two cross-CPU wake-ups per answer where the kernel could wake the
// waiting thread directly. [Waiter.SetReadWait] lets a read that finds no
// data wait for it in ppoll(2) on its own thread, as a raw system call,
// for a bounded time, before falling back to the netpoller. Through the
// PKCS#11 module, RSA-2048 signing over a device from 2 C threads ran at
// 68–81 % of the software engine's rate without it and 83–93 % with it
// (docs/DEVICE_PERF.md). The cost: the thread keeps its P while it
// waits, so other goroutines may wait for a P up to one slice (5 ms);
// between slices the waiter yields, and a preemption request (a signal)
// ends a slice early, so garbage collection is not held up.
//
// # What it must never do
//
// Block in the kernel beyond a read's wait set with SetReadWait (none by
// default; only non-blocking descriptors are wrapped), or change what a
// read or write returns: short reads, io.EOF at the end, deadlines, errors
// after Close and partial writes behave as on the wrapped connection.
package rawsock

import (
	"net"
	"time"
)

// Waiter is implemented by the connections Wrap returns on Linux.
type Waiter interface {
	// SetReadWait sets how long a Read that finds no data may wait for it
	// in the kernel, on its own thread, before parking on the netpoller
	// (0, the default: not at all). Close ends such a wait within 5 ms.
	SetReadWait(d time.Duration)
}

// Wrap returns nc with Read and Write made as raw system calls when nc is
// a unix-socket connection on a platform where this is implemented (Linux),
// and nc itself otherwise. Every other method is nc's.
func Wrap(nc net.Conn) net.Conn {
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		return nc
	}
	return wrapUnix(uc)
}

// Detach returns a connection on nc's socket that the Go runtime's
// netpoller does not watch, when nc is a unix-socket connection on Linux;
// nc itself otherwise (wrapped as Wrap does when Detach fails). nc is
// closed on success: use only the result.
//
// Why: the netpoller registers a socket for readability and writability,
// edge-triggered, so every answer that arrives and every frame the peer
// consumes (which frees send space) wakes the thread blocked in
// epoll_wait, if any, even when the reader is already waiting for the
// data itself in ppoll(2): on the 2-vCPU guest of docs/DEVICE_PERF.md a
// thread woken for nothing costs tens of µs. A detached connection waits
// only in ppoll(2) on the caller's own thread: as a raw call (keeping the
// P) for the read's wait (SetReadWait), then as an ordinary blocking
// system call, which lets the runtime hand the P to others. Close and
// deadlines end such waits at once (an eventfd per direction).
func Detach(nc net.Conn) net.Conn {
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		return nc
	}
	if dc, err := detachUnix(uc); err == nil {
		return dc
	}
	return wrapUnix(uc)
}
