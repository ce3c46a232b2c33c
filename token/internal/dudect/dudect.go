// Package dudect holds the statistics of the token's dudect-style timing
// tests (Reparaz, Balasch, Verbauwhede, "Dude, is my code constant time?",
// 2017): two classes of inputs timed interleaved at random, the long tail
// cropped, and Welch's t-test between the two. |t| above about 4.5 over
// many samples suggests the time depends on the class.
package dudect

import (
	"math"
	"slices"
)

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
