package ec

import (
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// safegcdModuli are the odd moduli the tests invert by: the P-256 order
// and prime, secp256k1's prime and order (libsecp256k1's own), P-224's
// prime, and the largest 256-bit odd number.
func safegcdModuli(t testing.TB) map[string]*big.Int {
	t.Helper()
	ms := map[string]*big.Int{"P-256 n": n256}
	for _, s := range []struct{ name, hex string }{
		{"P-256 p", "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff"},
		{"secp256k1 p", "fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f"},
		{"secp256k1 n", "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"},
		{"P-224 p", "ffffffffffffffffffffffffffffffff000000000000000000000001"},
		{"2^256-1", "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"},
	} {
		m, ok := new(big.Int).SetString(s.hex, 16)
		if !ok {
			t.Fatal(s.name)
		}
		ms[s.name] = m
	}
	return ms
}

// checkSafegcd compares invModulus.inv of x with math/big's ModInverse (0
// when there is none: x = 0, or x not coprime to a composite m).
func checkSafegcd(t *testing.T, im *invModulus, m, x *big.Int) {
	t.Helper()
	var xl, z [4]uint64
	bigToLimbs(&xl, x)
	im.inv(&z, &xl)
	want := new(big.Int).ModInverse(x, m)
	if want == nil {
		return // no inverse: the result is unspecified
	}
	if got := limbsToBig(&z); got.Cmp(want) != 0 {
		t.Fatalf("inv(%x) mod %x = %x, want %x", x, m, got, want)
	}
}

// TestSafegcdInv checks the divstep inversion on edge values (0, 1, 2,
// m − 1, m − 2, every 2^k and 2^k − 1 below m, values with long runs of
// equal bits) and random ones, for each of safegcdModuli.
func TestSafegcdInv(t *testing.T) {
	one := big.NewInt(1)
	for name, m := range safegcdModuli(t) {
		t.Run(name, func(t *testing.T) {
			im := newInvModulus(m)
			var xs []*big.Int
			xs = append(xs, big.NewInt(1), big.NewInt(2), big.NewInt(3),
				new(big.Int).Sub(m, one), new(big.Int).Sub(m, big.NewInt(2)),
				new(big.Int).Rsh(m, 1), new(big.Int).Add(new(big.Int).Rsh(m, 1), one))
			for k := range m.BitLen() {
				p := new(big.Int).Lsh(one, uint(k))
				xs = append(xs, p, new(big.Int).Sub(p, one), new(big.Int).Sub(m, p))
			}
			r := testRand(t)
			for range 3000 {
				xs = append(xs, randInt(r, m))
			}
			for _, x := range xs {
				if x.Sign() > 0 && x.Cmp(m) < 0 {
					checkSafegcd(t, im, m, x)
				}
			}
			var zero, z [4]uint64
			z[0] = 7
			im.inv(&z, &zero)
			if z != ([4]uint64{}) {
				t.Fatalf("inv(0) = %x, want 0", z)
			}
		})
	}
}

// TestSigned62RoundTrip checks the limb conversions on the largest values.
func TestSigned62RoundTrip(t *testing.T) {
	r := testRand(t)
	max := new(big.Int).Lsh(big.NewInt(1), 256)
	for range 1000 {
		var a, b [4]uint64
		bigToLimbs(&a, randInt(r, max))
		v := toSigned62(&a)
		fromSigned62(&b, &v)
		if a != b {
			t.Fatalf("%x → %x → %x", a, v, b)
		}
	}
}

// FuzzSafegcdInv compares the divstep inversion with math/big on x mod m
// for the P-256 order and prime.
func FuzzSafegcdInv(f *testing.F) {
	f.Add([]byte{1})
	f.Add(new(big.Int).Sub(n256, big.NewInt(1)).Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 32 {
			b = b[:32]
		}
		for name, m := range safegcdModuli(t) {
			if name != "P-256 n" && name != "P-256 p" {
				continue
			}
			x := new(big.Int).SetBytes(b)
			x.Mod(x, m)
			checkSafegcd(t, newInvModulus(m), m, x)
		}
	})
}

// BenchmarkSafegcdInv times the divstep inversion mod the P-256 order.
func BenchmarkSafegcdInv(b *testing.B) {
	im := newInvModulus(n256)
	var x, z [4]uint64
	bigToLimbs(&x, randInt(testRand(b), n256))
	for b.Loop() {
		im.inv(&z, &x)
	}
}

// TestSafegcdTimingDudect is a dudect-style test (Reparaz, Balasch,
// Verbauwhede 2017) of the divstep inversion mod the P-256 order: inputs
// of two classes, x = 1 and random x, timed interleaved at random in
// batches of 16 calls, the upper tail above the 90th percentile cropped,
// Welch's t between the classes; |t| > 10 would indicate a leak. The
// positive control is the same measurement of the variable-time binary
// Euclid (invVarTime), whose time follows x. Opt-in: MODEXP_DUDECT=1 (or a
// sample count per class), a shared machine making timing noisy.
func TestSafegcdTimingDudect(t *testing.T) {
	n := 20000
	switch v := os.Getenv("MODEXP_DUDECT"); v {
	case "":
		t.Skip("set MODEXP_DUDECT=1 (or a sample count per class) to run the statistical timing test")
	case "1":
	default:
		if c, err := strconv.Atoi(v); err == nil && c >= 100 {
			n = c
		}
	}
	f := p256Order(t)
	r := testRand(t)
	var inputs [2][64][4]uint64
	for i := range inputs[0] {
		inputs[0][i][0] = 1
		bigToLimbs(&inputs[1][i], randInt(r, n256))
	}
	secret := dudectT(r, n, func(z, x *[4]uint64) { f.sg.inv(z, x) }, &inputs)
	control := dudectT(r, n, func(z, x *[4]uint64) { f.invVarTime(z, x) }, &inputs)
	t.Logf("divsteps: Welch t = %.2f; binary Euclid (control): Welch t = %.2f; %d batches a class", secret, control, n)
	if math.Abs(secret) > 10 {
		t.Errorf("divstep inversion's time differs between x = 1 and random x: t = %.2f", secret)
	}
	if math.Abs(control) < 10 {
		t.Errorf("control not detected (t = %.2f): the measurement is too noisy to conclude", control)
	}
}

// dudectT times batches of 16 calls of f on the inputs of a class chosen
// at random, n batches a class, and returns Welch's t of the two classes'
// times cropped at their 90th percentile.
func dudectT(r *rand.Rand, n int, f func(z, x *[4]uint64), inputs *[2][64][4]uint64) float64 {
	var times [2][]float64
	var z [4]uint64
	for len(times[0]) < n || len(times[1]) < n {
		c := r.IntN(2)
		j := r.IntN(len(inputs[c]) - 16)
		start := time.Now()
		for i := range 16 {
			f(&z, &inputs[c][j+i])
		}
		times[c] = append(times[c], float64(time.Since(start).Nanoseconds()))
	}
	var m, v [2]float64
	for c := range times {
		xs := slices.Clone(times[c])
		slices.Sort(xs)
		xs = xs[:len(xs)*9/10]
		for _, x := range xs {
			m[c] += x
		}
		m[c] /= float64(len(xs))
		for _, x := range xs {
			v[c] += (x - m[c]) * (x - m[c])
		}
		v[c] /= float64(len(xs) - 1)
		times[c] = xs
	}
	return (m[0] - m[1]) / math.Sqrt(v[0]/float64(len(times[0]))+v[1]/float64(len(times[1])))
}
