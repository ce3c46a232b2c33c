//go:build ecoptrace

package ec

import (
	"bytes"
	"math/big"
	"testing"
)

// TestConstantTimeTrace checks, with the ecoptrace build tag, that the
// constant-time routines run the same sequence of field operations
// (multiplications, additions, subtractions, selections) whatever the
// secret: scalars 1, 2, n−1, n−2, all-ones patterns and random ones. Run:
//
//	go test -tags ecoptrace -run ConstantTimeTrace ./engine/arith/ec
func TestConstantTimeTrace(t *testing.T) {
	for _, c := range Curves() {
		c.Precompute()
		p := c.Params()
		r := testRand(t)
		scalars := testScalars(c, r, 4)
		var canon [][]byte
		for _, k := range scalars {
			if len(k) == c.OrderByteLen() && new(big.Int).SetBytes(k).Cmp(p.N) < 0 {
				canon = append(canon, k)
			}
		}
		gx, gy := c.pad(p.Gx), c.pad(p.Gy)
		d := randInt(r, p.N).FillBytes(make([]byte, c.OrderByteLen()))
		hash := bytes.Repeat([]byte{0xa5}, 32)
		rx := c.pad(p.Gx)
		ops := map[string]func(k []byte){
			"ScalarBaseMult": func(k []byte) { c.ScalarBaseMult(k) },
			"ScalarMult":     func(k []byte) { c.ScalarMult(k, gx, gy) },
			"ECDSASignature(k)": func(k []byte) {
				c.ECDSASignature(make([]byte, 2*c.OrderByteLen()), k, d, hash, rx)
			},
			"ECDSASignature(d)": func(k []byte) {
				c.ECDSASignature(make([]byte, 2*c.OrderByteLen()), d, k, hash, rx)
			},
			"ECDSASignatureInverse(k)": func(k []byte) {
				c.ECDSASignatureInverse(make([]byte, 2*c.OrderByteLen()), make([]byte, c.OrderByteLen()), k, d, hash, rx)
			},
			"ECDSASignatureInverse(d)": func(k []byte) {
				c.ECDSASignatureInverse(make([]byte, 2*c.OrderByteLen()), make([]byte, c.OrderByteLen()), d, k, hash, rx)
			},
			"IsValidScalar": func(k []byte) { c.IsValidScalar(k) },
		}
		for name, op := range ops {
			var want, wantN uint64
			for i, k := range canon {
				resetTrace()
				op(k)
				if i == 0 {
					want, wantN = opTrace, opCount
					if wantN == 0 && name != "IsValidScalar" {
						t.Fatalf("%s %s: no operations traced", c.Name(), name)
					}
					continue
				}
				if opTrace != want || opCount != wantN {
					t.Errorf("%s %s: k=%x runs %d ops (trace %x), k=%x ran %d (%x)",
						c.Name(), name, k, opCount, opTrace, canon[0], wantN, want)
				}
			}
		}
	}
}
