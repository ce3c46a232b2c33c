// Package device is the engine that sends the arithmetic to a ModExp device
// (the daemon cmd/modexpd, or hardware speaking the same protocol) over
// MXP/1, the wire protocol of package
// [github.com/modexp-token/modexp-token/engine/backend/device/wire] (specified in
// docs/PROTOCOL.md).
//
// # Specs
//
// The engine is registered as kind "device":
//
//	device:unix:/run/modexpd/modexpd.sock[,timeout=10s][,conns=N][,wait=2ms][,peeruid=N]
//	device:tcp:127.0.0.1:7461,ca=server.crt,cert=client.crt,key=client.key[,timeout=10s]
//
// A unix socket is trusted only if its path cannot be taken by another user
// and its listener runs as the expected uid (SO_PEERCRED; root or our own
// by default, peeruid=N to name the daemon's account), checked before
// anything is sent (peer.go); the daemon checks its peers' uids. TCP is
// TLS 1.3 with pinned certificates both ways: ca names the file of server
// certificates accepted (made by `modexpd keygen`), cert and key are the
// client's own (whose certificate the daemon pins). timeout is the deadline
// of a request whose context has none (default 10 s); floor is the
// shortest deadline the device's cost model gives a request (default 1 s);
// conns is the number of connections kept for one request at a time
// (default the device's cores, at least 2; 0: every request multiplexed on
// one connection); wait is how long a caller waits for its answer in the kernel
// before parking on the Go netpoller (unix sockets; default 2 ms, 0: off; at
// most GOMAXPROCS − 1 callers at once, at least one).
// Paths may not contain commas.
//
// # Behaviour
//
// Requests go over a few connections (Config.Conns; default the device's
// cores, at least 2): a request takes a connection no other request is
// using, so concurrent callers each read their own answers, and beyond
// Conns requests are multiplexed, many in flight on one connection,
// answered in any order. An RSA private operation's two CRT halves travel
// as one MODEXP_PAIR request when the device offers it (one round trip). Each request carries its deadline (from the
// context, or the default); a cancelled or expired context sends CANCEL. A
// lost connection is re-dialled on the next request, with exponential
// back-off between failed dials, and a request lost with its connection is
// retried once (the operations are pure functions). Consecutive device
// failures (timeouts, lost connections, device faults, malformed or
// out-of-range answers) open a circuit breaker: requests then fail at once
// with an error wrapping [engine.ErrDevice] until a probe succeeds.
//
// Results are range-checked (length, below the modulus or field prime, no
// all-zero point) but otherwise trusted as they come: a device that returns
// a wrong yet well-formed number is caught by engine/alg/rsa and engine/alg/ecdsa,
// which verify every result before release. SelfTest adds client-side
// known-answer tests at several sizes, which catch a device that fails only
// above some width (the Cryptech all-zero case).
//
// The engine has the abilities engine.CRTEngine and engine.ECEngine
// (engine.As, through its Has) only when the device's INFO says it can
// (native CRT; a non-empty curve list). It never
// writes to stdout or stderr: it logs to Config.Logger only.
package device

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/device/rawsock"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire"
)

func init() { engine.Register("device", Open) }

// Defaults for Config.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultDialTimeout      = 2 * time.Second
	DefaultFailureThreshold = 5
	DefaultCooldown         = time.Second
	MaxCooldown             = 30 * time.Second
	// DefaultDeadlineFloor is the shortest deadline the cost model gives a
	// request (Config.DeadlineFloor).
	DefaultDeadlineFloor = time.Second
	// MaxConns bounds Config.Conns.
	MaxConns = 64
	// DefaultReadWait is Config.ReadWait's default.
	DefaultReadWait = 2 * time.Millisecond
	// CostFactor and CostSlack make a request's deadline from the device's
	// predicted time: CostFactor × predicted × rounds + CostSlack, where
	// rounds is how many times the device's cores must turn over to serve
	// the requests this client has in flight (research/ENGINES.md §D.3).
	CostFactor = 4
	CostSlack  = 250 * time.Millisecond
	minBackoff = 50 * time.Millisecond
	// maxBackoff bounds the wait between dials that failed at once (no
	// socket, connection refused): such a dial costs the device nothing, and
	// a restarted daemon is found within this time.
	maxBackoff = time.Second
	// maxSlowBackoff bounds the wait between dials that failed slowly
	// (timeout, TLS handshake refused), which do cost the other side.
	maxSlowBackoff = 5 * time.Second
	cancelTimeout  = time.Second
)

// Config says how to reach a device.
type Config struct {
	Network string      // "unix" or "tcp"
	Address string      // socket path, or HOST:PORT
	TLS     *tls.Config // required for "tcp" (see wire.ClientTLSConfig)
	// Timeout is the deadline of requests whose context has none.
	Timeout time.Duration
	// DeadlineFloor is the shortest deadline derived from the device's
	// cost model (default DefaultDeadlineFloor); a request's deadline is
	// the earliest of its context's (or Timeout), and max(DeadlineFloor,
	// CostFactor × predicted × rounds + CostSlack) when INFO carries a cost
	// model for the operation.
	DeadlineFloor time.Duration
	DialTimeout   time.Duration
	// FailureThreshold consecutive failures open the breaker for Cooldown
	// (doubling, up to MaxCooldown, while probes fail).
	FailureThreshold int
	Cooldown         time.Duration
	// Conns is the number of solo connections (default: the device's
	// cores, at least 2; negative: none). A request takes a solo
	// connection no other request is using, and is sent SOLO: the daemon
	// may serve it on the thread that reads it. Requests beyond Conns at
	// once share one more, multiplexed connection (many in flight,
	// answered in any order).
	Conns int
	// ReadWait (unix sockets) is how long a caller whose answer is not
	// there yet waits for it in the kernel, on its own thread, before
	// parking on the Go netpoller (see engine/backend/device/rawsock): 0
	// means DefaultReadWait, a negative value not at all. The thread keeps
	// its Go P meanwhile (other goroutines may wait for one up to 5 ms);
	// an answer that takes longer is then awaited on the netpoller. At
	// most GOMAXPROCS − 1 callers (at least one) wait so at once; the
	// others park at once, leaving Ps to the callers that have yet to send.
	ReadWait time.Duration
	// PeerUID (unix sockets) is the uid the listening daemon must run as
	// (SO_PEERCRED); nil: root or this process's effective uid. The
	// socket's path is checked too (peer.go).
	PeerUID *int
	// Name is Info().Name; default "device:NETWORK:ADDRESS".
	Name   string
	Logger *slog.Logger // nil: discard
}

// ParseSpec reads the part of an engine spec after "device:".
func ParseSpec(arg string) (Config, error) {
	parts := strings.Split(arg, ",")
	network, addr, ok := strings.Cut(parts[0], ":")
	if !ok || addr == "" || (network != "unix" && network != "tcp") {
		return Config{}, fmt.Errorf("device: spec %q: want unix:/path or tcp:HOST:PORT", arg)
	}
	cfg := Config{Network: network, Address: addr, Name: "device:" + parts[0]}
	opts := map[string]string{}
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(p, "=")
		if !ok || v == "" {
			return Config{}, fmt.Errorf("device: spec %q: option %q: want key=value", arg, p)
		}
		if _, dup := opts[k]; dup {
			return Config{}, fmt.Errorf("device: spec %q: option %q twice", arg, k)
		}
		opts[k] = v
	}
	for k, v := range opts {
		switch k {
		case "timeout":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return Config{}, fmt.Errorf("device: spec %q: timeout %q", arg, v)
			}
			cfg.Timeout = d
		case "floor":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return Config{}, fmt.Errorf("device: spec %q: floor %q", arg, v)
			}
			cfg.DeadlineFloor = d
		case "wait":
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 || d > time.Second {
				return Config{}, fmt.Errorf("device: spec %q: wait %q (0 to 1s; 0 turns it off)", arg, v)
			}
			cfg.ReadWait = d
			if d == 0 {
				cfg.ReadWait = -1
			}
		case "conns":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > MaxConns {
				return Config{}, fmt.Errorf("device: spec %q: conns %q (0..%d; 0: every request multiplexed)", arg, v, MaxConns)
			}
			cfg.Conns = n
			if n == 0 {
				cfg.Conns = -1
			}
		case "peeruid":
			if network != "unix" {
				return Config{}, fmt.Errorf("device: spec %q: peeruid is for unix sockets", arg)
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 1<<31-1 {
				return Config{}, fmt.Errorf("device: spec %q: peeruid %q", arg, v)
			}
			cfg.PeerUID = &n
		case "ca", "cert", "key":
			if network != "tcp" {
				return Config{}, fmt.Errorf("device: spec %q: %s is for tcp", arg, k)
			}
		default:
			return Config{}, fmt.Errorf("device: spec %q: unknown option %q", arg, k)
		}
	}
	if network == "tcp" {
		if opts["ca"] == "" || opts["cert"] == "" || opts["key"] == "" {
			return Config{}, fmt.Errorf("device: spec %q: tcp needs ca=, cert= and key= (TLS with pinned certificates)", arg)
		}
		tc, err := wire.ClientTLSConfig(opts["cert"], opts["key"], opts["ca"])
		if err != nil {
			return Config{}, fmt.Errorf("device: spec %q: %w", arg, err)
		}
		cfg.TLS = tc
	}
	return cfg, nil
}

// Open is the registry's factory: it parses arg (see ParseSpec) and
// connects with New.
func Open(arg string) (engine.Engine, error) {
	cfg, err := ParseSpec(arg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return New(ctx, cfg)
}

// Engine is the device client. The engine.Engine returned by New is an
// *Engine, or a value embedding one that adds ExpCRT and/or ScalarMult
// according to the device's INFO.
type Engine struct {
	cfg    Config
	log    *slog.Logger
	info   engine.Info
	limits limits
	crt    bool           // the device does the whole CRT exponentiation (INFO NATIVE_CRT): Has(AbilityCRT)
	cost   wire.CostModel // from INFO; zero: unknown
	br     *breaker
	nextID atomic.Uint32
	slots  chan struct{} // the device's MAX_INFLIGHT
	// waiters are the callers whose reads may wait in the kernel now, at
	// most waitSlots (GOMAXPROCS − 1, at least 1): see readWait.
	waiters   atomic.Int64
	waitSlots int64
	pairOp    bool // INFO's OPS lists MODEXP_PAIR

	mu         sync.Mutex
	sessions   []*session // solo connections, at most maxConns
	mux        *session   // the multiplexed connection, once needed
	lost       int        // connections dropped and not yet replaced
	maxConns   int        // 0: every request on mux
	closed     bool
	connected  bool // a session was ever established
	backoff    time.Duration
	nextDial   time.Time
	reconnects uint64
	// dialFailures counts failed dials since the last success; lastDialErr
	// is the last one, returned while the back-off lasts.
	dialFailures uint64
	lastDialErr  error
}

type limits struct {
	maxModBits, maxCRTBits int
	maxFrame               int
}

// New connects to the device, reads its INFO and returns the engine.
func New(ctx context.Context, cfg Config) (engine.Engine, error) {
	if cfg.Network == "tcp" && cfg.TLS == nil {
		return nil, errors.New("device: tcp needs a TLS configuration")
	}
	if cfg.Network != "tcp" && cfg.Network != "unix" {
		return nil, fmt.Errorf("device: network %q", cfg.Network)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.DeadlineFloor <= 0 {
		cfg.DeadlineFloor = DefaultDeadlineFloor
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.FailureThreshold <= 0 {
		cfg.FailureThreshold = DefaultFailureThreshold
	}
	if cfg.Cooldown <= 0 {
		cfg.Cooldown = DefaultCooldown
	}
	if cfg.Name == "" {
		cfg.Name = "device:" + cfg.Network + ":" + cfg.Address
	}
	if cfg.ReadWait == 0 {
		cfg.ReadWait = DefaultReadWait
	}
	e := &Engine{cfg: cfg, log: cfg.Logger, br: newBreaker(cfg.FailureThreshold, cfg.Cooldown, max(MaxCooldown, cfg.Cooldown)),
		waitSlots: int64(max(1, runtime.GOMAXPROCS(0)-1))}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	e.slots = make(chan struct{}, 1) // until INFO says more
	e.maxConns = 0                   // INFO goes on the multiplexed connection
	resp, err := e.call(ctx, wire.NewRequest(wire.OpInfo, 0), 0)
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("device: %s: info: %w", cfg.Name, err)
	}
	if err := e.readInfo(resp); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

func (e *Engine) readInfo(f *wire.Frame) error {
	u := func(t wire.Tag) int {
		v, _, err := f.Uint(t)
		if err != nil || v > 1<<30 {
			return 0
		}
		return int(v)
	}
	str := func(t wire.Tag) string { b, _ := f.Get(t); return string(b) }
	if pmin, pmax := u(wire.TagProtoMin), u(wire.TagProtoMax); pmin > int(wire.Version) || (pmax != 0 && pmax < int(wire.Version)) {
		return fmt.Errorf("device: %s speaks MXP %d..%d, not %d: %w", e.cfg.Name, pmin, pmax, wire.Version, engine.ErrDevice)
	}
	var curves []string
	for _, c := range strings.Split(str(wire.TagCurves), ",") {
		if wire.LookupCurve(c) != nil {
			curves = append(curves, c)
		}
	}
	maxBits := u(wire.TagMaxModBits)
	if maxBits <= 0 || maxBits > wire.MaxOperand*8 {
		maxBits = wire.MaxOperand * 8
	}
	e.limits = limits{maxModBits: maxBits, maxCRTBits: min(u(wire.TagMaxCRTBits), maxBits), maxFrame: u(wire.TagMaxFrame)}
	e.info = engine.Info{
		Name:           e.cfg.Name,
		Model:          str(wire.TagModel),
		MaxModulusBits: maxBits,
		ConstantTime:   u(wire.TagConstantTime) == 1,
		Simulated:      u(wire.TagSimulated) == 1,
		Curves:         curves,
		Cores:          max(u(wire.TagCores), 1),
	}
	e.crt = u(wire.TagNativeCRT) == 1 && e.limits.maxCRTBits > 0
	if e.info.Model == "" {
		e.info.Model = "MXP device"
	}
	if b, ok := f.Get(wire.TagCostNS); ok {
		cm, err := wire.ParseCostModel(b)
		if err != nil {
			e.log.Warn("device cost model ignored", "name", e.cfg.Name, "err", err)
		} else {
			e.cost = cm
		}
	}
	if ops, ok := f.Get(wire.TagOps); ok {
		for i := 0; i+2 <= len(ops); i += 2 {
			if wire.Op(binary.BigEndian.Uint16(ops[i:])) == wire.OpModExpPair {
				e.pairOp = true
			}
		}
	}
	inflight := u(wire.TagMaxInflight)
	if inflight <= 0 {
		inflight = 1
	}
	e.slots = make(chan struct{}, min(inflight, 1024))
	switch e.maxConns = e.cfg.Conns; {
	case e.maxConns < 0:
		e.maxConns = 0
	case e.maxConns == 0:
		e.maxConns = min(max(2, e.info.Cores), MaxConns)
	}
	e.log.Info("device info", "name", e.cfg.Name, "model", e.info.Model, "max_bits", maxBits,
		"crt", e.crt, "curves", curves, "cores", e.info.Cores,
		"cost_fixed_ns", e.cost.FixedNS, "cost_modexp_ps", e.cost.ModExpPS, "cost_ec_ps", e.cost.ECPS)
	return nil
}

// Info describes the device, as its INFO said when the engine was made.
func (e *Engine) Info() engine.Info {
	in := e.info
	in.Curves = append([]string(nil), in.Curves...)
	return in
}

// CostModel is the device's cost model, as its INFO said (zero: none).
func (e *Engine) CostModel() wire.CostModel { return e.cost }

// Health is the client's view of the device's health.
type Health struct {
	State               State
	ConsecutiveFailures int
	LastError           error
	Trips               uint64 // times the breaker opened
	Reconnects          uint64 // connections made after the first
	// Connected is false while no connection is up (the device is
	// unreachable, or no request has needed one since the last loss).
	Connected bool
	// DialFailures counts failed dials since the last connection.
	DialFailures uint64
}

// Health reports the breaker's state and the connection counters.
func (e *Engine) Health() Health {
	e.br.mu.Lock()
	h := Health{State: e.br.state, ConsecutiveFailures: e.br.fails, LastError: e.br.lastErr, Trips: e.br.trips}
	if h.State == StateOpen && !time.Now().Before(e.br.openUntil) {
		h.State = StateHalfOpen
	}
	e.br.mu.Unlock()
	e.mu.Lock()
	h.Reconnects = e.reconnects
	h.Connected = slices.ContainsFunc(e.sessions, func(s *session) bool { return !s.dead() }) ||
		e.mux != nil && !e.mux.dead()
	h.DialFailures = e.dialFailures
	e.mu.Unlock()
	return h
}

// Close closes the connection; requests in flight fail.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	for _, s := range e.sessions {
		s.fail(errors.New("device: engine closed"))
	}
	if e.mux != nil {
		e.mux.fail(errors.New("device: engine closed"))
	}
	e.sessions, e.mux = nil, nil
	return nil
}

var errClosed = fmt.Errorf("device: engine closed: %w", engine.ErrDevice)

// session returns a connection for one request, and whether the request
// is alone on it (SOLO: the daemon may serve it on its reading thread). A
// request takes a live solo connection no other request is using, or a new
// one while fewer than maxConns are open; beyond that it goes on the one
// multiplexed connection, shared by any number of requests, never SOLO, so
// that no request ever waits behind a SOLO one. The caller releases the
// connection with users.Add(-1) when the request is done.
func (e *Engine) session(ctx context.Context) (*session, bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, false, errClosed
	}
	e.sessions = slices.DeleteFunc(e.sessions, (*session).dead)
	for _, s := range e.sessions {
		if s.users.Load() == 0 {
			s.users.Add(1)
			return s, true, nil
		}
	}
	solo := len(e.sessions) < e.maxConns
	if !solo && e.mux != nil && !e.mux.dead() {
		e.mux.users.Add(1)
		return e.mux, false, nil
	}
	nc, err := e.dial(ctx)
	if err != nil {
		if e.mux != nil && !e.mux.dead() { // the dial was for a solo connection
			e.mux.users.Add(1)
			return e.mux, false, nil
		}
		return nil, false, err
	}
	if e.lost > 0 { // this connection replaces a lost one
		e.lost--
		e.reconnects++
		e.log.Info("device reconnected", "name", e.cfg.Name)
	}
	e.connected = true
	ns := newSession(nc)
	ns.users.Add(1)
	if solo {
		e.sessions = append(e.sessions, ns)
	} else {
		e.mux = ns
	}
	return ns, solo, nil
}

// dial opens a connection to the device (e.mu held), keeping the back-off
// between failed dials.
func (e *Engine) dial(ctx context.Context) (net.Conn, error) {
	now := time.Now()
	if now.Before(e.nextDial) {
		return nil, &dialError{fmt.Errorf("device: %s: reconnect in %v (last dial: %v): %w",
			e.cfg.Name, e.nextDial.Sub(now).Round(time.Millisecond), e.lastDialErr, engine.ErrDevice), true}
	}
	d := &net.Dialer{Timeout: e.cfg.DialTimeout}
	var nc net.Conn
	var err error
	if e.cfg.Network == "tcp" {
		nc, err = (&tls.Dialer{NetDialer: d, Config: e.cfg.TLS}).DialContext(ctx, "tcp", e.cfg.Address)
	} else if err = e.cfg.checkSocketPath(e.cfg.Address); err == nil || !errors.Is(err, ErrPeerRefused) {
		// (A path that does not resolve is left to the dial's error.)
		nc, err = d.DialContext(ctx, "unix", e.cfg.Address)
		if err == nil {
			// Nothing is sent before the listener is known (peer.go).
			if err = e.cfg.checkPeer(nc); err != nil {
				nc.Close()
				nc = nil
			} else {
				nc = rawsock.Detach(nc) // see rawsock: no scheduler or netpoller wake-up per answer
			}
		}
	}
	if errors.Is(err, ErrPeerRefused) {
		e.log.Error("device refused: socket or listener not trusted", "name", e.cfg.Name, "err", err)
	}
	if err != nil {
		cheap := unreachable(err)
		limit := maxSlowBackoff
		if cheap {
			limit = maxBackoff
		}
		e.backoff = min(max(2*e.backoff, minBackoff), limit)
		e.nextDial = time.Now().Add(e.backoff)
		e.dialFailures++
		e.lastDialErr = err
		if e.dialFailures == 1 || e.backoff == limit && e.dialFailures%16 == 0 {
			e.log.Warn("device dial failed", "name", e.cfg.Name, "err", err, "retry_in", e.backoff, "failures", e.dialFailures)
		}
		return nil, &dialError{fmt.Errorf("device: %s: dial: %w", e.cfg.Name, errors.Join(engine.ErrDevice, err)), cheap}
	}
	e.backoff, e.dialFailures, e.lastDialErr = 0, 0, nil
	return nc, nil
}

// dialError is a failed (or deferred) dial. Unreachable ones (no socket,
// connection refused, or the back-off after such a dial) say the device is
// absent rather than misbehaving: they fail the request at once but do not
// count against the breaker, whose cool-down would otherwise delay the
// return of a restarted daemon. The dial back-off (50 ms doubling to 1 s)
// is what spaces the attempts. A slow failure (timeout, TLS refused) counts
// once, when it happens; the requests refused during its back-off do not.
type dialError struct {
	err     error
	neutral bool // unreachable, or deferred by the back-off: not a breaker failure
}

func (d *dialError) Error() string { return d.err.Error() }
func (d *dialError) Unwrap() error { return d.err }

// unreachable reports dial errors that cost the device nothing: the socket
// file is missing or nothing listens.
func unreachable(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

// dropSession forgets s so that a later request dials anew.
func (e *Engine) dropSession(s *session, err error) {
	if e.forgetSession(s, err) {
		e.mu.Lock()
		e.lost++ // the next dial replaces it: a reconnect
		e.mu.Unlock()
	}
}

// retireSession closes s on purpose (nothing is wrong with the device).
func (e *Engine) retireSession(s *session, err error) { e.forgetSession(s, err) }

// forgetSession ends s and removes it from the engine's connections; it
// reports whether s was still one of them.
func (e *Engine) forgetSession(s *session, err error) bool {
	s.fail(err)
	e.mu.Lock()
	defer e.mu.Unlock()
	n := len(e.sessions)
	e.sessions = slices.DeleteFunc(e.sessions, func(x *session) bool { return x == s })
	known := len(e.sessions) < n || e.mux == s
	if e.mux == s {
		e.mux = nil
	}
	return known
}

func (e *Engine) newID() uint32 {
	for {
		if id := e.nextID.Add(1); id != 0 {
			return id
		}
	}
}
