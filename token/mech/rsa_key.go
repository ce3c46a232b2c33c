package mech

// RSA keys (CKK_RSA): the key type (schemas, the completion and checks of
// imported keys), the engine/alg/rsa form of a key object, its preparation on
// the slot's guard, and the private and public operations the RSA
// mechanisms (token/sign.go, token/crypt.go) run.

import (
	stdrsa "crypto/rsa"
	"crypto/subtle"
	"crypto/x509"
	"errors"
	"fmt"
	"math/big"

	"github.com/modexp-token/modexp-token/engine/alg/rsa"
	"github.com/modexp-token/modexp-token/engine/guard"
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// RSA sizes the token accepts for imported keys (operations are further
// limited by each mechanism's MechanismInfo).
const (
	rsaImportMinBits = 512
	rsaImportMaxBits = 16384
	rsaMaxExponent   = 1<<31 - 1 // public exponents are ints in engine/alg/rsa and crypto/rsa
)

func init() {
	rsaValue := attr.Spec{Kind: attr.KindBytes, Flags: attr.Fixed | attr.Generated}
	rsaSecret := attr.Spec{Kind: attr.KindBytes, Flags: attr.Fixed | attr.Generated | attr.Secret}
	registerKeyType(&KeyType{
		typ: ck.CKK_RSA,
		PublicSchema: attr.PublicKeySchema.With(attr.Schema{
			ck.CKA_MODULUS:         {Kind: attr.KindBytes, Flags: attr.Required | attr.Fixed | attr.Generated},
			ck.CKA_MODULUS_BITS:    {Kind: attr.KindULong, Flags: attr.Fixed},
			ck.CKA_PUBLIC_EXPONENT: {Kind: attr.KindBytes, Flags: attr.Required | attr.Fixed},
		}),
		PrivateSchema: attr.PrivateKeySchema.With(attr.Schema{
			ck.CKA_MODULUS:          {Kind: attr.KindBytes, Flags: attr.Required | attr.Fixed | attr.Generated},
			ck.CKA_PUBLIC_EXPONENT:  rsaValue,
			ck.CKA_PRIVATE_EXPONENT: {Kind: attr.KindBytes, Flags: attr.Required | attr.Fixed | attr.Generated | attr.Secret},
			ck.CKA_PRIME_1:          rsaSecret,
			ck.CKA_PRIME_2:          rsaSecret,
			ck.CKA_EXPONENT_1:       rsaSecret,
			ck.CKA_EXPONENT_2:       rsaSecret,
			ck.CKA_COEFFICIENT:      rsaSecret,
		}),
		CompletePublic:  completeRSAPublic,
		CompletePrivate: completeRSAPrivate,
		Bits:            func(a attr.Map) int { return new(big.Int).SetBytes(a[ck.CKA_MODULUS]).BitLen() },
	})
}

// rsaPublicValues checks and returns the modulus and public exponent.
func rsaPublicValues(a attr.Map) (*big.Int, int, error) {
	n := new(big.Int).SetBytes(a[ck.CKA_MODULUS])
	if n.Bit(0) == 0 || n.BitLen() < rsaImportMinBits || n.BitLen() > rsaImportMaxBits {
		return nil, 0, Invalid(ck.CKA_MODULUS, "must be odd, 512 to 16384 bits")
	}
	eb, ok := a[ck.CKA_PUBLIC_EXPONENT]
	if !ok {
		return n, 0, nil
	}
	e, err := rsaExponent(eb)
	return n, e, err
}

// rsaExponent parses a public exponent: odd, 3 ≤ e < 2^31.
func rsaExponent(b []byte) (int, error) {
	e := new(big.Int).SetBytes(b)
	if e.BitLen() > 31 || e.Int64() < 3 || e.Bit(0) == 0 {
		return 0, Invalid(ck.CKA_PUBLIC_EXPONENT, "must be odd, 3 to 2^31-1")
	}
	return int(e.Int64()), nil
}

func completeRSAPublic(a attr.Map) error {
	n, e, err := rsaPublicValues(a)
	if err != nil {
		return err
	}
	if v, ok := a[ck.CKA_MODULUS_BITS]; ok {
		if bits, _ := ck.ParseULong(v); bits != uint64(n.BitLen()) {
			return Inconsistent("CKA_MODULUS_BITS does not match CKA_MODULUS")
		}
	}
	a[ck.CKA_MODULUS_BITS] = ck.ULong(uint64(n.BitLen()))
	a[ck.CKA_PUBLIC_KEY_INFO] = rsaSPKI(n, e)
	return nil
}

// rsaSPKI is the DER SubjectPublicKeyInfo of (n, e).
func rsaSPKI(n *big.Int, e int) []byte {
	der, err := x509.MarshalPKIXPublicKey(&stdrsa.PublicKey{N: n, E: e})
	if err != nil {
		return []byte{}
	}
	return der
}

// completeRSAPrivate checks an RSA private key and computes what is
// missing: the primes from (n, e, d), the public exponent from the primes,
// and the CRT values. Values given must agree with each other
// (CKR_TEMPLATE_INCONSISTENT).
func completeRSAPrivate(a attr.Map) error {
	n, e, err := rsaPublicValues(a)
	if err != nil {
		return err
	}
	d := new(big.Int).SetBytes(a[ck.CKA_PRIVATE_EXPONENT])
	if d.Sign() <= 0 || d.Cmp(n) >= 0 {
		return Invalid(ck.CKA_PRIVATE_EXPONENT, "must be in [1, n)")
	}
	one := big.NewInt(1)
	p, hasP := bigAttr(a, ck.CKA_PRIME_1)
	q, hasQ := bigAttr(a, ck.CKA_PRIME_2)
	switch {
	case hasP && hasQ:
	case hasP || hasQ:
		if !hasP {
			p = q
		}
		if p.Cmp(one) <= 0 || new(big.Int).Mod(n, p).Sign() != 0 {
			return Inconsistent("prime does not divide the modulus")
		}
		other := new(big.Int).Div(n, p)
		if hasP {
			q = other
		} else {
			p, q = other, p
		}
	default:
		if e == 0 {
			return ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "RSA private key needs CKA_PUBLIC_EXPONENT or the primes")
		}
		p, q = factorRSA(n, e, d)
		if p == nil {
			return Inconsistent("CKA_PRIVATE_EXPONENT does not match the modulus and public exponent")
		}
	}
	if p.Cmp(one) <= 0 || q.Cmp(one) <= 0 || new(big.Int).Mul(p, q).Cmp(n) != 0 {
		return Inconsistent("primes do not multiply to the modulus")
	}
	pm1 := new(big.Int).Sub(p, one)
	qm1 := new(big.Int).Sub(q, one)
	if e == 0 {
		// e = d^-1 mod λ(n); the public exponent of a valid key is this one.
		g := new(big.Int).GCD(nil, nil, pm1, qm1)
		lambda := new(big.Int).Div(new(big.Int).Mul(pm1, qm1), g)
		inv := new(big.Int).ModInverse(d, lambda)
		if inv == nil || inv.BitLen() > 31 {
			return Inconsistent("no usable public exponent for this private exponent")
		}
		e = int(inv.Int64())
		a[ck.CKA_PUBLIC_EXPONENT] = inv.Bytes()
	}
	// The checks (d·e ≡ 1 mod p−1 and q−1, q invertible mod p) and the CRT
	// values in constant time (engine/alg/rsa: crypto/rsa's bigmod).
	dp, dq, qinv, err := rsa.CRTValues(&rsa.PrivateKey{N: n, E: e, D: d, P: p, Q: q})
	if err != nil {
		return Inconsistent("private exponent does not invert the public exponent, or the primes do not fit: " + err.Error())
	}
	derived := []struct {
		t uint64
		v []byte
	}{
		{ck.CKA_PRIME_1, p.FillBytes(make([]byte, len(dp)))},
		{ck.CKA_PRIME_2, q.FillBytes(make([]byte, len(dq)))},
		{ck.CKA_EXPONENT_1, dp},
		{ck.CKA_EXPONENT_2, dq},
		{ck.CKA_COEFFICIENT, qinv},
	}
	for _, dv := range derived {
		if given, ok := bigAttr(a, dv.t); ok {
			if given.BitLen() > 8*len(dv.v) || subtle.ConstantTimeCompare(given.FillBytes(make([]byte, len(dv.v))), dv.v) != 1 {
				return Inconsistent(attr.Describe(dv.t) + " does not match the key")
			}
			continue
		}
		a[dv.t] = new(big.Int).SetBytes(dv.v).Bytes() // minimal: leading zeros stripped, as before
	}
	a[ck.CKA_PUBLIC_KEY_INFO] = rsaSPKI(n, e)
	return nil
}

// factorRSA recovers the primes of n from a private exponent (NIST SP
// 800-56B rev. 2, appendix C.2), or returns nils if d does not fit.
func factorRSA(n *big.Int, e int, d *big.Int) (*big.Int, *big.Int) {
	one := big.NewInt(1)
	nm1 := new(big.Int).Sub(n, one)
	k := new(big.Int).Mul(d, big.NewInt(int64(e)))
	k.Sub(k, one)
	if k.Sign() == 0 || k.Bit(0) == 1 {
		return nil, nil
	}
	t := k.TrailingZeroBits()
	r := new(big.Int).Rsh(k, t)
	y, x := new(big.Int), new(big.Int)
	for g := int64(2); g < 200; g++ {
		y.Exp(big.NewInt(g), r, n)
		if y.Cmp(one) == 0 || y.Cmp(nm1) == 0 {
			continue
		}
		for i := uint(1); i <= t; i++ {
			x.Exp(y, big.NewInt(2), n)
			if x.Cmp(one) == 0 {
				p := new(big.Int).GCD(nil, nil, new(big.Int).Sub(y, one), n)
				if p.Cmp(one) == 0 || p.Cmp(n) == 0 {
					break
				}
				q := new(big.Int).Div(n, p)
				if p.Cmp(q) < 0 {
					p, q = q, p
				}
				return p, q
			}
			if x.Cmp(nm1) == 0 {
				break
			}
			y.Set(x)
		}
	}
	return nil, nil
}

// rsaPrivateKey returns the engine/alg/rsa form of an RSA private key object.
func rsaPrivateKey(o Key) (*rsa.PrivateKey, error) {
	a := o.Attrs()
	d, ok := bigAttr(a, ck.CKA_PRIVATE_EXPONENT)
	if !ok || !o.Complete() {
		return nil, ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "private values of the key are sealed")
	}
	e, err := rsaExponent(a[ck.CKA_PUBLIC_EXPONENT])
	if err != nil {
		return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored RSA key without usable public exponent")
	}
	big := func(t uint64) *big.Int { v, _ := bigAttr(a, t); return v }
	return &rsa.PrivateKey{
		N: big(ck.CKA_MODULUS), E: e, D: d,
		P: big(ck.CKA_PRIME_1), Q: big(ck.CKA_PRIME_2),
		Dp: big(ck.CKA_EXPONENT_1), Dq: big(ck.CKA_EXPONENT_2), Qinv: big(ck.CKA_COEFFICIENT),
	}, nil
}

// rsaPublic returns the modulus and public exponent of an RSA key object.
func rsaPublic(o Key) (*big.Int, int, error) {
	n, ok := bigAttr(o.Attrs(), ck.CKA_MODULUS)
	if !ok || n.Sign() == 0 {
		return nil, 0, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "RSA key without modulus")
	}
	e, err := rsaExponent(o.Attrs()[ck.CKA_PUBLIC_EXPONENT])
	if err != nil {
		return nil, 0, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "RSA key without usable public exponent")
	}
	return n, e, nil
}

// preparedRSA returns the RSA private key of o prepared for the engine,
// preparing it once per snapshot.
func preparedRSA(s Slot, o Key) (*guard.RSAKey, error) {
	if k, ok := cachedKey[*guard.RSAKey](o); ok {
		return k, nil
	}
	return preparedKey(o, nil, func() (*guard.RSAKey, error) {
		priv, err := rsaPrivateKey(o)
		if err != nil {
			return nil, err
		}
		k, err := s.Guard().RSAKey(priv) // after the known-answer test at the key's size
		if err != nil {
			if errors.Is(err, rsa.ErrInvalidKey) {
				s.Log().Error("stored key rejected by engine/alg/rsa", "object", o.Handle(), "err", err)
				return nil, fmt.Errorf("token: prepare key: %w: %w", ck.CKR_KEY_TYPE_INCONSISTENT, err)
			}
			return nil, s.EngineErr("prepare key", err)
		}
		return k, nil
	})
}

// rsaPrivate runs the private operation on the slot's engines (through
// engine/guard and engine/alg/rsa, which checks the result before release).
func rsaPrivate(op Op, c []byte) ([]byte, error) {
	k, err := preparedRSA(op.Slot(), op.Key())
	if err != nil {
		return nil, err
	}
	out, _, err := k.Private(bg, c)
	if err != nil {
		return nil, op.Slot().EngineErr(OpNames[op.Kind()], err)
	}
	return out, nil
}

// rsaPublic runs the public operation (software, public data only).
func rsaPublicOp(op Op, m []byte) ([]byte, error) {
	n, e, err := rsaPublic(op.Key())
	if err != nil {
		return nil, err
	}
	out, err := rsa.Public(n, e, m)
	if err != nil {
		if errors.Is(err, rsa.ErrInputRange) {
			return nil, fmt.Errorf("token: public operation: %w: %w", ck.CKR_DATA_INVALID, err)
		}
		return nil, fmt.Errorf("token: public operation: %w: %w", ck.CKR_FUNCTION_FAILED, err)
	}
	return out, nil
}
