package soft

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/modexp-token/modexp-token/engine/arith/mont"
)

// The batch scheduler: the secret exponentiations in flight on one
// engine (the threads of a process, the clients of modexpd) are gathered
// and run up to mont.BatchLanes at a time on the 8-lane IFMA kernel.
//
// A call alone in flight runs at once on the single-buffer kernel (Exp,
// or ExpPair for the two CRT halves), exactly as without the scheduler:
// a lone signer's latency does not grow. Otherwise its operations join a
// queue (one per modulus size) and the caller waits until they are done
// or until it may lead a batch: when none runs, or when one of the
// engine's leader slots (one per core) is free and either there are no
// more calls in flight than slots or half a batch is queued. A leader runs one batch: its own operations first, then the
// oldest queued ones of the same size, up to 8, and leaves the slot. So
// no caller waits longer than the batches already running take, and each
// caller leads at most one batch. Small batches run on
// the single-buffer kernel, which is faster for them (batchMin).
// Blinding and the check of every result stay in the callers
// (engine/rsa, engine/dsa, engine/dh): the scheduler only computes.

// batchOp is one exponentiation handed to the scheduler: x (replaced by
// the result) to the secret exponent e modulo m.
type batchOp struct {
	m     *mont.Modulus
	x     []uint64
	e     []byte
	state uint8 // opQueued, opTaken, opDone; under batcher.mu
}

const (
	opQueued = iota
	opTaken
	opDone
)

// batcher is one engine's scheduler.
type batcher struct {
	calls   atomic.Int64 // calls in flight
	mu      sync.Mutex
	cond    sync.Cond
	queue   map[int][]*batchOp // by limb count, oldest first
	leaders int
	limit   int
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
	if b.calls.Add(1) == 1 {
		defer b.calls.Add(-1)
		execDirect(ops) // alone: the single-buffer kernel, no wait
		return
	}
	defer b.calls.Add(-1)
	k := ops[0].m.Limbs()
	b.mu.Lock()
	for _, op := range ops {
		op.state = opQueued
	}
	b.queue[k] = append(b.queue[k], ops...)
	for !allDone(ops) {
		if !anyQueued(ops) || !b.mayLead(k) {
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
			b.leaders--
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
		b.leaders--
		b.cond.Broadcast()
	}
	b.mu.Unlock()
}

// mayLead reports whether a caller with operations in queue k may lead a
// batch now: when no batch runs; when a slot is free and there are no
// more calls in flight than slots (each may have a core); or when a slot
// is free and the queue holds half a batch. Otherwise, with more calls
// than cores, a leader for a few operations would run them at a loss:
// they wait for a running batch to end and join the next. Under b.mu.
func (b *batcher) mayLead(k int) bool {
	if b.leaders == 0 {
		return true
	}
	return b.leaders < b.limit && (b.calls.Load() <= int64(b.limit) || 2*len(b.queue[k]) >= mont.BatchLanes)
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
