package mech

// DH: CKM_DH_PKCS_KEY_PAIR_GEN and CKM_DH_PKCS_DERIVE (PKCS #3), on the
// slot's engine through its guard (dh_key.go for the key type).

import (
	"bytes"
	"errors"
	"math/big"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/dh"
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// dhBase is the common part of the DH mechanisms.
func dhBase(typ uint64) MechBase {
	return MechBase{Type: typ, KeyTypes: []uint64{ck.CKK_DH}, MinBits: dhMinBits, MaxBits: dhMaxBits, Available: dhAvailable}
}

// dhMechanisms are CKM_DH_PKCS_KEY_PAIR_GEN and CKM_DH_PKCS_DERIVE.
func dhMechanisms() []Mechanism {
	return []Mechanism{&dhKeyPairGen{dhBase(ck.CKM_DH_PKCS_KEY_PAIR_GEN)}, &dhDerive{MechBase: dhBase(ck.CKM_DH_PKCS_DERIVE)}}
}

// dhDerive is CKM_DH_PKCS_DERIVE bound to the peer's public value.
type dhDerive struct {
	MechBase
	peer []byte
}

// dhAvailable: the slot can run DH at the sizes its engine (or fallback)
// takes.
func dhAvailable(s Slot, info *Info) bool {
	max := uint64(s.Guard().MaxExpBits())
	if max == 0 || max >= info.MaxKeySize {
		return true
	}
	if max < info.MinKeySize {
		return false
	}
	info.MaxKeySize = max
	return true
}

// withParam decodes CKM_DH_PKCS_DERIVE's parameter: the peer's public
// value, big-endian (checked against the key's group at derivation).
func (m *dhDerive) withParam(cm *CKMechanism) (Mechanism, error) {
	if len(cm.Param) == 0 || len(cm.Param) > dhMaxBits/8+1 || cm.PSS != nil || cm.OAEP != nil {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKM_DH_PKCS_DERIVE needs the peer's public value (1 to %d bytes), got %d", dhMaxBits/8, len(cm.Param))
	}
	b := *m
	b.peer = bytes.Clone(cm.Param)
	return &b, nil
}

// Derive is CKM_DH_PKCS_DERIVE's work: Z = y^x mod p, cut to the
// template's length (its last bytes).
func (m *dhDerive) Derive(op Op, tmpl attr.Map) (value []byte, err error) {
	s := op.Slot()
	k, err := preparedDHPrivate(s, op.Key())
	if err != nil {
		return nil, err
	}
	n, err := DerivedKeyLen(tmpl, (k.bits+7)/8)
	if err != nil {
		return nil, err
	}
	z, _, err := k.key.Derive(bg, m.peer)
	if err != nil {
		if errors.Is(err, dh.ErrInvalidPublic) {
			return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "DH peer public value: %v", err)
		}
		return nil, s.EngineErr("DH derive", err)
	}
	out := bytes.Clone(z[len(z)-n:])
	clear(z)
	return out, nil
}

// dhKeyPairGen is CKM_DH_PKCS_KEY_PAIR_GEN.
type dhKeyPairGen struct{ MechBase }

// GenerateKeyPair: CKA_PRIME and CKA_BASE from the public template (equal
// if repeated in the private one), CKA_VALUE_BITS optionally in the
// private template.
func (m *dhKeyPairGen) GenerateKeyPair(s Slot, pub, priv attr.Map) (attr.Map, attr.Map, error) {
	g, err := dhGroupOf(pub, ck.CKR_DOMAIN_PARAMS_INVALID)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range []uint64{ck.CKA_PRIME, ck.CKA_BASE} {
		if v, ok := priv[t]; ok && new(big.Int).SetBytes(v).Cmp(new(big.Int).SetBytes(pub[t])) != 0 {
			return nil, nil, Inconsistent(attr.Describe(t) + " differs between the public and private templates")
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
			return nil, nil, Invalid(ck.CKA_VALUE_BITS, "out of range for the prime")
		}
		valueBits = int(b)
	}
	info, ok := s.MechanismInfo(m)
	if bits := uint64(g.P.BitLen()); !ok || bits < info.MinKeySize || bits > info.MaxKeySize {
		return nil, nil, ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "%d-bit DH key on engine %s (fallback %s)", bits, s.EngineName(), s.Policy().Fallback)
	}
	rt, _ := s.Guard().Exp(g.P.BitLen())
	var x, y []byte
	err = rt.Run(func(e engine.Engine) error {
		x, y, _, err = dh.GenerateKey(bg, e, g, valueBits, nil)
		return err
	})
	if err != nil {
		if errors.Is(err, dh.ErrInvalidKey) {
			return nil, nil, Invalid(ck.CKA_VALUE_BITS, err.Error())
		}
		return nil, nil, s.EngineErr("generate DH key", err)
	}
	pubVals := attr.Map{ck.CKA_VALUE: y}
	privVals := attr.Map{ck.CKA_PRIME: g.P.Bytes(), ck.CKA_BASE: g.G.Bytes(), ck.CKA_VALUE: x}
	return pubVals, privVals, nil
}
