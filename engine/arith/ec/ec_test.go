package ec

import (
	"bytes"
	"crypto/ecdh"
	"crypto/elliptic"
	"encoding/asn1"
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"
)

func testRand(t testing.TB) *rand.Rand {
	var seed [32]byte
	copy(seed[:], t.Name())
	return rand.New(rand.NewChaCha8(seed))
}

func randInt(r *rand.Rand, max *big.Int) *big.Int {
	b := make([]byte, (max.BitLen()+7)/8+8)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return new(big.Int).Mod(new(big.Int).SetBytes(b), max)
}

func TestParams(t *testing.T) {
	std := map[string]elliptic.Curve{"P-224": elliptic.P224(), "P-256": elliptic.P256(), "P-384": elliptic.P384(), "P-521": elliptic.P521()}
	oids := map[string]asn1.ObjectIdentifier{
		"P-192": {1, 2, 840, 10045, 3, 1, 1}, "P-224": {1, 3, 132, 0, 33}, "P-256": {1, 2, 840, 10045, 3, 1, 7}, "P-384": {1, 3, 132, 0, 34},
		"P-521": {1, 3, 132, 0, 35}, "secp256k1": {1, 3, 132, 0, 10},
	}
	if got := Names(); len(got) != 6 {
		t.Fatalf("Names() = %v", got)
	}
	for _, c := range Curves() {
		t.Run(c.Name(), func(t *testing.T) {
			p := c.Params()
			if s, ok := std[c.Name()]; ok {
				sp := s.Params()
				for _, pair := range [][2]*big.Int{{p.P, sp.P}, {p.N, sp.N}, {p.B, sp.B}, {p.Gx, sp.Gx}, {p.Gy, sp.Gy}} {
					if pair[0].Cmp(pair[1]) != 0 {
						t.Errorf("parameter %x, crypto/elliptic has %x", pair[0], pair[1])
					}
				}
			}
			if !p.refOnCurve(p.refG()) {
				t.Error("G not on the curve (reference)")
			}
			if got := p.refMult(p.N, p.refG()); got.x != nil {
				t.Error("n·G is not the identity (reference)")
			}
			// The two references agree.
			k := randInt(testRand(t), p.N)
			a, b := p.refMult(k, p.refG()), p.refMultAffine(k, p.refG())
			if a.x.Cmp(b.x) != 0 || a.y.Cmp(b.y) != 0 || !p.refOnCurve(a) {
				t.Error("Jacobian and affine references disagree")
			}
			want, err := asn1.Marshal(oids[c.Name()])
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(c.OID(), want) {
				t.Errorf("OID = %x, want %x", c.OID(), want)
			}
			if got, err := CurveByOID(want); err != nil || got != c {
				t.Errorf("CurveByOID: %v, %v", got, err)
			}
			if got, err := CurveByName(c.Name()); err != nil || got != c {
				t.Errorf("CurveByName: %v, %v", got, err)
			}
			if !bytes.Equal(c.Order(), p.N.FillBytes(make([]byte, c.OrderByteLen()))) || c.OrderBits() != p.N.BitLen() {
				t.Error("Order/OrderBits disagree with Params")
			}
			if c.ByteLen() != (p.P.BitLen()+7)/8 {
				t.Errorf("ByteLen = %d", c.ByteLen())
			}
		})
	}
	for _, alias := range []string{"secp192r1", "prime192v1", "secp224r1", "secp256r1", "prime256v1", "SECP384R1", "secp521r1"} {
		if _, err := CurveByName(alias); err != nil {
			t.Errorf("CurveByName(%q): %v", alias, err)
		}
	}
	if _, err := CurveByName("brainpoolP256r1"); !errors.Is(err, ErrUnknownCurve) {
		t.Errorf("brainpoolP256r1: %v", err)
	}
	brainpool := []byte{0x06, 0x09, 0x2b, 0x24, 0x03, 0x03, 0x02, 0x08, 0x01, 0x01, 0x07} // 1.3.36.3.3.2.8.1.1.7
	if _, err := CurveByOID(brainpool); !errors.Is(err, ErrUnknownCurve) {
		t.Errorf("brainpoolP256r1 OID: %v", err)
	}
}

// checkMulSqr compares f's Montgomery product of xv and yv, and square
// of xv (both below the modulus), with math/big.
func checkMulSqr[E limbs](t *testing.T, f *modulus[E], xv, yv *big.Int) {
	t.Helper()
	m := limbsToBig(&f.m)
	Rinv := new(big.Int).ModInverse(new(big.Int).Lsh(big.NewInt(1), uint(64*len(f.m))), m)
	var x, y, z E
	bigToLimbs(&x, xv)
	bigToLimbs(&y, yv)
	f.mul(&z, &x, &y)
	want := new(big.Int).Mul(xv, yv)
	want.Mul(want, Rinv).Mod(want, m)
	if got := limbsToBig(&z); got.Cmp(want) != 0 {
		t.Fatalf("mul(%x, %x) mod %x = %x, want %x", xv, yv, m, got, want)
	}
	f.sqr(&z, &x)
	want = new(big.Int).Mul(xv, xv)
	want.Mul(want, Rinv).Mod(want, m)
	if got := limbsToBig(&z); got.Cmp(want) != 0 {
		t.Fatalf("sqr(%x) mod %x = %x, want %x", xv, m, got, want)
	}
}

// checkAddSub compares f's sum and difference of xv and yv (both below
// the modulus) with math/big.
func checkAddSub[E limbs](t *testing.T, f *modulus[E], xv, yv *big.Int) {
	t.Helper()
	m := limbsToBig(&f.m)
	var x, y, z E
	bigToLimbs(&x, xv)
	bigToLimbs(&y, yv)
	f.add(&z, &x, &y)
	if got, want := limbsToBig(&z), new(big.Int).Mod(new(big.Int).Add(xv, yv), m); got.Cmp(want) != 0 {
		t.Fatalf("add(%x, %x) = %x, want %x", xv, yv, got, want)
	}
	f.sub(&z, &x, &y)
	if got, want := limbsToBig(&z), new(big.Int).Mod(new(big.Int).Sub(xv, yv), m); got.Cmp(want) != 0 {
		t.Fatalf("sub(%x, %x) = %x, want %x", xv, yv, got, want)
	}
}

// checkModulus compares the Montgomery arithmetic of f with math/big on
// random and extreme operands.
func checkModulus[E limbs](t *testing.T, f *modulus[E], r *rand.Rand) {
	m := limbsToBig(&f.m)
	edge := []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(2), new(big.Int).Sub(m, big.NewInt(1)), new(big.Int).Sub(m, big.NewInt(2))}
	var vals []*big.Int
	vals = append(vals, edge...)
	for range 40 {
		vals = append(vals, randInt(r, m))
	}
	for i, xv := range vals {
		yv := vals[(i*7+3)%len(vals)]
		checkMulSqr(t, f, xv, yv)
		checkAddSub(t, f, xv, yv)
		if xv.Sign() != 0 && i%4 == 0 {
			var x, xm, inv, back E
			bigToLimbs(&x, xv)
			f.toMont(&xm, &x)
			f.inv(&inv, &xm)
			f.fromMont(&back, &inv)
			if got, want := limbsToBig(&back), new(big.Int).ModInverse(xv, m); got.Cmp(want) != 0 {
				t.Fatalf("inv(%x) = %x, want %x", xv, got, want)
			}
		}
	}
	// add and sub on every pair of edge values (sums and differences
	// that land on 0, m − 1 and m exactly).
	for _, xv := range edge {
		for _, yv := range edge {
			checkAddSub(t, f, xv, yv)
		}
	}
	// exp's sliding window on exponents with long runs of ones and zeros,
	// short ones and random ones.
	exps := []*big.Int{big.NewInt(1), big.NewInt(2), big.NewInt(31), big.NewInt(32), big.NewInt(33),
		new(big.Int).Sub(m, big.NewInt(1)), new(big.Int).Lsh(big.NewInt(1), uint(f.bits-1)),
		new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(f.bits-1)), big.NewInt(1))}
	for range 4 {
		exps = append(exps, randInt(r, m))
	}
	for i, ev := range exps {
		xv := vals[5+i%(len(vals)-5)]
		var x, xm, e, z E
		bigToLimbs(&x, xv)
		bigToLimbs(&e, ev)
		f.toMont(&xm, &x)
		f.exp(&z, &xm, &e)
		f.fromMont(&z, &z)
		if got, want := limbsToBig(&z), new(big.Int).Exp(xv, ev, m); got.Cmp(want) != 0 {
			t.Fatalf("exp(%x, %x) = %x, want %x", xv, ev, got, want)
		}
	}
	// reduceBytes on values up to 2·8L bytes.
	for _, n := range []int{1, 8 * len(f.m), 8*len(f.m) + 1, 16 * len(f.m)} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if n > 2 {
			b[0] = 0xff
		}
		var z E
		if !f.reduceBytes(&z, b) {
			t.Fatalf("reduceBytes refused %d bytes", n)
		}
		if got, want := limbsToBig(&z), new(big.Int).Mod(new(big.Int).SetBytes(b), m); got.Cmp(want) != 0 {
			t.Fatalf("reduceBytes(%x) = %x, want %x", b, got, want)
		}
	}
}

func TestFieldArithmetic(t *testing.T) {
	for _, c := range Curves() {
		t.Run(c.Name(), func(t *testing.T) {
			r := testRand(t)
			switch ci := c.impl.(type) {
			case *curve[[4]uint64]:
				checkModulus(t, &ci.fp, r)
				checkModulus(t, &ci.fn, r)
			case *curve[[6]uint64]:
				checkModulus(t, &ci.fp, r)
				checkModulus(t, &ci.fn, r)
			case *curve[[9]uint64]:
				checkModulus(t, &ci.fp, r)
				checkModulus(t, &ci.fn, r)
			default:
				t.Fatalf("unexpected impl %T", ci)
			}
		})
	}
}

// testScalars are scalars with edge values plus random ones. Under the
// race detector (which slows the math/big reference tenfold) only 1, n−1,
// one random scalar and the unreduced ones are used.
func testScalars(c *Curve, r *rand.Rand, random int) [][]byte {
	n := c.Params().N
	one := big.NewInt(1)
	edges := []*big.Int{one, new(big.Int).Sub(n, one), big.NewInt(2), big.NewInt(15), big.NewInt(16),
		big.NewInt(17), new(big.Int).Sub(n, big.NewInt(2)), new(big.Int).Rsh(n, 1)}
	if raceBuild {
		edges, random = edges[:2], min(random, 1)
	}
	var out [][]byte
	for _, v := range edges {
		out = append(out, v.FillBytes(make([]byte, c.OrderByteLen())))
	}
	for range random {
		out = append(out, randInt(r, n).FillBytes(make([]byte, c.OrderByteLen())))
	}
	// Unreduced: n + 1, and a long all-ones scalar.
	return append(out, new(big.Int).Add(n, one).Bytes(), bytes.Repeat([]byte{0xff}, 2*c.OrderByteLen()))
}

// limbBytes is the byte width of c's limb array: 32 for the curves on
// four limbs (P-192 to secp256k1), 48 for P-384, 72 for P-521.
func limbBytes(c *Curve) int {
	switch {
	case c.ByteLen() <= 32:
		return 32
	case c.ByteLen() <= 48:
		return 48
	}
	return 72
}

func TestScalarBaseMult(t *testing.T) {
	for _, c := range Curves() {
		t.Run(c.Name(), func(t *testing.T) {
			t.Parallel()
			p := c.Params()
			for _, k := range testScalars(c, testRand(t), 4) {
				x, y, err := c.ScalarBaseMult(k)
				if err != nil {
					t.Fatalf("k=%x: %v", k, err)
				}
				want := p.refMult(new(big.Int).SetBytes(k), p.refG())
				if !bytes.Equal(x, c.pad(want.x)) || !bytes.Equal(y, c.pad(want.y)) {
					t.Fatalf("k=%x: got (%x, %x), want (%x, %x)", k, x, y, want.x, want.y)
				}
			}
			for _, k := range [][]byte{{}, {0}, c.Order(), bytes.Repeat([]byte{1}, 2*limbBytes(c)+1)} {
				if _, _, err := c.ScalarBaseMult(k); !errors.Is(err, ErrInvalidScalar) {
					t.Errorf("k=%x: err = %v, want ErrInvalidScalar", k, err)
				}
			}
		})
	}
}

func TestScalarBaseMultCrossECDH(t *testing.T) {
	for name, e := range map[string]ecdh.Curve{"P-256": ecdh.P256(), "P-384": ecdh.P384(), "P-521": ecdh.P521()} {
		c, _ := CurveByName(name)
		r := testRand(t)
		for _, k := range testScalars(c, r, 8) {
			if len(k) != c.OrderByteLen() || new(big.Int).SetBytes(k).Cmp(c.Params().N) >= 0 {
				continue // crypto/ecdh takes canonical scalars only
			}
			priv, err := e.NewPrivateKey(k)
			if err != nil {
				t.Fatalf("%s: crypto/ecdh refuses k=%x: %v", name, k, err)
			}
			x, y, err := c.ScalarBaseMult(k)
			if err != nil {
				t.Fatal(err)
			}
			if want := priv.PublicKey().Bytes(); !bytes.Equal(c.Marshal(x, y), want) {
				t.Fatalf("%s k=%x: got %x, crypto/ecdh %x", name, k, c.Marshal(x, y), want)
			}
		}
	}
}

func TestScalarMult(t *testing.T) {
	for _, c := range Curves() {
		t.Run(c.Name(), func(t *testing.T) {
			t.Parallel()
			p := c.Params()
			r := testRand(t)
			q := p.refMult(randInt(r, p.N), p.refG())
			qx, qy := c.pad(q.x), c.pad(q.y)
			for _, k := range testScalars(c, r, 3) {
				x, y, err := c.ScalarMult(k, qx, qy)
				if err != nil {
					t.Fatalf("k=%x: %v", k, err)
				}
				want := p.refMult(new(big.Int).SetBytes(k), q)
				if !bytes.Equal(x, c.pad(want.x)) || !bytes.Equal(y, c.pad(want.y)) {
					t.Fatalf("k=%x: got (%x, %x), want (%x, %x)", k, x, y, want.x, want.y)
				}
			}
			if _, _, err := c.ScalarMult(c.Order(), qx, qy); !errors.Is(err, ErrInvalidScalar) {
				t.Errorf("n·Q: err = %v", err)
			}
			// Invalid points: off the curve, coordinate ≥ p, wrong length.
			bad := bytes.Clone(qy)
			bad[len(bad)-1] ^= 1
			pp := c.pad(p.P)
			for _, pt := range [][2][]byte{{qx, bad}, {pp, qy}, {qx, pp}, {qx[1:], qy}, {make([]byte, c.ByteLen()), make([]byte, c.ByteLen())}} {
				if _, _, err := c.ScalarMult([]byte{1}, pt[0], pt[1]); !errors.Is(err, ErrInvalidPoint) {
					t.Errorf("point (%x, %x): err = %v, want ErrInvalidPoint", pt[0], pt[1], err)
				}
				if c.IsOnCurve(pt[0], pt[1]) {
					t.Errorf("IsOnCurve(%x, %x) = true", pt[0], pt[1])
				}
			}
			if !c.IsOnCurve(qx, qy) {
				t.Error("IsOnCurve(Q) = false")
			}
		})
	}
}

func TestDoubleScalarMultVarTime(t *testing.T) {
	for _, c := range Curves() {
		t.Run(c.Name(), func(t *testing.T) {
			t.Parallel()
			p := c.Params()
			r := testRand(t)
			n := p.N
			gx, gy := c.pad(p.Gx), c.pad(p.Gy)
			q := p.refMult(randInt(r, n), p.refG())
			qx, qy := c.pad(q.x), c.pad(q.y)
			ks := testScalars(c, r, 2)
			for i, u1 := range ks {
				u2 := ks[(i*5+1)%len(ks)]
				x, y, err := c.DoubleScalarMultVarTime(u1, u2, qx, qy)
				want := p.refAdd(p.refMult(new(big.Int).SetBytes(u1), p.refG()), p.refMult(new(big.Int).SetBytes(u2), q))
				if err != nil {
					t.Fatalf("u1=%x u2=%x: %v", u1, u2, err)
				}
				if !bytes.Equal(x, c.pad(want.x)) || !bytes.Equal(y, c.pad(want.y)) {
					t.Fatalf("u1=%x u2=%x: got (%x, %x), want (%x, %x)", u1, u2, x, y, want.x, want.y)
				}
			}
			// With Q = G: u·G + u·G doubles through the addition, and
			// u·G + (n−u)·G is the point at infinity.
			u := randInt(r, n)
			ub := u.FillBytes(make([]byte, c.OrderByteLen()))
			x, y, err := c.DoubleScalarMultVarTime(ub, ub, gx, gy)
			want := p.refMult(new(big.Int).Lsh(u, 1), p.refG())
			if err != nil || !bytes.Equal(x, c.pad(want.x)) || !bytes.Equal(y, c.pad(want.y)) {
				t.Fatalf("u·G + u·G: (%x, %x, %v), want (%x, %x)", x, y, err, want.x, want.y)
			}
			neg := new(big.Int).Sub(n, u).Bytes()
			if _, _, err := c.DoubleScalarMultVarTime(ub, neg, gx, gy); !errors.Is(err, ErrInvalidScalar) {
				t.Fatalf("u·G + (n−u)·G: err = %v, want ErrInvalidScalar", err)
			}
		})
	}
}

func TestIsValidScalar(t *testing.T) {
	for _, c := range Curves() {
		n := c.Params().N
		cases := []struct {
			k    []byte
			want bool
		}{
			{big.NewInt(1).FillBytes(make([]byte, c.OrderByteLen())), true},
			{new(big.Int).Sub(n, big.NewInt(1)).FillBytes(make([]byte, c.OrderByteLen())), true},
			{make([]byte, c.OrderByteLen()), false},
			{c.Order(), false},
			{bytes.Repeat([]byte{0xff}, c.OrderByteLen()), false},
			{[]byte{1}, false},
		}
		for _, tc := range cases {
			if got := c.IsValidScalar(tc.k); got != tc.want {
				t.Errorf("%s IsValidScalar(%x) = %v", c.Name(), tc.k, got)
			}
		}
	}
}

func TestEncoding(t *testing.T) {
	for _, c := range Curves() {
		t.Run(c.Name(), func(t *testing.T) {
			r := testRand(t)
			for range 8 {
				k := randInt(r, c.Params().N).Bytes()
				x, y, err := c.ScalarBaseMult(k)
				if err != nil {
					t.Fatal(err)
				}
				for _, enc := range [][]byte{c.Marshal(x, y), c.MarshalCompressed(x, y)} {
					gx, gy, err := c.Unmarshal(enc)
					if err != nil || !bytes.Equal(gx, x) || !bytes.Equal(gy, y) {
						t.Fatalf("Unmarshal(%x) = %x, %x, %v", enc, gx, gy, err)
					}
				}
				ep := c.MarshalECPoint(x, y)
				if std, err := asn1.Marshal(c.Marshal(x, y)); err != nil || !bytes.Equal(ep, std) {
					t.Fatalf("MarshalECPoint = %x, encoding/asn1 %x", ep, std)
				}
				for _, enc := range [][]byte{ep, c.Marshal(x, y)} {
					gx, gy, err := c.UnmarshalECPoint(enc)
					if err != nil || !bytes.Equal(gx, x) || !bytes.Equal(gy, y) {
						t.Fatalf("UnmarshalECPoint(%x) = %x, %x, %v", enc, gx, gy, err)
					}
				}
			}
			g := c.Marshal(c.pad(c.Params().Gx), c.pad(c.Params().Gy))
			offCurve := bytes.Clone(g)
			offCurve[len(offCurve)-1] ^= 1
			bad := [][]byte{nil, {0}, {4}, g[:len(g)-1], append(bytes.Clone(g), 0), offCurve,
				append([]byte{5}, g[1:]...), append([]byte{0x04, byte(len(g) + 1)}, g...)}
			for _, b := range bad {
				if _, _, err := c.UnmarshalECPoint(b); !errors.Is(err, ErrInvalidPoint) {
					t.Errorf("UnmarshalECPoint(%x): err = %v", b, err)
				}
			}
		})
	}
}

// TestECDSASignature checks the constant-time signing equation against the
// reference verifier, and our verifier against both outcomes.
func TestECDSASignature(t *testing.T) {
	for _, c := range Curves() {
		t.Run(c.Name(), func(t *testing.T) {
			t.Parallel()
			p := c.Params()
			r := testRand(t)
			olen := c.OrderByteLen()
			for i := range 3 {
				d := randNonZero(r, p.N)
				k := randNonZero(r, p.N)
				q := p.refMult(d, p.refG())
				hash := make([]byte, []int{32, 48, 64, 80}[i%4]+i)
				for j := range hash {
					hash[j] = byte(r.Uint32())
				}
				R := p.refMult(k, p.refG())
				rs := make([]byte, 2*olen)
				if err := c.ECDSASignature(rs, k.FillBytes(make([]byte, olen)), d.FillBytes(make([]byte, olen)), hash, c.pad(R.x)); err != nil {
					t.Fatal(err)
				}
				rr, ss := new(big.Int).SetBytes(rs[:olen]), new(big.Int).SetBytes(rs[olen:])
				if !p.refVerify(q, hash, rr, ss) {
					t.Fatalf("reference rejects our signature")
				}
				if err := c.ECDSAVerifyVarTime(c.pad(q.x), c.pad(q.y), hash, rs); err != nil {
					t.Fatalf("ECDSAVerifyVarTime: %v", err)
				}
				hash[0] ^= 0x80
				if err := c.ECDSAVerifyVarTime(c.pad(q.x), c.pad(q.y), hash, rs); !errors.Is(err, ErrInvalidSignature) {
					t.Fatalf("altered hash: %v", err)
				}
			}
		})
	}
}

// TestPublicKey checks that the table path of PublicKey agrees with the
// wNAF path and the reference, for valid and altered signatures.
func TestPublicKey(t *testing.T) {
	for _, c := range Curves() {
		t.Run(c.Name(), func(t *testing.T) {
			p := c.Params()
			r := testRand(t)
			olen := c.OrderByteLen()
			d, q, pk := randKey(t, c, r)
			if x, y := pk.Coordinates(); !bytes.Equal(x, c.pad(q.x)) || !bytes.Equal(y, c.pad(q.y)) || pk.Curve() != c {
				t.Fatal("Coordinates/Curve disagree")
			}
			pk.Precompute()
			for i := range 4 {
				k := randNonZero(r, p.N)
				R := p.refMult(k, p.refG())
				hash := []byte{byte(i), 1, 2, 3}
				rs := make([]byte, 2*olen)
				if err := c.ECDSASignature(rs, k.FillBytes(make([]byte, olen)), d.FillBytes(make([]byte, olen)), hash, c.pad(R.x)); err != nil {
					t.Fatal(err)
				}
				if i%2 == 1 {
					rs[olen+i] ^= 4
				}
				want := p.refVerify(q, hash, new(big.Int).SetBytes(rs[:olen]), new(big.Int).SetBytes(rs[olen:]))
				if err := pk.ECDSAVerifyVarTime(hash, rs); (err == nil) != want {
					t.Errorf("table path: %v, reference %v", err, want)
				}
				if err := pk.ecdsaVerifyNoTable(hash, rs); (err == nil) != want {
					t.Errorf("wNAF path: %v, reference %v", err, want)
				}
			}
			bad := c.pad(new(big.Int).Add(q.y, big.NewInt(1)))
			if _, err := c.NewPublicKey(c.pad(q.x), bad); !errors.Is(err, ErrInvalidPoint) {
				t.Errorf("off-curve key: %v", err)
			}
		})
	}
}

// TestECDSASignatureInverse checks that ECDSASignatureInverse gives the
// same r‖s as ECDSASignature and the true s⁻¹ mod n, that
// ECDSAVerifyInverseVarTime accepts exactly what ECDSAVerifyVarTime
// accepts with it, and that it refuses a wrong s⁻¹ (and a right s⁻¹ with
// an altered s).
func TestECDSASignatureInverse(t *testing.T) {
	for _, c := range Curves() {
		t.Run(c.Name(), func(t *testing.T) {
			t.Parallel()
			p := c.Params()
			r := testRand(t)
			olen := c.OrderByteLen()
			d, _, pk := randKey(t, c, r)
			for i := range 4 {
				k := randNonZero(r, p.N)
				if i == 0 {
					k.SetInt64(1)
				}
				R := p.refMult(k, p.refG())
				hash := []byte{byte(i), 9, 8, 7}
				kb, db := k.FillBytes(make([]byte, olen)), d.FillBytes(make([]byte, olen))
				rs, rs2 := make([]byte, 2*olen), make([]byte, 2*olen)
				sinv := make([]byte, olen)
				if err := c.ECDSASignature(rs, kb, db, hash, c.pad(R.x)); err != nil {
					t.Fatal(err)
				}
				if err := c.ECDSASignatureInverse(rs2, sinv, kb, db, hash, c.pad(R.x)); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(rs, rs2) {
					t.Fatalf("r‖s %x, with the inverse %x", rs, rs2)
				}
				s := new(big.Int).SetBytes(rs[olen:])
				if want := new(big.Int).ModInverse(s, p.N); want.Cmp(new(big.Int).SetBytes(sinv)) != 0 {
					t.Fatalf("s⁻¹ = %x, want %x", sinv, want)
				}
				if err := pk.ECDSAVerifyInverseVarTime(hash, rs, sinv); err != nil {
					t.Fatalf("verify with s⁻¹: %v", err)
				}
				wrong := bytes.Clone(sinv)
				wrong[olen-1] ^= 1
				if err := pk.ECDSAVerifyInverseVarTime(hash, rs, wrong); !errors.Is(err, ErrInvalidSignature) {
					t.Fatalf("wrong s⁻¹: %v", err)
				}
				if err := pk.ECDSAVerifyInverseVarTime(hash, rs, sinv[1:]); !errors.Is(err, ErrInvalidSignature) {
					t.Fatalf("short s⁻¹: %v", err)
				}
				if err := pk.ECDSAVerifyInverseVarTime(hash, rs, p.N.FillBytes(make([]byte, olen))); !errors.Is(err, ErrInvalidSignature) {
					t.Fatalf("s⁻¹ = n: %v", err)
				}
				if err := pk.ECDSAVerifyInverseVarTime(hash, rs, nil); !errors.Is(err, ErrInvalidSignature) {
					t.Fatalf("no s⁻¹: %v", err)
				}
				bad := bytes.Clone(rs)
				bad[olen+3] ^= 0x10
				if err := pk.ECDSAVerifyInverseVarTime(hash, bad, sinv); !errors.Is(err, ErrInvalidSignature) {
					t.Fatalf("altered s, its old inverse: %v", err)
				}
				hash[0] ^= 0x80
				if err := pk.ECDSAVerifyInverseVarTime(hash, rs, sinv); !errors.Is(err, ErrInvalidSignature) {
					t.Fatalf("altered hash: %v", err)
				}
			}
			one := new(big.Int).SetInt64(1).FillBytes(make([]byte, olen))
			if err := c.ECDSASignatureInverse(make([]byte, 2*olen), make([]byte, olen+1), one, one, []byte{1}, c.pad(p.Gx)); err == nil {
				t.Fatal("inverse buffer of the wrong length accepted")
			}
		})
	}
}

func TestSelfTest(t *testing.T) {
	if err := SelfTest(); err != nil {
		t.Fatal(err)
	}
}

// TestInvP256 checks the P-256 prime's inversion (divsteps) against exp
// with the exponent p − 2, and against math/big.
func TestInvP256(t *testing.T) {
	ci := p256Impl(t)
	if !ci.fp.p256 {
		t.Fatal("P-256 field not found")
	}
	f := &ci.fp
	p := limbsToBig(&f.m)
	r := testRand(t)
	for i := range 200 {
		var x *big.Int
		switch i {
		case 0: // zero: inverse 0
			x = new(big.Int)
		case 1:
			x = big.NewInt(1)
		case 2:
			x = new(big.Int).Sub(p, big.NewInt(1))
		default:
			x = randInt(r, p)
		}
		checkInv(t, f, x)
	}
}

// ecdsaVerifyNoTable verifies without building the table (tests compare
// both paths).
func (k *PublicKey) ecdsaVerifyNoTable(hash, rs []byte) error {
	return k.v.verify(hash, rs, nil, false)
}

// TestP224AgainstCryptoElliptic cross-checks P-224 (which crypto/ecdh does
// not have) with crypto/elliptic: k·G, k·P, and the compressed encoding
// (p ≡ 1 mod 4 on P-224: decompression takes Tonelli–Shanks).
func TestP224AgainstCryptoElliptic(t *testing.T) {
	c, err := CurveByName("P-224")
	if err != nil {
		t.Fatal(err)
	}
	std := elliptic.P224()
	r := testRand(t)
	for i := range 64 {
		k := randInt(r, std.Params().N)
		if i == 0 {
			k = new(big.Int).Sub(std.Params().N, big.NewInt(1))
		}
		kb := k.FillBytes(make([]byte, 28))
		x, y, err := c.ScalarBaseMult(kb)
		if err != nil {
			t.Fatal(err)
		}
		wx, wy := std.ScalarBaseMult(kb) //nolint:staticcheck // the reference
		if new(big.Int).SetBytes(x).Cmp(wx) != 0 || new(big.Int).SetBytes(y).Cmp(wy) != 0 {
			t.Fatalf("k·G for k=%x", kb)
		}
		d := randInt(r, std.Params().N).FillBytes(make([]byte, 28))
		px, py, err := c.ScalarMult(d, x, y)
		if err != nil {
			t.Fatal(err)
		}
		wx, wy = std.ScalarMult(wx, wy, d) //nolint:staticcheck // the reference
		if new(big.Int).SetBytes(px).Cmp(wx) != 0 || new(big.Int).SetBytes(py).Cmp(wy) != 0 {
			t.Fatalf("d·P for d=%x", d)
		}
		comp := c.MarshalCompressed(px, py)
		if !bytes.Equal(comp, elliptic.MarshalCompressed(std, wx, wy)) {
			t.Fatal("compressed encodings differ")
		}
		ux, uy, err := c.Unmarshal(comp)
		if err != nil || !bytes.Equal(ux, px) || !bytes.Equal(uy, py) {
			t.Fatalf("decompression: %v", err)
		}
	}
	// An x with no point (found by trial) is refused.
	for x := int64(1); ; x++ {
		xb := big.NewInt(x).FillBytes(make([]byte, 28))
		if ex, _ := elliptic.UnmarshalCompressed(std, append([]byte{2}, xb...)); ex == nil {
			if _, _, err := c.Unmarshal(append([]byte{2}, xb...)); !errors.Is(err, ErrInvalidPoint) {
				t.Fatalf("x=%d without a point: %v", x, err)
			}
			break
		}
	}
}

// randKey draws a private scalar d of c at random and returns it with
// its public point by the reference arithmetic and the PublicKey of that
// point.
func randKey(t *testing.T, c *Curve, r *rand.Rand) (*big.Int, refPoint, *PublicKey) {
	t.Helper()
	p := c.Params()
	d := randNonZero(r, p.N)
	q := p.refMult(d, p.refG())
	pk, err := c.NewPublicKey(c.pad(q.x), c.pad(q.y))
	if err != nil {
		t.Fatal(err)
	}
	return d, q, pk
}

// randNonZero returns a uniform integer in [1, n−1].
func randNonZero(r *rand.Rand, n *big.Int) *big.Int {
	return new(big.Int).Add(randInt(r, new(big.Int).Sub(n, big.NewInt(1))), big.NewInt(1))
}
