package device

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/device/rawsock"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire"
)

// errConnLost: the connection ended before the answer came.
var errConnLost = fmt.Errorf("device: connection lost: %w", engine.ErrDevice)

// interrupted is a read deadline in the past: setting it makes the
// connection's pending Read return at once with os.ErrDeadlineExceeded.
var interrupted = time.Unix(1, 0)

// session is one multiplexed connection: any number of requests in flight,
// answers routed to their callers by request id, in whatever order they
// come.
//
// There is no reader goroutine. A caller waiting for its answer that finds
// no one reading becomes the reader (the leader): it reads frames, hands
// the other callers' answers to them, and returns when its own arrives,
// offering the leadership to another waiting caller. Under a light load
// the caller thus reads its own answer off the socket, without a
// goroutine (and often an OS thread) woken only to pass it on. A leader
// whose context ends interrupts its own read with a past read deadline;
// the next leader clears it.
type session struct {
	nc   net.Conn
	w    *wire.Writer
	mu   sync.Mutex
	wait map[uint32]chan *wire.Frame
	done chan struct{}
	err  error

	users atomic.Int32 // callers using the session (picked, not yet done)

	reading bool          // a caller is the reader (under mu)
	lead    chan struct{} // capacity 1: the leadership offered to a waiting caller

	// Read buffer, used only by the leader: bytes rbuf[rpos:rend] are
	// received and not yet consumed. A frame is consumed only once whole,
	// so an interrupted read loses nothing.
	rbuf       []byte
	rpos, rend int
}

func newSession(nc net.Conn) *session {
	return &session{nc: nc, w: wire.NewWriter(nc), wait: map[uint32]chan *wire.Frame{},
		done: make(chan struct{}), lead: make(chan struct{}, 1), rbuf: make([]byte, 4096)}
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

// release gives up the leadership (s.mu held) and offers it to the
// callers still waiting, if any. A stale offer is harmless: whoever takes
// it checks reading under s.mu.
func (s *session) release() {
	s.reading = false
	if len(s.wait) > 0 {
		select {
		case s.lead <- struct{}{}:
		default: // an offer is already pending
		}
	}
}

// testHookAwait, when not nil, is told of each turn of a caller in await:
// leader true as it becomes the reader, false as it goes to wait while
// another reads. Tests only (export_test.go), set while no call runs:
// they force an order of leaders and waiters instead of hoping for one.
var testHookAwait func(ctx context.Context, leader bool)

// await waits for the answer to id (registered, its channel ch), reading
// the connection itself whenever no one else does. It returns errConnLost
// when the session ends first and ctx.Err() when ctx does; in both cases
// the caller still has to drop the session or forget id.
func (s *session) await(ctx context.Context, id uint32, ch chan *wire.Frame, wait time.Duration) (*wire.Frame, error) {
	offered := false // took an offer of the leadership and did not lead
	defer func() {
		if offered {
			s.mu.Lock()
			if !s.reading && s.err == nil {
				s.release() // pass the offer on
			}
			s.mu.Unlock()
		}
	}()
	for {
		s.mu.Lock()
		// A leader delivers an answer before it can give up the leadership,
		// so with reading false under s.mu an empty ch is really empty.
		select {
		case f := <-ch:
			s.mu.Unlock()
			return f, nil
		default:
		}
		if s.err != nil {
			s.mu.Unlock()
			return nil, errConnLost
		}
		if !s.reading {
			s.reading = true
			offered = false
			s.mu.Unlock()
			if h := testHookAwait; h != nil {
				h(ctx, true)
			}
			return s.readOwn(ctx, id, wait)
		}
		s.mu.Unlock()
		if h := testHookAwait; h != nil {
			h(ctx, false)
		}
		select {
		case f := <-ch:
			return f, nil
		case <-s.done:
			return nil, errConnLost
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.lead:
			offered = true
		}
	}
}

// readOwn is the leader's loop: read frames, deliver the others' answers,
// return with its own (or when ctx ends, or the session). Its reads may
// wait up to wait in the kernel (rawsock.Waiter) before parking.
func (s *session) readOwn(ctx context.Context, id uint32, wait time.Duration) (*wire.Frame, error) {
	w, _ := s.nc.(rawsock.Waiter)
	if w != nil {
		w.SetReadWait(wait)
	}
	stop := context.AfterFunc(ctx, func() {
		if w != nil {
			w.SetReadWait(0) // a read waiting in the kernel stops within a slice
		}
		s.nc.SetReadDeadline(interrupted)
	})
	defer stop()
	for {
		f, err := s.readFrame()
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				// Ours, or left by an earlier leader's interruption (or a
				// late one): clear it first, then look at ctx, so that an
				// interruption set after the clear is seen by the next read.
				s.nc.SetReadDeadline(time.Time{})
				if ctx.Err() != nil {
					s.mu.Lock()
					delete(s.wait, id)
					s.release()
					s.mu.Unlock()
					return nil, ctx.Err()
				}
				continue
			}
			// A device that sends malformed frames is not to be trusted with
			// the rest of the stream either.
			s.fail(err)
			return nil, errConnLost
		}
		if f.Kind != wire.KindResponse {
			s.fail(errors.New("device: request frame from the device"))
			return nil, errConnLost
		}
		s.mu.Lock()
		ch := s.wait[f.ID]
		delete(s.wait, f.ID)
		if f.ID == id && ch != nil {
			s.release()
			s.mu.Unlock()
			return f, nil
		}
		s.mu.Unlock()
		if ch != nil {
			ch <- f // buffered, and delivered once: never blocks
		}
		// Answers for ids no one waits for (given up, or id 0 for a frame
		// the device could not attribute) are dropped.
	}
}

// readFrame returns the next whole frame, reading the connection as
// needed. On a read error the bytes of a partial frame stay buffered.
func (s *session) readFrame() (*wire.Frame, error) {
	for {
		avail := s.rend - s.rpos
		need := 4
		if avail >= 4 {
			n := int(binary.BigEndian.Uint32(s.rbuf[s.rpos:]))
			if n < wire.HeaderLen || n > wire.MaxFrame {
				return nil, &wire.FrameError{Status: wire.StatusBadFrame, Fatal: true, Reason: fmt.Sprintf("length %d out of range", n)}
			}
			need = 4 + n
			if avail >= need {
				body := make([]byte, n)
				copy(body, s.rbuf[s.rpos+4:s.rpos+need])
				s.rpos += need
				if s.rpos == s.rend {
					s.rpos, s.rend = 0, 0
				}
				return wire.Decode(body)
			}
		}
		if len(s.rbuf)-s.rpos < need { // make room for the frame
			if need > len(s.rbuf) {
				nb := make([]byte, need)
				copy(nb, s.rbuf[s.rpos:s.rend])
				s.rbuf = nb
			} else {
				copy(s.rbuf, s.rbuf[s.rpos:s.rend])
			}
			s.rpos, s.rend = 0, avail
		}
		m, err := s.nc.Read(s.rbuf[s.rend:])
		s.rend += m
		if err != nil {
			return nil, err
		}
	}
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
