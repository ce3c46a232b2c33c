package mech

// ML-KEM (FIPS 203): CKM_ML_KEM_KEY_PAIR_GEN and CKM_ML_KEM, the KEM of
// C_EncapsulateKey and C_DecapsulateKey (token/kem.go). Keys: mlkem_key.go.
//
//   - CKM_ML_KEM_KEY_PAIR_GEN takes CKA_PARAMETER_SET from the public
//     template (given in the private template too, it must be the same;
//     missing: CKR_TEMPLATE_INCOMPLETE; not an ML-KEM set:
//     CKR_ATTRIBUTE_VALUE_INVALID). It draws the 64-byte seed d‖z from
//     crypto/rand and keeps it as the private key's CKA_SEED.
//   - CKM_ML_KEM takes no parameter. Its ciphertext has 768, 1088 or 1568
//     bytes; a ciphertext of another length given to C_DecapsulateKey is
//     CKR_ENCRYPTED_DATA_LEN_RANGE. Any ciphertext of the right length is
//     decapsulated: one that was not made for the key yields FIPS 203's
//     implicit rejection, a key derived from z and the ciphertext that no
//     one else can compute (the caller learns nothing from a failure: the
//     call succeeds and the key is simply not the peer's). The shared
//     secret has 32 bytes.

import (
	"crypto/rand"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// mlkemBase is the common part of the ML-KEM mechanisms.
func mlkemBase(typ uint64) MechBase {
	return MechBase{Type: typ, KeyTypes: []uint64{ck.CKK_ML_KEM}, MinBits: 512, MaxBits: 1024}
}

// mlkemMechanisms are CKM_ML_KEM_KEY_PAIR_GEN and CKM_ML_KEM.
func mlkemMechanisms() []Mechanism {
	return []Mechanism{&mlkemKeyPairGen{mlkemBase(ck.CKM_ML_KEM_KEY_PAIR_GEN)}, &mlkemMech{mlkemBase(ck.CKM_ML_KEM)}}
}

// mlkemKeyPairGen is CKM_ML_KEM_KEY_PAIR_GEN.
type mlkemKeyPairGen struct{ MechBase }

func (m *mlkemKeyPairGen) GenerateKeyPair(s Slot, pub, priv attr.Map) (attr.Map, attr.Map, error) {
	if _, ok := pub[ck.CKA_PARAMETER_SET]; !ok {
		return nil, nil, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "CKA_PARAMETER_SET missing from the public key template")
	}
	p, err := mlkemParamSet(pub, 0, nil)
	if err != nil {
		return nil, nil, err
	}
	if v, ok := priv[ck.CKA_PARAMETER_SET]; ok && string(v) != string(pub[ck.CKA_PARAMETER_SET]) {
		return nil, nil, Inconsistent("CKA_PARAMETER_SET differs between the public and private templates")
	}
	seed := make([]byte, mlkemSeedLen)
	if _, err := rand.Read(seed); err != nil {
		return nil, nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "ML-KEM seed: %v", err)
	}
	k, err := p.FromSeed(seed)
	if err != nil {
		clear(seed)
		return nil, nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "generate %s key: %v", p.Name, err)
	}
	set := ck.ULong(p.set)
	pubVals := attr.Map{ck.CKA_PARAMETER_SET: set, ck.CKA_VALUE: k.EK}
	privVals := attr.Map{ck.CKA_PARAMETER_SET: set, ck.CKA_SEED: seed}
	return pubVals, privVals, nil
}

// mlkemMech is CKM_ML_KEM.
type mlkemMech struct{ MechBase }

func (m *mlkemMech) CiphertextLen(op Op) (int, error) {
	p, err := mlkemParamsOf(op.Key().Attrs())
	if err != nil {
		return 0, err
	}
	return p.CTLen(), nil
}

func (m *mlkemMech) Encapsulate(op Op) (ct, secret []byte, err error) {
	p, err := mlkemParamsOf(op.Key().Attrs())
	if err != nil {
		return nil, nil, err
	}
	ct, secret, err = p.Encapsulate(op.Key().Attrs()[ck.CKA_VALUE])
	if err != nil {
		return nil, nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored %s public key: %v", p.Name, err)
	}
	return ct, secret, nil
}

func (m *mlkemMech) Decapsulate(op Op, ct []byte) ([]byte, error) {
	k, err := preparedMLKEM(op.Slot(), op.Key())
	if err != nil {
		return nil, err
	}
	if len(ct) != k.p.CTLen() {
		return nil, ck.Errorf(ck.CKR_ENCRYPTED_DATA_LEN_RANGE, "%s ciphertext of %d bytes, want %d", k.p.Name, len(ct), k.p.CTLen())
	}
	secret, err := k.dec(ct)
	if err != nil {
		return nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "%s decapsulation: %v", k.p.Name, err)
	}
	return secret, nil
}
