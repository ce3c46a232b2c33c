//go:build linux

package rawsock

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// Poller is a private epoll set of detached connections (Detach), watched
// for readability only (level-triggered): the writability events that the
// runtime's netpoller also takes, one per frame the peer consumes, never
// wake its waiter. One goroutine waits on it at a time.
type Poller struct {
	epfd, evt int
	events    [64]syscall.EpollEvent
}

// NewPoller returns an empty Poller.
func NewPoller() (*Poller, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	r, _, e := syscall.Syscall(syscall.SYS_EVENTFD2, 0, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if e != 0 {
		syscall.Close(epfd)
		return nil, os.NewSyscallError("eventfd2", e)
	}
	p := &Poller{epfd: epfd, evt: int(r)}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN}
	*(*uint64)(unsafe.Pointer(&ev.Fd)) = 0
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, p.evt, &ev); err != nil {
		p.Close()
		return nil, os.NewSyscallError("epoll_ctl", err)
	}
	if _, err := p.Wait(nil, 0); err != nil { // epoll_pwait2 is there (Linux 5.11)
		p.Close()
		return nil, err
	}
	return p, nil
}

// sysEpollPwait2 is epoll_pwait2(2) (Linux 5.11; the same number on every
// architecture), which takes a timeout in nanoseconds.
const sysEpollPwait2 = 441

// errNotDetached: the connection was not made by Detach.
var errNotDetached = errors.New("rawsock: not a detached connection")

// Add watches nc (a connection Detach returned) under key, which must not
// be 0 (Wait's wake-up).
func (p *Poller) Add(nc net.Conn, key uint64) error {
	c, ok := nc.(*fdConn)
	if !ok || key == 0 {
		return errNotDetached
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP}
	*(*uint64)(unsafe.Pointer(&ev.Fd)) = key
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.closed.Load() {
		return net.ErrClosed
	}
	return os.NewSyscallError("epoll_ctl", syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_ADD, c.fd, &ev))
}

// Remove stops watching nc (closing nc does it too).
func (p *Poller) Remove(nc net.Conn) {
	if c, ok := nc.(*fdConn); ok {
		c.rmu.Lock()
		if !c.closed.Load() {
			syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_DEL, c.fd, nil)
		}
		c.rmu.Unlock()
	}
}

// Wake makes the Wait under way (or the next one) return.
func (p *Poller) Wake() { signal(p.evt) }

// Wait waits up to d (negative: without limit) for watched connections to
// become readable (or to end) and appends their keys to keys; a Wake
// ends it early. It waits as a blocking system call.
func (p *Poller) Wait(keys []uint64, d time.Duration) ([]uint64, error) {
	var tsp uintptr
	var ts syscall.Timespec
	if d >= 0 {
		ts = syscall.NsecToTimespec(int64(d))
		tsp = uintptr(unsafe.Pointer(&ts))
	}
	ev := unsafe.Pointer(&p.events[0])
	var n uintptr
	var e syscall.Errno
	if d == 0 {
		n, _, e = syscall.RawSyscall6(sysEpollPwait2, uintptr(p.epfd), uintptr(ev), uintptr(len(p.events)), tsp, 0, 0)
	} else {
		n, _, e = syscall.Syscall6(sysEpollPwait2, uintptr(p.epfd), uintptr(ev), uintptr(len(p.events)), tsp, 0, 0)
	}
	runtime.KeepAlive(&ts)
	if e == syscall.EINTR {
		return keys, nil
	}
	if e != 0 {
		return keys, os.NewSyscallError("epoll_pwait2", e)
	}
	for i := range int(n) {
		k := *(*uint64)(unsafe.Pointer(&p.events[i].Fd))
		if k == 0 {
			drain(p.evt)
			continue
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// Close releases the Poller.
func (p *Poller) Close() error {
	syscall.Close(p.evt)
	return syscall.Close(p.epfd)
}

// TryRead reads what nc (a connection Detach returned) has received, without
// waiting: 0 and nil when nothing is there, io.EOF at the end.
func TryRead(nc net.Conn, b []byte) (int, error) {
	c, ok := nc.(*fdConn)
	if !ok {
		return 0, errNotDetached
	}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.closed.Load() {
		return 0, c.opError("read", net.ErrClosed)
	}
	if len(b) == 0 {
		return 0, nil
	}
	n, e := rawRW(syscall.SYS_READ, uintptr(c.fd), b)
	switch {
	case e == syscall.EAGAIN:
		return 0, nil
	case e != 0:
		return 0, c.opError("read", os.NewSyscallError("read", e))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}
