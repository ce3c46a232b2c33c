package aesni

import (
	"crypto/rand"
	"math"
	"testing"

	"github.com/modexp-token/modexp-token/token/internal/dudect"
)

// TestTiming (MODEXP_DUDECT=1): the key expansion, CBC encryption and
// CBC-MAC of 1 KiB with an all-zero key and data against random ones,
// dudect-style; |t| > 10 fails, as the token's other timing tests.
func TestTiming(t *testing.T) {
	n := dudect.Samples(t, 20000)
	keys := [2][]byte{make([]byte, 32), make([]byte, 32)}
	rand.Read(keys[1])
	data := [2][]byte{make([]byte, 1024), make([]byte, 1024)}
	rand.Read(data[1])
	var ks [2]*Key
	for c := range ks {
		k, err := NewKey(keys[c])
		if err != nil {
			t.Fatal(err)
		}
		ks[c] = k
	}
	dst := make([]byte, 1024)
	for _, tc := range []struct {
		name string
		f    func(class int)
	}{
		{"NewKey", func(c int) { _, _ = NewKey(keys[c]) }},
		{"CBCEncrypt", func(c int) {
			var iv [16]byte
			ks[c].CBCEncrypt(&iv, dst, data[c])
		}},
		{"CBCMAC", func(c int) {
			var x [16]byte
			ks[c].CBCMAC(&x, data[c])
		}},
	} {
		tv, n0, n1 := dudect.Measure(n, func(c, _ int) { tc.f(c) })
		t.Logf("%s (kernel: %v): %d zero and %d random, Welch t = %.2f", tc.name, haveKernel, n0, n1, tv)
		if math.Abs(tv) > 10 {
			t.Errorf("%s: the time depends on the key and data: t = %.2f", tc.name, tv)
		}
	}
}
