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

// ExpMany declines every batch: modexpd's batch loop then serves each
// request through ExpPair, the gate.
func (g *gatedSoft) ExpMany(context.Context, []engine.ExpOp) ([][]byte, engine.Cost, error) {
	return nil, engine.Cost{}, fmt.Errorf("gate: no batches: %w", engine.ErrUnsupported)
}

// TestDeviceBatchesKeys signs with eight RSA-2048 keys from eight
// goroutines at once through the device engine and a daemon on the
// software engine: the client keeps the eight private operations in
// flight together and the daemon hands them to its engine together (the
// gate opens only then); on the IFMA kernel the rounds go on until the
// scheduler has run lanes of different keys in one batch (a batch of more
// than one pair), at most maxRounds; it is skipped when the machine kept
// the calls apart that long. Every result of the good keys is right, and every result
// of the key whose lane comes out wrong is refused (rsa.ErrFault), never
// released.
func TestDeviceBatchesKeys(t *testing.T) {
	const keys, callers, maxRounds = 8, 8, 100
	privs := make([]*rsa.PrivateKey, keys)
	var kg sync.WaitGroup
	for i := range privs {
		kg.Go(func() { privs[i] = rsaKeyFixture(t, 2048) })
	}
	kg.Wait()
	if t.Failed() {
		return
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
	errs := make(chan error, callers)
	sign := func(c, r int) {
		i := c % keys
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
			if new(big.Int).SetBytes(got).Cmp(new(big.Int).Exp(in, privs[i].D, privs[i].N)) != 0 {
				errs <- fmt.Errorf("key %d, caller %d: wrong signature", i, c)
			}
		}
	}
	// mixed: a batch held lanes of more than one pair (so of two keys).
	mixed := func() bool { b, l := se.BatchStats(); return l > 2*b }
	rounds := 0
	for rounds < maxRounds && !t.Failed() && (rounds == 0 || se.BatchWidth() > 0 && !mixed()) {
		var wg sync.WaitGroup
		for c := range callers {
			wg.Go(func() { sign(c, rounds) })
		}
		wg.Wait()
		rounds++
		for len(errs) > 0 {
			t.Error(<-errs)
		}
	}
	if g.faults.Load() == 0 {
		t.Error("the faulty lane never ran")
	}
	st := d.srv.Stats()
	t.Logf("%d rounds, %d pairs, %d faulted; daemon: %d batches, %d lanes, load %.2f",
		rounds, g.in.Load(), g.faults.Load(), st.Batches, st.BatchLanes, st.Load)
	if se.BatchWidth() > 0 && !mixed() && !t.Failed() {
		// Whether the eight calls overlap in the daemon's engine is up to
		// the machine: on a loaded one (go test -race beside other
		// packages) they come apart and each pair runs alone. The
		// scheduler's gathering is shown without timing in
		// engine/backend/soft (TestBatcherGathers, TestBatcherCrowdedGathers).
		t.Skipf("%d rounds of %d callers, and no batch held lanes of two keys (a loaded machine)", rounds, callers)
	}
}
