package ecdsa

import (
	"bytes"
	"context"
	stdecdsa "crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"errors"
	"math/big"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
	"github.com/modexp-token/modexp-token/engine/enginetest"
)

// TestECFaultModes: with every fault of enginetest.ECFault on k·G, on
// every curve and with either check before release, a prepared key
// releases no signature (an error wrapping engine.ErrDevice), except the
// negated point under the full verification, whose signature is valid
// (r depends on x only); the relation check of P-256 refuses it too, since
// −R is not the engine's k·G. Each released signature verifies with Go's
// crypto/ecdsa.
func TestECFaultModes(t *testing.T) {
	for _, c := range ec.Curves() {
		key := newTestKey(t, c.Name())
		x, y := key.Public()
		h := sha256.Sum256([]byte(c.Name()))
		for _, check := range []Check{CheckDefault, CheckVerify} {
			for _, mode := range append([]string{""}, enginetest.ECFaultModes...) {
				eng := &enginetest.ECFault{ECEngine: soft.New(), Mode: mode}
				relation := check == CheckDefault && c.Name() == "P-256"
				valid := mode == "" || (mode == "negate" && !relation)
				for range 4 {
					rs, err := key.SignToCheck(context.Background(), eng, nil, h[:], nil, check)
					if !valid {
						if !errors.Is(err, engine.ErrDevice) || rs != nil {
							t.Fatalf("%s check %d fault %q: rs = %x, err = %v; want ErrDevice and no signature", c.Name(), check, mode, rs, err)
						}
						continue
					}
					if err != nil {
						t.Fatalf("%s check %d fault %q: %v", c.Name(), check, mode, err)
					}
					if err := Verify(c.Name(), x, y, h[:], rs); err != nil {
						t.Fatalf("%s check %d fault %q: released signature does not verify: %v", c.Name(), check, mode, err)
					}
				}
			}
		}
	}
}

// relCase is one P-256 signature with everything the relation check sees.
type relCase struct {
	k, d, dn, hash, rs, rx, ry []byte
}

// newRelCase signs hash with d and the nonce k (engine/arith/ec's
// arithmetic), as signExtra does.
func newRelCase(t *testing.T, d, k, hash []byte) relCase {
	t.Helper()
	c := curve(t, "P-256")
	rx, ry, err := c.ScalarBaseMult(k)
	if err != nil {
		t.Fatal(err)
	}
	rs := make([]byte, 64)
	if err := c.ECDSASignature(rs, k, d, hash, rx); err != nil {
		t.Fatal(err)
	}
	dn, err := negD(d)
	if err != nil {
		t.Fatal(err)
	}
	return relCase{k: k, d: d, dn: dn, hash: hash, rs: rs, rx: rx, ry: ry}
}

func (rc relCase) clone() relCase {
	return relCase{bytes.Clone(rc.k), bytes.Clone(rc.d), bytes.Clone(rc.dn), bytes.Clone(rc.hash),
		bytes.Clone(rc.rs), bytes.Clone(rc.rx), bytes.Clone(rc.ry)}
}

func (rc relCase) check() error {
	return checkRelation(newRelScratch(), rc.k, rc.d, rc.dn, rc.hash, rc.rs, rc.rx, rc.ry)
}

// addN adds v to the big-endian number b mod n, in place.
func addN(b []byte, v int64) {
	n := elliptic.P256().Params().N
	x := new(big.Int).Add(new(big.Int).SetBytes(b), big.NewInt(v))
	x.Mod(x, n).FillBytes(b)
}

// TestRelationCheck: the relation check passes a right signature and
// refuses each fault of the scalar arithmetic and of the inputs it binds
// together: s, r or the nonce off by one or by a flipped bit, r not the
// x of R, the private scalar changed since the key was made, a wrong hash,
// R another point (on the curve or off it, −R) — each one alone.
func TestRelationCheck(t *testing.T) {
	d := sha256.Sum256([]byte("d"))
	k := sha256.Sum256([]byte("k"))
	h := sha256.Sum256([]byte("message"))
	good := newRelCase(t, d[:], k[:], h[:])
	if err := good.check(); err != nil {
		t.Fatalf("a right signature: %v", err)
	}
	c := curve(t, "P-256")
	faults := []struct {
		name string
		f    func(rc *relCase)
	}{
		{"s+1", func(rc *relCase) { addN(rc.rs[32:], 1) }},
		{"s bit 100", func(rc *relCase) { rc.rs[32+19] ^= 0x10 }},
		{"s = 0", func(rc *relCase) { clear(rc.rs[32:]) }},
		{"s = n", func(rc *relCase) { copy(rc.rs[32:], c.Order()) }},
		{"r+1", func(rc *relCase) { addN(rc.rs[:32], 1) }},
		{"r = 0", func(rc *relCase) { clear(rc.rs[:32]) }},
		{"r and s of another nonce", func(rc *relCase) {
			k2 := bytes.Clone(rc.k)
			addN(k2, 1)
			o := newRelCase(t, rc.d, k2, rc.hash)
			copy(rc.rs, o.rs)
		}},
		{"nonce bit 0", func(rc *relCase) { rc.k[31] ^= 1 }},
		{"private scalar bit 7", func(rc *relCase) { rc.d[31] ^= 0x80 }},
		{"private scalar's copy", func(rc *relCase) { rc.dn[0] ^= 1 }},
		{"hash bit", func(rc *relCase) { rc.hash[5] ^= 4 }},
		{"R = (k+1)·G", func(rc *relCase) {
			k2 := bytes.Clone(rc.k)
			addN(k2, 1)
			rc.rx, rc.ry, _ = c.ScalarBaseMult(k2)
		}},
		{"R off the curve", func(rc *relCase) { rc.ry[31] ^= 1 }},
		{"−R", func(rc *relCase) {
			ny := new(big.Int).Sub(elliptic.P256().Params().P, new(big.Int).SetBytes(rc.ry))
			ny.FillBytes(rc.ry)
		}},
		{"R short", func(rc *relCase) { rc.rx = rc.rx[1:] }},
	}
	for _, f := range faults {
		rc := good.clone()
		f.f(&rc)
		if err := rc.check(); !errors.Is(err, errRelation) {
			t.Errorf("%s: err = %v, want the check's refusal", f.name, err)
		}
	}
}

// TestRelationCheckAgreesWithVerify: on random keys, nonces and hashes,
// signatures made by engine/arith/ec pass the relation check and verify
// with Go's crypto/ecdsa; with s changed, both refuse.
func TestRelationCheckAgreesWithVerify(t *testing.T) {
	rnd := sha256.Sum256([]byte("seed"))
	for i := range 64 {
		d := sha256.Sum256(append(rnd[:], byte(i), 'd'))
		k := sha256.Sum256(append(rnd[:], byte(i), 'k'))
		h := sha256.Sum256(append(rnd[:], byte(i), 'h'))
		d[0] &= 0x7f // below n
		k[0] &= 0x7f
		rc := newRelCase(t, d[:], k[:], h[:])
		pub := stdPub(t, d[:])
		r, s := new(big.Int).SetBytes(rc.rs[:32]), new(big.Int).SetBytes(rc.rs[32:])
		if err := rc.check(); err != nil || !stdecdsa.Verify(pub, h[:], r, s) {
			t.Fatalf("#%d: relation %v, crypto/ecdsa %v", i, err, stdecdsa.Verify(pub, h[:], r, s))
		}
		rc.rs[63] ^= byte(1 + i%255)
		s = new(big.Int).SetBytes(rc.rs[32:])
		if err := rc.check(); err == nil || stdecdsa.Verify(pub, h[:], r, s) {
			t.Fatalf("#%d: a changed s: relation %v, crypto/ecdsa %v", i, err, stdecdsa.Verify(pub, h[:], r, s))
		}
	}
}

func stdPub(t *testing.T, d []byte) *stdecdsa.PublicKey {
	t.Helper()
	x, y := elliptic.P256().ScalarBaseMult(d)
	return &stdecdsa.PublicKey{Curve: elliptic.P256(), X: x, Y: y}
}
