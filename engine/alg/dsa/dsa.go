package dsa

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/internal/hashint"
	"github.com/modexp-token/modexp-token/engine/arith/mont"
)

// maxNonceTries bounds the nonces tried for one signature. A retry happens
// only when r or s is 0 (probability about 2⁻ᴺ each); more than one in a
// row means a broken engine.
const maxNonceTries = 8

// beforeCheck, when not nil, is called just before the check of each
// signature: the constant-time trace test stops recording there (the check
// works on public values, in variable time).
var beforeCheck func()

// Key is a DSA private key prepared for an engine: checked parameters,
// the public value computed in software, Montgomery set-up mod p and q.
// Safe for concurrent use. [Key.On] prepares the same key for another
// engine (engine/guard's fallback).
type Key struct {
	*secret
	pr *prepared // p on the key's engine
}

// secret is what a key's copies on several engines share.
type secret struct {
	params Parameters
	pm, qm *mont.Modulus // software arithmetic mod p and q
	qLen   int           // byte length of q (and of each signature half)
	nBits  int           // bit length of q
	x      []uint64      // the private value, limbs of q
	xb     []byte        // x, qLen bytes
	y      *big.Int      // g^x mod p, computed in software
	pub    *PublicKey    // y prepared: the check before release
	gb     []byte        // g, byte length of p
	qPlain []uint64      // q, limbs of q
	qm2    []byte        // q−2 (Fermat inversion)
}

// prepared is the key's modulus p on one engine.
type prepared struct {
	eng  engine.Engine
	name string
	pm   engine.Modulus
}

// NewKey checks the parameters and the private value x (big-endian, in
// [1, q−1]), computes y = g^x mod p in software (constant time in x) and
// prepares p on eng.
func NewKey(eng engine.Engine, params *Parameters, x []byte) (*Key, error) {
	if eng == nil {
		return nil, fmt.Errorf("dsa: new key: nil engine: %w", ErrInvalidKey)
	}
	sk, err := newSecret(params, x)
	if err != nil {
		return nil, err
	}
	return (&Key{secret: sk}).On(eng)
}

// On returns the key prepared for eng: the same key on another engine.
// engine/guard redoes a faulty signature this way on the software engine.
func (k *Key) On(eng engine.Engine) (*Key, error) {
	if eng == nil {
		return nil, fmt.Errorf("dsa: key on engine: nil engine: %w", ErrInvalidKey)
	}
	pr, err := prepare(eng, &k.params)
	if err != nil {
		return nil, err
	}
	return &Key{secret: k.secret, pr: pr}, nil
}

// PublicValue checks the parameters and x as NewKey does and returns
// y = g^x mod p, computed in software in constant time in x.
func PublicValue(params *Parameters, x []byte) (*big.Int, error) {
	k, err := newSecret(params, x)
	if err != nil {
		return nil, err
	}
	clear(k.x)
	clear(k.xb)
	return k.y, nil
}

// newSecret is NewKey without the engine.
func newSecret(params *Parameters, x []byte) (*secret, error) {
	if err := CheckParameters(params); err != nil {
		return nil, err
	}
	k := &secret{}
	k.params = Parameters{P: new(big.Int).Set(params.P), Q: new(big.Int).Set(params.Q), G: new(big.Int).Set(params.G)}
	var err error
	if k.pm, err = mont.NewModulus(params.P.Bytes()); err != nil {
		return nil, fmt.Errorf("dsa: new key: p: %w", ErrInvalidParameters)
	}
	if k.qm, err = mont.NewModulus(params.Q.Bytes()); err != nil {
		return nil, fmt.Errorf("dsa: new key: q: %w", ErrInvalidParameters)
	}
	k.qLen, k.nBits = k.qm.Size(), k.qm.BitLen()
	for len(x) > 0 && x[0] == 0 {
		x = x[1:]
	}
	k.x = make([]uint64, k.qm.Limbs())
	if len(x) > k.qLen || mont.SetBytes(k.x, x)&k.qm.Less(k.x)&(1^mont.IsZero(k.x)) != 1 {
		return nil, fmt.Errorf("%w: private value not in [1, q−1]", ErrInvalidKey)
	}
	k.xb = make([]byte, k.qLen)
	mont.FillBytes(k.xb, k.x)
	k.qPlain = make([]uint64, k.qm.Limbs())
	mont.SetBytes(k.qPlain, params.Q.Bytes())
	k.qm2 = new(big.Int).Sub(params.Q, big.NewInt(2)).FillBytes(make([]byte, k.qLen))
	k.gb = params.G.FillBytes(make([]byte, k.pm.Size()))
	g := make([]uint64, k.pm.Limbs())
	mont.SetBytes(g, k.gb)
	y := make([]uint64, k.pm.Limbs())
	k.pm.Exp(y, g, k.xb) // constant time in x
	yb := make([]byte, k.pm.Size())
	mont.FillBytes(yb, y)
	k.y = new(big.Int).SetBytes(yb)
	if k.pub, err = NewPublicKey(params, k.y); err != nil {
		return nil, err
	}
	return k, nil
}

func prepare(eng engine.Engine, params *Parameters) (*prepared, error) {
	info := eng.Info()
	if info.MaxModulusBits > 0 && params.P.BitLen() > info.MaxModulusBits {
		return nil, fmt.Errorf("dsa: engine %s: %d-bit p exceeds %d bits: %w", info.Name, params.P.BitLen(), info.MaxModulusBits, engine.ErrOperandTooLarge)
	}
	pm, err := eng.NewModulus(params.P.Bytes())
	if err != nil {
		return nil, fmt.Errorf("dsa: engine %s: modulus p: %w", info.Name, err)
	}
	return &prepared{eng: eng, name: info.Name, pm: pm}, nil
}

// Parameters returns the key's domain parameters (copies).
func (k *Key) Parameters() *Parameters {
	return &Parameters{P: new(big.Int).Set(k.params.P), Q: new(big.Int).Set(k.params.Q), G: new(big.Int).Set(k.params.G)}
}

// Y returns the public value g^x mod p.
func (k *Key) Y() *big.Int { return new(big.Int).Set(k.y) }

// SignatureSize is the byte length of a signature: twice that of q.
func (k *Key) SignatureSize() int { return 2 * k.qLen }

// Sign returns the signature r‖s (each half the byte length of q) of hash,
// a digest computed by the caller (truncated here to q's bit length). The
// nonce is RFC 6979's hedged with fresh bytes from rnd (crypto/rand when
// nil); g^k comes from the engine with the exponent blinded; the signature
// is verified with the public value before it is returned (see the package
// documentation). A failure of the engine (a signature that does not
// verify: ErrFault and engine.ErrDevice; or an engine error wrapping
// engine.ErrDevice) returns no signature; redoing it elsewhere (with fresh
// randomness, so a fresh nonce) is the caller's policy (engine/guard).
func (k *Key) Sign(ctx context.Context, hash []byte, rnd io.Reader) ([]byte, engine.Cost, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	extra := make([]byte, k.qLen)
	if _, err := io.ReadFull(rnd, extra); err != nil {
		return nil, engine.Cost{}, fmt.Errorf("dsa: reading randomness: %w", err)
	}
	return k.signOn(ctx, k.pr, hash, extra)
}

// signOn makes and checks one signature on one engine, with the given
// RFC 6979 additional data (empty: the plain deterministic nonces).
func (k *Key) signOn(ctx context.Context, pr *prepared, hash, extra []byte) ([]byte, engine.Cost, error) {
	var cost engine.Cost
	z := make([]uint64, k.qm.Limbs())
	k.qm.Reduce(z, bits2int(hash, k.qLen, k.nBits))
	h1 := make([]byte, k.qLen)
	mont.FillBytes(h1, z)
	g := newNonceDRBG(k.qm, k.nBits, k.xb, h1, extra)
	defer g.wipe()
	nonce := make([]uint64, k.qm.Limbs())
	defer clear(nonce)
	for range maxNonceTries {
		if err := ctx.Err(); err != nil {
			return nil, cost, fmt.Errorf("dsa: sign: %w", err)
		}
		g.next(nonce)
		exp, err := blindExponent(nonce, k.qPlain)
		if err != nil {
			return nil, cost, err
		}
		gk, c, err := pr.eng.Exp(ctx, pr.pm, k.gb, exp)
		clear(exp)
		cost = cost.Add(c)
		if err != nil {
			return nil, cost, fmt.Errorf("dsa: sign: engine %s: %w", pr.name, err)
		}
		gkl := make([]uint64, k.pm.Limbs())
		if len(gk) != k.pm.Size() || mont.SetBytes(gkl, gk)&k.pm.Less(gkl) != 1 {
			return nil, cost, fmt.Errorf("dsa: sign: engine %s: g^k out of range: %w (%w)", pr.name, ErrFault, engine.ErrDevice)
		}
		r := make([]uint64, k.qm.Limbs())
		k.qm.Reduce(r, gk)
		if mont.IsZero(r) == 1 {
			continue // r = 0: the next nonce (RFC 6979 §3.4)
		}
		s, err := k.sValue(nonce, r, z)
		if err != nil {
			return nil, cost, err
		}
		if mont.IsZero(s) == 1 {
			continue
		}
		sig := make([]byte, 2*k.qLen)
		mont.FillBytes(sig[:k.qLen], r)
		mont.FillBytes(sig[k.qLen:], s)
		if beforeCheck != nil {
			beforeCheck()
		}
		if err := k.pub.Verify(hash, sig); err != nil {
			clear(sig)
			return nil, cost, fmt.Errorf("dsa: sign on engine %s: signature does not verify (%v): %w (%w)", pr.name, err, ErrFault, engine.ErrDevice)
		}
		return sig, cost, nil
	}
	return nil, cost, fmt.Errorf("dsa: sign: r or s was 0 for %d nonces: %w (%w)", maxNonceTries, ErrFault, engine.ErrDevice)
}

// sValue returns s = k⁻¹·(z + x·r) mod q computed as (k·b)⁻¹·(b·z +
// (b·x)·r) with a fresh random b in [1, q−1], in constant time.
func (k *Key) sValue(nonce, r, z []uint64) ([]uint64, error) {
	q := k.qm
	n := q.Limbs()
	b, err := randomScalar(q)
	if err != nil {
		return nil, err
	}
	t := make([]uint64, q.ScratchLen())
	// mul sets dst = a·b mod q for a, b < q: MontMul gives a·b·R⁻¹, ToMont
	// multiplies by R.
	mul := func(dst, a, c []uint64) {
		q.MontMul(dst, a, c, t)
		q.ToMont(dst, dst, t)
	}
	kb := make([]uint64, n)
	mul(kb, nonce, b)
	inv := make([]uint64, n)
	q.Exp(inv, kb, k.qm2) // (k·b)⁻¹ by Fermat; q−2 is public
	bz := make([]uint64, n)
	mul(bz, b, z)
	bx := make([]uint64, n)
	mul(bx, b, k.x)
	mul(bx, bx, r)
	q.ModAdd(bz, bz, bx)
	s := make([]uint64, n)
	mul(s, inv, bz)
	clear(b)
	clear(kb)
	clear(inv)
	clear(bx)
	return s, nil
}

// randomScalar draws b uniformly (near enough: 64 extra bits reduced) from
// [1, q−1].
func randomScalar(q *mont.Modulus) ([]uint64, error) {
	buf := make([]byte, q.Size()+8)
	defer clear(buf)
	b := make([]uint64, q.Limbs())
	for range 10 {
		if _, err := rand.Read(buf); err != nil {
			return nil, fmt.Errorf("dsa: blinding: %w", err)
		}
		q.Reduce(b, buf)
		if mont.IsZero(b) == 0 {
			return b, nil
		}
	}
	return nil, errors.New("dsa: blinding: random source gives only zero")
}

// blindExponent returns e + m·order for a fresh random 64-bit m, as
// big-endian bytes of fixed length (one limb more than order).
func blindExponent(e, order []uint64) ([]byte, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("dsa: exponent blinding: %w", err)
	}
	return mont.BlindExponent(e, order, binary.LittleEndian.Uint64(rnd[:])), nil
}

// CheckPublic checks that y is in [2, p−1] and in the subgroup of order q
// (y^q ≡ 1 mod p). The parameters must have passed CheckParameters.
func CheckPublic(params *Parameters, y *big.Int) error {
	if y == nil || y.Cmp(big.NewInt(1)) <= 0 || y.Cmp(params.P) >= 0 {
		return fmt.Errorf("%w: public value not in [2, p−1]", ErrInvalidKey)
	}
	if new(big.Int).Exp(y, params.Q, params.P).Cmp(big.NewInt(1)) != 0 {
		return fmt.Errorf("%w: public value not in the subgroup of order q", ErrInvalidKey)
	}
	return nil
}

// GenerateKey draws x uniformly in [1, q−1] from rnd (crypto/rand when
// nil) and computes y = g^x mod p on eng with the exponent blinded,
// requiring it to equal the software result (in constant time); a
// difference is an error wrapping engine.ErrDevice. It returns x (the byte
// length of q) and y (the byte length of p).
func GenerateKey(ctx context.Context, eng engine.Engine, params *Parameters, rnd io.Reader) (x, y []byte, cost engine.Cost, err error) {
	if err := CheckParameters(params); err != nil {
		return nil, nil, cost, err
	}
	if rnd == nil {
		rnd = rand.Reader
	}
	qm, err := mont.NewModulus(params.Q.Bytes())
	if err != nil {
		return nil, nil, cost, fmt.Errorf("dsa: generate key: q: %w", ErrInvalidParameters)
	}
	qLen := qm.Size()
	excess := 8*qLen - qm.BitLen()
	x = make([]byte, qLen)
	xl := make([]uint64, qm.Limbs())
	defer clear(xl)
	for tries := 0; ; tries++ {
		if tries == 100 { // each try succeeds with probability > 1/2
			return nil, nil, cost, errors.New("dsa: generate key: random source gives no value below q")
		}
		if _, err := io.ReadFull(rnd, x); err != nil {
			return nil, nil, cost, fmt.Errorf("dsa: generate key: %w", err)
		}
		x[0] &= 0xff >> excess
		mont.SetBytes(xl, x)
		if qm.Less(xl)&(1^mont.IsZero(xl)) == 1 {
			break
		}
	}
	k, err := NewKey(eng, params, x)
	if err != nil {
		clear(x)
		return nil, nil, cost, err
	}
	exp, err := blindExponent(k.x, k.qPlain)
	if err != nil {
		return nil, nil, cost, err
	}
	ey, cost, err := k.pr.eng.Exp(ctx, k.pr.pm, k.gb, exp)
	clear(exp)
	if err != nil {
		clear(x)
		return nil, nil, cost, fmt.Errorf("dsa: generate key: engine %s: %w", k.pr.name, err)
	}
	y = k.y.FillBytes(make([]byte, k.pm.Size()))
	if subtle.ConstantTimeCompare(ey, y) != 1 {
		clear(x)
		return nil, nil, cost, fmt.Errorf("dsa: engine %s computed a wrong public value: %w (%w)", k.pr.name, ErrFault, engine.ErrDevice)
	}
	return x, y, cost, nil
}

// bits2int returns the leftmost nBits bits of b as a qLen-byte big-endian
// integer (RFC 6979 §2.3.2; FIPS 186-4's z). Constant time in b's value.
func bits2int(b []byte, qLen, nBits int) []byte {
	return hashint.AppendBits2Int(make([]byte, 0, qLen), b, qLen, nBits)
}
