package device_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/rsa"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
)

// gatedSoft is the software engine behind a gate: its ExpPair computes
// nothing until want calls are inside it at once (or a call's context
// ends), so it answers only when the device client keeps that many
// requests in flight together and the daemon hands them to the engine
// together, as the engine's batch scheduler needs them. It computes every
// pair (as two Exp where the kernel does not pair) and, for the modulus
// bad, flips a bit of the result: a faulty lane.
type gatedSoft struct {
	*soft.Engine
	want   int
	in     atomic.Int64
	once   sync.Once
	all    chan struct{}
	bad    []byte
	faults atomic.Int64
}

func (g *gatedSoft) ExpPair(ctx context.Context, a, b engine.ExpOp) (ra, rb []byte, c engine.Cost, err error) {
	if int(g.in.Add(1)) >= g.want {
		g.once.Do(func() { close(g.all) })
	}
	select {
	case <-g.all:
	case <-ctx.Done():
		return nil, nil, c, fmt.Errorf("gate: %d of %d pairs came together: %w", g.in.Load(), g.want, ctx.Err())
	}
	ra, rb, c, err = g.Engine.ExpPair(ctx, a, b)
	if errors.Is(err, engine.ErrUnsupported) {
		if ra, _, err = g.Engine.Exp(ctx, a.M, a.Base, a.Exp); err == nil {
			rb, _, err = g.Engine.Exp(ctx, b.M, b.Base, b.Exp)
		}
	}
	if err == nil && bytes.Equal(a.M.Bytes(), g.bad) {
		ra[len(ra)-1] ^= 1
		g.faults.Add(1)
	}
	return ra, rb, c, err
}

// TestDeviceBatchesKeys signs with four RSA-2048 keys from eight
// goroutines at once through the device engine and a daemon on the
// software engine: the client keeps the eight private operations in
// flight together and the daemon hands them to its engine together (the
// gate opens only then; on the IFMA kernel its scheduler runs them in
// lanes), every result of the three good keys is right, and every result
// of the key whose lane is faulty is refused (rsa.ErrFault), never
// released.
func TestDeviceBatchesKeys(t *testing.T) {
	const keys, callers, rounds = 4, 8, 3
	privs := make([]*rsa.PrivateKey, keys)
	for i := range privs {
		privs[i] = rsaKeyFixture(t, 2048)
	}
	se := soft.New()
	want := callers
	if se.BatchWidth() == 0 {
		// Without batching the daemon lets one request per core in.
		want = min(callers, se.Info().Cores)
	}
	g := &gatedSoft{Engine: se, want: want, all: make(chan struct{}), bad: privs[0].P.Bytes()}
	d := startDaemon(t, g)
	cfg := d.config()
	cfg.Timeout, cfg.DeadlineFloor = time.Minute, time.Minute // the gate, not the clock, decides
	e := openClient(t, cfg)
	ks := make([]*rsa.Key, keys)
	for i, p := range privs {
		k, err := rsa.NewKey(e, p, rsa.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ks[i] = k
	}
	var wg sync.WaitGroup
	errs := make(chan error, callers*rounds)
	for c := range callers {
		wg.Go(func() {
			i := c % keys
			for r := range rounds {
				in := big.NewInt(int64(1000*c + r + 2))
				got, _, err := ks[i].Private(context.Background(), in.Bytes())
				switch {
				case i == 0 && !errors.Is(err, rsa.ErrFault):
					errs <- fmt.Errorf("key 0 (faulty lane), caller %d: %v, want rsa.ErrFault", c, err)
				case i == 0 && got != nil:
					errs <- fmt.Errorf("key 0 (faulty lane), caller %d: a result released", c)
				case i != 0 && err != nil:
					errs <- fmt.Errorf("key %d, caller %d: %w", i, c, err)
				case i != 0:
					wantS := new(big.Int).Exp(in, privs[i].D, privs[i].N)
					if new(big.Int).SetBytes(got).Cmp(wantS) != 0 {
						errs <- fmt.Errorf("key %d, caller %d: wrong signature", i, c)
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if g.faults.Load() == 0 {
		t.Error("the faulty lane never ran")
	}
	st := d.srv.Stats()
	t.Logf("%d pairs, %d faulted; daemon: %d batches, %d lanes, load %.2f",
		g.in.Load(), g.faults.Load(), st.Batches, st.BatchLanes, st.Load)
}
