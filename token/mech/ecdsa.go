package mech

// ECDSA: CKM_EC_KEY_PAIR_GEN, CKM_ECDSA, CKM_ECDSA_SHA1..SHA512 and
// CKM_ECDSA_SHA3_224..SHA3_512.
//
// Signatures are raw r‖s, each half the byte length of the curve's order
// (48 bytes for P-192, 56 for P-224, 64 for P-256, 96 for P-384, 132 for P-521). CKM_ECDSA signs its
// input as the hash, truncated to the order's bit length (FIPS 186-5), so
// any length is accepted; it is single-part. The CKM_ECDSA_SHA* mechanisms
// hash the data (single- and multi-part). A signature of the wrong length
// is CKR_SIGNATURE_LEN_RANGE, a wrong one CKR_SIGNATURE_INVALID.
//
// # Engines
//
// Signing and key generation take k·G (d·G) from an engine.ECEngine; the
// rest is engine/alg/ecdsa's (hedged RFC 6979 nonces, mod-n arithmetic, and the
// verification of every signature with the software public point before
// release). Which engine serves curve C is the slot's guard's decision
// (engine/guard, Guard.EC): the slot's own engine when its Info().Curves
// lists C, else the software engine under fallback "soft", else none. Every
// signature runs through the route (ECRoute.Sign), as every private
// operation of the slot does: a signature that fails engine/alg/ecdsa's check (or a key
// pair whose engine-made point differs from the software one) and every
// engine.ErrDevice is counted as a fault and, under fallback "soft", redone
// in software; under "fail" it answers CKR_DEVICE_ERROR. Each signature is
// accounted for and logged by the guard like an RSA private operation
// (key_bits is the order's bit length, device_time and cycles the engine's
// reported cost of k·G). There is no per-size known-answer test as for RSA
// keys: every signature is checked before release (engine/alg/ecdsa: by
// relation on P-256, by a full verification elsewhere), key generation
// compares the engine's d·G with the software one, and the engine's own
// SelfTest ran when the slot opened, or for the software engine (whose
// SelfTest runs ec.SelfTest) before the slot's first known-answer test.
//
// What the slot offers follows from that (C_GetMechanismList,
// C_GetMechanismInfo):
//
//   - CKM_EC_KEY_PAIR_GEN is listed only if the slot can sign on some
//     curve; its key sizes are those of these curves. Generating a key on
//     a curve it cannot serve is CKR_CURVE_NOT_SUPPORTED.
//   - The signature mechanisms are always listed, since verification runs
//     in software on every curve (key sizes 224..521); CKF_SIGN is set only
//     if the slot can sign on some curve. C_SignInit without CKF_SIGN, or
//     with a key on a curve the slot cannot serve, is CKR_MECHANISM_INVALID
//     (the message names the curve and the engine).
//   - Every EC mechanism has CKF_EC_F_P, CKF_EC_NAMEDCURVE and
//     CKF_EC_UNCOMPRESS: prime-field named curves, points uncompressed.
//
// # Hot path
//
// The private key is checked and its public point computed once per
// object snapshot (preparedECPrivate, like RSA keys); engine/alg/ecdsa builds
// the point's comb table at the first signature. A public key object keeps
// its checked point, with a comb table from its second verification. A
// signature allocates its output, what the engine returns and the cost
// meter of its route.

import (
	"bytes"
	"crypto"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/ecdsa"
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// EC key sizes of the mechanisms (bits of the curve order): P-192 to
// P-521.
const (
	ecMinBits = 192
	ecMaxBits = 521
)

// ecMechFlags are the EC capability flags of every EC mechanism.
const ecMechFlags = ck.CKF_EC_F_P | ck.CKF_EC_NAMEDCURVE | ck.CKF_EC_UNCOMPRESS

// ECDSAHashMechs are the hash-then-sign ECDSA mechanisms.
var ECDSAHashMechs = []hashMech{
	{ck.CKM_ECDSA_SHA1, crypto.SHA1}, {ck.CKM_ECDSA_SHA224, crypto.SHA224},
	{ck.CKM_ECDSA_SHA256, crypto.SHA256}, {ck.CKM_ECDSA_SHA384, crypto.SHA384},
	{ck.CKM_ECDSA_SHA512, crypto.SHA512},
	{ck.CKM_ECDSA_SHA3_224, crypto.SHA3_224}, {ck.CKM_ECDSA_SHA3_256, crypto.SHA3_256},
	{ck.CKM_ECDSA_SHA3_384, crypto.SHA3_384}, {ck.CKM_ECDSA_SHA3_512, crypto.SHA3_512},
}

// ecBase is the common part of the EC mechanisms.
func ecBase(typ uint64) MechBase {
	return MechBase{Type: typ, Ext: ecMechFlags, KeyTypes: []uint64{ck.CKK_EC}, MinBits: ecMinBits, MaxBits: ecMaxBits, Available: ecAvailable}
}

// ecdsaMechanisms is the ECDSA family.
func ecdsaMechanisms() []Mechanism {
	sig := func(typ uint64, h crypto.Hash) Mechanism { return &ecdsaMech{ecBase(typ), hashThenSign{h}} }
	return append([]Mechanism{&ecKeyPairGen{ecBase(ck.CKM_EC_KEY_PAIR_GEN)}, sig(ck.CKM_ECDSA, 0)}, perHash(ECDSAHashMechs, sig)...)
}

// ecdsaMech is CKM_ECDSA (hash 0: one-shot, the input is the hash) or a
// hash-then-sign CKM_ECDSA_SHA*.
type ecdsaMech struct {
	MechBase
	hashThenSign
}

// ecAvailable is the slot's offer of an EC mechanism (see the file
// comment).
func ecAvailable(s Slot, info *Info) bool {
	minBits, maxBits := s.Guard().ECOrderBits()
	if info.Flags&ck.CKF_GENERATE_KEY_PAIR != 0 {
		if maxBits == 0 {
			return false
		}
		info.MinKeySize, info.MaxKeySize = uint64(minBits), uint64(maxBits)
		return true
	}
	if maxBits == 0 {
		info.Flags &^= ck.CKF_SIGN // verification runs in software
	}
	return true
}

// CheckKey: to sign, the slot must serve the key's curve.
func (m *ecdsaMech) CheckKey(op Op) error {
	c, err := ecCurveOf(op.Key().Attrs())
	if err != nil {
		return ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "EC key without a usable curve: %v", err)
	}
	if op.Kind() != OpSign {
		return nil
	}
	if _, ok := op.Slot().Guard().EC(c.Name()); !ok {
		return ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s on %s: %v (%s, fallback %s)", m.Name(),
			c.Name(), errCurveNotServed, op.Slot().EngineName(), op.Slot().Policy().Fallback)
	}
	return nil
}

// Sign signs hash (the input of CKM_ECDSA, the digest of the hashing
// mechanisms) with the operation's private key.
func (m *ecdsaMech) Sign(op Op, hash []byte) (sig []byte, err error) {
	s := op.Slot()
	k, err := preparedECPrivate(s, op.Key())
	if err != nil {
		return nil, err
	}
	dst := op.OutBuf(2 * k.curve.OrderByteLen())
	sig, _, err = k.route.SignTo(bg, k.key, dst, hash, nil)
	if err != nil {
		return nil, s.EngineErr("ECDSA sign", err)
	}
	return sig, nil
}

// Verify checks a raw r‖s signature of hash with the operation's public
// key (software).
func (m *ecdsaMech) Verify(op Op, hash, sig []byte) error {
	k, err := preparedECPublic(op.Slot(), op.Key())
	if err != nil {
		return err
	}
	return k.Verify(hash, sig)
}

// ecKeyPairGen is CKM_EC_KEY_PAIR_GEN.
type ecKeyPairGen struct{ MechBase }

// GenerateKeyPair: CKA_EC_PARAMS in the public template names the curve
// (given in the private template too, it must be equal).
func (m *ecKeyPairGen) GenerateKeyPair(s Slot, pub, priv attr.Map) (attr.Map, attr.Map, error) {
	if _, ok := s.MechanismInfo(m); !ok {
		return nil, nil, ck.Errorf(ck.CKR_MECHANISM_INVALID, "CKM_EC_KEY_PAIR_GEN: the slot's engine %s has no curve (fallback %s)",
			s.EngineName(), s.Policy().Fallback)
	}
	params, ok := pub[ck.CKA_EC_PARAMS]
	if !ok {
		return nil, nil, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "CKA_EC_PARAMS missing from the public key template")
	}
	c, err := ecCurveByParams(params)
	if err != nil {
		return nil, nil, err
	}
	if pv, ok := priv[ck.CKA_EC_PARAMS]; ok && !bytes.Equal(pv, params) {
		return nil, nil, Inconsistent("CKA_EC_PARAMS differs between the public and private templates")
	}
	rt, ok := s.Guard().EC(c.Name())
	if !ok {
		return nil, nil, ck.Errorf(ck.CKR_CURVE_NOT_SUPPORTED, "%s: %v (%s, fallback %s)", c.Name(), errCurveNotServed,
			s.EngineName(), s.Policy().Fallback)
	}
	var d, x, y []byte
	_, err = rt.Run(bg, func(e engine.ECEngine) error {
		d, x, y, err = ecdsa.GenerateKey(bg, e, c.Name(), nil)
		return err
	})
	if err != nil {
		return nil, nil, s.EngineErr("generate EC key", err)
	}
	point := c.MarshalECPoint(x, y)
	pubVals := attr.Map{ck.CKA_EC_POINT: point}
	privVals := attr.Map{ck.CKA_EC_PARAMS: bytes.Clone(params), ck.CKA_VALUE: d, ck.CKA_EC_POINT: point}
	return pubVals, privVals, nil
}
