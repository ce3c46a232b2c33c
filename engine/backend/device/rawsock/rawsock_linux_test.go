package rawsock

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// pair returns the two ends of a unix-socket connection, both wrapped.
func pair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	dir, err := os.MkdirTemp("", "rs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	c, err := net.Dial("unix", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	if s == nil {
		t.FailNow()
	}
	client, server = wrapWith(t)(c), wrapWith(t)(s)
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// wrappers maps a subtest's name to the function making its connections:
// every test runs on Wrap's connections and on Detach's.
var wrappers = map[string]func(net.Conn) net.Conn{"wrap": Wrap, "detach": Detach}

// bothKinds runs f on each kind of connection.
func bothKinds(t *testing.T, f func(t *testing.T)) {
	for _, k := range []string{"wrap", "detach"} {
		t.Run(k, f)
	}
}

// wrapWith is the wrapper of the kind t runs under (see bothKinds).
func wrapWith(t *testing.T) func(net.Conn) net.Conn {
	name := t.Name()
	for k, w := range wrappers {
		if strings.HasSuffix(name, "/"+k) || strings.Contains(name, "/"+k+"/") {
			return w
		}
	}
	return Wrap
}

func TestWrapOnlyUnix(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if Wrap(a) != a {
		t.Fatal("a pipe was wrapped")
	}
	c, _ := pair(t)
	if _, ok := c.(*conn); !ok {
		t.Fatalf("unix connection not wrapped: %T", c)
	}
	if Detach(a) != a {
		t.Fatal("a pipe was detached")
	}
	t.Run("detach", func(t *testing.T) {
		c, _ := pair(t)
		if _, ok := c.(*fdConn); !ok {
			t.Fatalf("unix connection not detached: %T", c)
		}
	})
}

// TestRoundTrip sends payloads of many sizes each way, the largest far
// above the socket buffer (so writes are partial and wait for the
// reader), and reads them back in odd-sized pieces.
func TestRoundTrip(t *testing.T) { bothKinds(t, testRoundTrip) }

func testRoundTrip(t *testing.T) {
	c, s := pair(t)
	for _, n := range []int{1, 7, 4096, 65537, 3 << 20} {
		want := make([]byte, n)
		rand.Read(want)
		for _, dir := range []struct {
			name string
			w, r net.Conn
		}{{"client to server", c, s}, {"server to client", s, c}} {
			done := make(chan error, 1)
			go func() {
				m, err := dir.w.Write(want)
				if err == nil && m != n {
					err = io.ErrShortWrite
				}
				done <- err
			}()
			got := make([]byte, 0, n)
			buf := make([]byte, 1000)
			for len(got) < n {
				m, err := dir.r.Read(buf[:min(len(buf), n-len(got))])
				if err != nil {
					t.Fatalf("%s, %d bytes: read after %d: %v", dir.name, n, len(got), err)
				}
				got = append(got, buf[:m]...)
			}
			if err := <-done; err != nil {
				t.Fatalf("%s, %d bytes: write: %v", dir.name, n, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s, %d bytes: data differs", dir.name, n)
			}
		}
	}
}

func TestEOF(t *testing.T) { bothKinds(t, testEOF) }

func testEOF(t *testing.T) {
	c, s := pair(t)
	if _, err := c.Write([]byte("last")); err != nil {
		t.Fatal(err)
	}
	c.Close()
	got, err := io.ReadAll(s)
	if err != nil || string(got) != "last" {
		t.Fatalf("ReadAll = %q, %v; want \"last\", nil (io.EOF at the end)", got, err)
	}
	if n, err := s.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("read after EOF = %d, %v", n, err)
	}
}

func TestDeadline(t *testing.T) { bothKinds(t, testDeadline) }

func testDeadline(t *testing.T) {
	c, _ := pair(t)
	start := time.Now() // before the deadline is set: a pause between the two cannot shorten the wait seen
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	_, err := c.Read(make([]byte, 8))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "read" {
		t.Fatalf("error %#v: want a *net.OpError for read", err)
	}
	// A lower bound only: load can make the read return later, never
	// before its deadline.
	if el := time.Since(start); el < 50*time.Millisecond {
		t.Fatalf("read returned after %v, before its deadline", el)
	}
	// A write into a full socket waits for room until its deadline, and
	// counts what it wrote before (none at all if the deadline passed
	// before the first write on a busy machine).
	c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	n, err := c.Write(make([]byte, 64<<20))
	if !errors.Is(err, os.ErrDeadlineExceeded) || n == 64<<20 {
		t.Fatalf("write into a full socket: %d bytes, %v; want a partial write and the deadline", n, err)
	}
}

func TestClosed(t *testing.T) { bothKinds(t, testClosed) }

func testClosed(t *testing.T) {
	c, s := pair(t)
	done := make(chan error, 1)
	go func() {
		_, err := s.Read(make([]byte, 8))
		done <- err
	}()
	// Mostly the read is waiting on the poller by then; one that starts
	// after the Close (a loaded machine) must fail the same way.
	time.Sleep(20 * time.Millisecond)
	s.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read on a connection closed meanwhile: %v", err)
		}
	case <-time.After(time.Minute): // a hang guard
		t.Fatal("Close did not end a waiting read")
	}
	if _, err := s.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after close: %v", err)
	}
	// The peer sees the end; a write to it fails (EPIPE), not blocks.
	if _, err := c.Read(make([]byte, 8)); err != io.EOF {
		t.Fatalf("peer read: %v", err)
	}
	var err error
	for range 10 {
		if _, err = c.Write([]byte("x")); err != nil {
			break
		}
	}
	if err == nil {
		t.Fatal("writes to a closed peer succeed")
	}
}

// TestConcurrent: a reader and a writer on each end at once (the way both
// ends of MXP/1 use a connection).
func TestConcurrent(t *testing.T) { bothKinds(t, testConcurrent) }

func testConcurrent(t *testing.T) {
	c, s := pair(t)
	const n, size = 2000, 300
	echo := make(chan error, 1)
	go func() { // server: echo everything
		buf := make([]byte, 4096)
		for {
			m, err := s.Read(buf)
			if err != nil {
				echo <- err
				return
			}
			if _, err := s.Write(buf[:m]); err != nil {
				echo <- err
				return
			}
		}
	}()
	want := make([]byte, n*size)
	rand.Read(want)
	go func() {
		for i := range n {
			if _, err := c.Write(want[i*size : (i+1)*size]); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("echo differs")
	}
	c.Close()
	if err := <-echo; err != io.EOF && !errors.Is(err, net.ErrClosed) {
		t.Fatalf("server: %v", err)
	}
}

// writeAfter writes msg on w after d, from another goroutine.
func writeAfter(t *testing.T, w net.Conn, d time.Duration, msg string) {
	t.Helper()
	go func() {
		time.Sleep(d)
		if _, err := w.Write([]byte(msg)); err != nil {
			t.Error(err)
		}
	}()
}

// TestReadWait: a read allowed to wait in the kernel gets data that comes
// within the wait, and data that comes after it (through the netpoller).
func TestReadWait(t *testing.T) { bothKinds(t, testReadWait) }

func testReadWait(t *testing.T) {
	c, s := pair(t)
	c.(Waiter).SetReadWait(200 * time.Millisecond)
	buf := make([]byte, 16)
	for _, tc := range []struct {
		after time.Duration
		msg   string
	}{{5 * time.Millisecond, "within"}, {0, "at once"}} {
		writeAfter(t, s, tc.after, tc.msg)
		n, err := c.Read(buf)
		if err != nil || string(buf[:n]) != tc.msg {
			t.Fatalf("read: %q, %v", buf[:n], err)
		}
	}
	c.(Waiter).SetReadWait(5 * time.Millisecond)
	writeAfter(t, s, 40*time.Millisecond, "after the wait")
	n, err := c.Read(buf[:14])
	if err != nil || string(buf[:n]) != "after the wait" {
		t.Fatalf("read after the wait: %q, %v", buf[:n], err)
	}
}

// TestReadWaitInterrupted: a read waiting in the kernel ends when the
// connection closes, or when its wait is withdrawn and a past deadline set
// (what engine/backend/device does when a caller's context ends). The wait is far
// longer than any test run and nothing is ever written, so a read that
// returns at all was interrupted.
func TestReadWaitInterrupted(t *testing.T) { bothKinds(t, testReadWaitInterrupted) }

func testReadWaitInterrupted(t *testing.T) {
	for _, how := range []string{"close", "deadline"} {
		t.Run(how, func(t *testing.T) {
			c, _ := pair(t)
			c.(Waiter).SetReadWait(time.Hour)
			go func() {
				time.Sleep(20 * time.Millisecond)
				if how == "close" {
					c.Close()
				} else {
					c.(Waiter).SetReadWait(0)
					c.SetReadDeadline(time.Unix(1, 0))
				}
			}()
			_, err := c.Read(make([]byte, 4))
			if err == nil {
				t.Fatal("read succeeded")
			}
			if how == "deadline" && !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("error %v, want a deadline", err)
			}
		})
	}
}

// TestReadWaitLetsGCRun: readers waiting in the kernel hold their Ps, but
// a collection (which must stop every goroutine) still completes, and other
// goroutines still run, while every reader is still waiting: the readers'
// wait is far longer than the test and their data is written only after
// the collection, so a collection that needed a reader to give up its P
// first would never end (go test's timeout reports it).
func TestReadWaitLetsGCRun(t *testing.T) { bothKinds(t, testReadWaitLetsGCRun) }

func testReadWaitLetsGCRun(t *testing.T) {
	n := runtime.GOMAXPROCS(0) + 1 // more waiters than Ps
	var ends []net.Conn
	var returned atomic.Int32
	readers := make(chan struct{}, n)
	for range n {
		c, s := pair(t)
		ends = append(ends, s)
		c.(Waiter).SetReadWait(time.Hour)
		go func() {
			c.Read(make([]byte, 4))
			returned.Add(1)
			readers <- struct{}{}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	runtime.GC()
	done := make(chan struct{})
	go func() { close(done) }()
	<-done
	if r := returned.Load(); r != 0 {
		t.Errorf("%d of %d readers returned before the collection and a goroutine ran; want none (nothing was written)", r, n)
	}
	for _, s := range ends {
		s.Write([]byte("bye!"))
	}
	for range n {
		<-readers
	}
}
