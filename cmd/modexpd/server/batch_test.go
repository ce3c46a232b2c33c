package server_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire/wiretest"
	"github.com/modexp-token/modexp-token/engine/enginetest/bigengine"
)

// gathering is a 2-core engine.BatchEngine whose Exp answers only once
// want calls are inside it at once (or their deadline passes), as a
// batching engine needs them to be.
type gathering struct {
	*bigengine.Engine
	want int
	in   atomic.Int64
	once sync.Once
	all  chan struct{}
}

func (g *gathering) Info() engine.Info {
	in := g.Engine.Info()
	in.Cores = 2
	return in
}

func (g *gathering) BatchWidth() int { return 8 }

func (g *gathering) Exp(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	if int(g.in.Add(1)) >= g.want {
		g.once.Do(func() { close(g.all) })
	}
	select {
	case <-g.all:
	case <-ctx.Done():
		return nil, engine.Cost{}, fmt.Errorf("gathering: %d of %d calls came: %w", g.in.Load(), g.want, ctx.Err())
	}
	return g.Engine.Exp(ctx, m, base, exp)
}

// TestBatchEngineSlots: for an engine that batches, the daemon lets a
// batch's worth of requests per core reach it at once (8 single
// exponentiations on 2 cores with a width of 8), not one per core: the
// engine holds every request until all 8 are inside, and all 8 are
// answered.
func TestBatchEngineSlots(t *testing.T) {
	g := &gathering{Engine: bigengine.New(1024), want: 8, all: make(chan struct{})}
	d := startDaemon(t, g)
	var wg sync.WaitGroup
	for i := 0; i < g.want; i++ {
		c := wiretest.Dial(t, d.path)
		wg.Go(func() {
			c.Send(wire.NewRequest(wire.OpModExp, uint32(i+1)).Add(wire.TagMod, []byte{0x0B}).
				Add(wire.TagBase, []byte{2}).Add(wire.TagExp, []byte{3}).AddU32(wire.TagDeadlineMS, 60_000))
			f := c.Recv()
			if got, _ := f.Get(wire.TagResult); f.Status != wire.StatusOK || !bytes.Equal(got, []byte{8}) {
				t.Errorf("request %d: status %v (%q), result %x", i+1, f.Status, f.Message(), got)
			}
		})
	}
	wg.Wait()
}
