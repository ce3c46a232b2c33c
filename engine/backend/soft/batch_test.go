package soft

import (
	"context"
	"math/big"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/mont"
	"github.com/modexp-token/modexp-token/engine/arith/randop"
)

// TestBatchedConcurrent runs secret Exp and ExpPair calls from many
// goroutines at once on moduli of several sizes (batched on the IFMA
// kernel where it runs, one by one elsewhere) and checks every result
// with math/big.
func TestBatchedConcurrent(t *testing.T) {
	ctx := context.Background()
	e := New()
	r := rand.New(rand.NewPCG(91, 92))
	sizes := []int{1024, 2048}
	if testing.Short() {
		sizes = []int{1024}
	}
	type job struct {
		ns, xs []*big.Int
		ms     []engine.Modulus
		es     [][]byte
	}
	var jobs []job
	for i := 0; i < 24; i++ {
		bits := sizes[i%len(sizes)]
		var j job
		for h := 0; h < 1+i%2; h++ { // odd i: a pair
			n := randop.Odd(r, bits)
			m, err := e.NewModulus(n.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			j.ns = append(j.ns, n)
			j.ms = append(j.ms, m)
			j.xs = append(j.xs, new(big.Int).Mod(randop.Bits(r, bits), n))
			j.es = append(j.es, randop.Bits(r, bits).FillBytes(make([]byte, bits/8)))
		}
		jobs = append(jobs, j)
	}
	var wg sync.WaitGroup
	errs := make([]string, len(jobs))
	for i, j := range jobs {
		wg.Go(func() {
			var got [][]byte
			if len(j.ms) == 1 {
				z, _, err := e.Exp(ctx, j.ms[0], j.xs[0].Bytes(), j.es[0])
				if err != nil {
					errs[i] = err.Error()
					return
				}
				got = [][]byte{z}
			} else {
				za, zb, _, err := e.ExpPair(ctx, engine.ExpOp{M: j.ms[0], Base: j.xs[0].Bytes(), Exp: j.es[0]},
					engine.ExpOp{M: j.ms[1], Base: j.xs[1].Bytes(), Exp: j.es[1]})
				if err != nil {
					errs[i] = err.Error()
					return
				}
				got = [][]byte{za, zb}
			}
			for h := range got {
				want := new(big.Int).Exp(j.xs[h], new(big.Int).SetBytes(j.es[h]), j.ns[h])
				if new(big.Int).SetBytes(got[h]).Cmp(want) != 0 {
					errs[i] = "wrong result"
				}
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != "" && !(len(jobs[i].ms) == 2 && !mont.CanPair(jobs[i].ms[0].(*modulus).m, jobs[i].ms[1].(*modulus).m)) {
			t.Errorf("job %d (%d bits, %d exps): %s", i, jobs[i].ns[0].BitLen(), len(jobs[i].ms), err)
		}
	}
	t.Logf("%d batches, %d lanes", e.batch.batches.Load(), e.batch.lanes.Load())
}

// testOps returns n operations modulo 1024-bit moduli with their
// expected results.
func testOps(t *testing.T, r *rand.Rand, n int) ([]*batchOp, []*big.Int) {
	t.Helper()
	return testOpsBits(t, r, n, 1024)
}

// testOpsBits is testOps for moduli of the given size.
func testOpsBits(t *testing.T, r *rand.Rand, n, bits int) ([]*batchOp, []*big.Int) {
	t.Helper()
	ops := make([]*batchOp, n)
	want := make([]*big.Int, n)
	for i := range ops {
		nb := randop.Odd(r, bits)
		m, err := mont.NewModulus(nb.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		x := new(big.Int).Mod(randop.Bits(r, bits), nb)
		e := randop.Bits(r, bits).Bytes()
		xl := make([]uint64, m.Limbs())
		mont.SetBytes(xl, x.Bytes())
		ops[i] = &batchOp{m: m, x: xl, e: e}
		want[i] = new(big.Int).Exp(x, new(big.Int).SetBytes(e), nb)
	}
	return ops, want
}

// checkOps checks the results of ops.
func checkOps(t *testing.T, ops []*batchOp, want []*big.Int) {
	t.Helper()
	for i, op := range ops {
		b := make([]byte, op.m.Size())
		mont.FillBytes(b, op.x)
		if new(big.Int).SetBytes(b).Cmp(want[i]) != 0 {
			t.Fatalf("operation %d: wrong result", i)
		}
	}
}

// TestBatcherLoneCallerRunsAtOnce: a call alone in flight does not go
// through the queue: exec is not called, the result is right.
func TestBatcherLoneCallerRunsAtOnce(t *testing.T) {
	b := newBatcher(2)
	b.exec = func(ops []*batchOp) { t.Error("a lone call went through the queue") }
	ops, want := testOps(t, rand.New(rand.NewPCG(93, 94)), 2)
	b.run(ops...)
	checkOps(t, ops, want)
	b.run(ops[0]) // and again: nothing stayed in flight
}

// holdFirst makes b's exec record the batch sizes and hold the first
// batch until release is called; then it computes with inner. waitFor
// returns once the first batch is held and queue k holds n operations
// (polling with runtime.Gosched: no clock).
func holdFirst(b *batcher, inner func([]*batchOp)) (release func(), sizes func() []int, waitFor func(k, n int)) {
	ch := make(chan struct{})
	var mu sync.Mutex
	var got []int
	b.exec = func(ops []*batchOp) {
		mu.Lock()
		got = append(got, len(ops))
		n := len(got)
		mu.Unlock()
		if n == 1 {
			<-ch
		}
		inner(ops)
	}
	sizes = func() []int {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
	waitFor = func(k, n int) {
		for len(sizes()) == 0 {
			runtime.Gosched()
		}
		for b.queueLen(k) != n {
			runtime.Gosched()
		}
	}
	return func() { close(ch) }, sizes, waitFor
}

// TestBatcherGathers holds the one leader slot in a batch, lets eight
// more callers queue behind it, and checks that, released, they run
// together in one batch led by one of them, each caller leading at most
// one batch, with every result right.
func TestBatcherGathers(t *testing.T) {
	b := newBatcher(1)
	r := rand.New(rand.NewPCG(95, 96))
	first, firstWant := testOps(t, r, 2)
	others, othersWant := testOps(t, r, 8)
	release, sizes, waitFor := holdFirst(b, execDirect)
	b.calls.Add(1) // another call in flight: nobody runs alone
	defer b.calls.Add(-1)
	var wg sync.WaitGroup
	wg.Go(func() { b.run(first...) })
	waitFor(16, 0)
	for _, op := range others {
		wg.Go(func() { b.run(op) })
	}
	waitFor(16, len(others)) // all eight queued behind the held slot
	release()
	wg.Wait()
	if got, want := sizes(), []int{2, 8}; !slices.Equal(got, want) {
		t.Fatalf("batch sizes %v, want %v", got, want)
	}
	checkOps(t, first, firstWant)
	checkOps(t, others, othersWant)
	if len(b.queue[16]) != 0 || b.leaders != 0 {
		t.Fatalf("left behind: %d queued, %d leaders", len(b.queue[16]), b.leaders)
	}
}

// TestBatcherBoundedByLanes queues more operations than a batch holds and
// checks that no batch exceeds mont.BatchLanes and all complete.
func TestBatcherBoundedByLanes(t *testing.T) {
	b := newBatcher(1)
	r := rand.New(rand.NewPCG(97, 98))
	ops, want := testOps(t, r, 21)
	release, sizes, waitFor := holdFirst(b, execBatch)
	b.calls.Add(1)
	defer b.calls.Add(-1)
	var wg sync.WaitGroup
	wg.Go(func() { b.run(ops[0]) })
	waitFor(16, 0)
	for i := 1; i < len(ops); i += 2 { // pairs, as ExpPair gives them
		wg.Go(func() { b.run(ops[i], ops[i+1]) })
	}
	waitFor(16, len(ops)-1)
	release()
	wg.Wait()
	total := 0
	for _, n := range sizes() {
		if n > mont.BatchLanes {
			t.Fatalf("a batch of %d", n)
		}
		total += n
	}
	if total != len(ops) || len(sizes()) > 1+3 { // 20 after the first: 3 batches of at most 8
		t.Fatalf("batch sizes %v", sizes())
	}
	checkOps(t, ops, want)
}

// recordSizes makes b's exec record the batch sizes and compute with
// execDirect; sizes returns them.
func recordSizes(b *batcher) (sizes func() []int) {
	var mu sync.Mutex
	var got []int
	b.exec = func(ops []*batchOp) {
		mu.Lock()
		got = append(got, len(ops))
		mu.Unlock()
		execDirect(ops)
	}
	return func() []int {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// crowdedBatcher is a 2-slot scheduler whose callers were lately peak
// at once, recording its batch sizes.
func crowdedBatcher(peak int64) (*batcher, func() []int) {
	b := newBatcher(2)
	sizes := recordSizes(b)
	b.peak.Store(peak)
	return b, sizes
}

// wantSizes checks the batch sizes run.
func wantSizes(t *testing.T, sizes func() []int, want ...int) {
	t.Helper()
	if got := sizes(); !slices.Equal(got, want) {
		t.Fatalf("batch sizes %v, want %v", got, want)
	}
}

// queueLen is the length of queue k.
func (b *batcher) queueLen(k int) int {
	b.mu.Lock()
	defer b.unlock()
	return len(b.queue[k])
}

// queued waits until queue k of b holds n operations, failing if a batch
// runs first (polling with runtime.Gosched: no clock).
func queued(t *testing.T, b *batcher, sizes func() []int, k, n int) {
	t.Helper()
	for b.queueLen(k) != n {
		if s := sizes(); len(s) > 0 {
			t.Fatalf("a batch of %v ran before %d operations were queued", s, n)
		}
		runtime.Gosched()
	}
}

// TestBatcherCrowdedGathers: with more callers lately than cores (peak 4
// on 2 slots) and a lone computation holding one core, a pair does not
// start on the free core: the pairs that follow queue behind it until a
// full batch leads, so the four run as one batch of 8.
func TestBatcherCrowdedGathers(t *testing.T) {
	b, sizes := crowdedBatcher(4)
	b.calls.Add(1) // the lone computation, held
	b.lone.Add(1)
	r := rand.New(rand.NewPCG(99, 100))
	ops, want := testOps(t, r, 8)
	var wg sync.WaitGroup
	for i := 0; i < len(ops); i += 2 {
		wg.Go(func() { b.run(ops[i], ops[i+1]) })
		if i+2 < len(ops) { // the last makes a full batch, which runs
			queued(t, b, sizes, 16, i+2)
		}
	}
	wg.Wait()
	b.calls.Add(-1)
	b.endLone()
	wantSizes(t, sizes, 8)
	checkOps(t, ops, want)
}

// TestBatcherCrowdedFillBounded: crowded, with nothing computing, a pair
// whose companions do not come is not held forever: it leads a batch of
// its own once its wait (batchFill) is over.
func TestBatcherCrowdedFillBounded(t *testing.T) {
	b, sizes := crowdedBatcher(4)
	ops, want := testOps(t, rand.New(rand.NewPCG(101, 102)), 2)
	b.run(ops...)
	wantSizes(t, sizes, 2)
	checkOps(t, ops, want)
}

// TestBatcherPeakDecays: after a crowd (peak 3 on 2 slots) a lone caller
// goes through the queue, but each call alone counts towards lowering the
// peak, and the peakDecay-th runs at once again, outside the queue.
func TestBatcherPeakDecays(t *testing.T) {
	b, sizes := crowdedBatcher(3)
	ops, _ := testOps(t, rand.New(rand.NewPCG(103, 104)), 1)
	for range peakDecay - 1 { // (each replaces x: the results are not checked)
		b.run(ops...)
	}
	if got := len(sizes()); got != peakDecay-1 {
		t.Fatalf("%d of %d crowded calls went through the queue", got, peakDecay-1)
	}
	b.exec = func([]*batchOp) { t.Error("a lone call went through the queue once the crowd was gone") }
	ops, want := testOps(t, rand.New(rand.NewPCG(105, 106)), 1)
	b.run(ops...)
	checkOps(t, ops, want)
	if p := b.peak.Load(); p != 2 {
		t.Fatalf("peak %d after %d lone calls, want 2", p, peakDecay)
	}
}

// TestBatcherSlotFreedWakes: a caller that waits only because the one
// slot is held is woken when the slot is given up, even by a leader that
// found nothing left to take (its operations taken by another leader,
// the one that also woke everyone before this slot was free): the lost
// wake-up that hung TestBatchedConcurrent under -race.
func TestBatcherSlotFreedWakes(t *testing.T) {
	b := newBatcher(1)
	sizes := recordSizes(b)
	ops, want := testOps(t, rand.New(rand.NewPCG(111, 112)), 2)
	b.mu.Lock()
	b.leaders = 1 // a leader of another queue, between its claim and its take
	b.unlock()
	b.calls.Add(1) // its call: this one is not alone
	done := make(chan struct{})
	go func() { defer close(done); b.run(ops...) }()
	queued(t, b, sizes, 16, 2)
	b.mu.Lock()
	b.leave() // its take came back empty
	b.unlock()
	<-done // a lost wake-up hangs here
	b.calls.Add(-1)
	wantSizes(t, sizes, 2)
	checkOps(t, ops, want)
}

// TestBatcherStress runs many callers of one and two operations through
// schedulers of 1 and 2 slots, crowded and not, with an exec that only
// yields (the windows where a leader has let go of the lock are where a
// wake-up can be lost): every call must return. A lost wake-up leaves a
// caller asleep for ever, and the test is killed by go test's
// -timeout. go test -race -count=20 -run BatcherStress ./engine/backend/soft
func TestBatcherStress(t *testing.T) {
	callers, calls := 12, 300
	if testing.Short() {
		calls = 60
	}
	// Two sizes, so two queues: a leader of one may find its queue taken
	// while callers of the other wait for its slot.
	ops, _ := testOps(t, rand.New(rand.NewPCG(107, 108)), 2*callers)
	wide, _ := testOpsBits(t, rand.New(rand.NewPCG(109, 110)), callers, 2048)
	for c := 1; c < callers; c += 2 {
		ops[2*c], ops[2*c+1] = wide[c-1], wide[c]
	}
	defer func(f func() bool) { kernelWaits = f }(kernelWaits)
	for _, tc := range []struct {
		limit    int
		peak     int64
		inKernel bool
	}{{1, 0, false}, {2, 0, false}, {2, 16, false}, {1, 0, true}, {2, 16, true}} {
		kernelWaits = func() bool { return tc.inKernel }
		b := newBatcher(tc.limit)
		b.peak.Store(tc.peak)
		var ran atomic.Int64
		b.exec = func(batch []*batchOp) {
			if ran.Add(int64(len(batch)))%3 == 0 {
				runtime.Gosched()
			}
		}
		var wg sync.WaitGroup
		for c := range callers {
			wg.Go(func() {
				for i := range calls {
					own := []*batchOp{{m: ops[2*c].m, x: ops[2*c].x, e: ops[2*c].e}}
					if (c+i)%2 == 1 { // a pair
						own = append(own, &batchOp{m: ops[2*c+1].m, x: ops[2*c+1].x, e: ops[2*c+1].e})
					}
					b.run(own...)
					for _, op := range own {
						if op.state != opDone && op.state != opQueued { // opQueued: the lone path's zero value
							t.Errorf("%+v: an operation returned in state %d", tc, op.state)
						}
					}
				}
			})
		}
		wg.Wait()
		left := b.queueLen(16) + b.queueLen(32)
		if left != 0 || b.leaders != 0 || b.calls.Load() != 0 {
			t.Fatalf("%+v: left behind: %d queued, %d leaders, %d calls", tc, left, b.leaders, b.calls.Load())
		}
		t.Logf("%+v: %d operations batched in %d batches", tc, ran.Load(), b.batches.Load())
	}
}

// signalled reports whether w holds a wake-up, taking it, once the
// wake-ups b holds back until its mutex is let go of are sent (under
// b.mu, as the test holds it).
func signalled(b *batcher, w *waiter) bool {
	for _, x := range b.pending[:b.nPending] {
		x.signal()
	}
	b.nPending = 0
	return taken(w)
}

// taken reports whether w holds a token, taking it, without waiting.
func taken(w *waiter) bool { return w.state.CompareAndSwap(wToken, wIdle) }

// TestBatcherWakesOnlyWhomItConcerns: at a slot's end only the caller of
// the oldest queued operation is woken to lead, and only when it may; a
// batch's end wakes the callers of its operations and not the others
// (no broadcast: each wake-up of a C thread's goroutine costs two thread
// switches).
func TestBatcherWakesOnlyWhomItConcerns(t *testing.T) {
	b := newBatcher(1)
	ops, _ := testOps(t, rand.New(rand.NewPCG(113, 114)), 4)
	w := []*waiter{getWaiter(), getWaiter(), getWaiter()}
	b.mu.Lock()
	defer b.unlock()
	for i, op := range ops {
		op.state, op.at, op.w = opQueued, time.Now(), w[i/2] // two callers of a pair each
	}
	b.queue[16] = append(b.queue[16], ops...)
	b.leaders = 1 // the one slot is held
	b.calls.Store(3)
	b.wakeLeaders()
	if signalled(b, w[0]) || signalled(b, w[1]) {
		t.Fatal("a caller was woken while no slot was free")
	}
	b.leave() // the slot is free: the oldest operation's caller leads
	if !signalled(b, w[0]) || signalled(b, w[1]) {
		t.Fatal("the slot's end did not wake the oldest operation's caller alone")
	}

	// w[2] leads a batch that takes w[0]'s pair along with its own;
	// w[1]'s pair is elsewhere (another queue, say).
	own, _ := testOps(t, rand.New(rand.NewPCG(115, 116)), 1)
	own[0].state, own[0].at, own[0].w = opQueued, time.Now(), w[2]
	b.queue[16] = []*batchOp{ops[0], ops[1], own[0]}
	var ran []*batchOp
	b.exec = func(batch []*batchOp) { ran = append(ran, batch...) }
	b.leaders = 0
	b.lead(16, own, w[2])
	if len(ran) != 3 || ran[0] != own[0] {
		t.Fatalf("the batch held %d operations (own first: %v)", len(ran), len(ran) > 0 && ran[0] == own[0])
	}
	if !signalled(b, w[0]) {
		t.Fatal("the caller whose pair was done was not woken")
	}
	if signalled(b, w[1]) || signalled(b, w[2]) {
		t.Fatal("a caller with nothing done, or the leader itself, was woken")
	}
	for _, x := range w {
		putWaiter(x)
	}
}

// TestBatcherFillTimerStopped: a queue waiting to fill arms the timer;
// a batch that leads before it is due disarms it, so that it wakes
// nobody for nothing. The wait to fill is an hour here, so that a loaded
// machine cannot let the timer fire between armFill and lead (fillDue
// would then be waiting for b.mu, and the timer rightly still armed).
func TestBatcherFillTimerStopped(t *testing.T) {
	defer func(d time.Duration) { batchFill = d }(batchFill)
	batchFill = time.Hour
	b, _ := crowdedBatcher(4)
	ops, _ := testOps(t, rand.New(rand.NewPCG(117, 118)), 2)
	w := getWaiter()
	defer putWaiter(w)
	b.mu.Lock()
	defer b.unlock()
	for _, op := range ops {
		op.state, op.at, op.w = opQueued, time.Now(), w
	}
	b.queue[16] = append(b.queue[16], ops...)
	b.calls.Store(1)
	if lead, fill := b.mayLead(16); lead || !fill {
		t.Fatalf("crowded, nothing running, a pair queued: lead %v, fill %v; want a wait to fill", lead, fill)
	}
	b.armFill(16)
	if !b.filling {
		t.Fatal("the fill timer is not armed")
	}
	b.exec = func([]*batchOp) {}
	b.lead(16, ops, w)
	if b.filling {
		t.Fatal("the fill timer is still armed after the queue's batch led")
	}
}

// TestWaiter: a token left before the wait is taken at once; a caller
// asleep, in the kernel or on its channel, wakes at the signal; a token
// left in a recycled waiter costs its next caller one look, not a lost
// or a false wake-up.
func TestWaiter(t *testing.T) {
	for _, inKernel := range []bool{false, true} {
		w := getWaiter()
		w.signal()
		w.wait(inKernel) // the token: returns at once
		if taken(w) {
			t.Fatalf("inKernel %v: a second token after one signal", inKernel)
		}

		asleep := uint32(wOnChannel)
		if inKernel && haveFutex {
			asleep = wInKernel
		}
		done := make(chan struct{})
		go func() { defer close(done); w.wait(inKernel) }()
		for w.state.Load() != asleep { // polled: no clock
			runtime.Gosched()
		}
		w.signal()
		<-done // a lost wake-up hangs here
		if st := w.state.Load(); st != wIdle {
			t.Fatalf("inKernel %v: state %d after the wake-up, want idle", inKernel, st)
		}

		w.signal() // late: its caller has gone
		putWaiter(w)
		if w = getWaiter(); taken(w) {
			t.Fatalf("inKernel %v: a recycled waiter kept a token", inKernel)
		}
		putWaiter(w)
	}
}

// TestFillDeadlineFromIdle: a partial batch that queued while another
// batch computed waits batchFill from that batch's end, not from its own
// arrival: the end's callers come back to fill it.
func TestFillDeadlineFromIdle(t *testing.T) {
	b := newBatcher(1)
	ops, _ := testOps(t, rand.New(rand.NewPCG(119, 120)), 1)
	queuedAt := time.Now().Add(-time.Hour)
	ops[0].at = queuedAt
	b.mu.Lock()
	defer b.unlock()
	if got := b.fillDeadline(ops); !got.Equal(queuedAt.Add(batchFill)) {
		t.Fatalf("no batch has ended: deadline %v after the arrival, want %v", got.Sub(queuedAt), batchFill)
	}
	b.leaders = 1
	b.leave() // a batch ends after the arrival
	if got := b.fillDeadline(ops); !got.Equal(b.idleAt.Add(batchFill)) || !b.idleAt.After(queuedAt) {
		t.Fatalf("deadline %v after the batch's end, want %v", got.Sub(b.idleAt), batchFill)
	}
}
