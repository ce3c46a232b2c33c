package token

// Diffie–Hellman keys (CKK_DH, PKCS #3) and mechanisms:
// CKM_DH_PKCS_KEY_PAIR_GEN and CKM_DH_PKCS_DERIVE.
//
//   - Both keys carry CKA_PRIME and CKA_BASE, checked by engine/dh: the
//     RFC 7919 groups ffdhe2048/3072/4096 are recognised by their prime
//     (with g = 2), and so is any safe prime whose base has order q; other
//     primes of 1024 to 8192 bits are accepted without a known q. A bad
//     group is CKR_ATTRIBUTE_VALUE_INVALID on import,
//     CKR_DOMAIN_PARAMS_INVALID at generation.
//   - The public key's CKA_VALUE is y: 1 < y < p−1, and in the subgroup of
//     order q when q is known. The private key's CKA_VALUE is x (sealed),
//     in [1, q−1] (or [1, p−2]); its CKA_VALUE_BITS is x's bit length. At
//     generation CKA_VALUE_BITS in the private template asks for an x of
//     exactly that many bits; otherwise x has twice the group's strength
//     in bits for an RFC 7919 group (225 for ffdhe2048, RFC 7919 §5.2 and
//     OpenSSL's default) and is uniform in the range for other groups.
//   - Both keys get CKA_PUBLIC_KEY_INFO (dhKeyAgreement, PKCS #3).
//   - CKM_DH_PKCS_DERIVE takes the peer's public value as its parameter
//     (big-endian bytes), checks it like an imported y (a bad one is
//     CKR_MECHANISM_PARAM_INVALID), and makes a secret key (C_DeriveKey's
//     rules, derive.go) from Z = y^x mod p, given at the length of p.
//     A shorter key (CKA_VALUE_LEN, or an AES key type) takes the last
//     bytes of Z (the least significant ones), as SoftHSMv2 does.
//
// Both exponentiations with x (g^x at generation, y^x at derivation) run on
// the slot's engine through engine/dh, blinded and checked before release
// (a wrong result: a fault, CKR_DEVICE_ERROR or the software fallback).

import (
	"bytes"
	"encoding/asn1"
	"errors"
	"math/big"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/dh"
	"github.com/modexp-token/modexp-token/engine/guard"
	"github.com/modexp-token/modexp-token/token/ck"
)

// DH key sizes of the mechanisms (bits of p).
const (
	dhMinBits = dh.MinBits
	dhMaxBits = dh.MaxBits
)

func init() {
	domain := attrSpec{kind: kindBytes, flags: fRequired | fFixed}
	registerKeyType(&keyType{
		typ: ck.CKK_DH,
		publicSchema: publicKeySchema.with(schema{
			ck.CKA_PRIME: domain, ck.CKA_BASE: domain,
			ck.CKA_VALUE: {kind: kindBytes, flags: fRequired | fFixed | fGenerated},
		}),
		privateSchema: privateKeySchema.with(schema{
			ck.CKA_PRIME: domain, ck.CKA_BASE: domain,
			ck.CKA_VALUE:      {kind: kindBytes, flags: fRequired | fFixed | fGenerated | fSecret},
			ck.CKA_VALUE_BITS: {kind: kindULong, flags: fFixed},
		}),
		completePublic:  completeDHPublic,
		completePrivate: completeDHPrivate,
		domainSchema:    dhDomainSchema,
		completeDomain:  completeDHDomain,
		bits:            func(a attrMap) int { return new(big.Int).SetBytes(a[ck.CKA_PRIME]).BitLen() },
	})
}

// dhBase is the common part of the DH mechanisms.
func dhBase(typ uint64) mechBase {
	return mechBase{typ: typ, keyTypes: []uint64{ck.CKK_DH}, minBits: dhMinBits, maxBits: dhMaxBits, available: dhAvailable}
}

// dhMechanisms are CKM_DH_PKCS_KEY_PAIR_GEN and CKM_DH_PKCS_DERIVE.
func dhMechanisms() []mechanism {
	return []mechanism{&dhKeyPairGen{dhBase(ck.CKM_DH_PKCS_KEY_PAIR_GEN)}, &dhDerive{mechBase: dhBase(ck.CKM_DH_PKCS_DERIVE)}}
}

// dhDerive is CKM_DH_PKCS_DERIVE bound to the peer's public value.
type dhDerive struct {
	mechBase
	peer []byte
}

// dhAvailable: the slot can run DH at the sizes its engine (or fallback)
// takes.
func dhAvailable(s *slot, info *MechanismInfo) bool {
	max := uint64(s.guard.MaxExpBits())
	if max == 0 || max >= info.MaxKeySize {
		return true
	}
	if max < info.MinKeySize {
		return false
	}
	info.MaxKeySize = max
	return true
}

// dhGroupOf reads and checks CKA_PRIME and CKA_BASE; a bad group is
// answered with code.
func dhGroupOf(a attrMap, code ck.Error) (*dh.Group, error) {
	var v [2]*big.Int
	for i, t := range []uint64{ck.CKA_PRIME, ck.CKA_BASE} {
		b, ok := a[t]
		if !ok {
			return nil, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "%s missing", describe(t))
		}
		v[i] = new(big.Int).SetBytes(b)
	}
	g, err := dh.LookupGroup(v[0], v[1])
	if err != nil {
		return nil, ck.Errorf(code, "DH domain parameters: %v", err)
	}
	return g, nil
}

// oidDHKeyAgreement is dhKeyAgreement (PKCS #3).
var oidDHKeyAgreement = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 3, 1}

// dhSPKI is the DER SubjectPublicKeyInfo of a DH public value.
func dhSPKI(g *dh.Group, y []byte) []byte {
	return integerSPKI(oidDHKeyAgreement, struct{ P, G *big.Int }{g.P, g.G}, new(big.Int).SetBytes(y))
}

func completeDHPublic(a attrMap) error {
	g, err := dhGroupOf(a, ck.CKR_ATTRIBUTE_VALUE_INVALID)
	if err != nil {
		return err
	}
	if err := dh.CheckPublic(g, a[ck.CKA_VALUE]); err != nil {
		return invalid(ck.CKA_VALUE, err.Error())
	}
	y := new(big.Int).SetBytes(a[ck.CKA_VALUE]).Bytes()
	a[ck.CKA_VALUE] = y
	a[ck.CKA_PUBLIC_KEY_INFO] = dhSPKI(g, y)
	return nil
}

func completeDHPrivate(a attrMap) error {
	g, err := dhGroupOf(a, ck.CKR_ATTRIBUTE_VALUE_INVALID)
	if err != nil {
		return err
	}
	y, err := dh.PublicValue(g, a[ck.CKA_VALUE])
	if err != nil {
		return invalid(ck.CKA_VALUE, "private value out of range")
	}
	x := new(big.Int).SetBytes(a[ck.CKA_VALUE]) // range-checked above; the length is public
	if v, ok := a[ck.CKA_VALUE_BITS]; ok {
		if bits, _ := ck.ParseULong(v); bits != uint64(x.BitLen()) {
			return inconsistent("CKA_VALUE_BITS does not match CKA_VALUE")
		}
	}
	a[ck.CKA_VALUE_BITS] = ck.ULong(uint64(x.BitLen()))
	a[ck.CKA_PUBLIC_KEY_INFO] = dhSPKI(g, y)
	return nil
}

// withParam decodes CKM_DH_PKCS_DERIVE's parameter: the peer's public
// value, big-endian (checked against the key's group at derivation).
func (m *dhDerive) withParam(cm *Mechanism) (mechanism, error) {
	if len(cm.Param) == 0 || len(cm.Param) > dhMaxBits/8+1 || cm.PSS != nil || cm.OAEP != nil {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKM_DH_PKCS_DERIVE needs the peer's public value (1 to %d bytes), got %d", dhMaxBits/8, len(cm.Param))
	}
	b := *m
	b.peer = bytes.Clone(cm.Param)
	return &b, nil
}

// dhPrivateKey is a DH private key object prepared for derivation.
type dhPrivateKey struct {
	key  *guard.DHKey
	bits int
}

// preparedDHPrivate returns the DH key of o prepared for the slot's
// engines, once per object snapshot.
func (s *slot) preparedDHPrivate(o *object) (*dhPrivateKey, error) {
	var g *dh.Group
	return prepareExpKey(s, o, "DH", func() (int, error) {
		var err error
		g, err = dhGroupOf(o.attrs, ck.CKR_KEY_TYPE_INCONSISTENT)
		if err != nil {
			return 0, err
		}
		return g.P.BitLen(), nil
	}, func(rt guard.ExpRoute) (*dhPrivateKey, error) {
		// CKA_VALUE_BITS (x's bit length, public) lets a short x take
		// engine/dh's split exponents.
		vb, _ := ck.ParseULong(o.attrs[ck.CKA_VALUE_BITS])
		key, err := rt.DHKey(g, o.attrs[ck.CKA_VALUE], dh.Options{ValueBits: int(min(vb, dhMaxBits))})
		if err != nil {
			return nil, err
		}
		return &dhPrivateKey{key: key, bits: g.P.BitLen()}, nil
	}, dh.ErrInvalidKey, dh.ErrInvalidParameters)
}

// derive is CKM_DH_PKCS_DERIVE's work: Z = y^x mod p, cut to the
// template's length (its last bytes).
func (m *dhDerive) derive(op *operation, tmpl attrMap) (value []byte, err error) {
	s := op.slot
	start := time.Now()
	var cost engine.Cost
	bits := 0
	defer func() { s.guard.Done("derive", bits, cost, time.Since(start), err) }()
	k, err := s.preparedDHPrivate(op.key)
	if err != nil {
		return nil, err
	}
	bits = k.bits
	n, err := derivedKeyLen(tmpl, (bits+7)/8)
	if err != nil {
		return nil, err
	}
	z, cost, err := k.key.Derive(bg, m.peer)
	if err != nil {
		if errors.Is(err, dh.ErrInvalidPublic) {
			return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "DH peer public value: %v", err)
		}
		return nil, s.engineErr("DH derive", err)
	}
	out := bytes.Clone(z[len(z)-n:])
	clear(z)
	return out, nil
}

// dhKeyPairGen is CKM_DH_PKCS_KEY_PAIR_GEN.
type dhKeyPairGen struct{ mechBase }

// generateKeyPair: CKA_PRIME and CKA_BASE from the public template (equal
// if repeated in the private one), CKA_VALUE_BITS optionally in the
// private template.
func (m *dhKeyPairGen) generateKeyPair(s *slot, pub, priv attrMap) (attrMap, attrMap, error) {
	g, err := dhGroupOf(pub, ck.CKR_DOMAIN_PARAMS_INVALID)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range []uint64{ck.CKA_PRIME, ck.CKA_BASE} {
		if v, ok := priv[t]; ok && new(big.Int).SetBytes(v).Cmp(new(big.Int).SetBytes(pub[t])) != 0 {
			return nil, nil, inconsistent(describe(t) + " differs between the public and private templates")
		}
	}
	// Without CKA_VALUE_BITS an RFC 7919 group gets x of twice its
	// strength (225 bits for ffdhe2048, RFC 7919 §5.2, as OpenSSL and so
	// SoftHSMv2 draw), which derive then exponentiates on the short path;
	// any other group gets x uniform below q (or p−1).
	valueBits := g.ShortValueBits()
	if v, ok := priv[ck.CKA_VALUE_BITS]; ok {
		b, _ := ck.ParseULong(v)
		if b < 2 || b >= uint64(g.P.BitLen()-1) {
			return nil, nil, invalid(ck.CKA_VALUE_BITS, "out of range for the prime")
		}
		valueBits = int(b)
	}
	info, ok := s.mechanismInfo(m)
	if bits := uint64(g.P.BitLen()); !ok || bits < info.MinKeySize || bits > info.MaxKeySize {
		return nil, nil, ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "%d-bit DH key on engine %s (fallback %s)", bits, s.engineName(), s.cfg.Fallback)
	}
	rt, _ := s.guard.Exp(g.P.BitLen())
	var x, y []byte
	err = rt.Run(func(e engine.Engine) error {
		x, y, _, err = dh.GenerateKey(bg, e, g, valueBits, nil)
		return err
	})
	if err != nil {
		if errors.Is(err, dh.ErrInvalidKey) {
			return nil, nil, invalid(ck.CKA_VALUE_BITS, err.Error())
		}
		return nil, nil, s.engineErr("generate DH key", err)
	}
	pubVals := attrMap{ck.CKA_VALUE: y}
	privVals := attrMap{ck.CKA_PRIME: g.P.Bytes(), ck.CKA_BASE: g.G.Bytes(), ck.CKA_VALUE: x}
	return pubVals, privVals, nil
}
