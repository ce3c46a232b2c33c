package rsa

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/internal/mont"
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

	blind blinder
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
	one := big.NewInt(1)
	k.dp = limbsOf(dp, k.p.Limbs())
	k.dq = limbsOf(dq, k.q.Limbs())
	k.pm1 = limbsOf(new(big.Int).Sub(priv.P, one), k.p.Limbs())
	k.qm1 = limbsOf(new(big.Int).Sub(priv.Q, one), k.q.Limbs())
	k.pm2 = new(big.Int).Sub(priv.P, big.NewInt(2)).FillBytes(make([]byte, k.p.Size()))
	k.qm2 = new(big.Int).Sub(priv.Q, big.NewInt(2)).FillBytes(make([]byte, k.q.Size()))
	k.qPlain = limbsOf(priv.Q, k.q.Limbs())
	qi := limbsOf(qinv, k.p.Limbs())
	k.qinvMont = make([]uint64, k.p.Limbs())
	k.p.ToMont(k.qinvMont, qi, make([]uint64, k.p.ScratchLen()))
	k.crt = engine.CRTKey{
		P:    priv.P.Bytes(),
		Q:    priv.Q.Bytes(),
		DP:   dp.FillBytes(make([]byte, k.p.Size())),
		DQ:   dq.FillBytes(make([]byte, k.q.Size())),
		QInv: qinv.FillBytes(make([]byte, k.p.Size())),
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
// (checking the given ones).
func validate(priv *PrivateKey) (dp, dq, qinv *big.Int, err error) {
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
	one := big.NewInt(1)
	if p.Cmp(one) <= 0 || q.Cmp(one) <= 0 || p.Bit(0) == 0 || q.Bit(0) == 0 || p.Cmp(q) == 0 {
		return nil, nil, nil, bad("p and q must be distinct odd numbers greater than one")
	}
	if new(big.Int).Mul(p, q).Cmp(n) != 0 {
		return nil, nil, nil, bad("p·q ≠ n")
	}
	if d.Sign() <= 0 || d.Cmp(n) >= 0 {
		return nil, nil, nil, bad("d out of range")
	}
	pm1 := new(big.Int).Sub(p, one)
	qm1 := new(big.Int).Sub(q, one)
	de := new(big.Int).Mul(d, big.NewInt(int64(priv.E)))
	if new(big.Int).Mod(de, pm1).Cmp(one) != 0 || new(big.Int).Mod(de, qm1).Cmp(one) != 0 {
		return nil, nil, nil, bad("d·e ≢ 1 mod λ(n)")
	}
	dp = new(big.Int).Mod(d, pm1)
	dq = new(big.Int).Mod(d, qm1)
	qinv = new(big.Int).ModInverse(q, p)
	if qinv == nil {
		return nil, nil, nil, bad("q not invertible mod p")
	}
	if priv.Dp != nil && priv.Dp.Cmp(dp) != 0 {
		return nil, nil, nil, bad("Dp ≠ d mod (p−1)")
	}
	if priv.Dq != nil && priv.Dq.Cmp(dq) != 0 {
		return nil, nil, nil, bad("Dq ≠ d mod (q−1)")
	}
	if priv.Qinv != nil && priv.Qinv.Cmp(qinv) != 0 {
		return nil, nil, nil, bad("Qinv ≠ q⁻¹ mod p")
	}
	return dp, dq, qinv, nil
}

func limbsOf(x *big.Int, k int) []uint64 {
	z := make([]uint64, k)
	mont.SetBytes(z, x.Bytes())
	return z
}

// Size is the byte length of the modulus (and of every result).
func (k *Key) Size() int { return k.n.Size() }
