package token

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

	"github.com/modexp-token/modexp-token/token/ck"
)

// encryptDataParams is the decoded parameter: cbc, and the IV then.
type encryptDataParams struct {
	cbc  bool
	iv   []byte
	data []byte
}

func init() {
	for _, typ := range []uint64{ck.CKM_AES_ECB_ENCRYPT_DATA, ck.CKM_AES_CBC_ENCRYPT_DATA} {
		registerMechanism(aesMechanism(&mechanism{
			typ: typ, flags: ck.CKF_DERIVE, params: encryptDataParam, derive: deriveByEncryption,
		}))
	}
}

// encryptDataParam checks the mechanism's parameter.
func encryptDataParam(mech *mechanism, m *Mechanism) (any, error) {
	cbc := mech.typ == ck.CKM_AES_CBC_ENCRYPT_DATA
	e := m.EncryptData
	switch {
	case e == nil || len(m.Param) != 0:
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s takes %s", ck.Name("CKM_", mech.typ),
			map[bool]string{false: "CK_KEY_DERIVATION_STRING_DATA", true: "CK_AES_CBC_ENCRYPT_DATA_PARAMS"}[cbc])
	case cbc && len(e.IV) != aes.BlockSize, !cbc && e.IV != nil:
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s: wrong IV", ck.Name("CKM_", mech.typ))
	case len(e.Data) == 0 || len(e.Data)%aes.BlockSize != 0:
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s: %d bytes of data, want a whole number of 16-byte blocks",
			ck.Name("CKM_", mech.typ), len(e.Data))
	}
	return &encryptDataParams{cbc: cbc, iv: e.IV, data: e.Data}, nil
}

// deriveByEncryption encrypts the data under the base key and returns the
// leading bytes the template asks for.
func deriveByEncryption(op *operation, tmpl attrMap) ([]byte, error) {
	p := op.params.(*encryptDataParams)
	if v, ok := tmpl.ulong(ck.CKA_VALUE_LEN); ok && v > uint64(len(p.data)) {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "a %d-byte key from %d bytes of data", v, len(p.data))
	}
	n, err := derivedKeyLen(tmpl, len(p.data))
	if err != nil {
		return nil, err
	}
	b, err := op.aesBlock()
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(p.data))
	if p.cbc {
		cipher.NewCBCEncrypter(b, p.iv).CryptBlocks(out, p.data)
	} else {
		for i := 0; i < len(out); i += aes.BlockSize {
			b.Encrypt(out[i:i+aes.BlockSize], p.data[i:i+aes.BlockSize])
		}
	}
	key := append([]byte(nil), out[:n]...)
	clear(out)
	return key, nil
}
