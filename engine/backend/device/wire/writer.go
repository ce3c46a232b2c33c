package wire

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// Writer sends frames on a connection from many goroutines with as few
// write system calls as the load allows ("group commit"): a sender appends
// its encoded frame to a shared buffer; if no one is writing, it becomes
// the writer and writes the buffer, again and again, until the buffer is
// drained. Frames queued while a write is under way go out together in the
// next one. Nothing is kept waiting for a timer: an idle connection's frame
// is written at once by its own sender.
type Writer struct {
	nc net.Conn

	mu      sync.Mutex
	buf     []byte // frames waiting
	spare   []byte // the buffer being written, reused
	writing bool
	idle    *sync.Cond // signalled when a writer stops writing
	err     error      // sticky: the connection is broken
}

// NewWriter returns a Writer on nc.
func NewWriter(nc net.Conn) *Writer {
	w := &Writer{nc: nc}
	w.idle = sync.NewCond(&w.mu)
	return w
}

// Flush waits until every frame queued so far has been written (or the
// connection has failed), so a caller about to close the connection does
// not lose a frame another goroutine was still sending.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	// A writer drains the whole buffer before it stops, so once no one is
	// writing, everything queued before this call has been sent.
	for w.writing {
		w.idle.Wait()
	}
	return w.err
}

// Write queues f and, unless another goroutine is writing (it will send f
// too), writes everything queued, each write bounded by deadline (zero:
// none). It returns an error when f could not be
// encoded or the connection failed; a frame accepted while another
// goroutine writes is reported only through that writer's failure (and the
// connection's end).
func (w *Writer) Write(f *Frame, deadline time.Time) error {
	w.mu.Lock()
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return err
	}
	n := len(w.buf)
	b, err := f.Append(w.buf)
	if err != nil {
		w.buf = b[:n]
		w.mu.Unlock()
		return err
	}
	w.buf = b
	if w.writing {
		w.mu.Unlock()
		return nil
	}
	w.writing = true
	for len(w.buf) > 0 && w.err == nil {
		out := w.buf
		w.buf = w.spare[:0]
		w.mu.Unlock()
		if !deadline.IsZero() {
			w.nc.SetWriteDeadline(deadline)
		}
		_, err := w.nc.Write(out)
		w.mu.Lock()
		if cap(out) <= 4*MaxFrame { // keep a normal buffer, drop a huge one
			w.spare = out[:0]
		}
		if err != nil {
			w.err = fmt.Errorf("wire: write: %w", err)
		}
	}
	w.writing = false
	w.idle.Broadcast()
	err = w.err
	w.mu.Unlock()
	return err
}
