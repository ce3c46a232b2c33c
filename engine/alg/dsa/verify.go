package dsa

import (
	"fmt"
	"math/big"

	"github.com/modexp-token/modexp-token/engine/arith/mont"
)

// PublicKey is a DSA public key prepared for verification: checked
// parameters, y in [2, p−1], and the Montgomery set-up mod p. Safe for
// concurrent use. Verification is variable time: every input is public.
type PublicKey struct {
	params Parameters
	y      *big.Int
	pm     *mont.Modulus
	g, yl  []uint64 // g and y, limbs of p
	qLen   int
}

// NewPublicKey checks the parameters (CheckParameters) and that y is in
// [2, p−1], and prepares the key. The subgroup check of y is CheckPublic's
// (a token does it once, on import).
func NewPublicKey(params *Parameters, y *big.Int) (*PublicKey, error) {
	if err := CheckParameters(params); err != nil {
		return nil, err
	}
	if y == nil || y.Cmp(big.NewInt(1)) <= 0 || y.Cmp(params.P) >= 0 {
		return nil, fmt.Errorf("%w: public value not in [2, p−1]", ErrInvalidKey)
	}
	pm, err := mont.NewModulus(params.P.Bytes())
	if err != nil {
		return nil, fmt.Errorf("dsa: public key: p: %w", ErrInvalidParameters)
	}
	k := &PublicKey{
		params: Parameters{P: new(big.Int).Set(params.P), Q: new(big.Int).Set(params.Q), G: new(big.Int).Set(params.G)},
		y:      new(big.Int).Set(y),
		pm:     pm,
		g:      make([]uint64, pm.Limbs()),
		yl:     make([]uint64, pm.Limbs()),
		qLen:   (params.Q.BitLen() + 7) / 8,
	}
	mont.SetBytes(k.g, params.G.Bytes())
	mont.SetBytes(k.yl, y.Bytes())
	return k, nil
}

// Y returns the public value.
func (k *PublicKey) Y() *big.Int { return new(big.Int).Set(k.y) }

// Verify checks the signature r‖s of hash (truncated to q's bit length):
// v = (g^u1 · y^u2 mod p) mod q must equal r, with w = s⁻¹, u1 = z·w,
// u2 = r·w mod q. g^u1·y^u2 is one simultaneous exponentiation (2-bit
// joint windows). It returns nil or an error wrapping ErrInvalidSignature.
func (k *PublicKey) Verify(hash, sig []byte) error {
	q := k.params.Q
	if len(sig) != 2*k.qLen {
		return fmt.Errorf("%w: %d bytes, want %d", ErrInvalidSignature, len(sig), 2*k.qLen)
	}
	r := new(big.Int).SetBytes(sig[:k.qLen])
	s := new(big.Int).SetBytes(sig[k.qLen:])
	if r.Sign() == 0 || r.Cmp(q) >= 0 || s.Sign() == 0 || s.Cmp(q) >= 0 {
		return fmt.Errorf("%w: r or s not in [1, q−1]", ErrInvalidSignature)
	}
	w := new(big.Int).ModInverse(s, q)
	if w == nil {
		return fmt.Errorf("%w: s not invertible", ErrInvalidSignature)
	}
	z := new(big.Int).SetBytes(bits2int(hash, k.qLen, q.BitLen()))
	u1 := z.Mul(z, w)
	u1.Mod(u1, q)
	u2 := w.Mul(r, w)
	u2.Mod(u2, q)
	vl := multiExpVarTime(k.pm, k.g, k.yl, u1.Bytes(), u2.Bytes())
	vb := make([]byte, k.pm.Size())
	mont.FillBytes(vb, vl)
	v := new(big.Int).SetBytes(vb)
	if v.Mod(v, q).Cmp(r) != 0 {
		return fmt.Errorf("%w: v ≠ r", ErrInvalidSignature)
	}
	return nil
}

// multiExpVarTime returns a^e1 · b^e2 mod m (plain limbs) for a, b < m
// and PUBLIC big-endian exponents, by Shamir's simultaneous
// exponentiation with 2-bit windows of both exponents (a table of the 16
// products a^i·b^j, i, j < 4): one squaring per exponent bit and one
// multiplication per non-zero window pair. Variable time.
func multiExpVarTime(m *mont.Modulus, a, b []uint64, e1, e2 []byte) []uint64 {
	n := m.Limbs()
	t := make([]uint64, m.ScratchLen())
	one := make([]uint64, n)
	one[0] = 1
	var ap, bp [4][]uint64
	for i := range ap {
		ap[i], bp[i] = make([]uint64, n), make([]uint64, n)
	}
	m.ToMont(ap[0], one, t)
	copy(bp[0], ap[0])
	m.ToMont(ap[1], a, t)
	m.ToMont(bp[1], b, t)
	for i := 2; i < 4; i++ {
		m.MontMul(ap[i], ap[i-1], ap[1], t)
		m.MontMul(bp[i], bp[i-1], bp[1], t)
	}
	var tab [16][]uint64
	for i := range 4 {
		for j := range 4 {
			tab[i*4+j] = make([]uint64, n)
			m.MontMul(tab[i*4+j], ap[i], bp[j], t)
		}
	}
	bit := func(e []byte, p int) int {
		if p/8 >= len(e) {
			return 0
		}
		return int(e[len(e)-1-p/8]>>(p%8)) & 1
	}
	nbits := 8 * max(len(e1), len(e2))
	acc := make([]uint64, n)
	started := false
	for pos := nbits - 2; pos >= 0; pos -= 2 {
		if started {
			m.MontSqr(acc, acc, t)
			m.MontSqr(acc, acc, t)
		}
		i := bit(e1, pos) | bit(e1, pos+1)<<1
		j := bit(e2, pos) | bit(e2, pos+1)<<1
		if i|j == 0 {
			continue
		}
		if started {
			m.MontMul(acc, acc, tab[i*4+j], t)
		} else {
			copy(acc, tab[i*4+j])
			started = true
		}
	}
	if !started {
		return one
	}
	m.FromMont(acc, acc, t)
	return acc
}
