package ecdsa

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
)

// ErrInvalidSignature is returned (wrapped) by Verify for a signature that
// does not verify, whatever the reason.
var ErrInvalidSignature = ec.ErrInvalidSignature

// ErrInvalidKey is returned (wrapped) for a private scalar outside
// [1, n−1] or a public point that is not on the curve.
var ErrInvalidKey = errors.New("ecdsa: invalid key")

// maxNonceTries bounds the nonces tried for one signature. A retry
// happens only when r or s is 0 (probability about 2⁻²⁵⁵ each); more than
// one in a row means a broken engine.
const maxNonceTries = 8

// PrivateKey is a checked ECDSA private key with its public point, ready to
// sign many times. The public point is computed in software when the key is
// made, so every signature can be checked before release without trusting
// the engine. A PrivateKey is safe for concurrent use.
type PrivateKey struct {
	curve *ec.Curve
	d     []byte
	dn    []byte // n − d on P-256, for the relation check (checkRelation)
	x, y  []byte
	pub   *ec.PublicKey // with a comb table once the key has signed
	// scratch holds *signScratch: the working memory of a signature,
	// reused, so that signing allocates nothing of its own.
	scratch sync.Pool
}

// signScratch is the working memory of one signature: the RFC 6979
// additional data, the nonce, s⁻¹, k·G's coordinates and the DRBG. Wiped
// before it goes back to the key's pool.
type signScratch struct {
	extra, k, sinv [66]byte
	rx, ry         [66]byte
	drbg           nonceDRBG
	rel            *relScratch // P-256's relation check, made on first use
}

func (k *PrivateKey) getScratch() *signScratch {
	if s, ok := k.scratch.Get().(*signScratch); ok {
		return s
	}
	return new(signScratch)
}

func (k *PrivateKey) putScratch(s *signScratch) {
	clear(s.k[:])
	clear(s.sinv[:])
	s.drbg.wipe()
	if s.rel != nil {
		s.rel.wipe()
	}
	k.scratch.Put(s)
}

// NewPrivateKey checks the private scalar d (big-endian, at most
// OrderByteLen bytes, in [1, n−1]) and computes its public point in
// software, in constant time.
func NewPrivateKey(curve string, d []byte) (*PrivateKey, error) {
	c, err := ec.CurveByName(curve)
	if err != nil {
		return nil, fmt.Errorf("ecdsa: %w", err)
	}
	dd, err := scalarOf(c, d)
	if err != nil {
		return nil, err
	}
	x, y, err := c.ScalarBaseMult(dd)
	if err != nil {
		return nil, fmt.Errorf("ecdsa: public point: %w", err)
	}
	pub, err := c.NewPublicKey(x, y)
	if err != nil {
		return nil, fmt.Errorf("ecdsa: public point: %w", err)
	}
	k := &PrivateKey{curve: c, d: dd, x: x, y: y, pub: pub}
	if c.Name() == "P-256" {
		if k.dn, err = negD(dd); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// scalarOf left-pads d to OrderByteLen bytes and checks 0 < d < n (in
// time independent of d's value).
func scalarOf(c *ec.Curve, d []byte) ([]byte, error) {
	olen := c.OrderByteLen()
	if len(d) == 0 || len(d) > olen {
		return nil, fmt.Errorf("%w: %s private scalar of %d bytes (want 1 to %d)", ErrInvalidKey, c.Name(), len(d), olen)
	}
	dd := make([]byte, olen)
	copy(dd[olen-len(d):], d)
	if !c.IsValidScalar(dd) {
		return nil, fmt.Errorf("%w: %s private scalar not in [1, n-1]", ErrInvalidKey, c.Name())
	}
	return dd, nil
}

// Curve is the key's curve.
func (k *PrivateKey) Curve() *ec.Curve { return k.curve }

// Public returns the public point's affine coordinates (ByteLen bytes
// each). The caller may modify them.
func (k *PrivateKey) Public() (x, y []byte) {
	return append([]byte(nil), k.x...), append([]byte(nil), k.y...)
}

// Sign returns the raw r‖s signature (each half OrderByteLen bytes) of hash,
// a message digest already computed by the caller (truncated to the
// order's bit length here, as FIPS 186-5 says).
//
// The nonce k is RFC 6979's deterministic nonce hedged with fresh bytes from
// rand (crypto/rand when rand is nil) as additional data (§3.6). k·G comes
// from eng (the software curve when eng is nil); its result must be a
// point on the curve, and the finished signature is checked to be valid
// under the public key before it is returned (SignToCheck: by relation on
// P-256, by a full verification elsewhere): a wrong engine result is an
// error wrapping engine.ErrDevice, never a wrong signature.
//
// The first Sign builds a table of the public point (see ec.PublicKey)
// that makes every later verification about three times faster.
func (k *PrivateKey) Sign(ctx context.Context, eng engine.ECEngine, hash []byte, rand io.Reader) ([]byte, error) {
	return k.SignTo(ctx, eng, nil, hash, rand)
}

// SignTo is Sign with the signature appended to dst: with a dst of room
// enough (2·OrderByteLen bytes), the working memory reused from earlier
// signatures and an engine that allocates nothing (engine/arith/ec's curves as
// the software engine runs them, or eng nil), a signature allocates
// nothing (BenchmarkSign reports the allocations per signature).
func (k *PrivateKey) SignTo(ctx context.Context, eng engine.ECEngine, dst, hash []byte, rand io.Reader) ([]byte, error) {
	return k.SignToCheck(ctx, eng, dst, hash, rand, CheckDefault)
}

// SignToCheck is SignTo with the check before release chosen: CheckDefault
// (the relation check on P-256, checkRelation; the full verification with
// the key's comb table on the other curves) or CheckVerify (the full
// verification on every curve).
func (k *PrivateKey) SignToCheck(ctx context.Context, eng engine.ECEngine, dst, hash []byte, rand io.Reader, check Check) ([]byte, error) {
	n := 2 * k.curve.OrderByteLen()
	out := append(dst, make([]byte, n)...) // no allocation when dst has room
	rs := out[len(dst):]
	how := checkTable
	if check == CheckDefault && k.dn != nil {
		how = checkRel
	}
	if err := k.signTo(ctx, eng, rs, hash, rand, how); err != nil {
		return nil, err
	}
	return out, nil
}

// checkHow is the check signExtra runs: the relation check (P-256), the
// full verification with the key's comb table, or without it (one
// signature: building the table costs more than it saves).
type checkHow uint8

const (
	checkRel checkHow = iota
	checkTable
	checkPlain
)

func (k *PrivateKey) signTo(ctx context.Context, eng engine.ECEngine, rs, hash []byte, rnd io.Reader, how checkHow) error {
	if rnd == nil {
		rnd = cryptoRand
	}
	sc := k.getScratch()
	defer k.putScratch(sc)
	extra := sc.extra[:k.curve.OrderByteLen()]
	if _, err := io.ReadFull(rnd, extra); err != nil {
		return fmt.Errorf("ecdsa: reading randomness: %w", err)
	}
	return k.signExtra(ctx, eng, sc, rs, hash, extra, how)
}

// signExtra signs with the given RFC 6979 additional data (none: the plain
// deterministic nonces of RFC 6979, for known-answer tests), in the
// working memory sc, checked before release as how says.
func (k *PrivateKey) signExtra(ctx context.Context, eng engine.ECEngine, sc *signScratch, rs, hash, extra []byte, how checkHow) error {
	c := k.curve
	drbg := &sc.drbg
	drbg.init(c, k.d, hash, extra)
	for range maxNonceTries {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("ecdsa: sign: %w", err)
		}
		nonce := drbg.next(sc.k[:0])
		rx, ry, err := baseMultTo(ctx, eng, c, nonce, sc.rx[:0], sc.ry[:0])
		if err != nil {
			return fmt.Errorf("ecdsa: sign: %w", err)
		}
		// s⁻¹ comes with s (no second inversion); the full
		// verification checks that it is the inverse of the s released.
		sinv := sc.sinv[:c.OrderByteLen()]
		if how == checkRel {
			err = c.ECDSASignature(rs, nonce, k.d, hash, rx)
		} else {
			err = c.ECDSASignatureInverse(rs, sinv, nonce, k.d, hash, rx)
		}
		if errors.Is(err, ec.ErrInvalidScalar) {
			continue // r = 0 or s = 0 (RFC 6979 §3.4): the next nonce
		}
		if err != nil {
			return fmt.Errorf("ecdsa: sign: %w", err)
		}
		switch how {
		case checkRel:
			if sc.rel == nil {
				sc.rel = newRelScratch()
			}
			err = checkRelation(sc.rel, nonce, k.d, k.dn, hash, rs, rx, ry)
		case checkTable:
			err = k.pub.ECDSAVerifyInverseVarTime(hash, rs, sinv)
		default:
			err = c.ECDSAVerifyVarTime(k.x, k.y, hash, rs)
		}
		if err != nil {
			clear(rs)
			return fmt.Errorf("ecdsa: %s signature made with the engine's k·G fails the check before release (%v): %w", c.Name(), err, engine.ErrDevice)
		}
		return nil
	}
	return fmt.Errorf("ecdsa: sign: r or s was 0 for %d nonces: %w", maxNonceTries, engine.ErrDevice)
}

// baseMultTo is baseMult with the software curve's result appended to x
// and y (no allocation when they have room); an engine's result is its
// own.
func baseMultTo(ctx context.Context, eng engine.ECEngine, c *ec.Curve, s, x, y []byte) ([]byte, []byte, error) {
	if eng == nil {
		return c.AppendScalarBaseMult(x, y, s)
	}
	return baseMult(ctx, eng, c, s)
}

// baseMult computes s·G on the engine (in software when eng is nil) and
// checks that the result is a point on the curve.
func baseMult(ctx context.Context, eng engine.ECEngine, c *ec.Curve, s []byte) (x, y []byte, err error) {
	if eng == nil {
		return c.ScalarBaseMult(s)
	}
	x, y, _, err = eng.ScalarBaseMult(ctx, c.Name(), s)
	if err != nil {
		return nil, nil, fmt.Errorf("engine %s: %w", eng.Info().Name, err)
	}
	if !c.IsOnCurve(x, y) {
		return nil, nil, fmt.Errorf("engine %s returned a point not on %s: %w", eng.Info().Name, c.Name(), engine.ErrDevice)
	}
	return x, y, nil
}

// GenerateKey draws a private scalar d uniformly in [1, n−1] from rand
// (crypto/rand when nil) by rejection sampling, and computes the public
// point with PublicFromPrivate.
func GenerateKey(ctx context.Context, eng engine.ECEngine, curve string, rand io.Reader) (d, x, y []byte, err error) {
	c, err := ec.CurveByName(curve)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("ecdsa: %w", err)
	}
	if rand == nil {
		rand = cryptoRand
	}
	d = make([]byte, c.OrderByteLen())
	excess := 8*len(d) - c.OrderBits()
	for tries := 0; ; tries++ {
		if tries == 100 { // each try succeeds with probability > 1/2
			return nil, nil, nil, fmt.Errorf("ecdsa: generate %s key: random source gives no scalar below n", c.Name())
		}
		if _, err := io.ReadFull(rand, d); err != nil {
			return nil, nil, nil, fmt.Errorf("ecdsa: generate %s key: %w", c.Name(), err)
		}
		d[0] &= 0xff >> excess
		if c.IsValidScalar(d) {
			break
		}
	}
	x, y, err = PublicFromPrivate(ctx, eng, curve, d)
	if err != nil {
		clear(d)
		return nil, nil, nil, err
	}
	return d, x, y, nil
}

var cryptoRand = rand.Reader

// PublicFromPrivate returns d·G, computed by eng (in software when eng is
// nil) and checked: the engine's point must equal the one computed in
// software, in constant time; a difference is an error wrapping
// engine.ErrDevice.
func PublicFromPrivate(ctx context.Context, eng engine.ECEngine, curve string, d []byte) (x, y []byte, err error) {
	k, err := NewPrivateKey(curve, d)
	if err != nil {
		return nil, nil, err
	}
	if eng == nil {
		x, y = k.Public()
		return x, y, nil
	}
	x, y, err = baseMult(ctx, eng, k.curve, k.d)
	if err != nil {
		return nil, nil, fmt.Errorf("ecdsa: public point: %w", err)
	}
	if subtle.ConstantTimeCompare(x, k.x)&subtle.ConstantTimeCompare(y, k.y) != 1 {
		return nil, nil, fmt.Errorf("ecdsa: engine %s computed a wrong %s public point: %w", eng.Info().Name, curve, engine.ErrDevice)
	}
	return x, y, nil
}
