package soft

import (
	"context"
	"fmt"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/mont"
)

// ExpMany computes several secret exponentiations gathered by the caller
// itself (modexpd's batch loop, which reads the requests of all its
// clients on one thread), as full batches of the 8-lane kernel: alone in
// flight on the engine they run at once, mont.BatchLanes at a time, on
// the caller's goroutine; otherwise they join the scheduler's queue like
// any other call's. The operations must be secret exponentiations modulo
// moduli of one size that the batch kernel takes; otherwise, or without
// a batching kernel, ExpMany returns an error wrapping
// engine.ErrUnsupported before doing anything. Results are as Exp's.
func (e *Engine) ExpMany(ctx context.Context, ops []engine.ExpOp) ([][]byte, engine.Cost, error) {
	if e.batch == nil || !mont.Batching() || len(ops) == 0 {
		return nil, engine.Cost{}, fmt.Errorf("soft: exp many: no batching kernel: %w", engine.ErrUnsupported)
	}
	ms := make([]*mont.Modulus, len(ops))
	for i, op := range ops {
		mm, ok := op.M.(*modulus)
		if !ok || mm == nil || op.Public || !mont.CanBatch(mm.m) || i > 0 && mm.m.Limbs() != ms[0].Limbs() {
			return nil, engine.Cost{}, fmt.Errorf("soft: exp many: operation %d not batched: %w", i, engine.ErrUnsupported)
		}
		if len(op.Exp) > maxExpBytes {
			return nil, engine.Cost{}, fmt.Errorf("soft: exp many: exponent of %d bytes: %w", len(op.Exp), engine.ErrOperandTooLarge)
		}
		ms[i] = mm.m
	}
	if err := ctx.Err(); err != nil {
		return nil, engine.Cost{}, fmt.Errorf("soft: exp many: %w", err)
	}
	k := ms[0].Limbs()
	limbs := make([]uint64, k*len(ops))
	defer clear(limbs) // the secret halves of private operations
	bops := make([]batchOp, len(ops))
	ptrs := make([]*batchOp, len(ops))
	for i, op := range ops {
		x := limbs[i*k : (i+1)*k]
		if mont.SetBytes(x, op.Base)&ms[i].Less(x) != 1 {
			return nil, engine.Cost{}, fmt.Errorf("soft: exp many: base not below the modulus: %w", engine.ErrOperandTooLarge)
		}
		bops[i] = batchOp{m: ms[i], x: x, e: op.Exp}
		ptrs[i] = &bops[i]
	}
	e.batch.runMany(ptrs)
	out := make([][]byte, len(ops))
	for i := range ops {
		out[i] = make([]byte, ms[i].Size())
		mont.FillBytes(out[i], bops[i].x)
	}
	return out, engine.Cost{}, nil
}

// runMany computes ops (one limb count, each CanBatch): when no other
// call is in flight, at once on the caller's goroutine, a batch of up to
// mont.BatchLanes at a time (taking one leader slot, as a lone call
// does); otherwise through the queue (run).
func (b *batcher) runMany(ops []*batchOp) {
	if !b.calls.CompareAndSwap(0, 1) {
		b.run(ops...)
		return
	}
	b.lone.Add(1)
	for len(ops) > 0 {
		n := min(len(ops), mont.BatchLanes)
		execBatch(ops[:n])
		b.batches.Add(1)
		b.lanes.Add(int64(n))
		ops = ops[n:]
	}
	b.endLone()
	b.calls.Add(-1)
}
