// Package rawsock reads and writes unix-socket connections without telling
// the Go scheduler about the system calls, for the two ends of MXP/1
// (engine/device and engine/device/server).
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
// # What it must never do
//
// Block in the kernel (only non-blocking descriptors are wrapped), or
// change what a read or write returns: short reads, io.EOF at the end,
// deadlines, errors after Close and partial writes behave as on the
// wrapped connection.
package rawsock

import "net"

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
