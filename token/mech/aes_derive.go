package mech

// CKM_AES_ECB_ENCRYPT_DATA and CKM_AES_CBC_ENCRYPT_DATA (PKCS#11 3.0
// Current Mechanisms §2.10.x, "key derivation by data encryption"): the new
// secret key's value is the data of the parameter encrypted under the base
// AES key, in ECB or in CBC with the parameter's IV, without padding.
//
//   - The parameter is CK_KEY_DERIVATION_STRING_DATA (ECB) or
//     CK_AES_CBC_ENCRYPT_DATA_PARAMS (CBC), decoded by the C layer into
//     Mechanism.EncryptData. Data that is empty or not a whole number of
//     16-byte blocks is CKR_MECHANISM_PARAM_INVALID.
//   - The new key takes the leading CKA_VALUE_LEN bytes of the ciphertext
//     (derivedKeyLen: without CKA_VALUE_LEN a generic secret takes the
//     whole ciphertext, an AES key the longest AES length it holds). A key
//     longer than the data is
//     CKR_MECHANISM_PARAM_INVALID: the data is too short for it (SoftHSMv2
//     answers CKR_FUNCTION_FAILED there, which python-pkcs11's suite also
//     accepts).
//   - The base key is a CKK_AES secret key with CKA_DERIVE true.

import (
	"crypto/aes"
	"crypto/cipher"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// aesEncryptDataMechanisms are CKM_AES_ECB_ENCRYPT_DATA and
// CKM_AES_CBC_ENCRYPT_DATA.
func aesEncryptDataMechanisms() []Mechanism {
	return []Mechanism{
		&EncryptData{MechBase: aesBase(ck.CKM_AES_ECB_ENCRYPT_DATA), block: aesBlock, bs: aes.BlockSize},
		&EncryptData{MechBase: aesBase(ck.CKM_AES_CBC_ENCRYPT_DATA), block: aesBlock, bs: aes.BlockSize, cbc: true},
	}
}

// EncryptData is a derivation by data encryption (cbc: in CBC with the
// parameter's IV) under the base key's block cipher (AES, or DES:
// des.go) of bs-byte blocks, bound to its parameter.
type EncryptData struct {
	MechBase
	block func(op Op) (cipher.Block, error)
	bs    int
	cbc   bool
	p     encryptDataParams
}

// encryptDataParams is the decoded parameter: the IV (CBC) and the data.
type encryptDataParams struct {
	iv   []byte
	data []byte
}

// withParam checks the mechanism's parameter.
func (m *EncryptData) withParam(cm *CKMechanism) (Mechanism, error) {
	e := cm.EncryptData
	switch {
	case e == nil || len(cm.Param) != 0:
		want := "CK_KEY_DERIVATION_STRING_DATA"
		if m.cbc {
			want = "CK_" + map[bool]string{false: "AES", true: "DES"}[m.bs == 8] + "_CBC_ENCRYPT_DATA_PARAMS"
		}
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s takes %s", m.Name(), want)
	case m.cbc && len(e.IV) != m.bs, !m.cbc && e.IV != nil:
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s: wrong IV", m.Name())
	case len(e.Data) == 0 || len(e.Data)%m.bs != 0:
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s: %d bytes of data, want a whole number of %d-byte blocks",
			m.Name(), len(e.Data), m.bs)
	}
	b := *m
	b.p = encryptDataParams{iv: e.IV, data: e.Data}
	return &b, nil
}

// Derive encrypts the data under the base key and returns the leading
// bytes the template asks for.
func (m *EncryptData) Derive(op Op, tmpl attr.Map) ([]byte, error) {
	p := &m.p
	if v, ok := tmpl.ULong(ck.CKA_VALUE_LEN); ok && v > uint64(len(p.data)) {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "a %d-byte key from %d bytes of data", v, len(p.data))
	}
	n, err := DerivedKeyLen(tmpl, len(p.data))
	if err != nil {
		return nil, err
	}
	b, err := m.block(op)
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(p.data))
	if m.cbc {
		cipher.NewCBCEncrypter(b, p.iv).CryptBlocks(out, p.data)
	} else {
		ecbMode{b: b, encrypt: true}.CryptBlocks(out, p.data)
	}
	key := append([]byte(nil), out[:n]...)
	clear(out)
	return key, nil
}
