// Package dudect holds the statistics of the token's dudect-style timing
// tests (Reparaz, Balasch, Verbauwhede, "Dude, is my code constant time?",
// 2017): two classes of inputs timed interleaved at random, the long tail
// cropped, and Welch's t-test between the two. |t| above about 4.5 over
// many samples suggests the time depends on the class.
package dudect

import (
	"crypto/rand"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// Samples is the opt-in of a timing test: it skips t unless MODEXP_DUDECT
// is set, and returns the samples per class it asks for (a number of at
// least 100), else def.
func Samples(t testing.TB, def int) int {
	t.Helper()
	v := os.Getenv("MODEXP_DUDECT")
	if v == "" {
		t.Skip("set MODEXP_DUDECT=1 (or a number of samples per class) to run the timing check")
	}
	if n, _ := strconv.Atoi(v); n >= 100 {
		return n
	}
	return def
}

// Measure runs f n times per class (f(class, i), class 0 or 1, i the
// call's index), the classes interleaved at random, timing each call, and
// returns Welch's t of the two classes' times cropped at the 90th
// percentile, with the samples per class.
func Measure(n int, f func(class, i int)) (t float64, n0, n1 int) {
	var samples [2][]float64
	order := make([]byte, 2*n)
	_, _ = rand.Read(order)
	for i, o := range order {
		c := int(o & 1)
		start := time.Now()
		f(c, i)
		samples[c] = append(samples[c], float64(time.Since(start).Nanoseconds()))
	}
	return WelchT(Crop(samples[0], 0.9), Crop(samples[1], 0.9)), len(samples[0]), len(samples[1])
}

// Crop returns the samples at or below the p quantile (0 < p ≤ 1): the
// interruptions of a shared machine make the upper tail noise.
func Crop(xs []float64, p float64) []float64 {
	if len(xs) == 0 {
		return nil
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	cut := s[int(p*float64(len(s)-1))]
	return slices.DeleteFunc(slices.Clone(xs), func(x float64) bool { return x > cut })
}

// WelchT is Welch's t statistic of samples a and b (at least two each).
func WelchT(a, b []float64) float64 {
	ma, va := meanVar(a)
	mb, vb := meanVar(b)
	return (ma - mb) / math.Sqrt(va/float64(len(a))+vb/float64(len(b)))
}

func meanVar(xs []float64) (m, v float64) {
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, v / float64(len(xs)-1)
}
