package token

// ECDSA: CKM_EC_KEY_PAIR_GEN, CKM_ECDSA and CKM_ECDSA_SHA1..SHA512.
//
// Signatures are raw r‖s, each half the byte length of the curve's order
// (64 bytes for P-256, 96 for P-384, 132 for P-521). CKM_ECDSA signs its
// input as the hash, truncated to the order's bit length (FIPS 186-5), so
// any length is accepted; it is single-part. The CKM_ECDSA_SHA* mechanisms
// hash the data (single- and multi-part). A signature of the wrong length
// is CKR_SIGNATURE_LEN_RANGE, a wrong one CKR_SIGNATURE_INVALID.
//
// # Engines
//
// Signing and key generation take k·G (d·G) from an engine.ECEngine; the
// rest is engine/ecdsa's (hedged RFC 6979 nonces, mod-n arithmetic, and the
// verification of every signature with the software public point before
// release). For a key on curve C the slot uses:
//
//   - its own engine, when it is an engine.ECEngine whose Info().Curves
//     lists C;
//   - otherwise, with fallback "soft", the software engine;
//   - otherwise nothing: the slot cannot sign on C.
//
// With fallback "soft" the software engine also stands behind the slot's
// engine: a signature that fails engine/ecdsa's check (or a key pair whose
// engine-made public point differs from the software one), and every
// engine.ErrDevice, is counted as a fault (EngineStatus.Faults, the
// "engine fault detected" log line) and redone in software. With fallback
// "fail" it answers CKR_DEVICE_ERROR. Each signature is accounted for and
// logged like an RSA private operation (privateDone: key_bits is the
// order's bit length, device_time and cycles the engine's reported cost
// of k·G). There is no per-size known-answer test as for RSA keys: every
// signature is verified before release, key generation compares the
// engine's d·G with the software one, and the engine's own SelfTest ran
// when the slot opened.
//
// What the slot offers follows from that (C_GetMechanismList,
// C_GetMechanismInfo):
//
//   - CKM_EC_KEY_PAIR_GEN is listed only if the slot can sign on some
//     curve; its key sizes are those of these curves. Generating a key on
//     a curve it cannot serve is CKR_CURVE_NOT_SUPPORTED.
//   - The signature mechanisms are always listed, since verification runs
//     in software on every curve (key sizes 256..521); CKF_SIGN is set only
//     if the slot can sign on some curve. C_SignInit without CKF_SIGN, or
//     with a key on a curve the slot cannot serve, is CKR_MECHANISM_INVALID
//     (the message names the curve and the engine).
//   - Every EC mechanism has CKF_EC_F_P, CKF_EC_NAMEDCURVE and
//     CKF_EC_UNCOMPRESS: prime-field named curves, points uncompressed.
//
// # Hot path
//
// The private key is checked and its public point computed once per
// object snapshot (preparedECPrivate, like RSA keys); engine/ecdsa builds
// the point's comb table at the first signature. A public key object keeps
// its checked point, with a comb table from its second verification. A
// signature allocates its output and what the engine returns; the cost
// meter wrapping a non-software engine adds one small allocation.

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/ec"
	"github.com/modexp-token/modexp-token/engine/ecdsa"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/config"
)

// EC key sizes of the mechanisms (bits of the curve order): P-256 and
// secp256k1 to P-521.
const (
	ecMinBits = 256
	ecMaxBits = 521
)

// ecMechFlags are the EC capability flags of every EC mechanism.
const ecMechFlags = ck.CKF_EC_F_P | ck.CKF_EC_NAMEDCURVE | ck.CKF_EC_UNCOMPRESS

// ecdsaHashMechs are the hash-then-sign ECDSA mechanisms.
var ecdsaHashMechs = []struct {
	typ  uint64
	hash crypto.Hash
}{
	{ck.CKM_ECDSA_SHA1, crypto.SHA1}, {ck.CKM_ECDSA_SHA224, crypto.SHA224},
	{ck.CKM_ECDSA_SHA256, crypto.SHA256}, {ck.CKM_ECDSA_SHA384, crypto.SHA384},
	{ck.CKM_ECDSA_SHA512, crypto.SHA512},
}

func init() {
	ecKeys := []uint64{ck.CKK_EC}
	ecm := func(m *mechanism) *mechanism {
		m.keyTypes, m.minBits, m.maxBits = ecKeys, ecMinBits, ecMaxBits
		m.flags |= ecMechFlags
		m.available = ecAvailable
		return m
	}
	registerMechanism(ecm(&mechanism{
		typ: ck.CKM_EC_KEY_PAIR_GEN, flags: ck.CKF_GENERATE_KEY_PAIR,
		generateKeyPair: generateEC,
	}))
	registerMechanism(ecm(&mechanism{
		typ: ck.CKM_ECDSA, flags: ck.CKF_SIGN | ck.CKF_VERIFY,
		singlePart: true, checkKey: ecdsaCheckKey,
		sign: ecdsaSign, verify: ecdsaVerify,
	}))
	for _, hm := range ecdsaHashMechs {
		registerMechanism(ecm(&mechanism{
			typ: hm.typ, flags: ck.CKF_SIGN | ck.CKF_VERIFY, hash: hm.hash,
			checkKey: ecdsaCheckKey,
			sign:     ecdsaSign, verify: ecdsaVerify,
		}))
	}
}

// ecRoute is how a slot signs on one curve.
type ecRoute struct {
	primary  engine.ECEngine // computes k·G
	fallback engine.ECEngine // the software engine behind it (fallback "soft"), or nil
	metered  bool            // primary reports costs (it is not the software engine)
}

// ecRoutes is what a slot can do with EC keys. The slot's engine and policy
// do not change while it is open: computed once, on first use.
type ecRoutes struct {
	once             sync.Once
	byCurve          map[string]ecRoute // the curves the slot can sign on
	minBits, maxBits uint64             // their order sizes (0, 0: none)
}

// ecRoutes returns the slot's EC routes.
func (s *slot) ecRoutes() *ecRoutes {
	r := &s.ec
	r.once.Do(func() {
		// rsaOpts.Fallback is the shared software engine with fallback
		// "soft" (nil when the slot's engine is itself the software one).
		soft, _ := s.rsaOpts.Fallback.(engine.ECEngine)
		r.byCurve = map[string]ecRoute{}
		own, isEC := s.eng.(engine.ECEngine)
		for _, c := range ec.Curves() {
			var rt ecRoute
			switch {
			case isEC && slices.Contains(s.eng.Info().Curves, c.Name()):
				rt = ecRoute{primary: own, fallback: soft}
			case soft != nil && slices.Contains(soft.Info().Curves, c.Name()):
				rt = ecRoute{primary: soft}
			default:
				continue
			}
			rt.metered = rt.primary.Info().Name != config.DefaultEngine
			r.byCurve[c.Name()] = rt
			bits := uint64(c.OrderBits())
			if r.minBits == 0 || bits < r.minBits {
				r.minBits = bits
			}
			r.maxBits = max(r.maxBits, bits)
		}
	})
	return r
}

// ecEngines returns how the slot signs on curve, or false if it cannot.
func (s *slot) ecEngines(curve string) (ecRoute, bool) {
	rt, ok := s.ecRoutes().byCurve[curve]
	return rt, ok
}

// ecAvailable is the slot's offer of an EC mechanism (see the file
// comment).
func ecAvailable(s *slot, info *MechanismInfo) bool {
	r := s.ecRoutes()
	if info.Flags&ck.CKF_GENERATE_KEY_PAIR != 0 {
		if len(r.byCurve) == 0 {
			return false
		}
		info.MinKeySize, info.MaxKeySize = r.minBits, r.maxBits
		return true
	}
	if len(r.byCurve) == 0 {
		info.Flags &^= ck.CKF_SIGN // verification runs in software
	}
	return true
}

// ecdsaCheckKey: to sign, the slot must serve the key's curve.
func ecdsaCheckKey(op *operation) error {
	c, err := ecCurveOf(op.key.attrs)
	if err != nil {
		return ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "EC key without a usable curve: %v", err)
	}
	if op.kind != opSign {
		return nil
	}
	if _, ok := op.slot.ecEngines(c.Name()); !ok {
		return ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s on %s: %v (%s, fallback %s)", ck.Name("CKM_", op.mech.typ),
			c.Name(), errCurveNotServed, op.slot.eng.Info().Name, op.slot.cfg.Fallback)
	}
	return nil
}

// ecdsaSign signs hash (the input of CKM_ECDSA, the digest of the hashing
// mechanisms) with the operation's private key.
func ecdsaSign(op *operation, hash []byte) (sig []byte, err error) {
	s := op.slot
	start := time.Now()
	var cost engine.Cost
	bits := 0
	defer func() { s.privateDone(opNames[op.kind], bits, cost, time.Since(start), err) }()
	k, err := s.preparedECPrivate(op.key)
	if err != nil {
		return nil, err
	}
	bits = k.curve.OrderBits()
	eng := k.primary
	var meter *ecMeter
	if k.metered {
		meter = &ecMeter{ECEngine: k.primary}
		eng = meter
	}
	sig, err = k.key.Sign(bg, eng, hash, nil)
	if meter != nil {
		cost = meter.cost
	}
	if err == nil {
		return sig, nil
	}
	if !errors.Is(err, engine.ErrDevice) {
		return nil, s.engineErr("ECDSA sign", err)
	}
	s.onFault(err)
	if k.fallback == nil {
		return nil, s.engineErr("ECDSA sign", err)
	}
	sig, err = k.key.Sign(bg, k.fallback, hash, nil)
	if err != nil {
		return nil, s.engineErr("ECDSA sign (software fallback)", err)
	}
	return sig, nil
}

// ecdsaVerify checks a raw r‖s signature of hash with the operation's
// public key (software).
func ecdsaVerify(op *operation, hash, sig []byte) error {
	k, err := op.slot.preparedECPublic(op.key)
	if err != nil {
		return err
	}
	return k.verify(hash, sig)
}

// ecMeter adds up the cost an engine reports for the multiplications of
// one operation (engine/ecdsa does not return it).
type ecMeter struct {
	engine.ECEngine
	cost engine.Cost
}

// ScalarBaseMult is the engine's, with its cost recorded.
func (m *ecMeter) ScalarBaseMult(ctx context.Context, curve string, k []byte) (x, y []byte, c engine.Cost, err error) {
	x, y, c, err = m.ECEngine.ScalarBaseMult(ctx, curve, k)
	m.cost = m.cost.Add(c)
	return x, y, c, err
}

// ScalarMult is the engine's, with its cost recorded.
func (m *ecMeter) ScalarMult(ctx context.Context, curve string, k, px, py []byte) (x, y []byte, c engine.Cost, err error) {
	x, y, c, err = m.ECEngine.ScalarMult(ctx, curve, k, px, py)
	m.cost = m.cost.Add(c)
	return x, y, c, err
}

// generateEC is CKM_EC_KEY_PAIR_GEN: CKA_EC_PARAMS in the public template
// names the curve (given in the private template too, it must be equal).
func generateEC(s *slot, pub, priv attrMap) (uint64, attrMap, attrMap, error) {
	if _, ok := s.mechanismInfo(mechanisms[ck.CKM_EC_KEY_PAIR_GEN]); !ok {
		return 0, nil, nil, ck.Errorf(ck.CKR_MECHANISM_INVALID, "CKM_EC_KEY_PAIR_GEN: the slot's engine %s has no curve (fallback %s)",
			s.eng.Info().Name, s.cfg.Fallback)
	}
	params, ok := pub[ck.CKA_EC_PARAMS]
	if !ok {
		return 0, nil, nil, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "CKA_EC_PARAMS missing from the public key template")
	}
	c, err := ecCurveByParams(params)
	if err != nil {
		return 0, nil, nil, err
	}
	if pv, ok := priv[ck.CKA_EC_PARAMS]; ok && !bytes.Equal(pv, params) {
		return 0, nil, nil, inconsistent("CKA_EC_PARAMS differs between the public and private templates")
	}
	rt, ok := s.ecEngines(c.Name())
	if !ok {
		return 0, nil, nil, ck.Errorf(ck.CKR_CURVE_NOT_SUPPORTED, "%s: %v (%s, fallback %s)", c.Name(), errCurveNotServed,
			s.eng.Info().Name, s.cfg.Fallback)
	}
	d, x, y, err := ecdsa.GenerateKey(bg, rt.primary, c.Name(), nil)
	if err != nil && errors.Is(err, engine.ErrDevice) {
		s.onFault(err)
		if rt.fallback != nil {
			d, x, y, err = ecdsa.GenerateKey(bg, rt.fallback, c.Name(), nil)
		}
	}
	if err != nil {
		return 0, nil, nil, s.engineErr("generate EC key", err)
	}
	point := c.MarshalECPoint(x, y)
	pubVals := attrMap{ck.CKA_EC_POINT: point}
	privVals := attrMap{ck.CKA_EC_PARAMS: bytes.Clone(params), ck.CKA_VALUE: d, ck.CKA_EC_POINT: point}
	return ck.CKK_EC, pubVals, privVals, nil
}
