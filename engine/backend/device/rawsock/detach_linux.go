//go:build linux

package rawsock

import (
	"errors"
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

// fdConn is a unix-socket connection taken out of the runtime's netpoller
// (Detach): its descriptor is non-blocking and read and written with raw
// system calls, and a read or write that must wait does so in ppoll(2) on
// its own thread: as a raw call while the read's wait (SetReadWait) lasts,
// then as an ordinary blocking system call, which gives the P up. Each
// side (read, write) has an eventfd that Close and a change of deadline
// signal, so a wait ends at once.
type fdConn struct {
	fd           int
	revt, wevt   int // eventfds of the read and write sides
	laddr, raddr net.Addr

	closed atomic.Bool
	// cmu: Close holds it to close the descriptors, the setters of
	// deadlines (which signal the eventfds) share it.
	cmu sync.RWMutex

	rmu      sync.Mutex // one reader at a time; held by Close to wait readers out
	rdl      atomic.Int64
	rwaiting atomic.Bool
	wait     atomic.Int64 // ns a read may wait as a raw call (SetReadWait)

	wmu      sync.Mutex
	wdl      atomic.Int64
	wwaiting atomic.Bool
}

func detachUnix(uc *net.UnixConn) (net.Conn, error) {
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var derr error
	if err := raw.Control(func(s uintptr) {
		r, _, e := syscall.Syscall(syscall.SYS_FCNTL, s, syscall.F_DUPFD_CLOEXEC, 0)
		if e != 0 {
			derr = os.NewSyscallError("fcntl", e)
			return
		}
		fd = int(r)
	}); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	c := &fdConn{fd: fd, revt: -1, wevt: -1, laddr: uc.LocalAddr(), raddr: uc.RemoteAddr()}
	for _, p := range []*int{&c.revt, &c.wevt} {
		r, _, e := syscall.Syscall(syscall.SYS_EVENTFD2, 0, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if e != 0 {
			c.closeFDs()
			return nil, os.NewSyscallError("eventfd2", e)
		}
		*p = int(r)
	}
	// The copy shares the open file, non-blocking included. Closing the
	// original takes the socket out of the runtime's epoll set (Go removes
	// a descriptor from it before closing it).
	if err := syscall.SetNonblock(fd, true); err != nil {
		c.closeFDs()
		return nil, err
	}
	uc.Close()
	return c, nil
}

func (c *fdConn) closeFDs() {
	for _, fd := range []int{c.fd, c.revt, c.wevt} {
		if fd >= 0 {
			syscall.Close(fd)
		}
	}
}

// signal wakes a wait on eventfd fd.
func signal(fd int) {
	one := uint64(1)
	rawRW(syscall.SYS_WRITE, uintptr(fd), unsafe.Slice((*byte)(unsafe.Pointer(&one)), 8))
}

// drain empties eventfd fd.
func drain(fd int) {
	var v uint64
	rawRW(syscall.SYS_READ, uintptr(fd), unsafe.Slice((*byte)(unsafe.Pointer(&v)), 8))
}

// Deadlines are Unix nanoseconds, 0 for none; a past one is stored as 1.
func deadlineNS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return max(t.UnixNano(), 1)
}

func (c *fdConn) SetReadDeadline(t time.Time) error {
	return c.setDeadline(&c.rdl, &c.rwaiting, c.revt, t)
}

func (c *fdConn) SetWriteDeadline(t time.Time) error {
	return c.setDeadline(&c.wdl, &c.wwaiting, c.wevt, t)
}

// setDeadline sets one side's deadline and wakes its wait, if one is
// under way, to look at it.
func (c *fdConn) setDeadline(dl *atomic.Int64, waiting *atomic.Bool, evt int, t time.Time) error {
	c.cmu.RLock()
	defer c.cmu.RUnlock()
	if c.closed.Load() {
		return c.opError("set", net.ErrClosed)
	}
	dl.Store(deadlineNS(t))
	if waiting.Load() {
		signal(evt)
	}
	return nil
}

func (c *fdConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

func (c *fdConn) SetReadWait(d time.Duration) { c.wait.Store(int64(max(d, 0))) }

func (c *fdConn) LocalAddr() net.Addr  { return c.laddr }
func (c *fdConn) RemoteAddr() net.Addr { return c.raddr }

// Close ends the waits under way, waits for the reader and the writer to
// leave, then closes the descriptors (never while a system call may still
// use their numbers).
func (c *fdConn) Close() error {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	if c.closed.Swap(true) {
		return c.opError("close", net.ErrClosed)
	}
	c.wait.Store(0)
	signal(c.revt)
	signal(c.wevt)
	c.rmu.Lock()
	c.wmu.Lock()
	c.closeFDs()
	c.wmu.Unlock()
	c.rmu.Unlock()
	return nil
}

// CloseWrite shuts the sending side down.
func (c *fdConn) CloseWrite() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closed.Load() {
		return c.opError("close", net.ErrClosed)
	}
	if err := syscall.Shutdown(c.fd, syscall.SHUT_WR); err != nil {
		return c.opError("close", err)
	}
	return nil
}

// pollFDs waits up to d (negative: no limit) for fd to show events ev or
// evt to become readable, as a raw system call (raw) or an ordinary one.
// It reports whether fd is ready and whether evt is.
func pollFDs(fd, evt int, ev int16, d time.Duration, raw bool) (ready, woken bool) {
	var pfd [2]struct {
		fd              int32
		events, revents int16
	}
	pfd[0].fd, pfd[0].events = int32(fd), ev
	pfd[1].fd, pfd[1].events = int32(evt), 0x1 // POLLIN
	var tsp uintptr
	var ts syscall.Timespec
	if d >= 0 {
		ts = syscall.NsecToTimespec(int64(d))
		tsp = uintptr(unsafe.Pointer(&ts))
	}
	p := uintptr(unsafe.Pointer(&pfd))
	if raw {
		syscall.RawSyscall6(syscall.SYS_PPOLL, p, 2, tsp, 0, 0, 0)
	} else {
		syscall.Syscall6(syscall.SYS_PPOLL, p, 2, tsp, 0, 0, 0)
	}
	runtime.KeepAlive(&pfd)
	runtime.KeepAlive(&ts)
	return pfd[0].revents != 0, pfd[1].revents != 0
}

// await waits until fd may be ready for ev (POLLIN or POLLOUT), the
// connection closes (net.ErrClosed) or the side's deadline passes
// (os.ErrDeadlineExceeded). Until rawUntil (Unix ns) it waits as raw
// calls of at most pollSlice, yielding between them.
func (c *fdConn) await(ev int16, evt int, dl *atomic.Int64, waiting *atomic.Bool, rawUntil int64) error {
	waiting.Store(true)
	defer waiting.Store(false)
	for first := true; ; first = false {
		if c.closed.Load() {
			return net.ErrClosed
		}
		now := time.Now().UnixNano()
		d := time.Duration(-1)
		if t := dl.Load(); t != 0 {
			if now >= t {
				return os.ErrDeadlineExceeded
			}
			d = time.Duration(t - now)
		}
		raw := now < rawUntil && c.wait.Load() > 0
		if raw {
			if !first {
				runtime.Gosched() // let others have the P between slices
			}
			if slice := min(time.Duration(rawUntil-now), pollSlice); d < 0 || slice < d {
				d = slice
			}
		}
		ready, woken := pollFDs(c.fd, evt, ev, d, raw)
		if woken && !c.closed.Load() {
			drain(evt)
		}
		if ready {
			return nil
		}
	}
}

// Read reads as net.Conn.Read does.
func (c *fdConn) Read(p []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.closed.Load() {
		return 0, c.opError("read", net.ErrClosed)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if t := c.rdl.Load(); t != 0 && time.Now().UnixNano() >= t {
		return 0, c.opError("read", os.ErrDeadlineExceeded)
	}
	var rawUntil int64
	for started := false; ; {
		n, e := rawRW(syscall.SYS_READ, uintptr(c.fd), p)
		switch {
		case e == 0 && n == 0:
			return 0, io.EOF
		case e == 0:
			return n, nil
		case e != syscall.EAGAIN:
			return 0, c.opError("read", os.NewSyscallError("read", e))
		}
		if !started {
			started = true
			if w := c.wait.Load(); w > 0 {
				rawUntil = time.Now().UnixNano() + w
			}
		}
		if err := c.await(0x1, c.revt, &c.rdl, &c.rwaiting, rawUntil); err != nil {
			return 0, c.opError("read", err)
		}
	}
}

// Write writes all of p, as net.Conn.Write does.
func (c *fdConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closed.Load() {
		return 0, c.opError("write", net.ErrClosed)
	}
	if t := c.wdl.Load(); t != 0 && time.Now().UnixNano() >= t {
		return 0, c.opError("write", os.ErrDeadlineExceeded)
	}
	done := 0
	for done < len(p) {
		n, e := rawRW(syscall.SYS_WRITE, uintptr(c.fd), p[done:])
		if e == 0 {
			done += n
			continue
		}
		if e != syscall.EAGAIN {
			return done, c.opError("write", os.NewSyscallError("write", e))
		}
		if err := c.await(0x4, c.wevt, &c.wdl, &c.wwaiting, 0); err != nil { // POLLOUT
			return done, c.opError("write", err)
		}
	}
	return done, nil
}

func (c *fdConn) opError(op string, err error) error {
	if errors.Is(err, net.ErrClosed) {
		err = net.ErrClosed
	}
	return &net.OpError{Op: op, Net: "unix", Source: c.laddr, Addr: c.raddr, Err: err}
}
