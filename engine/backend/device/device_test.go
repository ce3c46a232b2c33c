package device_test

import (
	"bytes"
	"context"
	"crypto/elliptic"
	"errors"
	"math/big"
	"math/rand/v2"
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

func TestParseSpec(t *testing.T) {
	good := []struct {
		arg, network, addr string
		timeout            time.Duration
	}{
		{"unix:/run/m/x.sock", "unix", "/run/m/x.sock", 0},
		{"unix:/run/m/x.sock,timeout=250ms", "unix", "/run/m/x.sock", 250 * time.Millisecond},
	}
	for _, g := range good {
		cfg, err := device.ParseSpec(g.arg)
		if err != nil || cfg.Network != g.network || cfg.Address != g.addr || cfg.Timeout != g.timeout || cfg.Name != "device:"+g.network+":"+g.addr {
			t.Errorf("ParseSpec(%q) = %+v, %v", g.arg, cfg, err)
		}
	}
	for _, bad := range []string{
		"", "unix", "unix:", "udp:1.2.3.4:5", "unix:/x,timeout=-1s", "unix:/x,timeout", "unix:/x,color=red",
		"unix:/x,timeout=1s,timeout=2s", "unix:/x,ca=/c", "tcp:127.0.0.1:1",
		"tcp:127.0.0.1:1,ca=/nonexistent,cert=/n,key=/n",
	} {
		if _, err := device.ParseSpec(bad); err == nil {
			t.Errorf("ParseSpec(%q) accepted", bad)
		}
	}
}

func TestRegistryOpen(t *testing.T) {
	d := startDaemon(t, nil)
	e, err := engine.Open("device:unix:" + d.path + ",timeout=3s")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.Info().Name != "device:unix:"+d.path {
		t.Errorf("Name = %q", e.Info().Name)
	}
	if err := e.SelfTest(context.Background()); err != nil {
		t.Errorf("SelfTest: %v", err)
	}
	if _, err := engine.Open("device:unix:" + d.path + "-missing"); !isDevice(err) {
		t.Errorf("open of a missing socket: %v, want ErrDevice", err)
	}
}

func TestInfoAndAbilities(t *testing.T) {
	full := openClient(t, startDaemon(t, bigengine.New(4096)).config())
	in := full.Info()
	if _, crt := engine.As[engine.CRTEngine](full); in.Model != "bigtest" || in.MaxModulusBits != 4096 || !crt || in.Cores != 2 || len(in.Curves) != 3 {
		t.Errorf("Info = %+v", in)
	}
	if _, ok := engine.As[engine.CRTEngine](full); !ok {
		t.Error("no CRTEngine although INFO says native CRT")
	}
	if _, ok := engine.As[engine.ECEngine](full); !ok {
		t.Error("no ECEngine although INFO lists curves")
	}
	plain := openClient(t, startDaemon(t, bigengine.NewPlain(0)).config())
	if _, ok := engine.As[engine.CRTEngine](plain); ok {
		t.Error("CRTEngine without native CRT")
	}
	if _, ok := engine.As[engine.ECEngine](plain); ok {
		t.Error("ECEngine without curves")
	}
	if plain.Info().MaxModulusBits != wire.MaxOperand*8 {
		t.Errorf("unlimited engine reported %d bits", plain.Info().MaxModulusBits)
	}
}

func TestModExp(t *testing.T) {
	e := openClient(t, startDaemon(t, nil).config())
	r := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	for _, bits := range []int{2, 17, 64, 511, 512, 1024, 2048, 4096} {
		n := randop.Odd(r, bits)
		for _, public := range []bool{false, true} {
			base := new(big.Int).Mod(randop.Bits(r, bits), n)
			exp := randop.Bits(r, bits)
			m, err := e.NewModulus(n.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := engine.ExpMode(ctx, e, m, base.Bytes(), exp.Bytes(), public)
			if err != nil {
				t.Fatalf("%d bits: %v", bits, err)
			}
			want := pad(new(big.Int).Exp(base, exp, n), (bits+7)/8)
			if !bytes.Equal(got, want) {
				t.Fatalf("%d bits: got %x want %x", bits, got, want)
			}
		}
	}
}

func TestRefusals(t *testing.T) {
	e := openClient(t, startDaemon(t, bigengine.New(1024)).config())
	ctx := context.Background()
	for _, n := range [][]byte{nil, {0}, {1}, {0, 1}, {4}, {0xFF, 0xFE}} {
		if _, err := e.NewModulus(n); !errors.Is(err, engine.ErrInvalidModulus) {
			t.Errorf("NewModulus(%x): %v", n, err)
		}
	}
	if _, err := e.NewModulus(pad(randop.Odd(rand.New(rand.NewPCG(3, 3)), 1025), 129)); !errors.Is(err, engine.ErrOperandTooLarge) {
		t.Errorf("1025-bit modulus: %v", err)
	}
	m, _ := e.NewModulus([]byte{0x0B})
	if _, _, err := e.Exp(ctx, m, []byte{11}, []byte{3}); err == nil || isDevice(err) {
		t.Errorf("base = modulus: %v", err)
	}
	if _, _, err := e.Exp(ctx, m, []byte{2}, bytes.Repeat([]byte{1}, wire.MaxOperand+1)); !errors.Is(err, engine.ErrOperandTooLarge) {
		t.Errorf("long exponent: %v", err)
	}
	ec := enginetest.As[engine.ECEngine](t, e)
	if _, _, _, err := ec.ScalarBaseMult(ctx, "P-999", []byte{1}); !errors.Is(err, engine.ErrUnsupported) {
		t.Errorf("unknown curve: %v", err)
	}
	if _, _, _, err := ec.ScalarMult(ctx, "P-256", []byte{1}, []byte{1}, []byte{2}); err == nil || isDevice(err) {
		t.Errorf("point off the curve: %v", err)
	}
	if h := healthOf(t, e); h.State != device.StateClosed || h.ConsecutiveFailures != 0 {
		t.Errorf("refused requests counted against the device: %+v", h)
	}
}

// rsaFixture is a small RSA key in CRT form.
func rsaFixture(t *testing.T, r *rand.Rand, bits int) (engine.CRTKey, *big.Int, *big.Int) {
	t.Helper()
	one := big.NewInt(1)
	nextPrime := func(v *big.Int) *big.Int {
		v.SetBit(v, 0, 1)
		for !v.ProbablyPrime(20) {
			v.Add(v, big.NewInt(2))
		}
		return v
	}
	for {
		p := randop.Bits(r, bits/2)
		p.SetBit(p, bits/2-1, 1).SetBit(p, bits/2-2, 1)
		q := randop.Bits(r, bits/2)
		q.SetBit(q, bits/2-1, 1).SetBit(q, bits/2-2, 1)
		p, q = nextPrime(p), nextPrime(q)
		n := new(big.Int).Mul(p, q)
		phi := new(big.Int).Mul(new(big.Int).Sub(p, one), new(big.Int).Sub(q, one))
		d := new(big.Int).ModInverse(big.NewInt(65537), phi)
		if d == nil || p.Cmp(q) == 0 {
			continue
		}
		return engine.CRTKey{
			P: p.Bytes(), Q: q.Bytes(),
			DP: new(big.Int).Mod(d, new(big.Int).Sub(p, one)).Bytes(), DQ: new(big.Int).Mod(d, new(big.Int).Sub(q, one)).Bytes(),
			QInv: new(big.Int).ModInverse(q, p).Bytes(),
		}, n, d
	}
}

func TestModExpCRT(t *testing.T) {
	e := enginetest.As[engine.CRTEngine](t, openClient(t, startDaemon(t, nil).config()))
	r := rand.New(rand.NewPCG(5, 6))
	for _, bits := range []int{256, 1024, 2048} {
		k, n, d := rsaFixture(t, r, bits)
		c := new(big.Int).Mod(randop.Bits(r, bits), n)
		got, _, err := e.ExpCRT(context.Background(), &k, c.Bytes())
		if err != nil {
			t.Fatalf("%d: %v", bits, err)
		}
		if want := pad(new(big.Int).Exp(c, d, n), (n.BitLen()+7)/8); !bytes.Equal(got, want) {
			t.Fatalf("%d bits: wrong CRT result", bits)
		}
	}
}

func TestScalarMult(t *testing.T) {
	e := enginetest.As[engine.ECEngine](t, openClient(t, startDaemon(t, nil).config()))
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range []elliptic.Curve{elliptic.P256(), elliptic.P384(), elliptic.P521()} {
		name := c.Params().Name
		size := (c.Params().BitSize + 7) / 8
		k := new(big.Int).Mod(randop.Bits(r, c.Params().BitSize), c.Params().N).Bytes()
		x, y, _, err := e.ScalarBaseMult(ctx, name, k)
		if err != nil {
			t.Fatalf("%s base: %v", name, err)
		}
		wx, wy := c.ScalarBaseMult(k)
		if !bytes.Equal(x, pad(wx, size)) || !bytes.Equal(y, pad(wy, size)) {
			t.Fatalf("%s: k·G differs", name)
		}
		k2 := new(big.Int).Mod(randop.Bits(r, c.Params().BitSize), c.Params().N).Bytes()
		x2, y2, _, err := e.ScalarMult(ctx, name, k2, x, y)
		if err != nil {
			t.Fatalf("%s point: %v", name, err)
		}
		vx, vy := c.ScalarMult(wx, wy, k2)
		if !bytes.Equal(x2, pad(vx, size)) || !bytes.Equal(y2, pad(vy, size)) {
			t.Fatalf("%s: k·P differs", name)
		}
	}
}

// TestConcurrent runs many requests at once on one connection, each
// checked against math/big.
func TestConcurrent(t *testing.T) {
	e := openClient(t, startDaemon(t, sleepyEngine{bigengine.New(0)}).config())
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 9))
			n := randop.Odd(r, 256+8*i)
			base := new(big.Int).Mod(randop.Bits(r, 200), n)
			exp := new(big.Int).Lsh(randop.Bits(r, 64), 8)
			exp.Or(exp, big.NewInt(int64(63-i)%20)) // the sleepy engine waits this many ms
			m, err := e.NewModulus(n.Bytes())
			if err != nil {
				errs <- err
				return
			}
			got, _, err := e.ExpVarTime(context.Background(), m, base.Bytes(), exp.Bytes())
			if err != nil {
				errs <- err
				return
			}
			if !bytes.Equal(got, pad(new(big.Int).Exp(base, exp, n), (n.BitLen()+7)/8)) {
				errs <- errors.New("wrong result")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if h := healthOf(t, e); h.Reconnects != 0 {
		t.Errorf("reconnected %d times", h.Reconnects)
	}
}

// TestOutOfOrder shows, on the wire, that a fast answer overtakes a slow one.
// TestOutOfOrder: answers come as their requests finish, not in the order
// sent. Requests 1 and 3 are held by the engine until the test releases
// them, 3 before 1, while 2 runs at once, so the order is [2 3 1] whatever
// the machine's load.
func TestOutOfOrder(t *testing.T) {
	eng := heldEngine{Engine: bigengine.New(0), gates: map[byte]chan struct{}{200: make(chan struct{}), 100: make(chan struct{})}}
	d := startHeld(t, eng)
	c := wiretest.Dial(t, d.path)
	req := func(id uint32, e byte) *wire.Frame {
		return wire.NewRequest(wire.OpModExp, id).Add(wire.TagMod, []byte{0x0B}).Add(wire.TagBase, []byte{2}).Add(wire.TagExp, []byte{e})
	}
	c.Send(req(1, 200))
	c.Send(req(2, 1))
	// 2^e mod 11 for e = 200, 1, 100.
	want := map[uint32]byte{1: byte(new(big.Int).Exp(big.NewInt(2), big.NewInt(200), big.NewInt(11)).Int64()), 2: 2, 3: 1}
	recv := func(id uint32) {
		t.Helper()
		f := c.Recv()
		if f.Status != wire.StatusOK {
			t.Fatalf("status %v", f.Status)
		}
		if f.ID != id {
			t.Fatalf("answer to %d came before the one to %d", f.ID, id)
		}
		if r := mustGet(t, f, wire.TagResult); len(r) != 1 || r[0] != want[f.ID] {
			t.Fatalf("id %d: result %x want %x", f.ID, r, want[f.ID])
		}
	}
	recv(2) // 1 is held
	// Sent only now: with 1 held on one of the two cores, 3 must not take
	// the other before 2.
	c.Send(req(3, 100))
	close(eng.gates[100])
	recv(3) // 1 still held
	close(eng.gates[200])
	recv(1)
}

// heldEngine is the big engine whose exponentiations with an exponent
// ending in a byte that has a gate wait until that gate is closed (or
// their context ends): tests order answers by releasing them. When
// entered is not nil, such a request sends its byte there as it reaches
// its gate: the device has it in hand.
type heldEngine struct {
	*bigengine.Engine
	gates   map[byte]chan struct{}
	entered chan byte
}

// newHeldEngine is a heldEngine with a gate for each of bytes and an
// entered channel.
func newHeldEngine(bytes ...byte) heldEngine {
	e := heldEngine{Engine: bigengine.New(0), gates: map[byte]chan struct{}{}, entered: make(chan byte, 16)}
	for _, b := range bytes {
		e.gates[b] = make(chan struct{})
	}
	return e
}

// startHeld starts a daemon on e (no calibration: its exponentiations
// could end in a held byte); the test's end opens the gates still closed,
// before the daemon closes.
func startHeld(t *testing.T, e heldEngine) *daemon {
	t.Helper()
	d := startDaemonCfg(t, filepath.Join(t.TempDir(), "run", "mxp.sock"), server.Config{Engine: e, Cost: &wire.CostModel{}})
	t.Cleanup(func() {
		for _, g := range e.gates {
			select {
			case <-g:
			default:
				close(g)
			}
		}
	})
	return d
}

// waitEntered returns once a request held at b's gate is in the device's
// hands (others' arrivals are skipped).
func (e heldEngine) waitEntered(t *testing.T, b byte) {
	t.Helper()
	for got := range e.entered {
		if got == b {
			return
		}
	}
}

func (e heldEngine) expMode(ctx context.Context, m engine.Modulus, base, exp []byte, public bool) ([]byte, engine.Cost, error) {
	if len(exp) > 0 && e.gates[exp[len(exp)-1]] != nil {
		g := e.gates[exp[len(exp)-1]]
		if e.entered != nil {
			select {
			case e.entered <- exp[len(exp)-1]:
			case <-ctx.Done():
				return nil, engine.Cost{}, ctx.Err()
			}
		}
		select {
		case <-g:
		case <-ctx.Done():
			return nil, engine.Cost{}, ctx.Err()
		}
	}
	return engine.ExpMode(ctx, e.Engine, m, base, exp, public)
}

// Exp is [engine.Engine]'s: the exponent is secret.
func (e heldEngine) Exp(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return e.expMode(ctx, m, base, exp, false)
}

// ExpVarTime is [engine.Engine]'s: the exponent is public.
func (e heldEngine) ExpVarTime(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return e.expMode(ctx, m, base, exp, true)
}

// TestDeadlineAndCancel: a request the device holds (it never answers
// before the test's end) ends with the caller's deadline, its cancel, the
// default deadline, the device's own DEADLINE_MS, or a CANCEL frame; each
// interruption comes once the request is in the device's hands.
func TestDeadlineAndCancel(t *testing.T) {
	// Each part holds its own byte: a late arrival of an earlier part's
	// request is not taken for the one a part waits for.
	eng := newHeldEngine(251, 252, 253, 254, 249)
	d := startHeld(t, eng)
	e := openClient(t, d.config())
	m, _ := e.NewModulus([]byte{0x0B})

	// A deadline before the answer: the client gives up when it passes.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	// The deadline's error (there is no answer) shows the client gave up.
	_, _, err := e.Exp(ctx, m, []byte{2}, []byte{251})
	cancel()
	if !isDevice(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: %v", err)
	}

	// A cancelled context is the caller's choice: not a device error.
	ctx, cancel = context.WithCancel(context.Background())
	go func() {
		eng.waitEntered(t, 252)
		cancel()
	}()
	_, _, err = e.Exp(ctx, m, []byte{2}, []byte{252})
	if !errors.Is(err, context.Canceled) || isDevice(err) {
		t.Fatalf("cancel: %v", err)
	}

	// The default deadline applies when the context has none.
	cfg := d.config()
	cfg.Timeout = 40 * time.Millisecond
	short := openClient(t, cfg)
	m2, _ := short.NewModulus([]byte{0x0B})
	if _, _, err := short.Exp(context.Background(), m2, []byte{2}, []byte{253}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("default deadline: %v", err)
	}

	// The device notices deadlines too: DEADLINE_MS before the answer.
	c := wiretest.Dial(t, d.path)
	c.Send(wire.NewRequest(wire.OpModExp, 9).Add(wire.TagMod, []byte{0x0B}).Add(wire.TagBase, []byte{2}).
		Add(wire.TagExp, []byte{254}).AddU32(wire.TagDeadlineMS, 20))
	if f := c.Recv(); f.ID != 9 || f.Status != wire.StatusTimeout {
		t.Fatalf("device deadline: %v %v", f.ID, f.Status)
	}
	// CANCEL ends a request in flight with CANCELLED, and is not answered.
	c.Send(wire.NewRequest(wire.OpModExp, 10).Add(wire.TagMod, []byte{0x0B}).Add(wire.TagBase, []byte{2}).Add(wire.TagExp, []byte{249}))
	eng.waitEntered(t, 249)
	c.Send(wire.NewRequest(wire.OpCancel, 11).AddU32(wire.TagTargetID, 10))
	if f := c.Recv(); f.ID != 10 || f.Status != wire.StatusCancelled {
		t.Fatalf("cancel: %v %v", f.ID, f.Status)
	}
	c.Ping(12)
}

func TestSelfTestCatchesWideFaults(t *testing.T) {
	e := openClient(t, startDaemon(t, nil).config())
	if err := e.SelfTest(context.Background()); err != nil {
		t.Fatalf("healthy device: %v", err)
	}
	bad := openClient(t, startDaemon(t, nil, "zero-above:1024").config())
	if err := bad.SelfTest(context.Background()); !isDevice(err) {
		t.Fatalf("zero-above:1024 passed the self-test: %v", err)
	}
}

// TestLeaderHandOff: the caller reading the connection (the first one
// waiting) gives up — cancelled, or past its deadline — while others still
// wait; they must get their answers (one of them takes over the reading),
// as the device sends them, on the same connection, and a later call must
// not trip over the interrupted read.
//
// The order is forced, not hoped for: the device holds every answer until
// the test releases it; the await hook says who reads and who waits. The
// reader gives up only once the other two wait, the second answer is
// released only once the first is delivered, and the deadline that
// passes is one the test ends (a real one passes on a timer, maybe before
// the others wait on a loaded machine).
func TestLeaderHandOff(t *testing.T) {
	want := func(x byte) byte { // 2^x mod 11
		return byte(new(big.Int).Exp(big.NewInt(2), big.NewInt(int64(x)), big.NewInt(11)).Int64())
	}
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		is   error
	}{
		{"cancel", func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, context.Canceled},
		{"deadline", func() (context.Context, context.CancelFunc) {
			ctx := &endedDeadline{Context: context.Background(), done: make(chan struct{})}
			return ctx, ctx.end
		}, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := newHeldEngine(250, 120, 20)
			cfg := startHeld(t, eng).config()
			cfg.Conns = -1                 // every caller on the one multiplexed connection
			cfg.Timeout = 10 * time.Minute // a guard against a hang: the test releases every answer
			e := openClient(t, cfg)
			m, _ := e.NewModulus([]byte{0x0B})
			before := healthOf(t, e).Reconnects

			type turn struct {
				caller byte
				leader bool
			}
			turns := make(chan turn, 64)
			t.Cleanup(device.SetAwaitHook(func(ctx context.Context, leader bool) {
				if x, ok := ctx.Value(callerKey{}).(byte); ok {
					turns <- turn{x, leader}
				}
			}))
			type result struct {
				out []byte
				err error
			}
			res := map[byte]chan result{250: make(chan result, 1), 120: make(chan result, 1), 20: make(chan result, 1)}
			run := func(ctx context.Context, x byte) {
				out, _, err := e.Exp(context.WithValue(ctx, callerKey{}, x), m, []byte{2}, []byte{x})
				res[x] <- result{out, err}
			}
			ctx, cancel := tc.ctx()
			defer cancel()
			go run(ctx, 250) // alone: it becomes the reader
			if tu := <-turns; tu != (turn{250, true}) {
				t.Fatalf("first turn %+v, want 250 reading", tu)
			}
			go run(context.Background(), 120)
			go run(context.Background(), 20)
			for range 2 {
				if tu := <-turns; tu.leader || tu.caller == 250 {
					t.Fatalf("turn %+v while 250 reads, want 120 and 20 waiting", tu)
				}
			}
			cancel() // the reader gives up
			if r := <-res[250]; !errors.Is(r.err, tc.is) {
				t.Fatalf("reader: err %v, want %v", r.err, tc.is)
			}
			// One of the others takes over the reading (whatever turns
			// they take, no answer comes without a reader).
			for tu := <-turns; !tu.leader; tu = <-turns {
			}
			// Each answer is delivered as it comes: 20's before 120's is
			// even released.
			for _, x := range []byte{20, 120} {
				close(eng.gates[x])
				r := <-res[x]
				if r.err != nil || len(r.out) != 1 || r.out[0] != want(x) {
					t.Fatalf("exp %d: %x, %v", x, r.out, r.err)
				}
			}
			// The next call reads past the interrupted reader's deadline.
			if out, _, err := e.Exp(context.Background(), m, []byte{2}, []byte{5}); err != nil || out[0] != want(5) {
				t.Fatalf("after: %x, %v", out, err)
			}
			if n := healthOf(t, e).Reconnects; n != before {
				t.Errorf("%d reconnects: the connection was dropped", n-before)
			}
		})
	}
}

// callerKey tags a caller's context with its exponent for the await hook.
type callerKey struct{}

// endedDeadline is a context whose deadline passes when the test calls
// end: Done closes and Err is context.DeadlineExceeded, as a deadline's,
// at a moment of the test's choosing. The deadline it reports is far off,
// so no timer of the client ends it first.
type endedDeadline struct {
	context.Context
	once sync.Once
	done chan struct{}
}

func (c *endedDeadline) Deadline() (time.Time, bool) { return time.Now().Add(time.Hour), true }
func (c *endedDeadline) Done() <-chan struct{}       { return c.done }
func (c *endedDeadline) end()                        { c.once.Do(func() { close(c.done) }) }

func (c *endedDeadline) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}
