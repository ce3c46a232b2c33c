package ec

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/big"
)

// rfc6979P256 is the key pair of RFC 6979 appendix A.2.5 (P-256).
var rfc6979P256 = [3]string{
	"c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721",
	"60fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6",
	"7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299",
}

// SelfTest runs known-answer tests of the scalar multiplications on every
// curve: (n−1)·G = −G, 2·G by ScalarBaseMult and by ScalarMult, the
// RFC 6979 A.2.5 key pair on P-256, and a signature verified. An engine's
// SelfTest can call it; it takes a few milliseconds (the generator tables
// are built on the way).
func SelfTest() error {
	for _, c := range all() {
		p := c.params
		gx, gy := p.Gx.FillBytes(make([]byte, c.size)), p.Gy.FillBytes(make([]byte, c.size))
		negGy := new(big.Int).Sub(p.P, p.Gy).FillBytes(make([]byte, c.size))
		nm1 := new(big.Int).Sub(p.N, big.NewInt(1)).FillBytes(make([]byte, c.nsize))
		x, y, err := c.ScalarBaseMult(nm1)
		if err != nil || !bytes.Equal(x, gx) || !bytes.Equal(y, negGy) {
			return fmt.Errorf("ec: self-test %s: (n-1)·G is not -G (%v)", c.name, err)
		}
		x, y, err = c.ScalarMult(nm1, gx, gy)
		if err != nil || !bytes.Equal(x, gx) || !bytes.Equal(y, negGy) {
			return fmt.Errorf("ec: self-test %s: (n-1)·G by ScalarMult is not -G (%v)", c.name, err)
		}
		x2, y2, err1 := c.ScalarBaseMult([]byte{2})
		x3, y3, err2 := c.ScalarMult([]byte{2}, gx, gy)
		if err1 != nil || err2 != nil || !bytes.Equal(x2, x3) || !bytes.Equal(y2, y3) || !c.IsOnCurve(x2, y2) {
			return fmt.Errorf("ec: self-test %s: 2·G differs between ScalarBaseMult and ScalarMult", c.name)
		}
		// A signature with k = 2, d = n − 1 must verify, and not for another hash.
		hash := []byte("modexp-token ec self-test hash")
		rs := make([]byte, 2*c.nsize)
		k := make([]byte, c.nsize)
		k[len(k)-1] = 2
		if err := c.ECDSASignature(rs, k, nm1, hash, x2); err != nil {
			return fmt.Errorf("ec: self-test %s: sign: %w", c.name, err)
		}
		if err := c.ECDSAVerifyVarTime(gx, negGy, hash, rs); err != nil {
			return fmt.Errorf("ec: self-test %s: verify: %w", c.name, err)
		}
		if err := c.ECDSAVerifyVarTime(gx, negGy, hash[1:], rs); err == nil {
			return fmt.Errorf("ec: self-test %s: a signature verifies for another hash", c.name)
		}
	}
	c, _ := CurveByName("P-256")
	var kv [3][]byte
	for i, s := range rfc6979P256 {
		kv[i], _ = hex.DecodeString(s)
	}
	x, y, err := c.ScalarBaseMult(kv[0])
	if err != nil || !bytes.Equal(x, kv[1]) || !bytes.Equal(y, kv[2]) {
		return fmt.Errorf("ec: self-test P-256: RFC 6979 public key mismatch (%v)", err)
	}
	return nil
}
