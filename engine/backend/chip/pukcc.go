package chip

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"fmt"
	"math"
	"math/big"

	"github.com/modexp-token/modexp-token/engine"
)

// PUKCC profile constants: the fitted cycle model of research ENGINES.md
// §B.2 ([I]: fitted to the datasheet's [D] timing tables).
const (
	pukccClock    = 120e6   // CPU and PUKCC clock of the datasheet tables [D]
	pukccMA       = 2.001   // m(L) = a·L² + b·L + c cycles per modular multiplication
	pukccMB       = 7.047   //
	pukccMC       = 207.4   //
	pukccFastK    = 27.5    // Fast (public) mode: modmul-equivalents per 32-bit exponent word
	pukccGenE     = 27.9    // ZpEcDsaGenerateFast: modmul-equivalents per field bit
	pukccVerE     = 17.7    // ZpEcDsaQuickVerify: modmul-equivalents per field bit
	pukccMinBits  = 96      // 12-byte minimum of ExpMod [D]
	pukccPrimeMin = 192     // CRT: a prime of 24 bytes at least [D]
	pukccPrimeMax = 3584    // CRT: a prime of 448 bytes at most [D]
	pukccECMulMax = 264 * 8 // ZpEccMulFast modulus limit [D]
	pukccGenMax   = 220 * 8 // ZpEcDsaGenerateFast [D]
	pukccVerMax   = 188 * 8 // ZpEcDsaVerify [D]
)

// Largest modulus per window size W=1..4 (index W-1) [D: Tables 43-54, 43-66].
var (
	pukccExpLimit = [2][4]int{{4608, 4032, 3200, 2272}, {5376, 4608, 3584, 2464}} // [exponent in Crypto RAM, elsewhere]
	pukccCRTLimit = [2][4]int{{5824, 5376, 4928, 4608}, {7168, 6464, 5824, 5376}}
)

// pukccMM is m(L), the fitted cycles of one L-word Montgomery product.
func pukccMM(L int) float64 {
	l := float64(L)
	return pukccMA*l*l + pukccMB*l + pukccMC
}

// PUKCC simulates Microchip's PUKCC public-key coprocessor as driven by
// PUKCL (profile "pukcc"). It implements [engine.CRTEngine] and
// [engine.ECEngine].
type PUKCC struct {
	common
	f      float64
	window int // 1..4, 0 = largest the size limits allow
	ram    int // 0: exponent in Crypto RAM, 1: elsewhere
}

var (
	_ engine.CRTEngine = (*PUKCC)(nil)
	_ engine.ECEngine  = (*PUKCC)(nil)
)

func newPUKCC(sp *Spec) (*PUKCC, error) {
	p := &PUKCC{}
	if err := p.parseCommon(sp); err != nil {
		return nil, err
	}
	var err error
	if p.f, err = sp.float("f", pukccClock, 1e6, 1e9); err != nil {
		return nil, err
	}
	if p.window, err = sp.int("w", 0, 1, 4); err != nil {
		return nil, err
	}
	switch v := sp.str("expram", "crypto"); v {
	case "crypto":
	case "other":
		p.ram = 1
	default:
		return nil, fmt.Errorf("chip: pukcc: expram=%q: want crypto or other", v)
	}
	return p, nil
}

// Info describes the simulator. MaxModulusBits is ExpMod's limit for the
// configured window (CRT accepts larger moduli, see the package doc).
func (p *PUKCC) Info() engine.Info {
	w := max(p.window, 1)
	return engine.Info{Name: p.name, Model: "PUKCC sim", MaxModulusBits: pukccExpLimit[p.ram][w-1],
		Simulated: true, Curves: []string{"P-256", "P-384", "P-521"}, Cores: 1}
}

// chooseWindow returns the configured window, or the largest one whose
// limit admits bits; a configured window too small for bits is refused.
func (p *PUKCC) chooseWindow(service string, bits int, limits [4]int) (int, error) {
	if p.window != 0 {
		if bits > limits[p.window-1] {
			return 0, &StatusError{Service: service, Status: StatusParamWrongLength,
				Detail: fmt.Sprintf("%d-bit modulus exceeds %d bits at W=%d%s", bits, limits[p.window-1], p.window, p.ramText()), Err: engine.ErrOperandTooLarge}
		}
		return p.window, nil
	}
	for w := 4; w >= 1; w-- {
		if bits <= limits[w-1] {
			return w, nil
		}
	}
	return 0, &StatusError{Service: service, Status: StatusParamWrongLength,
		Detail: fmt.Sprintf("%d-bit modulus exceeds %d bits even at W=1%s", bits, limits[0], p.ramText()), Err: engine.ErrOperandTooLarge}
}

func (p *PUKCC) ramText() string {
	if p.ram == 0 {
		return " with the exponent in Crypto RAM"
	}
	return " with the exponent outside Crypto RAM"
}

// montMod is a prepared Montgomery modulus: R = 2^(32L).
type montMod struct {
	m, r2, mprime, mask *big.Int
	L                   int
}

func newMontMod(m *big.Int) *montMod { return newMontModWords(m, (m.BitLen()+31)/32) }

// newMontModWords prepares m with R = 2^(32L), L ≥ m's 32-bit words.
func newMontModWords(m *big.Int, L int) *montMod {
	r := new(big.Int).Lsh(big.NewInt(1), uint(32*L))
	mm := &montMod{m: m, L: L, mask: new(big.Int).Sub(r, big.NewInt(1))}
	mm.r2 = new(big.Int).Mul(r, r)
	mm.r2.Mod(mm.r2, m)
	mm.mprime = new(big.Int).ModInverse(m, r)
	mm.mprime.Sub(r, mm.mprime) // −m⁻¹ mod R
	return mm
}

// redc is (a·b + u·m)/R with u = (a·b·m') mod R, exact: the Montgomery
// product before any final subtraction (below 2m when a·b < m·R).
func (mm *montMod) redc(a, b *big.Int) *big.Int {
	t := new(big.Int).Mul(a, b)
	u := new(big.Int).And(t, mm.mask)
	u.Mul(u, mm.mprime)
	u.And(u, mm.mask)
	u.Mul(u, mm.m)
	t.Add(t, u)
	return t.Rsh(t, uint(32*mm.L))
}

// mont is the Montgomery product a·b·R⁻¹ mod m as PUKCC's word-serial
// multiplier computes it: the L quotient words it derives one by one make
// up u = (a·b·m') mod R, so the result equals redc's (a·b + u·m)/R,
// followed by the final subtraction that keeps it below m.
func (mm *montMod) mont(a, b *big.Int) *big.Int {
	t := mm.redc(a, b)
	if t.Cmp(mm.m) >= 0 {
		t.Sub(t, mm.m)
	}
	return t
}

// NewModulus prepares an odd modulus (RedMod setup: R² mod m).
func (p *PUKCC) NewModulus(n []byte) (engine.Modulus, error) {
	m, err := parseModulus("pukcc", n, 2, 0)
	if err != nil {
		return nil, &StatusError{Service: "RedMod", Status: StatusMalformedModulus, Detail: "setup", Err: engine.ErrInvalidModulus}
	}
	if m.BitLen() < pukccMinBits {
		return nil, &StatusError{Service: "RedMod", Status: StatusParamWrongLength,
			Detail: fmt.Sprintf("%d-bit modulus is below the 96-bit minimum", m.BitLen()), Err: engine.ErrUnsupported}
	}
	if limit := pukccCRTLimit[p.ram][0]; m.BitLen() > limit {
		return nil, &StatusError{Service: "RedMod", Status: StatusParamWrongLength,
			Detail: fmt.Sprintf("%d-bit modulus exceeds every service's limit (%d bits)", m.BitLen(), limit), Err: engine.ErrOperandTooLarge}
	}
	return &modulus{n: m, b: m.Bytes(), owner: p, pre: newMontMod(m)}, nil
}

func (p *PUKCC) own(m engine.Modulus) (*modulus, error) {
	if mm, ok := m.(*modulus); ok && mm.owner == p {
		return mm, nil
	}
	if m == nil {
		return nil, fmt.Errorf("chip: pukcc: nil modulus: %w", engine.ErrInvalidModulus)
	}
	mm, err := p.NewModulus(m.Bytes())
	if err != nil {
		return nil, err
	}
	return mm.(*modulus), nil
}

// expOps counts the Montgomery products of one exponentiation.
type expOps struct{ conv, table, sqr, mul int }

func (o expOps) total() int { return o.conv + o.table + o.sqr + o.mul }

// slidingExp computes x^e mod m by Montgomery multiplication and the
// sliding window of width w over an odd-power table {x, x³, …, x^(2^w−1)}
// (2^(w−1) entries, as PUKCL's workspace sizes imply). The exponent is
// scanned over nbits bits from the top, every position squared (the
// "Regular" option); a multiplication follows each window.
func slidingExp(ctx context.Context, mm *montMod, x, e *big.Int, w, nbits int) (*big.Int, expOps, error) {
	var ops expOps
	xm := mm.mont(x, mm.r2)
	ops.conv++
	tbl := []*big.Int{xm}
	if w > 1 {
		x2 := mm.mont(xm, xm)
		ops.table++
		for i := 1; i < 1<<(w-1); i++ {
			tbl = append(tbl, mm.mont(tbl[i-1], x2))
			ops.table++
		}
	}
	acc := new(big.Int).Mod(new(big.Int).Lsh(big.NewInt(1), uint(32*mm.L)), mm.m) // Montgomery 1
	for i := nbits - 1; i >= 0; {
		if ops.sqr%256 == 255 {
			if err := ctx.Err(); err != nil {
				return nil, ops, err
			}
		}
		if e.Bit(i) == 0 {
			acc = mm.mont(acc, acc)
			ops.sqr++
			i--
			continue
		}
		l := min(w, i+1)
		for e.Bit(i-l+1) == 0 {
			l--
		}
		v := 0
		for j := i; j > i-l; j-- {
			v = v<<1 | int(e.Bit(j))
		}
		for range l {
			acc = mm.mont(acc, acc)
			ops.sqr++
		}
		acc = mm.mont(acc, tbl[(v-1)/2])
		ops.mul++
		i -= l
	}
	ops.conv++
	return mm.mont(acc, big.NewInt(1)), ops, nil
}

// fastExp is PUKCL's Fast option for public exponents: left-to-right
// binary (W=1) from the exponent's leading bit.
func fastExp(mm *montMod, x, e *big.Int) *big.Int {
	if e.Sign() == 0 {
		return new(big.Int).Mod(big.NewInt(1), mm.m)
	}
	xm := mm.mont(x, mm.r2)
	acc := new(big.Int).Set(xm)
	for i := e.BitLen() - 2; i >= 0; i-- {
		acc = mm.mont(acc, acc)
		if e.Bit(i) == 1 {
			acc = mm.mont(acc, xm)
		}
	}
	return mm.mont(acc, big.NewInt(1))
}

// expBits is the exponent length the Regular option scans: whole 32-bit
// words, at least the modulus length ("Length(Exponent) = Length(Modulus)").
func expBits(ebits, L int) int { return 32 * max((ebits+31)/32, L) }

func (p *PUKCC) cycles(ops float64, L int) engine.Cost {
	c := ops * pukccMM(L)
	return engine.Cost{Cycles: uint64(math.Round(c)), Device: seconds(c, p.f)}
}

// expMode is ExpMod: the Regular sliding-window exponentiation for a secret
// exponent, or the Fast option (public = true).
func (p *PUKCC) expMode(ctx context.Context, m engine.Modulus, base, exp []byte, public bool) ([]byte, engine.Cost, error) {
	mod, err := p.own(m)
	if err != nil {
		return nil, engine.Cost{}, err
	}
	mm := mod.pre.(*montMod)
	x, err := baseBelow("pukcc", base, mod.n)
	if err != nil {
		return nil, engine.Cost{}, &StatusError{Service: "ExpMod", Status: StatusParamWrongLength, Detail: "base not below modulus", Err: engine.ErrOperandTooLarge}
	}
	e := new(big.Int).SetBytes(exp)
	bits := mod.n.BitLen()
	var z *big.Int
	var cost engine.Cost
	if public {
		if bits > pukccExpLimit[p.ram][0] {
			return nil, engine.Cost{}, &StatusError{Service: "ExpMod", Status: StatusParamWrongLength,
				Detail: fmt.Sprintf("%d-bit modulus exceeds %d bits (Fast, W=1)%s", bits, pukccExpLimit[p.ram][0], p.ramText()), Err: engine.ErrOperandTooLarge}
		}
		cost = p.cycles(pukccFastK*float64(max((e.BitLen()+31)/32, 1)), mm.L)
		if !p.zeroes(bits) {
			z = fastExp(mm, x, e)
		}
	} else {
		w, err := p.chooseWindow("ExpMod", bits, pukccExpLimit[p.ram])
		if err != nil {
			return nil, engine.Cost{}, err
		}
		var ops expOps
		z, ops, err = slidingExp(ctx, mm, x, e, w, expBits(e.BitLen(), mm.L))
		if err != nil {
			return nil, engine.Cost{}, err
		}
		cost = p.cycles(float64(ops.total()), mm.L)
	}
	out := make([]byte, mod.size())
	if z != nil {
		out = fixed(z, mod.size())
	}
	p.inject(out, bits)
	return out, cost, p.settle(ctx, cost)
}

// Exp is [engine.Engine]'s: the exponent is secret.
func (p *PUKCC) Exp(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return p.expMode(ctx, m, base, exp, false)
}

// ExpVarTime is [engine.Engine]'s: the exponent is public.
func (p *PUKCC) ExpVarTime(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return p.expMode(ctx, m, base, exp, true)
}

// ExpCRT is PUKCL's CRT service: both half exponentiations (base reduced
// in-core, Regular sliding window) and Garner's recombination, whose cost
// the fitted model absorbs.
func (p *PUKCC) ExpCRT(ctx context.Context, k *engine.CRTKey, base []byte) ([]byte, engine.Cost, error) {
	if k == nil {
		return nil, engine.Cost{}, fmt.Errorf("chip: pukcc: CRT: nil key: %w", engine.ErrInvalidModulus)
	}
	P, Q := new(big.Int).SetBytes(k.P), new(big.Int).SetBytes(k.Q)
	for _, f := range []*big.Int{P, Q} {
		if f.Bit(0) == 0 || f.Cmp(big.NewInt(1)) <= 0 {
			return nil, engine.Cost{}, &StatusError{Service: "CRT", Status: StatusMalformedModulus, Detail: "prime factor even or < 2", Err: engine.ErrInvalidModulus}
		}
		if f.BitLen() < pukccPrimeMin || f.BitLen() > pukccPrimeMax {
			return nil, engine.Cost{}, &StatusError{Service: "CRT", Status: StatusParamWrongLength,
				Detail: fmt.Sprintf("%d-bit prime outside %d–%d bits", f.BitLen(), pukccPrimeMin, pukccPrimeMax), Err: engine.ErrOperandTooLarge}
		}
	}
	N := new(big.Int).Mul(P, Q)
	size := (N.BitLen() + 7) / 8
	w, err := p.chooseWindow("CRT", N.BitLen(), pukccCRTLimit[p.ram])
	if err != nil {
		return nil, engine.Cost{}, err
	}
	x := new(big.Int).SetBytes(base)
	if x.Cmp(N) >= 0 {
		return nil, engine.Cost{}, &StatusError{Service: "CRT", Status: StatusParamWrongLength, Detail: "base not below p·q", Err: engine.ErrOperandTooLarge}
	}
	qinv := new(big.Int).SetBytes(k.QInv)
	var cost engine.Cost
	var halves [2]*big.Int
	for i, h := range []struct{ f, d []byte }{{k.P, k.DP}, {k.Q, k.DQ}} {
		f := new(big.Int).SetBytes(h.f)
		d := new(big.Int).SetBytes(h.d)
		mm := newMontMod(f)
		xr := new(big.Int).Mod(x, f)
		z, ops, err := slidingExp(ctx, mm, xr, d, w, expBits(d.BitLen(), mm.L))
		if err != nil {
			return nil, engine.Cost{}, err
		}
		halves[i] = z
		cost = cost.Add(p.cycles(float64(ops.total()), mm.L))
	}
	h := new(big.Int).Sub(halves[0], halves[1])
	h.Mul(h, qinv)
	h.Mod(h, P)
	h.Mul(h, Q)
	h.Add(h, halves[1])
	out := fixed(h, size)
	p.inject(out, N.BitLen())
	return out, cost, p.settle(ctx, cost)
}

// ecCost is the fitted ECDSA cost: e modmul-equivalents per field bit.
func (p *PUKCC) ecCost(c *curve, e float64) engine.Cost {
	return p.cycles(e*float64(c.bits), c.words)
}

func (p *PUKCC) curve(service, name string, limit int) (*curve, error) {
	c, ok := curves[name]
	if !ok {
		return nil, &StatusError{Service: service, Status: StatusParamInvalidOption, Detail: fmt.Sprintf("curve %q not supported (P-256, P-384, P-521)", name), Err: engine.ErrUnsupported}
	}
	if c.size*8 > limit {
		return nil, &StatusError{Service: service, Status: StatusParamWrongLength, Detail: fmt.Sprintf("%d-byte modulus exceeds %d bytes", c.size, limit/8), Err: engine.ErrOperandTooLarge}
	}
	return c, nil
}

func (p *PUKCC) scalar(service string, c *curve, k []byte) (*big.Int, error) {
	if len(k) > c.size {
		return nil, &StatusError{Service: service, Status: StatusParamWrongLength, Detail: fmt.Sprintf("%d-byte scalar is longer than the %d-byte field", len(k), c.size), Err: engine.ErrOperandTooLarge}
	}
	s := new(big.Int).SetBytes(k)
	return s.Mod(s, c.n), nil
}

// ScalarBaseMult returns k·G (ZpEccMulFast on the generator). Its cost is
// the datasheet's ECDSA generation figure, which the multiplication
// dominates (no separate figure is published) [I].
func (p *PUKCC) ScalarBaseMult(ctx context.Context, curveName string, k []byte) (x, y []byte, c engine.Cost, err error) {
	cv, err := p.curve("ZpEccMulFast", curveName, pukccECMulMax)
	if err != nil {
		return nil, nil, engine.Cost{}, err
	}
	return p.scalarMult(ctx, cv, k, cv.gx, cv.gy)
}

// ScalarMult returns k·(px, py) (ZpEccMulFast), refusing points off the curve.
func (p *PUKCC) ScalarMult(ctx context.Context, curveName string, k, px, py []byte) (x, y []byte, c engine.Cost, err error) {
	cv, err := p.curve("ZpEccMulFast", curveName, pukccECMulMax)
	if err != nil {
		return nil, nil, engine.Cost{}, err
	}
	X, Y := new(big.Int).SetBytes(px), new(big.Int).SetBytes(py)
	if !cv.onCurve(X, Y) {
		return nil, nil, engine.Cost{}, &StatusError{Service: "ZpEccMulFast", Status: StatusPointIsNotOnCurve, Detail: "input point", Err: ErrInvalidPoint}
	}
	return p.scalarMult(ctx, cv, k, X, Y)
}

func (p *PUKCC) scalarMult(ctx context.Context, cv *curve, k []byte, X, Y *big.Int) (x, y []byte, c engine.Cost, err error) {
	s, err := p.scalar("ZpEccMulFast", cv, k)
	if err != nil {
		return nil, nil, engine.Cost{}, err
	}
	cost := p.ecCost(cv, pukccGenE)
	rx, ry, ok := cv.affine(cv.mul(s, X, Y))
	if !ok {
		return nil, nil, engine.Cost{}, &StatusError{Service: "ZpEccMulFast", Status: StatusPointAtInfinity, Detail: "scalar is 0 mod the order"}
	}
	x, y = fixed(rx, cv.size), fixed(ry, cv.size)
	if p.zeroes(cv.bits) {
		clear(y)
	}
	p.inject(x, cv.bits)
	return x, y, cost, p.settle(ctx, cost)
}

// SignECDSA simulates ZpEcDsaGenerateFast: the signature (r, s) of hash
// under private key d with the caller's nonce k, each padded to the order's
// byte length, and the datasheet-fitted cost.
func (p *PUKCC) SignECDSA(ctx context.Context, curveName string, d, hash, k []byte) (r, s []byte, c engine.Cost, err error) {
	const svc = "ZpEcDsaGenerateFast"
	cv, err := p.curve(svc, curveName, pukccGenMax)
	if err != nil {
		return nil, nil, engine.Cost{}, err
	}
	kk, err := p.scalar(svc, cv, k)
	if err != nil {
		return nil, nil, engine.Cost{}, err
	}
	dd, err := p.scalar(svc, cv, d)
	if err != nil {
		return nil, nil, engine.Cost{}, err
	}
	if kk.Sign() == 0 || dd.Sign() == 0 {
		return nil, nil, engine.Cost{}, &StatusError{Service: svc, Status: StatusPointAtInfinity, Detail: "nonce or key is 0 mod the order"}
	}
	rx, _, _ := cv.affine(cv.mul(kk, cv.gx, cv.gy))
	R := rx.Mod(rx, cv.n)
	S := new(big.Int).Mul(R, dd)
	S.Add(S, cv.hashInt(hash))
	S.Mul(S, new(big.Int).ModInverse(kk, cv.n))
	S.Mod(S, cv.n)
	if R.Sign() == 0 || S.Sign() == 0 {
		return nil, nil, engine.Cost{}, &StatusError{Service: svc, Status: StatusPointAtInfinity, Detail: "r or s is 0: draw another nonce"}
	}
	cost := p.ecCost(cv, pukccGenE)
	size := (cv.n.BitLen() + 7) / 8
	r, s = fixed(R, size), fixed(S, size)
	p.inject(s, cv.bits)
	return r, s, cost, p.settle(ctx, cost)
}

// VerifyECDSA simulates ZpEcDsaQuickVerify: nil if (r, s) is a valid
// signature of hash under the public key (qx, qy), else a StatusError
// with PUKCL_WRONG_SIGNATURE (or POINT_IS_NOT_ON_CURVE). The cost is
// reported either way.
func (p *PUKCC) VerifyECDSA(ctx context.Context, curveName string, qx, qy, hash, r, s []byte) (engine.Cost, error) {
	const svc = "ZpEcDsaQuickVerify"
	cv, err := p.curve(svc, curveName, pukccVerMax)
	if err != nil {
		return engine.Cost{}, err
	}
	X, Y := new(big.Int).SetBytes(qx), new(big.Int).SetBytes(qy)
	if !cv.onCurve(X, Y) {
		return engine.Cost{}, &StatusError{Service: svc, Status: StatusPointIsNotOnCurve, Detail: "public key", Err: ErrInvalidPoint}
	}
	cost := p.ecCost(cv, pukccVerE)
	if err := p.settle(ctx, cost); err != nil {
		return cost, err
	}
	R, S := new(big.Int).SetBytes(r), new(big.Int).SetBytes(s)
	wrong := &StatusError{Service: svc, Status: StatusWrongSignature, Detail: "signature does not verify"}
	if R.Sign() <= 0 || S.Sign() <= 0 || R.Cmp(cv.n) >= 0 || S.Cmp(cv.n) >= 0 {
		return cost, wrong
	}
	w := new(big.Int).ModInverse(S, cv.n)
	u1 := new(big.Int).Mul(cv.hashInt(hash), w)
	u1.Mod(u1, cv.n)
	u2 := new(big.Int).Mul(R, w)
	u2.Mod(u2, cv.n)
	sum := cv.add(cv.mul(u1, cv.gx, cv.gy), cv.mul(u2, X, Y))
	vx, _, ok := cv.affine(sum)
	if !ok || vx.Mod(vx, cv.n).Cmp(R) != 0 {
		return cost, wrong
	}
	return cost, nil
}

// SelfTest runs known-answer exponentiations (answers from math/big) and
// a scalar multiplication (answer from crypto/ecdh).
func (p *PUKCC) SelfTest(ctx context.Context) error {
	if err := selfTestExp(ctx, p, "pukcc", []int{256, 1024}); err != nil {
		return err
	}
	k := make([]byte, 32)
	k[31] = 7
	priv, err := ecdh.P256().NewPrivateKey(k)
	if err != nil {
		return fmt.Errorf("chip: pukcc: self-test: %w", err)
	}
	x, y, _, err := p.ScalarBaseMult(ctx, "P-256", k)
	if err != nil {
		return fmt.Errorf("chip: pukcc: self-test: %w", err)
	}
	if want := priv.PublicKey().Bytes()[1:]; !bytes.Equal(append(x, y...), want) {
		return fmt.Errorf("chip: pukcc: self-test: 7·G on P-256 is wrong: %w", engine.ErrDevice)
	}
	return nil
}

// Close releases nothing.
func (p *PUKCC) Close() error { return nil }
