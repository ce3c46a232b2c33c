package soft

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"os"
	"sync"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
	"github.com/modexp-token/modexp-token/engine/arith/mont"
	"github.com/modexp-token/modexp-token/engine/cores"
)

// MaxModulusBits is the largest modulus the software engine accepts.
const MaxModulusBits = 16384

// maxExpBytes bounds the exponent length (a blinded exponent of the
// largest modulus fits with room to spare).
const maxExpBytes = 2 * MaxModulusBits / 8

// supportedCurves lists the curves ScalarMult accepts. The elliptic-curve
// files of this package (ec*.go) set it in their init.
var supportedCurves []string

func init() {
	engine.Register("soft", func(arg string) (engine.Engine, error) {
		if arg != "" {
			return nil, fmt.Errorf("soft: unexpected argument %q", arg)
		}
		if err := Kernels().Err; err != nil {
			return nil, fmt.Errorf("soft: %w", err)
		}
		return New(), nil
	})
}

// Engine is the software engine. It is safe for concurrent use. The zero
// value works (and reports one core); New reports cores.Count() at the
// time of the call: the number of goroutines that can compute at once
// (GOMAXPROCS as Go set it from the CPUs and the container's CPU limit,
// not as the cgo layer raised it for C threads), which is what bounds the
// engine's useful parallelism, e.g. that of the two CRT halves in
// engine/alg/rsa, and its batch slots.
//
// The secret exponentiations that the 8-lane IFMA kernel takes are
// scheduled (batch.go): alone in flight they run at once on the
// single-buffer kernel; with others in flight they run together, up to 8
// at a time. The zero value does not batch.
type Engine struct {
	cores int
	batch *batcher
}

// New returns the software engine. MODEXP_BATCH=off in the environment
// turns the batch scheduler off (every exponentiation then runs on its
// caller's goroutine alone, as on a CPU without IFMA).
func New() *Engine {
	c := cores.Count()
	e := &Engine{cores: c}
	if os.Getenv("MODEXP_BATCH") != "off" {
		e.batch = newBatcher(c)
	}
	return e
}

// Info describes the software engine.
func (e *Engine) Info() engine.Info {
	return engine.Info{
		Name:           "soft",
		Model:          "soft-montgomery",
		MaxModulusBits: MaxModulusBits,
		ConstantTime:   true,
		Curves:         append([]string(nil), supportedCurves...),
		Cores:          max(1, e.cores),
	}
}

// modulus is the engine's prepared modulus.
type modulus struct{ m *mont.Modulus }

func (m *modulus) BitLen() int   { return m.m.BitLen() }
func (m *modulus) Bytes() []byte { return m.m.Bytes() }

// NewModulus prepares the odd modulus n (big-endian, > 1, at most
// MaxModulusBits bits). The Montgomery constants are computed once here.
func (e *Engine) NewModulus(n []byte) (engine.Modulus, error) {
	i := 0
	for i < len(n) && n[i] == 0 {
		i++
	}
	if nb := n[i:]; len(nb) > MaxModulusBits/8 {
		return nil, fmt.Errorf("soft: modulus of %d bytes exceeds %d bits: %w", len(nb), MaxModulusBits, engine.ErrOperandTooLarge)
	}
	m, err := mont.NewModulus(n)
	if err != nil {
		return nil, fmt.Errorf("soft: new modulus: %w", engine.ErrInvalidModulus)
	}
	return &modulus{m}, nil
}

// expMode returns base^exp mod m, padded to m's byte length. With public false
// the exponent is secret: it is processed over the byte length the caller
// gives (public), leading zero bytes included, in constant time (see the
// package doc); with public true a faster variable-time method is used.
// base must be below m (ErrOperandTooLarge otherwise); the exponent may be
// at most 4096 bytes.
func (e *Engine) expMode(ctx context.Context, m engine.Modulus, base, exp []byte, public bool) ([]byte, engine.Cost, error) {
	if err := ctx.Err(); err != nil {
		return nil, engine.Cost{}, fmt.Errorf("soft: exp: %w", err)
	}
	mm, ok := m.(*modulus)
	if !ok || mm == nil {
		return nil, engine.Cost{}, fmt.Errorf("soft: exp: modulus %T was not prepared by the soft engine: %w", m, engine.ErrUnsupported)
	}
	if len(exp) > maxExpBytes {
		return nil, engine.Cost{}, fmt.Errorf("soft: exp: exponent of %d bytes: %w", len(exp), engine.ErrOperandTooLarge)
	}
	ps := getPair(mm.m.Limbs(), 0) // the limbs, cleared after use
	defer putPair(ps)
	x := ps.xa
	if mont.SetBytes(x, base)&mm.m.Less(x) != 1 {
		return nil, engine.Cost{}, fmt.Errorf("soft: exp: base not below the modulus: %w", engine.ErrOperandTooLarge)
	}
	switch {
	case public:
		mm.m.ExpVarTime(x, x, exp)
	case e.batch != nil && mont.CanBatch(mm.m):
		ps.a = batchOp{m: mm.m, x: x, e: exp}
		ps.ops[0] = &ps.a
		e.batch.run(ps.ops[:1]...)
	default:
		mm.m.Exp(x, x, exp) // over len(exp) bytes: the length is public
	}
	out := make([]byte, mm.m.Size())
	mont.FillBytes(out, x)
	return out, engine.Cost{}, nil
}

// Exp is [engine.Engine]'s: the exponent is secret.
func (e *Engine) Exp(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return e.expMode(ctx, m, base, exp, false)
}

// ExpVarTime is [engine.Engine]'s: the exponent is public.
func (e *Engine) ExpVarTime(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return e.expMode(ctx, m, base, exp, true)
}

// errNoPair declines an ExpPair the kernel in use cannot interleave. Its
// message names the kernel when it is read, not at init (which would
// settle the kernel selection), and returning it allocates nothing: the
// CRT of a size the kernel does not pair asks at every operation.
func errNoPair() error { return noPairError{} }

// noPairError is errNoPair's error; it wraps engine.ErrUnsupported.
type noPairError struct{}

func (noPairError) Error() string {
	return fmt.Sprintf("soft: exp pair: not interleaved by the kernel in use (%s): %v", mont.Kernel(), engine.ErrUnsupported)
}

func (noPairError) Unwrap() error { return engine.ErrUnsupported }

// ExpPair computes two secret exponentiations (the CRT halves of an RSA
// private operation) in one pass that interleaves them, on one goroutine,
// when the limb kernel can (the AVX-512 IFMA kernel, for two moduli of
// the same size among 1024, 1536 and 2048 bits): about the CPU time of
// one exponentiation on that kernel, and the latency of the two run on
// two cores. Otherwise, or for public exponents, it returns an error
// wrapping engine.ErrUnsupported before doing anything, and the caller
// (engine/alg/rsa) runs two Exp calls as it would for an engine without
// ExpPair. Arguments and results are as for Exp; both exponents are
// processed over the longer one's byte length.
func (e *Engine) ExpPair(ctx context.Context, a, b engine.ExpOp) (ra, rb []byte, c engine.Cost, err error) {
	am, ok1 := a.M.(*modulus)
	bm, ok2 := b.M.(*modulus)
	if !ok1 || !ok2 || am == nil || bm == nil || a.Public || b.Public || !mont.CanPair(am.m, bm.m) {
		return nil, nil, engine.Cost{}, errNoPair()
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, engine.Cost{}, fmt.Errorf("soft: exp pair: %w", err)
	}
	ps := getPair(am.m.Limbs(), bm.m.Limbs())
	defer putPair(ps)
	prep := func(x []uint64, mm *modulus, op engine.ExpOp) ([]byte, error) {
		if len(op.Exp) > maxExpBytes {
			return nil, fmt.Errorf("soft: exp pair: exponent of %d bytes: %w", len(op.Exp), engine.ErrOperandTooLarge)
		}
		if mont.SetBytes(x, op.Base)&mm.m.Less(x) != 1 {
			return nil, fmt.Errorf("soft: exp pair: base not below the modulus: %w", engine.ErrOperandTooLarge)
		}
		return op.Exp, nil
	}
	xa, xb := ps.xa, ps.xb
	ea, err := prep(xa, am, a)
	if err != nil {
		return nil, nil, engine.Cost{}, err
	}
	eb, err := prep(xb, bm, b)
	if err != nil {
		return nil, nil, engine.Cost{}, err
	}
	switch {
	case e.batch != nil && mont.CanBatch(am.m) && am.m.Limbs() == bm.m.Limbs():
		ps.a = batchOp{m: am.m, x: xa, e: ea}
		ps.b = batchOp{m: bm.m, x: xb, e: eb}
		ps.ops = [2]*batchOp{&ps.a, &ps.b}
		e.batch.run(ps.ops[:]...)
	case !mont.ExpPair(am.m, bm.m, xa, xa, ea, xb, xb, eb):
		return nil, nil, engine.Cost{}, errNoPair() // not reached: CanPair said yes
	}
	ra = make([]byte, am.m.Size())
	rb = make([]byte, bm.m.Size())
	mont.FillBytes(ra, xa)
	mont.FillBytes(rb, xb)
	return ra, rb, engine.Cost{}, nil
}

// SelfTest compares the engine with math/big on inputs derived from a
// fixed seed, for 1024-, 2048- and 4096-bit moduli, in secret and public
// mode, checks that invalid moduli are refused, and runs the known-answer
// tests of the curve arithmetic (ec.SelfTest).
func (e *Engine) SelfTest(ctx context.Context) error {
	ctr := uint32(0)
	next := func(nbytes int) []byte {
		out := make([]byte, 0, nbytes+32)
		for len(out) < nbytes {
			var c [4]byte
			binary.BigEndian.PutUint32(c[:], ctr)
			ctr++
			h := sha256.Sum256(append([]byte("modexp-token soft self-test"), c[:]...))
			out = append(out, h[:]...)
		}
		return out[:nbytes]
	}
	for _, tc := range []struct {
		bits   int
		public bool
	}{{1024, false}, {2048, false}, {4096, true}} {
		nb := next(tc.bits / 8)
		nb[0] |= 0x80
		nb[len(nb)-1] |= 1
		n := new(big.Int).SetBytes(nb)
		base := new(big.Int).Mod(new(big.Int).SetBytes(next(tc.bits/8)), n)
		exp := next(tc.bits / 8)
		if tc.public {
			exp = []byte{1, 0, 1}
		}
		m, err := e.NewModulus(nb)
		if err != nil {
			return fmt.Errorf("soft: self-test %d bits: %w", tc.bits, err)
		}
		got, _, err := engine.ExpMode(ctx, e, m, base.Bytes(), exp, tc.public)
		if err != nil {
			return fmt.Errorf("soft: self-test %d bits: %w", tc.bits, err)
		}
		want := new(big.Int).Exp(base, new(big.Int).SetBytes(exp), n).FillBytes(make([]byte, len(nb)))
		if string(got) != string(want) {
			return fmt.Errorf("soft: self-test %d bits (public=%v): wrong result: %w", tc.bits, tc.public, engine.ErrDevice)
		}
	}
	if _, err := e.NewModulus([]byte{0x10, 0x00}); !errors.Is(err, engine.ErrInvalidModulus) {
		return fmt.Errorf("soft: self-test: even modulus accepted: %w", engine.ErrDevice)
	}
	if err := ec.SelfTest(); err != nil {
		return fmt.Errorf("soft: self-test: %w (%w)", err, engine.ErrDevice)
	}
	return nil
}

// Close does nothing: the software engine holds no resources.
func (e *Engine) Close() error { return nil }

// BatchWidth is [engine.BatchEngine]'s: mont.BatchLanes when the batch
// scheduler runs on a kernel that batches, else 0.
func (e *Engine) BatchWidth() int {
	if e.batch == nil || !mont.Batching() {
		return 0
	}
	return mont.BatchLanes
}

// BatchStats reports the batches the scheduler has run and the
// exponentiations (lanes) they held, since the engine was made; zeros when
// it does not batch. A lone call, which runs outside the queue, is in
// neither.
func (e *Engine) BatchStats() (batches, lanes int64) {
	if e.batch == nil {
		return 0, 0
	}
	return e.batch.batches.Load(), e.batch.lanes.Load()
}

var (
	_ engine.Engine      = (*Engine)(nil)
	_ engine.PairEngine  = (*Engine)(nil)
	_ engine.BatchEngine = (*Engine)(nil)
)

// pairScratch is the working memory of one ExpPair (or Exp, its first half): the two halves' limbs
// and their batch operations (batch.go), reused through pairs so that a
// pair allocates only its results. Each call takes its own; the batch
// scheduler holds an operation only until it is done, before run returns.
type pairScratch struct {
	xa, xb []uint64
	a, b   batchOp
	ops    [2]*batchOp
}

// pairs recycles pairScratch; putPair clears the limbs (the secret halves
// of a private operation) before they go back.
var pairs sync.Pool

// getPair returns a pairScratch with zeroed halves of ka and kb limbs.
func getPair(ka, kb int) *pairScratch {
	ps, _ := pairs.Get().(*pairScratch)
	if ps == nil {
		ps = &pairScratch{}
	}
	if cap(ps.xa) < ka {
		ps.xa = make([]uint64, ka)
	}
	if cap(ps.xb) < kb {
		ps.xb = make([]uint64, kb)
	}
	ps.xa, ps.xb = ps.xa[:ka], ps.xb[:kb]
	return ps
}

// putPair wipes ps and returns it to pairs.
func putPair(ps *pairScratch) {
	clear(ps.xa[:cap(ps.xa)])
	clear(ps.xb[:cap(ps.xb)])
	ps.a, ps.b, ps.ops = batchOp{}, batchOp{}, [2]*batchOp{}
	pairs.Put(ps)
}
