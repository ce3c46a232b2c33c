package mech

// DSA: CKM_DSA_KEY_PAIR_GEN, CKM_DSA (one-shot: the input is the hash)
// and the hash-then-sign CKM_DSA_SHA1 to CKM_DSA_SHA512. Signing and key
// generation run on the slot's engine through its guard (dsa_key.go);
// verification runs in software.

import (
	"bytes"
	"crypto"
	"errors"
	"math/big"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/dsa"
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// dsaMaxHash bounds the input of CKM_DSA (a SHA-512 digest).
const dsaMaxHash = 64

// DSAHashMechs are the DSA mechanisms that hash the data first.
var DSAHashMechs = []hashMech{
	{ck.CKM_DSA_SHA1, crypto.SHA1}, {ck.CKM_DSA_SHA224, crypto.SHA224},
	{ck.CKM_DSA_SHA256, crypto.SHA256}, {ck.CKM_DSA_SHA384, crypto.SHA384},
	{ck.CKM_DSA_SHA512, crypto.SHA512},
}

// dsaBase is the common part of the DSA mechanisms.
func dsaBase(typ uint64) MechBase {
	return MechBase{Type: typ, KeyTypes: []uint64{ck.CKK_DSA}, MinBits: dsaMinBits, MaxBits: dsaMaxBits, Available: dsaAvailable}
}

// dsaMechanisms is the DSA family.
func dsaMechanisms() []Mechanism {
	sig := func(typ uint64, h crypto.Hash) Mechanism { return &dsaMech{dsaBase(typ), hashThenSign{h}} }
	return append([]Mechanism{&dsaKeyPairGen{dsaBase(ck.CKM_DSA_KEY_PAIR_GEN)}, sig(ck.CKM_DSA, 0)}, perHash(DSAHashMechs, sig)...)
}

// dsaMech is CKM_DSA (hash 0: one-shot, the input is the hash) or a
// hash-then-sign CKM_DSA_SHA*.
type dsaMech struct {
	MechBase
	hashThenSign
}

// dsaAvailable narrows the DSA mechanisms to what the slot's engine (and
// fallback) can sign: verification runs in software at every size.
func dsaAvailable(s Slot, info *Info) bool {
	max := uint64(s.Guard().MaxExpBits())
	if max == 0 || max >= info.MaxKeySize {
		return true
	}
	if info.Flags&ck.CKF_GENERATE_KEY_PAIR != 0 {
		if max < info.MinKeySize {
			return false
		}
		info.MaxKeySize = max
		return true
	}
	if max < info.MinKeySize {
		info.Flags &^= ck.CKF_SIGN
	}
	return true
}

// Sign signs hash (the input of CKM_DSA, the digest of CKM_DSA_SHA*).
func (m *dsaMech) Sign(op Op, hash []byte) (sig []byte, err error) {
	s := op.Slot()
	if len(hash) == 0 || len(hash) > dsaMaxHash {
		return nil, ck.Errorf(ck.CKR_DATA_LEN_RANGE, "CKM_DSA input of %d bytes (1 to %d)", len(hash), dsaMaxHash)
	}
	k, err := preparedDSAPrivate(s, op.Key())
	if err != nil {
		return nil, err
	}
	sig, _, err = k.key.Sign(bg, hash, nil)
	if err != nil {
		return nil, s.EngineErr("DSA sign", err)
	}
	return sig, nil
}

// Verify checks r‖s with the operation's public key (software).
func (m *dsaMech) Verify(op Op, hash, sig []byte) error {
	if len(hash) == 0 || len(hash) > dsaMaxHash {
		return ck.Errorf(ck.CKR_DATA_LEN_RANGE, "CKM_DSA input of %d bytes (1 to %d)", len(hash), dsaMaxHash)
	}
	k, err := preparedDSAPublic(op.Slot(), op.Key())
	if err != nil {
		return err
	}
	if want := 2 * ((k.params.Q.BitLen() + 7) / 8); len(sig) != want {
		return ck.Errorf(ck.CKR_SIGNATURE_LEN_RANGE, "DSA signature of %d bytes, want %d", len(sig), want)
	}
	switch err := k.pub.Verify(hash, sig); {
	case err == nil:
		return nil
	case errors.Is(err, dsa.ErrInvalidSignature):
		return ck.Errorf(ck.CKR_SIGNATURE_INVALID, "DSA signature does not verify")
	default:
		return ck.Errorf(ck.CKR_FUNCTION_FAILED, "DSA verify: %v", err)
	}
}

// dsaKeyPairGen is CKM_DSA_KEY_PAIR_GEN.
type dsaKeyPairGen struct{ MechBase }

// GenerateKeyPair: the domain parameters come from the public template
// (given in the private template too, they must be equal).
func (m *dsaKeyPairGen) GenerateKeyPair(s Slot, pub, priv attr.Map) (attr.Map, attr.Map, error) {
	p, err := dsaParamsOf(pub, ck.CKR_DOMAIN_PARAMS_INVALID)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range []uint64{ck.CKA_PRIME, ck.CKA_SUBPRIME, ck.CKA_BASE} {
		if v, ok := priv[t]; ok && !bytes.Equal(new(big.Int).SetBytes(v).Bytes(), new(big.Int).SetBytes(pub[t]).Bytes()) {
			return nil, nil, Inconsistent(attr.Describe(t) + " differs between the public and private templates")
		}
	}
	info, ok := s.MechanismInfo(m)
	if bits := uint64(p.P.BitLen()); !ok || bits < info.MinKeySize || bits > info.MaxKeySize {
		return nil, nil, ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "%d-bit DSA key on engine %s (fallback %s)", bits, s.EngineName(), s.Policy().Fallback)
	}
	rt, _ := s.Guard().Exp(p.P.BitLen())
	var x, y []byte
	err = rt.Run(func(e engine.Engine) error {
		x, y, _, err = dsa.GenerateKey(bg, e, p, nil)
		return err
	})
	if err != nil {
		return nil, nil, s.EngineErr("generate DSA key", err)
	}
	pubVals := attr.Map{ck.CKA_VALUE: y}
	privVals := attr.Map{
		ck.CKA_PRIME: p.P.Bytes(), ck.CKA_SUBPRIME: p.Q.Bytes(), ck.CKA_BASE: p.G.Bytes(),
		ck.CKA_VALUE: x,
	}
	return pubVals, privVals, nil
}
