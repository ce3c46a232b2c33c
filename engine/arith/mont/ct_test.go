package mont

import (
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine/arith/randop"
)

// traceExp runs Exp with kernelTrace recording and returns the sequence of
// kernel calls ('M' multiply, 'S' square, 'T' table lookup).
func traceExp(m *Modulus, x []uint64, e []byte) string {
	var ops []byte
	kernelTrace = func(op byte) { ops = append(ops, op) }
	defer func() { kernelTrace = nil }()
	z := make([]uint64, m.Limbs())
	m.Exp(z, x, e)
	return string(ops)
}

// TestExpTraceIndependentOfSecrets checks that the sequence of kernel calls
// and table lookups made by Exp is the same for any exponent and base of a
// given length (all-zero, all-one, sparse and random exponents; zero, one
// and random bases). Together with the kernels and tableSelect having no
// data-dependent branches or indices, this is the structural half of the
// constant-time argument.
func TestExpTraceIndependentOfSecrets(t *testing.T) {
	for _, name := range expKernels {
		if name == "ifma-emu" {
			continue // the same calls as ifma-model, much slower
		}
		t.Run(name, func(t *testing.T) {
			withKernel(t, name, func() { testExpTrace(t) })
		})
	}
}

func testExpTrace(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	// Exponents at the modulus length, and short ones of the shapes the
	// callers give (a blinded DSA nonce or a short DH value: 40 bytes;
	// 17 bytes: an odd length): the length is public, the value is not.
	for _, c := range []struct{ bits, elen int }{{256, 32}, {1024, 128}, {1024, 40}, {2048, 256}, {2048, 40}, {2048, 17}} {
		bits, elen := c.bits, c.elen
		if raceEnabled && bits > 1024 {
			continue
		}
		n := randop.Odd(r, bits)
		m := mustModulus(t, n)
		exps := [][]byte{make([]byte, elen), make([]byte, elen), make([]byte, elen), make([]byte, elen)}
		for i := range exps[1] {
			exps[1][i] = 0xff
		}
		exps[2][elen-1] = 1
		for i := range exps[3] {
			exps[3][i] = byte(r.Uint32())
		}
		bases := []*big.Int{big.NewInt(0), big.NewInt(1), new(big.Int).Mod(randop.Bits(r, bits), n)}
		ref := traceExp(m, natOf(m, bases[0]), exps[0])
		if len(ref) == 0 {
			t.Fatal("trace hook recorded nothing")
		}
		for _, e := range exps {
			for _, b := range bases {
				if got := traceExp(m, natOf(m, b), e); got != ref {
					t.Fatalf("%d bits, %d-byte exponent: kernel trace differs for exponent %x…", bits, elen, e[:4])
				}
			}
		}
		// A different modulus of the same length must give the same trace too.
		m2 := mustModulus(t, randop.Odd(r, bits))
		if got := traceExp(m2, natOf(m2, big.NewInt(5)), exps[3]); got != ref {
			t.Fatalf("%d bits, %d-byte exponent: kernel trace differs between moduli", bits, elen)
		}
	}
}

// TestExpTimingDudect is a dudect-style statistical test (Reparaz, Balasch,
// Verbauwhede 2017): it times Exp for two classes of secret exponents (all
// zero bits vs random) interleaved at random and applies Welch's t-test;
// |t| > 10 would indicate a leak. As a positive control, the same
// measurement on ExpVarTime must find its (intended) leak. Opt-in
// (MODEXP_DUDECT=1): a shared machine makes timing noisy.
func TestExpTimingDudect(t *testing.T) {
	if os.Getenv("MODEXP_DUDECT") != "1" {
		t.Skip("set MODEXP_DUDECT=1 to run the statistical timing test")
	}
	r := rand.New(rand.NewPCG(11, 12))
	n := randop.Odd(r, 1024)
	m := mustModulus(t, n)
	x := natOf(m, new(big.Int).Mod(randop.Bits(r, 1024), n))
	secret := welchT(r, func(z, x []uint64, e []byte) { m.Exp(z, x, e) }, m, x, 3000)
	control := welchT(r, func(z, x []uint64, e []byte) { m.ExpVarTime(z, x, e) }, m, x, 3000)
	t.Logf("kernel %s: Exp: Welch t = %.2f; ExpVarTime (control): Welch t = %.2f", Kernel(), secret, control)
	if math.Abs(secret) > 10 {
		t.Errorf("Exp timing differs between exponent classes: t = %.2f", secret)
	}
	if math.Abs(control) < 10 {
		t.Errorf("control not detected (t = %.2f): the measurement is too noisy to conclude", control)
	}
}

// welchT times f on zero and random 1024-bit exponents and returns
// Welch's t statistic between the two classes.
func welchT(r *rand.Rand, f func(z, x []uint64, e []byte), m *Modulus, x []uint64, samples int) float64 {
	z := make([]uint64, m.Limbs())
	zero := make([]byte, 128)
	var sum, sumSq, cnt [2]float64
	for i := 0; i < samples; i++ {
		class := r.IntN(2)
		e := zero
		if class == 1 {
			e = make([]byte, 128)
			for j := range e {
				e[j] = byte(r.Uint32())
			}
		}
		start := time.Now()
		f(z, x, e)
		d := float64(time.Since(start).Nanoseconds())
		sum[class] += d
		sumSq[class] += d * d
		cnt[class]++
	}
	return welch(sum, sumSq, cnt)
}

// welch returns Welch's t statistic between two classes from their sums,
// sums of squares and counts.
func welch(sum, sumSq, cnt [2]float64) float64 {
	mean := [2]float64{sum[0] / cnt[0], sum[1] / cnt[1]}
	v0 := sumSq[0]/cnt[0] - mean[0]*mean[0]
	v1 := sumSq[1]/cnt[1] - mean[1]*mean[1]
	return (mean[0] - mean[1]) / math.Sqrt(v0/cnt[0]+v1/cnt[1])
}
