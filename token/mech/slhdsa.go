package mech

// SLH-DSA (FIPS 205): CKM_SLH_DSA_KEY_PAIR_GEN, CKM_SLH_DSA (pure, over
// the message) and the HashSLH-DSA mechanisms CKM_HASH_SLH_DSA_SHA224 ...
// CKM_HASH_SLH_DSA_SHAKE256, which hash the data themselves (the keys:
// slhdsa_key.go).
//
//   - CKM_SLH_DSA_KEY_PAIR_GEN: CKA_PARAMETER_SET in the public template
//     names the parameter set (given in the private template too, it must
//     be equal).
//   - The signatures take an optional CK_SIGN_ADDITIONAL_CONTEXT, as
//     CKM_ML_DSA (mldsa.go): hedged by default (n fresh random
//     bytes of opt_rand), deterministic with CKH_DETERMINISTIC_REQUIRED
//     (opt_rand = PK.seed), a context of at most 255 bytes.
//   - All of them sign in one part or several: CKM_SLH_DSA keeps the
//     parts (at most maxEdDSAMessage bytes), the HashSLH-DSA ones feed
//     the hash.
//   - Every signature is verified before release (CKR_DEVICE_ERROR if it
//     does not verify). A signature of the wrong length is
//     CKR_SIGNATURE_LEN_RANGE, a wrong one CKR_SIGNATURE_INVALID.
//
// CKM_HASH_SLH_DSA, whose input is a digest computed by the caller, is
// not offered: circl builds HashSLH-DSA's message only from the data.

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"hash"

	"github.com/cloudflare/circl/sign/slhdsa"
	"github.com/cloudflare/circl/xof"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// slhdsaBase is the common part of the SLH-DSA mechanisms: the key sizes
// are the parameter sets.
func slhdsaBase(typ uint64) MechBase {
	return MechBase{Type: typ, KeyTypes: []uint64{ck.CKK_SLH_DSA}, MinBits: 1, MaxBits: ck.CKP_SLH_DSA_SHAKE_256F}
}

// SLHDSAPreHashes are the HashSLH-DSA mechanisms and their hash (0 for
// the SHAKEs, named by xof).
var SLHDSAPreHashes = []struct {
	typ  uint64
	hash crypto.Hash
	xof  xof.ID
}{
	{ck.CKM_HASH_SLH_DSA_SHA224, crypto.SHA224, 0}, {ck.CKM_HASH_SLH_DSA_SHA256, crypto.SHA256, 0},
	{ck.CKM_HASH_SLH_DSA_SHA384, crypto.SHA384, 0}, {ck.CKM_HASH_SLH_DSA_SHA512, crypto.SHA512, 0},
	{ck.CKM_HASH_SLH_DSA_SHA3_224, crypto.SHA3_224, 0}, {ck.CKM_HASH_SLH_DSA_SHA3_256, crypto.SHA3_256, 0},
	{ck.CKM_HASH_SLH_DSA_SHA3_384, crypto.SHA3_384, 0}, {ck.CKM_HASH_SLH_DSA_SHA3_512, crypto.SHA3_512, 0},
	{ck.CKM_HASH_SLH_DSA_SHAKE128, 0, xof.SHAKE128}, {ck.CKM_HASH_SLH_DSA_SHAKE256, 0, xof.SHAKE256},
}

// slhdsaMechanisms are CKM_SLH_DSA_KEY_PAIR_GEN, CKM_SLH_DSA and the
// HashSLH-DSA mechanisms.
func slhdsaMechanisms() []Mechanism {
	ms := []Mechanism{&slhdsaKeyPairGen{slhdsaBase(ck.CKM_SLH_DSA_KEY_PAIR_GEN)}, &slhdsaMech{MechBase: slhdsaBase(ck.CKM_SLH_DSA)}}
	for _, ph := range SLHDSAPreHashes {
		ms = append(ms, &slhdsaMech{MechBase: slhdsaBase(ph.typ), hash: ph.hash, xof: ph.xof, preHash: true})
	}
	return ms
}

// slhdsaKeyPairGen is CKM_SLH_DSA_KEY_PAIR_GEN.
type slhdsaKeyPairGen struct{ MechBase }

func (m *slhdsaKeyPairGen) GenerateKeyPair(s Slot, pub, priv attr.Map) (attr.Map, attr.Map, error) {
	pv, ok := pub[ck.CKA_PARAMETER_SET]
	set, err := slhdsaSetByValue(pv, ok)
	if err != nil {
		return nil, nil, err
	}
	if qv, ok := priv[ck.CKA_PARAMETER_SET]; ok && !bytes.Equal(qv, pv) {
		return nil, nil, Inconsistent("CKA_PARAMETER_SET differs between the public and private templates")
	}
	pk, sk, err := slhdsa.GenerateKey(rand.Reader, set.id)
	if err != nil {
		return nil, nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "generate %s key: %v", set.Name, err)
	}
	pkb, err1 := pk.MarshalBinary()
	skb, err2 := sk.MarshalBinary()
	if err1 != nil || err2 != nil {
		return nil, nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "encode %s key", set.Name)
	}
	return attr.Map{ck.CKA_VALUE: pkb}, attr.Map{ck.CKA_PARAMETER_SET: bytes.Clone(pv), ck.CKA_VALUE: skb}, nil
}

// slhdsaMech is CKM_SLH_DSA (preHash false) or a HashSLH-DSA mechanism,
// bound to its parameter.
type slhdsaMech struct {
	MechBase
	preHash bool
	hash    crypto.Hash // the pre-hash, or 0 with xof
	xof     xof.ID
	p       pqSignParams
}

func (m *slhdsaMech) withParam(cm *CKMechanism) (Mechanism, error) {
	p, err := parseSignContext(m.Name(), cm)
	if err != nil {
		return nil, err
	}
	b := *m
	b.p = p
	return &b, nil
}

// CheckKey: the key's parameter set must be one the token knows.
func (m *slhdsaMech) CheckKey(op Op) error {
	if _, err := slhdsaSetOf(op.Key().Attrs()); err != nil {
		return ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "SLH-DSA key without a usable parameter set: %v", err)
	}
	return nil
}

// slhPreHash is the accumulator of a HashSLH-DSA mechanism: circl's
// PreHash, which builds the signed message (the hash's OID and the
// digest) itself. Sum adds nothing: sign takes the message from the
// PreHash.
type slhPreHash struct{ ph *slhdsa.PreHash }

func (h *slhPreHash) Write(p []byte) (int, error) { return h.ph.Write(p) }
func (h *slhPreHash) Sum(b []byte) []byte         { return b }
func (h *slhPreHash) Reset()                      { h.ph.Reset() }
func (h *slhPreHash) Size() int                   { return 0 }
func (h *slhPreHash) BlockSize() int              { return 1 }

// Accumulator keeps the message whole (CKM_SLH_DSA) or hashes it.
func (m *slhdsaMech) Accumulator(Op) (hash.Hash, error) {
	if !m.preHash {
		return &messageBuffer{}, nil
	}
	var ph *slhdsa.PreHash
	var err error
	if m.hash != 0 {
		ph, err = slhdsa.NewPreHashWithHash(m.hash)
	} else {
		ph, err = slhdsa.NewPreHashWithXof(m.xof)
	}
	if err != nil {
		return nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "%s: %v", m.Name(), err)
	}
	return &slhPreHash{ph}, nil
}

// message is what the operation signs: the data itself, or the
// HashSLH-DSA message of its digest.
func (m *slhdsaMech) message(op Op, data []byte) (*slhdsa.Message, error) {
	if !m.preHash {
		if err := messageInputOK(op, "SLH-DSA"); err != nil {
			return nil, err
		}
		return slhdsa.NewMessage(data), nil
	}
	acc, ok := op.Accumulator().(*slhPreHash)
	if !ok {
		return nil, ck.Errorf(ck.CKR_GENERAL_ERROR, "%s without its hash", m.Name())
	}
	msg, err := acc.ph.BuildMessage()
	if err != nil {
		return nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "%s: %v", m.Name(), err)
	}
	return msg, nil
}

// SLHDSASignFn signs; tests replace it to fault a signature.
var SLHDSASignFn = func(sk *slhdsa.PrivateKey, msg *slhdsa.Message, ctx []byte, deterministic bool) ([]byte, error) {
	if deterministic {
		return slhdsa.SignDeterministic(sk, msg, ctx)
	}
	return slhdsa.SignRandomized(sk, rand.Reader, msg, ctx)
}

// Sign signs and verifies the signature before release.
func (m *slhdsaMech) Sign(op Op, data []byte) ([]byte, error) {
	msg, err := m.message(op, data)
	if err != nil {
		return nil, err
	}
	k, err := preparedSLHDSA(op.Slot(), op.Key())
	if err != nil {
		return nil, err
	}
	sig, err := SLHDSASignFn(k.sk, msg, m.p.context, m.p.deterministic())
	if err != nil {
		return nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "%s sign: %v", k.set.Name, err)
	}
	if !slhdsa.Verify(k.pk, msg, sig, m.p.context) {
		op.Slot().Log().Error("SLH-DSA signature failed its check", "object", op.Key().Handle(), "set", k.set.Name)
		return nil, ck.Errorf(ck.CKR_DEVICE_ERROR, "%s signature failed its check", k.set.Name)
	}
	return sig, nil
}

// Verify checks an SLH-DSA signature with the operation's public key.
func (m *slhdsaMech) Verify(op Op, data, sig []byte) error {
	msg, err := m.message(op, data)
	if err != nil {
		return err
	}
	set, err := slhdsaSetOf(op.Key().Attrs())
	if err != nil {
		return ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored SLH-DSA key: %v", err)
	}
	pk, err := slhdsaPublicKey(set, op.Key().Attrs()[ck.CKA_VALUE])
	if err != nil {
		return ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored %s public key unusable", set.Name)
	}
	if want := set.id.Scheme().SignatureSize(); len(sig) != want {
		return ck.Errorf(ck.CKR_SIGNATURE_LEN_RANGE, "%s signature of %d bytes, want %d", set.Name, len(sig), want)
	}
	if !slhdsa.Verify(pk, msg, sig, m.p.context) {
		return ck.Errorf(ck.CKR_SIGNATURE_INVALID, "%s signature does not verify", set.Name)
	}
	return nil
}
