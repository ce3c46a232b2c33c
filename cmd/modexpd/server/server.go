// Package server is the serving side of MXP/1: it answers the wire
// protocol (package [github.com/modexp-token/modexp-token/engine/backend/device/wire])
// on behalf of any engine.Engine, for the daemon cmd/modexpd and for
// in-process tests of the client.
//
// # Guarantees
//
// Every request gets exactly one answer (CANCEL none), unless a fault is
// injected on purpose or the connection dies. Malformed frames, unknown
// ops, oversized operands and bad arguments are answered with a status
// code and the connection is kept whenever the stream is still in step;
// the server does not panic on input (a handler that panics answers
// INTERNAL). Arguments are validated here, before the engine sees them,
// so every backing engine refuses the same things the same way.
//
// # Security
//
// Unix-socket peers are checked with SO_PEERCRED against an allow-list of
// uids (default: the daemon's own). TCP listeners are served only with a
// TLS configuration (TLS 1.3, pinned client certificates; see
// wire.ServerTLSConfig). The server keeps no operand after answering: it
// is a stateless coprocessor, and a modulus cache would keep secret primes.
package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/device/rawsock"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire"
)

// Defaults for Config.
const (
	DefaultMaxConns    = 64
	DefaultMaxInflight = 32
	DefaultDeadline    = 60 * time.Second // for requests without DEADLINE_MS
	MaxDeadline        = 10 * time.Minute
	handshakeTimeout   = 5 * time.Second
	writeTimeout       = 10 * time.Second
	retryAfter         = 100 // ms, sent with BUSY and SHUTTING_DOWN
)

// Config configures a Server.
type Config struct {
	Engine      engine.Engine // required
	Logger      *slog.Logger  // nil: discard
	Faults      []Fault       // injected faults, for tests and demonstrations
	MaxConns    int           // concurrent connections; 0: DefaultMaxConns
	MaxInflight int           // per connection; 0: DefaultMaxInflight
	// AllowUIDs are the unix-socket peer uids accepted; empty: the daemon's
	// own uid only.
	AllowUIDs []int
	// TLS configures TCP listeners; without it Serve refuses them.
	TLS *tls.Config
	// Firmware is reported by INFO.
	Firmware string
	// BatchLoop serves the unix-socket connections from one batch loop
	// (loop.go) when the engine batches: cheaper with more clients than
	// cores (4 client processes on 2 cores: 1.1-1.2 context switches a
	// signature instead of 2.0-2.6), dearer with 1 or 2 (docs/DEVICE_PERF.md).
	// Off: a reader per connection.
	BatchLoop bool
	// Cost is the cost model INFO reports (COST_NS). nil: New measures the
	// engine (Calibrate); a zero model: none reported.
	Cost *wire.CostModel
}

// Server answers MXP/1 on any number of listeners.
type Server struct {
	cfg      Config
	log      *slog.Logger
	stats    *stats
	sem      chan struct{} // engine concurrency
	info     wire.Frame    // INFO answer fields
	cost     wire.CostModel
	allow    map[int]bool
	hardCtx  context.Context // cancelled by Close: ends hung requests
	hardStop context.CancelFunc
	draining atomic.Bool
	inflight atomic.Int64
	drops    atomic.Uint64
	wg       sync.WaitGroup // running requests
	mods     modCache
	// load is a moving average (×loadOne, weight 1/8 per request) of the
	// arithmetic requests already in flight when one arrives: the daemon's
	// recent concurrency, which decides whether a MODEXP_PAIR may take two
	// cores (see modExpPair).
	load atomic.Int64
	// cores is the engine's core count; sem has that many slots, or a
	// batch's worth per core for an engine.BatchEngine.
	cores int
	// inlineOK: a connection's reader may serve its only request itself
	// (no fault that holds requests back is configured).
	inlineOK bool
	// loop serves the unix-socket connections when the engine batches
	// (loop.go); nil: a reader per connection.
	loop *batchLoop

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	idle      chan struct{} // closed when inflight reaches 0 while draining
}

// New checks cfg and makes a server.
func New(cfg Config) (*Server, error) {
	if cfg.Engine == nil {
		return nil, errors.New("server: no engine")
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.MaxInflight <= 0 {
		cfg.MaxInflight = DefaultMaxInflight
	}
	s := &Server{cfg: cfg, log: cfg.Logger, stats: newStats(),
		listeners: map[net.Listener]struct{}{}, conns: map[*conn]struct{}{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.hardCtx, s.hardStop = context.WithCancel(context.Background())
	cores := max(cfg.Engine.Info().Cores, 1)
	s.cores = cores
	slots := cores
	if be, ok := engine.As[engine.BatchEngine](cfg.Engine); ok && be.BatchWidth() > 2 {
		// The engine gathers what runs at once: let a batch's worth of
		// requests (pairs: two exponentiations each) in per core.
		slots = cores * be.BatchWidth() / 2
	}
	s.sem = make(chan struct{}, slots)
	s.inlineOK = true
	for _, f := range cfg.Faults {
		if f.Kind == FaultHang || f.Kind == FaultSlow {
			s.inlineOK = false
		}
	}
	s.loop = newBatchLoop(s)
	s.allow = map[int]bool{}
	if len(cfg.AllowUIDs) == 0 {
		s.allow[os.Getuid()] = true
	}
	for _, u := range cfg.AllowUIDs {
		s.allow[u] = true
	}
	if cfg.Cost != nil {
		s.cost = *cfg.Cost
	} else {
		s.cost = Calibrate(context.Background(), cfg.Engine)
	}
	s.info = s.buildInfo()
	return s, nil
}

// Cost is the cost model INFO reports.
func (s *Server) Cost() wire.CostModel { return s.cost }

// Stats returns the server's counters.
func (s *Server) Stats() Snapshot {
	snap := s.stats.snapshot()
	snap.Engine = s.cfg.Engine.Info().Name
	snap.Draining = s.draining.Load()
	snap.InFlight = s.inflight.Load()
	snap.Load = float64(s.load.Load()) / loadOne
	if bs, ok := s.cfg.Engine.(batchStatser); ok {
		snap.Batches, snap.BatchLanes = bs.BatchStats()
	}
	for _, f := range s.cfg.Faults {
		snap.Faults = append(snap.Faults, f.String())
	}
	return snap
}

// batchStatser is an engine that counts its batches (the software
// engine's scheduler).
type batchStatser interface {
	BatchStats() (batches, lanes int64)
}

// ErrServerClosed is returned by Serve after Shutdown or Close.
var ErrServerClosed = errors.New("server: closed")

// Serve accepts connections on l until Shutdown or Close. A listener other
// than a unix socket needs Config.TLS.
func (s *Server) Serve(l net.Listener) error {
	_, isUnix := l.Addr().(*net.UnixAddr)
	if !isUnix && s.cfg.TLS == nil {
		return fmt.Errorf("server: refusing to serve %s without TLS", l.Addr())
	}
	s.mu.Lock()
	if s.draining.Load() {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	s.log.Info("serving", "addr", l.Addr().String(), "engine", s.cfg.Engine.Info().Name)
	var delay time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.draining.Load() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.log.Warn("accept", "err", err, "retry_in", delay)
				time.Sleep(delay)
				continue
			}
			return fmt.Errorf("server: accept: %w", err)
		}
		delay = 0
		go s.serveConn(nc, isUnix)
	}
}

// peerAllowed checks a unix peer's uid with SO_PEERCRED.
func (s *Server) peerAllowed(nc net.Conn) (int, error) {
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		return -1, errors.New("not a unix connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return -1, err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return -1, err
	}
	if cerr != nil {
		return -1, fmt.Errorf("SO_PEERCRED: %w", cerr)
	}
	if !s.allow[int(cred.Uid)] {
		return int(cred.Uid), fmt.Errorf("uid %d not allowed", cred.Uid)
	}
	return int(cred.Uid), nil
}

type conn struct {
	s        *Server
	nc       net.Conn
	peer     string
	ctx      context.Context // cancelled when the connection ends
	cancel   context.CancelFunc
	w        *wire.Writer
	mu       sync.Mutex
	inflight map[uint32]context.CancelFunc
	lc       *loopConn // served by the batch loop (loop.go), or nil
}

func (s *Server) serveConn(nc net.Conn, isUnix bool) {
	peer := nc.RemoteAddr().String()
	if isUnix {
		uid, err := s.peerAllowed(nc)
		if err != nil {
			s.stats.add(&s.stats.peersRejected)
			s.log.Warn("peer refused", "err", err)
			nc.Close()
			return
		}
		peer = fmt.Sprintf("uid:%d", uid)
		if s.loop != nil {
			nc = rawsock.Detach(nc) // out of the netpoller: the loop polls it (loop.go)
		} else {
			nc = rawsock.Wrap(nc) // see rawsock: no scheduler wake-up per request
		}
	} else {
		tc := tls.Server(nc, s.cfg.TLS)
		ctx, cancel := context.WithTimeout(s.hardCtx, handshakeTimeout)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			s.stats.add(&s.stats.peersRejected)
			s.log.Warn("tls handshake refused", "peer", peer, "err", err)
			nc.Close()
			return
		}
		nc = tc
	}
	c := &conn{s: s, nc: nc, w: wire.NewWriter(nc), peer: peer, inflight: map[uint32]context.CancelFunc{}}
	c.ctx, c.cancel = context.WithCancel(s.hardCtx)
	s.mu.Lock()
	if len(s.conns) >= s.cfg.MaxConns || s.draining.Load() {
		s.mu.Unlock()
		s.log.Warn("connection refused: too many or draining", "peer", peer)
		nc.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	s.stats.connDelta(1)
	s.log.Debug("connected", "peer", peer)
	defer func() {
		c.cancel()
		nc.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.stats.connDelta(-1)
		s.log.Debug("disconnected", "peer", peer)
	}()
	if isUnix && s.loop != nil && s.loop.add(c) {
		<-c.lc.gone
		return
	}
	c.readLoop()
}

func (c *conn) readLoop() {
	br := bufio.NewReaderSize(c.nc, 4096)
	for {
		f, err := wire.ReadFrame(br, wire.MaxFrame)
		if !c.handle(f, err) {
			return
		}
	}
}

// handle serves what wire.ReadFrame returned, f or err; false: the
// connection is to end.
func (c *conn) handle(f *wire.Frame, err error) bool {
	if err != nil {
		var fe *wire.FrameError
		if !errors.As(err, &fe) {
			if !errors.Is(err, io.EOF) && c.ctx.Err() == nil {
				c.s.log.Debug("read", "peer", c.peer, "err", err)
			}
			return false
		}
		c.s.stats.add(&c.s.stats.badFrames)
		c.s.log.Warn("bad frame", "peer", c.peer, "err", fe)
		if fe.Kind != wire.KindResponse {
			r := &wire.Frame{Version: wire.Version, Kind: wire.KindResponse, Op: fe.Op, ID: fe.ID, Status: fe.Status}
			r.AddString(wire.TagMessage, truncate(fe.Reason))
			if fe.Status == wire.StatusBadVersion {
				r.AddU8(wire.TagProtoMin, wire.MinVersion).AddU8(wire.TagProtoMax, wire.MaxVersion)
			}
			c.write(r)
		}
		if fe.Fatal {
			// The answer may be queued behind another goroutine's
			// write: let it go out before the connection closes.
			_ = c.w.Flush()
			return false
		}
		return true
	}
	if f.Kind != wire.KindRequest {
		c.s.stats.add(&c.s.stats.badFrames)
		return true // a response sent to the server has no one to answer
	}
	c.dispatch(f)
	return true
}

func truncate(s string) string {
	if len(s) > wire.MaxMessage {
		return s[:wire.MaxMessage]
	}
	return s
}

// write sends one frame; a failed write ends the connection.
func (c *conn) write(f *wire.Frame) {
	if err := c.w.Write(f, time.Now().Add(writeTimeout)); err != nil {
		c.s.log.Debug("write", "peer", c.peer, "err", err)
		c.nc.Close()
	}
}

func (c *conn) answer(req *wire.Frame, st wire.Status, msg string) {
	r := wire.NewResponse(req, st)
	if msg != "" {
		r.AddString(wire.TagMessage, truncate(msg))
	}
	if st == wire.StatusBusy || st == wire.StatusShuttingDown {
		r.AddU32(wire.TagRetryAfterMS, retryAfter)
	}
	c.write(r)
}

// criticalUnknown reports an unknown critical tag.
func criticalUnknown(f *wire.Frame) (wire.Tag, bool) {
	for _, fl := range f.Fields {
		if fl.Tag >= wire.TagCritical {
			return fl.Tag, true
		}
	}
	return 0, false
}

func (c *conn) dispatch(f *wire.Frame) {
	s := c.s
	start := time.Now()
	if t, bad := criticalUnknown(f); bad {
		s.stats.record(f.Op, wire.StatusUnsupported, 0)
		c.answer(f, wire.StatusUnsupported, fmt.Sprintf("unknown critical field %#x", uint16(t)))
		return
	}
	switch f.Op {
	case wire.OpCancel:
		id, ok, err := f.Uint(wire.TagTargetID)
		if ok && err == nil {
			c.mu.Lock()
			if cancel := c.inflight[uint32(id)]; cancel != nil {
				cancel() // seen in run: Canceled while the connection lives
			}
			c.mu.Unlock()
		}
		return
	case wire.OpInfo:
		r := wire.NewResponse(f, wire.StatusOK)
		r.Fields = append(r.Fields, s.info.Fields...)
		s.stats.record(f.Op, wire.StatusOK, time.Since(start))
		c.write(r)
		return
	case wire.OpPing:
		r := wire.NewResponse(f, wire.StatusOK)
		if p, ok := f.Get(wire.TagPayload); ok {
			r.Add(wire.TagPayload, p)
		}
		s.stats.record(f.Op, wire.StatusOK, time.Since(start))
		c.write(r)
		return
	case wire.OpStatus:
		js, err := json.Marshal(s.Stats())
		if err != nil {
			c.answer(f, wire.StatusInternal, err.Error())
			return
		}
		r := wire.NewResponse(f, wire.StatusOK).Add(wire.TagStats, js)
		if r.EncodedLen()-4 > wire.MaxFrame {
			c.answer(f, wire.StatusInternal, "statistics too large for a frame")
			return
		}
		s.stats.record(f.Op, wire.StatusOK, time.Since(start))
		c.write(r)
		return
	case wire.OpModExp, wire.OpModExpCRT, wire.OpModExpPair, wire.OpECMul, wire.OpSelfTest:
	default:
		s.stats.record(f.Op, wire.StatusUnknownOp, 0)
		c.answer(f, wire.StatusUnknownOp, "")
		return
	}

	if s.draining.Load() {
		s.stats.record(f.Op, wire.StatusShuttingDown, 0)
		c.answer(f, wire.StatusShuttingDown, "draining")
		return
	}
	budget := DefaultDeadline
	if ms, ok, err := f.Uint(wire.TagDeadlineMS); err != nil {
		c.answer(f, wire.StatusBadArgument, "DEADLINE_MS: "+err.Error())
		return
	} else if ok {
		budget = min(time.Duration(ms)*time.Millisecond, MaxDeadline)
	}
	c.mu.Lock()
	if _, dup := c.inflight[f.ID]; dup {
		c.mu.Unlock()
		c.answer(f, wire.StatusBadFrame, "request id already in flight")
		return
	}
	if len(c.inflight) >= s.cfg.MaxInflight {
		c.mu.Unlock()
		s.stats.record(f.Op, wire.StatusBusy, 0)
		c.answer(f, wire.StatusBusy, "too many requests in flight")
		return
	}
	// One context per request: its deadline is DEADLINE_MS; CANCEL cancels
	// it (Canceled while c.ctx lives); the connection's end cancels c.ctx.
	ctx, cancel := context.WithTimeout(c.ctx, budget)
	c.inflight[f.ID] = cancel
	alone := len(c.inflight) == 1
	s.wg.Add(1)
	s.noteLoad(s.inflight.Add(1) - 1)
	c.mu.Unlock()

	finish := func() {
		cancel()
		c.mu.Lock()
		delete(c.inflight, f.ID)
		c.mu.Unlock()
		if s.inflight.Add(-1) == 0 {
			s.signalIdle()
		}
		s.wg.Done()
	}
	// A request marked SOLO (its client sends nothing more on this
	// connection until it is answered) that is alone on its connection is
	// served by the reader itself: no goroutine to start and wake, and the
	// thread the request woke computes it. Anything the client sends
	// meanwhile anyway (a CANCEL) is read when it is done; the deadline
	// still holds. On a connection of the batch loop (loop.go), the loop
	// gathers such a request with the other clients' into one batch, or,
	// when it cannot, starts a goroutine for it (the loop computes only
	// batches).
	if alone && s.inlineOK && solo(f) {
		if c.lc != nil {
			if c.lc.gather(ctx, f, start, finish) {
				return
			}
		} else {
			s.stats.add(&s.stats.inline)
			defer finish()
			c.run(ctx, f, start)
			return
		}
	}
	go func() {
		defer finish()
		c.run(ctx, f, start)
	}()
}

// solo reports a SOLO request.
func solo(f *wire.Frame) bool {
	v, ok, err := f.Uint(wire.TagSolo)
	return ok && err == nil && v == 1
}

// loadOne is 1.0 in Server.load's fixed point.
const loadOne = 1024

// noteLoad folds the number of other arithmetic requests in flight at an
// arrival into the moving average. Racing updates may lose one sample.
func (s *Server) noteLoad(others int64) {
	l := s.load.Load()
	s.load.Store(l + (others*loadOne-l)/8)
}

// run executes one arithmetic request and answers it.
func (c *conn) run(ctx context.Context, f *wire.Frame, start time.Time) {
	s := c.s
	for _, ft := range s.cfg.Faults {
		switch ft.Kind {
		case FaultHang:
			s.stats.add(&s.stats.faults)
			<-c.ctx.Done() // only the end of the connection (or Close) ends a hang
			return
		case FaultDrop:
			if s.drops.Add(1)%ft.Every == 0 {
				s.stats.add(&s.stats.faults)
				s.log.Info("fault: dropping connection", "peer", c.peer, "op", f.Op)
				c.nc.Close()
				return
			}
		}
	}
	resp, st, msg := s.compute(ctx, f)
	c.answerRun(ctx, f, start, resp, st, msg)
}

// answerRun answers an arithmetic request computed as resp, st, msg
// (see compute), applying the result faults and ctx's end.
func (c *conn) answerRun(ctx context.Context, f *wire.Frame, start time.Time, resp *wire.Frame, st wire.Status, msg string) {
	s := c.s
	if st == wire.StatusOK {
		for _, ft := range s.cfg.Faults {
			if ft.Kind == FaultSlow {
				t := time.NewTimer(ft.Delay)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
				}
			}
		}
		if ctx.Err() == nil {
			s.corrupt(f, resp)
		}
	}
	if st == wire.StatusOK && ctx.Err() != nil || st == wire.StatusTimeout || st == wire.StatusCancelled {
		if c.ctx.Err() != nil {
			return // connection gone (or the server closed): no one to answer
		} else if errors.Is(ctx.Err(), context.Canceled) {
			st, msg = wire.StatusCancelled, "cancelled"
		} else {
			st, msg = wire.StatusTimeout, "deadline passed on the device"
		}
	}
	if st != wire.StatusOK {
		resp = wire.NewResponse(f, st)
		if msg != "" {
			resp.AddString(wire.TagMessage, truncate(msg))
		}
		if st == wire.StatusInternal || st == wire.StatusFaultDetected {
			s.log.Warn("request failed", "peer", c.peer, "op", f.Op, "status", st, "msg", msg)
		}
	}
	s.stats.record(f.Op, st, time.Since(start))
	c.write(resp)
}

// corrupt applies the result faults (zero-above, bitflip) to an answer.
func (s *Server) corrupt(req, resp *wire.Frame) {
	for _, ft := range s.cfg.Faults {
		switch ft.Kind {
		case FaultZeroAbove:
			if operandBits(req) > ft.Bits {
				for _, fl := range resp.Fields {
					if fl.Tag == wire.TagResult || fl.Tag == wire.TagResult2 || fl.Tag == wire.TagRX || fl.Tag == wire.TagRY {
						clear(fl.Value)
					}
				}
				s.stats.add(&s.stats.faults)
			}
		case FaultBitFlip:
			if rand.Float64() < ft.Prob {
				want := wire.TagResult // or RX; for a pair, either result
				if req.Op == wire.OpModExpPair && rand.IntN(2) == 1 {
					want = wire.TagResult2
				}
				for _, fl := range resp.Fields {
					if (fl.Tag == want || fl.Tag == wire.TagRX) && len(fl.Value) > 0 {
						i := rand.IntN(len(fl.Value) * 8)
						fl.Value[i/8] ^= 1 << (i % 8)
						s.stats.add(&s.stats.faults)
						break
					}
				}
			}
		}
	}
}

// operandBits is the width of the request's modulus, CRT modulus or field.
func operandBits(f *wire.Frame) int {
	switch f.Op {
	case wire.OpModExp:
		m, _ := f.Get(wire.TagMod)
		return bitLen(m)
	case wire.OpModExpPair:
		m, _ := f.Get(wire.TagMod)
		m2, _ := f.Get(wire.TagMod2)
		return max(bitLen(m), bitLen(m2))
	case wire.OpModExpCRT:
		p, _ := f.Get(wire.TagP)
		q, _ := f.Get(wire.TagQ)
		return bitLen(p) + bitLen(q)
	case wire.OpECMul:
		name, _ := f.Get(wire.TagCurve)
		if c := wire.LookupCurve(string(name)); c != nil {
			return c.P.BitLen()
		}
	}
	return 0
}

func (s *Server) signalIdle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle != nil && s.inflight.Load() == 0 {
		select {
		case <-s.idle:
		default:
			close(s.idle)
		}
	}
}

// Shutdown drains the server: it stops accepting connections, answers new
// arithmetic requests with SHUTTING_DOWN, waits for the requests in flight
// to be answered (or ctx to end), then closes every connection. It returns
// ctx's error if the drain did not finish in time (hung requests are then
// abandoned).
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.draining.Store(true)
	for l := range s.listeners {
		l.Close()
		delete(s.listeners, l)
	}
	if s.idle == nil {
		s.idle = make(chan struct{})
	}
	idle := s.idle
	s.mu.Unlock()
	s.log.Info("draining", "in_flight", s.inflight.Load())
	if s.inflight.Load() == 0 {
		s.signalIdle()
	}
	var err error
	select {
	case <-idle:
	case <-ctx.Done():
		err = fmt.Errorf("server: drain: %w", ctx.Err())
		s.log.Warn("drain incomplete", "in_flight", s.inflight.Load())
	}
	s.Close()
	return err
}

// Close stops the server at once: listeners and connections are closed and
// requests in flight are abandoned.
func (s *Server) Close() error {
	s.draining.Store(true)
	s.hardStop()
	if s.loop != nil {
		s.loop.stop()
	}
	s.mu.Lock()
	for l := range s.listeners {
		l.Close()
		delete(s.listeners, l)
	}
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// recoverPanic turns a panic in an engine, in a goroutine of its own, into
// an error (answered INTERNAL).
func recoverPanic(s *Server, op wire.Op, err *error) {
	if r := recover(); r != nil {
		s.log.Error("panic in handler", "op", op, "panic", r, "stack", string(debug.Stack()))
		*err = errors.New("internal error")
	}
}

// recoverInternal turns a panic in an engine into an INTERNAL answer.
func recoverInternal(s *Server, op wire.Op, st *wire.Status, msg *string) {
	if r := recover(); r != nil {
		s.log.Error("panic in handler", "op", op, "panic", r, "stack", string(debug.Stack()))
		*st, *msg = wire.StatusInternal, "internal error"
	}
}
