package dsa

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"sync"
)

// Sentinel errors.
var (
	// ErrInvalidParameters: domain parameters that are not a FIPS 186-4
	// size or fail a check (primality, q | p−1, the order of g).
	ErrInvalidParameters = errors.New("dsa: invalid domain parameters")
	// ErrInvalidKey: a private value outside [1, q−1] or a public value
	// outside the subgroup.
	ErrInvalidKey = errors.New("dsa: invalid key")
	// ErrInvalidSignature: a signature that does not verify, whatever the
	// reason.
	ErrInvalidSignature = errors.New("dsa: invalid signature")
	// ErrFault: the engine's result failed the check before release.
	ErrFault = errors.New("dsa: engine result failed verification")
)

// Size is a pair of bit lengths: L of p, N of q.
type Size struct{ L, N int }

// Sizes are the (L, N) pairs of FIPS 186-4 §4.2, the only ones accepted.
var Sizes = []Size{{1024, 160}, {2048, 224}, {2048, 256}, {3072, 256}}

// Parameters are DSA domain parameters: primes p and q with q | p−1, and
// a generator g of the subgroup of order q mod p.
type Parameters struct {
	P, Q, G *big.Int
}

// Size returns the bit lengths of p and q.
func (p *Parameters) Size() Size { return Size{p.P.BitLen(), p.Q.BitLen()} }

// checkedParams remembers the parameter sets that passed
// CheckParameters (public values: p‖q‖g), so that preparing many keys of
// one set tests the primes once. At most maxChecked entries; when full it
// is emptied.
var checkedParams struct {
	sync.Mutex
	m map[string]bool
}

const maxChecked = 64

func paramsKey(p *Parameters) string {
	var b []byte
	for _, v := range []*big.Int{p.P, p.Q, p.G} {
		vb := v.Bytes()
		b = append(b, byte(len(vb)>>8), byte(len(vb)))
		b = append(b, vb...)
	}
	return string(b)
}

// CheckParameters checks domain parameters: a FIPS 186-4 size, p and q
// probable primes, q | p−1, 1 < g < p and g^q ≡ 1 (mod p). Sets that
// passed are remembered. Errors wrap ErrInvalidParameters.
func CheckParameters(p *Parameters) error {
	bad := func(f string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidParameters, fmt.Sprintf(f, a...))
	}
	if p == nil || p.P == nil || p.Q == nil || p.G == nil {
		return bad("missing p, q or g")
	}
	if p.P.Sign() <= 0 || p.Q.Sign() <= 0 || p.G.Sign() <= 0 {
		return bad("p, q and g must be positive")
	}
	if sz := p.Size(); !slices.Contains(Sizes, sz) {
		return bad("(L, N) = (%d, %d) is not a FIPS 186-4 size", sz.L, sz.N)
	}
	key := paramsKey(p)
	checkedParams.Lock()
	ok := checkedParams.m[key]
	checkedParams.Unlock()
	if ok {
		return nil
	}
	one := big.NewInt(1)
	if new(big.Int).Mod(new(big.Int).Sub(p.P, one), p.Q).Sign() != 0 {
		return bad("q does not divide p−1")
	}
	if p.G.Cmp(one) <= 0 || p.G.Cmp(p.P) >= 0 {
		return bad("g not in (1, p)")
	}
	if !p.Q.ProbablyPrime(20) {
		return bad("q is not prime")
	}
	if !p.P.ProbablyPrime(10) {
		return bad("p is not prime")
	}
	if new(big.Int).Exp(p.G, p.Q, p.P).Cmp(one) != 0 {
		return bad("g does not have order q")
	}
	checkedParams.Lock()
	if checkedParams.m == nil || len(checkedParams.m) >= maxChecked {
		checkedParams.m = map[string]bool{}
	}
	checkedParams.m[key] = true
	checkedParams.Unlock()
	return nil
}

// GenerateParameters makes domain parameters of a FIPS 186-4 size from
// rand (crypto/rand when nil): a random N-bit prime q, then p = X − (X mod
// 2q) + 1 for random L-bit X until p is prime (up to 4L tries per q, as
// FIPS 186-4 A.1.1.2 bounds it), then g = h^((p−1)/q) mod p for h = 2,
// 3, ... until g ≠ 1. The primes are probable primes (Miller–Rabin and
// Baillie–PSW, math/big's ProbablyPrime); the generation seed of A.1.1.2
// is not kept, so the parameters cannot be re-validated from a seed.
// ctx bounds the search (it takes seconds at L = 3072).
func GenerateParameters(ctx context.Context, rnd io.Reader, size Size) (*Parameters, error) {
	if !slices.Contains(Sizes, size) {
		return nil, fmt.Errorf("%w: (L, N) = (%d, %d) is not a FIPS 186-4 size", ErrInvalidParameters, size.L, size.N)
	}
	if rnd == nil {
		rnd = rand.Reader
	}
	L, N := size.L, size.N
	qb := make([]byte, (N+7)/8)
	pb := make([]byte, (L+7)/8)
	one := big.NewInt(1)
	q, p, x, rem, twoQ := new(big.Int), new(big.Int), new(big.Int), new(big.Int), new(big.Int)
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("dsa: generate parameters: %w", err)
		}
		if _, err := io.ReadFull(rnd, qb); err != nil {
			return nil, fmt.Errorf("dsa: generate parameters: %w", err)
		}
		qb[len(qb)-1] |= 1
		q.SetBytes(qb)
		q.SetBit(q, N-1, 1)
		for i := q.BitLen() - 1; i >= N; i-- {
			q.SetBit(q, i, 0)
		}
		if !q.ProbablyPrime(20) {
			continue
		}
		twoQ.Lsh(q, 1)
		for range 4 * L {
			if _, err := io.ReadFull(rnd, pb); err != nil {
				return nil, fmt.Errorf("dsa: generate parameters: %w", err)
			}
			x.SetBytes(pb)
			x.SetBit(x, L-1, 1)
			for i := x.BitLen() - 1; i >= L; i-- {
				x.SetBit(x, i, 0)
			}
			rem.Mod(x, twoQ)
			p.Sub(x, rem)
			p.Add(p, one)
			if p.BitLen() < L || !p.ProbablyPrime(10) {
				continue
			}
			e := new(big.Int).Div(new(big.Int).Sub(p, one), q)
			for h := int64(2); ; h++ {
				g := new(big.Int).Exp(big.NewInt(h), e, p)
				if g.Cmp(one) != 0 {
					params := &Parameters{P: new(big.Int).Set(p), Q: new(big.Int).Set(q), G: g}
					if err := CheckParameters(params); err != nil {
						return nil, fmt.Errorf("dsa: generated parameters fail the check: %w", err)
					}
					return params, nil
				}
			}
		}
	}
}
