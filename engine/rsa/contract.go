// Package rsa is the RSA private and public operation over any engine.
//
// # The private operation
//
// [Key.Private] does, for every engine:
//
//  1. Range check of the input (below n).
//  2. Base blinding: c·rᵉ mod n with a per-key pair (rᵉ, r⁻¹) that is
//     refreshed by squaring on each use and renewed from fresh randomness
//     every 32 uses (OpenSSL's scheme). The pair is kept in
//     Montgomery form and used with the constant-time arithmetic of
//     engine/internal/mont, never on the engine.
//  3. CRT: the blinded input is reduced mod p and mod q in software, and
//     the engine does two exponentiations (concurrently when Info().Cores
//     ≥ 2 and fewer private operations are in flight than the engine has
//     cores), or one ExpPair call if it implements [engine.PairEngine] (a
//     device: one round trip), or one ExpCRT call if it implements
//     [engine.CRTEngine] with NativeCRT. With Options.ExponentBlinding the engine sees
//     d_p + k·(p−1) and d_q + k'·(q−1) with fresh 64-bit k, k'.
//  4. Range check of the engine's outputs (length and value below the
//     modulus), then Garner recombination in constant time: m2 mod p,
//     subtraction mod p, a Montgomery multiplication by qInv·R mod p, a
//     plain product by q and an addition.
//  5. Unblinding by r⁻¹, then the check before release: sᵉ mod n is
//     computed in software and compared in constant time with the input.
//     On mismatch (or an engine error wrapping [engine.ErrDevice]) the
//     operation is redone on Options.Fallback with a fresh blinding pair;
//     without a fallback, or if the fallback fails too, the error wraps
//     both [ErrFault] and [engine.ErrDevice]. A wrong result is never
//     returned.
//
// # What is not constant time
//
// Key preparation ([NewKey]) and [GenerateKey] use math/big on the key
// (validation, d mod p−1, q⁻¹ mod p, d = e⁻¹ mod λ, the small-prime sieve):
// once per key, not per operation. Miller–Rabin reveals, through the
// number of squarings, the number of trailing zero bits of p−1. The
// public operation ([Public] and the check) is variable-time in e only.
package rsa

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"sync/atomic"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/internal/mont"
)

// Sentinel errors.
var (
	// ErrInputRange: the input is not below the modulus.
	ErrInputRange = errors.New("rsa: input out of range")
	// ErrFault: the engine's result failed the check before release.
	ErrFault = errors.New("rsa: engine result failed verification")
	// ErrInvalidKey: inconsistent or unsupported key.
	ErrInvalidKey = errors.New("rsa: invalid key")
)

// Key size limits. NewKey accepts keys from MinKeyBits (for interoperation
// with old keys); GenerateKey makes keys of MinGenerateBits..MaxKeyBits.
const (
	MinKeyBits      = 512
	MinGenerateBits = 1024
	MaxKeyBits      = 8192
	MaxPublicBits   = 16384
)

// blindingRenewal is the number of uses after which the blinding pair is
// drawn afresh (between renewals it is squared on each use).
const blindingRenewal = 32

// crtPolicy decides when the two CRT halves run concurrently (see
// splitCRT). Tests change it to compare the policies; it must not change
// while private operations run.
var crtPolicy = crtAdaptive

const (
	crtAdaptive = iota // concurrent only while cores are idle (the default)
	crtAlways          // concurrent whenever the engine has ≥ 2 cores
	crtNever           // always one after the other
)

// inFlight counts the private operations (all keys) that are between the
// reduction mod p, q and the end of their exponentiations.
var inFlight atomic.Int64

// splitCRT reports whether this private operation should run its mod-q
// exponentiation in a second goroutine. Splitting halves the latency of a
// lone signature, but a signature costs the same CPU either way (a bit
// more split: the goroutine hand-off), so when other private operations
// already keep the cores busy, splitting only adds scheduling and takes a
// core from another client. The adaptive policy therefore splits only
// while the number of operations in flight (this one included, all keys
// and engines) is below the engine's Info().Cores (for the software
// engine, the CPUs). On 2 cores: one client gets both cores, two clients
// get one each. The count is read without a lock: a stale read only picks the
// other, equally correct, schedule.
func (k *Key) splitCRT(pr *prepared) bool {
	if !pr.parallel {
		return false
	}
	switch crtPolicy {
	case crtAlways:
		return true
	case crtNever:
		return false
	}
	return inFlight.Load() < int64(pr.cores)
}

// PrivateKey holds the key's numbers. Dp, Dq, Qinv may be nil (computed).
type PrivateKey struct {
	N            *big.Int
	E            int
	D, P, Q      *big.Int
	Dp, Dq, Qinv *big.Int
}

// Options select how private operations run.
type Options struct {
	Fallback         engine.Engine // if non-nil, retried on when the engine's result fails the check
	ExponentBlinding bool          // d_p + k·(p−1) with a fresh 64-bit k per operation
	// OnFault, if non-nil, is called synchronously with the error each time
	// the primary engine's result fails the check or the engine reports
	// engine.ErrDevice, whether or not the fallback then recovers: the
	// token counts faults and reports the failing engine with it.
	OnFault func(error)
}

// Key is a private key prepared for one engine (moduli set up, blinding
// state). Safe for concurrent use.
type Key struct {
	e      int
	eBytes []byte
	n      *mont.Modulus // software arithmetic mod n, p, q
	p, q   *mont.Modulus
	opts   Options

	primary  *prepared
	fallback *prepared // nil without Options.Fallback

	dp, dq   []uint64 // CRT exponents, limbs of p and q
	pm1, qm1 []uint64 // p−1, q−1
	pm2, qm2 []byte   // p−2, q−2 (Fermat inversion for blinding)
	qPlain   []uint64 // q, limbs of q
	qinvMont []uint64 // q⁻¹·R mod p
	crt      engine.CRTKey

	blind blinder
}

// prepared is the key's state on one engine.
type prepared struct {
	eng       engine.Engine
	name      string
	pm, qm    engine.Modulus // nil when nativeCRT
	parallel  bool           // Info().Cores ≥ 2
	cores     int            // Info().Cores
	nativeCRT engine.CRTEngine
	pair      engine.PairEngine // asks for both halves in one call
}

// NewKey validates priv and prepares it for eng.
func NewKey(eng engine.Engine, priv *PrivateKey, opts Options) (*Key, error) {
	if eng == nil {
		return nil, fmt.Errorf("rsa: new key: nil engine: %w", ErrInvalidKey)
	}
	dp, dq, qinv, err := validate(priv)
	if err != nil {
		return nil, err
	}
	k := &Key{e: priv.E, opts: opts}
	k.eBytes = big.NewInt(int64(priv.E)).Bytes()
	if k.n, err = mont.NewModulus(priv.N.Bytes()); err != nil {
		return nil, fmt.Errorf("rsa: new key: modulus: %w", ErrInvalidKey)
	}
	if k.p, err = mont.NewModulus(priv.P.Bytes()); err != nil {
		return nil, fmt.Errorf("rsa: new key: p: %w", ErrInvalidKey)
	}
	if k.q, err = mont.NewModulus(priv.Q.Bytes()); err != nil {
		return nil, fmt.Errorf("rsa: new key: q: %w", ErrInvalidKey)
	}
	one := big.NewInt(1)
	k.dp = limbsOf(dp, k.p.Limbs())
	k.dq = limbsOf(dq, k.q.Limbs())
	k.pm1 = limbsOf(new(big.Int).Sub(priv.P, one), k.p.Limbs())
	k.qm1 = limbsOf(new(big.Int).Sub(priv.Q, one), k.q.Limbs())
	k.pm2 = new(big.Int).Sub(priv.P, big.NewInt(2)).FillBytes(make([]byte, k.p.Size()))
	k.qm2 = new(big.Int).Sub(priv.Q, big.NewInt(2)).FillBytes(make([]byte, k.q.Size()))
	k.qPlain = limbsOf(priv.Q, k.q.Limbs())
	qi := limbsOf(qinv, k.p.Limbs())
	k.qinvMont = make([]uint64, k.p.Limbs())
	k.p.ToMont(k.qinvMont, qi, make([]uint64, k.p.ScratchLen()))
	k.crt = engine.CRTKey{
		P:    priv.P.Bytes(),
		Q:    priv.Q.Bytes(),
		DP:   dp.FillBytes(make([]byte, k.p.Size())),
		DQ:   dq.FillBytes(make([]byte, k.q.Size())),
		QInv: qinv.FillBytes(make([]byte, k.p.Size())),
	}
	if k.primary, err = k.prepare(eng); err != nil {
		return nil, err
	}
	if opts.Fallback != nil {
		if k.fallback, err = k.prepare(opts.Fallback); err != nil {
			return nil, fmt.Errorf("rsa: new key: fallback engine: %w", err)
		}
	}
	return k, nil
}

func (k *Key) prepare(eng engine.Engine) (*prepared, error) {
	info := eng.Info()
	pr := &prepared{eng: eng, name: info.Name, parallel: info.Cores >= 2, cores: info.Cores}
	if ce, ok := eng.(engine.CRTEngine); ok && info.NativeCRT {
		pr.nativeCRT = ce
		return pr, nil
	}
	if pe, ok := eng.(engine.PairEngine); ok {
		pr.pair = pe
	}
	var err error
	if pr.pm, err = eng.NewModulus(k.crt.P); err != nil {
		return nil, fmt.Errorf("rsa: new key: engine %s: modulus p: %w", info.Name, err)
	}
	if pr.qm, err = eng.NewModulus(k.crt.Q); err != nil {
		return nil, fmt.Errorf("rsa: new key: engine %s: modulus q: %w", info.Name, err)
	}
	return pr, nil
}

// validate checks priv and returns d mod (p−1), d mod (q−1) and q⁻¹ mod p
// (checking the given ones).
func validate(priv *PrivateKey) (dp, dq, qinv *big.Int, err error) {
	bad := func(what string) error { return fmt.Errorf("rsa: invalid key: %s: %w", what, ErrInvalidKey) }
	if priv == nil || priv.N == nil || priv.D == nil || priv.P == nil || priv.Q == nil {
		return nil, nil, nil, bad("missing N, D, P or Q")
	}
	if priv.E < 3 || priv.E%2 == 0 {
		return nil, nil, nil, bad(fmt.Sprintf("public exponent %d (must be odd and at least 3)", priv.E))
	}
	n, p, q, d := priv.N, priv.P, priv.Q, priv.D
	if n.Sign() <= 0 || n.BitLen() < MinKeyBits || n.BitLen() > MaxPublicBits {
		return nil, nil, nil, bad(fmt.Sprintf("modulus of %d bits (want %d..%d)", n.BitLen(), MinKeyBits, MaxPublicBits))
	}
	one := big.NewInt(1)
	if p.Cmp(one) <= 0 || q.Cmp(one) <= 0 || p.Bit(0) == 0 || q.Bit(0) == 0 || p.Cmp(q) == 0 {
		return nil, nil, nil, bad("p and q must be distinct odd numbers greater than one")
	}
	if new(big.Int).Mul(p, q).Cmp(n) != 0 {
		return nil, nil, nil, bad("p·q ≠ n")
	}
	if d.Sign() <= 0 || d.Cmp(n) >= 0 {
		return nil, nil, nil, bad("d out of range")
	}
	pm1 := new(big.Int).Sub(p, one)
	qm1 := new(big.Int).Sub(q, one)
	de := new(big.Int).Mul(d, big.NewInt(int64(priv.E)))
	if new(big.Int).Mod(de, pm1).Cmp(one) != 0 || new(big.Int).Mod(de, qm1).Cmp(one) != 0 {
		return nil, nil, nil, bad("d·e ≢ 1 mod λ(n)")
	}
	dp = new(big.Int).Mod(d, pm1)
	dq = new(big.Int).Mod(d, qm1)
	qinv = new(big.Int).ModInverse(q, p)
	if qinv == nil {
		return nil, nil, nil, bad("q not invertible mod p")
	}
	if priv.Dp != nil && priv.Dp.Cmp(dp) != 0 {
		return nil, nil, nil, bad("Dp ≠ d mod (p−1)")
	}
	if priv.Dq != nil && priv.Dq.Cmp(dq) != 0 {
		return nil, nil, nil, bad("Dq ≠ d mod (q−1)")
	}
	if priv.Qinv != nil && priv.Qinv.Cmp(qinv) != 0 {
		return nil, nil, nil, bad("Qinv ≠ q⁻¹ mod p")
	}
	return dp, dq, qinv, nil
}

func limbsOf(x *big.Int, k int) []uint64 {
	z := make([]uint64, k)
	mont.SetBytes(z, x.Bytes())
	return z
}

// Size is the byte length of the modulus (and of every result).
func (k *Key) Size() int { return k.n.Size() }

// Private returns c^d mod n (big-endian, modulus length), computed with CRT
// and blinding on the engine and checked with the public key before release.
// c must be below n and not longer than the modulus (Size bytes): a longer
// input, even with leading zeros, is ErrInputRange.
func (k *Key) Private(ctx context.Context, c []byte) ([]byte, engine.Cost, error) {
	kn := k.n.Limbs()
	x := make([]uint64, kn)
	if len(c) > k.n.Size() || mont.SetBytes(x, c)&k.n.Less(x) != 1 {
		return nil, engine.Cost{}, fmt.Errorf("rsa: private: %w", ErrInputRange)
	}
	out := make([]byte, k.n.Size())
	cost, err := k.privateOn(ctx, k.primary, x, out)
	if err == nil {
		return out, cost, nil
	}
	if !(errors.Is(err, ErrFault) || errors.Is(err, engine.ErrDevice)) {
		return nil, cost, err
	}
	if k.opts.OnFault != nil {
		k.opts.OnFault(err)
	}
	if k.fallback == nil {
		return nil, cost, err
	}
	fcost, ferr := k.privateOn(ctx, k.fallback, x, out)
	cost = cost.Add(fcost)
	if ferr != nil {
		return nil, cost, fmt.Errorf("rsa: private: fallback engine failed too (%w) after: %w", ferr, err)
	}
	return out, cost, nil
}

// privateOn computes and checks c^d mod n on one engine, writing the
// result to out only if it passes the check.
func (k *Key) privateOn(ctx context.Context, pr *prepared, x []uint64, out []byte) (engine.Cost, error) {
	kn := k.n.Limbs()
	t := make([]uint64, k.n.ScratchLen())
	rE, rInv, err := k.blind.take(k)
	if err != nil {
		return engine.Cost{}, err
	}
	blinded := make([]uint64, kn)
	k.n.MontMul(blinded, x, rE, t) // c·rᵉ mod n
	s, cost, err := k.crtExp(ctx, pr, blinded)
	if err != nil {
		return cost, err
	}
	k.n.MontMul(s, s, rInv, t) // unblind
	// Check before release: sᵉ mod n must be the input.
	v := make([]uint64, kn)
	k.n.ExpVarTime(v, s, k.eBytes)
	if mont.Equal(v, x) != 1 {
		clear(s) // never keep a faulty result around
		return cost, fmt.Errorf("rsa: private on engine %s: %w (%w)", pr.name, ErrFault, engine.ErrDevice)
	}
	mont.FillBytes(out, s)
	return cost, nil
}

// crtExp returns y^d mod n (plain limbs of n) computed on the engine.
func (k *Key) crtExp(ctx context.Context, pr *prepared, y []uint64) ([]uint64, engine.Cost, error) {
	name := pr.name
	yb := make([]byte, k.n.Size())
	mont.FillBytes(yb, y)
	dpE, dqE, err := k.exponents()
	if err != nil {
		return nil, engine.Cost{}, err
	}
	if pr.nativeCRT != nil {
		ck := engine.CRTKey{P: bytes.Clone(k.crt.P), Q: bytes.Clone(k.crt.Q), DP: dpE, DQ: dqE, QInv: bytes.Clone(k.crt.QInv)}
		r, cost, err := pr.nativeCRT.ExpCRT(ctx, &ck, yb)
		if err != nil {
			return nil, cost, fmt.Errorf("rsa: private: engine %s: ExpCRT: %w", name, err)
		}
		s := make([]uint64, k.n.Limbs())
		if len(r) != k.n.Size() || mont.SetBytes(s, r)&k.n.Less(s) != 1 {
			return nil, cost, fmt.Errorf("rsa: private: engine %s: ExpCRT result out of range: %w (%w)", name, ErrFault, engine.ErrDevice)
		}
		return s, cost, nil
	}

	yp := make([]uint64, k.p.Limbs())
	yq := make([]uint64, k.q.Limbs())
	k.p.Reduce(yp, yb)
	k.q.Reduce(yq, yb)
	ypb := make([]byte, k.p.Size())
	yqb := make([]byte, k.q.Size())
	mont.FillBytes(ypb, yp)
	mont.FillBytes(yqb, yq)

	inFlight.Add(1)
	defer inFlight.Add(-1)
	var (
		m1, m2     []byte
		c1, c2     engine.Cost
		err1, err2 error
		wg         sync.WaitGroup
	)
	switch {
	case pr.pair != nil:
		m1, m2, c1, err1 = pr.pair.ExpPair(ctx,
			engine.ExpOp{M: pr.pm, Base: ypb, Exp: dpE}, engine.ExpOp{M: pr.qm, Base: yqb, Exp: dqE})
	case k.splitCRT(pr):
		wg.Go(func() { m2, c2, err2 = pr.eng.Exp(ctx, pr.qm, yqb, dqE, false) })
		m1, c1, err1 = pr.eng.Exp(ctx, pr.pm, ypb, dpE, false)
		wg.Wait()
	default:
		m1, c1, err1 = pr.eng.Exp(ctx, pr.pm, ypb, dpE, false)
		if err1 == nil {
			m2, c2, err2 = pr.eng.Exp(ctx, pr.qm, yqb, dqE, false)
		}
	}
	cost := c1.Add(c2)
	if err1 != nil {
		return nil, cost, fmt.Errorf("rsa: private: engine %s: exp mod p: %w", name, err1)
	}
	if err2 != nil {
		return nil, cost, fmt.Errorf("rsa: private: engine %s: exp mod q: %w", name, err2)
	}
	m1l := make([]uint64, k.p.Limbs())
	m2l := make([]uint64, k.q.Limbs())
	ok1 := mont.SetBytes(m1l, m1) & k.p.Less(m1l)
	ok2 := mont.SetBytes(m2l, m2) & k.q.Less(m2l)
	if len(m1) != k.p.Size() || len(m2) != k.q.Size() || ok1&ok2 != 1 {
		return nil, cost, fmt.Errorf("rsa: private: engine %s: result out of range: %w (%w)", name, ErrFault, engine.ErrDevice)
	}
	return k.garner(m1l, m2, m2l), cost, nil
}

// garner returns m2 + q·(qInv·(m1 − m2) mod p) as limbs of n, in constant
// time. m1 < p and m2 < q (m2b is m2 as bytes).
func (k *Key) garner(m1 []uint64, m2b []byte, m2 []uint64) []uint64 {
	kp, kq := k.p.Limbs(), k.q.Limbs()
	t := make([]uint64, k.p.ScratchLen())
	h := make([]uint64, kp)
	k.p.Reduce(h, m2b)               // m2 mod p
	k.p.ModSub(h, m1, h)             // m1 − m2 mod p
	k.p.MontMul(h, h, k.qinvMont, t) // ·qInv mod p
	prod := make([]uint64, kp+kq)
	mont.Mul(prod, h, k.qPlain)
	m2ext := make([]uint64, kp+kq)
	copy(m2ext, m2)
	mont.Add(prod, prod, m2ext) // < n: no carry
	s := make([]uint64, k.n.Limbs())
	copy(s, prod) // the limbs above n's are zero
	return s
}

// exponents returns the CRT exponents as given to the engine: d_p and d_q
// padded to the primes' lengths, or, with exponent blinding,
// d_p + k·(p−1) and d_q + k'·(q−1) for fresh random 64-bit k, k'.
func (k *Key) exponents() (dp, dq []byte, err error) {
	if !k.opts.ExponentBlinding {
		// Copies: an engine must not be able to corrupt the key.
		return bytes.Clone(k.crt.DP), bytes.Clone(k.crt.DQ), nil
	}
	var rnd [16]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, nil, fmt.Errorf("rsa: exponent blinding: %w", err)
	}
	blindExp := func(d, m1 []uint64, r uint64) []byte {
		z := make([]uint64, len(d)+1)
		mont.AddMulWord(z, d, m1, r)
		b := make([]byte, 8*len(z))
		mont.FillBytes(b, z)
		return b
	}
	return blindExp(k.dp, k.pm1, binary.LittleEndian.Uint64(rnd[:8])),
		blindExp(k.dq, k.qm1, binary.LittleEndian.Uint64(rnd[8:])), nil
}

// blinder holds the base-blinding pair (rᵉ, r⁻¹) mod n in Montgomery form.
type blinder struct {
	mu       sync.Mutex
	rE, rInv []uint64
	uses     int
}

// take returns a copy of the current pair and advances the state: the
// pair is squared (rᵉ² and r⁻², still a valid pair) or, every
// blindingRenewal uses, drawn afresh. Each call gets a different pair.
func (b *blinder) take(k *Key) (rE, rInv []uint64, _ error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rE == nil || b.uses >= blindingRenewal {
		// Draw the new pair without holding the lock (it costs two
		// half-size exponentiations); if another goroutine renewed
		// meanwhile, keep theirs.
		b.mu.Unlock()
		nE, nInv, err := k.newBlindingPair()
		b.mu.Lock()
		if err != nil {
			return nil, nil, err
		}
		if b.rE == nil || b.uses >= blindingRenewal {
			b.rE, b.rInv, b.uses = nE, nInv, 0
		}
	}
	rE = append([]uint64(nil), b.rE...)
	rInv = append([]uint64(nil), b.rInv...)
	t := make([]uint64, k.n.ScratchLen())
	k.n.MontSqr(b.rE, b.rE, t)
	k.n.MontSqr(b.rInv, b.rInv, t)
	b.uses++
	return rE, rInv, nil
}

// newBlindingPair draws r uniformly (near enough) from [1, n) and returns
// rᵉ·R and r⁻¹·R mod n. r⁻¹ is computed in constant time by Fermat's
// little theorem mod p and q and Garner, all in software.
func (k *Key) newBlindingPair() (rE, rInv []uint64, err error) {
	kn := k.n.Limbs()
	t := make([]uint64, k.n.ScratchLen())
	one := make([]uint64, kn)
	one[0] = 1
	for range 10 {
		buf := make([]byte, k.n.Size()+16)
		if _, err := rand.Read(buf); err != nil {
			return nil, nil, fmt.Errorf("rsa: blinding: %w", err)
		}
		r := make([]uint64, kn)
		k.n.Reduce(r, buf)
		rp := make([]uint64, k.p.Limbs())
		rq := make([]uint64, k.q.Limbs())
		rb := make([]byte, k.n.Size())
		mont.FillBytes(rb, r)
		k.p.Reduce(rp, rb)
		k.q.Reduce(rq, rb)
		k.p.Exp(rp, rp, k.pm2)
		k.q.Exp(rq, rq, k.qm2)
		rqb := make([]byte, k.q.Size())
		mont.FillBytes(rqb, rq)
		inv := k.garner(rp, rqb, rq)
		// Check r·r⁻¹ = 1 (fails only if r shares a factor with n).
		rm := make([]uint64, kn)
		k.n.ToMont(rm, r, t)
		chk := make([]uint64, kn)
		k.n.MontMul(chk, rm, inv, t)
		if mont.Equal(chk, one) != 1 {
			continue
		}
		rE = make([]uint64, kn)
		k.n.ExpVarTime(rE, r, k.eBytes) // e is public; time depends on e only
		k.n.ToMont(rE, rE, t)
		rInv = make([]uint64, kn)
		k.n.ToMont(rInv, inv, t)
		return rE, rInv, nil
	}
	return nil, nil, fmt.Errorf("rsa: blinding: no invertible r found: %w", ErrInvalidKey)
}

// Public returns m^e mod n (big-endian, modulus length) for the public key
// (n, e). Variable time: only public data.
func Public(n *big.Int, e int, m []byte) ([]byte, error) {
	if n == nil || n.Sign() <= 0 || n.BitLen() > MaxPublicBits || e < 1 {
		return nil, fmt.Errorf("rsa: public: %w", ErrInvalidKey)
	}
	nm, err := publicModulus(n.Bytes())
	if err != nil {
		return nil, err
	}
	x := make([]uint64, nm.Limbs())
	if mont.SetBytes(x, m)&nm.Less(x) != 1 {
		return nil, fmt.Errorf("rsa: public: %w", ErrInputRange)
	}
	nm.ExpVarTime(x, x, big.NewInt(int64(e)).Bytes())
	out := make([]byte, nm.Size())
	mont.FillBytes(out, x)
	return out, nil
}

// publicModuli caches the Montgomery set-up of the moduli that Public saw
// last (public data: n only), so that verifying many signatures of one key
// does not recompute R² mod n each time (for RSA-2048 that set-up costs
// about as much as the exponentiation by 65537 itself). At most
// maxPublicModuli entries; when full, it is emptied.
var publicModuli struct {
	sync.Mutex
	m map[string]*mont.Modulus
}

const maxPublicModuli = 64

// publicModulus returns the prepared modulus n (big-endian, no leading
// zeros), from the cache or made and cached.
func publicModulus(nb []byte) (*mont.Modulus, error) {
	publicModuli.Lock()
	nm := publicModuli.m[string(nb)]
	publicModuli.Unlock()
	if nm != nil {
		return nm, nil
	}
	nm, err := mont.NewModulus(nb)
	if err != nil {
		return nil, fmt.Errorf("rsa: public: modulus: %w", ErrInvalidKey)
	}
	publicModuli.Lock()
	if publicModuli.m == nil || len(publicModuli.m) >= maxPublicModuli {
		publicModuli.m = make(map[string]*mont.Modulus)
	}
	publicModuli.m[string(nb)] = nm
	publicModuli.Unlock()
	return nm, nil
}
