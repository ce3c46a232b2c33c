// Package pool is an engine that spreads operations over several engines
// (typically several ModExp devices, "device:unix:/a" and "device:unix:/b"),
// so that a token's load is shared and one failing member does not stop it.
//
// # Spec
//
// The pool is registered as kind "pool"; its members are engine specs
// separated by "|" (commas and colons belong to the members' own specs):
//
//	pool:device:unix:/run/a.sock|device:unix:/run/b.sock
//	pool:chip:pukcc|chip:pukcc,w=3
//
// The token builds the same pool from a slot's `engines = [...]` list (see
// token/config).
//
// # Scheduling
//
// Each operation goes to the healthy member with the fewest operations in
// flight; ties rotate, so an idle pool alternates. The two CRT halves of an
// RSA private operation are two Exp calls made at once (the pool reports
// the sum of its members' cores), so they usually land on two members.
//
// # Failures
//
// A member whose call fails with an error wrapping [engine.ErrDevice] is
// marked down for a cool-down (250 ms, doubling to 10 s while it keeps
// failing) and the call is retried on another member not yet tried, as long
// as the context allows. When every member is down, the one that went down
// first is tried anyway (its own breaker answers fast if it is still dead).
// A member that could not be opened when the pool was made is opened again
// on use, after its cool-down, so a device started late (or restarted) joins
// without restarting the token.
//
// Wrong but well-formed results are not visible here: the RSA and ECDSA
// layers above verify every result before release. The pool does not
// offer native CRT (so both halves can be spread); it offers EC scalar
// multiplication on the curves every member opened at creation serves.
package pool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modexp-token/modexp-token/engine"
)

func init() { engine.Register("pool", Open) }

// Separator between member specs in a pool spec.
const Separator = "|"

// Cool-down of a member after a device failure.
const (
	minDown = 250 * time.Millisecond
	maxDown = 10 * time.Second
)

// Open is the registry's factory: arg is member specs separated by "|".
func Open(arg string) (engine.Engine, error) {
	specs := strings.Split(arg, Separator)
	return New(specs)
}

// Pool is the pool engine. The engine.Engine returned by New is a *Pool or
// a value embedding one that adds ScalarMult.
type Pool struct {
	name    string
	info    engine.Info
	members []*member
	next    atomic.Uint64 // rotation for ties
}

// member is one engine of the pool.
type member struct {
	spec string

	mu        sync.Mutex
	eng       engine.Engine // nil until opened
	openErr   error
	downUntil time.Time
	down      time.Duration // current cool-down (0 = healthy)
	mods      map[*modulus]engine.Modulus

	closed   bool
	inflight atomic.Int64
	ops      atomic.Uint64
	errs     atomic.Uint64
}

// New opens a pool over the engines named by specs (at least one; every
// spec is opened now, and at least one must open).
func New(specs []string) (engine.Engine, error) {
	if len(specs) == 0 {
		return nil, errors.New("pool: no members")
	}
	seen := map[string]bool{}
	p := &Pool{name: "pool:" + strings.Join(specs, Separator)}
	var opened []engine.Info
	var errs []error
	for _, s := range specs {
		s = strings.TrimSpace(s)
		if s == "" || strings.HasPrefix(s, "pool:") {
			return nil, fmt.Errorf("pool: member %q: want a non-pool engine spec", s)
		}
		if seen[s] {
			return nil, fmt.Errorf("pool: member %q listed twice", s)
		}
		seen[s] = true
		m := &member{spec: s, mods: map[*modulus]engine.Modulus{}}
		eng, err := engine.Open(s)
		if err != nil {
			if errors.Is(err, engine.ErrUnknownEngine) {
				p.closeAll()
				return nil, fmt.Errorf("pool: member %q: %w", s, err)
			}
			m.openErr, m.down, m.downUntil = err, minDown, time.Now().Add(minDown)
			errs = append(errs, err)
		} else {
			m.eng = eng
			opened = append(opened, eng.Info())
		}
		p.members = append(p.members, m)
	}
	if len(opened) == 0 {
		return nil, fmt.Errorf("pool: no member could be opened: %w", errors.Join(errs...))
	}
	p.info = engine.Info{Name: p.name, Model: "ModExp pool", ConstantTime: true, Curves: opened[0].Curves}
	for _, in := range opened {
		if in.MaxModulusBits > 0 && (p.info.MaxModulusBits == 0 || in.MaxModulusBits < p.info.MaxModulusBits) {
			p.info.MaxModulusBits = in.MaxModulusBits
		}
		p.info.ConstantTime = p.info.ConstantTime && in.ConstantTime
		p.info.Simulated = p.info.Simulated || in.Simulated
		p.info.Curves = slices.DeleteFunc(slices.Clone(p.info.Curves), func(c string) bool { return !slices.Contains(in.Curves, c) })
	}
	// Members not yet opened count with one core each.
	for _, m := range p.members {
		if m.eng != nil {
			p.info.Cores += max(m.eng.Info().Cores, 1)
		} else {
			p.info.Cores++
		}
	}
	if len(p.info.Curves) == 0 {
		p.info.Curves = nil
	}
	return p, nil
}

func (p *Pool) closeAll() {
	for _, m := range p.members {
		if m.eng != nil {
			m.eng.Close()
		}
	}
}

// Info describes the pool: the smallest member limit, constant time only if
// every member is, the sum of the members' cores.
func (p *Pool) Info() engine.Info {
	in := p.info
	in.Curves = slices.Clone(in.Curves)
	return in
}

// MemberStatus is one member's state, for logs, the CLI and tests.
type MemberStatus struct {
	Spec     string
	Open     bool   // the member's engine is open
	Down     bool   // in its cool-down after a failure
	Ops      uint64 // operations sent to it
	Errors   uint64 // operations that failed on it
	LastOpen string // the last open error, if any
}

// Members reports every member's state.
func (p *Pool) Members() []MemberStatus {
	now := time.Now()
	out := make([]MemberStatus, len(p.members))
	for i, m := range p.members {
		m.mu.Lock()
		out[i] = MemberStatus{Spec: m.spec, Open: m.eng != nil, Down: m.down > 0 && now.Before(m.downUntil),
			Ops: m.ops.Load(), Errors: m.errs.Load()}
		if m.openErr != nil {
			out[i].LastOpen = m.openErr.Error()
		}
		m.mu.Unlock()
	}
	return out
}

// modulus is the pool's modulus: prepared on each member on first use.
type modulus struct {
	n    []byte
	bits int
}

func (m *modulus) BitLen() int   { return m.bits }
func (m *modulus) Bytes() []byte { return slices.Clone(m.n) }

// NewModulus checks n (odd, > 1, within the pool's limit); members prepare
// it on first use.
func (p *Pool) NewModulus(n []byte) (engine.Modulus, error) {
	i := 0
	for i < len(n) && n[i] == 0 {
		i++
	}
	n = n[i:]
	if len(n) == 0 || n[len(n)-1]&1 == 0 || (len(n) == 1 && n[0] == 1) {
		return nil, fmt.Errorf("pool: modulus: %w", engine.ErrInvalidModulus)
	}
	bits := (len(n)-1)*8 + bitLen8(n[0])
	if p.info.MaxModulusBits > 0 && bits > p.info.MaxModulusBits {
		return nil, fmt.Errorf("pool: %d-bit modulus exceeds %d bits: %w", bits, p.info.MaxModulusBits, engine.ErrOperandTooLarge)
	}
	return &modulus{n: slices.Clone(n), bits: bits}, nil
}

func bitLen8(b byte) int {
	n := 0
	for b != 0 {
		n++
		b >>= 1
	}
	return n
}

// usable returns the member's engine (opening it if due) and whether it is
// in its cool-down.
func (m *member) usable(now time.Time) (engine.Engine, bool) {
	m.mu.Lock()
	down := m.down > 0 && now.Before(m.downUntil)
	if m.eng != nil || down || m.closed {
		defer m.mu.Unlock()
		return m.eng, down
	}
	// Open without holding the lock (a dial may take seconds); the
	// cool-down keeps other callers from opening it at the same time.
	m.markDownLocked(now)
	m.mu.Unlock()
	eng, err := engine.Open(m.spec)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.openErr = err
		return nil, true
	}
	if m.eng != nil || m.closed { // opened twice, or the pool closed meanwhile
		eng.Close()
		return m.eng, m.closed
	}
	m.eng, m.openErr, m.down = eng, nil, 0
	return m.eng, false
}

func (m *member) markDownLocked(now time.Time) {
	if m.down == 0 {
		m.down = minDown
	} else {
		m.down = min(2*m.down, maxDown)
	}
	m.downUntil = now.Add(m.down)
}

func (m *member) result(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil {
		m.down = 0
		return
	}
	m.errs.Add(1)
	if errors.Is(err, engine.ErrDevice) {
		m.markDownLocked(time.Now())
	}
}

// prepared returns the member's own modulus for mod.
func (m *member) prepared(eng engine.Engine, mod *modulus) (engine.Modulus, error) {
	m.mu.Lock()
	pm, ok := m.mods[mod]
	m.mu.Unlock()
	if ok {
		return pm, nil
	}
	pm, err := eng.NewModulus(mod.n)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	if len(m.mods) > 4096 { // keys come and go: keep the cache bounded
		clear(m.mods)
	}
	m.mods[mod] = pm
	m.mu.Unlock()
	return pm, nil
}

// pick chooses the member for the next try: healthy members first, fewest
// in flight, ties rotating; when every untried member is down, the one
// whose cool-down ends first.
func (p *Pool) pick(tried []bool) (int, engine.Engine) {
	now := time.Now()
	start := int(p.next.Add(1))
	best, bestDown := -1, -1
	var bestEng, bestDownEng engine.Engine
	var bestLoad int64
	var bestUntil time.Time
	for k := range p.members {
		i := (start + k) % len(p.members)
		if tried[i] {
			continue
		}
		m := p.members[i]
		eng, down := m.usable(now)
		if eng == nil {
			continue
		}
		if down {
			m.mu.Lock()
			u := m.downUntil
			m.mu.Unlock()
			if bestDown < 0 || u.Before(bestUntil) {
				bestDown, bestDownEng, bestUntil = i, eng, u
			}
			continue
		}
		if l := m.inflight.Load(); best < 0 || l < bestLoad {
			best, bestEng, bestLoad = i, eng, l
		}
	}
	if best >= 0 {
		return best, bestEng
	}
	return bestDown, bestDownEng
}

// do runs f on members until one succeeds, the error is not a device
// failure, or every member was tried.
func (p *Pool) do(ctx context.Context, f func(m *member, eng engine.Engine) error) error {
	tried := make([]bool, len(p.members))
	var errs []error
	for range p.members {
		i, eng := p.pick(tried)
		if i < 0 {
			break
		}
		tried[i] = true
		m := p.members[i]
		m.inflight.Add(1)
		m.ops.Add(1)
		err := f(m, eng)
		m.inflight.Add(-1)
		m.result(err)
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("member %s: %w", m.spec, err))
		if !errors.Is(err, engine.ErrDevice) || ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 0 {
		return fmt.Errorf("pool: no member available: %w", engine.ErrDevice)
	}
	return fmt.Errorf("pool: %w", errors.Join(errs...))
}

// expMode runs base^exp mod m on one member (retrying on another after a
// device failure).
func (p *Pool) expMode(ctx context.Context, m engine.Modulus, base, exp []byte, public bool) (out []byte, c engine.Cost, err error) {
	mod, ok := m.(*modulus)
	if !ok {
		return nil, engine.Cost{}, fmt.Errorf("pool: modulus %T not made by this pool: %w", m, engine.ErrInvalidModulus)
	}
	err = p.do(ctx, func(mb *member, eng engine.Engine) error {
		pm, err := mb.prepared(eng, mod)
		if err != nil {
			return err
		}
		r, cost, err := engine.ExpMode(ctx, eng, pm, base, exp, public)
		c = c.Add(cost)
		out = r
		return err
	})
	if err != nil {
		return nil, c, err
	}
	return out, c, nil
}

// Exp is [engine.Engine]'s: the exponent is secret.
func (p *Pool) Exp(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return p.expMode(ctx, m, base, exp, false)
}

// ExpVarTime is [engine.Engine]'s: the exponent is public.
func (p *Pool) ExpVarTime(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return p.expMode(ctx, m, base, exp, true)
}

// SelfTest runs every member's self-test at once. A member that fails is
// put in its cool-down; the error names every failing member (nil if all
// pass).
func (p *Pool) SelfTest(ctx context.Context) error {
	errs := make([]error, len(p.members))
	var wg sync.WaitGroup
	for i, m := range p.members {
		eng, _ := m.usable(time.Now())
		if eng == nil {
			m.mu.Lock()
			errs[i] = fmt.Errorf("pool: member %s: not open: %w (%w)", m.spec, m.openErr, engine.ErrDevice)
			m.mu.Unlock()
			continue
		}
		wg.Go(func() {
			if err := eng.SelfTest(ctx); err != nil {
				errs[i] = fmt.Errorf("pool: member %s: %w", m.spec, err)
				m.mu.Lock()
				m.markDownLocked(time.Now())
				m.mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close closes every member.
func (p *Pool) Close() error {
	var errs []error
	for _, m := range p.members {
		m.mu.Lock()
		if m.eng != nil {
			errs = append(errs, m.eng.Close())
			m.eng = nil
		}
		m.openErr, m.closed = errors.New("pool: closed"), true
		m.mu.Unlock()
	}
	return errors.Join(errs...)
}

// ec runs f on one member for curve, which every member must serve
// (Info().Curves: the curves common to all members; a pool whose members
// share none lists none, and has no engine.AbilityEC: see Has).
func (p *Pool) ec(ctx context.Context, curve string, f func(e engine.ECEngine) (x, y []byte, c engine.Cost, err error)) (x, y []byte, c engine.Cost, err error) {
	if !slices.Contains(p.info.Curves, curve) {
		return nil, nil, engine.Cost{}, fmt.Errorf("pool: curve %q: %w", curve, engine.ErrUnsupported)
	}
	err = p.do(ctx, func(_ *member, eng engine.Engine) error {
		ee, ok := engine.As[engine.ECEngine](eng)
		if !ok {
			return fmt.Errorf("pool: member without curves: %w", engine.ErrUnsupported)
		}
		var cost engine.Cost
		var err error
		x, y, cost, err = f(ee)
		c = c.Add(cost)
		return err
	})
	if err != nil {
		return nil, nil, c, err
	}
	return x, y, c, nil
}

// ScalarBaseMult returns k·G on one member.
func (p *Pool) ScalarBaseMult(ctx context.Context, curve string, k []byte) (x, y []byte, c engine.Cost, err error) {
	return p.ec(ctx, curve, func(e engine.ECEngine) ([]byte, []byte, engine.Cost, error) {
		return e.ScalarBaseMult(ctx, curve, k)
	})
}

// ScalarMult returns k·(px, py) on one member.
func (p *Pool) ScalarMult(ctx context.Context, curve string, k, px, py []byte) (x, y []byte, c engine.Cost, err error) {
	return p.ec(ctx, curve, func(e engine.ECEngine) ([]byte, []byte, engine.Cost, error) {
		return e.ScalarMult(ctx, curve, k, px, py)
	})
}

// Has is [engine.Limited]'s: a pool multiplies points when its members
// share a curve; it has no native CRT or pairs of its own.
func (p *Pool) Has(a engine.Ability) bool {
	return a == engine.AbilityEC && len(p.info.Curves) > 0
}

var (
	_ engine.Engine   = (*Pool)(nil)
	_ engine.ECEngine = (*Pool)(nil)
	_ engine.Limited  = (*Pool)(nil)
)
