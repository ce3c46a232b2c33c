package ecdsa

import (
	"bytes"
	"context"
	stdecdsa "crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/ecdsa/ecdsatest"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func curve(t testing.TB, name string) *ec.Curve {
	t.Helper()
	c, err := ec.CurveByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestWycheproof: every valid vector verifies, every invalid one fails,
// through Verify and (for the first keys of each file) through the comb
// table path that PrivateKey.Sign uses for its check.
func TestWycheproof(t *testing.T) {
	for _, file := range ecdsatest.Files {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			vectors, err := ecdsatest.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			var valid, invalid int
			keys := map[string]*ec.PublicKey{}
			for _, v := range vectors {
				c := curve(t, v.Curve)
				x, y, err := c.Unmarshal(v.Point)
				if err != nil {
					t.Fatalf("#%d: public key: %v", v.TcID, err)
				}
				err = Verify(v.Curve, x, y, v.Digest(), v.Sig)
				pk, seen := keys[string(v.Point)]
				if !seen && len(keys) < 3 {
					pk, err2 := c.NewPublicKey(x, y)
					if err2 != nil {
						t.Fatal(err2)
					}
					keys[string(v.Point)] = pk
				}
				if pk != nil {
					if err2 := pk.ECDSAVerifyVarTime(v.Digest(), v.Sig); (err == nil) != (err2 == nil) {
						t.Errorf("#%d: Verify says %v, the table path %v", v.TcID, err, err2)
					}
				}
				switch {
				case v.Acceptable:
				case v.Valid && err != nil:
					t.Errorf("#%d (%s): valid signature rejected: %v", v.TcID, v.Comment, err)
				case !v.Valid && err == nil:
					t.Errorf("#%d (%s): invalid signature accepted", v.TcID, v.Comment)
				case !v.Valid && !errors.Is(err, ErrInvalidSignature):
					t.Errorf("#%d: error %v does not wrap ErrInvalidSignature", v.TcID, err)
				}
				if v.Valid {
					valid++
				} else {
					invalid++
				}
			}
			if valid == 0 || invalid == 0 {
				t.Fatalf("%d valid and %d invalid vectors: file not as expected", valid, invalid)
			}
			t.Logf("%d valid accepted, %d invalid rejected", valid, invalid)
		})
	}
}

// rfc6979 are known answers: RFC 6979 A.2.5 (P-256, SHA-256), A.2.7 (P-521,
// SHA-512) and widely used secp256k1/SHA-256 nonces.
var rfc6979 = []struct {
	curve, d, msg, k, r, s string
}{
	{"P-256", "c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721", "sample",
		"a6e3c57dd01abe90086538398355dd4c3b17aa873382b0f24d6129493d8aad60",
		"efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716",
		"f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8"},
	{"P-256", "c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721", "test",
		"d16b6ae827f17175e040871a1c7ec3500192c4c92677336ec2537acaee0008e0",
		"f1abb023518351cd71d881567b1ea663ed3efcf6c5132b354f28d3b0b7d38367",
		"019f4113742a2b14bd25926b49c649155f267e60d3814b4c0cc84250e46f0083"},
	{"P-521", "00fad06daa62ba3b25d2fb40133da757205de67f5bb0018fee8c86e1b68c7e75caa896eb32f1f47c70855836a6d16fcc1466f6d8fbec67db89ec0c08b0e996b83538", "sample",
		"01dae2ea071f8110dc26882d4d5eae0621a3256fc8847fb9022e2b7d28e6f10198b1574fdd03a9053c08a1854a168aa5a57470ec97dd5ce090124ef52a2f7ecbffd3", "", ""},
	{"secp256k1", "0000000000000000000000000000000000000000000000000000000000000001", "Satoshi Nakamoto",
		"8f8a276c19f4149656b280621e358cce24f5f52542772691ee69063b74f15d15", "", ""},
	{"secp256k1", "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140", "Satoshi Nakamoto",
		"33a19b60e25fb6f4435af53a3d42d493644827367e6453928554f43e49aa6f90", "", ""},
}

func hashFor(c *ec.Curve, msg []byte) []byte {
	if c.OrderBits() > 384 {
		h := sha512.Sum512(msg)
		return h[:]
	}
	h := sha256.Sum256(msg)
	return h[:]
}

func TestRFC6979(t *testing.T) {
	for _, tc := range rfc6979 {
		c := curve(t, tc.curve)
		d := unhex(t, tc.d)
		h := hashFor(c, []byte(tc.msg))
		var g nonceDRBG
		g.init(c, d, h, nil)
		k := g.next(nil)
		if want := unhex(t, tc.k); !bytes.Equal(k, want) {
			t.Errorf("%s %q: k = %x, want %x", tc.curve, tc.msg, k, want)
		}
		key, err := NewPrivateKey(tc.curve, d)
		if err != nil {
			t.Fatal(err)
		}
		rs := make([]byte, 2*c.OrderByteLen())
		if err := key.signExtra(context.Background(), nil, new(signScratch), rs, h, nil, checkTable); err != nil {
			t.Fatal(err)
		}
		// r is x(k·G) mod n whatever the answer key says; check it too.
		kx, _, err := c.ScalarBaseMult(k)
		if err != nil {
			t.Fatal(err)
		}
		wantR := new(big.Int).Mod(new(big.Int).SetBytes(kx), c.Params().N)
		if new(big.Int).SetBytes(rs[:c.OrderByteLen()]).Cmp(wantR) != 0 {
			t.Errorf("%s %q: r = %x, want x(k·G) mod n = %x", tc.curve, tc.msg, rs[:c.OrderByteLen()], wantR)
		}
		if tc.r != "" && (!bytes.Equal(rs[:c.OrderByteLen()], unhex(t, tc.r)) || !bytes.Equal(rs[c.OrderByteLen():], unhex(t, tc.s))) {
			t.Errorf("%s %q: r‖s = %x, want %s‖%s", tc.curve, tc.msg, rs, tc.r, tc.s)
		}
	}
}

func TestHedgedNonces(t *testing.T) {
	c := curve(t, "P-256")
	key, err := NewPrivateKey("P-256", unhex(t, rfc6979[0].d))
	if err != nil {
		t.Fatal(err)
	}
	h := hashFor(c, []byte("sample"))
	a, err := key.Sign(context.Background(), nil, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := key.Sign(context.Background(), nil, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a[:32], b[:32]) {
		t.Error("two signatures of one message share r: nonce reused")
	}
	det := make([]byte, 64)
	if err := key.signExtra(context.Background(), nil, new(signScratch), det, h, nil, checkPlain); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, det) {
		t.Error("hedged signature equals the plain RFC 6979 one: randomness not mixed in")
	}
	// The same extra bytes give the same signature: the nonce is a
	// function of (d, h, extra) only.
	zero := bytes.NewReader(make([]byte, 64))
	z1, err := key.Sign(context.Background(), nil, h, zero)
	if err != nil {
		t.Fatal(err)
	}
	z2, err := key.Sign(context.Background(), nil, h, bytes.NewReader(make([]byte, 64)))
	if err != nil || !bytes.Equal(z1, z2) {
		t.Errorf("same extra data, different signatures (%v)", err)
	}
	if _, err := key.Sign(context.Background(), nil, h, bytes.NewReader(nil)); err == nil {
		t.Error("Sign with an empty random source succeeded")
	}
}

var nistCurves = map[string]elliptic.Curve{"P-256": elliptic.P256(), "P-384": elliptic.P384(), "P-521": elliptic.P521()}

// TestCrossStdlib: our signatures verify under crypto/ecdsa, and
// crypto/ecdsa's verify under ours, hashes shorter and longer than n.
func TestCrossStdlib(t *testing.T) {
	for name, sc := range nistCurves {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := curve(t, name)
			olen := c.OrderByteLen()
			for i, hlen := range []int{20, 32, 48, 64, 80} {
				std, err := stdecdsa.GenerateKey(sc, rand.Reader)
				if err != nil {
					t.Fatal(err)
				}
				d := std.D.FillBytes(make([]byte, olen))
				x, y := std.X.FillBytes(make([]byte, c.ByteLen())), std.Y.FillBytes(make([]byte, c.ByteLen()))
				h := make([]byte, hlen)
				rand.Read(h)
				rs, err := Sign(context.Background(), nil, name, d, h, nil)
				if err != nil {
					t.Fatal(err)
				}
				r, s := new(big.Int).SetBytes(rs[:olen]), new(big.Int).SetBytes(rs[olen:])
				if !stdecdsa.Verify(&std.PublicKey, h, r, s) {
					t.Fatalf("case %d: crypto/ecdsa rejects our signature", i)
				}
				sr, ss, err := stdecdsa.Sign(rand.Reader, std, h)
				if err != nil {
					t.Fatal(err)
				}
				theirs := append(sr.FillBytes(make([]byte, olen)), ss.FillBytes(make([]byte, olen))...)
				if err := Verify(name, x, y, h, theirs); err != nil {
					t.Fatalf("case %d: we reject crypto/ecdsa's signature: %v", i, err)
				}
				theirs[len(theirs)-1] ^= 1
				if err := Verify(name, x, y, h, theirs); err == nil {
					t.Fatalf("case %d: altered signature accepted", i)
				}
			}
		})
	}
}

// refVerify is ECDSA verification in plain math/big affine arithmetic
// (textbook formulas), the reference for secp256k1.
func refVerify(c *ec.Curve, qx, qy *big.Int, hash []byte, r, s *big.Int) bool {
	p := c.Params()
	type pt struct{ x, y *big.Int }
	mod := func(v *big.Int) *big.Int { return v.Mod(v, p.P) }
	add := func(a, b pt) pt {
		if a.x == nil {
			return b
		}
		if b.x == nil {
			return a
		}
		var l *big.Int
		if a.x.Cmp(b.x) == 0 {
			if mod(new(big.Int).Add(a.y, b.y)).Sign() == 0 {
				return pt{}
			}
			num := new(big.Int).Mul(a.x, a.x)
			num.Mul(num, big.NewInt(3)).Add(num, big.NewInt(p.A))
			l = mod(num.Mul(num, new(big.Int).ModInverse(new(big.Int).Lsh(a.y, 1), p.P)))
		} else {
			den := mod(new(big.Int).Sub(b.x, a.x))
			l = mod(new(big.Int).Mul(new(big.Int).Sub(b.y, a.y), den.ModInverse(den, p.P)))
		}
		x3 := mod(new(big.Int).Sub(new(big.Int).Sub(new(big.Int).Mul(l, l), a.x), b.x))
		y3 := mod(new(big.Int).Sub(new(big.Int).Mul(l, new(big.Int).Sub(a.x, x3)), a.y))
		return pt{x3, y3}
	}
	mul := func(k *big.Int, a pt) pt {
		acc := pt{}
		for i := k.BitLen() - 1; i >= 0; i-- {
			acc = add(acc, acc)
			if k.Bit(i) == 1 {
				acc = add(acc, a)
			}
		}
		return acc
	}
	if r.Sign() <= 0 || s.Sign() <= 0 || r.Cmp(p.N) >= 0 || s.Cmp(p.N) >= 0 {
		return false
	}
	e := new(big.Int).SetBytes(hash)
	if ex := 8*len(hash) - p.N.BitLen(); ex > 0 {
		e.Rsh(e, uint(ex))
	}
	w := new(big.Int).ModInverse(s, p.N)
	u1 := new(big.Int).Mod(new(big.Int).Mul(e, w), p.N)
	u2 := new(big.Int).Mod(new(big.Int).Mul(r, w), p.N)
	R := add(mul(u1, pt{p.Gx, p.Gy}), mul(u2, pt{qx, qy}))
	return R.x != nil && new(big.Int).Mod(R.x, p.N).Cmp(r) == 0
}

func TestSecp256k1Reference(t *testing.T) {
	c := curve(t, "secp256k1")
	rng := mrand.New(mrand.NewChaCha8([32]byte{'k', '1'}))
	for i := range 4 {
		seed := make([]byte, 40)
		for j := range seed {
			seed[j] = byte(rng.Uint32())
		}
		d, x, y, err := GenerateKey(context.Background(), nil, "secp256k1", bytes.NewReader(seed))
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256([]byte(fmt.Sprint("message ", i)))
		rs, err := Sign(context.Background(), nil, "secp256k1", d, h[:], nil)
		if err != nil {
			t.Fatal(err)
		}
		qx, qy := new(big.Int).SetBytes(x), new(big.Int).SetBytes(y)
		r, s := new(big.Int).SetBytes(rs[:32]), new(big.Int).SetBytes(rs[32:])
		if !refVerify(c, qx, qy, h[:], r, s) {
			t.Fatalf("reference rejects our secp256k1 signature %x", rs)
		}
		// Low-s and high-s forms both verify (ECDSA, not BIP 62).
		s2 := new(big.Int).Sub(c.Params().N, s)
		alt := append(bytes.Clone(rs[:32]), s2.FillBytes(make([]byte, 32))...)
		if err := Verify("secp256k1", x, y, h[:], alt); err != nil || !refVerify(c, qx, qy, h[:], r, s2) {
			t.Fatalf("n−s form: ours %v", err)
		}
		h[0] ^= 1
		if err := Verify("secp256k1", x, y, h[:], rs); err == nil || refVerify(c, qx, qy, h[:], r, s) {
			t.Fatal("signature of another hash accepted")
		}
	}
}

func TestVerifyRangeChecks(t *testing.T) {
	for _, c := range ec.Curves() {
		d, x, y, err := GenerateKey(context.Background(), nil, c.Name(), nil)
		if err != nil {
			t.Fatal(err)
		}
		h := make([]byte, 32)
		rs, err := Sign(context.Background(), nil, c.Name(), d, h, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify(c.Name(), x, y, h, rs); err != nil {
			t.Fatalf("%s: %v", c.Name(), err)
		}
		olen := c.OrderByteLen()
		n := c.Order()
		zero := make([]byte, olen)
		sPlusN := new(big.Int).Add(new(big.Int).SetBytes(rs[olen:]), c.Params().N)
		bad := map[string][]byte{
			"r=0":        append(bytes.Clone(zero), rs[olen:]...),
			"s=0":        append(bytes.Clone(rs[:olen]), zero...),
			"r=n":        append(bytes.Clone(n), rs[olen:]...),
			"s=n":        append(bytes.Clone(rs[:olen]), n...),
			"short":      rs[:len(rs)-1],
			"long":       append(bytes.Clone(rs), 0),
			"empty":      nil,
			"s+n (long)": append(bytes.Clone(rs[:olen]), sPlusN.Bytes()...),
		}
		for name, sig := range bad {
			if err := Verify(c.Name(), x, y, h, sig); !errors.Is(err, ErrInvalidSignature) {
				t.Errorf("%s %s: err = %v", c.Name(), name, err)
			}
		}
		badY := bytes.Clone(y)
		badY[0] ^= 0x40
		if err := Verify(c.Name(), x, badY, h, rs); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("%s: off-curve key: err = %v", c.Name(), err)
		}
	}
	if err := Verify("brainpoolP256r1", nil, nil, nil, nil); !errors.Is(err, ec.ErrUnknownCurve) {
		t.Errorf("brainpoolP256r1: err = %v", err)
	}
}

// fakeEngine is an ECEngine that multiplies in software and then applies
// a fault.
type fakeEngine struct {
	fault func(c *ec.Curve, k, x, y []byte) ([]byte, []byte, error)
}

func (f *fakeEngine) Info() engine.Info {
	return engine.Info{Name: "fake", Curves: ec.Names(), Cores: 1}
}
func (f *fakeEngine) NewModulus([]byte) (engine.Modulus, error) { return nil, engine.ErrUnsupported }
func (f *fakeEngine) Exp(context.Context, engine.Modulus, []byte, []byte) ([]byte, engine.Cost, error) {
	return nil, engine.Cost{}, engine.ErrUnsupported
}
func (f *fakeEngine) ExpVarTime(context.Context, engine.Modulus, []byte, []byte) ([]byte, engine.Cost, error) {
	return nil, engine.Cost{}, engine.ErrUnsupported
}
func (f *fakeEngine) SelfTest(context.Context) error { return nil }
func (f *fakeEngine) Close() error                   { return nil }
func (f *fakeEngine) ScalarBaseMult(_ context.Context, curve string, k []byte) ([]byte, []byte, engine.Cost, error) {
	c, err := ec.CurveByName(curve)
	if err != nil {
		return nil, nil, engine.Cost{}, err
	}
	x, y, err := c.ScalarBaseMult(k)
	if err != nil {
		return nil, nil, engine.Cost{}, err
	}
	x, y, err = f.fault(c, k, x, y)
	return x, y, engine.Cost{}, err
}
func (f *fakeEngine) ScalarMult(context.Context, string, []byte, []byte, []byte) ([]byte, []byte, engine.Cost, error) {
	return nil, nil, engine.Cost{}, engine.ErrUnsupported
}

func TestFaultyEngine(t *testing.T) {
	faults := map[string]func(c *ec.Curve, k, x, y []byte) ([]byte, []byte, error){
		"wrong point on the curve": func(c *ec.Curve, k, x, y []byte) ([]byte, []byte, error) {
			return c.ScalarMult([]byte{2}, x, y) // 2k·G
		},
		"off the curve": func(c *ec.Curve, k, x, y []byte) ([]byte, []byte, error) {
			x = bytes.Clone(x)
			x[len(x)-1] ^= 1
			return x, y, nil
		},
		"all zero": func(c *ec.Curve, k, x, y []byte) ([]byte, []byte, error) {
			return make([]byte, len(x)), make([]byte, len(y)), nil
		},
		"short": func(c *ec.Curve, k, x, y []byte) ([]byte, []byte, error) {
			return x[1:], y, nil
		},
		"negated point": func(c *ec.Curve, k, x, y []byte) ([]byte, []byte, error) {
			// −R has the same x: the signature still verifies, as it
			// should (r depends on x only).
			ny := new(big.Int).Sub(c.Params().P, new(big.Int).SetBytes(y))
			return x, ny.FillBytes(make([]byte, len(y))), nil
		},
	}
	for _, c := range ec.Curves() {
		d, x, y, err := GenerateKey(context.Background(), nil, c.Name(), nil)
		if err != nil {
			t.Fatal(err)
		}
		h := make([]byte, 32)
		for name, fault := range faults {
			rs, err := Sign(context.Background(), &fakeEngine{fault}, c.Name(), d, h, nil)
			if name == "negated point" {
				if err != nil || Verify(c.Name(), x, y, h, rs) != nil {
					t.Errorf("%s %s: %v", c.Name(), name, err)
				}
				continue
			}
			if !errors.Is(err, engine.ErrDevice) || rs != nil {
				t.Errorf("%s %s: rs = %x, err = %v; want ErrDevice and no signature", c.Name(), name, rs, err)
			}
			if _, _, err := PublicFromPrivate(context.Background(), &fakeEngine{fault}, c.Name(), d); !errors.Is(err, engine.ErrDevice) {
				t.Errorf("%s %s: PublicFromPrivate err = %v", c.Name(), name, err)
			}
		}
		failing := &fakeEngine{func(*ec.Curve, []byte, []byte, []byte) ([]byte, []byte, error) {
			return nil, nil, fmt.Errorf("link down: %w", engine.ErrDevice)
		}}
		if _, err := Sign(context.Background(), failing, c.Name(), d, h, nil); !errors.Is(err, engine.ErrDevice) {
			t.Errorf("%s: failing engine: err = %v", c.Name(), err)
		}
		honest := &fakeEngine{func(_ *ec.Curve, _, x, y []byte) ([]byte, []byte, error) { return x, y, nil }}
		rs, err := Sign(context.Background(), honest, c.Name(), d, h, nil)
		if err != nil || Verify(c.Name(), x, y, h, rs) != nil {
			t.Errorf("%s: honest engine: %v", c.Name(), err)
		}
		px, py, err := PublicFromPrivate(context.Background(), honest, c.Name(), d)
		if err != nil || !bytes.Equal(px, x) || !bytes.Equal(py, y) {
			t.Errorf("%s: PublicFromPrivate through the engine: %v", c.Name(), err)
		}
	}
}

func TestGenerateKey(t *testing.T) {
	for _, c := range ec.Curves() {
		// First draw: all ones (≥ n after masking for every curve here),
		// so one rejection, then a valid scalar.
		src := append(bytes.Repeat([]byte{0xff}, c.OrderByteLen()), bytes.Repeat([]byte{0x5a}, c.OrderByteLen())...)
		d, x, y, err := GenerateKey(context.Background(), nil, c.Name(), bytes.NewReader(src))
		if err != nil {
			t.Fatalf("%s: %v", c.Name(), err)
		}
		want := bytes.Repeat([]byte{0x5a}, c.OrderByteLen())
		want[0] &= 0xff >> (8*c.OrderByteLen() - c.OrderBits())
		if !bytes.Equal(d, want) {
			t.Errorf("%s: d = %x, want the second draw %x", c.Name(), d, want)
		}
		if !c.IsOnCurve(x, y) {
			t.Errorf("%s: public point not on the curve", c.Name())
		}
		if _, _, _, err := GenerateKey(context.Background(), nil, c.Name(), bytes.NewReader(src[:c.OrderByteLen()])); err == nil {
			t.Errorf("%s: GenerateKey with an exhausted source succeeded", c.Name())
		}
	}
	if _, err := NewPrivateKey("P-256", make([]byte, 32)); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("d = 0: err = %v", err)
	}
	if _, err := NewPrivateKey("P-256", curve(t, "P-256").Order()); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("d = n: err = %v", err)
	}
	k, err := NewPrivateKey("P-256", []byte{1}) // short d is left-padded
	if err != nil {
		t.Fatal(err)
	}
	if x, _ := k.Public(); !bytes.Equal(x, curve(t, "P-256").Params().Gx.FillBytes(make([]byte, 32))) {
		t.Errorf("1·G = %x", x)
	}
}

func TestSignContextCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Sign(ctx, nil, "P-256", []byte{7}, make([]byte, 32), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

// TestConcurrentSign signs with one key from several goroutines while its
// table is being built (run with -race).
func TestConcurrentSign(t *testing.T) {
	key, err := NewPrivateKey("secp256k1", []byte{9, 9, 9})
	if err != nil {
		t.Fatal(err)
	}
	x, y := key.Public()
	errs := make(chan error, 4)
	for i := range 4 {
		go func() {
			h := sha256.Sum256([]byte{byte(i)})
			rs, err := key.Sign(context.Background(), nil, h[:], nil)
			if err == nil {
				err = Verify("secp256k1", x, y, h[:], rs)
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestFaultyEnginePreparedKey: the check the token relies on (a prepared
// PrivateKey, the verification with s⁻¹ and the comb tables of G and Q)
// releases no signature made from a faulted k·G: a point of another
// scalar (one bit of k flipped, k+1, a random one), a point off the curve
// or at infinity. Many signatures per fault, on every curve, and with the
// honest engine every signature verifies.
func TestFaultyEnginePreparedKey(t *testing.T) {
	flip := func(bit int) func(c *ec.Curve, k, x, y []byte) ([]byte, []byte, error) {
		return func(c *ec.Curve, k, x, y []byte) ([]byte, []byte, error) {
			k2 := bytes.Clone(k)
			bit %= 8 * len(k2)
			k2[len(k2)-1-bit/8] ^= 1 << (bit % 8)
			return c.ScalarBaseMult(k2)
		}
	}
	faults := map[string]func(c *ec.Curve, k, x, y []byte) ([]byte, []byte, error){
		"bit 0 of k flipped":   flip(0),
		"bit 77 of k flipped":  flip(77),
		"bit 200 of k flipped": flip(200),
		"k+1": func(c *ec.Curve, k, x, y []byte) ([]byte, []byte, error) {
			k1 := new(big.Int).Add(new(big.Int).SetBytes(k), big.NewInt(1))
			return c.ScalarBaseMult(k1.Bytes())
		},
		"a random point": func(c *ec.Curve, k, x, y []byte) ([]byte, []byte, error) {
			r := make([]byte, c.OrderByteLen())
			if _, err := rand.Read(r); err != nil {
				return nil, nil, err
			}
			r[0] >>= 1
			return c.ScalarBaseMult(r)
		},
		"y flipped off the curve": func(c *ec.Curve, k, x, y []byte) ([]byte, []byte, error) {
			y = bytes.Clone(y)
			y[0] ^= 0x10
			return x, y, nil
		},
		"the generator": func(c *ec.Curve, k, x, y []byte) ([]byte, []byte, error) {
			return c.ScalarBaseMult([]byte{1})
		},
	}
	for _, c := range ec.Curves() {
		key := newTestKey(t, c.Name())
		x, y := key.Public()
		h := sha256.Sum256([]byte(c.Name()))
		for name, fault := range faults {
			for range 8 {
				rs, err := key.Sign(context.Background(), &fakeEngine{fault}, h[:], nil)
				if !errors.Is(err, engine.ErrDevice) || rs != nil {
					t.Fatalf("%s %s: rs = %x, err = %v; want ErrDevice and no signature", c.Name(), name, rs, err)
				}
			}
		}
		honest := &fakeEngine{func(_ *ec.Curve, _, x, y []byte) ([]byte, []byte, error) { return x, y, nil }}
		for range 8 {
			rs, err := key.Sign(context.Background(), honest, h[:], nil)
			if err != nil || Verify(c.Name(), x, y, h[:], rs) != nil {
				t.Fatalf("%s: honest engine: %v", c.Name(), err)
			}
		}
	}
}
