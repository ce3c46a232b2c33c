//go:build linux

package rawsock

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
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

// readOnce makes one read(2); false asks RawConn.Read to wait until the
// socket is readable.
func (c *conn) readOnce(fd uintptr) bool {
	n, e := rawRW(syscall.SYS_READ, fd, c.rbuf)
	if e == syscall.EAGAIN {
		return false
	}
	c.rn, c.rerr = n, e
	return true
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
