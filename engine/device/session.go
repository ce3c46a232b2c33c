package device

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/device/wire"
)

// errConnLost: the connection ended before the answer came.
var errConnLost = fmt.Errorf("device: connection lost: %w", engine.ErrDevice)

// session is one multiplexed connection: any number of requests in flight,
// answers routed to their callers by request id, in whatever order they
// come.
type session struct {
	nc   net.Conn
	w    *wire.Writer
	mu   sync.Mutex
	wait map[uint32]chan *wire.Frame
	done chan struct{}
	err  error
}

func newSession(nc net.Conn) *session {
	s := &session{nc: nc, w: wire.NewWriter(nc), wait: map[uint32]chan *wire.Frame{}, done: make(chan struct{})}
	go s.readLoop()
	return s
}

func (s *session) dead() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// fail ends the session; waiting callers see done closed.
func (s *session) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	s.err = err
	close(s.done)
	s.nc.Close()
}

func (s *session) readLoop() {
	br := bufio.NewReaderSize(s.nc, 4096)
	for {
		f, err := wire.ReadFrame(br, wire.MaxFrame)
		if err != nil {
			// A device that sends malformed frames is not to be trusted with
			// the rest of the stream either.
			s.fail(err)
			return
		}
		if f.Kind != wire.KindResponse {
			s.fail(errors.New("device: request frame from the device"))
			return
		}
		s.mu.Lock()
		ch := s.wait[f.ID]
		delete(s.wait, f.ID)
		s.mu.Unlock()
		if ch != nil {
			ch <- f // buffered: never blocks
		}
		// Answers for ids no one waits for (given up, or id 0 for a frame
		// the device could not attribute) are dropped.
	}
}

// register reserves id and returns the channel its answer will arrive on.
func (s *session) register(id uint32) (chan *wire.Frame, bool) {
	ch := make(chan *wire.Frame, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, false
	}
	s.wait[id] = ch
	return ch, true
}

func (s *session) forget(id uint32) {
	s.mu.Lock()
	delete(s.wait, id)
	s.mu.Unlock()
}

// send writes a frame before deadline (frames sent at the same time by
// other callers share the write system call); a failed write ends the
// session.
func (s *session) send(f *wire.Frame, deadline time.Time) error {
	if err := s.w.Write(f, deadline); err != nil {
		s.fail(err)
		return errors.Join(errConnLost, err)
	}
	return nil
}
