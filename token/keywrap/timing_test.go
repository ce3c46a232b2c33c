package keywrap

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/token/internal/dudect"
)

// TestUnwrapPadTiming is the dudect-style check that UnwrapPad's refusal
// does not say where the check failed: wraps whose initial value prefix is
// wrong, and wraps with the right prefix and length indicator but a
// non-zero padding byte, timed interleaved at random, Welch's t over the
// times cropped at the 90th percentile. MODEXP_DUDECT=1 (100,000 samples
// per class, or =N) runs it; it prints t and fails above 10.
func TestUnwrapPadTiming(t *testing.T) {
	if os.Getenv("MODEXP_DUDECT") == "" {
		t.Skip("set MODEXP_DUDECT=1 (or a number of samples per class) to run the timing check")
	}
	n, _ := strconv.Atoi(os.Getenv("MODEXP_DUDECT"))
	if n < 100 {
		n = 100000
	}
	key := make([]byte, 32)
	rand.Read(key)
	b := block(t, key)
	// Wrapped forms of 24-byte padded plaintexts (MLI 20): class 0 with a
	// wrong prefix, class 1 with a non-zero padding byte.
	mk := func(badPrefix bool, i int) []byte {
		buf := make([]byte, 32)
		copy(buf, DefaultAIV)
		if badPrefix {
			buf[i%4] ^= byte(1 + i%255)
		}
		binary.BigEndian.PutUint32(buf[4:8], 20)
		rand.Read(buf[8:28])
		if !badPrefix {
			buf[28+i%4] = byte(1 + i%255)
		}
		wrapBlocks(b, buf)
		return buf
	}
	var cts [2][][]byte
	for i := range 64 {
		cts[0] = append(cts[0], mk(true, i))
		cts[1] = append(cts[1], mk(false, i))
	}
	var samples [2][]float64
	order := make([]byte, 2*n)
	rand.Read(order)
	for i, o := range order {
		c := int(o & 1)
		ct := cts[c][i%64]
		start := time.Now()
		_, err := UnwrapPad(b, nil, ct)
		samples[c] = append(samples[c], float64(time.Since(start).Nanoseconds()))
		if !errors.Is(err, ErrIntegrity) {
			t.Fatalf("class %d: %v", c, err)
		}
	}
	tv := dudect.WelchT(dudect.Crop(samples[0], 0.9), dudect.Crop(samples[1], 0.9))
	t.Logf("dudect: %d bad-prefix and %d bad-padding refusals, Welch t = %.2f (|t| < 4.5: no leak detected)", len(samples[0]), len(samples[1]), tv)
	if math.Abs(tv) > 10 {
		t.Fatalf("UnwrapPad's refusal time depends on what failed: t = %.2f", tv)
	}
}
