package guard_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"math/big"
	"sync/atomic"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/dh"
	"github.com/modexp-token/modexp-token/engine/alg/dh/dhtest"
	"github.com/modexp-token/modexp-token/engine/alg/dsa"
	"github.com/modexp-token/modexp-token/engine/alg/ecdsa"
	"github.com/modexp-token/modexp-token/engine/alg/ecdsa/ecdsatest"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
	"github.com/modexp-token/modexp-token/engine/guard"
)

// faulty is the software engine with one bit of every secret result
// flipped (exponentiations, pairs of them, point multiplications), the way
// a broken device answers, while broken is set (from the start by
// newFaulty). It counts the calls it gets.
type faulty struct {
	*soft.Engine
	calls  atomic.Int64
	healed atomic.Bool // answers right while set
}

func newFaulty() *faulty { return &faulty{Engine: soft.New()} }

func (f *faulty) Info() engine.Info {
	in := f.Engine.Info()
	in.Name = "faulty"
	return in
}

func (f *faulty) Exp(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	f.calls.Add(1)
	out, c, err := f.Engine.Exp(ctx, m, base, exp)
	if err == nil && !f.healed.Load() {
		out[len(out)-1] ^= 1
	}
	return out, c, err
}

func (f *faulty) ExpPair(ctx context.Context, a, b engine.ExpOp) (ra, rb []byte, c engine.Cost, err error) {
	ra, c, err = engine.ExpMode(ctx, f, a.M, a.Base, a.Exp, a.Public)
	if err != nil {
		return nil, nil, c, err
	}
	rb, c2, err := engine.ExpMode(ctx, f, b.M, b.Base, b.Exp, b.Public)
	return ra, rb, c.Add(c2), err
}

func (f *faulty) ScalarBaseMult(ctx context.Context, curve string, k []byte) (x, y []byte, c engine.Cost, err error) {
	f.calls.Add(1)
	x, y, c, err = f.Engine.ScalarBaseMult(ctx, curve, k)
	if err == nil && !f.healed.Load() {
		x[len(x)-1] ^= 1
	}
	return x, y, c, err
}

func (f *faulty) ScalarMult(ctx context.Context, curve string, k, px, py []byte) (x, y []byte, c engine.Cost, err error) {
	f.calls.Add(1)
	x, y, c, err = f.Engine.ScalarMult(ctx, curve, k, px, py)
	if err == nil && !f.healed.Load() {
		x[len(x)-1] ^= 1
	}
	return x, y, c, err
}

var _ engine.ECEngine = (*faulty)(nil)

// p256 returns the preparation of the ECDSA and ECDH cases: the P-256
// route into *rt, through the curve's known-answer test.
func p256(t *testing.T, g *guard.Guard, rt *guard.ECRoute) func() error {
	return func() error {
		var ok bool
		if *rt, ok = g.EC("P-256"); !ok {
			t.Fatal("no route")
		}
		_, err := rt.Run(context.Background(), func(engine.ECEngine) error { return nil }) // the curve's test
		return err
	}
}

// dsaKey makes DSA parameters of the size and a private value on the
// software engine.
func dsaKey(t *testing.T, size dsa.Size) (*dsa.Parameters, []byte) {
	t.Helper()
	ctx := context.Background()
	params, err := dsa.GenerateParameters(ctx, nil, size)
	if err != nil {
		t.Fatalf("DSA parameters %v: %v", size, err)
	}
	x, _, _, err := dsa.GenerateKey(ctx, soft.New(), params, nil)
	if err != nil {
		t.Fatalf("DSA key: %v", err)
	}
	return params, x
}

// dhKey makes a DH key pair in the known group named on the software
// engine.
func dhKey(t *testing.T, name string) (group *dh.Group, x, y []byte) {
	t.Helper()
	for _, g := range dhtest.KnownGroups() {
		if g.Name == name {
			group = &g
		}
	}
	if group == nil {
		t.Fatalf("no known group %s", name)
	}
	x, y, _, err := dh.GenerateKey(context.Background(), soft.New(), group, 0, nil)
	if err != nil {
		t.Fatalf("DH key in %s: %v", name, err)
	}
	return group, x, y
}

// TestOneFallbackPath: for RSA, DSA, DH, ECDSA and ECDH alike, a primary that
// passed its known-answer tests and then gets every result wrong releases
// nothing; with the software engine behind
// it each operation is redone there (right results), and each fault is
// counted once in the guard's status. Without a fallback, and with a
// fallback as faulty as the primary, the operation fails with an error
// wrapping engine.ErrDevice and no output.
func TestOneFallbackPath(t *testing.T) {
	ctx := context.Background()
	hash := sha256.Sum256([]byte("one path"))
	rsaPriv := key(t, 1024)
	params, dsaX := dsaKey(t, dsa.Size{L: 1024, N: 160})
	group, dhX, _ := dhKey(t, "ffdhe2048")
	_, _, peer := dhKey(t, "ffdhe2048")
	ecKey, err := ecdsa.NewPrivateKey("P-256", bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}

	// Each algorithm: prepare (uncounted), then one operation whose output
	// is checked here; nil output on error.
	algs := []struct {
		name string
		op   func(t *testing.T, g *guard.Guard) (prepare func() error, do func() error)
	}{
		{"RSA", func(t *testing.T, g *guard.Guard) (func() error, func() error) {
			var k *guard.RSAKey
			return func() (err error) { k, err = g.RSAKey(rsaPriv); return err }, func() error {
				x := big.NewInt(0x5eed)
				out, _, err := k.Private(ctx, x.FillBytes(make([]byte, k.Size())))
				if err != nil {
					if out != nil {
						t.Fatal("output released with an error")
					}
					return err
				}
				if new(big.Int).SetBytes(out).Cmp(new(big.Int).Exp(x, rsaPriv.D, rsaPriv.N)) != 0 {
					t.Fatal("a wrong RSA result was released")
				}
				return nil
			}
		}},
		{"DSA", func(t *testing.T, g *guard.Guard) (func() error, func() error) {
			var k *guard.DSAKey
			return func() error {
					rt, ok := g.Exp(params.P.BitLen())
					if !ok {
						t.Fatal("no route")
					}
					var err error
					k, err = rt.DSAKey(params, dsaX)
					return err
				}, func() error {
					sig, _, err := k.Sign(ctx, hash[:], nil)
					if err != nil {
						if sig != nil {
							t.Fatal("signature released with an error")
						}
						return err
					}
					y, err := dsa.PublicValue(params, dsaX)
					if err != nil {
						t.Fatal(err)
					}
					pub, err := dsa.NewPublicKey(params, y)
					if err != nil {
						t.Fatal(err)
					}
					if err := pub.Verify(hash[:], sig); err != nil {
						t.Fatalf("a wrong DSA signature was released: %v", err)
					}
					return nil
				}
		}},
		{"DH", func(t *testing.T, g *guard.Guard) (func() error, func() error) {
			var k *guard.DHKey
			return func() error {
					rt, ok := g.Exp(group.P.BitLen())
					if !ok {
						t.Fatal("no route")
					}
					var err error
					k, err = rt.DHKey(group, dhX, dh.Options{})
					return err
				}, func() error {
					z, _, err := k.Derive(ctx, peer)
					if err != nil {
						if z != nil {
							t.Fatal("secret released with an error")
						}
						return err
					}
					want := new(big.Int).Exp(new(big.Int).SetBytes(peer), new(big.Int).SetBytes(dhX), group.P)
					if new(big.Int).SetBytes(z).Cmp(want) != 0 {
						t.Fatal("a wrong DH secret was released")
					}
					return nil
				}
		}},
		{"ECDSA", func(t *testing.T, g *guard.Guard) (func() error, func() error) {
			var rt guard.ECRoute
			return p256(t, g, &rt), func() error {
				sig, _, err := rt.Sign(ctx, ecKey, hash[:], nil)
				if err != nil {
					if sig != nil {
						t.Fatal("signature released with an error")
					}
					return err
				}
				x, y := ecKey.Public()
				if err := ecdsatest.Verify("P-256", x, y, hash[:], sig); err != nil {
					t.Fatalf("a wrong ECDSA signature was released: %v", err)
				}
				return nil
			}
		}},
		{"ECDH", func(t *testing.T, g *guard.Guard) (func() error, func() error) {
			var rt guard.ECRoute
			c, err := ec.CurveByName("P-256")
			if err != nil {
				t.Fatal(err)
			}
			d := bytes.Repeat([]byte{7}, 32)
			qx, qy, err := c.ScalarBaseMult(bytes.Repeat([]byte{9}, 32))
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := c.ScalarMult(d, qx, qy)
			if err != nil {
				t.Fatal(err)
			}
			return p256(t, g, &rt), func() error {
				z, _, err := rt.Shared(ctx, c, d, qx, qy)
				if err != nil {
					if z != nil {
						t.Fatal("secret released with an error")
					}
					return err
				}
				if !bytes.Equal(z, want) {
					t.Fatal("a wrong ECDH secret was released")
				}
				return nil
			}
		}},
	}
	for _, alg := range algs {
		t.Run(alg.name, func(t *testing.T) {
			for _, c := range []struct {
				name     string
				software engine.Engine
				fallback bool
			}{
				{"fallback", soft.New(), true},
				{"no-fallback", soft.New(), false},
				{"faulty-fallback", newFaulty(), true},
			} {
				primary := newFaulty()
				primary.healed.Store(true) // through the known-answer tests
				g := guard.New(primary, guard.Options{Software: c.software, Fallback: c.fallback})
				prepare, do := alg.op(t, g)
				if err := prepare(); err != nil {
					t.Fatalf("%s: prepare: %v", c.name, err)
				}
				if st := g.Status(); st.KATFailures != 0 || len(st.KATs) != 1 {
					t.Fatalf("%s: status %+v after the known-answer test on a healthy engine", c.name, st)
				}
				primary.healed.Store(false)
				before, ops, calls := g.Status().Faults, g.Status().Ops, primary.calls.Load()
				for i := range 3 {
					err := do()
					if c.name == "fallback" {
						if err != nil {
							t.Fatalf("%s: operation %d: %v", c.name, i, err)
						}
					} else if !errors.Is(err, engine.ErrDevice) {
						t.Fatalf("%s: operation %d = %v, want engine.ErrDevice", c.name, i, err)
					}
				}
				if st := g.Status(); st.Faults-before != 3 {
					t.Fatalf("%s: %d faults counted for 3 faulty operations (status %+v)", c.name, st.Faults-before, st)
				}
				if st := g.Status(); st.Ops-ops != 3 {
					t.Fatalf("%s: %d operations accounted for 3 (status %+v)", c.name, st.Ops-ops, st)
				}
				if primary.calls.Load() == calls {
					t.Fatalf("%s: the primary was not asked", c.name)
				}
			}
		})
	}
}

// TestKATFailure: for RSA, DSA, DH and ECDSA alike, a primary that fails
// its known-answer test is counted faulty once. Without a fallback the key
// (RSA, DSA, DH) or the operation (ECDSA) is refused with an error wrapping
// engine.ErrDevice. With one, RSA keys stay on the primary (every result is
// checked and redone), while DSA, DH and ECDSA run on the software engine
// alone: the primary is asked nothing more after its test.
func TestKATFailure(t *testing.T) {
	ctx := context.Background()
	hash := sha256.Sum256([]byte("kat failure"))
	params, dsaX := dsaKey(t, dsa.Size{L: 2048, N: 224})
	group, dhX, peer := dhKey(t, "ffdhe3072")
	ecKey, err := ecdsa.NewPrivateKey("P-384", bytes.Repeat([]byte{9}, 48))
	if err != nil {
		t.Fatal(err)
	}
	rsaPriv := key(t, 2048)
	cases := []struct {
		name      string
		wantTest  string
		op        func(g *guard.Guard) error // prepares and runs one operation
		stayOnPri bool                       // with fallback, the primary still serves
	}{
		{"RSA", "rsa-2048", func(g *guard.Guard) error {
			k, err := g.RSAKey(rsaPriv)
			if err != nil {
				return err
			}
			_, _, err = k.Private(ctx, big.NewInt(0x5eed).FillBytes(make([]byte, k.Size())))
			return err
		}, true},
		{"DSA", "exp-2048", func(g *guard.Guard) error {
			rt, _ := g.Exp(params.P.BitLen())
			k, err := rt.DSAKey(params, dsaX)
			if err != nil {
				return err
			}
			_, _, err = k.Sign(ctx, hash[:], nil)
			return err
		}, false},
		{"DH", "exp-3072", func(g *guard.Guard) error {
			rt, _ := g.Exp(group.P.BitLen())
			k, err := rt.DHKey(group, dhX, dh.Options{})
			if err != nil {
				return err
			}
			_, _, err = k.Derive(ctx, peer)
			return err
		}, false},
		{"ECDSA", "ec-P-384", func(g *guard.Guard) error {
			rt, _ := g.EC("P-384")
			_, err := rt.Run(ctx, func(e engine.ECEngine) error {
				_, err := ecKey.Sign(ctx, e, hash[:], nil)
				return err
			})
			return err
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, fallback := range []bool{false, true} {
				primary := newFaulty()
				g := guard.New(primary, guard.Options{Software: soft.New(), Fallback: fallback})
				err := c.op(g)
				st := g.Status()
				if st.KATFailures != 1 || len(st.KATs) != 0 {
					t.Fatalf("fallback %v: status %+v, want one failed known-answer test", fallback, st)
				}
				if !fallback {
					if !errors.Is(err, engine.ErrDevice) {
						t.Fatalf("without fallback: %v, want engine.ErrDevice", err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("with fallback: %v", err)
				}
				calls := primary.calls.Load()
				if err := c.op(g); err != nil {
					t.Fatalf("with fallback, again: %v", err)
				}
				if asked := primary.calls.Load() != calls; asked != c.stayOnPri {
					t.Fatalf("with fallback: primary asked again %v, want %v", asked, c.stayOnPri)
				}
				if st := g.Status(); st.KATFailures != 1 {
					t.Fatalf("the failed test ran again at once: %+v", st)
				}
			}
			// Healthy: the test passes once, under its name.
			g := guard.New(soft.New(), guard.Options{})
			for range 2 {
				if err := c.op(g); err != nil {
					t.Fatal(err)
				}
			}
			if st := g.Status(); st.KATFailures != 0 || len(st.KATs) != 1 || st.KATs[0] != c.wantTest {
				t.Fatalf("healthy: status %+v, want the one test %s passed", st, c.wantTest)
			}
		})
	}
}
