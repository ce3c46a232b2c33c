package ecdsa

import (
	"errors"
	"fmt"

	"filippo.io/bigmod"
	"filippo.io/nistec"

	"github.com/modexp-token/modexp-token/engine/arith/ec"
)

// Check is how a signature is checked before its release.
type Check uint8

const (
	// CheckDefault is the relation check on P-256 and the full
	// verification on the other curves.
	CheckDefault Check = iota
	// CheckVerify is the full verification u1·G + u2·Q on every curve
	// (the configuration's ecdsa_check = "verify").
	CheckVerify
)

// errRelation is what the relation check finds: its message names the
// part that failed.
var errRelation = errors.New("ecdsa: check before release")

// p256N is P-256's group order, for bigmod.
var p256N = func() *bigmod.Modulus {
	c, err := ec.CurveByName("P-256")
	if err != nil {
		panic(err)
	}
	m, err := bigmod.NewModulus(c.Order())
	if err != nil {
		panic(err)
	}
	return m
}()

// relScratch is the working memory of the relation check (P-256), made
// once per signScratch: its Nats keep their limbs, so a check allocates
// nothing.
type relScratch struct {
	nk          [32]byte // n − k, big-endian
	enc         [65]byte // R, uncompressed
	g, q        nistec.P256Point
	k, d, e, r  *bigmod.Nat
	s, x, t, dn *bigmod.Nat
}

func newRelScratch() *relScratch {
	return &relScratch{
		k: bigmod.NewNat(), d: bigmod.NewNat(), e: bigmod.NewNat(), r: bigmod.NewNat(),
		s: bigmod.NewNat(), x: bigmod.NewNat(), t: bigmod.NewNat(), dn: bigmod.NewNat(),
	}
}

// wipe clears the secrets (k, d, n − k) the check held.
func (w *relScratch) wipe() {
	clear(w.nk[:])
	for _, n := range []*bigmod.Nat{w.k, w.d, w.t, w.dn} {
		clear(n.Bits())
	}
}

// negD returns n − d for a P-256 scalar d in [1, n−1] (the key's second
// copy of its scalar, which the relation check adds to d), in constant
// time.
func negD(d []byte) ([]byte, error) {
	w := newRelScratch()
	defer w.wipe()
	if _, err := w.d.SetBytes(d, p256N); err != nil {
		return nil, fmt.Errorf("ecdsa: %w", err)
	}
	out := make([]byte, 32)
	w.t.ExpandFor(p256N)
	clear(w.t.Bits())
	w.t.Sub(w.d, p256N)
	putNat(out, w.t)
	return out, nil
}

// putNat writes the 256-bit x big-endian into out (32 bytes), without the
// allocation of bigmod's Bytes.
func putNat(out []byte, x *bigmod.Nat) {
	limbs := x.Bits() // little-endian 64-bit limbs (amd64, arm64)
	for i := range 32 {
		var v uint
		if j := i / 8; j < len(limbs) {
			v = limbs[j]
		}
		out[31-i] = byte(v >> (8 * (i % 8)))
	}
}

// checkRelation is the P-256 check before release of the signature r‖s
// made with the nonce k, the key d (and its second copy dn = n − d) and
// the hash, R = (rx, ry) being the engine's k·G. It holds when
//
//   - R is a point of P-256 (nistec's SetBytes: coordinates below p, on
//     the curve) and R + (n−k)·G is the point at infinity, (n−k)·G being
//     computed by filippo.io/nistec, not by the engine, with the scalar's
//     complement so that no digit of the engine's recoding is reused;
//   - r = x(R) mod n, r ≠ 0, s ≠ 0 and s·k ≡ e + r·d (mod n), computed
//     with filippo.io/bigmod, not with engine/arith/ec's Montgomery
//     arithmetic that made s;
//   - d + dn ≡ 0 (mod n): the scalar d read for this signature is the one
//     the key was made with (whose public point was computed from it).
//
// Together these say that r‖s is a valid signature under the public point,
// the property the full verification establishes. All in constant time
// (nistec's scalar multiplication, bigmod's arithmetic); what branches is
// the outcome.
func checkRelation(w *relScratch, k, d, dn, hash, rs, rx, ry []byte) error {
	if len(k) != 32 || len(d) != 32 || len(rs) != 64 || len(rx) != 32 || len(ry) != 32 {
		return fmt.Errorf("%w: P-256 operand lengths", errRelation)
	}
	// The point.
	w.enc[0] = 4
	copy(w.enc[1:33], rx)
	copy(w.enc[33:], ry)
	if _, err := w.q.SetBytes(w.enc[:]); err != nil {
		return fmt.Errorf("%w: k·G is not a P-256 point: %v", errRelation, err)
	}
	if _, err := w.k.SetBytes(k, p256N); err != nil {
		return fmt.Errorf("%w: nonce: %v", errRelation, err)
	}
	w.t.ExpandFor(p256N)
	clear(w.t.Bits())
	w.t.Sub(w.k, p256N) // n − k (k ≠ 0)
	putNat(w.nk[:], w.t)
	if _, err := w.g.ScalarBaseMult(w.nk[:]); err != nil {
		return fmt.Errorf("%w: (n−k)·G: %v", errRelation, err)
	}
	w.g.Add(&w.g, &w.q)
	if w.g.IsInfinity() != 1 {
		return fmt.Errorf("%w: k·G differs from nistec's", errRelation)
	}
	// The scalars.
	if _, err := w.r.SetBytes(rs[:32], p256N); err != nil || w.r.IsZero() == 1 {
		return fmt.Errorf("%w: r not in [1, n-1]", errRelation)
	}
	if _, err := w.s.SetBytes(rs[32:], p256N); err != nil || w.s.IsZero() == 1 {
		return fmt.Errorf("%w: s not in [1, n-1]", errRelation)
	}
	if _, err := w.x.SetOverflowingBytes(rx, p256N); err != nil || w.x.Equal(w.r) != 1 {
		return fmt.Errorf("%w: r ≠ x(k·G) mod n", errRelation)
	}
	if len(hash) > 32 { // bits2int: P-256's order has 256 bits
		hash = hash[:32]
	}
	if _, err := w.e.SetOverflowingBytes(hash, p256N); err != nil {
		return fmt.Errorf("%w: hash: %v", errRelation, err)
	}
	if _, err := w.d.SetBytes(d, p256N); err != nil {
		return fmt.Errorf("%w: private scalar: %v", errRelation, err)
	}
	if _, err := w.dn.SetBytes(dn, p256N); err != nil {
		return fmt.Errorf("%w: private scalar's copy: %v", errRelation, err)
	}
	w.dn.Add(w.d, p256N)
	if w.dn.IsZero() != 1 {
		return fmt.Errorf("%w: the private scalar changed", errRelation)
	}
	w.r.Mul(w.d, p256N) // r·d
	w.r.Add(w.e, p256N) // e + r·d
	w.s.Mul(w.k, p256N) // s·k
	if w.s.Equal(w.r) != 1 {
		return fmt.Errorf("%w: s·k ≢ e + r·d (mod n)", errRelation)
	}
	return nil
}
