package chip

import (
	"testing"

	"github.com/modexp-token/modexp-token/engine/enginetest"
)

// TestConformance runs the shared engine suite on every profile, within
// limits that keep the slow bit-serial and radix-32 simulations fast.
func TestConformance(t *testing.T) {
	cases := []struct {
		spec string
		opts enginetest.Options
	}{
		// Scaled, so that the suite's longer-than-modulus exponents run
		// (fidelity mode refuses them: see docs/ENGINES.md, known gaps);
		// sizes above 561 bits are checked by TestExpMatchesBig.
		{"chip:orup561,scaled", enginetest.Options{MaxBits: 512, Short: true}},
		{"chip:pukcc", enginetest.Options{MaxBits: 2048, Short: true}},
		{"chip:cryptech", enginetest.Options{MaxBits: 1024, Short: true}},
		{"chip:cryptech,core=modexpa7", enginetest.Options{MaxBits: 1024, Short: true}},
	}
	for _, c := range cases {
		if raceEnabled {
			c.opts.MaxBits = 512
		}
		t.Run(c.spec, func(t *testing.T) {
			enginetest.Run(t, enginetest.Open(t, c.spec), c.opts)
		})
	}
}
