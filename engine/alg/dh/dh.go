// Package dh is finite-field Diffie–Hellman (PKCS #3 / SP 800-56A) for the
// token, over any engine: the engine computes the secret exponentiations
// (g^x at key generation, y^x at key agreement); the checks are done here,
// once, for every engine.
//
// # Groups
//
// A [Group] is a prime p, a generator g and, when known, the order q of
// g's subgroup. The RFC 7919 groups ffdhe2048, ffdhe3072 and ffdhe4096 are
// recognised by their prime ([LookupGroup]): their private values are
// drawn from [1, q−1] and a peer's public value must be in the subgroup of
// order q. Other groups (any prime p of [MinBits, MaxBits] bits, e.g. from
// [GenerateGroup]) have no known q: private values come from [1, p−2] (or
// have the requested number of bits) and peer values are only range
// checked (1 < y < p−1).
//
// # Blinding and the check before release
//
// The engine never sees x: it sees x + m·n for a fresh random 64-bit m,
// where n is q (known groups) or p−1 (a multiple of every element's
// order), always one limb longer than n. A shared secret has no public
// check, so [Key.Derive] asks the engine for two exponentiations with
// independent blinding (one [engine.PairEngine.ExpPair] call where the
// engine has it): z1 = y^(x+m1·n) and z2 = (y⁻¹)^(x+m2·n). Their product
// is y^((m1−m2)·n) = 1 when both are right; z1 is released only if
// z1·z2 ≡ 1 (mod p) and 1 < z1 < p, and, for a group with a known q, not
// z1 = y unless x = 1 (an engine that ignores the exponent returns y and
// y⁻¹, whose product passes).
//
// A key whose private value is declared short (Options.ValueBits, PKCS #11
// CKA_VALUE_BITS, at most a quarter of the order's bits: RFC 7919 §5.2 and
// SP 800-56A allow x of twice the group's strength, ≈ 225 bits for
// ffdhe2048, as OpenSSL draws) is split additively instead, since x + m·q
// is full length: the engine computes y^(x+r1), (y⁻¹)^r1, (y⁻¹)^(x+r2) and
// y^r2 (two pair calls) for fresh r1, r2 uniform of ValueBits+64 bits, all
// exponents ValueBits+65 bits long; z1 and z2 are the products of the two
// halves, and the same check applies: 2.3 to 4 times less CPU for
// ffdhe2048 to ffdhe4096 (docs/PERFORMANCE.md). An engine that ignores the exponents
// gives z1 = 1 (refused), one that returns a constant W gives W⁴ ≠ 1.
//
// A fault that corrupts results the same
// way each time (a stuck output bit) breaks the product, where comparing
// two runs of the same computation would not see it. A key's public value
// made by [GenerateKey] must equal the one computed in software. A disagreement is an error wrapping [ErrFault] and
// engine.ErrDevice (engine/guard then redoes the agreement on the software
// engine, with the key prepared there by [Key.On]). A wrong secret is
// never returned.
// This doubles the engine's work per agreement.
//
// # What is not constant time
//
// Group checks and generation, and the checks on peer values (public
// values only). The software exponentiation that checks a generated public
// value is constant time in x.
package dh

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sync"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/dh/internal/rfc7919"
	"github.com/modexp-token/modexp-token/engine/arith/mont"
)

// Sentinel errors.
var (
	// ErrInvalidParameters: a prime or generator that fails the checks.
	ErrInvalidParameters = errors.New("dh: invalid domain parameters")
	// ErrInvalidKey: a private value out of range.
	ErrInvalidKey = errors.New("dh: invalid private value")
	// ErrInvalidPublic: a peer public value out of range or (known groups)
	// not in the subgroup of order q, or one giving the shared secret 1.
	ErrInvalidPublic = errors.New("dh: invalid public value")
	// ErrFault: the engine's results failed the check before release.
	ErrFault = errors.New("dh: engine result failed verification")
)

// Prime sizes accepted.
const (
	MinBits = 1024
	MaxBits = 8192
)

// Group is a Diffie–Hellman group.
type Group struct {
	Name string   // "ffdhe2048", ...; "" for other groups
	P, G *big.Int // prime and generator
	Q    *big.Int // order of g's subgroup, nil when unknown
}

var knownGroups = sync.OnceValue(func() []Group {
	var gs []Group
	one := big.NewInt(1)
	for _, kg := range rfc7919.Groups {
		p, ok := new(big.Int).SetString(kg.P, 16)
		if !ok {
			panic("dh: bad group constant " + kg.Name)
		}
		q := new(big.Int).Rsh(new(big.Int).Sub(p, one), 1)
		gs = append(gs, Group{Name: kg.Name, P: p, G: big.NewInt(2), Q: q})
	}
	return gs
})

// checkedPrimes remembers primes that passed the primality test.
var checkedPrimes struct {
	sync.Mutex
	m map[string]bool
}

// LookupGroup checks a prime and generator and returns the group: a known
// RFC 7919 group (with its q) if p is one of their primes and g = 2,
// otherwise a group without q after checking that p is a (probable) prime
// of MinBits..MaxBits bits and 1 < g < p−1. Errors wrap
// ErrInvalidParameters.
func LookupGroup(p, g *big.Int) (*Group, error) {
	if p == nil || g == nil || p.Sign() <= 0 || g.Sign() <= 0 {
		return nil, fmt.Errorf("%w: missing or non-positive prime or base", ErrInvalidParameters)
	}
	for _, kg := range knownGroups() {
		if p.Cmp(kg.P) == 0 && g.Cmp(kg.G) == 0 {
			return &Group{Name: kg.Name, P: new(big.Int).Set(kg.P), G: new(big.Int).Set(kg.G), Q: new(big.Int).Set(kg.Q)}, nil
		}
	}
	if b := p.BitLen(); b < MinBits || b > MaxBits {
		return nil, fmt.Errorf("%w: %d-bit prime (want %d to %d bits)", ErrInvalidParameters, b, MinBits, MaxBits)
	}
	pm1 := new(big.Int).Sub(p, big.NewInt(1))
	if g.Cmp(big.NewInt(1)) <= 0 || g.Cmp(pm1) >= 0 {
		return nil, fmt.Errorf("%w: base not in (1, p−1)", ErrInvalidParameters)
	}
	key := string(p.Bytes())
	checkedPrimes.Lock()
	ok := checkedPrimes.m[key]
	checkedPrimes.Unlock()
	if !ok {
		if !p.ProbablyPrime(10) {
			return nil, fmt.Errorf("%w: p is not prime", ErrInvalidParameters)
		}
		checkedPrimes.Lock()
		if checkedPrimes.m == nil || len(checkedPrimes.m) >= 64 {
			checkedPrimes.m = map[string]bool{}
		}
		checkedPrimes.m[key] = true
		checkedPrimes.Unlock()
	}
	grp := &Group{P: new(big.Int).Set(p), G: new(big.Int).Set(g)}
	if q := safeOrder(p, g); q != nil {
		grp.Q = q
	}
	return grp, nil
}

// safeOrders remembers, for the primes LookupGroup has seen, whether p is
// a safe prime (p−1)/2 = q prime, and so whether g has the order q.
var safeOrders struct {
	sync.Mutex
	m map[string]*big.Int // p‖g → q, or nil
}

// safeOrder returns q = (p−1)/2 if it is prime and g^q ≡ 1 (mod p): then
// the group is used like an RFC 7919 group (private values below q,
// subgroup check of peer values). Groups made by GenerateGroup are such
// groups.
func safeOrder(p, g *big.Int) *big.Int {
	key := string(p.Bytes()) + "|" + string(g.Bytes())
	safeOrders.Lock()
	q, seen := safeOrders.m[key]
	safeOrders.Unlock()
	if !seen {
		one := big.NewInt(1)
		c := new(big.Int).Rsh(p, 1)
		if c.ProbablyPrime(10) && new(big.Int).Exp(g, c, p).Cmp(one) == 0 {
			q = c
		}
		safeOrders.Lock()
		if safeOrders.m == nil || len(safeOrders.m) >= 64 {
			safeOrders.m = map[string]*big.Int{}
		}
		safeOrders.m[key] = q
		safeOrders.Unlock()
	}
	if q == nil {
		return nil
	}
	return new(big.Int).Set(q)
}

// GenerateGroup makes a new group of bits bits: a safe prime p = 2q + 1
// (q prime) with generator g = 2 if 2 generates the subgroup of order q,
// else g = 4 (a square, always of order q). Candidates q and 2q + 1 are
// sieved together by the odd primes below 2¹⁶ before any primality test.
// ctx bounds the search: safe primes are rare, it takes seconds at 1024
// bits and can take a minute at 2048.
func GenerateGroup(ctx context.Context, rnd io.Reader, bits int) (*Group, error) {
	if bits < MinBits || bits > MaxBits {
		return nil, fmt.Errorf("%w: %d-bit prime (want %d to %d bits)", ErrInvalidParameters, bits, MinBits, MaxBits)
	}
	return generateGroup(ctx, rnd, bits)
}

// generateGroup is GenerateGroup without the size limits (the tests make
// small groups with it).
func generateGroup(ctx context.Context, rnd io.Reader, bits int) (*Group, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	sp := sievePrimes()
	one := big.NewInt(1)
	buf := make([]byte, (bits-1+7)/8)
	res := make([]uint32, len(sp))
	q, p, m := new(big.Int), new(big.Int), new(big.Int)
	for {
		if _, err := io.ReadFull(rnd, buf); err != nil {
			return nil, fmt.Errorf("dh: generate group: %w", err)
		}
		q.SetBytes(buf)
		for i := q.BitLen() - 1; i >= bits-1; i-- {
			q.SetBit(q, i, 0)
		}
		q.SetBit(q, bits-2, 1)
		q.SetBit(q, bits-3, 1) // p = 2q+1 keeps exactly bits bits after the search's steps
		q.SetBit(q, 0, 1)
		// q ≡ 5 (mod 6) makes both q and 2q+1 prime to 3 at every step of 6.
		for q.Bit(0) == 0 || new(big.Int).Mod(q, big.NewInt(3)).Int64() != 2 {
			q.Add(q, one)
		}
		for i, s := range sp {
			res[i] = uint32(m.Mod(q, big.NewInt(int64(s))).Int64())
		}
		for delta := uint32(0); delta < 1<<20; delta += 6 {
			if delta%(6<<10) == 0 {
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("dh: generate group: %w", err)
				}
			}
			ok := true
			for i, s := range sp {
				r := (res[i] + delta) % s
				if r == 0 || (2*r+1)%s == 0 {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			c := new(big.Int).Add(q, big.NewInt(int64(delta)))
			p.Lsh(c, 1)
			p.Add(p, one)
			// A base-2 Fermat test on p first: one exponentiation rejects
			// almost every composite.
			if new(big.Int).Exp(big.NewInt(2), new(big.Int).Sub(p, one), p).Cmp(one) != 0 {
				continue
			}
			if p.BitLen() != bits || !c.ProbablyPrime(20) || !p.ProbablyPrime(20) {
				continue
			}
			g := big.NewInt(2)
			if new(big.Int).Exp(g, c, p).Cmp(one) != 0 {
				g = big.NewInt(4)
			}
			return &Group{P: new(big.Int).Set(p), G: g, Q: c}, nil
		}
	}
}

// sievePrimes are the primes from 5 to 2¹⁶ (2 and 3 are handled by the
// choice of q).
var sievePrimes = sync.OnceValue(func() []uint32 {
	const n = 1 << 16
	composite := make([]bool, n)
	var ps []uint32
	for i := 2; i < n; i++ {
		if composite[i] {
			continue
		}
		if i >= 5 {
			ps = append(ps, uint32(i))
		}
		for j := i * i; j < n; j += i {
			composite[j] = true
		}
	}
	return ps
})

// order returns the exponent modulus used for blinding: q or p−1.
func (g *Group) order() *big.Int {
	if g.Q != nil {
		return g.Q
	}
	return new(big.Int).Sub(g.P, big.NewInt(1))
}

// Options select how a key's exponentiations run.
type Options struct {
	// ValueBits, if not 0, is a public bound on the private value:
	// x < 2^ValueBits (PKCS #11 CKA_VALUE_BITS: x's bit length), from 1 to
	// the order's bit length; NewKey checks it. When it
	// is at most a quarter of the order's bits, Derive splits x
	// additively into short exponents instead of adding a multiple of the
	// order (see the package documentation).
	ValueBits int
}

// Key is a DH private key prepared for an engine. Safe for concurrent use.
// [Key.On] prepares the same key for another engine (engine/guard's
// fallback).
type Key struct {
	*secret
	pr *prepared // p on the key's engine
}

// secret is what a key's copies on several engines share.
type secret struct {
	group Group
	pm    *mont.Modulus // software arithmetic mod p
	x     []uint64      // private value, limbs of the order
	ord   []uint64      // q or p−1, its limbs
	short int           // bytes of each split exponent; 0: full-length blinding
	opts  Options
}

type prepared struct {
	eng  engine.Engine
	name string
	pm   engine.Modulus
	pair engine.PairEngine
}

func prepare(eng engine.Engine, p *big.Int) (*prepared, error) {
	info := eng.Info()
	if info.MaxModulusBits > 0 && p.BitLen() > info.MaxModulusBits {
		return nil, fmt.Errorf("dh: engine %s: %d-bit p exceeds %d bits: %w", info.Name, p.BitLen(), info.MaxModulusBits, engine.ErrOperandTooLarge)
	}
	pm, err := eng.NewModulus(p.Bytes())
	if err != nil {
		return nil, fmt.Errorf("dh: engine %s: modulus p: %w", info.Name, err)
	}
	pr := &prepared{eng: eng, name: info.Name, pm: pm}
	pr.pair, _ = engine.As[engine.PairEngine](eng)
	return pr, nil
}

// privateRange checks x (big-endian) is in [1, n−1], n the group's
// order (q or p−1), in constant time, and returns its limbs.
func privateRange(ordLimbs []uint64, x []byte) ([]uint64, error) {
	for len(x) > 0 && x[0] == 0 {
		x = x[1:]
	}
	xl := make([]uint64, len(ordLimbs))
	if len(x) > 8*len(ordLimbs) || mont.SetBytes(xl, x)&mont.Less(xl, ordLimbs)&(1^mont.IsZero(xl)) != 1 {
		return nil, fmt.Errorf("%w: private value not in [1, n−1] (n = q, or p−1 without q)", ErrInvalidKey)
	}
	return xl, nil
}

// NewKey checks the private value x (big-endian; in [1, q−1] for a known
// group, [1, p−2] otherwise) and prepares p on eng. The
// group must come from LookupGroup or GenerateGroup.
func NewKey(eng engine.Engine, group *Group, x []byte, opts Options) (*Key, error) {
	if eng == nil || group == nil || group.P == nil || group.G == nil {
		return nil, fmt.Errorf("dh: new key: nil engine or group: %w", ErrInvalidParameters)
	}
	k := &Key{secret: &secret{group: *group, opts: opts}}
	var err error
	if k.pm, err = mont.NewModulus(group.P.Bytes()); err != nil {
		return nil, fmt.Errorf("dh: new key: p: %w", ErrInvalidParameters)
	}
	ord := group.order()
	k.ord = make([]uint64, k.pm.Limbs())
	mont.SetBytes(k.ord, ord.Bytes())
	if k.x, err = privateRange(k.ord, x); err != nil {
		return nil, err
	}
	if vb := opts.ValueBits; vb != 0 {
		if vb < 1 || vb > ord.BitLen() {
			return nil, fmt.Errorf("%w: %d value bits (want 1 to %d)", ErrInvalidKey, vb, ord.BitLen())
		}
		if vb < ord.BitLen() { // else x < order < 2^vb already
			bound := make([]uint64, len(k.ord)) // 2^vb
			bound[vb/64] = 1 << (vb % 64)
			if mont.Less(k.x, bound) != 1 {
				return nil, fmt.Errorf("%w: private value not below 2^%d", ErrInvalidKey, vb)
			}
		}
		if 4*vb <= ord.BitLen() {
			k.short = (vb + 65 + 7) / 8
		}
	}
	if k.pr, err = prepare(eng, group.P); err != nil {
		return nil, err
	}
	return k, nil
}

// On returns the key prepared for eng: the same key on another engine.
// engine/guard redoes a faulty agreement this way on the software engine.
func (k *Key) On(eng engine.Engine) (*Key, error) {
	if eng == nil {
		return nil, fmt.Errorf("dh: key on engine: nil engine: %w", ErrInvalidParameters)
	}
	pr, err := prepare(eng, k.group.P)
	if err != nil {
		return nil, err
	}
	return &Key{secret: k.secret, pr: pr}, nil
}

// Group returns the key's group.
func (k *Key) Group() *Group { g := k.group; return &g }

// blind returns x + m·n (n = q or p−1) for a fresh random 64-bit m.
func (k *Key) blind() ([]byte, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("dh: exponent blinding: %w", err)
	}
	return mont.BlindExponent(k.x, k.ord, binary.LittleEndian.Uint64(rnd[:])), nil
}

// split returns x + r and r, each as k.short big-endian bytes, for a fresh
// r uniform in [0, 2^(ValueBits+64)): x + r < 2^(ValueBits+65) fits, and
// is within 2⁻⁶⁴ of r's distribution whatever x. Constant time.
func (k *Key) split() (xr, r []byte, err error) {
	n := k.short
	r = make([]byte, n)
	if _, err := rand.Read(r); err != nil {
		return nil, nil, fmt.Errorf("dh: exponent split: %w", err)
	}
	r[0] &= 0xff >> (8*n - (k.opts.ValueBits + 64))
	L := mont.Limbs(n)
	rl, xl, sum := make([]uint64, L), make([]uint64, L), make([]uint64, L)
	mont.SetBytes(rl, r)
	copy(xl, k.x) // x < 2^ValueBits: the limbs beyond L are zero
	mont.Add(sum, xl, rl)
	xr = make([]byte, n)
	mont.FillBytes(xr, sum)
	clear(rl)
	clear(xl)
	clear(sum)
	return xr, r, nil
}

// CheckPublic checks a public value of the group: 1 < y < p−1 and, for a
// group with a known q, y^q ≡ 1 (mod p). For the RFC 7919 groups, whose
// primes are safe (p = 2q+1), that is Euler's criterion: y^q ≡ (y/p), so
// the check is the Jacobi symbol (y/p) = 1 (the subgroup of order q is the
// quadratic residues), a gcd-like computation instead of a full-length
// exponentiation. Variable time (public values).
func CheckPublic(group *Group, y []byte) error {
	yv := new(big.Int).SetBytes(y)
	pm1 := new(big.Int).Sub(group.P, big.NewInt(1))
	if yv.Cmp(big.NewInt(1)) <= 0 || yv.Cmp(pm1) >= 0 {
		return fmt.Errorf("%w: not in (1, p−1)", ErrInvalidPublic)
	}
	if group.Q == nil {
		return nil
	}
	inSubgroup := false
	if knownSafePrime(group) {
		inSubgroup = big.Jacobi(yv, group.P) == 1
	} else {
		inSubgroup = new(big.Int).Exp(yv, group.Q, group.P).Cmp(big.NewInt(1)) == 0
	}
	if !inSubgroup {
		return fmt.Errorf("%w: not in the subgroup of order q of %s", ErrInvalidPublic, group.Name)
	}
	return nil
}

// knownSafePrime reports whether the group's p and q are those of an RFC
// 7919 group: p a safe prime and q = (p−1)/2.
func knownSafePrime(group *Group) bool {
	for _, kg := range knownGroups() {
		if group.P.Cmp(kg.P) == 0 && group.Q.Cmp(kg.Q) == 0 {
			return true
		}
	}
	return false
}

// Derive returns the shared secret Z = y^x mod p for the peer's public
// value y (big-endian), as many bytes as p (left-padded with zeros, as
// PKCS #3 and SP 800-56A give it). y is checked with CheckPublic; the
// exponentiation runs twice on the engine with independent blinding and
// both results must agree (see the package documentation). A
// disagreement is an error wrapping ErrFault and engine.ErrDevice, with no
// secret; redoing it elsewhere is the caller's policy (engine/guard).
func (k *Key) Derive(ctx context.Context, y []byte) ([]byte, engine.Cost, error) {
	if err := CheckPublic(&k.group, y); err != nil {
		return nil, engine.Cost{}, err
	}
	yb := new(big.Int).SetBytes(y).FillBytes(make([]byte, k.pm.Size()))
	return k.deriveOn(ctx, k.pr, yb)
}

func (k *Key) deriveOn(ctx context.Context, pr *prepared, yb []byte) ([]byte, engine.Cost, error) {
	// y⁻¹ mod p: public.
	yInv := new(big.Int).ModInverse(new(big.Int).SetBytes(yb), k.group.P)
	if yInv == nil {
		return nil, engine.Cost{}, fmt.Errorf("%w: not invertible mod p", ErrInvalidPublic)
	}
	yInvB := yInv.FillBytes(make([]byte, k.pm.Size()))
	var (
		z1, z2 []byte
		cost   engine.Cost
		err    error
	)
	if k.short > 0 {
		z1, z2, cost, err = k.splitResults(ctx, pr, yb, yInvB)
	} else {
		z1, z2, cost, err = k.blindedResults(ctx, pr, yb, yInvB)
	}
	if err != nil {
		return nil, cost, err
	}
	// The check: z1·z2 = 1 (see blindedResults and splitResults), and z1
	// in [1, p−1].
	size, limbs := k.pm.Size(), k.pm.Limbs()
	a, b := make([]uint64, limbs), make([]uint64, limbs)
	ok := len(z1) == size && len(z2) == size
	if ok {
		ok = mont.SetBytes(a, z1)&k.pm.Less(a)&(1^mont.IsZero(a))&mont.SetBytes(b, z2)&k.pm.Less(b) == 1
	}
	if ok {
		t := make([]uint64, k.pm.ScratchLen())
		k.pm.ToMont(a, a, t)
		k.pm.MontMul(b, a, b, t) // z1·z2 mod p
		one := make([]uint64, limbs)
		one[0] = 1
		ok = mont.Equal(b, one) == 1
		mont.SetBytes(a, z1)
		if ok && k.short == 0 && k.group.Q != nil {
			// An engine that ignores the exponent returns y and y⁻¹,
			// whose product passes; y has order q, so z1 = y only for
			// x = 1. (The split path gives z1 = 1 there.)
			yl := make([]uint64, limbs)
			mont.SetBytes(yl, yb)
			oneX := make([]uint64, len(k.x))
			oneX[0] = 1
			ok = mont.Equal(a, yl)&(1^mont.Equal(k.x, oneX)) == 0
		}
		if ok && mont.Equal(a, one) == 1 {
			clear(z1)
			return nil, cost, fmt.Errorf("%w: shared secret is 1", ErrInvalidPublic)
		}
	}
	clear(a)
	clear(b)
	clear(z2)
	if !ok {
		clear(z1)
		return nil, cost, fmt.Errorf("dh: derive on engine %s: results fail the check (z1·z2 ≠ 1 or out of range): %w (%w)", pr.name, ErrFault, engine.ErrDevice)
	}
	return z1, cost, nil
}

// expTwo runs a and b on the engine: one ExpPair call where the engine
// has it and does not decline, else two Exp calls.
func expTwo(ctx context.Context, pr *prepared, a, b engine.ExpOp) (ra, rb []byte, cost engine.Cost, err error) {
	// An engine may decline a pair (engine.ErrUnsupported: the software
	// engine pairs only on kernels that interleave two exponentiations);
	// the two then run as for an engine without ExpPair.
	if pr.pair != nil {
		ra, rb, cost, err = pr.pair.ExpPair(ctx, a, b)
		if !errors.Is(err, engine.ErrUnsupported) {
			return ra, rb, cost, err
		}
	}
	var c2 engine.Cost
	ra, cost, err = pr.eng.Exp(ctx, a.M, a.Base, a.Exp)
	if err == nil {
		rb, c2, err = pr.eng.Exp(ctx, b.M, b.Base, b.Exp)
		cost = cost.Add(c2)
	}
	return ra, rb, cost, err
}

// blindedResults returns z1 = y^(x+m1·n) and z2 = (y⁻¹)^(x+m2·n) from the
// engine (fresh 64-bit m1, m2; n = q or p−1): z1·z2 = y^((m1−m2)·n) = 1,
// n being a multiple of y's order (q after CheckPublic, or p−1).
func (k *Key) blindedResults(ctx context.Context, pr *prepared, yb, yInvB []byte) (z1, z2 []byte, cost engine.Cost, err error) {
	e1, err := k.blind()
	if err != nil {
		return nil, nil, cost, err
	}
	defer clear(e1)
	e2, err := k.blind()
	if err != nil {
		return nil, nil, cost, err
	}
	defer clear(e2)
	z1, z2, cost, err = expTwo(ctx, pr, engine.ExpOp{M: pr.pm, Base: yb, Exp: e1}, engine.ExpOp{M: pr.pm, Base: yInvB, Exp: e2})
	if err != nil {
		return nil, nil, cost, fmt.Errorf("dh: derive: engine %s: %w", pr.name, err)
	}
	return z1, z2, cost, nil
}

// splitResults returns z1 = y^(x+r1)·(y⁻¹)^r1 and z2 = (y⁻¹)^(x+r2)·y^r2,
// the four exponentiations of ValueBits+65 bits on the engine (fresh r1,
// r2; see split), the products in software: z1·z2 = 1. An engine that
// ignores exponents gives z1 = 1, one that returns a constant W gives
// z1·z2 = W⁴ ≠ 1 (W ≠ ±1), a stuck bit corrupts the four differently.
func (k *Key) splitResults(ctx context.Context, pr *prepared, yb, yInvB []byte) (z1, z2 []byte, cost engine.Cost, err error) {
	var e [4][]byte
	defer func() {
		for _, v := range e {
			clear(v)
		}
	}()
	if e[0], e[1], err = k.split(); err != nil {
		return nil, nil, cost, err
	}
	if e[2], e[3], err = k.split(); err != nil {
		return nil, nil, cost, err
	}
	var r [4][]byte
	r[0], r[1], cost, err = expTwo(ctx, pr, engine.ExpOp{M: pr.pm, Base: yb, Exp: e[0]}, engine.ExpOp{M: pr.pm, Base: yInvB, Exp: e[1]})
	if err == nil {
		var c2 engine.Cost
		r[2], r[3], c2, err = expTwo(ctx, pr, engine.ExpOp{M: pr.pm, Base: yInvB, Exp: e[2]}, engine.ExpOp{M: pr.pm, Base: yb, Exp: e[3]})
		cost = cost.Add(c2)
	}
	if err != nil {
		return nil, nil, cost, fmt.Errorf("dh: derive: engine %s: %w", pr.name, err)
	}
	size, limbs := k.pm.Size(), k.pm.Limbs()
	var v [4][]uint64
	ok := uint64(1)
	for i := range r {
		v[i] = make([]uint64, limbs)
		if len(r[i]) != size {
			return nil, nil, cost, fmt.Errorf("dh: derive on engine %s: result of %d bytes: %w (%w)", pr.name, len(r[i]), ErrFault, engine.ErrDevice)
		}
		ok &= mont.SetBytes(v[i], r[i]) & k.pm.Less(v[i])
		clear(r[i])
	}
	if ok != 1 {
		return nil, nil, cost, fmt.Errorf("dh: derive on engine %s: result not below p: %w (%w)", pr.name, ErrFault, engine.ErrDevice)
	}
	t := make([]uint64, k.pm.ScratchLen())
	// a·b mod p = MontMul(a·R, b).
	k.pm.ToMont(v[0], v[0], t)
	k.pm.MontMul(v[0], v[0], v[1], t)
	k.pm.ToMont(v[2], v[2], t)
	k.pm.MontMul(v[2], v[2], v[3], t)
	z1, z2 = make([]byte, size), make([]byte, size)
	mont.FillBytes(z1, v[0])
	mont.FillBytes(z2, v[2])
	for i := range v {
		clear(v[i])
	}
	return z1, z2, cost, nil
}

// GenerateKey draws a private value and computes the public value
// y = g^x mod p on eng with the exponent blinded, requiring it to equal the
// software result (constant time in x); a difference is an error wrapping
// engine.ErrDevice. valueBits, if not 0, is the exact bit length of x
// (PKCS #11 CKA_VALUE_BITS; it must be below the order's bit length);
// otherwise x is uniform in [1, q−1] (known groups) or [1, p−2]. x is
// returned at the byte length of the order, y at that of p.
func GenerateKey(ctx context.Context, eng engine.Engine, group *Group, valueBits int, rnd io.Reader) (x, y []byte, cost engine.Cost, err error) {
	if group == nil || group.P == nil || group.G == nil {
		return nil, nil, cost, fmt.Errorf("dh: generate key: %w", ErrInvalidParameters)
	}
	if rnd == nil {
		rnd = rand.Reader
	}
	ord := group.order()
	if valueBits < 0 || valueBits == 1 || valueBits >= ord.BitLen() {
		return nil, nil, cost, fmt.Errorf("%w: %d value bits (want 2 to %d)", ErrInvalidKey, valueBits, ord.BitLen()-1)
	}
	olen := (ord.BitLen() + 7) / 8
	ordLimbs := make([]uint64, mont.Limbs(len(group.P.Bytes())))
	mont.SetBytes(ordLimbs, ord.Bytes())
	x = make([]byte, olen)
	xl := make([]uint64, len(ordLimbs))
	defer clear(xl)
	for tries := 0; ; tries++ {
		if tries == 100 {
			return nil, nil, cost, errors.New("dh: generate key: random source gives no value in range")
		}
		if _, err := io.ReadFull(rnd, x); err != nil {
			return nil, nil, cost, fmt.Errorf("dh: generate key: %w", err)
		}
		if valueBits > 0 {
			// Exactly valueBits bits: clear the bits above, set the top one.
			for i := range x {
				bitPos := 8 * (olen - 1 - i) // value of bit 0 of byte i
				switch {
				case bitPos >= valueBits:
					x[i] = 0
				case bitPos+8 >= valueBits:
					top := valueBits - bitPos // bits kept in this byte, 1..8
					x[i] = x[i]&byte(0xff>>(8-top)) | 1<<(top-1)
				}
			}
			break // < 2^valueBits ≤ order/2
		}
		x[0] &= 0xff >> (8*olen - ord.BitLen())
		mont.SetBytes(xl, x)
		if mont.Less(xl, ordLimbs)&(1^mont.IsZero(xl)) == 1 {
			break
		}
	}
	k, err := NewKey(eng, group, x, Options{})
	if err != nil {
		clear(x)
		return nil, nil, cost, err
	}
	// Software: g^x in constant time, the exponent at the order's length.
	g := make([]uint64, k.pm.Limbs())
	mont.SetBytes(g, group.G.Bytes())
	sy := make([]uint64, k.pm.Limbs())
	k.pm.Exp(sy, g, x)
	y = make([]byte, k.pm.Size())
	mont.FillBytes(y, sy)
	e, err := k.blind()
	if err != nil {
		clear(x)
		return nil, nil, cost, err
	}
	ey, cost, err := k.pr.eng.Exp(ctx, k.pr.pm, group.G.FillBytes(make([]byte, k.pm.Size())), e)
	clear(e)
	if err != nil {
		clear(x)
		return nil, nil, cost, fmt.Errorf("dh: generate key: engine %s: %w", k.pr.name, err)
	}
	if subtle.ConstantTimeCompare(ey, y) != 1 {
		clear(x)
		return nil, nil, cost, fmt.Errorf("dh: engine %s computed a wrong public value: %w (%w)", k.pr.name, ErrFault, engine.ErrDevice)
	}
	return x, y, cost, nil
}

// PublicValue checks the private value x as NewKey does and returns
// y = g^x mod p at the byte length of p, computed in software in constant
// time in x (the exponent at the order's byte length).
func PublicValue(group *Group, x []byte) ([]byte, error) {
	if group == nil || group.P == nil || group.G == nil {
		return nil, fmt.Errorf("dh: public value: %w", ErrInvalidParameters)
	}
	pm, err := mont.NewModulus(group.P.Bytes())
	if err != nil {
		return nil, fmt.Errorf("dh: public value: p: %w", ErrInvalidParameters)
	}
	ord := make([]uint64, pm.Limbs())
	mont.SetBytes(ord, group.order().Bytes())
	xl, err := privateRange(ord, x)
	if err != nil {
		return nil, err
	}
	defer clear(xl)
	xb := make([]byte, 8*len(xl))
	defer clear(xb)
	mont.FillBytes(xb, xl)
	g := make([]uint64, pm.Limbs())
	mont.SetBytes(g, group.G.Bytes())
	y := make([]uint64, pm.Limbs())
	pm.Exp(y, g, xb)
	out := make([]byte, pm.Size())
	mont.FillBytes(out, y)
	return out, nil
}
