package rawsock

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
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
	client, server = Wrap(c), Wrap(s)
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
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
}

// TestRoundTrip sends payloads of many sizes each way, the largest far
// above the socket buffer (so writes are partial and wait for the
// reader), and reads them back in odd-sized pieces.
func TestRoundTrip(t *testing.T) {
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

func TestEOF(t *testing.T) {
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

func TestDeadline(t *testing.T) {
	c, _ := pair(t)
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	start := time.Now()
	_, err := c.Read(make([]byte, 8))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "read" {
		t.Fatalf("error %#v: want a *net.OpError for read", err)
	}
	if el := time.Since(start); el < 40*time.Millisecond || el > 5*time.Second {
		t.Fatalf("read returned after %v", el)
	}
	// A write into a full socket waits for room until its deadline.
	c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	n, err := c.Write(make([]byte, 64<<20))
	if !errors.Is(err, os.ErrDeadlineExceeded) || n == 0 || n == 64<<20 {
		t.Fatalf("write into a full socket: %d bytes, %v; want a partial write and the deadline", n, err)
	}
}

func TestClosed(t *testing.T) {
	c, s := pair(t)
	done := make(chan error, 1)
	go func() {
		_, err := s.Read(make([]byte, 8))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the read wait on the poller
	s.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read on a connection closed meanwhile: %v", err)
		}
	case <-time.After(5 * time.Second):
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
func TestConcurrent(t *testing.T) {
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
