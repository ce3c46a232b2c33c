package device

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"fmt"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"sync"

	"github.com/modexp-token/modexp-token/engine"
)

// katWidths are the modulus widths of the client-side MODEXP tests; the
// device's own limit is added when it is smaller than the largest.
var katWidths = []int{256, 512, 1024, 2048}

// katCRTWidths are the widths of p·q for the native-CRT tests.
var katCRTWidths = []int{512, 2048}

// katReader is deterministic, so a failing test is reproducible.
func katReader(seed uint64) io.Reader {
	var s [32]byte
	s[0] = byte(seed)
	s[1] = byte(seed >> 8)
	return mrand.NewChaCha8(s)
}

func randBelowTop(r io.Reader, bits int) *big.Int {
	b := make([]byte, (bits+7)/8)
	io.ReadFull(r, b)
	v := new(big.Int).SetBytes(b)
	for i := bits; i < len(b)*8; i++ {
		v.SetBit(v, i, 0)
	}
	return v
}

type crtFixture struct {
	k    engine.CRTKey
	n, d *big.Int
}

var (
	crtOnce     sync.Once
	crtFixtures map[int]*crtFixture
)

// makeCRTFixtures makes one RSA key per CRT width (public exponent 65537).
func makeCRTFixtures() {
	crtFixtures = map[int]*crtFixture{}
	e := big.NewInt(65537)
	one := big.NewInt(1)
	for _, w := range katCRTWidths {
		for {
			p, err1 := rand.Prime(rand.Reader, w/2)
			q, err2 := rand.Prime(rand.Reader, w/2)
			if err1 != nil || err2 != nil || p.Cmp(q) == 0 {
				continue
			}
			n := new(big.Int).Mul(p, q)
			phi := new(big.Int).Mul(new(big.Int).Sub(p, one), new(big.Int).Sub(q, one))
			d := new(big.Int).ModInverse(e, phi)
			if d == nil || n.BitLen() != w {
				continue
			}
			f := &crtFixture{n: n, d: d}
			f.k = engine.CRTKey{
				P: p.Bytes(), Q: q.Bytes(),
				DP:   new(big.Int).Mod(d, new(big.Int).Sub(p, one)).Bytes(),
				DQ:   new(big.Int).Mod(d, new(big.Int).Sub(q, one)).Bytes(),
				QInv: new(big.Int).ModInverse(q, p).Bytes(),
			}
			crtFixtures[w] = f
			break
		}
	}
}

func (e *Engine) kat(ctx context.Context) error {
	widths := []int{}
	for _, w := range katWidths {
		if w <= e.limits.maxModBits {
			widths = append(widths, w)
		}
	}
	if m := e.limits.maxModBits; m < katWidths[len(katWidths)-1] && m >= 8 {
		widths = append(widths, m)
	}
	for _, w := range widths {
		r := katReader(uint64(w))
		n := randBelowTop(r, w)
		n.SetBit(n, w-1, 1)
		n.SetBit(n, 0, 1)
		base := new(big.Int).Mod(randBelowTop(r, w), n)
		exp := randBelowTop(r, w)
		m, err := e.NewModulus(n.Bytes())
		if err != nil {
			return fmt.Errorf("device: self-test %d bits: %w", w, err)
		}
		got, _, err := e.Exp(ctx, m, base.Bytes(), exp.Bytes())
		if err != nil {
			return fmt.Errorf("device: self-test modexp %d bits: %w", w, err)
		}
		want := new(big.Int).Exp(base, exp, n).FillBytes(make([]byte, (w+7)/8))
		if !bytes.Equal(got, want) {
			return fmt.Errorf("device: self-test modexp %d bits: wrong answer: %w", w, engine.ErrDevice)
		}
	}
	if e.crt {
		crtOnce.Do(makeCRTFixtures)
		for _, w := range katCRTWidths {
			if w > e.limits.maxCRTBits {
				continue
			}
			f := crtFixtures[w]
			c := new(big.Int).Mod(randBelowTop(katReader(uint64(w)+1), w), f.n)
			got, _, err := e.expCRT(ctx, &f.k, c.Bytes())
			if err != nil {
				return fmt.Errorf("device: self-test crt %d bits: %w", w, err)
			}
			want := new(big.Int).Exp(c, f.d, f.n).FillBytes(make([]byte, (w+7)/8))
			if !bytes.Equal(got, want) {
				return fmt.Errorf("device: self-test crt %d bits: wrong answer: %w", w, engine.ErrDevice)
			}
		}
	}
	for _, name := range e.info.Curves {
		var cv ecdh.Curve
		switch name {
		case "P-256":
			cv = ecdh.P256()
		case "P-384":
			cv = ecdh.P384()
		case "P-521":
			cv = ecdh.P521()
		default:
			continue // no reference at hand; the range checks still apply
		}
		if err := e.katCurve(ctx, name, cv); err != nil {
			return err
		}
	}
	return nil
}

// katCurve checks k·G and k2·(k·G) against crypto/ecdh.
func (e *Engine) katCurve(ctx context.Context, name string, cv ecdh.Curve) error {
	fb := map[string]int{"P-256": 32, "P-384": 48, "P-521": 66}[name]
	r := katReader(uint64(fb) + 7)
	scalar := func() []byte {
		k := make([]byte, fb)
		io.ReadFull(r, k)
		k[0] = 1 // below the order, not zero
		return k
	}
	k1, k2 := scalar(), scalar()
	ref := func(k []byte) ([]byte, error) {
		priv, err := cv.NewPrivateKey(k)
		if err != nil {
			return nil, err
		}
		return priv.PublicKey().Bytes()[1:], nil // X‖Y after the 0x04
	}
	want1, err := ref(k1)
	if err != nil {
		return fmt.Errorf("device: self-test %s: %w", name, err)
	}
	x, y, _, err := e.ecMul(ctx, name, k1, nil, nil)
	if err != nil {
		return fmt.Errorf("device: self-test %s k·G: %w", name, err)
	}
	if !bytes.Equal(append(x, y...), want1) {
		return fmt.Errorf("device: self-test %s k·G: wrong answer: %w", name, engine.ErrDevice)
	}
	// k2·(k1·G) = (k1·k2)·G, checked as ECDH: k2 with the peer key k1·G.
	priv2, err := cv.NewPrivateKey(k2)
	if err != nil {
		return fmt.Errorf("device: self-test %s: %w", name, err)
	}
	pub1, err := cv.NewPublicKey(append([]byte{4}, want1...))
	if err != nil {
		return fmt.Errorf("device: self-test %s: %w", name, err)
	}
	shared, err := priv2.ECDH(pub1)
	if err != nil {
		return fmt.Errorf("device: self-test %s: %w", name, err)
	}
	x2, _, _, err := e.ecMul(ctx, name, k2, want1[:fb], want1[fb:])
	if err != nil {
		return fmt.Errorf("device: self-test %s k·P: %w", name, err)
	}
	if !bytes.Equal(x2, shared) {
		return fmt.Errorf("device: self-test %s k·P: wrong answer: %w", name, engine.ErrDevice)
	}
	return nil
}
