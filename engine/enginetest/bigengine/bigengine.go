// Package bigengine is a small math/big engine for the device package's
// tests: it lets the client, the daemon and the wire protocol be tested
// without depending on the real engines' progress.
//
// It is variable time and must never back a real token; nothing outside
// tests imports it, and it does not register itself.
package bigengine

import (
	"context"
	"crypto/elliptic"
	"errors"
	"fmt"
	"math/big"

	"github.com/modexp-token/modexp-token/engine"
)

// Engine is the math/big engine. MaxBits limits the modulus (0 = none).
type Engine struct {
	MaxBits int
	// Plain leaves the engine only the core abilities: no native CRT and
	// no curves (engine.Limited), like a device that has neither.
	Plain bool
}

// New returns an engine accepting moduli up to maxBits bits (0 = no limit).
func New(maxBits int) *Engine { return &Engine{MaxBits: maxBits} }

// NewPlain is New without native CRT and curves (Engine.Plain).
func NewPlain(maxBits int) *Engine { return &Engine{MaxBits: maxBits, Plain: true} }

// Has is [engine.Limited]'s: every ability, none with Plain.
func (e *Engine) Has(engine.Ability) bool { return !e.Plain }

var errPlain = fmt.Errorf("bigengine: plain: %w", engine.ErrUnsupported)

type modulus struct{ n *big.Int }

func (m modulus) BitLen() int   { return m.n.BitLen() }
func (m modulus) Bytes() []byte { return m.n.Bytes() }

// Info describes the engine.
func (e *Engine) Info() engine.Info {
	in := engine.Info{
		Name: "bigtest", Model: "bigtest", MaxModulusBits: e.MaxBits,
		Curves: []string{"P-256", "P-384", "P-521"}, Cores: 2,
	}
	if e.Plain {
		in.Curves = nil
	}
	return in
}

// NewModulus checks n is odd and > 1.
func (e *Engine) NewModulus(n []byte) (engine.Modulus, error) {
	v := new(big.Int).SetBytes(n)
	if v.Bit(0) == 0 || v.Cmp(big.NewInt(1)) <= 0 {
		return nil, fmt.Errorf("bigengine: %w", engine.ErrInvalidModulus)
	}
	if e.MaxBits > 0 && v.BitLen() > e.MaxBits {
		return nil, fmt.Errorf("bigengine: %d bits: %w", v.BitLen(), engine.ErrOperandTooLarge)
	}
	return modulus{v}, nil
}

func pad(v *big.Int, n int) []byte { return v.FillBytes(make([]byte, n)) }

// expMode returns base^exp mod m.
func (e *Engine) expMode(ctx context.Context, m engine.Modulus, base, exp []byte, public bool) ([]byte, engine.Cost, error) {
	if err := ctx.Err(); err != nil {
		return nil, engine.Cost{}, err
	}
	n := m.(modulus).n
	b := new(big.Int).SetBytes(base)
	if b.Cmp(n) >= 0 {
		return nil, engine.Cost{}, errors.New("bigengine: base not below modulus")
	}
	r := new(big.Int).Exp(b, new(big.Int).SetBytes(exp), n)
	return pad(r, (n.BitLen()+7)/8), engine.Cost{Cycles: uint64(n.BitLen())}, nil
}

// Exp is [engine.Engine]'s: the exponent is secret.
func (e *Engine) Exp(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return e.expMode(ctx, m, base, exp, false)
}

// ExpVarTime is [engine.Engine]'s: the exponent is public.
func (e *Engine) ExpVarTime(ctx context.Context, m engine.Modulus, base, exp []byte) ([]byte, engine.Cost, error) {
	return e.expMode(ctx, m, base, exp, true)
}

// ExpCRT returns base^d mod p·q.
func (e *Engine) ExpCRT(ctx context.Context, k *engine.CRTKey, base []byte) ([]byte, engine.Cost, error) {
	if e.Plain {
		return nil, engine.Cost{}, errPlain
	}
	if err := ctx.Err(); err != nil {
		return nil, engine.Cost{}, err
	}
	p, q := new(big.Int).SetBytes(k.P), new(big.Int).SetBytes(k.Q)
	n := new(big.Int).Mul(p, q)
	c := new(big.Int).SetBytes(base)
	m1 := new(big.Int).Exp(new(big.Int).Mod(c, p), new(big.Int).SetBytes(k.DP), p)
	m2 := new(big.Int).Exp(new(big.Int).Mod(c, q), new(big.Int).SetBytes(k.DQ), q)
	h := new(big.Int).Sub(m1, m2)
	h.Mul(h, new(big.Int).SetBytes(k.QInv))
	h.Mod(h, p)
	h.Mul(h, q)
	h.Add(h, m2)
	return pad(h, (n.BitLen()+7)/8), engine.Cost{Cycles: uint64(n.BitLen())}, nil
}

// SelfTest checks 3^5 mod 7 = 5.
func (e *Engine) SelfTest(ctx context.Context) error {
	m, err := e.NewModulus([]byte{7})
	if err != nil {
		return err
	}
	r, _, err := e.ExpVarTime(ctx, m, []byte{3}, []byte{5})
	if err != nil {
		return err
	}
	if len(r) != 1 || r[0] != 5 {
		return fmt.Errorf("bigengine: self-test: %w", engine.ErrDevice)
	}
	return nil
}

// Close does nothing.
func (e *Engine) Close() error { return nil }

func (e *Engine) curve(name string) (elliptic.Curve, error) {
	if e.Plain {
		return nil, errPlain
	}
	switch name {
	case "P-256":
		return elliptic.P256(), nil
	case "P-384":
		return elliptic.P384(), nil
	case "P-521":
		return elliptic.P521(), nil
	}
	return nil, fmt.Errorf("bigengine: curve %q: %w", name, engine.ErrUnsupported)
}

// ScalarBaseMult returns k·G.
func (e *Engine) ScalarBaseMult(ctx context.Context, name string, k []byte) (x, y []byte, c engine.Cost, err error) {
	cv, err := e.curve(name)
	if err != nil {
		return nil, nil, c, err
	}
	bx, by := cv.ScalarBaseMult(k)
	n := (cv.Params().BitSize + 7) / 8
	return pad(bx, n), pad(by, n), c, nil
}

// ScalarMult returns k·(px, py).
func (e *Engine) ScalarMult(ctx context.Context, name string, k, px, py []byte) (x, y []byte, c engine.Cost, err error) {
	cv, err := e.curve(name)
	if err != nil {
		return nil, nil, c, err
	}
	X, Y := new(big.Int).SetBytes(px), new(big.Int).SetBytes(py)
	if !cv.IsOnCurve(X, Y) {
		return nil, nil, c, errors.New("bigengine: point not on curve")
	}
	bx, by := cv.ScalarMult(X, Y, k)
	n := (cv.Params().BitSize + 7) / 8
	return pad(bx, n), pad(by, n), c, nil
}

var (
	_ engine.CRTEngine = (*Engine)(nil)
	_ engine.ECEngine  = (*Engine)(nil)
)
