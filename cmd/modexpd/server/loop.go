package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/device/rawsock"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire"
)

// The batch loop (Config.BatchLoop). With an engine that batches (the software engine on the
// 8-lane IFMA kernel) and takes the operations gathered by its caller
// (manyEngine), the unix-socket connections are served by one goroutine
// instead of a reader each: it waits on a private epoll set of all of
// them (rawsock.Poller; readability only), reads every request that has
// come, gathers the SOLO MODEXP_PAIR requests of its clients, and
// computes them as one batch on its own thread, then writes the answers.
// Per batch, that is one thread woken where a reader per connection
// meant one woken per request, another per goroutine handed the result,
// and the netpoller's thread woken again by each answer the client
// consumed (the writability edge).
//
// A batch runs when it is full (BatchWidth lanes), when every client of
// the last two batches has sent its next request (clients drift into
// groups that alternate: the last batch alone may hold only some of
// them), or when its oldest request has waited loopFill. Everything else (the other operations, requests
// that are not SOLO, pairs the engine declines) is served as on a
// reader's connection, on a goroutine of its own.

// loopFill bounds how long a gathered request waits for the other
// clients' (the software engine's batchFill: about one 8-lane pass at
// 1024 bits).
const loopFill = 400 * time.Microsecond

// sweepEvery is how often an idle loop looks for connections closed
// from elsewhere (a failed write closes the connection; nothing then
// wakes the loop for it).
const sweepEvery = time.Second

// manyEngine computes exponentiations gathered by the caller in one call
// (engine/backend/soft's ExpMany): ErrUnsupported, before doing anything,
// for operations it does not batch.
type manyEngine interface {
	ExpMany(ctx context.Context, ops []engine.ExpOp) ([][]byte, engine.Cost, error)
}

type batchLoop struct {
	s     *Server
	me    manyEngine
	width int // requests per batch: BatchWidth / 2 pairs
	p     *rawsock.Poller

	mu      sync.Mutex
	adds    []*loopConn
	started bool
	stopped bool

	// The loop goroutine's own.
	conns   map[uint64]*loopConn
	next    uint64
	pending []*gathered
	batches uint64
	keys    []uint64
	ops     []engine.ExpOp
}

// loopConn is a connection served by the loop.
type loopConn struct {
	l        *batchLoop
	c        *conn
	key      uint64
	buf      []byte // received: buf[pos:end] not yet consumed
	pos, end int
	last     uint64    // the last batch it had a request in
	waiting  bool      // has a request gathered
	seen     time.Time // when it last sent a pair
	gone     chan struct{}
}

// gathered is a SOLO MODEXP_PAIR request waiting for its batch.
type gathered struct {
	lc     *loopConn
	ctx    context.Context
	f      *wire.Frame
	start  time.Time
	finish func()
	a, b   expArgs
}

// newBatchLoop returns the loop for s, or nil when s's engine does not
// take gathered batches, faults are configured (the loop does not apply
// them), Config.BatchLoop is not set, or the platform has no poller.
func newBatchLoop(s *Server) *batchLoop {
	me, ok := s.cfg.Engine.(manyEngine)
	be, isBatch := engine.As[engine.BatchEngine](s.cfg.Engine)
	if !ok || !isBatch || be.BatchWidth() < 4 || len(s.cfg.Faults) > 0 || !s.cfg.BatchLoop {
		return nil
	}
	p, err := rawsock.NewPoller()
	if err != nil {
		return nil
	}
	return &batchLoop{s: s, me: me, width: be.BatchWidth() / 2, p: p, conns: map[uint64]*loopConn{}}
}

// add hands c (a detached unix connection) to the loop; false: the loop
// is stopped, c is not served.
func (l *batchLoop) add(c *conn) bool {
	lc := &loopConn{l: l, c: c, buf: make([]byte, 4096), gone: make(chan struct{})}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return false
	}
	c.lc = lc
	l.adds = append(l.adds, lc)
	if !l.started {
		l.started = true
		go l.run()
	}
	l.p.Wake()
	return true
}

// stop ends the loop (Server.Close): it answers nothing more, ends its
// gathered requests and closes its connections.
func (l *batchLoop) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	l.stopped = true
	if !l.started {
		l.p.Close()
		return
	}
	l.p.Wake()
}

func (l *batchLoop) run() {
	defer l.p.Close()
	for {
		d := sweepEvery
		if len(l.pending) > 0 {
			d = max(0, loopFill-time.Since(l.pending[0].start))
		}
		keys, err := l.p.Wait(l.keys[:0], d)
		l.keys = keys
		l.mu.Lock()
		stopped, adds := l.stopped, l.adds
		l.adds = nil
		l.mu.Unlock()
		if stopped {
			l.shutdown(adds)
			return
		}
		if err != nil {
			l.s.log.Error("batch loop: wait", "err", err)
			time.Sleep(time.Millisecond)
		}
		for _, lc := range adds {
			l.next++
			lc.key = l.next
			if err := l.p.Add(lc.c.nc, lc.key); err != nil {
				lc.c.nc.Close()
				close(lc.gone)
				continue
			}
			l.conns[lc.key] = lc
		}
		for _, k := range keys {
			if lc := l.conns[k]; lc != nil {
				lc.readAll()
			}
		}
		if len(keys) == 0 && len(l.pending) == 0 {
			l.sweep()
		}
		for l.ready() {
			l.runBatch()
		}
	}
}

// shutdown ends everything the loop holds (adds: connections handed to it
// and not yet taken).
func (l *batchLoop) shutdown(adds []*loopConn) {
	for _, g := range l.pending {
		g.finish()
	}
	l.pending = nil
	for _, lc := range l.conns {
		l.drop(lc)
	}
	for _, lc := range adds {
		lc.c.nc.Close()
		close(lc.gone)
	}
}

// drop ends lc's connection; serveConn, waiting on gone, cleans up. A
// request of lc's still gathered is then ended with it (its context is
// the connection's).
func (l *batchLoop) drop(lc *loopConn) {
	l.p.Remove(lc.c.nc)
	delete(l.conns, lc.key)
	lc.c.nc.Close()
	close(lc.gone)
}

// sweep drops the connections closed from elsewhere.
func (l *batchLoop) sweep() {
	for _, lc := range l.conns {
		if _, err := rawsock.TryRead(lc.c.nc, nil); err != nil {
			l.drop(lc)
		}
	}
}

// readAll reads what lc has received and serves every whole frame.
func (lc *loopConn) readAll() {
	for {
		if lc.pos == lc.end {
			lc.pos, lc.end = 0, 0
		}
		if lc.end == len(lc.buf) {
			if lc.pos > 0 {
				lc.end = copy(lc.buf, lc.buf[lc.pos:lc.end])
				lc.pos = 0
			} else {
				lc.buf = append(lc.buf, make([]byte, len(lc.buf))...)
			}
		}
		n, err := rawsock.TryRead(lc.c.nc, lc.buf[lc.end:])
		lc.end += n
		for {
			f, ferr, ok := lc.frame()
			if !ok {
				break
			}
			if !lc.c.handle(f, ferr) {
				lc.l.drop(lc)
				return
			}
		}
		if err != nil {
			lc.c.handle(nil, err)
			lc.l.drop(lc)
			return
		}
		if n == 0 {
			return
		}
	}
}

// frame returns the next whole frame received, as wire.ReadFrame would
// read it (or its error); ok is false when none is whole yet.
func (lc *loopConn) frame() (*wire.Frame, error, bool) {
	avail := lc.end - lc.pos
	if avail < 4 {
		return nil, nil, false
	}
	total := 4 // a length out of range: ReadFrame's error from the length alone
	if n := binary.BigEndian.Uint32(lc.buf[lc.pos:]); n >= wire.HeaderLen && n <= wire.DiscardLimit {
		total += int(n)
	}
	if avail < total {
		if total > len(lc.buf) {
			nb := make([]byte, total)
			lc.end = copy(nb, lc.buf[lc.pos:lc.end])
			lc.buf, lc.pos = nb, 0
		}
		return nil, nil, false
	}
	f, err := wire.ReadFrame(bytes.NewReader(lc.buf[lc.pos:lc.pos+total]), wire.MaxFrame)
	lc.pos += total
	if len(lc.buf) > 64<<10 && lc.pos == lc.end { // an oversized frame passed: shrink back
		lc.buf, lc.pos, lc.end = make([]byte, 4096), 0, 0
	}
	return f, err, true
}

// gather takes a SOLO request alone on its connection (dispatch has
// registered it: finish ends it) into the next batch; false: it is not a
// pair the loop batches now, and the caller serves it.
func (lc *loopConn) gather(ctx context.Context, f *wire.Frame, start time.Time, finish func()) bool {
	if f.Op != wire.OpModExpPair {
		return false
	}
	s := lc.l.s
	now := time.Now()
	lc.seen = now
	if lc.l.active(now) <= s.cores {
		// Not on the loop's thread: an engine's pair may wait for others
		// (a batching engine's scheduler), which the loop must go on
		// reading.
		return false
	}
	a, err := s.expArgsOf(f, firstExp)
	if err != nil || a.public {
		return false
	}
	b, err := s.expArgsOf(f, secondExp)
	if err != nil || b.public || len(a.mod) != len(b.mod) {
		return false
	}
	lc.waiting = true
	lc.l.pending = append(lc.l.pending, &gathered{lc: lc, ctx: ctx, f: f, start: start, finish: finish, a: a, b: b})
	s.stats.add(&s.stats.inline)
	return true
}

// activeWindow: a connection that sent a pair this recently is a client
// signing now (4 clients of modexpd send one every 0.5-1 ms).
const activeWindow = 2 * time.Millisecond

// active counts the connections that sent a pair within activeWindow.
func (l *batchLoop) active(now time.Time) int {
	n := 0
	for _, lc := range l.conns {
		if now.Sub(lc.seen) < activeWindow {
			n++
		}
	}
	return n
}

// ready reports whether a batch is to run now, and counts it by why.
func (l *batchLoop) ready() bool {
	st := l.s.stats
	switch {
	case len(l.pending) == 0:
		return false
	case len(l.pending) >= l.width:
		st.add(&st.loopFull)
		return true
	case time.Since(l.pending[0].start) >= loopFill:
		st.add(&st.loopWaited)
		return true
	case l.batches == 0:
		return false
	}
	for _, lc := range l.conns { // a client of the last two batches has yet to send
		if lc.last > 0 && lc.last+1 >= l.batches && !lc.waiting {
			return false
		}
	}
	st.add(&st.loopAll)
	return true
}

// runBatch computes and answers the oldest gathered requests, up to a
// batch.
func (l *batchLoop) runBatch() {
	s := l.s
	n := min(len(l.pending), l.width)
	batch := l.pending[:n:n]
	l.pending = append([]*gathered(nil), l.pending[n:]...)
	l.batches++
	s.stats.mu.Lock()
	s.stats.loopPairs += uint64(n)
	s.stats.mu.Unlock()
	ops := l.ops[:0]
	live := batch[:0:0]
	for _, g := range batch {
		g.lc.waiting = false
		g.lc.last = l.batches
		if g.ctx.Err() != nil {
			l.answer(g, nil, wire.StatusTimeout, "deadline passed while queued")
			continue
		}
		ma, err := s.mods.get(s.cfg.Engine, g.a.mod)
		if err == nil {
			var mb engine.Modulus
			if mb, err = s.mods.get(s.cfg.Engine, g.b.mod); err == nil {
				ops = append(ops, engine.ExpOp{M: ma, Base: g.a.base, Exp: g.a.exp}, engine.ExpOp{M: mb, Base: g.b.base, Exp: g.b.exp})
				live = append(live, g)
				continue
			}
		}
		st, msg := statusOf(g.ctx, err)
		l.answer(g, nil, st, msg)
	}
	l.ops = ops
	if len(live) == 0 {
		return
	}
	res, err := l.expMany(ops)
	clear(l.ops) // operands of private operations: keep none
	if errors.Is(err, engine.ErrUnsupported) {
		l.oneByOne(live)
		return
	}
	for i, g := range live {
		if err != nil {
			st, msg := statusOf(g.ctx, err)
			l.answer(g, nil, st, msg)
			continue
		}
		ra, ea := padTo(res[2*i], len(g.a.mod), "result")
		rb, eb := padTo(res[2*i+1], len(g.b.mod), "result")
		if e := errors.Join(ea, eb); e != nil {
			st, msg := statusOf(g.ctx, e)
			l.answer(g, nil, st, msg)
			continue
		}
		l.answer(g, wire.NewResponse(g.f, wire.StatusOK).Add(wire.TagResult, ra).Add(wire.TagResult2, rb), wire.StatusOK, "")
	}
}

// oneByOne serves gs on goroutines of their own, as on a reader's
// connection (pairs the engine declines to batch).
func (l *batchLoop) oneByOne(gs []*gathered) {
	for _, g := range gs {
		go func() {
			defer g.finish()
			g.lc.c.run(g.ctx, g.f, g.start)
		}()
	}
}

// expMany runs one batch on the engine, on one of the device's core
// slots; a panic in the engine is an error.
func (l *batchLoop) expMany(ops []engine.ExpOp) (res [][]byte, err error) {
	s := l.s
	if !s.acquire(s.hardCtx) {
		return nil, s.hardCtx.Err()
	}
	defer s.release()
	defer recoverPanic(s, wire.OpModExpPair, &err)
	res, _, err = l.me.ExpMany(s.hardCtx, ops)
	return res, err
}

// answer answers g and ends it.
func (l *batchLoop) answer(g *gathered, resp *wire.Frame, st wire.Status, msg string) {
	g.lc.c.answerRun(g.ctx, g.f, g.start, resp, st, msg)
	g.finish()
}
