package chip

import (
	"context"
	"fmt"
	"math/big"

	"github.com/modexp-token/modexp-token/engine"
)

// Cryptech profile constants (research ENGINES.md §C).
const (
	cryptech2015Clock = 33.4e6 // effective clock fitted to the post's 4096-bit rows [I]
	cryptech2015Max   = 8192   // operands 32–8192 bits [C]
	cryptechA7Clock   = 90e6   // assumed core clock of the Alpha's FPGA [S]
	cryptechA7MinBits = 64     // MODULUS_BITS minimum [C]
)

// cryptech2015Montprod is the cycle count of one bit-serial Montgomery
// product over L words: per bit two control states, an L-word add, a
// stall, an L-word shift and a stall; then L+3 to emit [I, from the FSM].
func cryptech2015Montprod(L int) uint64 {
	l := uint64(L)
	return 32*l*(2*l+4) + l + 3
}

// cryptech2015Cycles is one exponentiation: the residue R² mod N (64L
// doublings of 3L cycles), three conversion products and two products per
// exponent bit over E words (secure mode: Z·P is always computed).
func cryptech2015Cycles(L, E int) uint64 {
	mp := cryptech2015Montprod(L)
	return 2*32*uint64(E)*mp + 3*mp + 192*uint64(L)*uint64(L)
}

// Cryptech simulates the 2015 Cryptech ModExp core ("modexp" v0.5x,
// Strömbergson/Magnusson) as libhal drove it in June 2015 (profile
// "cryptech", core=modexp2015).
type Cryptech struct {
	common
	clock float64
	pad   bool
}

// CryptechA7 simulates Cryptech's ModExpA7 core (Shatov): two Montgomery
// multipliers running the parallel right-to-left schedule, a native CRT
// mode (profile "cryptech,core=modexpa7"). Its timing is hypothetical: no
// figure is published.
type CryptechA7 struct {
	common
	clock      float64
	cores      int
	arrayPower int
	maxBits    int
}

var (
	_ engine.Engine    = (*Cryptech)(nil)
	_ engine.CRTEngine = (*CryptechA7)(nil)
)

func newCryptech(sp *Spec) (engine.Engine, error) {
	switch core := sp.str("core", "modexp2015"); core {
	case "modexp2015":
		c := &Cryptech{}
		if err := c.parseCommon(sp); err != nil {
			return nil, err
		}
		var err error
		if c.clock, err = sp.float("clock", cryptech2015Clock, 1e3, 1e9); err != nil {
			return nil, err
		}
		c.pad = true
		if sp.Has("pad") {
			if c.pad, err = sp.bool("pad"); err != nil {
				return nil, err
			}
		}
		return c, nil
	case "modexpa7":
		c := &CryptechA7{}
		if err := c.parseCommon(sp); err != nil {
			return nil, err
		}
		var err error
		if c.clock, err = sp.float("clock", cryptechA7Clock, 1e3, 1e9); err != nil {
			return nil, err
		}
		if c.cores, err = sp.int("cores", 2, 1, 2); err != nil {
			return nil, err
		}
		def := 5
		if c.cores == 2 {
			def = 4 // two cores fit the Alpha's 740 DSP slices only at power 4 [C]
		}
		if c.arrayPower, err = sp.int("array", def, 1, 6); err != nil {
			return nil, err
		}
		aw, err := sp.int("addr_width", 7, 2, 8)
		if err != nil {
			return nil, err
		}
		c.maxBits = 32 << aw
		if c.arrayPower > aw-1 {
			return nil, fmt.Errorf("chip: cryptech: array=%d exceeds addr_width-1=%d", c.arrayPower, aw-1)
		}
		return c, nil
	default:
		return nil, fmt.Errorf("chip: cryptech: core=%q: want modexp2015 or modexpa7", core)
	}
}

// Info describes the simulator.
func (c *Cryptech) Info() engine.Info {
	return engine.Info{Name: c.name, Model: "Cryptech 2015", MaxModulusBits: cryptech2015Max - 32, Simulated: true, Cores: 1}
}

// words returns L, the working length of the 2015 core for an n-bit
// modulus: libhal's io_len workaround gives every operand one word more
// than the modulus needs [C].
func cryptech2015Words(n int) int { return (n+31)/32 + 1 }

// NewModulus prepares an odd modulus of up to 8160 bits (8192 with the
// extra word).
func (c *Cryptech) NewModulus(n []byte) (engine.Modulus, error) {
	m, err := parseModulus("cryptech", n, 2, cryptech2015Max-32)
	if err != nil {
		return nil, err
	}
	return &modulus{n: m, b: m.Bytes(), owner: c, pre: newBitSerial(m, cryptech2015Words(m.BitLen()))}, nil
}

// bitSerial is the 2015 core's Montgomery arithmetic: R = 2^(32L), no
// final subtraction (the extra word keeps every value below 2N); R² mod N
// (r2) is computed in-core by 64L doublings.
type bitSerial struct{ montMod }

func newBitSerial(n *big.Int, L int) *bitSerial { return &bitSerial{*newMontModWords(n, L)} }

// montprod is the bit-serial product: for each of the 32L bits b_i of B,
// s += b_i·A; if s is odd, s += N; s >>= 1. The parity bits q_i form
// u = (−A·B·N⁻¹) mod R, so the loop ends with exactly (A·B + u·N)/R,
// redc's value, which is computed here in one step (the tests check it
// against the loop).
func (b *bitSerial) montprod(x, y *big.Int) *big.Int { return b.redc(x, y) }

// exp is the core's right-to-left loop in secure mode over 32E exponent bits.
func (b *bitSerial) exp(ctx context.Context, m, e *big.Int, E int) (*big.Int, error) {
	P := b.montprod(m, b.r2)
	Z := b.montprod(big.NewInt(1), b.r2)
	for i := 0; i < 32*E; i++ {
		if i%128 == 127 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		t := b.montprod(Z, P)
		if e.Bit(i) == 1 {
			Z = t
		}
		P = b.montprod(P, P)
	}
	return b.montprod(Z, big.NewInt(1)), nil
}

func ownModulus(e engine.Engine, m engine.Modulus) (*modulus, error) {
	if mm, ok := m.(*modulus); ok && mm.owner == e {
		return mm, nil
	}
	if m == nil {
		return nil, fmt.Errorf("chip: nil modulus: %w", engine.ErrInvalidModulus)
	}
	mm, err := e.NewModulus(m.Bytes())
	if err != nil {
		return nil, err
	}
	return mm.(*modulus), nil
}

// expMode runs one exponentiation. With pad (the June 2015 driver) the
// exponent is padded to (at least) the operand length L, so public and private
// exponents take the same time, as the post measured; pad=false is the
// later short-exponent path.
func (c *Cryptech) expMode(ctx context.Context, m engine.Modulus, base, exp []byte, public bool) ([]byte, engine.Cost, error) {
	mod, err := ownModulus(c, m)
	if err != nil {
		return nil, engine.Cost{}, err
	}
	bs := mod.pre.(*bitSerial)
	x, err := baseBelow("cryptech", base, mod.n)
	if err != nil {
		return nil, engine.Cost{}, err
	}
	e := new(big.Int).SetBytes(exp)
	E := max((e.BitLen()+31)/32, 1)
	if c.pad {
		E = max(E, bs.L)
	}
	if 32*E > cryptech2015Max {
		return nil, engine.Cost{}, fmt.Errorf("chip: cryptech: %d-bit exponent exceeds %d bits: %w", e.BitLen(), cryptech2015Max, engine.ErrOperandTooLarge)
	}
	cyc := cryptech2015Cycles(bs.L, E)
	cost := engine.Cost{Cycles: cyc, Device: seconds(float64(cyc), c.clock)}
	bits := mod.n.BitLen()
	out := make([]byte, mod.size())
	if !c.zeroes(bits) {
		z, err := bs.exp(ctx, x, e, E)
		if err != nil {
			return nil, engine.Cost{}, err
		}
		out = fixed(z, mod.size())
	}
	c.inject(out, bits)
	return out, cost, c.settle(ctx, cost)
}

// Exp is [engine.Engine]'s: the exponent is secret.
func (c *Cryptech) Exp(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return c.expMode(ctx, m, base, exp, false)
}

// ExpVarTime is [engine.Engine]'s: the exponent is public.
func (c *Cryptech) ExpVarTime(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return c.expMode(ctx, m, base, exp, true)
}

// SelfTest runs known-answer exponentiations at 256 and 1024 bits
// (answers from math/big). Note that, like the tests of 2015, a fault
// above 1024 bits passes it: the token must check every result.
func (c *Cryptech) SelfTest(ctx context.Context) error {
	return selfTestExp(ctx, c, "cryptech", []int{256, 1024})
}

// Close releases nothing.
func (c *Cryptech) Close() error { return nil }

// ---- ModExpA7 ----

// Info describes the simulator.
func (c *CryptechA7) Info() engine.Info {
	return engine.Info{Name: c.name, Model: "Cryptech A7", MaxModulusBits: c.maxBits, Simulated: true, Cores: c.cores}
}

// NewModulus prepares an odd modulus of 64 bits up to the operand buffer.
func (c *CryptechA7) NewModulus(n []byte) (engine.Modulus, error) {
	m, err := parseModulus("cryptech", n, cryptechA7MinBits, c.maxBits)
	if err != nil {
		return nil, err
	}
	return &modulus{n: m, b: m.Bytes(), owner: c, pre: newMontMod(m)}, nil
}

// a7Product is the hypothetical cycle count of one Montgomery product:
// 2L² word multiply-accumulates spread over 2^power processing elements,
// an L-word add and an L-word subtract, and a pipeline fill [I].
func (c *CryptechA7) a7Product(L int) uint64 {
	pe := 1 << c.arrayPower
	return uint64((2*L*L+pe-1)/pe + 2*L + 32)
}

// expA7 is the parallel right-to-left schedule: per exponent bit the two
// multipliers compute Z·P and P·P from the old P in one slot.
func expA7(ctx context.Context, mm *montMod, x, e *big.Int, nbits int) (*big.Int, error) {
	P := mm.mont(x, mm.r2)
	Z := mm.mont(big.NewInt(1), mm.r2)
	for i := 0; i < nbits; i++ {
		if i%256 == 255 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		t := mm.mont(Z, P)
		if e.Bit(i) == 1 {
			Z = t
		}
		P = mm.mont(P, P)
	}
	return mm.mont(Z, big.NewInt(1)), nil
}

// expMode runs one exponentiation over EXPONENT_BITS = the modulus length for
// a secret exponent, the exponent's own length for a public one.
func (c *CryptechA7) expMode(ctx context.Context, m engine.Modulus, base, exp []byte, public bool) ([]byte, engine.Cost, error) {
	mod, err := ownModulus(c, m)
	if err != nil {
		return nil, engine.Cost{}, err
	}
	mm := mod.pre.(*montMod)
	x, err := baseBelow("cryptech", base, mod.n)
	if err != nil {
		return nil, engine.Cost{}, err
	}
	e := new(big.Int).SetBytes(exp)
	if e.BitLen() > c.maxBits {
		return nil, engine.Cost{}, fmt.Errorf("chip: cryptech: %d-bit exponent exceeds %d bits: %w", e.BitLen(), c.maxBits, engine.ErrOperandTooLarge)
	}
	nbits := max(e.BitLen(), mod.n.BitLen())
	if public {
		nbits = max(e.BitLen(), 2)
	}
	cost := c.cost(mm.L, nbits, 0)
	bits := mod.n.BitLen()
	out := make([]byte, mod.size())
	if !c.zeroes(bits) {
		z, err := expA7(ctx, mm, x, e, nbits)
		if err != nil {
			return nil, engine.Cost{}, err
		}
		out = fixed(z, mod.size())
	}
	c.inject(out, bits)
	return out, cost, c.settle(ctx, cost)
}

// Exp is [engine.Engine]'s: the exponent is secret.
func (c *CryptechA7) Exp(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return c.expMode(ctx, m, base, exp, false)
}

// ExpVarTime is [engine.Engine]'s: the exponent is public.
func (c *CryptechA7) ExpVarTime(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return c.expMode(ctx, m, base, exp, true)
}

// cost: conversions in and out plus one slot per exponent bit, and extra
// products for the in-core reduction of a double-length CRT message.
func (c *CryptechA7) cost(L, nbits, extra int) engine.Cost {
	cyc := uint64(nbits+2+extra) * c.a7Product(L)
	return engine.Cost{Cycles: cyc, Device: seconds(float64(cyc), c.clock)}
}

// ExpCRT runs the two half exponentiations in CRT mode (the message, up
// to twice the half's length, is reduced in-core), on two cores at once
// when cores=2, and recombines them as libhal does (Garner, in software,
// not charged). Cycles are the sum over cores; Device the elapsed time.
func (c *CryptechA7) ExpCRT(ctx context.Context, k *engine.CRTKey, base []byte) ([]byte, engine.Cost, error) {
	if k == nil {
		return nil, engine.Cost{}, fmt.Errorf("chip: cryptech: CRT: nil key: %w", engine.ErrInvalidModulus)
	}
	P, Q := new(big.Int).SetBytes(k.P), new(big.Int).SetBytes(k.Q)
	for _, f := range []*big.Int{P, Q} {
		if f.Bit(0) == 0 || f.Cmp(big.NewInt(1)) <= 0 {
			return nil, engine.Cost{}, fmt.Errorf("chip: cryptech: CRT: prime factor even or < 2: %w", engine.ErrInvalidModulus)
		}
		if f.BitLen() < cryptechA7MinBits || f.BitLen() > c.maxBits/2 {
			return nil, engine.Cost{}, fmt.Errorf("chip: cryptech: CRT: %d-bit prime outside %d–%d bits (CRT mode halves the operand buffer): %w", f.BitLen(), cryptechA7MinBits, c.maxBits/2, engine.ErrOperandTooLarge)
		}
	}
	N := new(big.Int).Mul(P, Q)
	x := new(big.Int).SetBytes(base)
	if x.Cmp(N) >= 0 {
		return nil, engine.Cost{}, fmt.Errorf("chip: cryptech: CRT: base not below p·q: %w", engine.ErrOperandTooLarge)
	}
	var halves [2]*big.Int
	var cost [2]engine.Cost
	for i, h := range []struct{ f, d []byte }{{k.P, k.DP}, {k.Q, k.DQ}} {
		f, d := new(big.Int).SetBytes(h.f), new(big.Int).SetBytes(h.d)
		mm := newMontMod(f)
		if d.BitLen() > c.maxBits/2 {
			return nil, engine.Cost{}, fmt.Errorf("chip: cryptech: CRT: half exponent too long: %w", engine.ErrOperandTooLarge)
		}
		nbits := max(d.BitLen(), f.BitLen())
		z, err := expA7(ctx, mm, new(big.Int).Mod(x, f), d, nbits)
		if err != nil {
			return nil, engine.Cost{}, err
		}
		halves[i], cost[i] = z, c.cost(mm.L, nbits, 2)
	}
	total := cost[0].Add(cost[1])
	if c.cores >= 2 {
		total.Device = max(cost[0].Device, cost[1].Device)
	}
	h := new(big.Int).Sub(halves[0], halves[1])
	h.Mul(h, new(big.Int).SetBytes(k.QInv))
	h.Mod(h, P)
	h.Mul(h, Q)
	h.Add(h, halves[1])
	out := fixed(h, (N.BitLen()+7)/8)
	c.inject(out, N.BitLen())
	return out, total, c.settle(ctx, total)
}

// SelfTest runs known-answer exponentiations (answers from math/big).
func (c *CryptechA7) SelfTest(ctx context.Context) error {
	return selfTestExp(ctx, c, "cryptech", []int{256, 1024})
}

// Close releases nothing.
func (c *CryptechA7) Close() error { return nil }
