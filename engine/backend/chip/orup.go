package chip

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"

	"github.com/modexp-token/modexp-token/engine"
)

// The thesis processor's published constants ([T] in docs/ENGINES.md).
const (
	OrupDesignBits  = 561   // "designed to use 561 bit keys"
	orupDesignNi    = 115   // radix-32 digits of the 561-bit design
	orupDesignNj    = 561   // exponent bits of the 561-bit design
	orupBusyWatts   = 2.5   // Table 4.5, busy at 25 MHz, 5.0 V
	orupPowerFreq   = 25e6  // frequency of the Table 4.5 measurement
	orupPowerVdd    = 5.0   // supply of the Table 4.5 measurement
	orupScaledMax   = 8192  // largest modulus of the labelled extrapolation
	orupQDBits      = 10    // leading modulus bits the quotient unit compares [I]
	orupRadixBits   = 5     // radix 2^5
	orupFaultPerMHz = 100.0 // bit errors per multiplication per unit of relative overclock [I]
)

// orupFmax is the maximal clock of chip 66 against supply voltage: Fig. 4.16
// at 4.5 and 5.5 V, Table 4.4 at 5.0 V; linear in between [T/I].
func orupFmax(vdd float64) float64 {
	if vdd <= 5.0 {
		return 24.0e6 + (vdd-4.5)/0.5*3.0e6
	}
	return 27.0e6 + (vdd-5.0)/0.5*2.5e6
}

// orupNwMin is the minimal number of adder wait states: 7 below 5.0 V,
// 6 at or above (chip 66, §4.4.5 item 3) [T].
func orupNwMin(vdd float64) int {
	if vdd < 5.0 {
		return 7
	}
	return 6
}

// orupCycles is eq. (4.5) in clock periods: 2·(ni+nw)·nj.
func orupCycles(ni, nw, nj int) uint64 { return 2 * uint64(ni+nw) * uint64(nj) }

// orupAutoNi is the digit count the thesis uses for an n-bit design:
// ⌈n/5⌉+2 gives 115 for 561 and 105 for 512 [I].
func orupAutoNi(n int) int { return (n+orupRadixBits-1)/orupRadixBits + 2 }

// orupMinNi is the fewest digits that hold a partially reduced operand
// (< 2m, so n+1 bits).
func orupMinNi(n int) int { return (n + 1 + orupRadixBits - 1) / orupRadixBits }

// Orup is the simulator of the 1995 VLSI modular exponentiation processor
// (profile "orup561"). It implements [engine.Engine].
type Orup struct {
	common
	f, vdd float64
	nw     int
	ni, nj int // 0: set per operation (auto)
	scaled bool
	lambda float64 // expected bit errors per multiplication (physical faults)
}

var _ engine.Engine = (*Orup)(nil)

func newOrup(sp *Spec) (*Orup, error) {
	o := &Orup{}
	if err := o.parseCommon(sp); err != nil {
		return nil, err
	}
	var err error
	if o.scaled, err = sp.bool("scaled"); err != nil {
		return nil, err
	}
	if o.f, err = sp.float("f", 25e6, 1e3, 200e6); err != nil {
		return nil, err
	}
	if o.vdd, err = sp.float("vdd", 5.0, 4.5, 5.5); err != nil {
		return nil, fmt.Errorf("%w (the thesis measured 4.5–5.5 V)", err)
	}
	if o.nw, err = sp.int("nw", 7, 0, 63); err != nil {
		return nil, err
	}
	maxNi, maxNj := orupDesignNi, orupDesignNj
	if o.scaled {
		maxNi, maxNj = orupAutoNi(orupScaledMax), 1<<20
	}
	if o.ni, err = sp.int("ni", 0, 1, maxNi); err != nil {
		return nil, err
	}
	if o.nj, err = sp.int("nj", 0, 1, maxNj); err != nil {
		return nil, err
	}
	if over := o.f/orupFmax(o.vdd) - 1; over > 0 {
		o.lambda += orupFaultPerMHz * over
	}
	if d := orupNwMin(o.vdd) - o.nw; d > 0 {
		o.lambda += 2 * float64(d)
	}
	return o, nil
}

// Info describes the simulator.
func (o *Orup) Info() engine.Info {
	in := engine.Info{Name: o.name, Model: "Orup561", MaxModulusBits: OrupDesignBits, Simulated: true, Cores: 1}
	if o.scaled {
		in.Model, in.MaxModulusBits = "Orup561 scaled", orupScaledMax
	}
	return in
}

// InSpec reports whether the physical settings are within what the thesis
// measured to work (f ≤ fmax(Vdd), nw ≥ nw_min(Vdd)). Outside, results
// carry random bit errors.
func (o *Orup) InSpec() bool { return o.lambda == 0 }

// orupMod is the prepared modulus: words and the quotient unit's constants.
type orupMod struct {
	n     int      // bits
	k     int      // words of the working registers
	m     []uint64 // modulus, k words
	sh    uint     // position of the leading bits the quotient unit sees
	div   uint64   // (m >> sh) + 1, or m itself for tiny moduli
	exact bool
}

// NewModulus prepares an odd modulus of at most 561 bits (8192 when scaled).
func (o *Orup) NewModulus(n []byte) (engine.Modulus, error) {
	max := OrupDesignBits
	if o.scaled {
		max = orupScaledMax
	}
	m, err := parseModulus("orup561", n, 2, 0)
	if err != nil {
		return nil, err
	}
	if m.BitLen() > max {
		hint := " (RSA keys above 561 bits run as CRT halves; add ,scaled for a labelled extrapolation)"
		if o.scaled {
			hint = ""
		}
		return nil, fmt.Errorf("chip: orup561: %d-bit modulus exceeds the chip's %d bits%s: %w", m.BitLen(), max, hint, engine.ErrOperandTooLarge)
	}
	return &modulus{n: m, b: m.Bytes(), owner: o, pre: newOrupMod(m)}, nil
}

func newOrupMod(m *big.Int) *orupMod {
	n := m.BitLen()
	p := &orupMod{n: n, k: (n + 8 + 63) / 64}
	p.m = toWords(m, p.k)
	if n <= orupQDBits {
		p.exact, p.div = true, m.Uint64()
	} else {
		p.sh = uint(n - orupQDBits)
		p.div = new(big.Int).Rsh(m, p.sh).Uint64() + 1
	}
	return p
}

func toWords(x *big.Int, k int) []uint64 {
	w := make([]uint64, k)
	for i, d := range x.Bits() {
		if i < k {
			w[i] = uint64(d)
		}
	}
	return w
}

func fromWords(w []uint64) *big.Int {
	b := make([]big.Word, len(w))
	for i, d := range w {
		b[i] = big.Word(d)
	}
	return new(big.Int).SetBits(b)
}

// digit returns radix-32 digit i of a.
func digit(a []uint64, i int) uint64 {
	bit := orupRadixBits * i
	w, off := bit/64, uint(bit%64)
	if w >= len(a) {
		return 0
	}
	v := a[w] >> off
	if off > 64-orupRadixBits && w+1 < len(a) {
		v |= a[w+1] << (64 - off)
	}
	return v & (1<<orupRadixBits - 1)
}

// mul is the chip's modular multiplication: the multiplier a is read most
// significant radix-32 digit first in ni digits; each recursion forms
// T = 32·S + a_i·B, the quotient unit estimates q from the leading bits of
// T and m (never too large, at most one too small), and S = T − q·m stays
// partially reduced, 0 ≤ S < 2m. z must not alias a or b.
func (p *orupMod) mul(z, a, b []uint64, ni int) {
	clear(z)
	k := p.k
	for i := ni - 1; i >= 0; i-- {
		d := digit(a, i)
		var c, prev uint64
		for j := 0; j < k; j++ {
			sj := z[j]
			sh := sj<<orupRadixBits | prev>>(64-orupRadixBits)
			prev = sj
			hi, lo := bits.Mul64(b[j], d)
			lo, c1 := bits.Add64(lo, sh, 0)
			lo, c2 := bits.Add64(lo, c, 0)
			c = hi + c1 + c2
			z[j] = lo
		}
		q := p.quotient(z)
		var carry, borrow uint64
		for j := 0; j < k; j++ {
			hi, lo := bits.Mul64(p.m[j], q)
			lo, c1 := bits.Add64(lo, carry, 0)
			carry = hi + c1
			z[j], borrow = bits.Sub64(z[j], lo, borrow)
		}
	}
}

// quotient is the quotient determination unit: it sees only the leading
// bits of T (from position sh up) and divides by the leading bits of m
// plus one, so the estimate never exceeds ⌊T/m⌋.
func (p *orupMod) quotient(t []uint64) uint64 {
	w, off := int(p.sh/64), p.sh%64
	top := t[w] >> off
	if off > 0 && w+1 < len(t) {
		top |= t[w+1] << (64 - off)
	}
	return top / p.div
}

// flip injects Poisson(lambda) random bit errors into a register holding
// a partially reduced value (n+1 bits).
func (p *orupMod) flip(r *rand.Rand, lambda float64, z []uint64) {
	if lambda <= 0 {
		return
	}
	l, k, prod := math.Exp(-math.Min(lambda, 60)), 0, r.Float64()
	for prod > l && k < 64 {
		k++
		prod *= r.Float64()
	}
	for ; k > 0; k-- {
		i := r.IntN(p.n + 1)
		z[i/64] ^= 1 << (i % 64)
	}
}

// expMode computes base^exp mod m by parallel right-to-left binary
// exponentiation: each exponent bit takes one slot in which Z·P and P·P
// are both computed from the old P; Z takes the product only when the bit
// is set, so every slot costs the same. nj slots: the modulus length for a
// secret exponent (the exponent is padded), the exponent's length for a
// public one, or the nj option.
func (o *Orup) expMode(ctx context.Context, m engine.Modulus, base, exp []byte, public bool) ([]byte, engine.Cost, error) {
	mod, err := o.own(m)
	if err != nil {
		return nil, engine.Cost{}, err
	}
	p := mod.pre.(*orupMod)
	x, err := baseBelow("orup561", base, mod.n)
	if err != nil {
		return nil, engine.Cost{}, err
	}
	e := new(big.Int).SetBytes(exp)
	ni, nj, err := o.params(p.n, e.BitLen(), public)
	if err != nil {
		return nil, engine.Cost{}, err
	}
	cost := o.cost(ni, nj)
	out := make([]byte, mod.size())
	if !o.zeroes(p.n) {
		z, err := o.expWords(ctx, p, x, e, ni, nj)
		if err != nil {
			return nil, engine.Cost{}, err
		}
		out = fixed(z, mod.size())
	}
	o.inject(out, p.n)
	return out, cost, o.settle(ctx, cost)
}

// Exp is [engine.Engine]'s: the exponent is secret.
func (o *Orup) Exp(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return o.expMode(ctx, m, base, exp, false)
}

// ExpVarTime is [engine.Engine]'s: the exponent is public.
func (o *Orup) ExpVarTime(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return o.expMode(ctx, m, base, exp, true)
}

func (o *Orup) own(m engine.Modulus) (*modulus, error) {
	if mm, ok := m.(*modulus); ok && mm.owner == o {
		return mm, nil
	}
	if m == nil {
		return nil, fmt.Errorf("chip: orup561: nil modulus: %w", engine.ErrInvalidModulus)
	}
	mm, err := o.NewModulus(m.Bytes())
	if err != nil {
		return nil, err
	}
	return mm.(*modulus), nil
}

// params resolves ni and nj for an n-bit modulus and an ebits-long exponent.
func (o *Orup) params(n, ebits int, public bool) (ni, nj int, err error) {
	ni = o.ni
	if ni == 0 {
		ni = orupAutoNi(n)
	}
	if min := orupMinNi(n); ni < min {
		return 0, 0, fmt.Errorf("chip: orup561: ni=%d digits cannot hold a partially reduced %d-bit operand (needs %d): %w", ni, n, min, engine.ErrOperandTooLarge)
	}
	nj = o.nj
	if nj == 0 {
		nj = max(n, ebits)
		if public {
			nj = max(ebits, 1)
		}
	}
	if ebits > nj {
		return 0, 0, fmt.Errorf("chip: orup561: %d-bit exponent exceeds nj=%d: %w", ebits, nj, engine.ErrOperandTooLarge)
	}
	if !o.scaled && nj > orupDesignNj {
		return 0, 0, fmt.Errorf("chip: orup561: %d-bit exponent exceeds the chip's %d bits: %w", nj, orupDesignNj, engine.ErrOperandTooLarge)
	}
	return ni, nj, nil
}

// cost is eq. (4.5) with the energy of Table 4.5's busy power, scaled as
// dynamic power (∝ f·Vdd²) [I].
func (o *Orup) cost(ni, nj int) engine.Cost {
	cycles := orupCycles(ni, o.nw, nj)
	t := float64(cycles) / o.f
	watts := orupBusyWatts * (o.f / orupPowerFreq) * (o.vdd / orupPowerVdd) * (o.vdd / orupPowerVdd)
	return engine.Cost{Cycles: cycles, Device: seconds(float64(cycles), o.f), Energy: watts * t}
}

func (o *Orup) expWords(ctx context.Context, p *orupMod, x, e *big.Int, ni, nj int) (*big.Int, error) {
	k := p.k
	P, Z := toWords(x, k), make([]uint64, k)
	Z[0] = 1
	pn, zn := make([]uint64, k), make([]uint64, k)
	var r *rand.Rand
	if o.lambda > 0 {
		r = o.rng()
	}
	for j := 0; j < nj; j++ {
		if j%64 == 63 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		p.mul(zn, Z, P, ni)
		p.mul(pn, P, P, ni)
		if r != nil {
			p.flip(r, o.lambda, zn)
			p.flip(r, o.lambda, pn)
		}
		if e.Bit(j) == 1 {
			Z, zn = zn, Z
		}
		P, pn = pn, P
	}
	z := fromWords(Z)
	m := fromWords(p.m)
	if z.Cmp(m) >= 0 { // the final conditional subtraction
		z.Sub(z, m)
	}
	return z, nil
}

// SelfTest runs known-answer exponentiations (answers from math/big) at
// two sizes; a chip driven out of spec fails it with engine.ErrDevice.
func (o *Orup) SelfTest(ctx context.Context) error {
	return selfTestExp(ctx, o, "orup561", []int{128, min(o.Info().MaxModulusBits, OrupDesignBits)})
}

// Close releases nothing.
func (o *Orup) Close() error { return nil }
