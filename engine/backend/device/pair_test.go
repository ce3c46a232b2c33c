package device_test

import (
	"bytes"
	"context"
	crand "crypto/rand"
	gorsa "crypto/rsa"
	"errors"
	"io"
	"math/big"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/rsa"
	"github.com/modexp-token/modexp-token/engine/arith/randop"
	"github.com/modexp-token/modexp-token/engine/backend/device"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire/wiretest"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
	"github.com/modexp-token/modexp-token/engine/enginetest/bigengine"
	"github.com/modexp-token/modexp-token/engine/guard"
)

// expPair is the client's pair ability, asserted.
func expPair(t *testing.T, e engine.Engine) engine.PairEngine {
	t.Helper()
	pe, ok := engine.As[engine.PairEngine](e)
	if !ok {
		t.Fatalf("%T is not an engine.PairEngine", e)
	}
	return pe
}

// TestExpPair checks MODEXP_PAIR against math/big at sizes from 64 to
// 4096 bits, moduli of different lengths in one pair, and that each pair is
// one request on the wire; with a plain backing engine and with the
// software engine, which computes pairs itself on the IFMA kernel.
func TestExpPair(t *testing.T) {
	for _, backend := range []engine.Engine{bigengine.New(0), soft.New()} {
		t.Run(backend.Info().Name, func(t *testing.T) { testExpPair(t, backend) })
	}
}

func testExpPair(t *testing.T, backend engine.Engine) {
	d := startDaemon(t, backend)
	e := openClient(t, d.config())
	pe := expPair(t, e)
	r := randFor(31)
	pairs := 0
	for _, bits := range [][2]int{{64, 64}, {512, 520}, {1024, 1024}, {2048, 1536}, {4096, 8}} {
		for range 3 {
			var ops [2]engine.ExpOp
			var want [2][]byte
			for i, b := range bits {
				n := randop.Odd(r, b)
				base := new(big.Int).Mod(randop.Bits(r, b+8), n)
				exp := randop.Bits(r, b+64) // exponent-blinded size
				m, err := e.NewModulus(n.Bytes())
				if err != nil {
					t.Fatal(err)
				}
				ops[i] = engine.ExpOp{M: m, Base: base.Bytes(), Exp: exp.Bytes()}
				want[i] = pad(new(big.Int).Exp(base, exp, n), (n.BitLen()+7)/8)
			}
			ra, rb, _, err := pe.ExpPair(context.Background(), ops[0], ops[1])
			if err != nil {
				t.Fatalf("%v: %v", bits, err)
			}
			if !bytes.Equal(ra, want[0]) || !bytes.Equal(rb, want[1]) {
				t.Fatalf("%v: wrong results", bits)
			}
			pairs++
		}
	}
	ops := d.srv.Stats().Ops
	if got := ops["MODEXP_PAIR"].Requests; got != uint64(pairs) {
		t.Errorf("MODEXP_PAIR requests: %d, want %d", got, pairs)
	}
	if got := ops["MODEXP"].Requests; got != 0 {
		t.Errorf("MODEXP requests: %d, want 0 (every pair is one request)", got)
	}
}

// TestExpPairRefusals: the daemon checks both exponentiations of a pair and
// answers with the status a MODEXP would get; the connection lives on.
func TestExpPairRefusals(t *testing.T) {
	d := startDaemon(t, bigengine.New(1024))
	c := wiretest.Dial(t, d.path)
	pair := func(id uint32) *wire.Frame {
		return wire.NewRequest(wire.OpModExpPair, id).
			Add(wire.TagMod, []byte{0x0B}).Add(wire.TagBase, []byte{2}).Add(wire.TagExp, []byte{3}).
			Add(wire.TagMod2, []byte{0x0D}).Add(wire.TagBase2, []byte{3}).Add(wire.TagExp2, []byte{5})
	}
	without := func(f *wire.Frame, t wire.Tag) *wire.Frame {
		out := *f
		out.Fields = nil
		for _, fl := range f.Fields {
			if fl.Tag != t {
				out.Fields = append(out.Fields, fl)
			}
		}
		return &out
	}
	with := func(f *wire.Frame, t wire.Tag, v []byte) *wire.Frame { return without(f, t).Add(t, v) }
	cases := []struct {
		name string
		f    *wire.Frame
		st   wire.Status
	}{
		{"missing MOD2", without(pair(1), wire.TagMod2), wire.StatusBadArgument},
		{"missing EXP2", without(pair(2), wire.TagExp2), wire.StatusBadArgument},
		{"missing BASE", without(pair(3), wire.TagBase), wire.StatusBadArgument},
		{"even MOD2", with(pair(4), wire.TagMod2, []byte{0x0C}), wire.StatusInvalidModulus},
		{"BASE2 = MOD2", with(pair(5), wire.TagBase2, []byte{0x0D}), wire.StatusBadArgument},
		{"MOD2 above the engine", with(pair(6), wire.TagMod2, bytes.Repeat([]byte{0xFF}, 129)), wire.StatusTooLarge},
		{"EXP2 above the protocol", with(pair(7), wire.TagExp2, make([]byte, wire.MaxOperand+1)), wire.StatusTooLarge},
		{"bad mode", pair(8).AddU8(wire.TagMode, 0x40), wire.StatusUnsupported},
	}
	for _, cs := range cases {
		c.Send(cs.f)
		f := c.Recv()
		if f.ID != cs.f.ID || f.Status != cs.st {
			t.Errorf("%s: got id %d status %v (%q), want %v", cs.name, f.ID, f.Status, f.Message(), cs.st)
		}
	}
	c.Send(pair(9))
	f := c.Recv()
	if f.Status != wire.StatusOK || !bytes.Equal(mustGet(t, f, wire.TagResult), []byte{8}) || !bytes.Equal(mustGet(t, f, wire.TagResult2), []byte{9}) {
		t.Fatalf("valid pair: %v %q %+v", f.Status, f.Message(), f.Fields) // 2^3 mod 11 = 8, 3^5 mod 13 = 9
	}
	c.Ping(10)
}

// TestExpPairCatchesFaults: with both results of a pair corrupted above
// 1024 bits (zero-above) or single bits flipped in either result (bitflip),
// RSA signatures through the device are never wrong: the check before
// release catches every fault, and the fallback answers.
func TestExpPairCatchesFaults(t *testing.T) {
	k := rsaKeyFixture(t, 2048)
	for _, fault := range []string{"zero-above:512", "bitflip:0.5"} {
		t.Run(fault, func(t *testing.T) {
			d := startDaemon(t, bigengine.NewPlain(0), fault)
			e := openClient(t, d.config())
			g := guard.New(e, guard.Options{Software: bigengine.New(0), Fallback: true, ExponentBlinding: true})
			key, err := g.RSAKey(k) // the known-answer test: one private operation
			if err != nil {
				t.Fatal(err)
			}
			in := make([]byte, 256)
			in[5] = 7
			want := new(big.Int).Exp(new(big.Int).SetBytes(in), k.D, k.N).FillBytes(make([]byte, 256))
			for range 40 {
				got, _, err := key.Private(context.Background(), in)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("private: %v (right: %v)", err, bytes.Equal(got, want))
				}
			}
			injected := d.srv.Stats().FaultsInjected
			if faults := g.Status().Faults; injected == 0 || faults != injected {
				t.Errorf("faults injected %d, caught %d", injected, faults)
			}
			if got := d.srv.Stats().Ops["MODEXP_PAIR"].Requests; got < 40 {
				t.Errorf("MODEXP_PAIR requests: %d, want the halves sent as pairs", got)
			}
		})
	}
}

// rsaKeyFixture is a fresh RSA key of the given size.
func rsaKeyFixture(t *testing.T, bits int) *rsa.PrivateKey {
	t.Helper()
	k, err := gorsa.GenerateKey(crand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	return &rsa.PrivateKey{N: k.N, E: k.E, D: k.D, P: k.Primes[0], Q: k.Primes[1]}
}

// oldDevice is a minimal MXP/1 device from before MODEXP_PAIR: its INFO
// has no OPS field and it serves MODEXP only, counting requests.
type oldDevice struct {
	path    string
	modexps atomic.Int64
	others  atomic.Int64
}

func startOldDevice(t *testing.T) *oldDevice {
	t.Helper()
	d := &oldDevice{path: filepath.Join(t.TempDir(), "old.sock")}
	l, err := net.Listen("unix", d.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			go d.serve(nc)
		}
	}()
	return d
}

func (d *oldDevice) serve(nc net.Conn) {
	defer nc.Close()
	var mu sync.Mutex
	for {
		f, err := wire.ReadFrame(nc, wire.MaxFrame)
		if err != nil {
			return
		}
		r := wire.NewResponse(f, wire.StatusOK)
		switch f.Op {
		case wire.OpInfo:
			r.AddU8(wire.TagProtoMin, 1).AddU8(wire.TagProtoMax, 1).AddU32(wire.TagMaxModBits, 4096).
				AddU32(wire.TagCores, 2).AddU32(wire.TagMaxInflight, 16).AddString(wire.TagModel, "old")
		case wire.OpModExp:
			d.modexps.Add(1)
			m, _ := f.Get(wire.TagMod)
			b, _ := f.Get(wire.TagBase)
			x, _ := f.Get(wire.TagExp)
			n := new(big.Int).SetBytes(m)
			v := new(big.Int).Exp(new(big.Int).SetBytes(b), new(big.Int).SetBytes(x), n)
			r.Add(wire.TagResult, v.FillBytes(make([]byte, len(bytes.TrimLeft(m, "\x00")))))
		default:
			d.others.Add(1)
			r.Status = wire.StatusUnknownOp
		}
		mu.Lock()
		err = wire.WriteFrame(nc, r)
		mu.Unlock()
		if err != nil && !errors.Is(err, io.EOF) {
			return
		}
	}
}

// TestExpPairOldDevice: a device whose INFO does not list MODEXP_PAIR gets
// a pair as two MODEXP requests, and RSA through it still works.
func TestExpPairOldDevice(t *testing.T) {
	d := startOldDevice(t)
	e := openClient(t, device.Config{Network: "unix", Address: d.path, Timeout: time.Minute}) // a hang guard
	k := rsaKeyFixture(t, 1024)
	key, err := rsa.NewKey(e, k, rsa.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := []byte{1, 2, 3}
	want := new(big.Int).Exp(new(big.Int).SetBytes(in), k.D, k.N).FillBytes(make([]byte, 128))
	for range 5 {
		got, _, err := key.Private(context.Background(), in)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("private: %v", err)
		}
	}
	if got := d.modexps.Load(); got != 10 {
		t.Errorf("MODEXP requests %d, want 10 (two per signature)", got)
	}
	if got := d.others.Load(); got != 0 {
		t.Errorf("%d requests the old device does not know", got)
	}
}

// TestConnectionPool: concurrent callers each get a solo connection of
// their own up to Conns (their requests marked SOLO, served by the
// daemon's reading thread), and share the one multiplexed connection
// beyond it (which also carried INFO); a lone caller reuses one.
func TestConnectionPool(t *testing.T) {
	for _, tc := range []struct {
		conns, callers int
		wantConns      uint64
		wantInline     bool
	}{{1, 4, 2, true}, {3, 3, 4, true}, {2, 6, 3, true}, {4, 1, 2, true}, {-1, 3, 1, false}} {
		d := startDaemon(t, sleepyEngine{bigengine.New(0)})
		cfg := d.config()
		cfg.Conns = tc.conns
		e := openClient(t, cfg)
		m, _ := e.NewModulus([]byte{0x0B})
		var wg sync.WaitGroup
		var bad atomic.Int64
		for range tc.callers {
			wg.Go(func() {
				for range 3 {
					out, _, err := e.Exp(context.Background(), m, []byte{2}, []byte{1, 30}) // 30 ms each
					if err != nil || !bytes.Equal(out, []byte{new(big.Int).Exp(big.NewInt(2), big.NewInt(286), big.NewInt(11)).Bytes()[0]}) {
						bad.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if bad.Load() != 0 {
			t.Errorf("conns=%d callers=%d: %d wrong answers", tc.conns, tc.callers, bad.Load())
		}
		snap := d.srv.Stats()
		if snap.ConnectionsTotal != tc.wantConns {
			t.Errorf("conns=%d callers=%d: %d connections, want %d", tc.conns, tc.callers, snap.ConnectionsTotal, tc.wantConns)
		}
		if (snap.ServedInline > 0) != tc.wantInline {
			t.Errorf("conns=%d callers=%d: %d requests served inline", tc.conns, tc.callers, snap.ServedInline)
		}
	}
}

// TestSoloNotBehind: a multiplexing client that sends SOLO and then breaks
// its promise only delays its own second request; other connections are
// served meanwhile (while the first request is held), and every answer comes.
func TestSoloNotBehind(t *testing.T) {
	eng := newGatedEngine()
	d := startDaemon(t, eng)
	a, b := wiretest.Dial(t, d.path), wiretest.Dial(t, d.path)
	exp := func(id uint32, ms byte, solo bool) *wire.Frame {
		f := wire.NewRequest(wire.OpModExp, id).Add(wire.TagMod, []byte{0x0B}).Add(wire.TagBase, []byte{2}).Add(wire.TagExp, []byte{ms})
		if solo {
			f.AddU8(wire.TagSolo, 1)
		}
		return f
	}
	a.Send(exp(1, 255, true)) // served by a's reader, held until the gate opens
	a.Send(exp(2, 1, false))  // read only after it
	b.Send(exp(3, 10, true))  // another connection: not held up
	if f := b.Recv(); f.ID != 3 || f.Status != wire.StatusOK {
		t.Fatalf("other connection: id %d %v", f.ID, f.Status)
	}
	close(eng.gate) // b was answered while a's first request was held
	for _, want := range []uint32{1, 2} {
		if f := a.Recv(); f.ID != want || f.Status != wire.StatusOK {
			t.Fatalf("solo connection: id %d %v, want %d", f.ID, f.Status, want)
		}
	}
	if d.srv.Stats().ServedInline != 2 {
		t.Errorf("served inline: %d, want 2", d.srv.Stats().ServedInline)
	}
}

func TestConnsAndWaitSpec(t *testing.T) {
	cfg, err := device.ParseSpec("unix:/x.sock,conns=4,wait=3ms")
	if err != nil || cfg.Conns != 4 || cfg.ReadWait != 3*time.Millisecond {
		t.Fatalf("conns=4,wait=3ms: %+v, %v", cfg, err)
	}
	if cfg, err := device.ParseSpec("unix:/x.sock,wait=0"); err != nil || cfg.ReadWait >= 0 {
		t.Fatalf("wait=0 (off): %+v, %v", cfg, err)
	}
	if cfg, err := device.ParseSpec("unix:/x.sock,conns=0"); err != nil || cfg.Conns >= 0 {
		t.Fatalf("conns=0 (all multiplexed): %+v, %v", cfg, err)
	}
	for _, bad := range []string{"unix:/x.sock,conns=-1", "unix:/x.sock,conns=65", "unix:/x.sock,conns=x",
		"unix:/x.sock,wait=-1ms", "unix:/x.sock,wait=2s", "unix:/x.sock,wait=soon"} {
		if _, err := device.ParseSpec(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestReadWaitOff: with the kernel wait off, requests still work (they wait
// on the netpoller only).
func TestReadWaitOff(t *testing.T) {
	d := startDaemon(t, bigengine.New(0))
	cfg := d.config()
	cfg.ReadWait = -1
	e := openClient(t, cfg)
	m, _ := e.NewModulus([]byte{0x0B})
	for x := range byte(20) {
		out, _, err := e.Exp(context.Background(), m, []byte{2}, []byte{x})
		if err != nil || out[0] != byte(new(big.Int).Exp(big.NewInt(2), big.NewInt(int64(x)), big.NewInt(11)).Int64()) {
			t.Fatalf("2^%d mod 11: %x, %v", x, out, err)
		}
	}
}

// TestSoloCancelNotBehind: a caller that gives up on a SOLO request (which
// the daemon may still be computing on that connection's reading thread)
// closes that connection, so the next request does not wait behind the
// abandoned one; giving up is not a lost connection.
func TestSoloCancelNotBehind(t *testing.T) {
	eng := newGatedEngine()
	defer close(eng.gate)
	d := startDaemon(t, eng)
	cfg := d.config()
	cfg.Conns = 1
	e := openClient(t, cfg)
	m, _ := e.NewModulus([]byte{0x0B})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, _, err := e.Exp(ctx, m, []byte{2}, []byte{255}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow request: %v", err)
	}
	// The abandoned request stays held at the gate until the test ends: an
	// answer at all shows the next one did not wait behind it.
	out, _, err := e.Exp(context.Background(), m, []byte{2}, []byte{1})
	if err != nil || !bytes.Equal(out, []byte{2}) {
		t.Fatalf("next request: %x, %v", out, err)
	}
	if h := healthOf(t, e); h.Reconnects != 0 {
		t.Errorf("reconnects %d after a caller gave up", h.Reconnects)
	}
}
