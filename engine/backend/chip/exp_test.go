package chip

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/enginetest"
)

// checkExp runs one exponentiation and compares it with math/big.
func checkExp(t *testing.T, e engine.Engine, m, x, d *big.Int, public bool) engine.Cost {
	t.Helper()
	mod, err := e.NewModulus(m.Bytes())
	if err != nil {
		t.Fatalf("%s: NewModulus(%d bits): %v", e.Info().Name, m.BitLen(), err)
	}
	if mod.BitLen() != m.BitLen() || !bytes.Equal(mod.Bytes(), m.Bytes()) {
		t.Fatalf("modulus round trip failed")
	}
	got, cost, err := engine.ExpMode(context.Background(), e, mod, x.Bytes(), d.Bytes(), public)
	if err != nil {
		t.Fatalf("%s: Exp(%d bits): %v", e.Info().Name, m.BitLen(), err)
	}
	want := fixed(new(big.Int).Exp(x, d, m), (m.BitLen()+7)/8)
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d-bit Exp wrong:\n got %x\nwant %x", e.Info().Name, m.BitLen(), got, want)
	}
	if cost.Cycles == 0 || cost.Device <= 0 {
		t.Errorf("%s: %d bits: no cost reported: %+v", e.Info().Name, m.BitLen(), cost)
	}
	return cost
}

func TestExpMatchesBig(t *testing.T) {
	cases := []struct {
		spec  string
		sizes []int
	}{
		{"chip:orup561", []int{2, 3, 8, 10, 11, 17, 64, 65, 127, 128, 255, 256, 300, 511, 512, 521, 560, 561}},
		{"chip:orup561,scaled", []int{600, 1024}},
		{"chip:orup561,nw=6,f=26e6", []int{100, 561}},
		{"chip:pukcc", []int{96, 97, 128, 255, 256, 511, 512, 1023, 1024, 1536, 2048, 2272}},
		{"chip:pukcc,w=1", []int{96, 300, 1024}},
		{"chip:pukcc,w=2", []int{200, 1024}},
		{"chip:pukcc,w=3", []int{257, 1024}},
		{"chip:cryptech", []int{2, 3, 31, 32, 33, 64, 100, 256, 512, 1024}},
		{"chip:cryptech,pad=false", []int{33, 512}},
		{"chip:cryptech,core=modexpa7", []int{64, 65, 96, 256, 512, 1024, 2048}},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			t.Parallel()
			e := enginetest.Open(t, c.spec)
			r := rand.New(rand.NewPCG(1, uint64(len(c.spec))))
			for i, n := range c.sizes {
				if raceEnabled && i%3 != 0 && n > 256 {
					continue // a third of the large sizes under the race detector
				}
				m := randOdd(r, n)
				for _, d := range []*big.Int{randBits(r, n), big.NewInt(0), big.NewInt(1), big.NewInt(2), big.NewInt(65537)} {
					x := new(big.Int).Mod(randBits(r, n), m)
					checkExp(t, e, m, x, d, false)
				}
				// edge bases: 0, 1, m−1
				for _, x := range []*big.Int{big.NewInt(0), big.NewInt(1), new(big.Int).Sub(m, big.NewInt(1))} {
					checkExp(t, e, m, x, randBits(r, n), false)
				}
				// public exponents
				x := new(big.Int).Mod(randBits(r, n), m)
				checkExp(t, e, m, x, big.NewInt(65537), true)
				checkExp(t, e, m, x, big.NewInt(3), true)
			}
		})
	}
}

func TestBadModulus(t *testing.T) {
	for _, spec := range []string{"chip:orup561", "chip:pukcc", "chip:cryptech", "chip:cryptech,core=modexpa7"} {
		e := enginetest.Open(t, spec)
		for _, n := range [][]byte{nil, {0}, {1}, {0x10, 0x00}, {0xff, 0xfe}} {
			if _, err := e.NewModulus(n); !errors.Is(err, engine.ErrInvalidModulus) {
				t.Errorf("%s: NewModulus(%x) = %v, want ErrInvalidModulus", spec, n, err)
			}
		}
	}
}
