package rsa

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"math/bits"

	"github.com/modexp-token/modexp-token/engine"
)

// smallPrimes are the odd primes below 2048, for the sieve.
var smallPrimes = func() []uint64 {
	var ps []uint64
	composite := make([]bool, 2048)
	for i := 2; i < len(composite); i++ {
		if composite[i] {
			continue
		}
		if i > 2 {
			ps = append(ps, uint64(i))
		}
		for j := i * i; j < len(composite); j += i {
			composite[j] = true
		}
	}
	return ps
}()

// sieveGroups are runs of consecutive small primes whose product fits in
// 64 bits, so a candidate is reduced once per group.
var sieveGroups = func() [][]uint64 {
	var groups [][]uint64
	var cur []uint64
	prod := uint64(1)
	for _, p := range smallPrimes {
		if hi, _ := bits.Mul64(prod, p); hi != 0 {
			groups = append(groups, cur)
			cur, prod = nil, 1
		}
		cur = append(cur, p)
		prod *= p
	}
	return append(groups, cur)
}()

// GenerateKey makes a bits-long RSA key with public exponent e, testing
// primality on eng (FIPS 186-5 checks: |p−q|, size of d).
//
// bits must be in [MinGenerateBits, MaxKeyBits] and e odd and at least 3
// (FIPS 186-5 asks for e ≥ 65537; smaller e are accepted for
// interoperation). Candidates are drawn from random, sieved by the odd
// primes below 2048 and tested by Miller–Rabin with the engine's Exp (the
// round count of FIPS 186-5 table B.1). The key is then checked: |p−q| >
// 2^(bits/2−100), d > 2^(bits/2), and a pairwise-consistency private
// operation on eng (checked in software). The key's Dp, Dq and Qinv are
// set, computed in constant time (CRTValues); d = e⁻¹ mod λ(n) is
// computed with math/big, variable time, once per key, as Go's own
// crypto/rsa key generation computes it with a variable-time inversion.
func GenerateKey(ctx context.Context, eng engine.Engine, random io.Reader, bits, e int) (*PrivateKey, error) {
	if bits < MinGenerateBits || bits > MaxKeyBits {
		return nil, fmt.Errorf("rsa: generate: %d bits (want %d..%d): %w", bits, MinGenerateBits, MaxKeyBits, ErrInvalidKey)
	}
	if e < 3 || e%2 == 0 {
		return nil, fmt.Errorf("rsa: generate: public exponent %d (must be odd and at least 3): %w", e, ErrInvalidKey)
	}
	if eng == nil || random == nil {
		return nil, fmt.Errorf("rsa: generate: nil engine or random source: %w", ErrInvalidKey)
	}
	E := big.NewInt(int64(e))
	one := big.NewInt(1)
	minDiff := new(big.Int).Lsh(one, uint(bits/2-100))
	minD := new(big.Int).Lsh(one, uint(bits/2))
	for attempt := 0; attempt < 100; attempt++ {
		p, err := generatePrime(ctx, eng, random, (bits+1)/2, E)
		if err != nil {
			return nil, err
		}
		q, err := generatePrime(ctx, eng, random, bits/2, E)
		if err != nil {
			return nil, err
		}
		diff := new(big.Int).Sub(p, q)
		if diff.Abs(diff).Cmp(minDiff) <= 0 {
			continue
		}
		n := new(big.Int).Mul(p, q)
		if n.BitLen() != bits {
			return nil, fmt.Errorf("rsa: generate: modulus of %d bits, want %d", n.BitLen(), bits)
		}
		pm1 := new(big.Int).Sub(p, one)
		qm1 := new(big.Int).Sub(q, one)
		g := new(big.Int).GCD(nil, nil, pm1, qm1)
		lambda := new(big.Int).Div(new(big.Int).Mul(pm1, qm1), g)
		d := new(big.Int).ModInverse(E, lambda)
		if d == nil || d.Cmp(minD) <= 0 {
			continue
		}
		if p.Cmp(q) < 0 { // convention: p > q
			p, q = q, p
		}
		priv := &PrivateKey{N: n, E: e, D: d, P: p, Q: q}
		dp, dq, qinv, err := validate(priv) // the CRT values in constant time
		if err != nil {
			return nil, fmt.Errorf("rsa: generate: %w", err)
		}
		priv.Dp, priv.Dq, priv.Qinv = new(big.Int).SetBytes(dp), new(big.Int).SetBytes(dq), new(big.Int).SetBytes(qinv)
		if err := pairwiseTest(ctx, eng, priv); err != nil {
			return nil, err
		}
		return priv, nil
	}
	return nil, fmt.Errorf("rsa: generate: no suitable key after 100 attempts")
}

// pairwiseTest does one private operation with the new key on eng; the
// private operation checks its result with the public key in software.
func pairwiseTest(ctx context.Context, eng engine.Engine, priv *PrivateKey) error {
	k, err := NewKey(eng, priv, Options{})
	if err != nil {
		return fmt.Errorf("rsa: generate: new key failed its checks: %w", err)
	}
	m := new(big.Int).Rsh(priv.N, 3).Bytes()
	if _, _, err := k.Private(ctx, m); err != nil {
		return fmt.Errorf("rsa: generate: pairwise consistency test: %w", err)
	}
	return nil
}

// mrRounds is the Miller–Rabin round count for a prime of the given size
// (FIPS 186-5 table B.1, probabilistic primes, error ≤ 2⁻¹⁰⁰ or better).
func mrRounds(bits int) int {
	switch {
	case bits >= 1536:
		return 4
	case bits >= 1024:
		return 5
	default:
		return 8
	}
}

// generatePrime returns a random prime of exactly bits bits with the two
// top bits set and gcd(e, p−1) = 1.
func generatePrime(ctx context.Context, eng engine.Engine, random io.Reader, bits int, e *big.Int) (*big.Int, error) {
	buf := make([]byte, (bits+7)/8)
	one := big.NewInt(1)
	p := new(big.Int)
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("rsa: generate: %w", err)
		}
		if _, err := io.ReadFull(random, buf); err != nil {
			return nil, fmt.Errorf("rsa: generate: random: %w", err)
		}
		if ex := len(buf)*8 - bits; ex > 0 {
			buf[0] &= 0xff >> ex
		}
		p.SetBytes(buf)
		p.SetBit(p, bits-1, 1)
		p.SetBit(p, bits-2, 1)
		p.SetBit(p, 0, 1)
		if !passesSieve(p) {
			continue
		}
		if new(big.Int).GCD(nil, nil, e, new(big.Int).Sub(p, one)).Cmp(one) != 0 {
			continue
		}
		ok, err := millerRabin(ctx, eng, random, p, mrRounds(bits))
		if err != nil {
			return nil, err
		}
		if ok {
			return new(big.Int).Set(p), nil
		}
	}
}

// passesSieve reports whether p has no factor among smallPrimes.
func passesSieve(p *big.Int) bool {
	m := new(big.Int)
	prod := new(big.Int)
	for _, g := range sieveGroups {
		v := uint64(1)
		for _, sp := range g {
			v *= sp
		}
		r := m.Mod(p, prod.SetUint64(v)).Uint64()
		for _, sp := range g {
			if r%sp == 0 {
				return false
			}
		}
	}
	return true
}

// millerRabin runs rounds of Miller–Rabin on the odd w > 3 with random
// bases, using the engine for the exponentiations. The exponent m (w−1 =
// 2^a·m) is secret; the squarings use the public exponent 2.
func millerRabin(ctx context.Context, eng engine.Engine, random io.Reader, w *big.Int, rounds int) (bool, error) {
	wb := w.Bytes()
	mod, err := eng.NewModulus(wb)
	if err != nil {
		return false, fmt.Errorf("rsa: generate: engine modulus: %w", err)
	}
	one := big.NewInt(1)
	wm1 := new(big.Int).Sub(w, one)
	a := 0
	for wm1.Bit(a) == 0 {
		a++
	}
	m := new(big.Int).Rsh(wm1, uint(a)).FillBytes(make([]byte, len(wb)))
	wm1b := wm1.FillBytes(make([]byte, len(wb)))
	oneb := one.FillBytes(make([]byte, len(wb)))
	buf := make([]byte, len(wb)+8)
	bound := new(big.Int).Sub(w, big.NewInt(3)) // b in [2, w−2]
	for range rounds {
		if _, err := io.ReadFull(random, buf); err != nil {
			return false, fmt.Errorf("rsa: generate: random: %w", err)
		}
		b := new(big.Int).SetBytes(buf)
		b.Mod(b, bound).Add(b, big.NewInt(2))
		z, _, err := eng.Exp(ctx, mod, b.Bytes(), m)
		if err != nil {
			return false, fmt.Errorf("rsa: generate: Miller–Rabin exp: %w", err)
		}
		if string(z) == string(oneb) || string(z) == string(wm1b) {
			continue
		}
		composite := true
		for j := 1; j < a; j++ {
			z, _, err = eng.ExpVarTime(ctx, mod, z, []byte{2})
			if err != nil {
				return false, fmt.Errorf("rsa: generate: Miller–Rabin square: %w", err)
			}
			if string(z) == string(wm1b) {
				composite = false
				break
			}
			if string(z) == string(oneb) {
				break
			}
		}
		if composite {
			return false, nil
		}
	}
	return true, nil
}
