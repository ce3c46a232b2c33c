package device_test

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/cmd/modexpd/server"
	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/randop"
	"github.com/modexp-token/modexp-token/engine/backend/device"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire/wiretest"
	"github.com/modexp-token/modexp-token/engine/enginetest"
	"github.com/modexp-token/modexp-token/engine/enginetest/bigengine"
)

// expCase is one exponentiation with its true answer.
type expCase struct {
	n, base, exp *big.Int
	want         []byte
}

func newExpCase(seed uint64, bits int) expCase {
	r := rand.New(rand.NewPCG(seed, uint64(bits)))
	n := randop.Odd(r, bits)
	c := expCase{n: n, base: new(big.Int).Mod(randop.Bits(r, bits), n), exp: randop.Bits(r, bits)}
	c.want = pad(new(big.Int).Exp(c.base, c.exp, n), (bits+7)/8)
	return c
}

func (c expCase) run(ctx context.Context, e engine.Engine) ([]byte, error) {
	m, err := e.NewModulus(c.n.Bytes())
	if err != nil {
		return nil, err
	}
	r, _, err := e.Exp(ctx, m, c.base.Bytes(), c.exp.Bytes())
	return r, err
}

// The Cryptech case: all-zero results above 1024 bits. The client passes
// them on (they are well-formed and in range); catching them is the job of
// engine/alg/rsa's check before release and of SelfTest.
func TestFaultZeroAbove(t *testing.T) {
	e := openClient(t, startDaemon(t, nil, "zero-above:1024").config())
	ctx := context.Background()
	small := newExpCase(1, 1024)
	if got, err := small.run(ctx, e); err != nil || !bytes.Equal(got, small.want) {
		t.Fatalf("1024 bits: %v", err)
	}
	wide := newExpCase(2, 2048)
	got, err := wide.run(ctx, e)
	if err != nil {
		t.Fatalf("2048 bits: %v", err)
	}
	if !bytes.Equal(got, make([]byte, 256)) {
		t.Fatalf("2048 bits: expected the injected all-zero result, got %x...", got[:8])
	}
	// EC: an all-zero point is never on the curve: the client refuses it.
	ec := enginetest.As[engine.ECEngine](t, openClient(t, startDaemon(t, nil, "zero-above:200").config()))
	if _, _, _, err := ec.ScalarBaseMult(ctx, "P-256", []byte{5}); !isDevice(err) {
		t.Fatalf("zero point: %v", err)
	}
}

func TestFaultBitFlip(t *testing.T) {
	e := openClient(t, startDaemon(t, nil, "bitflip:1").config())
	ranged := 0
	for i := range 20 {
		c := newExpCase(uint64(i), 512)
		got, err := c.run(context.Background(), e)
		if err != nil {
			if !isDevice(err) {
				t.Fatalf("flip above the modulus: %v, want ErrDevice", err)
			}
			ranged++ // the flipped result was not below the modulus
			continue
		}
		diff := 0
		for j := range got {
			diff += bits.OnesCount8(got[j] ^ c.want[j])
		}
		if diff != 1 {
			t.Fatalf("result differs in %d bits, want exactly 1", diff)
		}
	}
	t.Logf("%d of 20 flips caught by the range check", ranged)
}

func TestFaultHang(t *testing.T) {
	d := startDaemon(t, nil, "hang")
	cfg := d.config()
	cfg.FailureThreshold = 3
	cfg.Cooldown = time.Hour
	e := openClient(t, cfg)
	c := newExpCase(3, 256)
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, err := c.run(ctx, e)
		cancel()
		if !isDevice(err) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	// Three timeouts open the breaker: the next call, without a deadline on
	// a device that never answers, fails (so without asking the device).
	if h := healthOf(t, e); h.State != device.StateOpen || h.Trips != 1 {
		t.Fatalf("health after 3 timeouts: %+v", h)
	}
	if _, err := c.run(context.Background(), e); !isDevice(err) {
		t.Fatalf("open breaker: %v", err)
	}
}

func TestFaultDrop(t *testing.T) {
	// Every second request drops the connection: the client reconnects and
	// resends, and the caller sees only right answers.
	e := openClient(t, startDaemon(t, nil, "drop:2").config())
	for i := range 6 {
		c := newExpCase(uint64(i), 256)
		got, err := c.run(context.Background(), e)
		if err != nil || !bytes.Equal(got, c.want) {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if h := healthOf(t, e); h.Reconnects < 3 || h.State != device.StateClosed {
		t.Fatalf("health: %+v, want ≥ 3 reconnects", h)
	}
	// Every request dropped: a device error, after one resend.
	always := openClient(t, startDaemon(t, nil, "drop").config())
	if _, err := newExpCase(9, 256).run(context.Background(), always); !isDevice(err) {
		t.Fatalf("always dropped: %v", err)
	}
}

func TestFaultSlow(t *testing.T) {
	// The delay is long beside the 30 ms deadline below: a client paused
	// on a loaded machine still finds its deadline passed before the
	// answer comes.
	e := openClient(t, startDaemon(t, nil, "slow:1000").config())
	c := newExpCase(4, 256)
	start := time.Now()
	got, err := c.run(context.Background(), e)
	if err != nil || !bytes.Equal(got, c.want) {
		t.Fatal(err)
	}
	if el := time.Since(start); el < time.Second { // a lower bound: load cannot break it
		t.Fatalf("slow:1000 answered in %v", el)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := c.run(ctx, e); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow past the deadline: %v", err)
	}
}

func TestBusy(t *testing.T) {
	// The first two requests wait at the gate, so the third meets two in
	// flight however slowly the machine runs.
	eng := newGatedEngine()
	srv, err := server.New(server.Config{Engine: eng, MaxInflight: 2})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s", "b.sock")
	l, err := server.ListenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	c := wiretest.Dial(t, path)
	for id := uint32(1); id <= 3; id++ {
		c.Send(wire.NewRequest(wire.OpModExp, id).Add(wire.TagMod, []byte{0x0B}).Add(wire.TagBase, []byte{2}).Add(wire.TagExp, []byte{255}))
	}
	f := c.Recv()
	if f.ID != 3 || f.Status != wire.StatusBusy {
		t.Fatalf("third request: id %d %v, want BUSY", f.ID, f.Status)
	}
	if v, ok, _ := f.Uint(wire.TagRetryAfterMS); !ok || v == 0 {
		t.Error("BUSY without RETRY_AFTER_MS")
	}
	close(eng.gate)
	for range 2 {
		if f := c.Recv(); f.Status != wire.StatusOK {
			t.Fatalf("held request %d: %v", f.ID, f.Status)
		}
	}
	// The client stays within MAX_INFLIGHT and so never sees BUSY.
	e := openClient(t, device.Config{Network: "unix", Address: path, Timeout: time.Minute, DeadlineFloor: time.Minute})
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			m, _ := e.NewModulus([]byte{0x0B})
			if _, _, err := e.ExpVarTime(context.Background(), m, []byte{2}, []byte{5}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// TestDrain: Shutdown waits for the requests in flight, which are
// answered. They are held at a gate until the drain has begun, so that
// each is in flight during it whatever the machine's speed.
func TestDrain(t *testing.T) {
	eng := newGatedEngine()
	d := startDaemon(t, eng)
	e := openClient(t, d.config())
	m, _ := e.NewModulus([]byte{0x0B})
	var wg sync.WaitGroup
	results := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			r, _, err := e.Exp(context.Background(), m, []byte{2}, []byte{255})
			if err == nil && (len(r) != 1 || r[0] != byte(new(big.Int).Exp(big.NewInt(2), big.NewInt(255), big.NewInt(11)).Int64())) {
				err = errors.New("wrong result")
			}
			results <- err
		})
	}
	waitFor(t, "all eight requests in flight", func() bool { return d.srv.Stats().InFlight == 8 })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- d.srv.Shutdown(ctx) }()
	waitFor(t, "the drain to begin", func() bool { return d.srv.Stats().Draining })
	if n := d.srv.Stats().InFlight; n != 8 {
		t.Fatalf("%d in flight when the drain began, want the 8 held", n)
	}
	close(eng.gate)
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	wg.Wait()
	close(results)
	for err := range results {
		if err != nil {
			t.Errorf("request in flight during drain: %v", err)
		}
	}
	if err := <-d.done; !errors.Is(err, server.ErrServerClosed) {
		t.Errorf("Serve: %v", err)
	}
	if _, err := os.Stat(d.path); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
	// New work after the drain: a device error, fast.
	if _, _, err := e.Exp(context.Background(), m, []byte{2}, []byte{1}); !isDevice(err) {
		t.Errorf("after shutdown: %v", err)
	}
}

// TestBreakerRecovers: the daemon goes away. Requests fail at once with a
// device error, but an absent device (no socket, connection refused) is
// not a misbehaving one: the breaker stays closed, so nothing but the dial
// back-off (capped at 1 s) stands between a restarted daemon and the next
// request. Then a device that answers wrongly is restarted in its place:
// its faults open the breaker, and after the cool-down a probe on a sound
// daemon closes it again.
func TestBreakerRecovers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run", "r.sock")
	d := startDaemonAt(t, path, nil)
	cfg := d.config()
	cfg.FailureThreshold = 2
	cfg.Cooldown = 100 * time.Millisecond
	e := openClient(t, cfg)
	c := newExpCase(5, 256)
	d.srv.Close()
	<-d.done
	// Down for 2 s: every request fails fast; dials are spaced by the
	// back-off, which reaches its 1 s cap.
	downUntil := time.Now().Add(2 * time.Second)
	calls := 0
	for time.Now().Before(downUntil) {
		if _, err := c.run(context.Background(), e); !isDevice(err) {
			t.Fatalf("daemon gone: %v", err)
		}
		calls++
		time.Sleep(5 * time.Millisecond)
	}
	h := healthOf(t, e)
	if h.State != device.StateClosed || h.Trips != 0 || h.Connected {
		t.Fatalf("absent device: health %+v, want a closed breaker, no trips, not connected", h)
	}
	// 50+100+200+400+800 ms of back-off fit in 2 s: about 6 dials, not one
	// per request.
	if h.DialFailures < 3 || h.DialFailures > 10 || h.DialFailures >= uint64(calls) {
		t.Fatalf("%d dials for %d requests in 2 s", h.DialFailures, calls)
	}
	startDaemonAt(t, path, nil)
	back := time.Now()
	var recovered time.Duration
	waitFor(t, "a request answered by the restarted daemon", func() bool {
		got, err := c.run(context.Background(), e)
		if err == nil && !bytes.Equal(got, c.want) {
			t.Fatal("wrong result after recovery")
		}
		recovered = time.Since(back)
		return err == nil
	})
	t.Logf("absent 2 s: %d requests, %d dials; back %v after the restart", calls, h.DialFailures, recovered)
	if h := healthOf(t, e); h.State != device.StateClosed || h.Reconnects == 0 || !h.Connected {
		t.Fatalf("after recovery: %+v", h)
	}
}

// TestBreakerOpensOnFaults: a device that answers with faults (here it
// drops every connection) opens the breaker; once a sound daemon replaces
// it, the probe after the cool-down closes it.
func TestBreakerOpensOnFaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run", "f.sock")
	bad := startDaemonAt(t, path, nil, "drop")
	cfg := bad.config()
	cfg.FailureThreshold = 2
	cfg.Cooldown = 100 * time.Millisecond
	e := openClient(t, cfg)
	c := newExpCase(6, 256)
	for range 2 {
		if _, err := c.run(context.Background(), e); !isDevice(err) {
			t.Fatalf("dropping device: %v", err)
		}
	}
	if h := healthOf(t, e); h.State != device.StateOpen || h.Trips != 1 {
		t.Fatalf("after 2 faults: %+v", h)
	}
	bad.srv.Close()
	<-bad.done
	startDaemonAt(t, path, nil)
	waitFor(t, "a request answered after the cool-down", func() bool {
		got, err := c.run(context.Background(), e)
		if err == nil && !bytes.Equal(got, c.want) {
			t.Fatal("wrong result after recovery")
		}
		return err == nil
	})
	if h := healthOf(t, e); h.State != device.StateClosed {
		t.Fatalf("after recovery: %+v", h)
	}
}

func TestPeerUIDRefused(t *testing.T) {
	srv, err := server.New(server.Config{Engine: bigengine.New(0), AllowUIDs: []int{os.Getuid() + 1}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "u", "u.sock")
	l, err := server.ListenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard: the refusal is at once
	defer cancel()
	if _, err := device.New(ctx, device.Config{Network: "unix", Address: path}); !isDevice(err) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("refused uid: %v", err)
	}
	if srv.Stats().PeersRejected == 0 {
		t.Error("rejection not counted")
	}
}

func TestListenUnixPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sock")
	path := filepath.Join(dir, "p.sock")
	l, err := server.ListenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v (%v)", p, fi.Mode().Perm(), want, err)
		}
	}
	if _, err := server.ListenUnix(path); err == nil {
		t.Error("second daemon on a live socket")
	}
	l.Close()
	// A stale socket file is replaced.
	os.WriteFile(path, nil, 0o600)
	if l, err := server.ListenUnix(path); err != nil {
		t.Errorf("stale socket: %v", err)
	} else {
		l.Close()
	}
	open := filepath.Join(t.TempDir(), "open")
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o755)
	if _, err := server.ListenUnix(filepath.Join(open, "x.sock")); err == nil {
		t.Error("socket in a 0755 directory accepted")
	}
}

func TestStatusOp(t *testing.T) {
	d := startDaemon(t, nil)
	e := openClient(t, d.config())
	for i := range 5 {
		newExpCase(uint64(i), 256).run(context.Background(), e)
	}
	m, _ := e.NewModulus([]byte{0x0B})
	e.Exp(context.Background(), m, []byte{12}, []byte{1}) // refused client-side: not counted
	c := wiretest.Dial(t, d.path)
	c.Send(wire.NewRequest(wire.OpModExp, 1).Add(wire.TagMod, []byte{0x0B}).Add(wire.TagBase, []byte{20}).Add(wire.TagExp, []byte{1}))
	c.Recv()
	snap, err := server.FetchStatus(context.Background(), "unix:"+d.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	op := snap.Ops["MODEXP"]
	if op.Requests != 6 || op.Errors != 1 || op.Statuses["OK"] != 5 || op.Statuses["BAD_ARGUMENT"] != 1 || op.MaxMS <= 0 || op.P50MS > op.P99MS {
		t.Errorf("MODEXP stats: %+v", op)
	}
	// The client's multiplexed (INFO) and solo connections, c, and the
	// status fetch's own.
	if snap.Connections != 4 || snap.Engine != "bigtest" {
		t.Errorf("snapshot: %+v", snap)
	}
}
