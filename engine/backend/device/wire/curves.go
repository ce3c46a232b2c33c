package wire

import (
	"math/big"
	"strings"
)

// Curve is what both ends of the protocol know about a named curve: enough
// to size and range-check coordinates. The arithmetic lives in the engines.
type Curve struct {
	Name       string
	FieldBytes int      // coordinate length on the wire
	P          *big.Int // field prime
	A, B       *big.Int // y² = x³ + a·x + b
}

func hexInt(s string) *big.Int {
	v, ok := new(big.Int).SetString(strings.ReplaceAll(s, " ", ""), 16)
	if !ok {
		panic("wire: bad curve constant " + s)
	}
	return v
}

var curves = map[string]*Curve{}

func init() {
	add := func(name string, bytes int, p, a, b string) {
		curves[name] = &Curve{Name: name, FieldBytes: bytes, P: hexInt(p), A: hexInt(a), B: hexInt(b)}
	}
	add("P-224", 28,
		"ffffffffffffffffffffffffffffffff000000000000000000000001",
		"fffffffffffffffffffffffffffffffefffffffffffffffffffffffe",
		"b4050a850c04b3abf54132565044b0b7d7bfd8ba270b39432355ffb4")
	add("P-256", 32,
		"ffffffff00000001000000000000000000000000ffffffffffffffffffffffff",
		"ffffffff00000001000000000000000000000000fffffffffffffffffffffffc",
		"5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b")
	add("P-384", 48,
		"fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffeffffffff0000000000000000ffffffff",
		"fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffeffffffff0000000000000000fffffffc",
		"b3312fa7e23ee7e4988e056be3f82d19181d9c6efe8141120314088f5013875ac656398d8a2ed19d2a85c8edd3ec2aef")
	add("P-521", 66,
		"01ff"+strings.Repeat("ff", 64),
		"01ff"+strings.Repeat("ff", 63)+"fc",
		"0051 953eb9618e1c9a1f929a21a0b68540eea2da725b99b315f3b8b489918ef109e156193951ec7e937b1652c0bd3bb1bf073573df883d2c34f1ef451fd46b503f00")
	add("secp256k1", 32,
		"fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f",
		"0", "7")
}

// LookupCurve returns the named curve, or nil.
func LookupCurve(name string) *Curve { return curves[name] }

// IsOnCurve reports whether (x, y) is an affine point of c with both
// coordinates below p. Variable time: use it on public points only.
func (c *Curve) IsOnCurve(x, y *big.Int) bool {
	if x.Sign() < 0 || y.Sign() < 0 || x.Cmp(c.P) >= 0 || y.Cmp(c.P) >= 0 {
		return false
	}
	lhs := new(big.Int).Mul(y, y)
	lhs.Mod(lhs, c.P)
	rhs := new(big.Int).Mul(x, x)
	rhs.Mul(rhs, x)
	ax := new(big.Int).Mul(c.A, x)
	rhs.Add(rhs, ax)
	rhs.Add(rhs, c.B)
	rhs.Mod(rhs, c.P)
	return lhs.Cmp(rhs) == 0
}
