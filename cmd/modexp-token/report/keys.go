package report

import (
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"sync"
)

// rsaKey is an RSA key with its CRT values, as the simulations take it.
type rsaKey struct {
	N, D, P, Q, Dp, Dq, Qinv *big.Int
	E                        int
}

// keyCache holds the keys drawn so far: the table and the chart of one run
// share them.
var keyCache struct {
	sync.Mutex
	byBits map[int]*rsaKey
}

// loadKey returns the RSA key of bits bits (a multiple of 64) drawn from
// a generator seeded by bits: the same key on every run and machine, so
// the table is the same each time, but no fixed key in the binary. The
// primes are found by math/big's ProbablyPrime (20 Miller–Rabin rounds
// and a Lucas test); the key is for the simulations' figures only.
func loadKey(bits int) (*rsaKey, error) {
	keyCache.Lock()
	defer keyCache.Unlock()
	if k, ok := keyCache.byBits[bits]; ok {
		return k, nil
	}
	k, err := drawKey(mrand.New(mrand.NewPCG(uint64(bits), 0x6b657973)), bits)
	if err != nil {
		return nil, err
	}
	if keyCache.byBits == nil {
		keyCache.byBits = map[int]*rsaKey{}
	}
	keyCache.byBits[bits] = k
	return k, nil
}

// drawKey draws an RSA key of exactly bits bits with e = 65537 from r.
func drawKey(r *mrand.Rand, bits int) (*rsaKey, error) {
	if bits < 128 || bits%64 != 0 {
		return nil, fmt.Errorf("report: RSA key of %d bits: want a multiple of 64, at least 128", bits)
	}
	const e = 65537
	one, bigE := big.NewInt(1), big.NewInt(e)
	for {
		p, q := drawPrime(r, bits/2, bigE), drawPrime(r, bits/2, bigE)
		if p.Cmp(q) == 0 {
			continue
		}
		if p.Cmp(q) < 0 {
			p, q = q, p
		}
		n := new(big.Int).Mul(p, q)
		pm1, qm1 := new(big.Int).Sub(p, one), new(big.Int).Sub(q, one)
		phi := new(big.Int).Mul(pm1, qm1)
		d := new(big.Int).ModInverse(bigE, phi)
		if n.BitLen() != bits || d == nil {
			continue
		}
		return &rsaKey{
			N: n, E: e, D: d, P: p, Q: q,
			Dp:   new(big.Int).Mod(d, pm1),
			Dq:   new(big.Int).Mod(d, qm1),
			Qinv: new(big.Int).ModInverse(q, p),
		}, nil
	}
}

// drawPrime draws a prime of exactly bits bits, its two top bits set (so
// that the product of two has twice the bits), with gcd(e, p−1) = 1.
func drawPrime(r *mrand.Rand, bits int, e *big.Int) *big.Int {
	b := make([]byte, bits/8)
	one := big.NewInt(1)
	for {
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		b[0] |= 0xc0
		b[len(b)-1] |= 1
		p := new(big.Int).SetBytes(b)
		if !p.ProbablyPrime(20) {
			continue
		}
		if new(big.Int).GCD(nil, nil, e, new(big.Int).Sub(p, one)).Cmp(one) == 0 {
			return p
		}
	}
}
