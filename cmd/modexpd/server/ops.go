package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire"
)

// protocolMaxBits is the largest modulus MXP/1 carries.
const protocolMaxBits = wire.MaxOperand * 8

// maxModBits is the device's modulus limit: the engine's, within the
// protocol's.
func (s *Server) maxModBits() int {
	if b := s.cfg.Engine.Info().MaxModulusBits; b > 0 && b < protocolMaxBits {
		return b
	}
	return protocolMaxBits
}

// curves are the engine's curves that the protocol knows.
func (s *Server) curves() []string {
	if _, ok := engine.As[engine.ECEngine](s.cfg.Engine); !ok {
		return nil
	}
	var out []string
	for _, c := range s.cfg.Engine.Info().Curves {
		if wire.LookupCurve(c) != nil {
			out = append(out, c)
		}
	}
	return out
}

func (s *Server) nativeCRT() bool {
	_, ok := engine.As[engine.CRTEngine](s.cfg.Engine)
	return ok
}

func (s *Server) buildInfo() wire.Frame {
	in := s.cfg.Engine.Info()
	var f wire.Frame
	fw := s.cfg.Firmware
	if fw == "" {
		fw = "modexpd"
	}
	costModel := "none"
	if in.Simulated {
		costModel = in.Name
	}
	crtBits := 0
	if s.nativeCRT() {
		crtBits = s.maxModBits()
	}
	f.AddString(wire.TagModel, in.Model).
		AddString(wire.TagFirmware, fw).
		AddU8(wire.TagProtoMin, wire.MinVersion).
		AddU8(wire.TagProtoMax, wire.MaxVersion).
		AddU32(wire.TagMaxModBits, uint32(s.maxModBits())).
		AddU32(wire.TagMaxCRTBits, uint32(crtBits)).
		AddString(wire.TagCurves, strings.Join(s.curves(), ",")).
		AddBool(wire.TagNativeCRT, s.nativeCRT()).
		AddU32(wire.TagCores, uint32(max(in.Cores, 1))).
		AddU32(wire.TagMaxInflight, uint32(s.cfg.MaxInflight)).
		AddU32(wire.TagMaxFrame, wire.MaxFrame).
		AddBool(wire.TagConstantTime, in.ConstantTime).
		AddBool(wire.TagSimulated, in.Simulated).
		AddString(wire.TagCostModel, costModel).
		AddString(wire.TagEngine, in.Name).
		Add(wire.TagOps, binary.BigEndian.AppendUint16(nil, uint16(wire.OpModExpPair)))
	if s.cost.Known() {
		f.Add(wire.TagCostNS, s.cost.Encode())
	}
	return f
}

// argError is a refused argument: the status to answer and why.
type argError struct {
	st  wire.Status
	msg string
}

func (e *argError) Error() string { return e.msg }

func refuse(st wire.Status, format string, args ...any) error {
	return &argError{st: st, msg: fmt.Sprintf(format, args...)}
}

// operand returns a required integer field, at most limit bytes long.
func operand(f *wire.Frame, t wire.Tag, name string, limit int) ([]byte, error) {
	v, ok := f.Get(t)
	if !ok {
		return nil, refuse(wire.StatusBadArgument, "missing %s", name)
	}
	if len(v) > limit {
		return nil, refuse(wire.StatusTooLarge, "%s of %d bytes (max %d)", name, len(v), limit)
	}
	return v, nil
}

// bitLen is the length in bits of a big-endian integer.
func bitLen(b []byte) int {
	b = trimZeros(b)
	if len(b) == 0 {
		return 0
	}
	return (len(b)-1)*8 + bits.Len8(b[0])
}

// oddModulus checks an odd modulus > 1 within the device's limit and returns
// it without leading zeros.
func (s *Server) oddModulus(f *wire.Frame, t wire.Tag, name string) ([]byte, error) {
	m, err := operand(f, t, name, wire.MaxOperand)
	if err != nil {
		return nil, err
	}
	m = trimZeros(m)
	bl := bitLen(m)
	if bl < 2 || m[len(m)-1]&1 == 0 {
		return nil, refuse(wire.StatusInvalidModulus, "%s is even, zero or one", name)
	}
	if bl > s.maxModBits() {
		return nil, refuse(wire.StatusTooLarge, "%s of %d bits (max %d)", name, bl, s.maxModBits())
	}
	return m, nil
}

// below checks v < m, both big-endian (leading zeros allowed), without
// allocating.
func below(v, m []byte) bool {
	v, m = trimZeros(v), trimZeros(m)
	if len(v) != len(m) {
		return len(v) < len(m)
	}
	return bytes.Compare(v, m) < 0
}

func trimZeros(b []byte) []byte {
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	return b
}

// statusOf maps an engine error to a status.
func statusOf(ctx context.Context, err error) (wire.Status, string) {
	var ae *argError
	switch {
	case errors.As(err, &ae):
		return ae.st, ae.msg
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), ctx.Err() != nil:
		return wire.StatusTimeout, "deadline passed on the device"
	case errors.Is(err, engine.ErrInvalidModulus):
		return wire.StatusInvalidModulus, err.Error()
	case errors.Is(err, engine.ErrOperandTooLarge):
		return wire.StatusTooLarge, err.Error()
	case errors.Is(err, engine.ErrUnsupported):
		return wire.StatusUnsupported, err.Error()
	case errors.Is(err, engine.ErrDevice):
		return wire.StatusFaultDetected, err.Error()
	}
	return wire.StatusInternal, err.Error()
}

// compute validates and runs an arithmetic request. It returns the answer
// when st is OK.
func (s *Server) compute(ctx context.Context, f *wire.Frame) (resp *wire.Frame, st wire.Status, msg string) {
	defer recoverInternal(s, f.Op, &st, &msg)
	if !s.acquire(ctx) {
		return nil, wire.StatusTimeout, "deadline passed while queued"
	}
	defer s.release()
	resp = wire.NewResponse(f, wire.StatusOK)
	var cost engine.Cost
	var err error
	switch f.Op {
	case wire.OpSelfTest:
		if err = s.cfg.Engine.SelfTest(ctx); err != nil && ctx.Err() == nil {
			return nil, wire.StatusSelfTestFailed, err.Error()
		}
	case wire.OpModExp:
		cost, err = s.modExp(ctx, f, resp)
	case wire.OpModExpCRT:
		cost, err = s.modExpCRT(ctx, f, resp)
	case wire.OpModExpPair:
		cost, err = s.modExpPair(ctx, f, resp)
	case wire.OpECMul:
		cost, err = s.ecMul(ctx, f, resp)
	}
	if err != nil {
		st, msg := statusOf(ctx, err)
		return nil, st, msg
	}
	if cost.Cycles != 0 {
		resp.AddU64(wire.TagCycles, cost.Cycles)
	}
	if cost.Device != 0 {
		resp.AddU64(wire.TagDeviceNS, uint64(cost.Device))
	}
	if cost.Energy != 0 {
		resp.AddFloat(wire.TagEnergy, cost.Energy)
	}
	return resp, wire.StatusOK, ""
}

// padTo returns v left-padded with zeros to n bytes, or an error when it is
// longer (a wrong engine answer).
func padTo(v []byte, n int, what string) ([]byte, error) {
	for len(v) > n && v[0] == 0 {
		v = v[1:]
	}
	if len(v) > n {
		return nil, fmt.Errorf("server: engine returned a %s of %d bytes for %d: %w", what, len(v), n, engine.ErrDevice)
	}
	out := make([]byte, n)
	copy(out[n-len(v):], v)
	return out, nil
}

// expArgs is one exponentiation of a MODEXP or MODEXP_PAIR request.
type expArgs struct {
	mod, base, exp []byte
	public         bool
}

// expTags names the fields of one exponentiation.
type expTags struct {
	mod, base, exp    wire.Tag
	modN, baseN, expN string
}

var (
	firstExp  = expTags{wire.TagMod, wire.TagBase, wire.TagExp, "MOD", "BASE", "EXP"}
	secondExp = expTags{wire.TagMod2, wire.TagBase2, wire.TagExp2, "MOD2", "BASE2", "EXP2"}
)

// expArgsOf checks and returns the exponentiation named by t (MODE applies
// to every exponentiation of the request).
func (s *Server) expArgsOf(f *wire.Frame, t expTags) (expArgs, error) {
	var a expArgs
	var err error
	if a.mod, err = s.oddModulus(f, t.mod, t.modN); err != nil {
		return a, err
	}
	if a.base, err = operand(f, t.base, t.baseN, wire.MaxOperand); err != nil {
		return a, err
	}
	if !below(a.base, a.mod) {
		return a, refuse(wire.StatusBadArgument, "%s not below %s", t.baseN, t.modN)
	}
	if a.exp, err = operand(f, t.exp, t.expN, wire.MaxOperand); err != nil {
		return a, err
	}
	mode, _, err := f.Uint(wire.TagMode)
	if err != nil {
		return a, refuse(wire.StatusBadArgument, "MODE: %v", err)
	}
	if mode&^wire.ModePublic != 0 {
		return a, refuse(wire.StatusUnsupported, "MODE %#x", mode)
	}
	a.public = mode&wire.ModePublic != 0
	return a, nil
}

// exp runs one checked exponentiation and returns its result padded to the
// modulus length.
func (s *Server) exp(ctx context.Context, a expArgs) ([]byte, engine.Cost, error) {
	mod, err := s.mods.get(s.cfg.Engine, a.mod)
	if err != nil {
		return nil, engine.Cost{}, err
	}
	r, cost, err := engine.ExpMode(ctx, s.cfg.Engine, mod, a.base, a.exp, a.public)
	if err != nil {
		return nil, cost, err
	}
	r, err = padTo(r, len(a.mod), "result")
	return r, cost, err
}

func (s *Server) modExp(ctx context.Context, f *wire.Frame, resp *wire.Frame) (engine.Cost, error) {
	a, err := s.expArgsOf(f, firstExp)
	if err != nil {
		return engine.Cost{}, err
	}
	r, cost, err := s.exp(ctx, a)
	if err != nil {
		return cost, err
	}
	resp.Add(wire.TagResult, r)
	return cost, nil
}

// acquire waits for one of the device's core slots (false: ctx ended
// first). Waiters are served in the order they came.
func (s *Server) acquire(ctx context.Context) bool {
	select {
	case s.sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *Server) release() { <-s.sem }

// modExpPair runs MODEXP_PAIR's two exponentiations on the core slot the
// request holds, one after the other, unless the device is lightly loaded
// and a second slot is free at once: then the second runs beside the
// first. "Lightly" means that the recent average of other requests in
// flight at arrival is below cores/2 − 0.9, so that pairs taking two cores
// each would still fit: a lone caller gets two cores (half the latency),
// while under load each pair stays on one core and thread, with no
// goroutine hand-off and no core taken from the next client's request.
// Splitting even 2–4 % of the pairs under a 2-thread load cost 5–10
// points of throughput (docs/DEVICE_PERF.md, "What each design choice is
// worth").
func (s *Server) modExpPair(ctx context.Context, f *wire.Frame, resp *wire.Frame) (engine.Cost, error) {
	a, err := s.expArgsOf(f, firstExp)
	if err != nil {
		return engine.Cost{}, err
	}
	b, err := s.expArgsOf(f, secondExp)
	if err != nil {
		return engine.Cost{}, err
	}
	if ra, rb, cost, ok, err := s.expPair(ctx, a, b); ok {
		if err != nil {
			return cost, err
		}
		resp.Add(wire.TagResult, ra).Add(wire.TagResult2, rb)
		return cost, nil
	}
	var (
		ra, rb []byte
		ca, cb engine.Cost
		ea, eb error
	)
	split := false
	if 10*s.load.Load() < int64(5*s.cores-9)*loadOne { // load < cores/2 − 0.9
		select {
		case s.sem <- struct{}{}:
			split = true
			s.stats.add(&s.stats.pairsSplit)
		default:
		}
	}
	if split {
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer s.release()
			defer recoverPanic(s, f.Op, &eb)
			rb, cb, eb = s.exp(ctx, b)
		}()
		ra, ca, ea = s.exp(ctx, a)
		<-done
	} else if ra, ca, ea = s.exp(ctx, a); ea == nil {
		rb, cb, eb = s.exp(ctx, b)
	}
	cost := ca.Add(cb)
	if ea != nil {
		return cost, ea
	}
	if eb != nil {
		return cost, eb
	}
	resp.Add(wire.TagResult, ra).Add(wire.TagResult2, rb)
	return cost, nil
}

// expPair runs a and b as one ExpPair call when the backing engine takes
// pairs (the software engine on the IFMA kernel interleaves the two on
// one core: about the CPU of one). ok is false, and nothing was done, when
// the engine has no ExpPair or declines it with engine.ErrUnsupported.
func (s *Server) expPair(ctx context.Context, a, b expArgs) (ra, rb []byte, cost engine.Cost, ok bool, err error) {
	pe, isPair := engine.As[engine.PairEngine](s.cfg.Engine)
	if !isPair {
		return nil, nil, engine.Cost{}, false, nil
	}
	ma, err := s.mods.get(s.cfg.Engine, a.mod)
	if err != nil {
		return nil, nil, engine.Cost{}, true, err
	}
	mb, err := s.mods.get(s.cfg.Engine, b.mod)
	if err != nil {
		return nil, nil, engine.Cost{}, true, err
	}
	ra, rb, cost, err = pe.ExpPair(ctx, engine.ExpOp{M: ma, Base: a.base, Exp: a.exp, Public: a.public},
		engine.ExpOp{M: mb, Base: b.base, Exp: b.exp, Public: b.public})
	if errors.Is(err, engine.ErrUnsupported) {
		return nil, nil, cost, false, nil
	}
	if err != nil {
		return nil, nil, cost, true, err
	}
	if ra, err = padTo(ra, len(a.mod), "result"); err != nil {
		return nil, nil, cost, true, err
	}
	rb, err = padTo(rb, len(b.mod), "result")
	return ra, rb, cost, true, err
}

func (s *Server) modExpCRT(ctx context.Context, f *wire.Frame, resp *wire.Frame) (engine.Cost, error) {
	ce, ok := engine.As[engine.CRTEngine](s.cfg.Engine)
	if !ok {
		return engine.Cost{}, refuse(wire.StatusUnsupported, "no native CRT on this device")
	}
	p, err := s.oddModulus(f, wire.TagP, "P")
	if err != nil {
		return engine.Cost{}, err
	}
	q, err := s.oddModulus(f, wire.TagQ, "Q")
	if err != nil {
		return engine.Cost{}, err
	}
	n := new(big.Int).Mul(new(big.Int).SetBytes(p), new(big.Int).SetBytes(q))
	if n.BitLen() > s.maxModBits() {
		return engine.Cost{}, refuse(wire.StatusTooLarge, "P·Q of %d bits (max %d)", n.BitLen(), s.maxModBits())
	}
	k := &engine.CRTKey{P: p, Q: q}
	for _, x := range []struct {
		t    wire.Tag
		name string
		dst  *[]byte
	}{{wire.TagDP, "DP", &k.DP}, {wire.TagDQ, "DQ", &k.DQ}, {wire.TagQInv, "QINV", &k.QInv}} {
		if *x.dst, err = operand(f, x.t, x.name, wire.MaxOperand); err != nil {
			return engine.Cost{}, err
		}
	}
	base, err := operand(f, wire.TagBase, "BASE", wire.MaxOperand)
	if err != nil {
		return engine.Cost{}, err
	}
	if new(big.Int).SetBytes(base).Cmp(n) >= 0 {
		return engine.Cost{}, refuse(wire.StatusBadArgument, "BASE not below P·Q")
	}
	r, cost, err := ce.ExpCRT(ctx, k, base)
	if err != nil {
		return cost, err
	}
	r, err = padTo(r, (n.BitLen()+7)/8, "result")
	if err != nil {
		return cost, err
	}
	resp.Add(wire.TagResult, r)
	return cost, nil
}

func (s *Server) ecMul(ctx context.Context, f *wire.Frame, resp *wire.Frame) (engine.Cost, error) {
	ee, ok := engine.As[engine.ECEngine](s.cfg.Engine)
	if !ok {
		return engine.Cost{}, refuse(wire.StatusUnsupported, "no curve arithmetic on this device")
	}
	name, _ := f.Get(wire.TagCurve)
	if !slices.Contains(s.curves(), string(name)) {
		return engine.Cost{}, refuse(wire.StatusUnsupportedCurve, "curve %.32q", name)
	}
	c := wire.LookupCurve(string(name))
	k, err := operand(f, wire.TagScalar, "SCALAR", c.FieldBytes)
	if err != nil {
		return engine.Cost{}, err
	}
	px, hasX := f.Get(wire.TagPX)
	py, hasY := f.Get(wire.TagPY)
	var x, y []byte
	var cost engine.Cost
	switch {
	case !hasX && !hasY:
		x, y, cost, err = ee.ScalarBaseMult(ctx, c.Name, k)
	case hasX && hasY:
		if len(px) > c.FieldBytes || len(py) > c.FieldBytes {
			return engine.Cost{}, refuse(wire.StatusTooLarge, "coordinates longer than %d bytes", c.FieldBytes)
		}
		if !c.IsOnCurve(new(big.Int).SetBytes(px), new(big.Int).SetBytes(py)) {
			return engine.Cost{}, refuse(wire.StatusPointNotOnCurve, "point not on %s", c.Name)
		}
		px, _ = padTo(px, c.FieldBytes, "PX")
		py, _ = padTo(py, c.FieldBytes, "PY")
		x, y, cost, err = ee.ScalarMult(ctx, c.Name, k, px, py)
	default:
		return engine.Cost{}, refuse(wire.StatusBadArgument, "PX and PY go together")
	}
	if err != nil {
		return cost, err
	}
	if x, err = padTo(x, c.FieldBytes, "x"); err != nil {
		return cost, err
	}
	if y, err = padTo(y, c.FieldBytes, "y"); err != nil {
		return cost, err
	}
	resp.Add(wire.TagRX, x).Add(wire.TagRY, y)
	return cost, nil
}

// modCache keeps the engine's prepared moduli, as a device keeps a key's
// Montgomery constants: RSA halves come again and again with the same p
// and q, and preparing one (R² mod m, −m⁻¹ mod 2⁶⁴) costs ≈ 5 µs at 1024
// bits, ≈ 1 % of an RSA-2048 signature. Bounded: when full it is emptied.
type modCache struct {
	mu sync.Mutex
	m  map[string]engine.Modulus
}

const modCacheSize = 1024

func (c *modCache) get(eng engine.Engine, n []byte) (engine.Modulus, error) {
	c.mu.Lock()
	mod, ok := c.m[string(n)]
	c.mu.Unlock()
	if ok {
		return mod, nil
	}
	mod, err := eng.NewModulus(n)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= modCacheSize {
		c.m = make(map[string]engine.Modulus)
	}
	c.m[string(n)] = mod
	c.mu.Unlock()
	return mod, nil
}
