package ec

import (
	"bytes"
	"math/big"
	"testing"
)

// fuzzModulus checks one Montgomery product, sum and difference of the
// fuzzer's operands (reduced mod m by math/big) against math/big.
func fuzzModulus[E limbs](t *testing.T, f *modulus[E], a, b []byte) {
	m := limbsToBig(&f.m)
	av := new(big.Int).Mod(new(big.Int).SetBytes(a), m)
	bv := new(big.Int).Mod(new(big.Int).SetBytes(b), m)
	var x, z E
	bigToLimbs(&x, av)
	checkMulSqr(t, f, av, bv)
	checkAddSub(t, f, av, bv)
	// Unreduced input: reduceBytes of the raw bytes.
	if len(a) <= 16*len(x) {
		if !f.reduceBytes(&z, a) {
			t.Fatalf("reduceBytes refused %d bytes", len(a))
		}
		if got, want := limbsToBig(&z), new(big.Int).Mod(new(big.Int).SetBytes(a), m); got.Cmp(want) != 0 {
			t.Fatalf("reduceBytes(%x) = %x, want %x", a, got, want)
		}
	}
}

func fuzzFieldMul(f *testing.F, name string) {
	c, err := CurveByName(name)
	if err != nil {
		f.Fatal(err)
	}
	p := c.Params()
	f.Add([]byte{0}, []byte{1})
	f.Add(p.P.Bytes(), new(big.Int).Sub(p.P, big.NewInt(1)).Bytes())
	f.Add(bytes.Repeat([]byte{0xff}, c.ByteLen()), bytes.Repeat([]byte{0xff}, c.ByteLen()))
	f.Add(new(big.Int).Sub(p.N, big.NewInt(1)).Bytes(), p.Gx.Bytes())
	f.Fuzz(func(t *testing.T, a, b []byte) {
		switch ci := c.impl.(type) {
		case *curve[[4]uint64]:
			fuzzModulus(t, &ci.fp, a, b)
			fuzzModulus(t, &ci.fn, a, b)
		case *curve[[6]uint64]:
			fuzzModulus(t, &ci.fp, a, b)
			fuzzModulus(t, &ci.fn, a, b)
		case *curve[[9]uint64]:
			fuzzModulus(t, &ci.fp, a, b)
			fuzzModulus(t, &ci.fn, a, b)
		}
	})
}

// FuzzFieldMulP256 and its siblings compare the field (mod p) and scalar
// (mod n) arithmetic of each curve with math/big.
func FuzzFieldMulP256(f *testing.F)      { fuzzFieldMul(f, "P-256") }
func FuzzFieldMulP384(f *testing.F)      { fuzzFieldMul(f, "P-384") }
func FuzzFieldMulP521(f *testing.F)      { fuzzFieldMul(f, "P-521") }
func FuzzFieldMulSecp256k1(f *testing.F) { fuzzFieldMul(f, "secp256k1") }

// FuzzScalarMult compares k·G, k·Q (Q = j·G) and the variable-time
// u1·G + u2·Q with the math/big reference, on a curve chosen by the first
// byte.
func FuzzScalarMult(f *testing.F) {
	f.Add(byte(0), []byte{1}, []byte{2})
	f.Add(byte(1), bytes.Repeat([]byte{0xff}, 48), []byte{3})
	f.Add(byte(2), []byte{0x01, 0xff}, bytes.Repeat([]byte{0xee}, 66))
	f.Add(byte(3), bytes.Repeat([]byte{0x80}, 32), []byte{0})
	f.Fuzz(func(t *testing.T, which byte, k, j []byte) {
		cs := Curves()
		c := cs[int(which)%len(cs)]
		p := c.Params()
		kv := new(big.Int).SetBytes(k)
		if len(k) == 0 || len(k) > 2*8*((c.ByteLen()+7)/8) {
			if _, _, err := c.ScalarBaseMult(k); err == nil {
				t.Fatalf("k of %d bytes accepted", len(k))
			}
			return
		}
		jv := new(big.Int).Mod(new(big.Int).SetBytes(j), p.N)
		if jv.Sign() == 0 {
			jv.SetInt64(1)
		}
		x, y, err := c.ScalarBaseMult(k)
		want := p.refMult(new(big.Int).Mod(kv, p.N), p.refG())
		if want.x == nil {
			if err == nil {
				t.Fatalf("k ≡ 0: no error")
			}
			return
		}
		if err != nil || !bytes.Equal(x, c.pad(want.x)) || !bytes.Equal(y, c.pad(want.y)) {
			t.Fatalf("%s k=%x: k·G = (%x, %x, %v), want (%x, %x)", c.Name(), k, x, y, err, want.x, want.y)
		}
		q := p.refMult(jv, p.refG())
		x, y, err = c.ScalarMult(k, c.pad(q.x), c.pad(q.y))
		want = p.refMult(new(big.Int).Mod(kv, p.N), q)
		if err != nil || !bytes.Equal(x, c.pad(want.x)) || !bytes.Equal(y, c.pad(want.y)) {
			t.Fatalf("%s k=%x j=%x: k·Q = (%x, %x, %v), want (%x, %x)", c.Name(), k, jv, x, y, err, want.x, want.y)
		}
		x, y, err = c.DoubleScalarMultVarTime(k, jv.Bytes(), c.pad(q.x), c.pad(q.y))
		want = p.refAdd(p.refMult(new(big.Int).Mod(kv, p.N), p.refG()), p.refMult(jv, q))
		if want.x == nil {
			if err == nil {
				t.Fatal("u1·G + u2·Q at infinity: no error")
			}
			return
		}
		if err != nil || !bytes.Equal(x, c.pad(want.x)) || !bytes.Equal(y, c.pad(want.y)) {
			t.Fatalf("%s u1=%x u2=%x: got (%x, %x, %v), want (%x, %x)", c.Name(), k, jv, x, y, err, want.x, want.y)
		}
	})
}

// FuzzUnmarshalECPoint feeds arbitrary bytes to the point decoders: they
// must not panic, and whatever they accept must be on the curve and
// re-encode to an equivalent point.
func FuzzUnmarshalECPoint(f *testing.F) {
	for _, c := range Curves() {
		p := c.Params()
		gx, gy := c.pad(p.Gx), c.pad(p.Gy)
		f.Add(c.MarshalECPoint(gx, gy))
		f.Add(c.Marshal(gx, gy))
		f.Add(c.MarshalCompressed(gx, gy))
	}
	f.Add([]byte{0x04, 0x81, 0x01, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range Curves() {
			for _, dec := range []func([]byte) ([]byte, []byte, error){c.Unmarshal, c.UnmarshalECPoint} {
				x, y, err := dec(data)
				if err != nil {
					continue
				}
				if !c.IsOnCurve(x, y) {
					t.Fatalf("%s: accepted %x, not on the curve", c.Name(), data)
				}
				x2, y2, err := c.UnmarshalECPoint(c.MarshalECPoint(x, y))
				if err != nil || !bytes.Equal(x, x2) || !bytes.Equal(y, y2) {
					t.Fatalf("%s: round trip of %x failed: %v", c.Name(), data, err)
				}
			}
		}
	})
}
