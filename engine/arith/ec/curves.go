package ec

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
)

// Sentinel errors, wrapped with context.
var (
	// ErrUnknownCurve: the name or OID names no curve this package has.
	ErrUnknownCurve = errors.New("ec: unknown curve")
	// ErrInvalidPoint: a point is malformed, has a coordinate ≥ p, is not
	// on the curve, or is the point at infinity.
	ErrInvalidPoint = errors.New("ec: invalid point")
	// ErrInvalidScalar: a scalar is empty, too long, or (where a nonzero
	// scalar is needed) a multiple of the order.
	ErrInvalidScalar = errors.New("ec: invalid scalar")
	// ErrInvalidSignature: an ECDSA signature does not verify.
	ErrInvalidSignature = errors.New("ec: invalid signature")
)

// impl is what a curve does, whatever its limb type.
type impl interface {
	scalarBaseMult(dx, dy, k []byte) (x, y []byte, err error)
	scalarMultBytes(k, px, py []byte) (x, y []byte, err error)
	doubleScalarMultVarTime(u1, u2, px, py []byte) (x, y []byte, err error)
	isOnCurveBytes(x, y []byte) bool
	validScalar(k []byte) bool
	decompress(x []byte, odd bool) ([]byte, error)
	ecdsaSignature(dst, sinv, k, d, hash, rx []byte) error
	ecdsaVerify(px, py, hash, rs []byte) error
	newPublicKey(px, py []byte) (verifier, error)
	precompute()
}

// verifier is a curve's validated public key.
type verifier interface {
	precompute()
	verify(hash, rs, sinv []byte, fast bool) error
}

// Curve is a named prime-order curve: P-192, P-224, P-256, P-384, P-521 or
// secp256k1.
// Curves are immutable and safe for concurrent use.
type Curve struct {
	name    string
	aliases []string
	oid     []byte // DER of the named-curve OBJECT IDENTIFIER
	params  Params
	impl    impl
	size    int // field byte length
	nsize   int // order byte length
	nbits   int
	order   []byte // n, big-endian, nsize bytes
}

// Params are a curve's domain parameters (y² = x³ + a·x + b over GF(P),
// generator (Gx, Gy) of prime order N), for tests and reference code.
type Params struct {
	P, N, B, Gx, Gy *big.Int
	A               int64 // −3 or 0
}

// curveDef is a curve as written in its standard.
type curveDef struct {
	name            string
	aliases         []string
	oid             []byte
	p, n, b, gx, gy string
	a               int64
	limbs           int
}

var defs = []curveDef{
	{
		// P-192 (FIPS 186-4 D.1.2.1), which SoftHSMv2 and OpenSSL still
		// offer and some client suites use, on the 256-bit curves' four
		// limbs like P-224.
		name: "P-192", aliases: []string{"secp192r1", "prime192v1"},
		oid: []byte{0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x01}, // 1.2.840.10045.3.1.1
		p:   "fffffffffffffffffffffffffffffffeffffffffffffffff",
		n:   "ffffffffffffffffffffffff99def836146bc9b1b4d22831",
		b:   "64210519e59c80e70fa7e9ab72243049feb8deecc146b9b1",
		gx:  "188da80eb03090f67cbf20eb43a18800f4ff0afd82ff1012",
		gy:  "07192b95ffc8da78631011ed6b24cdd573f977a11e794811",
		a:   -3, limbs: 4,
	},
	{
		// P-224 fits the 256-bit curves' four limbs: the generic Montgomery
		// code serves any odd modulus below 2^256 (as for secp256k1).
		name: "P-224", aliases: []string{"secp224r1"},
		oid: []byte{0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x21}, // 1.3.132.0.33
		p:   "ffffffffffffffffffffffffffffffff000000000000000000000001",
		n:   "ffffffffffffffffffffffffffff16a2e0b8f03e13dd29455c5c2a3d",
		b:   "b4050a850c04b3abf54132565044b0b7d7bfd8ba270b39432355ffb4",
		gx:  "b70e0cbd6bb4bf7f321390b94a03c1d356c21122343280d6115c1d21",
		gy:  "bd376388b5f723fb4c22dfe6cd4375a05a07476444d5819985007e34",
		a:   -3, limbs: 4,
	},
	{
		name: "P-256", aliases: []string{"secp256r1", "prime256v1"},
		oid: []byte{0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07}, // 1.2.840.10045.3.1.7
		p:   "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff",
		n:   "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551",
		b:   "5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b",
		gx:  "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296",
		gy:  "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5",
		a:   -3, limbs: 4,
	},
	{
		name: "P-384", aliases: []string{"secp384r1"},
		oid: []byte{0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22}, // 1.3.132.0.34
		p:   "fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffeffffffff0000000000000000ffffffff",
		n:   "ffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973",
		b:   "b3312fa7e23ee7e4988e056be3f82d19181d9c6efe8141120314088f5013875ac656398d8a2ed19d2a85c8edd3ec2aef",
		gx:  "aa87ca22be8b05378eb1c71ef320ad746e1d3b628ba79b9859f741e082542a385502f25dbf55296c3a545e3872760ab7",
		gy:  "3617de4a96262c6f5d9e98bf9292dc29f8f41dbd289a147ce9da3113b5f0b8c00a60b1ce1d7e819d7a431d7c90ea0e5f",
		a:   -3, limbs: 6,
	},
	{
		name: "P-521", aliases: []string{"secp521r1"},
		oid: []byte{0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23}, // 1.3.132.0.35
		p:   "1ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
		n:   "1fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffa51868783bf2f966b7fcc0148f709a5d03bb5c9b8899c47aebb6fb71e91386409",
		b:   "51953eb9618e1c9a1f929a21a0b68540eea2da725b99b315f3b8b489918ef109e156193951ec7e937b1652c0bd3bb1bf073573df883d2c34f1ef451fd46b503f00",
		gx:  "c6858e06b70404e9cd9e3ecb662395b4429c648139053fb521f828af606b4d3dbaa14b5e77efe75928fe1dc127a2ffa8de3348b3c1856a429bf97e7e31c2e5bd66",
		gy:  "11839296a789a3bc0045c8a5fb42c7d1bd998f54449579b446817afbd17273e662c97ee72995ef42640c550b9013fad0761353c7086a272c24088be94769fd16650",
		a:   -3, limbs: 9,
	},
	{
		name: "secp256k1",
		oid:  []byte{0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x0a}, // 1.3.132.0.10
		p:    "fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f",
		n:    "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141",
		b:    "7",
		gx:   "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798",
		gy:   "483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8",
		a:    0, limbs: 4,
	},
}

var (
	curvesOnce sync.Once
	curves     []*Curve
)

func hexInt(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 16)
	if !ok {
		panic("ec: bad constant " + s)
	}
	return v
}

func all() []*Curve {
	curvesOnce.Do(func() {
		for _, d := range defs {
			p := Params{P: hexInt(d.p), N: hexInt(d.n), B: hexInt(d.b), Gx: hexInt(d.gx), Gy: hexInt(d.gy), A: d.a}
			c := &Curve{name: d.name, aliases: d.aliases, oid: d.oid, params: p,
				size: (p.P.BitLen() + 7) / 8, nsize: (p.N.BitLen() + 7) / 8, nbits: p.N.BitLen()}
			c.order = p.N.FillBytes(make([]byte, c.nsize))
			switch d.limbs {
			case 4:
				c.impl = newCurve[[4]uint64](p.P, p.N, p.B, p.Gx, p.Gy, d.a == -3)
			case 6:
				c.impl = newCurve[[6]uint64](p.P, p.N, p.B, p.Gx, p.Gy, d.a == -3)
			case 9:
				c.impl = newCurve[[9]uint64](p.P, p.N, p.B, p.Gx, p.Gy, d.a == -3)
			}
			curves = append(curves, c)
		}
	})
	return curves
}

// Curves returns every supported curve: P-192, P-224, P-256, P-384, P-521,
// secp256k1.
func Curves() []*Curve { return append([]*Curve(nil), all()...) }

// Names returns the canonical names of the supported curves, the form
// engine.Info.Curves uses.
func Names() []string {
	var names []string
	for _, c := range all() {
		names = append(names, c.name)
	}
	return names
}

// CurveByName returns the curve called name: "P-192", "P-224", "P-256", "P-384",
// "P-521", "secp256k1", or an alias ("secp192r1", "prime192v1", "secp224r1", "secp256r1",
// "prime256v1", "secp384r1", "secp521r1"), case-insensitively.
func CurveByName(name string) (*Curve, error) {
	for _, c := range all() {
		if strings.EqualFold(name, c.name) {
			return c, nil
		}
		for _, a := range c.aliases {
			if strings.EqualFold(name, a) {
				return c, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownCurve, name)
}

// CurveByOID returns the curve whose named-curve OBJECT IDENTIFIER has the
// DER encoding der (tag 0x06 included): the form of CKA_EC_PARAMS.
func CurveByOID(der []byte) (*Curve, error) {
	for _, c := range all() {
		if bytes.Equal(der, c.oid) {
			return c, nil
		}
	}
	return nil, fmt.Errorf("%w: OID %x", ErrUnknownCurve, der)
}

// Name is the curve's canonical name ("P-192", ..., "secp256k1").
func (c *Curve) Name() string { return c.name }

// OID returns the DER encoding of the curve's named-curve OBJECT IDENTIFIER
// (for CKA_EC_PARAMS). The caller may modify the result.
func (c *Curve) OID() []byte { return bytes.Clone(c.oid) }

// ByteLen is the byte length of a field element (a coordinate).
func (c *Curve) ByteLen() int { return c.size }

// OrderByteLen is the byte length of the order n (of a scalar, and of each
// half of an r‖s signature).
func (c *Curve) OrderByteLen() int { return c.nsize }

// OrderBits is the bit length of the order n.
func (c *Curve) OrderBits() int { return c.nbits }

// Order returns n, big-endian, OrderByteLen bytes.
func (c *Curve) Order() []byte { return c.AppendOrder(nil) }

// AppendOrder appends n (OrderByteLen bytes, big-endian) to dst.
func (c *Curve) AppendOrder(dst []byte) []byte { return append(dst, c.order...) }

// Params returns a copy of the curve's domain parameters.
func (c *Curve) Params() Params {
	p := c.params
	return Params{P: new(big.Int).Set(p.P), N: new(big.Int).Set(p.N), B: new(big.Int).Set(p.B),
		Gx: new(big.Int).Set(p.Gx), Gy: new(big.Int).Set(p.Gy), A: p.A}
}

// Precompute builds the generator tables now rather than on the first
// ScalarBaseMult or verification (a few milliseconds; public data).
func (c *Curve) Precompute() { c.impl.precompute() }

// ScalarBaseMult returns k·G as affine coordinates (ByteLen bytes each).
// k is secret, big-endian, reduced mod n, of 1 to twice the limb bytes
// (64 for the 256-bit curves, 96 for P-384, 144 for P-521); the time taken
// depends only on its length. A k that is a multiple of n is
// ErrInvalidScalar.
func (c *Curve) ScalarBaseMult(k []byte) (x, y []byte, err error) {
	return c.impl.scalarBaseMult(nil, nil, k)
}

// AppendScalarBaseMult is ScalarBaseMult writing the coordinates after
// the ends of dx and dy (ByteLen bytes each), which it allocates nothing
// for when they have the room. It returns the coordinates alone, not
// dx and dy with them.
func (c *Curve) AppendScalarBaseMult(dx, dy, k []byte) (x, y []byte, err error) {
	return c.impl.scalarBaseMult(dx, dy, k)
}

// ScalarMult returns k·(px, py). k is secret and handled as in
// ScalarBaseMult; the point must be valid (ErrInvalidPoint otherwise).
func (c *Curve) ScalarMult(k, px, py []byte) (x, y []byte, err error) {
	return c.impl.scalarMultBytes(k, px, py)
}

// DoubleScalarMultVarTime returns u1·G + u2·(px, py). Its time depends on
// the scalars: use it with public values only (signature verification).
// A result at infinity is ErrInvalidScalar.
func (c *Curve) DoubleScalarMultVarTime(u1, u2, px, py []byte) (x, y []byte, err error) {
	return c.impl.doubleScalarMultVarTime(u1, u2, px, py)
}

// IsOnCurve reports whether (x, y), each exactly ByteLen bytes and < p, is
// a point of the curve (which excludes the point at infinity).
func (c *Curve) IsOnCurve(x, y []byte) bool { return c.impl.isOnCurveBytes(x, y) }

// IsValidScalar reports whether k is OrderByteLen bytes and 0 < k < n,
// in time independent of k's value.
func (c *Curve) IsValidScalar(k []byte) bool { return c.impl.validScalar(k) }

// ECDSASignature completes an ECDSA signature: given the nonce k, the x
// coordinate rx of k·G, the private scalar d (k and d OrderByteLen bytes,
// in [1, n−1]) and the message hash, it writes r‖s into dst (2·OrderByteLen
// bytes) with r = rx mod n and s = k⁻¹·(e + r·d) mod n, e the hash's
// leftmost OrderBits bits. It runs in time independent of k and d. r = 0
// or s = 0 is ErrInvalidScalar (draw another nonce). It does not check
// that rx belongs to k: callers verify the signature.
func (c *Curve) ECDSASignature(dst, k, d, hash, rx []byte) error {
	return c.impl.ecdsaSignature(dst, nil, k, d, hash, rx)
}

// ECDSASignatureInverse is ECDSASignature that also writes s⁻¹ mod n into
// sinv (OrderByteLen bytes; public, as s is), at no extra inversion, for
// PublicKey.ECDSAVerifyInverseVarTime. Time independent of k and d.
func (c *Curve) ECDSASignatureInverse(dst, sinv, k, d, hash, rx []byte) error {
	if sinv == nil {
		return fmt.Errorf("ec: no inverse buffer")
	}
	return c.impl.ecdsaSignature(dst, sinv, k, d, hash, rx)
}

// ECDSAVerifyVarTime checks the r‖s signature (2·OrderByteLen bytes) of
// hash under the public point (px, py), returning nil or an error wrapping
// ErrInvalidSignature (or ErrInvalidPoint for a bad key). Variable time:
// every input is public.
func (c *Curve) ECDSAVerifyVarTime(px, py, hash, rs []byte) error {
	return c.impl.ecdsaVerify(px, py, hash, rs)
}

// PublicKey is a validated public point prepared for verifying many
// signatures: after Precompute (or the first verification) it keeps a
// signed comb table of the point (public data: 86 KiB for the 256-bit
// curves, 195 KiB for P-384, 236 KiB for P-521) and the curve keeps a
// wider one of G (264 KiB for the 256-bit curves, 588 KiB for P-384,
// 1.2 MiB for P-521, once per process), with which a verification needs no
// point doubling. Safe for concurrent use.
type PublicKey struct {
	curve *Curve
	x, y  []byte
	v     verifier
}

// NewPublicKey checks the point (px, py) (coordinates ByteLen bytes, < p,
// on the curve) and returns it as a PublicKey. The table is not built yet.
func (c *Curve) NewPublicKey(px, py []byte) (*PublicKey, error) {
	v, err := c.impl.newPublicKey(px, py)
	if err != nil {
		return nil, err
	}
	return &PublicKey{curve: c, x: bytes.Clone(px), y: bytes.Clone(py), v: v}, nil
}

// Curve is the key's curve.
func (k *PublicKey) Curve() *Curve { return k.curve }

// Coordinates returns the point's affine coordinates (copies).
func (k *PublicKey) Coordinates() (x, y []byte) { return bytes.Clone(k.x), bytes.Clone(k.y) }

// Precompute builds the key's comb table now (once).
func (k *PublicKey) Precompute() { k.v.precompute() }

// ECDSAVerifyVarTime checks the r‖s signature of hash, as
// Curve.ECDSAVerifyVarTime does, with the key's comb table (built on
// first use). Variable time: every input is public.
func (k *PublicKey) ECDSAVerifyVarTime(hash, rs []byte) error {
	return k.v.verify(hash, rs, nil, true)
}

// ECDSAVerifyInverseVarTime is ECDSAVerifyVarTime given s⁻¹ mod n as well
// (OrderByteLen bytes, from ECDSASignatureInverse): it checks
// s·s⁻¹ ≡ 1 (mod n) and then verifies as ECDSAVerifyVarTime does, without
// inverting s. A wrong s⁻¹ is ErrInvalidSignature, so the result is that of
// a verification of r‖s alone. Variable time: every input is public.
func (k *PublicKey) ECDSAVerifyInverseVarTime(hash, rs, sinv []byte) error {
	if sinv == nil {
		return fmt.Errorf("%w: no s⁻¹", ErrInvalidSignature)
	}
	return k.v.verify(hash, rs, sinv, true)
}
