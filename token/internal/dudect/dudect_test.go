package dudect

import (
	"math"
	"testing"
)

func TestWelchT(t *testing.T) {
	a := []float64{1, 2, 3, 4, 5}
	if tv := WelchT(a, a); tv != 0 {
		t.Fatalf("same samples: t = %v", tv)
	}
	// Means 3 and 13, variances 2.5 and 2.5, n = 5: t = −10/√1 = −10.
	b := []float64{11, 12, 13, 14, 15}
	if tv := WelchT(a, b); math.Abs(tv+10) > 1e-9 {
		t.Fatalf("t = %v, want -10", tv)
	}
	if got := Crop([]float64{5, 1, 100, 2, 3, 4, 6, 7, 8, 9}, 0.9); len(got) != 9 {
		t.Fatalf("Crop kept %v", got)
	}
}
