package device_test

import (
	"context"
	"errors"
	"math/big"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/cmd/modexpd/server"
	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/device"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire"
	"github.com/modexp-token/modexp-token/engine/enginetest/bigengine"
)

// daemon is an in-process server on a unix socket in a temporary directory.
type daemon struct {
	srv  *server.Server
	path string
	done chan error
}

func startDaemon(t *testing.T, eng engine.Engine, faults ...string) *daemon {
	t.Helper()
	return startDaemonAt(t, filepath.Join(t.TempDir(), "run", "mxp.sock"), eng, faults...)
}

func startDaemonAt(t *testing.T, path string, eng engine.Engine, faults ...string) *daemon {
	t.Helper()
	return startDaemonCfg(t, path, server.Config{Engine: eng}, faults...)
}

// startDaemonCfg starts an in-process server with cfg (Engine nil: the big
// engine) and faults.
func startDaemonCfg(t testing.TB, path string, cfg server.Config, faults ...string) *daemon {
	t.Helper()
	if cfg.Engine == nil {
		cfg.Engine = bigengine.New(0)
	}
	if _, sleepy := cfg.Engine.(sleepyEngine); sleepy && cfg.Cost == nil {
		cfg.Cost = &wire.CostModel{} // its sleeps are not work to calibrate
	}
	for _, f := range faults {
		ft, err := server.ParseFault(f)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Faults = append(cfg.Faults, ft)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := server.ListenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	d := &daemon{srv: srv, path: path, done: make(chan error, 1)}
	go func() { d.done <- srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	return d
}

// config is a client of d whose own deadlines (Timeout, and the cost
// model's, bounded below by DeadlineFloor) are hang guards: a request on a
// loaded machine, under the race detector, must not fail for its time.
// Tests of those deadlines set their own.
func (d *daemon) config() device.Config {
	return device.Config{Network: "unix", Address: d.path, Timeout: time.Minute, DeadlineFloor: time.Minute}
}

func openClient(t *testing.T, cfg device.Config) engine.Engine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	e, err := device.New(ctx, cfg)
	if err != nil {
		t.Fatalf("device.New: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func healthOf(t *testing.T, e engine.Engine) device.Health {
	t.Helper()
	h, ok := e.(interface{ Health() device.Health })
	if !ok {
		t.Fatalf("%T has no Health", e)
	}
	return h.Health()
}

func pad(v *big.Int, n int) []byte { return v.FillBytes(make([]byte, n)) }

func randFor(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed)) }

func mustGet(t *testing.T, f *wire.Frame, tag wire.Tag) []byte {
	t.Helper()
	v, ok := f.Get(tag)
	if !ok {
		t.Fatalf("frame %v/%v has no field %#x (message %q)", f.Op, f.Status, tag, f.Message())
	}
	return v
}

// sleepyEngine is the big engine with an exponentiation that first sleeps
// for as many milliseconds as the exponent's last byte says (honouring
// ctx), so tests can order answers.
type sleepyEngine struct{ *bigengine.Engine }

func (e sleepyEngine) expMode(ctx context.Context, m engine.Modulus, base, exp []byte, public bool) ([]byte, engine.Cost, error) {
	if len(exp) > 0 {
		select {
		case <-time.After(time.Duration(exp[len(exp)-1]) * time.Millisecond):
		case <-ctx.Done():
			return nil, engine.Cost{}, ctx.Err()
		}
	}
	return engine.ExpMode(ctx, e.Engine, m, base, exp, public)
}

// gatedEngine is a [sleepyEngine] whose requests with the exponent's last
// byte 255 wait until gate is closed (or their context ends) instead of
// sleeping: tests that something is served while such a request is held
// wait for that condition, not for a duration.
type gatedEngine struct {
	sleepyEngine
	gate chan struct{}
}

func newGatedEngine() gatedEngine {
	return gatedEngine{sleepyEngine{bigengine.New(0)}, make(chan struct{})}
}

func (e gatedEngine) expMode(ctx context.Context, m engine.Modulus, base, exp []byte, public bool) ([]byte, engine.Cost, error) {
	if len(exp) > 0 && exp[len(exp)-1] == 255 {
		select {
		case <-e.gate:
		case <-ctx.Done():
			return nil, engine.Cost{}, ctx.Err()
		}
		return engine.ExpMode(ctx, e.Engine, m, base, exp, public)
	}
	return e.sleepyEngine.expMode(ctx, m, base, exp, public)
}

// Exp is [engine.Engine]'s: the exponent is secret.
func (e gatedEngine) Exp(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return e.expMode(ctx, m, base, exp, false)
}

// ExpVarTime is [engine.Engine]'s: the exponent is public.
func (e gatedEngine) ExpVarTime(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return e.expMode(ctx, m, base, exp, true)
}

// Exp is [engine.Engine]'s: the exponent is secret.
func (e sleepyEngine) Exp(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return e.expMode(ctx, m, base, exp, false)
}

// ExpVarTime is [engine.Engine]'s: the exponent is public.
func (e sleepyEngine) ExpVarTime(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return e.expMode(ctx, m, base, exp, true)
}

func isDevice(err error) bool { return errors.Is(err, engine.ErrDevice) }

// waitFor polls cond until it holds, failing after two minutes: a guard
// against a hang, not a bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 2 min", what)
		}
		time.Sleep(time.Millisecond)
	}
}
