package soft

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modexp-token/modexp-token/engine/arith/mont"
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
// together (peak calls of the last call's size) or its oldest operation
// has waited batchFill (400 µs). That wait is the scheduler's only one
// that a running computation does not bound.
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
	cond                    sync.Cond
	queue                   map[int][]*batchOp // by limb count, oldest first
	leaders                 int
	limit                   int
	filling                 bool // a batchFill timer is armed
	// exec computes a batch of operations of one size (execBatch; tests
	// substitute it).
	exec func(ops []*batchOp)
	// led counts the batches run and lanes (tests and the debug figures).
	batches, lanes atomic.Int64
}

// newBatcher returns a scheduler with one leader slot per core.
func newBatcher(cores int) *batcher {
	b := &batcher{queue: map[int][]*batchOp{}, limit: max(1, cores), exec: execBatch}
	b.cond.L = &b.mu
	return b
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
	now := time.Now()
	b.mu.Lock()
	for _, op := range ops {
		op.state, op.at = opQueued, now
	}
	b.queue[k] = append(b.queue[k], ops...)
	for !allDone(ops) {
		if !anyQueued(ops) {
			b.cond.Wait()
			continue
		}
		if lead, fill := b.mayLead(k); !lead {
			if fill {
				b.armFill(k)
			}
			b.cond.Wait()
			continue
		}
		b.leaders++
		if len(b.queue[k]) < mont.BatchLanes {
			// Let the callers that are runnable (woken by the last
			// batch, or not yet scheduled) queue their operations:
			// with as many goroutines computing as there are cores,
			// they would otherwise only run after this batch.
			b.mu.Unlock()
			runtime.Gosched()
			b.mu.Lock()
		}
		batch := b.take(k, ops)
		if len(batch) == 0 { // another leader took them meanwhile
			b.leave()
			continue
		}
		b.mu.Unlock()
		b.exec(batch)
		b.batches.Add(1)
		b.lanes.Add(int64(len(batch)))
		b.mu.Lock()
		for _, op := range batch {
			op.state = opDone
		}
		b.leave()
	}
	b.mu.Unlock()
}

// leave gives up a leader slot and wakes the waiters, whichever way the
// slot ends: a waiter of another queue may have found no slot free only
// because of this one, and nothing else may wake it (the leader whose
// batch took this one's operations may have woken everyone already).
// Under b.mu.
func (b *batcher) leave() {
	b.leaders--
	b.cond.Broadcast()
}

// endLone ends a lone call's computation and, when others came
// meanwhile, wakes them: the core it took is free.
func (b *batcher) endLone() {
	b.lone.Add(-1)
	if b.calls.Load() > 1 {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
	}
}

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
	if int64(len(q)) >= want || !time.Now().Before(q[0].at.Add(batchFill)) {
		return true, false
	}
	return false, true
}

// armFill makes sure the waiters of queue k are woken when its oldest
// operation has waited batchFill. Under b.mu.
func (b *batcher) armFill(k int) {
	if b.filling {
		return
	}
	b.filling = true
	time.AfterFunc(time.Until(b.queue[k][0].at.Add(batchFill)), func() {
		b.mu.Lock()
		b.filling = false
		b.cond.Broadcast()
		b.mu.Unlock()
	})
}

// take removes from queue k and returns the caller's queued operations
// own, then the oldest others, up to mont.BatchLanes. Under b.mu.
func (b *batcher) take(k int, own []*batchOp) []*batchOp {
	batch := make([]*batchOp, 0, mont.BatchLanes)
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
