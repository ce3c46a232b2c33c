package rsa

import (
	gorsa "crypto/rsa"
	"crypto/subtle"
	"errors"
	"fmt"
	"math/big"
	"sync"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/mont"
)

// Sentinel errors.
var (
	// ErrInputRange: the input is not below the modulus.
	ErrInputRange = errors.New("rsa: input out of range")
	// ErrFault: the engine's result failed the check before release.
	ErrFault = errors.New("rsa: engine result failed verification")
	// ErrInvalidKey: inconsistent or unsupported key.
	ErrInvalidKey = errors.New("rsa: invalid key")
)

// Key size limits. NewKey accepts keys from MinKeyBits (for interoperation
// with old keys); GenerateKey makes keys of MinGenerateBits..MaxKeyBits.
const (
	MinKeyBits      = 512
	MinGenerateBits = 1024
	MaxKeyBits      = 8192
	MaxPublicBits   = 16384
)

// PrivateKey holds the key's numbers. Dp, Dq, Qinv may be nil (computed).
type PrivateKey struct {
	N            *big.Int
	E            int
	D, P, Q      *big.Int
	Dp, Dq, Qinv *big.Int
}

// Options select how private operations run.
type Options struct {
	ExponentBlinding bool // d_p + k·(p−1) with a fresh 64-bit k per operation
}

// Key is a private key prepared for one engine (moduli set up, blinding
// state). Safe for concurrent use. [Key.On] prepares the same key for
// another engine (engine/guard's fallback), sharing everything but the
// engine's moduli.
type Key struct {
	*secret
	pr *prepared // the key's state on its engine
}

// secret is what a key's copies on several engines share: the numbers,
// the software arithmetic and the blinding state.
type secret struct {
	e      int
	eBytes []byte
	n      *mont.Modulus // software arithmetic mod n, p, q
	p, q   *mont.Modulus
	opts   Options

	dp, dq   []uint64 // CRT exponents, limbs of p and q
	pm1, qm1 []uint64 // p−1, q−1
	pm2, qm2 []byte   // p−2, q−2 (Fermat inversion for blinding)
	qPlain   []uint64 // q, limbs of q
	qinvMont []uint64 // q⁻¹·R mod p
	crt      engine.CRTKey

	blind       blinder
	scratchPool sync.Pool // of *scratch: the operations' working memory
}

// prepared is the key's state on one engine.
type prepared struct {
	eng       engine.Engine
	name      string
	pm, qm    engine.Modulus // nil when nativeCRT
	parallel  bool           // Info().Cores ≥ 2
	cores     int            // Info().Cores
	nativeCRT engine.CRTEngine
	pair      engine.PairEngine // asks for both halves in one call
}

// NewKey validates priv and prepares it for eng.
func NewKey(eng engine.Engine, priv *PrivateKey, opts Options) (*Key, error) {
	if eng == nil {
		return nil, fmt.Errorf("rsa: new key: nil engine: %w", ErrInvalidKey)
	}
	dp, dq, qinv, err := validate(priv)
	if err != nil {
		return nil, err
	}
	k := &Key{secret: &secret{e: priv.E, opts: opts}}
	k.eBytes = big.NewInt(int64(priv.E)).Bytes()
	if k.n, err = mont.NewModulus(priv.N.Bytes()); err != nil {
		return nil, fmt.Errorf("rsa: new key: modulus: %w", ErrInvalidKey)
	}
	if k.p, err = mont.NewModulus(priv.P.Bytes()); err != nil {
		return nil, fmt.Errorf("rsa: new key: p: %w", ErrInvalidKey)
	}
	if k.q, err = mont.NewModulus(priv.Q.Bytes()); err != nil {
		return nil, fmt.Errorf("rsa: new key: q: %w", ErrInvalidKey)
	}
	pb := priv.P.FillBytes(make([]byte, k.p.Size()))
	qb := priv.Q.FillBytes(make([]byte, k.q.Size()))
	k.dp = limbsOfBytes(dp, k.p.Limbs())
	k.dq = limbsOfBytes(dq, k.q.Limbs())
	k.pm1 = limbsOfBytes(minusSmall(pb, 1), k.p.Limbs())
	k.qm1 = limbsOfBytes(minusSmall(qb, 1), k.q.Limbs())
	k.pm2 = minusSmall(pb, 2)
	k.qm2 = minusSmall(qb, 2)
	k.qPlain = limbsOfBytes(qb, k.q.Limbs())
	qi := limbsOfBytes(qinv, k.p.Limbs())
	k.qinvMont = make([]uint64, k.p.Limbs())
	k.p.ToMont(k.qinvMont, qi, make([]uint64, k.p.ScratchLen()))
	k.crt = engine.CRTKey{
		P:    priv.P.Bytes(),
		Q:    priv.Q.Bytes(),
		DP:   dp,
		DQ:   dq,
		QInv: qinv,
	}
	if k.pr, err = k.prepare(eng); err != nil {
		return nil, err
	}
	return k, nil
}

// On returns the key prepared for eng: the same key (its checks, its
// blinding state) on another engine. engine/guard redoes a faulty
// operation this way on the software engine.
func (k *Key) On(eng engine.Engine) (*Key, error) {
	if eng == nil {
		return nil, fmt.Errorf("rsa: key on engine: nil engine: %w", ErrInvalidKey)
	}
	pr, err := k.prepare(eng)
	if err != nil {
		return nil, err
	}
	return &Key{secret: k.secret, pr: pr}, nil
}

func (k *secret) prepare(eng engine.Engine) (*prepared, error) {
	info := eng.Info()
	pr := &prepared{eng: eng, name: info.Name, parallel: info.Cores >= 2, cores: info.Cores}
	if ce, ok := engine.As[engine.CRTEngine](eng); ok {
		pr.nativeCRT = ce
		return pr, nil
	}
	if pe, ok := engine.As[engine.PairEngine](eng); ok {
		pr.pair = pe
	}
	var err error
	if pr.pm, err = eng.NewModulus(k.crt.P); err != nil {
		return nil, fmt.Errorf("rsa: new key: engine %s: modulus p: %w", info.Name, err)
	}
	if pr.qm, err = eng.NewModulus(k.crt.Q); err != nil {
		return nil, fmt.Errorf("rsa: new key: engine %s: modulus q: %w", info.Name, err)
	}
	return pr, nil
}

// validate checks priv and returns d mod (p−1), d mod (q−1) and q⁻¹ mod p
// (checking the given ones), at the byte lengths of p, q and p.
//
// No secret goes through math/big arithmetic: the consistency checks
// (p·q = n, d·e ≡ 1 mod p−1 and q−1, q·q⁻¹ ≡ 1 mod p) and the CRT values
// are crypto/rsa's (PrivateKey.Validate and Precompute, constant-time
// bigmod since Go 1.20), the given CRT values are compared in constant
// time. What math/big still sees is public (n, e) or sizes and parities.
func validate(priv *PrivateKey) (dp, dq, qinv []byte, err error) {
	bad := func(what string) error { return fmt.Errorf("rsa: invalid key: %s: %w", what, ErrInvalidKey) }
	if priv == nil || priv.N == nil || priv.D == nil || priv.P == nil || priv.Q == nil {
		return nil, nil, nil, bad("missing N, D, P or Q")
	}
	if priv.E < 3 || priv.E%2 == 0 {
		return nil, nil, nil, bad(fmt.Sprintf("public exponent %d (must be odd and at least 3)", priv.E))
	}
	n, p, q, d := priv.N, priv.P, priv.Q, priv.D
	if n.Sign() <= 0 || n.BitLen() < MinKeyBits || n.BitLen() > MaxPublicBits {
		return nil, nil, nil, bad(fmt.Sprintf("modulus of %d bits (want %d..%d)", n.BitLen(), MinKeyBits, MaxPublicBits))
	}
	if p.Sign() <= 0 || q.Sign() <= 0 || p.BitLen() < 2 || q.BitLen() < 2 || p.Bit(0) == 0 || q.Bit(0) == 0 ||
		p.BitLen() >= n.BitLen() || q.BitLen() >= n.BitLen() {
		return nil, nil, nil, bad("p and q must be odd numbers greater than one, below n")
	}
	nlen := (n.BitLen() + 7) / 8
	if subtle.ConstantTimeCompare(p.FillBytes(make([]byte, nlen)), q.FillBytes(make([]byte, nlen))) == 1 {
		return nil, nil, nil, bad("p = q")
	}
	if d.Sign() <= 0 || d.BitLen() > n.BitLen() {
		return nil, nil, nil, bad("d out of range")
	}
	k := &gorsa.PrivateKey{PublicKey: gorsa.PublicKey{N: n, E: priv.E}, D: d, Primes: []*big.Int{p, q}}
	// Precompute checks p·q = n, d < n, d·e ≡ 1 mod p−1 and q−1 and
	// q·q⁻¹ ≡ 1 mod p, and leaves the CRT values unset on failure;
	// Validate then says why.
	k.Precompute()
	if k.Precomputed.Dp == nil || k.Precomputed.Dq == nil || k.Precomputed.Qinv == nil {
		why := "no CRT values"
		if err := k.Validate(); err != nil {
			why = err.Error()
		}
		return nil, nil, nil, bad(why)
	}
	plen, qlen := (p.BitLen()+7)/8, (q.BitLen()+7)/8
	dp = k.Precomputed.Dp.FillBytes(make([]byte, plen))
	dq = k.Precomputed.Dq.FillBytes(make([]byte, qlen))
	qinv = k.Precomputed.Qinv.FillBytes(make([]byte, plen))
	given := func(v *big.Int, want []byte) bool {
		return v.Sign() >= 0 && v.BitLen() <= 8*len(want) &&
			subtle.ConstantTimeCompare(v.FillBytes(make([]byte, len(want))), want) == 1
	}
	if priv.Dp != nil && !given(priv.Dp, dp) {
		return nil, nil, nil, bad("Dp ≠ d mod (p−1)")
	}
	if priv.Dq != nil && !given(priv.Dq, dq) {
		return nil, nil, nil, bad("Dq ≠ d mod (q−1)")
	}
	if priv.Qinv != nil && !given(priv.Qinv, qinv) {
		return nil, nil, nil, bad("Qinv ≠ q⁻¹ mod p")
	}
	return dp, dq, qinv, nil
}

// CRTValues checks priv (as NewKey does) and returns its CRT values
// d mod (p−1), d mod (q−1) and q⁻¹ mod p, big-endian at the byte lengths
// of p, q and p, computed in constant time (see validate). Errors wrap
// ErrInvalidKey.
func CRTValues(priv *PrivateKey) (dp, dq, qinv []byte, err error) { return validate(priv) }

// minusSmall returns x − v at x's length, for an odd x > v (p − 1, p − 2):
// a borrow carried through every byte, whatever x is.
func minusSmall(x []byte, v byte) []byte {
	z := make([]byte, len(x))
	borrow := uint16(v)
	for i := len(x) - 1; i >= 0; i-- {
		d := uint16(x[i]) - borrow
		z[i] = byte(d)
		borrow = (d >> 8) & 1
	}
	return z
}

func limbsOfBytes(b []byte, k int) []uint64 {
	z := make([]uint64, k)
	mont.SetBytes(z, b)
	return z
}

// Size is the byte length of the modulus (and of every result).
func (k *Key) Size() int { return k.n.Size() }
