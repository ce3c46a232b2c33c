package ecdh_test

import (
	"bytes"
	"context"
	stdecdh "crypto/ecdh"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/ecdh"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
)

var curves = []struct {
	name string
	std  stdecdh.Curve
}{
	{"P-256", stdecdh.P256()},
	{"P-384", stdecdh.P384()},
	{"P-521", stdecdh.P521()},
}

// pair makes two crypto/ecdh keys and their shared secret (the second
// implementation Shared is compared with), and the peer's point on c.
func pair(t *testing.T, c *ec.Curve, std stdecdh.Curve) (d, qx, qy, z []byte) {
	t.Helper()
	mine, err := std.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	peer, err := std.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if z, err = mine.ECDH(peer.PublicKey()); err != nil {
		t.Fatal(err)
	}
	if qx, qy, err = c.Unmarshal(peer.PublicKey().Bytes()); err != nil {
		t.Fatal(err)
	}
	return mine.Bytes(), qx, qy, z
}

// TestShared compares Z on the software engine, with and without the
// cross-check, with Go's crypto/ecdh on random key pairs of every NIST
// curve.
func TestShared(t *testing.T) {
	eng := soft.New()
	for _, cv := range curves {
		c, err := ec.CurveByName(cv.name)
		if err != nil {
			t.Fatal(err)
		}
		for range 8 {
			d, qx, qy, want := pair(t, c, cv.std)
			for _, check := range []bool{false, true} {
				got, err := ecdh.Shared(context.Background(), eng, c, d, qx, qy, check)
				if err != nil {
					t.Fatalf("%s, check %v: %v", cv.name, check, err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("%s, check %v: %x, want %x", cv.name, check, got, want)
				}
			}
		}
	}
}

// faulty is an EC engine whose ScalarMult answers a wrong point.
type faulty struct {
	engine.ECEngine
	wrong func(c *ec.Curve, x, y []byte) (wx, wy []byte)
}

func (f faulty) ScalarMult(ctx context.Context, curve string, k, px, py []byte) (x, y []byte, cost engine.Cost, err error) {
	x, y, cost, err = f.ECEngine.ScalarMult(ctx, curve, k, px, py)
	c, cerr := ec.CurveByName(curve)
	if err != nil || cerr != nil {
		return x, y, cost, errors.Join(err, cerr)
	}
	x, y = f.wrong(c, x, y)
	return x, y, cost, nil
}

// TestSharedFault: a result off the curve is refused whatever crossCheck
// says; a point of the curve that is not d·Q is refused by the
// cross-check. Both wrap ErrFault and engine.ErrDevice.
func TestSharedFault(t *testing.T) {
	base, ok := engine.As[engine.ECEngine](soft.New())
	if !ok {
		t.Fatal("soft is not an ECEngine")
	}
	cases := []struct {
		name       string
		crossCheck bool
		wrong      func(c *ec.Curve, x, y []byte) ([]byte, []byte)
	}{
		{"bit flip off the curve", false, func(_ *ec.Curve, x, y []byte) ([]byte, []byte) { x[len(x)-1] ^= 1; return x, y }},
		{"short x", false, func(_ *ec.Curve, x, y []byte) ([]byte, []byte) { return x[1:], y }},
		{"another point", true, func(c *ec.Curve, _, _ []byte) ([]byte, []byte) {
			x, y, err := c.ScalarBaseMult([]byte{7})
			if err != nil {
				panic(err)
			}
			return x, y
		}},
	}
	for _, cv := range curves {
		c, err := ec.CurveByName(cv.name)
		if err != nil {
			t.Fatal(err)
		}
		d, qx, qy, _ := pair(t, c, cv.std)
		for _, tc := range cases {
			got, err := ecdh.Shared(context.Background(), faulty{base, tc.wrong}, c, d, qx, qy, tc.crossCheck)
			if got != nil || !errors.Is(err, ecdh.ErrFault) || !errors.Is(err, engine.ErrDevice) {
				t.Errorf("%s, %s: %x, %v", cv.name, tc.name, got, err)
			}
		}
	}
}
