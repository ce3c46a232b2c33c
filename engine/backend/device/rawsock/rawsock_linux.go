//go:build linux

package rawsock

import (
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// conn is a unix connection whose Read and Write go through raw system
// calls. rmu and wmu keep the state the closures share with their caller
// to one reader and one writer at a time.
type conn struct {
	*net.UnixConn
	raw syscall.RawConn

	rmu   sync.Mutex
	rbuf  []byte
	rn    int
	rerr  syscall.Errno
	readF func(fd uintptr) bool
	wait  atomic.Int64 // ns a read may wait in the kernel (SetReadWait)

	wmu    sync.Mutex
	wbuf   []byte
	wn     int
	werr   syscall.Errno
	writeF func(fd uintptr) bool
}

func wrapUnix(uc *net.UnixConn) net.Conn {
	raw, err := uc.SyscallConn()
	if err != nil {
		return uc
	}
	c := &conn{UnixConn: uc, raw: raw}
	c.readF = c.readOnce
	c.writeF = c.writeSome
	return c
}

// rawRW is read(2) or write(2) without entersyscall, retried on EINTR.
func rawRW(trap, fd uintptr, p []byte) (int, syscall.Errno) {
	for {
		n, _, e := syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
		if e != syscall.EINTR {
			return int(n), e
		}
	}
}

// pollSlice is the longest a read waits in ppoll(2) at a time; between
// slices the goroutine lets the scheduler run (and preempt it).
const pollSlice = 5 * time.Millisecond

// pollIn waits up to d in ppoll(2) for fd to become readable, as a raw
// system call: the thread keeps its P. A signal (the runtime's preemption
// request among them) ends the wait early. Not inlined, so that each call
// is a point where the runtime can preempt the goroutine.
//
//go:noinline
func pollIn(fd uintptr, d time.Duration) bool {
	pfd := struct {
		fd              int32
		events, revents int16
	}{fd: int32(fd), events: 0x1} // POLLIN
	ts := syscall.NsecToTimespec(int64(d))
	n, _, e := syscall.RawSyscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	return e == 0 && n == 1
}

// readOnce makes one read(2), and, if nothing is there and SetReadWait
// allows it, waits in the kernel for data before reading again; false
// asks RawConn.Read to wait on the netpoller.
func (c *conn) readOnce(fd uintptr) bool {
	n, e := rawRW(syscall.SYS_READ, fd, c.rbuf)
	if e == syscall.EAGAIN && c.wait.Load() > 0 {
		deadline := time.Now().Add(time.Duration(c.wait.Load()))
		for first := true; e == syscall.EAGAIN; first = false {
			left := time.Until(deadline)
			if left <= 0 || c.wait.Load() <= 0 {
				break
			}
			if !first {
				runtime.Gosched() // let others have the P between slices
			}
			if pollIn(fd, min(left, pollSlice)) {
				n, e = rawRW(syscall.SYS_READ, fd, c.rbuf)
			}
		}
	}
	if e == syscall.EAGAIN {
		return false
	}
	c.rn, c.rerr = n, e
	return true
}

// SetReadWait sets how long a read that finds no data waits for it in the
// kernel before parking on the netpoller (0: not at all).
func (c *conn) SetReadWait(d time.Duration) { c.wait.Store(int64(max(d, 0))) }

// Close closes the connection; a read waiting in the kernel stops waiting
// within one slice.
func (c *conn) Close() error {
	c.wait.Store(0)
	return c.UnixConn.Close()
}

// Read reads as net.Conn.Read does.
func (c *conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return c.UnixConn.Read(p)
	}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	c.rbuf, c.rn, c.rerr = p, 0, 0
	err := c.raw.Read(c.readF)
	n, e := c.rn, c.rerr
	c.rbuf = nil
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case e != 0:
		return 0, c.opError("read", os.NewSyscallError("read", e))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// writeSome writes what remains of wbuf; false asks RawConn.Write to wait
// until the socket is writable.
func (c *conn) writeSome(fd uintptr) bool {
	for c.wn < len(c.wbuf) {
		n, e := rawRW(syscall.SYS_WRITE, fd, c.wbuf[c.wn:])
		if e == syscall.EAGAIN {
			return false
		}
		if e != 0 {
			c.werr = e
			return true
		}
		c.wn += n
	}
	return true
}

// Write writes all of p, as net.Conn.Write does.
func (c *conn) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return c.UnixConn.Write(p)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wbuf, c.wn, c.werr = p, 0, 0
	err := c.raw.Write(c.writeF)
	n, e := c.wn, c.werr
	c.wbuf = nil
	switch {
	case err != nil:
		return n, c.opError("write", err)
	case e != 0:
		return n, c.opError("write", os.NewSyscallError("write", e))
	}
	return n, nil
}

// opError wraps err as the net package would: an *net.OpError from
// RawConn (a deadline, a closed connection) is renamed from "raw-read" or
// "raw-write" to op.
func (c *conn) opError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		e := *oe
		e.Op = op
		return &e
	}
	return &net.OpError{Op: op, Net: "unix", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
