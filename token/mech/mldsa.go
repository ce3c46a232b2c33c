package mech

// ML-DSA (FIPS 204): CKM_ML_DSA_KEY_PAIR_GEN and CKM_ML_DSA, pure ML-DSA
// over the message itself (the keys: mldsa_key.go).
//
//   - CKM_ML_DSA_KEY_PAIR_GEN: CKA_PARAMETER_SET in the public template
//     names the parameter set (given in the private template too, it must
//     be equal); the private key keeps the seed (CKA_SEED).
//   - CKM_ML_DSA takes an optional CK_SIGN_ADDITIONAL_CONTEXT: the hedge
//     variant (CKH_HEDGE_PREFERRED, the default, and CKH_HEDGE_REQUIRED
//     sign hedged, with 32 fresh random bytes; CKH_DETERMINISTIC_REQUIRED
//     deterministically) and a context of at most 255 bytes (longer, an
//     unknown hedge variant, or a CK_HASH_SIGN_ADDITIONAL_CONTEXT:
//     CKR_MECHANISM_PARAM_INVALID). Verification ignores the hedge.
//   - It signs in one part or several (the parts are kept until
//     C_SignFinal; at most maxEdDSAMessage bytes, as EdDSA).
//   - Every signature is verified before release: a signing faulted in
//     the lattice arithmetic answers CKR_DEVICE_ERROR, never a signature.
//   - A signature of the wrong length is CKR_SIGNATURE_LEN_RANGE, a wrong
//     one CKR_SIGNATURE_INVALID.
//
// HashML-DSA (CKM_HASH_ML_DSA and its CKM_HASH_ML_DSA_SHA* forms) is not
// offered: circl exposes no pre-hash ML-DSA, and the token does not
// rebuild ML-DSA's internal signing for it.

import (
	"bytes"
	"crypto/rand"
	"hash"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// mldsaBase is the common part of the ML-DSA mechanisms: the key sizes
// are the parameter sets.
func mldsaBase(typ uint64) MechBase {
	return MechBase{Type: typ, KeyTypes: []uint64{ck.CKK_ML_DSA}, MinBits: ck.CKP_ML_DSA_44, MaxBits: ck.CKP_ML_DSA_87}
}

// mldsaMechanisms are CKM_ML_DSA_KEY_PAIR_GEN and CKM_ML_DSA.
func mldsaMechanisms() []Mechanism {
	return []Mechanism{&mldsaKeyPairGen{mldsaBase(ck.CKM_ML_DSA_KEY_PAIR_GEN)}, &mldsaMech{MechBase: mldsaBase(ck.CKM_ML_DSA)}}
}

// mldsaKeyPairGen is CKM_ML_DSA_KEY_PAIR_GEN.
type mldsaKeyPairGen struct{ MechBase }

func (m *mldsaKeyPairGen) GenerateKeyPair(s Slot, pub, priv attr.Map) (attr.Map, attr.Map, error) {
	pv, ok := pub[ck.CKA_PARAMETER_SET]
	set, err := MLDSASetByValue(pv, ok)
	if err != nil {
		return nil, nil, err
	}
	if qv, ok := priv[ck.CKA_PARAMETER_SET]; ok && !bytes.Equal(qv, pv) {
		return nil, nil, Inconsistent("CKA_PARAMETER_SET differs between the public and private templates")
	}
	seed := make([]byte, mldsaSeedSize)
	if _, err := rand.Read(seed); err != nil {
		return nil, nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "generate %s seed: %v", set.name, err)
	}
	pk, _ := set.Scheme.DeriveKey(seed)
	pkb, err := pk.MarshalBinary()
	if err != nil {
		return nil, nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "encode %s public key: %v", set.name, err)
	}
	return attr.Map{ck.CKA_VALUE: pkb}, attr.Map{ck.CKA_PARAMETER_SET: bytes.Clone(pv), ck.CKA_SEED: seed}, nil
}

// pqSignParams are a decoded CK_SIGN_ADDITIONAL_CONTEXT (the zero value:
// none given, hedged with an empty context).
type pqSignParams struct {
	hedge   uint64
	context []byte
}

// deterministic reports whether the signature is to be deterministic.
func (p pqSignParams) deterministic() bool { return p.hedge == ck.CKH_DETERMINISTIC_REQUIRED }

// parseSignContext checks the parameter of CKM_ML_DSA or CKM_SLH_DSA:
// nothing, or a CK_SIGN_ADDITIONAL_CONTEXT with a known hedge variant and
// a context of at most 255 bytes.
func parseSignContext(name string, cm *CKMechanism) (pqSignParams, error) {
	sc := cm.SignContext
	if len(cm.Param) != 0 || cm.PSS != nil || cm.OAEP != nil || cm.ECDH != nil || cm.EdDSA != nil || cm.GCM != nil ||
		cm.EncryptData != nil || cm.HKDF != nil || (sc != nil && sc.HasHash) {
		return pqSignParams{}, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s takes CK_SIGN_ADDITIONAL_CONTEXT or nothing", name)
	}
	if sc == nil {
		return pqSignParams{}, nil
	}
	switch sc.Hedge {
	case ck.CKH_HEDGE_PREFERRED, ck.CKH_HEDGE_REQUIRED, ck.CKH_DETERMINISTIC_REQUIRED:
	default:
		return pqSignParams{}, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s: hedge variant %d unknown", name, sc.Hedge)
	}
	if len(sc.Context) > 255 {
		return pqSignParams{}, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s: context of %d bytes (at most 255)", name, len(sc.Context))
	}
	return pqSignParams{hedge: sc.Hedge, context: bytes.Clone(sc.Context)}, nil
}

// messageInputOK reports an overflowing multi-part message.
func messageInputOK(op Op, name string) error {
	if mb, ok := op.Accumulator().(*messageBuffer); ok && mb.overflow {
		return ck.Errorf(ck.CKR_DATA_LEN_RANGE, "%s message over %d bytes", name, maxEdDSAMessage)
	}
	return nil
}

// mldsaMech is CKM_ML_DSA bound to its parameter.
type mldsaMech struct {
	MechBase
	p pqSignParams
}

func (m *mldsaMech) withParam(cm *CKMechanism) (Mechanism, error) {
	p, err := parseSignContext(m.Name(), cm)
	if err != nil {
		return nil, err
	}
	b := *m
	b.p = p
	return &b, nil
}

// CheckKey: the key's parameter set must be one the token knows.
func (m *mldsaMech) CheckKey(op Op) error {
	if _, err := mldsaSetOf(op.Key().Attrs()); err != nil {
		return ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "ML-DSA key without a usable parameter set: %v", err)
	}
	return nil
}

// Accumulator keeps the message whole: pure ML-DSA signs the message.
func (m *mldsaMech) Accumulator(Op) (hash.Hash, error) { return &messageBuffer{}, nil }

// Sign signs msg and verifies the signature before release.
func (m *mldsaMech) Sign(op Op, msg []byte) ([]byte, error) {
	if err := messageInputOK(op, "ML-DSA"); err != nil {
		return nil, err
	}
	k, err := preparedMLDSA(op.Slot(), op.Key())
	if err != nil {
		return nil, err
	}
	sig, err := k.set.SignTo(k.sk, msg, m.p.context, !m.p.deterministic())
	if err != nil {
		return nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "%s sign: %v", k.set.name, err)
	}
	if !k.set.verify(k.pk, msg, m.p.context, sig) {
		op.Slot().Log().Error("ML-DSA signature failed its check", "object", op.Key().Handle(), "set", k.set.name)
		return nil, ck.Errorf(ck.CKR_DEVICE_ERROR, "%s signature failed its check", k.set.name)
	}
	return sig, nil
}

// Verify checks an ML-DSA signature of msg with the operation's public
// key.
func (m *mldsaMech) Verify(op Op, msg, sig []byte) error {
	if err := messageInputOK(op, "ML-DSA"); err != nil {
		return err
	}
	k, err := preparedMLDSAPublic(op.Slot(), op.Key())
	if err != nil {
		return err
	}
	set, pk := k.set, k.pk
	if len(sig) != set.Scheme.SignatureSize() {
		return ck.Errorf(ck.CKR_SIGNATURE_LEN_RANGE, "%s signature of %d bytes, want %d", set.name, len(sig), set.Scheme.SignatureSize())
	}
	if !set.verify(pk, msg, m.p.context, sig) {
		return ck.Errorf(ck.CKR_SIGNATURE_INVALID, "%s signature does not verify", set.name)
	}
	return nil
}
