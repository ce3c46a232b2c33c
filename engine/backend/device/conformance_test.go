package device_test

import (
	"bytes"
	"context"
	"crypto/elliptic"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/rsa"
	"github.com/modexp-token/modexp-token/engine/arith/randop"
	_ "github.com/modexp-token/modexp-token/engine/backend/chip"
	_ "github.com/modexp-token/modexp-token/engine/backend/soft"
	"github.com/modexp-token/modexp-token/engine/enginetest"
	"github.com/modexp-token/modexp-token/engine/guard"
)

// TestConformance runs the shared engine suite on the device client, with
// the daemon backed by the real engines.
func TestConformance(t *testing.T) {
	for _, c := range []struct {
		spec string
		opts enginetest.Options
	}{
		{"soft", enginetest.Options{Short: true, SkipKeyGen: true, MaxBits: 2048}},
		{"chip:pukcc", enginetest.Options{Short: true, SkipKeyGen: true, MaxBits: 1024}},
	} {
		t.Run(c.spec, func(t *testing.T) {
			if testing.Short() {
				c.opts.MaxBits = 512
			}
			d := startDaemon(t, enginetest.Open(t, c.spec))
			cfg := d.config()
			cfg.Timeout = time.Minute // the race detector slows the engines down
			enginetest.Run(t, openClient(t, cfg), c.opts)
		})
	}
}

// TestRSACatchesZeroAbove: the device's all-zero answers pass the client's
// range check, and engine/alg/rsa's check before release catches them. (The
// fault is set below the CRT halves' 1024 bits: engine/alg/rsa reduces the
// base mod p and q, so a 2048-bit key never sends a 2048-bit modulus.)
func TestRSACatchesZeroAbove(t *testing.T) {
	d := startDaemon(t, enginetest.Open(t, "soft"), "zero-above:512")
	e := openClient(t, d.config())
	k, n, dd := rsaFixture(t, randFor(11), 2048)
	priv := &rsa.PrivateKey{N: n, E: 65537, D: dd, P: new(big.Int).SetBytes(k.P), Q: new(big.Int).SetBytes(k.Q)}
	key, err := rsa.NewKey(e, priv, rsa.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := new(big.Int).Mod(big.NewInt(0).Lsh(big.NewInt(12345), 2000), n)
	_, _, err = key.Private(context.Background(), c.FillBytes(make([]byte, 256)))
	if !errors.Is(err, rsa.ErrFault) {
		t.Fatalf("Private over a zeroing device: %v, want rsa.ErrFault", err)
	}
	// With the software engine as fallback the operation succeeds.
	g := guard.New(e, guard.Options{Software: enginetest.Open(t, "soft"), Fallback: true})
	gkey, err := g.RSAKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := gkey.Private(context.Background(), c.FillBytes(make([]byte, 256)))
	if err != nil {
		t.Fatalf("with fallback: %v", err)
	}
	if new(big.Int).SetBytes(s).Cmp(new(big.Int).Exp(c, dd, n)) != 0 {
		t.Fatal("with fallback: wrong result")
	}
}

// TestRealEnginesThroughDaemon: EC scalar multiplication and native CRT of
// the real engines, through the daemon, against the standard library.
func TestRealEnginesThroughDaemon(t *testing.T) {
	for _, spec := range []string{"soft", "chip:pukcc"} {
		t.Run(spec, func(t *testing.T) {
			e := openClient(t, startDaemon(t, enginetest.Open(t, spec)).config())
			if err := e.SelfTest(context.Background()); err != nil {
				t.Fatalf("SelfTest through the daemon: %v", err)
			}
			ec, ok := engine.As[engine.ECEngine](e)
			if !ok || len(e.Info().Curves) == 0 {
				t.Logf("%s serves no curves", spec)
			}
			r := randFor(21)
			for _, name := range e.Info().Curves {
				c := map[string]elliptic.Curve{"P-256": elliptic.P256(), "P-384": elliptic.P384(), "P-521": elliptic.P521()}[name]
				if c == nil {
					continue
				}
				size := (c.Params().BitSize + 7) / 8
				k := new(big.Int).Mod(randop.Bits(r, c.Params().BitSize), c.Params().N)
				x, y, _, err := ec.ScalarBaseMult(context.Background(), name, k.FillBytes(make([]byte, size)))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				wx, wy := c.ScalarBaseMult(k.Bytes())
				if !bytes.Equal(x, pad(wx, size)) || !bytes.Equal(y, pad(wy, size)) {
					t.Fatalf("%s: k·G differs from crypto/elliptic", name)
				}
			}
			if ce, ok := engine.As[engine.CRTEngine](e); ok {
				k, n, d := rsaFixture(t, r, 1024)
				c := new(big.Int).Mod(randop.Bits(r, 1024), n)
				got, _, err := ce.ExpCRT(context.Background(), &k, c.Bytes())
				if err != nil || !bytes.Equal(got, pad(new(big.Int).Exp(c, d, n), 128)) {
					t.Fatalf("native CRT through the daemon: %v", err)
				}
			}
		})
	}
}
