package guard_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/ecdsa"
	"github.com/modexp-token/modexp-token/engine/alg/ecdsa/ecdsatest"
	"github.com/modexp-token/modexp-token/engine/alg/rsa"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
	_ "github.com/modexp-token/modexp-token/engine/backend/chip"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
	"github.com/modexp-token/modexp-token/engine/enginetest"
	"github.com/modexp-token/modexp-token/engine/guard"
	"github.com/modexp-token/modexp-token/test/vectors/testkeys"
)

func key(t *testing.T, bits int) *rsa.PrivateKey {
	t.Helper()
	k, err := testkeys.Load(bits)
	if err != nil {
		t.Fatal(err)
	}
	return &rsa.PrivateKey{N: k.N, E: k.E, D: k.D, P: k.P, Q: k.Q}
}

// private signs a fixed input with k and checks the result with math/big.
func private(t *testing.T, k *guard.RSAKey, priv *rsa.PrivateKey) error {
	t.Helper()
	x := big.NewInt(0x5eed)
	got, _, err := k.Private(context.Background(), x.FillBytes(make([]byte, k.Size())))
	if err != nil {
		return err
	}
	want := new(big.Int).Exp(x, priv.D, priv.N).FillBytes(make([]byte, k.Size()))
	if !bytes.Equal(got, want) {
		t.Fatal("a wrong result was released")
	}
	return nil
}

// TestRSAFaultyEngine: a chip out of spec fails its known-answer test.
// Without fallback the key is refused (engine.ErrDevice); with the software
// engine behind it the key works, and every fault is counted.
func TestRSAFaultyEngine(t *testing.T) {
	soft := soft.New()
	priv := key(t, 1024)
	for _, fallback := range []bool{false, true} {
		g := guard.New(enginetest.Open(t, "chip:orup561,f=30e6"), guard.Options{Software: soft, Fallback: fallback})
		k, err := g.RSAKey(priv)
		st := g.Status()
		if st.KATFailures != 1 || st.Faults != 1 || len(st.KATSizes) != 0 {
			t.Fatalf("fallback %v: status %+v after a failed known-answer test", fallback, st)
		}
		if !fallback {
			if !errors.Is(err, engine.ErrDevice) {
				t.Fatalf("RSAKey without fallback = %v, want engine.ErrDevice", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := private(t, k, priv); err != nil {
			t.Fatalf("Private with fallback: %v", err)
		}
		if st := g.Status(); st.Faults != 2 || !st.HasFallback {
			t.Fatalf("status %+v: want the operation's fault counted", st)
		}
	}
}

// TestRSAHealthyEngine: the known-answer test passes once per size and the
// size is remembered; the self-test result is reported.
func TestRSAHealthyEngine(t *testing.T) {
	g := guard.New(enginetest.Open(t, "chip:pukcc"), guard.Options{Software: soft.New(), Fallback: true, ExponentBlinding: true})
	if st := g.Status(); st.SelfTest != "not run" {
		t.Fatalf("self-test %q before SelfTest", st.SelfTest)
	}
	if err := g.SelfTest(); err != nil {
		t.Fatal(err)
	}
	priv := key(t, 2048)
	for range 2 {
		k, err := g.RSAKey(priv)
		if err != nil {
			t.Fatal(err)
		}
		if err := private(t, k, priv); err != nil {
			t.Fatal(err)
		}
	}
	st := g.Status()
	if st.SelfTest != "passed" || st.Faults != 0 || len(st.KATSizes) != 1 || st.KATSizes[0] != 2048 {
		t.Fatalf("status %+v", st)
	}
	if g.MaxRSAKeyBits() != g.Engine().Info().MaxModulusBits { // native CRT
		t.Fatalf("MaxRSAKeyBits = %d with native CRT, want the engine's %d", g.MaxRSAKeyBits(), g.Engine().Info().MaxModulusBits)
	}
}

// TestExponentBlindingDefault: orup561 cannot take the blinded exponents of
// RSA-1024. As a default, blinding goes off for that size; configured, the
// key is refused.
func TestExponentBlindingDefault(t *testing.T) {
	priv := key(t, 1024)
	g := guard.New(enginetest.Open(t, "chip:orup561"), guard.Options{ExponentBlinding: true, BlindingDefault: true})
	k, err := g.RSAKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	if err := private(t, k, priv); err != nil {
		t.Fatal(err)
	}
	g = guard.New(enginetest.Open(t, "chip:orup561"), guard.Options{ExponentBlinding: true})
	if _, err := g.RSAKey(priv); !errors.Is(err, engine.ErrOperandTooLarge) {
		t.Fatalf("RSAKey with blinding configured = %v, want engine.ErrOperandTooLarge", err)
	}
}

// TestECRoutes: a chip that multiplies on the NIST curves serves them; the
// software engine serves the others under fallback only; a faulty chip's
// signatures are made in software after its failed known-answer test, a
// healthy chip's cost metered.
func TestECRoutes(t *testing.T) {
	soft := soft.New()
	g := guard.New(enginetest.Open(t, "chip:pukcc,fault=bitflip"), guard.Options{Software: soft, Fallback: true})
	rt, ok := g.EC("P-256")
	if !ok || rt.Primary == nil || rt.Fallback == nil {
		t.Fatalf("P-256 route %+v, %v", rt, ok)
	}
	if rt, ok := g.EC("secp256k1"); !ok || !rt.Software(rt.Primary) || rt.Fallback != nil {
		t.Fatalf("secp256k1 route %+v, %v: want the software engine alone", rt, ok)
	}
	wantLo, wantHi := 0, 0 // the software engine's curves stand behind the chip's
	for _, name := range soft.Info().Curves {
		c, err := ec.CurveByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if b := c.OrderBits(); wantLo == 0 || b < wantLo {
			wantLo = b
		}
		wantHi = max(wantHi, c.OrderBits())
	}
	if lo, hi := g.ECOrderBits(); lo != wantLo || hi != wantHi {
		t.Fatalf("ECOrderBits = %d, %d, want %d, %d", lo, hi, wantLo, wantHi)
	}
	d := bytes.Repeat([]byte{7}, 32)
	k, err := ecdsa.NewPrivateKey("P-256", d)
	if err != nil {
		t.Fatal(err)
	}
	hash := sha256.Sum256([]byte("route"))
	var sig []byte
	cost, err := rt.Run(context.Background(), func(e engine.ECEngine) error {
		sig, err = k.Sign(context.Background(), e, hash[:], nil)
		return err
	})
	if err != nil {
		t.Fatalf("sign with fallback: %v", err)
	}
	x, y := k.Public()
	if err := ecdsatest.Verify("P-256", x, y, hash[:], sig); err != nil {
		t.Fatal(err)
	}
	// The chip's faults show in its curve's known-answer test already: the
	// signature was made on the software engine alone, at no chip cost.
	if st := g.Status(); cost.Cycles != 0 || st.KATFailures != 1 || st.Faults == 0 {
		t.Fatalf("cost %+v, status %+v: want the failed known-answer test and no chip cost", cost, st)
	}
	g = guard.New(enginetest.Open(t, "chip:pukcc"), guard.Options{Software: soft, Fallback: true})
	rt, _ = g.EC("P-256")
	cost, err = rt.Run(context.Background(), func(e engine.ECEngine) error {
		sig, err = k.Sign(context.Background(), e, hash[:], nil)
		return err
	})
	if err != nil || cost.Cycles == 0 || g.Status().Faults != 0 {
		t.Fatalf("healthy chip: %v, cost %+v, status %+v: want the chip's cost", err, cost, g.Status())
	}

	g = guard.New(enginetest.Open(t, "chip:orup561"), guard.Options{Software: soft})
	if _, ok := g.EC("P-256"); ok {
		t.Fatal("a chip without curves and no fallback serves P-256")
	}
	if lo, hi := g.ECOrderBits(); lo != 0 || hi != 0 {
		t.Fatalf("ECOrderBits = %d, %d, want none", lo, hi)
	}
}

// TestExpRoutes: sizes beyond the primary go to the software engine under
// fallback only.
func TestExpRoutes(t *testing.T) {
	soft := soft.New()
	chip := enginetest.Open(t, "chip:orup561")
	max := chip.Info().MaxModulusBits
	g := guard.New(chip, guard.Options{Software: soft, Fallback: true})
	if rt, ok := g.Exp(max); !ok || rt.Primary != chip || rt.Fallback != soft {
		t.Fatalf("Exp(%d) = %+v, %v", max, rt, ok)
	}
	if rt, ok := g.Exp(max + 1); !ok || rt.Primary != soft || rt.Fallback != nil || g.MaxExpBits() != 0 {
		t.Fatalf("Exp(%d) = %+v, %v", max+1, rt, ok)
	}
	g = guard.New(chip, guard.Options{Software: soft})
	if _, ok := g.Exp(max + 1); ok || g.MaxExpBits() != max {
		t.Fatalf("Exp beyond the chip without fallback served (max %d)", g.MaxExpBits())
	}
	calls := 0
	rt, _ := g.Exp(max)
	err := rt.Run(func(e engine.Engine) error {
		calls++
		return engine.ErrDevice
	})
	if !errors.Is(err, engine.ErrDevice) || calls != 1 || g.Status().Faults != 1 {
		t.Fatalf("Run without fallback: %v after %d calls, status %+v", err, calls, g.Status())
	}
}

// TestDone counts operations and device errors.
func TestDone(t *testing.T) {
	g := guard.New(soft.New(), guard.Options{})
	guard.Done(g, "sign", 2048, engine.Cost{}, time.Millisecond, nil)
	guard.Done(g, "sign", 2048, engine.Cost{}, time.Millisecond, errors.Join(errors.New("x"), rsa.ErrFault))
	guard.Done(g, "sign", 2048, engine.Cost{}, time.Millisecond, errors.New("other"))
	if st := g.Status(); st.Ops != 3 || st.DeviceErrors != 1 {
		t.Fatalf("status %+v", st)
	}
}
