package server_test

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modexp-token/modexp-token/cmd/modexpd/server"
	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/mont"
	"github.com/modexp-token/modexp-token/engine/arith/randop"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire/wiretest"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
	"github.com/modexp-token/modexp-token/engine/enginetest/bigengine"
)

// manyBig is a batching engine for the batch loop: ExpMany on the big
// engine, counting the calls and the operations, or declining every
// batch (decline) so that requests take the one-by-one path.
type manyBig struct {
	*bigengine.Engine
	decline           bool
	calls, ops, alone atomic.Int64 // ExpMany calls and operations; Exp calls
}

func (m *manyBig) Exp(ctx context.Context, mod engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	m.alone.Add(1)
	return m.Engine.Exp(ctx, mod, base, exp)
}

func (m *manyBig) BatchWidth() int { return 8 }

func (m *manyBig) ExpMany(ctx context.Context, ops []engine.ExpOp) ([][]byte, engine.Cost, error) {
	if m.decline {
		return nil, engine.Cost{}, fmt.Errorf("manyBig: declined: %w", engine.ErrUnsupported)
	}
	m.calls.Add(1)
	m.ops.Add(int64(len(ops)))
	out := make([][]byte, len(ops))
	for i, op := range ops {
		r, _, err := m.Engine.Exp(ctx, op.M, op.Base, op.Exp) // not counted as alone
		if err != nil {
			return nil, engine.Cost{}, err
		}
		out[i] = r
	}
	return out, engine.Cost{}, nil
}

// startLoop serves eng with the batch loop.
func startLoop(t *testing.T, eng engine.Engine) *daemon {
	t.Helper()
	return startDaemonCfg(t, server.Config{Engine: eng, Cost: &wire.CostModel{}, BatchLoop: true})
}

// pairRequest is a SOLO MODEXP_PAIR of two random exponentiations modulo
// random odd moduli of bits, and the results math/big gives.
func pairRequest(r *rand.Rand, id uint32, bits int) (*wire.Frame, []byte, []byte) {
	f := wire.NewRequest(wire.OpModExpPair, id)
	var want [2][]byte
	for i, tags := range [2][3]wire.Tag{{wire.TagMod, wire.TagBase, wire.TagExp}, {wire.TagMod2, wire.TagBase2, wire.TagExp2}} {
		m := randop.Odd(r, bits)
		x := randop.Bits(r, bits-1)
		e := randop.Bits(r, bits)
		f.Add(tags[0], m.Bytes()).Add(tags[1], x.Bytes()).Add(tags[2], e.Bytes())
		want[i] = new(big.Int).Exp(x, e, m).FillBytes(make([]byte, (bits+7)/8))
	}
	f.AddU32(wire.TagDeadlineMS, 60_000).AddU8(wire.TagSolo, 1)
	return f, want[0], want[1]
}

// signers runs n clients on d, each sending rounds SOLO pair requests
// one after the other, and checks every answer against math/big.
func signers(t *testing.T, d *daemon, n, rounds, bits int) {
	var wg sync.WaitGroup
	for i := range n {
		c := wiretest.Dial(t, d.path)
		r := rand.New(rand.NewPCG(uint64(i), 7))
		wg.Go(func() {
			for k := range rounds {
				f, wa, wb := pairRequest(r, uint32(k+1), bits)
				c.Send(f)
				a := c.Recv()
				ra, _ := a.Get(wire.TagResult)
				rb, _ := a.Get(wire.TagResult2)
				if a.Status != wire.StatusOK || a.ID != f.ID || !bytes.Equal(ra, wa) || !bytes.Equal(rb, wb) {
					t.Errorf("client %d, request %d: status %v (%q), results %x %x, want %x %x", i, k+1, a.Status, a.Message(), ra, rb, wa, wb)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestBatchLoop: with an engine that takes gathered batches, the SOLO
// pairs of several clients are each computed once, through ExpMany or on
// a core of their own, and every answer is right; when the engine declines the
// batches, the same requests are served one by one, as right.
func TestBatchLoop(t *testing.T) {
	const clients, rounds = 4, 30
	t.Run("batched", func(t *testing.T) {
		eng := &manyBig{Engine: bigengine.New(0)}
		signers(t, startLoop(t, eng), clients, rounds, 256)
		// Each exponentiation once: in a batch, or, when no more
		// clients than cores were signing lately, on a core of its own.
		if got, alone := eng.ops.Load(), eng.alone.Load(); got+alone != 2*clients*rounds || eng.calls.Load() > got/2 {
			t.Errorf("ExpMany: %d calls, %d exponentiations; %d alone; want %d in all, at least a pair a call", eng.calls.Load(), got, alone, 2*clients*rounds)
		}
		t.Logf("%d of %d pairs batched, in %d batches", eng.ops.Load()/2, clients*rounds, eng.calls.Load())
	})
	t.Run("declined", func(t *testing.T) {
		eng := &manyBig{Engine: bigengine.New(0), decline: true}
		signers(t, startLoop(t, eng), clients, rounds, 256)
		if eng.ops.Load() != 0 {
			t.Errorf("ExpMany computed %d exponentiations though it declined", eng.ops.Load())
		}
	})
	t.Run("soft", func(t *testing.T) {
		if !mont.Batching() {
			t.Skip("no batching kernel on this machine")
		}
		signers(t, startLoop(t, soft.New()), clients, 10, 1024)
	})
}

// TestBatchLoopHangUp: clients that hang up with a request gathered, or
// while others' are, leave the loop serving the rest, and the server
// still drains and closes (startDaemon's cleanup).
func TestBatchLoopHangUp(t *testing.T) {
	eng := &manyBig{Engine: bigengine.New(0)}
	d := startLoop(t, eng)
	r := rand.New(rand.NewPCG(3, 4))
	for range 3 {
		c := wiretest.Dial(t, d.path)
		f, _, _ := pairRequest(r, 1, 256)
		c.Send(f)
		c.NC.Close()
	}
	signers(t, d, 2, 10, 256)
}
