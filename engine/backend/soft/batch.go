package soft

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/modexp-token/modexp-token/engine/arith/mont"
	"github.com/modexp-token/modexp-token/engine/cores"
)

// The batch scheduler: the secret exponentiations in flight on one
// engine (the threads of a process, the clients of modexpd) are gathered
// and run up to mont.BatchLanes at a time on the 8-lane IFMA kernel.
//
// A call alone in flight, when lately the callers have been no more than
// the cores, runs at once on the single-buffer kernel (Exp, or ExpPair
// for the two CRT halves), exactly as without the scheduler: a lone
// signer's latency does not grow. Otherwise its operations join a queue
// (one per modulus size) and the caller waits until they are done or it
// may lead a batch (mayLead). A leader runs one batch: its own operations
// first, then the oldest queued ones of the same size, up to 8, and
// leaves its slot (one per core). Each caller leads at most one batch.
// Small batches run on the single-buffer kernel, which is faster for them
// (batchMin).
//
// "Lately" is the most calls seen in flight at once (peak), decaying by
// one every peakDecay calls that see fewer. With no more callers than
// cores, each may have a core: a caller leads when a slot is free and the
// calls in flight are no more than the slots, or half a batch is queued.
// With more (8 threads on 2 cores, or 4 clients of modexpd whose requests
// wait on sockets while their token pads and checks), the callers are
// more than the calls in flight at any moment, and a pair started on a
// free core would take the core those callers need and leave the next
// batch short: then a full batch leads on any free slot, and otherwise
// one batch at a time, once the queue holds what the callers lately gave
// together (peak calls of the last call's size) or batchFill (400 µs)
// has passed since its oldest operation queued or the last batch ended,
// whichever came later (the callers of that batch are on their way
// back). That wait is the scheduler's only one that a running computation
// does not bound.
//
// Who waits is woken alone, never the crowd: each queued caller has its
// own wake-up (waiter), signalled when a batch finished its operations,
// or when it may lead (wakeLeaders: the owner of a queue's oldest
// operation, at a batch's end, a lone call's end or the fill timer).
// A C thread calling into the module runs its goroutine on that thread
// only, so every wake-up moves a P there through the kernel (two thread
// switches); with 8 signing threads a broadcast to all waiters at every
// batch's end, most of whom went back to sleep, cost a fifth of the
// CPU. Signals are sent once the mutex is let go of (wakeLater, unlock),
// so that the woken do not run only to sleep on it; and a host thread's
// caller, when GOMAXPROCS leaves a P for every call in the module
// (cores.Roomy), sleeps in the kernel keeping its P (waiter).
//
// Blinding and the check of every result stay in the callers
// (engine/rsa, engine/dsa, engine/dh): the scheduler only computes.

// batchOp is one exponentiation handed to the scheduler: x (replaced by
// the result) to the secret exponent e modulo m.
type batchOp struct {
	m     *mont.Modulus
	x     []uint64
	e     []byte
	at    time.Time // when it was queued
	w     *waiter   // its caller's, while in the scheduler; under batcher.mu
	state uint8     // opQueued, opTaken, opDone; under batcher.mu
}

const (
	opQueued = iota
	opTaken
	opDone
)

// batchFill bounds how long a partial batch waits for more operations
// when the callers are more than the cores: about one 8-lane pass at
// 1024 bits (BenchmarkExpBatch: 348 µs; a pass costs the same with any
// number of lanes). 4 client processes of modexpd, RSA-2048: 150 µs gave
// 5.1–5.5 lanes a batch and 422 µs of CPU a signature, 400 µs 6.8–7.2
// lanes and 374–413 µs (BENCH_PROCS=4 test/bench/device.sh, alternating).
var batchFill = 400 * time.Microsecond

// batcher is one engine's scheduler.
type batcher struct {
	calls atomic.Int64 // calls in flight
	// lone counts the calls computing alone, outside the queue (a core
	// each); peak is the most calls in flight lately and fall the calls
	// that saw fewer since it last moved (notePeak); width is the number
	// of operations of the last call.
	lone, peak, fall, width atomic.Int64
	mu                      sync.Mutex
	queue                   map[int][]*batchOp // by limb count, oldest first
	leaders                 int
	limit                   int
	idleAt                  time.Time                    // when the last batch ended (leave)
	pending                 [2 * mont.BatchLanes]*waiter // to signal at unlock (wakeLater)
	nPending                int
	filling                 bool        // fill is armed
	fill                    *time.Timer // the batchFill timer (armFill)
	// exec computes a batch of operations of one size (execBatch; tests
	// substitute it).
	exec func(ops []*batchOp)
	// led counts the batches run and lanes (tests and the debug figures).
	batches, lanes atomic.Int64
}

// newBatcher returns a scheduler with one leader slot per core.
func newBatcher(cores int) *batcher {
	return &batcher{queue: map[int][]*batchOp{}, limit: max(1, cores), exec: execBatch}
}

// run computes the operations (all of one limb count, each CanBatch),
// batched with the others in flight when there are some.
func (b *batcher) run(ops ...*batchOp) {
	n := b.calls.Add(1)
	defer b.calls.Add(-1)
	b.notePeak(n)
	b.width.Store(int64(len(ops)))
	if n == 1 && !b.crowded() {
		b.lone.Add(1)
		execDirect(ops) // alone: the single-buffer kernel, no wait
		b.endLone()
		return
	}
	k := ops[0].m.Limbs()
	w := getWaiter()
	now := time.Now()
	b.mu.Lock()
	for _, op := range ops {
		op.state, op.at, op.w = opQueued, now, w
	}
	b.queue[k] = append(b.queue[k], ops...)
	for !allDone(ops) {
		if anyQueued(ops) {
			lead, fill := b.mayLead(k)
			if lead {
				b.lead(k, ops, w)
				continue
			}
			if fill {
				b.armFill(k)
			}
		}
		inKernel := kernelWaits()
		b.unlock()
		w.wait(inKernel)
		b.mu.Lock()
	}
	for _, op := range ops {
		op.w = nil
	}
	b.unlock()
	putWaiter(w)
}

// lead runs one batch: the caller's queued operations own first, then
// the oldest others of queue k. Then it wakes the callers whose
// operations are done and, through leave, one that may lead the next
// batch. Called and returns under b.mu, which it lets go of while the
// batch computes.
func (b *batcher) lead(k int, own []*batchOp, w *waiter) {
	b.leaders++
	var buf [mont.BatchLanes]*batchOp
	batch := b.take(buf[:0], k, own) // not empty: own has queued operations
	b.stopFill()
	b.unlock()
	b.exec(batch)
	b.batches.Add(1)
	b.lanes.Add(int64(len(batch)))
	b.mu.Lock()
	for _, op := range batch {
		op.state = opDone
		if op.w != w {
			b.wakeLater(op.w)
		}
	}
	clear(buf[:])
	b.leave()
}

// leave gives up a leader slot and wakes a caller that may lead now, in
// each queue (wakeLeaders), whichever way the slot ends: a waiter of
// another queue may have found no slot free only because of this one,
// and nothing else may wake it. Under b.mu.
func (b *batcher) leave() {
	b.leaders--
	if b.leaders == 0 && b.lone.Load() == 0 {
		b.idleAt = time.Now()
	}
	b.wakeLeaders()
}

// wakeLeaders wakes, in each queue that may start a batch now (mayLead),
// the caller of its oldest operation, and arms the fill timer of a queue
// that waits to fill. Only those wake: a caller woken for nothing would
// cost a thread switch (a C thread's goroutine cannot run on another).
// Under b.mu.
func (b *batcher) wakeLeaders() {
	for k, q := range b.queue {
		if len(q) == 0 {
			continue
		}
		switch lead, fill := b.mayLead(k); {
		case lead:
			b.wakeLater(q[0].w)
		case fill:
			b.armFill(k)
		}
	}
}

// endLone ends a lone call's computation and, when others came
// meanwhile, wakes one that may lead: the core it took is free.
func (b *batcher) endLone() {
	b.lone.Add(-1)
	if b.calls.Load() > 1 {
		b.mu.Lock()
		b.wakeLeaders()
		b.unlock()
	}
}

// kernelWaits reports whether a waiting caller sleeps in the kernel
// (waiter.wait; tests substitute it).
var kernelWaits = cores.Roomy

// wakeLater signals w once b.mu is let go of (unlock): a caller woken
// while the mutex is held would run only to sleep on it again. Under b.mu.
func (b *batcher) wakeLater(w *waiter) {
	if b.nPending == len(b.pending) {
		w.signal()
		return
	}
	b.pending[b.nPending] = w
	b.nPending++
}

// unlock lets go of b.mu, then sends the signals wakeLater held back. A
// signal that arrives after its caller found its operations done by
// itself leaves a token in a recycled waiter: its next caller wakes once
// for nothing, looks at the state and waits again.
func (b *batcher) unlock() {
	ws, n := b.pending, b.nPending
	clear(b.pending[:n])
	b.nPending = 0
	b.mu.Unlock()
	for _, w := range ws[:n] {
		w.signal()
	}
}

// waiter is a queued caller's wake-up: a token, so that a signal sent
// while the caller is not yet waiting is not lost. Signals are sent
// after the state change they announce, once batcher.mu is let go of
// (unlock); the caller looks at the state under b.mu before it waits.
//
// The caller sleeps on the channel (the Go scheduler) or, when its
// goroutine is a host thread's and GOMAXPROCS leaves a P for every call
// (cores.Roomy), in the kernel on the state word (a futex on Linux): a
// goroutine of a C thread that parks in the scheduler gives up its P,
// and waking it takes two thread switches (another thread picks the
// goroutine up and hands it the P: runtime's startlockedm), where a
// futex wake is one.
type waiter struct {
	state atomic.Uint32 // wIdle, wToken, wInKernel or wOnChannel
	wake  chan struct{} // a wOnChannel sleep's wake-up
}

// The states of waiter.state.
const (
	wIdle      = iota // no token, nobody sleeping
	wToken            // signalled
	wInKernel         // the caller sleeps in the kernel (futexWait)
	wOnChannel        // the caller sleeps on wake
)

// signal wakes w, or leaves it a token when one is not already there.
func (w *waiter) signal() {
	switch w.state.Swap(wToken) {
	case wInKernel:
		futexWake(&w.state)
	case wOnChannel:
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// wait returns when w holds a token, taking it; it sleeps in the kernel
// when inKernel (and the system has futexes), else on the channel.
func (w *waiter) wait(inKernel bool) {
	sleep := uint32(wOnChannel)
	if inKernel && haveFutex {
		sleep = wInKernel
	}
	for {
		switch w.state.Load() {
		case wToken:
			if w.state.CompareAndSwap(wToken, wIdle) {
				return
			}
		case wIdle:
			w.state.CompareAndSwap(wIdle, sleep)
		case wInKernel:
			futexWait(&w.state, wInKernel) // returns at once if no longer so
		case wOnChannel:
			<-w.wake
		}
	}
}

var waiters sync.Pool

// getWaiter returns a waiter without a token: a late signal (unlock)
// may have left one in a recycled waiter.
func getWaiter() *waiter {
	w, ok := waiters.Get().(*waiter)
	if !ok {
		return &waiter{wake: make(chan struct{}, 1)}
	}
	w.state.Store(wIdle)
	select {
	case <-w.wake:
	default:
	}
	return w
}

// putWaiter recycles w once no operation refers to it (its call's
// operations are done).
func putWaiter(w *waiter) { waiters.Put(w) }

// peakDecay is how many calls that see fewer in flight than the peak
// lower it by one.
const peakDecay = 64

// notePeak folds n, the calls in flight at a call's arrival (itself
// included), into the peak. Racing updates may lose a step; the peak is
// only a hint.
func (b *batcher) notePeak(n int64) {
	p := b.peak.Load()
	if n >= p {
		if n > p {
			b.peak.Store(n)
		}
		b.fall.Store(0)
		return
	}
	if b.fall.Add(1) >= peakDecay {
		b.fall.Store(0)
		b.peak.CompareAndSwap(p, p-1)
	}
}

// crowded reports whether the callers have lately been more than the
// leader slots (the cores).
func (b *batcher) crowded() bool { return b.peak.Load() > int64(b.limit) }

// mayLead reports whether a caller with operations in queue k may lead a
// batch now (see the scheduler's description above), and, when not,
// whether it waits for the queue to fill (armFill: nothing else computes,
// so no batch's end will wake it). Under b.mu.
func (b *batcher) mayLead(k int) (lead, fill bool) {
	busy := b.leaders + int(b.lone.Load())
	if busy >= b.limit {
		return false, false
	}
	q := b.queue[k]
	if !b.crowded() {
		return busy == 0 || b.calls.Load() <= int64(b.limit) || 2*len(q) >= mont.BatchLanes, false
	}
	if len(q) >= mont.BatchLanes {
		return true, false
	}
	if busy > 0 {
		return false, false
	}
	want := min(int64(mont.BatchLanes), b.peak.Load()*max(1, b.width.Load()))
	if int64(len(q)) >= want || !time.Now().Before(b.fillDeadline(q)) {
		return true, false
	}
	return false, true
}

// armFill makes sure the waiters of queue k are woken when its oldest
// operation has waited batchFill. One timer serves all queues: made
// once, re-armed here and stopped when a batch leads (lead), so that a
// queue that filled does not wake anyone later for nothing. Under b.mu.
func (b *batcher) armFill(k int) {
	if b.filling {
		return
	}
	b.filling = true
	d := time.Until(b.fillDeadline(b.queue[k]))
	if b.fill == nil {
		b.fill = time.AfterFunc(d, b.fillDue)
		return
	}
	b.fill.Reset(d)
}

// fillDeadline is when the partial batch of queue q (not empty) leads
// anyway: batchFill after its oldest operation was queued or after the
// last computation ended, whichever came later. Under b.mu.
func (b *batcher) fillDeadline(q []*batchOp) time.Time {
	start := q[0].at
	if b.idleAt.After(start) {
		start = b.idleAt
	}
	return start.Add(batchFill)
}

// fillDue is the fill timer's function.
func (b *batcher) fillDue() {
	b.mu.Lock()
	b.filling = false
	b.wakeLeaders()
	b.unlock()
}

// stopFill disarms the fill timer: a batch leads, and its end
// (leave, wakeLeaders) arms it again for a queue that still waits. Under
// b.mu.
func (b *batcher) stopFill() {
	if b.filling && b.fill.Stop() {
		b.filling = false
	}
}

// take removes from queue k and appends to batch (empty, of capacity
// mont.BatchLanes) the caller's queued operations own, then the oldest
// others, up to mont.BatchLanes. Under b.mu.
func (b *batcher) take(batch []*batchOp, k int, own []*batchOp) []*batchOp {
	for _, op := range own {
		if op.state == opQueued && len(batch) < mont.BatchLanes {
			op.state = opTaken
			batch = append(batch, op)
		}
	}
	q := b.queue[k]
	rest := q[:0]
	for _, op := range q {
		if op.state == opQueued && len(batch) < mont.BatchLanes {
			op.state = opTaken
			batch = append(batch, op)
		}
		if op.state == opQueued {
			rest = append(rest, op)
		}
	}
	clear(q[len(rest):])
	b.queue[k] = rest
	return batch
}

func allDone(ops []*batchOp) bool {
	for _, op := range ops {
		if op.state != opDone {
			return false
		}
	}
	return true
}

func anyQueued(ops []*batchOp) bool {
	for _, op := range ops {
		if op.state == opQueued {
			return true
		}
	}
	return false
}

// batchMin is the smallest batch the 8-lane kernel runs, by digit count:
// below it the single-buffer kernel (ExpPair two by two) takes less CPU
// (BenchmarkExpBatch of engine/internal/mont: an 8-lane pass costs about
// 3.2 pairs at 1024 bits, 2.9 at 1536, 4.5 at 2048; no pairs beyond).
var batchMin = map[int]int{16: 3, 24: 3, 32: 5, 48: 5, 64: 5}

// execBatch computes ops (one limb count, at most mont.BatchLanes) on the
// 8-lane kernel, or on the single-buffer kernel when they are few.
func execBatch(ops []*batchOp) {
	if len(ops) < batchMin[ops[0].m.Limbs()] {
		execDirect(ops)
		return
	}
	ms := make([]*mont.Modulus, len(ops))
	xs := make([][]uint64, len(ops))
	es := make([][]byte, len(ops))
	for i, op := range ops {
		ms[i], xs[i], es[i] = op.m, op.x, op.e
	}
	if !mont.ExpBatch(ms, xs, xs, es) {
		execDirect(ops) // not reached: the callers checked CanBatch
	}
}

// execDirect computes ops on the single-buffer kernel: two at a time
// interleaved where the kernel pairs them, else one by one.
func execDirect(ops []*batchOp) {
	for len(ops) >= 2 && mont.ExpPair(ops[0].m, ops[1].m, ops[0].x, ops[0].x, ops[0].e, ops[1].x, ops[1].x, ops[1].e) {
		ops = ops[2:]
	}
	for _, op := range ops {
		op.m.Exp(op.x, op.x, op.e)
	}
}
