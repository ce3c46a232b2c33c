package device_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/cmd/modexpd/server"
	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/randop"
	"github.com/modexp-token/modexp-token/engine/backend/device"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire"
	"github.com/modexp-token/modexp-token/engine/enginetest"
	"github.com/modexp-token/modexp-token/engine/enginetest/bigengine"
)

func costModelOf(t *testing.T, e engine.Engine) wire.CostModel {
	t.Helper()
	c, ok := e.(interface{ CostModel() wire.CostModel })
	if !ok {
		t.Fatalf("%T has no CostModel", e)
	}
	return c.CostModel()
}

// TestCostModelInInfo: the daemon measures its engine at start and INFO
// carries the model, whose predictions grow with the work. How close its
// prediction for a 1024-bit MODEXP comes to a fresh measurement is logged,
// not checked: the two are taken at different moments of a shared
// machine's load.
func TestCostModelInInfo(t *testing.T) {
	eng := bigengine.New(0)
	d := startDaemon(t, eng)
	cm := costModelOf(t, openClient(t, d.config()))
	if !cm.Known() || cm.ModExpPS == 0 || cm.ECPS == 0 {
		t.Fatalf("cost model %+v: want MODEXP and EC coefficients", cm)
	}
	if cm != d.srv.Cost() {
		t.Fatalf("client read %+v, server sent %+v", cm, d.srv.Cost())
	}
	c := newExpCase(11, 1024)
	m, _ := eng.NewModulus(c.n.Bytes())
	var best time.Duration
	for range 5 {
		start := time.Now()
		if _, _, err := eng.Exp(context.Background(), m, c.base.Bytes(), c.exp.Bytes()); err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); best == 0 || el < best {
			best = el
		}
	}
	pred := cm.ModExp(1024, c.exp.BitLen())
	t.Logf("model %+v: 1024-bit MODEXP predicted %v, measured %v (ratio %.2f); 2048-bit CRT predicted %v; P-256 predicted %v",
		cm, pred, best, float64(pred)/float64(best), cm.ModExpCRT(2048), cm.ECMul(256))
	if small, big := cm.ModExp(512, 512), cm.ModExp(2048, 2048); pred <= 0 || small >= pred || pred >= big {
		t.Fatalf("predictions for 512, 1024 and 2048 bits: %v, %v, %v; want them growing", small, pred, big)
	}
	if ec := cm.ECMul(256); ec <= 0 || ec >= cm.ECMul(521) {
		t.Fatalf("predictions for P-256 and P-521: %v, %v; want them growing", ec, cm.ECMul(521))
	}
	// A daemon told to report no model sends none.
	none := startDaemonCfg(t, filepath.Join(t.TempDir(), "run", "n.sock"), server.Config{Cost: &wire.CostModel{}})
	if cm := costModelOf(t, openClient(t, none.config())); cm.Known() {
		t.Fatalf("daemon without a model: client read %+v", cm)
	}
}

// TestCostDeadline: the deadline of a request follows the device's
// predicted time. The daemon reports a model (here set explicitly, so the
// prediction is known) and delays every answer by slow:MS; the client's
// Timeout is a long 10 s. Requests whose predicted time covers the delay
// succeed; requests predicted to be much faster than the delay fail with a
// device timeout after max(floor, 4 × predicted + 250 ms), long before
// Timeout (10 minutes: a hang guard). The error itself shows the deadline
// came before the delayed answer (a minute: no pause of a loaded machine
// lets it come first); its lower bound (which load cannot break: the clock
// starts before the request's deadline is set) shows the deadline was not
// shorter than the model's. The request that succeeds has a prediction
// of 10 s, 40 s of deadline, for a delay of 400 ms.
func TestCostDeadline(t *testing.T) {
	cases := []struct {
		name    string
		fixed   time.Duration // the model's FixedNS: the whole prediction for a small MODEXP
		slowMS  int
		floor   time.Duration
		ctx     time.Duration // caller's deadline, 0: none
		wantErr bool
		min     time.Duration // the error comes after at least this (the deadline less 10 ms of rounding to DEADLINE_MS)
	}{
		{"fast prediction, slow device", time.Millisecond, 60000, 300 * time.Millisecond, 0, true, 290 * time.Millisecond},
		{"floor bounds it below", time.Millisecond, 60000, 800 * time.Millisecond, 0, true, 790 * time.Millisecond},
		{"4x prediction + 250 ms", 200 * time.Millisecond, 60000, 100 * time.Millisecond, 0, true, 1040 * time.Millisecond},
		{"slow prediction, slow device", 10 * time.Second, 400, 100 * time.Millisecond, 0, false, 0},
		{"caller's deadline first", time.Millisecond, 60000, time.Second, 100 * time.Millisecond, true, 90 * time.Millisecond},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cost := &wire.CostModel{FixedNS: uint64(tc.fixed), ModExpPS: 1, ECPS: 1}
			d := startDaemonCfg(t, filepath.Join(t.TempDir(), "run", "c.sock"), server.Config{Cost: cost}, fmt.Sprintf("slow:%d", tc.slowMS))
			cfg := d.config()
			cfg.Timeout = 10 * time.Minute
			cfg.DeadlineFloor = tc.floor
			e := openClient(t, cfg)
			c := newExpCase(uint64(20+i), 256)
			ctx := context.Background()
			start := time.Now() // before any deadline is set
			if tc.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctx)
				defer cancel()
			}
			got, err := c.run(ctx, e)
			el := time.Since(start)
			t.Logf("predicted %v, device delay %d ms, floor %v: %v after %v", cost.ModExp(256, c.exp.BitLen()), tc.slowMS, tc.floor, err, el.Round(time.Millisecond))
			if !tc.wantErr {
				if err != nil || !bytes.Equal(got, c.want) {
					t.Fatalf("want the answer: %v", err)
				}
				return
			}
			if !isDevice(err) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("want a device timeout, got %v", err)
			}
			if tc.ctx == 0 && !strings.Contains(err.Error(), "cost model") {
				t.Errorf("error does not name the cost model: %v", err)
			}
			if el < tc.min {
				t.Fatalf("timed out after %v, before the %v the deadline allows", el, tc.min)
			}
		})
	}
}

// TestCostDeadlineNormalLoad: with the measured model and the default
// floor, a normal mixed load (MODEXP 512 to 2048 bits, native CRT, EC)
// from 6 goroutines never times out, and the deadlines it sends are
// proportional to the work (checked through the engine's own formula).
// The model is measured when the daemon starts: a machine whose load
// grew since then may make requests miss it, which is what the deadline
// is for. Then the test skips (the answers that came were checked).
func TestCostDeadlineNormalLoad(t *testing.T) {
	d := startDaemon(t, nil)
	cfg := d.config()
	cfg.Timeout = 10 * time.Minute // a hang guard: a timeout here would be the model's
	cfg.DeadlineFloor = 0          // the default
	cfg.FailureThreshold = 1 << 30 // a missed deadline must not open the breaker on the others
	e := openClient(t, cfg)
	cm := costModelOf(t, e)
	if !cm.Known() {
		t.Fatal("no cost model")
	}
	n := 20
	if testing.Short() {
		n = 6
	}
	ce := enginetest.As[engine.CRTEngine](t, e)
	ee := enginetest.As[engine.ECEngine](t, e)
	var wg sync.WaitGroup
	errs := make(chan error, 6*n)
	for w := range 6 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 77))
			for i := range n {
				switch (w + i) % 3 {
				case 0:
					c := newExpCase(r.Uint64(), []int{512, 1024, 2048}[i%3])
					got, err := c.run(context.Background(), e)
					if err == nil && !bytes.Equal(got, c.want) {
						err = errors.New("wrong MODEXP")
					}
					if err != nil {
						errs <- err
					}
				case 1:
					f := crtCase(t, 1024)
					base := new(big.Int).Mod(randop.Bits(r, 1000), f.n)
					got, _, err := ce.ExpCRT(context.Background(), &f.k, base.Bytes())
					if err == nil && !bytes.Equal(got, pad(new(big.Int).Exp(base, f.d, f.n), 128)) {
						err = errors.New("wrong MODEXP_CRT")
					}
					if err != nil {
						errs <- err
					}
				case 2:
					if _, _, _, err := ee.ScalarBaseMult(context.Background(), "P-256", []byte{byte(i + 1), 7}); err != nil {
						errs <- err
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	missed := 0
	for err := range errs {
		if isDevice(err) && errors.Is(err, context.DeadlineExceeded) && strings.Contains(err.Error(), "cost model") {
			missed++
			t.Log(err)
			continue
		}
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	if missed > 0 {
		t.Skipf("%d of %d requests missed the deadline of the model measured at the daemon's start: the machine is busier now than then (the other answers were right)",
			missed, 6*n)
	}
	if h := healthOf(t, e); h.ConsecutiveFailures != 0 || h.Trips != 0 {
		t.Fatalf("health after a normal load: %+v", h)
	}
}

// crtKeyFixture is an RSA key in CRT form with its n and d.
type crtKeyFixture struct {
	k    engine.CRTKey
	n, d *big.Int
}

var (
	crtFixtureMu sync.Mutex
	crtFixtureBy = map[int]*crtKeyFixture{}
)

// crtCase returns a (cached) RSA key of bits bits.
func crtCase(t *testing.T, bits int) *crtKeyFixture {
	crtFixtureMu.Lock()
	defer crtFixtureMu.Unlock()
	if f := crtFixtureBy[bits]; f != nil {
		return f
	}
	r := rand.New(rand.NewPCG(uint64(bits), 5))
	e := big.NewInt(65537)
	one := big.NewInt(1)
	for {
		p, q := randPrime(r, bits/2), randPrime(r, bits/2)
		n := new(big.Int).Mul(p, q)
		pm, qm := new(big.Int).Sub(p, one), new(big.Int).Sub(q, one)
		d := new(big.Int).ModInverse(e, new(big.Int).Mul(pm, qm))
		if d == nil || p.Cmp(q) == 0 || n.BitLen() != bits {
			continue
		}
		f := &crtKeyFixture{n: n, d: d, k: engine.CRTKey{
			P: p.Bytes(), Q: q.Bytes(),
			DP: new(big.Int).Mod(d, pm).Bytes(), DQ: new(big.Int).Mod(d, qm).Bytes(),
			QInv: new(big.Int).ModInverse(q, p).Bytes(),
		}}
		crtFixtureBy[bits] = f
		return f
	}
}

func randPrime(r *rand.Rand, bits int) *big.Int {
	for {
		v := randop.Bits(r, bits)
		v.SetBit(v, bits-1, 1).SetBit(v, bits-2, 1).SetBit(v, 0, 1)
		if v.ProbablyPrime(20) {
			return v
		}
	}
}

// TestDeadlineFloorSpec: floor= in the spec sets Config.DeadlineFloor.
func TestDeadlineFloorSpec(t *testing.T) {
	cfg, err := device.ParseSpec("unix:/tmp/x.sock,floor=300ms")
	if err != nil || cfg.DeadlineFloor != 300*time.Millisecond {
		t.Fatalf("floor=300ms: %+v, %v", cfg, err)
	}
	for _, bad := range []string{"unix:/x,floor=0s", "unix:/x,floor=soon", "unix:/x,floor=-1s"} {
		if _, err := device.ParseSpec(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
