package guard

import (
	"context"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/subtle"
	"crypto/x509"
	"embed"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/rsa"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
)

// Known-answer tests (KATs). Each engine path of a guard runs one before
// its first use: an RSA private operation per test-key size, two scalar
// multiplications per curve, a modular exponentiation per modulus size.
// The inputs are fixed and public (the RSA test keys in katkeys/, values
// drawn from SHAKE256 of a label), never a user's key; the expected
// answers are the SHA-256 digests in kat_answers.go, which
// TestKATAnswers recomputes independently (math/big on the public test
// values). A passed test is remembered for the guard's life; a failed one
// for katRetry, after which the next use runs it again (a device may come
// back).

// katRetry is how long a failed known-answer test stands before it is run
// again.
const katRetry = 10 * time.Second

// katRSASizes are the sizes of the RSA test keys. A key of b bits is
// vouched for by the test of the largest size not above b that the
// primary takes (the smallest for keys below 1024 bits).
var katRSASizes = []int{1024, 2048, 3072, 4096}

// katExpSizes are the modulus sizes of the exponentiation test (DSA, DH),
// chosen for a modulus as katRSASizes are for a key.
var katExpSizes = []int{1024, 2048, 3072, 4096}

//go:embed katkeys/*.pem
var katKeyFiles embed.FS

// katEntry is the outcome of one known-answer test.
type katEntry struct {
	passed   bool
	err      error     // the failure, while it stands
	failedAt time.Time // when it failed
}

// katSize picks, among sizes, the one that vouches for bits on an engine
// taking at most max bits (0: any): the largest not above bits and max,
// else the smallest if the engine takes it; 0 if none.
func katSize(sizes []int, bits, max int) int {
	pick := 0
	for _, s := range sizes {
		if s <= bits && (max == 0 || s <= max) {
			pick = s
		}
	}
	if pick == 0 && (max == 0 || sizes[0] <= max) {
		pick = sizes[0]
	}
	return pick
}

// katRun runs the known-answer test name by test, unless it passed
// before or failed less than katRetry ago (then its failure is returned
// again). A failure is counted, logged and returned wrapping
// engine.ErrDevice; an error wrapping engine.ErrOperandTooLarge or
// engine.ErrUnsupported (the engine cannot take the test at all) is
// returned as it is, neither counted nor remembered.
func (g *Guard) katRun(name string, test func(ctx context.Context) error) error {
	if _, ok := g.katOK.Load(name); ok {
		return nil // the hot path (every EC operation asks): no lock
	}
	g.deferredSelfTest() // the engine's first use (DeferSelfTest), before katMu: it is no KAT
	g.katMu.Lock()
	defer g.katMu.Unlock() // one test at a time: the second caller waits for the first's verdict
	if e := g.kats[name]; e != nil {
		if e.passed {
			return nil
		}
		if time.Since(e.failedAt) < katRetry {
			return e.err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), katTimeout)
	defer cancel()
	start := time.Now()
	err := test(ctx)
	if err != nil && (errors.Is(err, engine.ErrOperandTooLarge) || errors.Is(err, engine.ErrUnsupported)) {
		return err
	}
	if g.kats == nil {
		g.kats = map[string]*katEntry{}
	}
	if err == nil {
		g.kats[name] = &katEntry{passed: true}
		g.katOK.Store(name, struct{}{})
		g.log.Info("engine known-answer test passed", "engine", g.name(), "test", name,
			"duration", time.Since(start))
		return nil
	}
	if !errors.Is(err, engine.ErrDevice) {
		err = fmt.Errorf("%w (%w)", err, engine.ErrDevice)
	}
	err = fmt.Errorf("guard: known-answer test %s: %w", name, err)
	g.kats[name] = &katEntry{err: err, failedAt: time.Now()}
	g.katFailures.Add(1)
	g.faults.Add(1)
	g.log.Error("engine known-answer test failed", "engine", g.name(), "test", name,
		"fallback", g.fallback != nil, "err", err)
	return err
}

// katPassed reports the names of the passed known-answer tests.
func (g *Guard) katPassedNames() []string {
	g.katMu.Lock()
	defer g.katMu.Unlock()
	var names []string
	for n, e := range g.kats {
		if e.passed {
			names = append(names, n)
		}
	}
	return names
}

// errWrongAnswer is a known-answer test's wrong result.
var errWrongAnswer = errors.New("guard: wrong answer")

// checkAnswer compares the digest of got with the expected answer of name.
func checkAnswer(name string, got ...[]byte) error {
	want, ok := katAnswers[name]
	if !ok {
		return fmt.Errorf("guard: no known answer for %s: %w", name, engine.ErrUnsupported)
	}
	h := sha256.New()
	for _, b := range got {
		h.Write(b)
	}
	if subtle.ConstantTimeCompare(h.Sum(nil), want[:]) != 1 {
		return fmt.Errorf("%w: %w (%w)", errWrongAnswer, rsa.ErrFault, engine.ErrDevice)
	}
	return nil
}

// katBytes is n bytes of SHAKE256 of the label and the size: the fixed
// public inputs of the tests.
func katBytes(label string, bits, n int) []byte {
	h := sha3.NewSHAKE256()
	h.Write([]byte("modexp-token guard KAT " + label))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(bits))
	h.Write(b[:])
	out := make([]byte, n)
	h.Read(out)
	return out
}

// katRSAKey is the RSA test key of bits.
func katRSAKey(bits int) (*rsa.PrivateKey, error) {
	b, err := katKeyFiles.ReadFile(fmt.Sprintf("katkeys/rsa%d.pem", bits))
	if err != nil {
		return nil, fmt.Errorf("guard: RSA test key %d: %w", bits, err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("guard: RSA test key %d: no PEM block", bits)
	}
	k, err := x509.ParsePKCS1PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("guard: RSA test key %d: %w", bits, err)
	}
	return &rsa.PrivateKey{N: k.N, E: k.E, D: k.D, P: k.Primes[0], Q: k.Primes[1]}, nil
}

// katRSAInput is the input of the RSA test at bits: fixed bytes below the
// modulus (the top byte cleared).
func katRSAInput(bits int) []byte {
	c := katBytes("rsa input", bits, (bits+7)/8)
	c[0] = 0
	return c
}

// katRSAName names the RSA test at bits.
func katRSAName(bits int, expBlind bool) string {
	if expBlind {
		return fmt.Sprintf("rsa-%d-blinded", bits)
	}
	return fmt.Sprintf("rsa-%d", bits)
}

// katRSA runs the private operation of the RSA test key of bits on eng
// alone (options as the keys it vouches for) and checks its answer.
func katRSA(ctx context.Context, eng engine.Engine, bits int, expBlind bool) error {
	priv, err := katRSAKey(bits)
	if err != nil {
		return err
	}
	k, err := rsa.NewKey(eng, priv, rsa.Options{ExponentBlinding: expBlind})
	if err != nil {
		return fmt.Errorf("guard: RSA test key on the engine: %w", err)
	}
	got, _, err := k.Private(ctx, katRSAInput(bits))
	if err != nil {
		return err
	}
	return checkAnswer(fmt.Sprintf("rsa-%d", bits), got)
}

// katExpInputs are the modulus (odd, of exactly bits bits), base (below
// it) and secret-path exponent (256 bits) of the exponentiation test.
func katExpInputs(bits int) (m, base, exp []byte) {
	n := (bits + 7) / 8
	m = katBytes("exp modulus", bits, n)
	m[0] &= 0xff >> (8*n - bits)
	m[0] |= 0x80 >> (8*n - bits)
	m[n-1] |= 1
	base = katBytes("exp base", bits, n)
	base[0] = 0
	exp = katBytes("exp exponent", bits, 32)
	return m, base, exp
}

// katExp runs the exponentiation test of bits on eng (Exp: the
// constant-time path that private values take).
func katExp(ctx context.Context, eng engine.Engine, bits int) error {
	m, base, exp := katExpInputs(bits)
	mod, err := eng.NewModulus(m)
	if err != nil {
		return fmt.Errorf("guard: test modulus: %w", err)
	}
	got, _, err := eng.Exp(ctx, mod, base, exp)
	if err != nil {
		return err
	}
	return checkAnswer(fmt.Sprintf("exp-%d", bits), got)
}

// katECScalars are the two scalars of the curve test: below the order.
func katECScalars(c *ec.Curve) (k1, k2 []byte) {
	n := c.OrderByteLen()
	k1 = katBytes("ec k1 "+c.Name(), c.OrderBits(), n)
	k2 = katBytes("ec k2 "+c.Name(), c.OrderBits(), n)
	k1[0], k2[0] = 0, 0 // below the order (whose top byte is not zero)
	return k1, k2
}

// katEC runs k1·G and then k2·(k1·G) on curve on eng and checks both.
func katEC(ctx context.Context, eng engine.ECEngine, curve string) error {
	c, err := ec.CurveByName(curve)
	if err != nil {
		return fmt.Errorf("guard: curve test: %w (%w)", err, engine.ErrUnsupported)
	}
	k1, k2 := katECScalars(c)
	x1, y1, _, err := eng.ScalarBaseMult(ctx, curve, k1)
	if err != nil {
		return err
	}
	if err := checkAnswer("ec-base-"+curve, x1, y1); err != nil {
		return err
	}
	x2, y2, _, err := eng.ScalarMult(ctx, curve, k2, x1, y1)
	if err != nil {
		return err
	}
	return checkAnswer("ec-mult-"+curve, x2, y2)
}
