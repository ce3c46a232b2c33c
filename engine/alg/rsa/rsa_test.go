package rsa

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	gorsa "crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
)

// keyCache holds crypto/rsa keys by size, made once per test binary.
var keyCache sync.Map

func testKey(t testing.TB, bits int) *gorsa.PrivateKey {
	t.Helper()
	if k, ok := keyCache.Load(bits); ok {
		return k.(*gorsa.PrivateKey)
	}
	k, err := gorsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	keyCache.Store(bits, k)
	return k
}

func privOf(k *gorsa.PrivateKey) *PrivateKey {
	return &PrivateKey{N: k.N, E: k.E, D: k.D, P: k.Primes[0], Q: k.Primes[1]}
}

// unbalancedKey makes a key whose primes have different limb counts.
func unbalancedKey(t *testing.T, pbits, qbits, e int) *PrivateKey {
	t.Helper()
	one := big.NewInt(1)
	for {
		p, err := rand.Prime(rand.Reader, pbits)
		if err != nil {
			t.Fatal(err)
		}
		q, err := rand.Prime(rand.Reader, qbits)
		if err != nil {
			t.Fatal(err)
		}
		pm1, qm1 := new(big.Int).Sub(p, one), new(big.Int).Sub(q, one)
		phi := new(big.Int).Mul(pm1, qm1)
		d := new(big.Int).ModInverse(big.NewInt(int64(e)), phi)
		if d == nil || p.Cmp(q) == 0 {
			continue
		}
		return &PrivateKey{N: new(big.Int).Mul(p, q), E: e, D: d, P: p, Q: q}
	}
}

// TestPrivateMatchesMathBig checks Private against c^d mod n for balanced,
// unbalanced and swapped (p < q) keys, with and without exponent blinding,
// on edge and random inputs.
func TestPrivateMatchesMathBig(t *testing.T) {
	ctx := context.Background()
	eng := soft.New()
	keys := map[string]*PrivateKey{
		"1024":               privOf(testKey(t, 1024)),
		"2048":               privOf(testKey(t, 2048)),
		"unbalanced-400-700": unbalancedKey(t, 400, 700, 65537),
		"unbalanced-700-400": unbalancedKey(t, 700, 400, 65537),
		"e3-odd-bits":        unbalancedKey(t, 513, 520, 3),
	}
	k1 := privOf(testKey(t, 1024))
	keys["swapped"] = &PrivateKey{N: k1.N, E: k1.E, D: k1.D, P: k1.Q, Q: k1.P}
	for name, priv := range keys {
		for _, blind := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/expblind=%v", name, blind), func(t *testing.T) {
				k, err := NewKey(eng, priv, Options{ExponentBlinding: blind})
				if err != nil {
					t.Fatalf("NewKey: %v", err)
				}
				nm1 := new(big.Int).Sub(priv.N, big.NewInt(1))
				inputs := []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(2), nm1, priv.P, new(big.Int).Rsh(priv.N, 1)}
				for range 3 {
					r, _ := rand.Int(rand.Reader, priv.N)
					inputs = append(inputs, r)
				}
				for _, c := range inputs {
					got, _, err := k.Private(ctx, c.Bytes())
					if err != nil {
						t.Fatalf("Private(%x…): %v", c.Bytes()[:min(4, len(c.Bytes()))], err)
					}
					want := new(big.Int).Exp(c, priv.D, priv.N).FillBytes(make([]byte, k.Size()))
					if !bytes.Equal(got, want) {
						t.Fatalf("Private(%x) = %x…, want %x…", c, got[:8], want[:8])
					}
				}
			})
		}
	}
}

func TestPrivateMatchesCryptoRSA(t *testing.T) {
	ctx := context.Background()
	for _, bits := range []int{1024, 2048} {
		gk := testKey(t, bits)
		k, err := NewKey(soft.New(), privOf(gk), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			digest := sha256.Sum256([]byte{byte(i)})
			want, err := gorsa.SignPKCS1v15(nil, gk, crypto.SHA256, digest[:])
			if err != nil {
				t.Fatal(err)
			}
			em, err := Public(gk.N, gk.E, want)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := k.Private(ctx, em)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%d bits: Private differs from crypto/rsa (err %v)", bits, err)
			}
		}
	}
}

func TestPrivateInputRange(t *testing.T) {
	priv := privOf(testKey(t, 1024))
	k, err := NewKey(soft.New(), priv, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]byte{
		priv.N.Bytes(),
		new(big.Int).Add(priv.N, big.NewInt(1)).Bytes(),
		append([]byte{0}, priv.N.Bytes()...),
		append([]byte{0}, big.NewInt(5).FillBytes(make([]byte, k.Size()))...), // too long
	} {
		if _, _, err := k.Private(context.Background(), c); !errors.Is(err, ErrInputRange) {
			t.Errorf("Private(%x…) error = %v, want ErrInputRange", c[:4], err)
		}
	}
}

func TestNewKeyValidation(t *testing.T) {
	good := privOf(testKey(t, 1024))
	one := big.NewInt(1)
	mod := func(f func(p *PrivateKey)) *PrivateKey {
		c := *good
		f(&c)
		return &c
	}
	tests := []struct {
		name string
		priv *PrivateKey
	}{
		{"nil", nil},
		{"no N", mod(func(p *PrivateKey) { p.N = nil })},
		{"no P", mod(func(p *PrivateKey) { p.P = nil })},
		{"even e", mod(func(p *PrivateKey) { p.E = 65536 })},
		{"e=1", mod(func(p *PrivateKey) { p.E = 1 })},
		{"e wrong", mod(func(p *PrivateKey) { p.E = 3 })},
		{"n≠pq", mod(func(p *PrivateKey) { p.N = new(big.Int).Add(p.N, big.NewInt(2)) })},
		{"p=q", mod(func(p *PrivateKey) { p.Q = p.P; p.N = new(big.Int).Mul(p.P, p.P) })},
		{"d wrong", mod(func(p *PrivateKey) { p.D = new(big.Int).Add(p.D, one) })},
		{"d ≥ n", mod(func(p *PrivateKey) { p.D = new(big.Int).Set(p.N) })},
		{"Dp wrong", mod(func(p *PrivateKey) { p.Dp = big.NewInt(12345) })},
		{"Dq wrong", mod(func(p *PrivateKey) { p.Dq = big.NewInt(12345) })},
		{"Qinv wrong", mod(func(p *PrivateKey) { p.Qinv = big.NewInt(12345) })},
		{"too small", unbalancedKey(t, 200, 200, 65537)},
		{"even p", mod(func(p *PrivateKey) { p.P = new(big.Int).Add(p.P, one) })},
		{"p ≥ n", mod(func(p *PrivateKey) { p.P = new(big.Int).Set(p.N) })},
		{"Dp ≥ p", mod(func(p *PrivateKey) { p.Dp = new(big.Int).Add(new(big.Int).Mod(p.D, new(big.Int).Sub(p.P, one)), p.P) })},
	}
	for _, tc := range tests {
		if _, err := NewKey(soft.New(), tc.priv, Options{}); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("%s: NewKey error = %v, want ErrInvalidKey", tc.name, err)
		}
	}
	if _, err := NewKey(nil, good, Options{}); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("nil engine: %v", err)
	}
	// Correct CRT values given explicitly are accepted.
	pm1 := new(big.Int).Sub(good.P, one)
	qm1 := new(big.Int).Sub(good.Q, one)
	full := mod(func(p *PrivateKey) {
		p.Dp = new(big.Int).Mod(p.D, pm1)
		p.Dq = new(big.Int).Mod(p.D, qm1)
		p.Qinv = new(big.Int).ModInverse(p.Q, p.P)
	})
	if _, err := NewKey(soft.New(), full, Options{}); err != nil {
		t.Errorf("full CRT key: %v", err)
	}
	// The smallest size (MinKeyBits), below crypto/rsa's own minimum for
	// operations, and an unbalanced key are accepted.
	for _, k := range []*PrivateKey{unbalancedKey(t, 256, 256, 65537), unbalancedKey(t, 600, 424, 3)} {
		if _, err := NewKey(soft.New(), k, Options{}); err != nil {
			t.Errorf("%d-bit key: %v", k.N.BitLen(), err)
		}
	}
}

func TestPublic(t *testing.T) {
	gk := testKey(t, 1024)
	m := []byte("message")
	got, err := Public(gk.N, gk.E, m)
	if err != nil {
		t.Fatal(err)
	}
	want := new(big.Int).Exp(new(big.Int).SetBytes(m), big.NewInt(int64(gk.E)), gk.N).FillBytes(make([]byte, 128))
	if !bytes.Equal(got, want) {
		t.Fatal("Public differs from math/big")
	}
	if _, err := Public(gk.N, gk.E, gk.N.Bytes()); !errors.Is(err, ErrInputRange) {
		t.Errorf("Public(n): %v", err)
	}
	for _, n := range []*big.Int{nil, big.NewInt(0), big.NewInt(10), big.NewInt(1)} {
		if _, err := Public(n, 3, []byte{0}); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("Public with modulus %v: %v", n, err)
		}
	}
	if _, err := Public(gk.N, 0, m); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("Public with e=0: %v", err)
	}
}

// TestPrivateConcurrent shares one key among goroutines (run with -race):
// every result must be right and the blinding state stays consistent.
func TestPrivateConcurrent(t *testing.T) {
	gk := testKey(t, 1024)
	priv := privOf(gk)
	k, err := NewKey(soft.New(), priv, Options{ExponentBlinding: true})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 8 {
		wg.Go(func() {
			for i := range 6 { // 48 uses in all: crosses a blinding renewal
				c := big.NewInt(int64(1000*w + i + 2))
				got, _, err := k.Private(context.Background(), c.Bytes())
				if err != nil {
					errs <- err
					return
				}
				if new(big.Int).SetBytes(got).Cmp(new(big.Int).Exp(c, priv.D, priv.N)) != 0 {
					errs <- fmt.Errorf("worker %d: wrong result", w)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestGenerateKey(t *testing.T) {
	ctx := context.Background()
	eng := soft.New()
	for _, tc := range []struct{ bits, e int }{{1024, 65537}, {1024, 3}, {1030, 65537}, {2048, 65537}} {
		if (testing.Short() || raceEnabled) && tc.bits > 1024 {
			continue
		}
		priv, err := GenerateKey(ctx, eng, rand.Reader, tc.bits, tc.e)
		if err != nil {
			t.Fatalf("GenerateKey(%d, %d): %v", tc.bits, tc.e, err)
		}
		if priv.N.BitLen() != tc.bits || priv.E != tc.e {
			t.Fatalf("GenerateKey(%d): %d-bit modulus, e = %d", tc.bits, priv.N.BitLen(), priv.E)
		}
		if !priv.P.ProbablyPrime(20) || !priv.Q.ProbablyPrime(20) {
			t.Fatal("GenerateKey: composite factor")
		}
		diff := new(big.Int).Sub(priv.P, priv.Q)
		if diff.Abs(diff).BitLen() <= tc.bits/2-100 {
			t.Fatal("|p − q| too small")
		}
		if priv.D.BitLen() <= tc.bits/2 {
			t.Fatal("d too small")
		}
		// crypto/rsa accepts the key and signs with it like we do.
		gk := &gorsa.PrivateKey{PublicKey: gorsa.PublicKey{N: priv.N, E: priv.E}, D: priv.D, Primes: []*big.Int{priv.P, priv.Q}}
		gk.Precompute()
		if err := gk.Validate(); err != nil {
			t.Fatalf("crypto/rsa Validate: %v", err)
		}
		k, err := NewKey(eng, priv, Options{})
		if err != nil {
			t.Fatal(err)
		}
		digest := sha256.Sum256([]byte("keygen"))
		if tc.e >= 65537 { // crypto/rsa refuses small e
			want, err := gorsa.SignPKCS1v15(nil, gk, crypto.SHA256, digest[:])
			if err != nil {
				t.Fatal(err)
			}
			em, _ := Public(priv.N, priv.E, want)
			if got, _, err := k.Private(ctx, em); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("signature differs from crypto/rsa (%v)", err)
			}
		}
	}
	for _, tc := range []struct{ bits, e int }{{512, 65537}, {1000, 65537}, {9000, 65537}, {2048, 2}, {2048, 1}, {2048, 65536}, {2048, -3}} {
		if _, err := GenerateKey(ctx, eng, rand.Reader, tc.bits, tc.e); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("GenerateKey(%d, %d): error %v, want ErrInvalidKey", tc.bits, tc.e, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := GenerateKey(cctx, eng, rand.Reader, 1024, 65537); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled GenerateKey: %v", err)
	}
}

func TestSieve(t *testing.T) {
	if len(smallPrimes) != 308 || smallPrimes[0] != 3 || smallPrimes[len(smallPrimes)-1] != 2039 {
		t.Fatalf("smallPrimes: %d primes, %d..%d", len(smallPrimes), smallPrimes[0], smallPrimes[len(smallPrimes)-1])
	}
	n := 0
	for _, g := range sieveGroups {
		n += len(g)
	}
	if n != len(smallPrimes) {
		t.Fatalf("sieve groups hold %d primes, want %d", n, len(smallPrimes))
	}
	for _, c := range []int64{3 * 5, 2039 * 2039, 1009 * 65537} {
		if passesSieve(big.NewInt(c)) {
			t.Errorf("%d passes the sieve", c)
		}
	}
	if !passesSieve(big.NewInt(65537)) || !passesSieve(big.NewInt(2053*2063)) {
		t.Error("sieve rejects a number without small factors")
	}
}

func TestMillerRabin(t *testing.T) {
	eng := soft.New()
	ctx := context.Background()
	for _, c := range []struct {
		n     string
		prime bool
	}{
		{"170141183460469231731687303715884105727", true},                                        // 2^127 − 1
		{"3825123056546413051", false},                                                           // strong pseudoprime to bases 2..23
		{"318665857834031151167461", false},                                                      // strong pseudoprime to bases 2..37
		{"115792089210356248762697446949407573530086143415290314195533631308867097853951", true}, // P-256 p
		{"561", false},
	} {
		n, _ := new(big.Int).SetString(c.n, 10)
		got, err := millerRabin(ctx, eng, rand.Reader, n, 20)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.prime {
			t.Errorf("millerRabin(%s) = %v, want %v", c.n, got, c.prime)
		}
	}
}

var _ engine.Engine = (*faultyEngine)(nil)

// TestPublicModulusCache checks Public against math/big across more moduli
// than the cache holds (so it is emptied and refilled), each asked twice,
// and concurrently.
func TestPublicModulusCache(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range maxPublicModuli + 10 {
				n := new(big.Int).SetUint64(uint64(1_000_003 + 2*i + 1000*g))
				n.Lsh(n, 200).Add(n, big.NewInt(1)) // odd, 220 bits
				m := new(big.Int).Sub(n, big.NewInt(int64(7+i)))
				want := new(big.Int).Exp(m, big.NewInt(65537), n).FillBytes(make([]byte, (n.BitLen()+7)/8))
				for range 2 {
					got, err := Public(n, 65537, m.Bytes())
					if err != nil || !bytes.Equal(got, want) {
						t.Errorf("Public mod %x = %x, %v; want %x", n, got, err, want)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if l := len(publicModuli.m); l > maxPublicModuli {
		t.Fatalf("cache holds %d moduli, more than %d", l, maxPublicModuli)
	}
}
