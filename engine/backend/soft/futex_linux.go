package soft

import (
	"sync/atomic"
	"syscall"
	"unsafe"
)

// haveFutex: waiters may sleep in the kernel (waiter.wait).
const haveFutex = true

// futex(2) operations, private to the process.
const (
	futexWaitPrivate = 0 | 128 // FUTEX_WAIT | FUTEX_PRIVATE_FLAG
	futexWakePrivate = 1 | 128 // FUTEX_WAKE | FUTEX_PRIVATE_FLAG
)

// futexWait sleeps while *addr is val, or until woken or interrupted;
// the caller looks again. syscall.Syscall6, not RawSyscall: the runtime
// knows the goroutine is in a system call and may hand its P on.
func futexWait(addr *atomic.Uint32, val uint32) {
	syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWaitPrivate, uintptr(val), 0, 0, 0)
}

// futexWake wakes one sleeper on addr.
func futexWake(addr *atomic.Uint32) {
	syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWakePrivate, 1, 0, 0, 0)
}
