package chip

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/rsa"
	_ "github.com/modexp-token/modexp-token/engine/backend/soft"
	"github.com/modexp-token/modexp-token/engine/enginetest"
	"github.com/modexp-token/modexp-token/engine/guard"
	"github.com/modexp-token/modexp-token/test/vectors/testkeys"
)

// expOnce returns whether e's exponentiation of random n-bit operands is right.
func expOnce(t *testing.T, e engine.Engine, r *rand.Rand, n int) bool {
	t.Helper()
	m := randOdd(r, n)
	x := new(big.Int).Mod(randBits(r, n), m)
	d := randBits(r, n)
	mod, err := e.NewModulus(m.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := e.Exp(context.Background(), mod, x.Bytes(), d.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(got, fixed(new(big.Int).Exp(x, d, m), len(m.Bytes())))
}

func TestOrupPhysicalKnobs(t *testing.T) {
	cases := []struct {
		spec   string
		inSpec bool
	}{
		{"chip:orup561", true},
		{"chip:orup561,vdd=4.5,f=24e6,nw=7", true},
		{"chip:orup561,vdd=5.5,f=29.5e6,nw=6", true},
		{"chip:orup561,f=30e6", false},              // above fmax(5.0 V) = 27 MHz
		{"chip:orup561,f=27.2e6,nw=6", false},       // just above
		{"chip:orup561,nw=5", false},                // below nw_min = 6
		{"chip:orup561,vdd=4.5", false},             // 25 MHz > fmax(4.5 V) = 24 MHz
		{"chip:orup561,vdd=4.5,f=20e6,nw=6", false}, // nw_min = 7 below 5.0 V
		{"chip:orup561,f=30e6,nw=5,vdd=4.5,scaled", false},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			t.Parallel()
			e := enginetest.Open(t, c.spec)
			if got := e.(*Orup).InSpec(); got != c.inSpec {
				t.Fatalf("InSpec = %v, want %v", got, c.inSpec)
			}
			r := rand.New(rand.NewPCG(7, 7))
			for _, n := range []int{256, 561} {
				for range 3 {
					if ok := expOnce(t, e, r, n); ok != c.inSpec {
						t.Fatalf("%d bits: result right = %v, want %v", n, ok, c.inSpec)
					}
				}
			}
			err := e.SelfTest(context.Background())
			if c.inSpec && err != nil {
				t.Fatalf("SelfTest: %v", err)
			}
			if !c.inSpec && !errors.Is(err, engine.ErrDevice) {
				t.Fatalf("SelfTest of an out-of-spec chip = %v, want engine.ErrDevice", err)
			}
		})
	}
}

func TestInjectedFaults(t *testing.T) {
	for _, spec := range []string{
		"chip:orup561,fault=zero", "chip:orup561,fault=bitflip",
		"chip:pukcc,fault=zero", "chip:pukcc,fault=bitflip",
		"chip:cryptech,fault=bitflip", "chip:cryptech,zero-above:100",
		"chip:cryptech,core=modexpa7,fault=bitflip",
	} {
		e := enginetest.Open(t, spec)
		r := rand.New(rand.NewPCG(8, 8))
		for range 3 {
			if expOnce(t, e, r, 256) {
				t.Errorf("%s: a faulty engine returned a right result", spec)
			}
		}
		if err := e.SelfTest(context.Background()); !errors.Is(err, engine.ErrDevice) {
			t.Errorf("%s: SelfTest = %v, want engine.ErrDevice", spec, err)
		}
	}
}

// TestZeroAbove reproduces the post's new core: right at 1024 bits, all
// zero at 2048 and 4096.
func TestZeroAbove(t *testing.T) {
	e := enginetest.Open(t, "chip:cryptech,fault=zero-above:1024")
	r := rand.New(rand.NewPCG(9, 9))
	if !expOnce(t, e, r, 1024) {
		t.Fatal("1024-bit result wrong")
	}
	for _, n := range []int{1025, 2048, 4096} {
		m := randOdd(r, n)
		mod, err := e.NewModulus(m.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		got, cost, err := e.Exp(context.Background(), mod, randBits(r, n-1).Bytes(), randBits(r, n).Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, make([]byte, len(m.Bytes()))) {
			t.Fatalf("%d bits: result not all zero", n)
		}
		if cost.Cycles == 0 {
			t.Fatalf("%d bits: the wrong answer should cost as much as a right one", n)
		}
	}
}

// TestFaultCaughtByRSA: engine/alg/rsa checks every result, so a chip out of
// spec, or the all-zero core, gives an error wrapping engine.ErrDevice
// (and rsa.ErrFault), never a wrong signature; with a software fallback
// the operation succeeds.
func TestFaultCaughtByRSA(t *testing.T) {
	k1024, err := testkeys.Load(1024)
	if err != nil {
		t.Fatal(err)
	}
	k4096, err := testkeys.Load(4096)
	if err != nil {
		t.Fatal(err)
	}
	soft := enginetest.Open(t, "soft")
	cases := []struct {
		spec string
		key  *testkeys.Key
	}{
		{"chip:orup561,f=30e6", k1024},
		{"chip:orup561,nw=5", k1024},
		{"chip:cryptech,fault=zero-above:1024", k4096}, // CRT halves of 2048 bits
		{"chip:pukcc,fault=bitflip", k1024},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			e := enginetest.Open(t, c.spec)
			priv := &rsa.PrivateKey{N: c.key.N, E: c.key.E, D: c.key.D, P: c.key.P, Q: c.key.Q}
			x := new(big.Int).Mod(big.NewInt(0x5eed), c.key.N).Bytes()
			key, err := rsa.NewKey(e, priv, rsa.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := key.Private(context.Background(), x); !errors.Is(err, engine.ErrDevice) || !errors.Is(err, rsa.ErrFault) {
				t.Fatalf("Private on a faulty chip = %v, want engine.ErrDevice and rsa.ErrFault", err)
			}
			// Through engine/guard with the software engine behind the
			// chip: the known-answer test fails (logged), every operation
			// is redone in software, each fault counted.
			g := guard.New(e, guard.Options{Software: soft, Fallback: true})
			gkey, err := g.RSAKey(priv)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := gkey.Private(context.Background(), x)
			if err != nil {
				t.Fatalf("Private with fallback: %v", err)
			}
			want := fixed(new(big.Int).Exp(new(big.Int).SetBytes(x), c.key.D, c.key.N), len(c.key.N.Bytes()))
			if !bytes.Equal(got, want) {
				t.Fatal("fallback result wrong")
			}
		})
	}
}

// TestRSAOnOrupCRT: RSA-1024 runs on the 561-bit chip as two CRT halves.
func TestRSAOnOrupCRT(t *testing.T) {
	k, err := testkeys.Load(1024)
	if err != nil {
		t.Fatal(err)
	}
	e := enginetest.Open(t, "chip:orup561")
	key, err := rsa.NewKey(e, &rsa.PrivateKey{N: k.N, E: k.E, D: k.D, P: k.P, Q: k.Q}, rsa.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := big.NewInt(0xc0ffee)
	got, cost, err := key.Private(context.Background(), x.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, fixed(new(big.Int).Exp(x, k.D, k.N), 128)) {
		t.Fatal("wrong RSA-1024 result")
	}
	// Two 512-bit halves: 2 × 2·(105+7)·512 cycles.
	if want := 2 * orupCycles(105, 7, 512); cost.Cycles != want {
		t.Errorf("cycles = %d, want %d", cost.Cycles, want)
	}
}
