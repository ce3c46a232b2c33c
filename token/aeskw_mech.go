package token

// AES key wrap mechanisms (PKCS#11 3.0 §2.14.3, §2.14.4):
//
//   - CKM_AES_KEY_WRAP: RFC 3394. Parameter: none, or an 8-byte initial
//     value. It wraps secret keys whose value is a multiple of 8 bytes, at
//     least 16 (others: CKR_KEY_SIZE_RANGE); private keys are
//     CKR_KEY_NOT_WRAPPABLE (their PKCS#8 form is of any length: use KWP).
//   - CKM_AES_KEY_WRAP_KWP (3.0) and CKM_AES_KEY_WRAP_PAD (2.40; SoftHSMv2
//     and OpenSSL give it RFC 5649 too): RFC 5649. Parameter: none, or (KWP)
//     the 4-byte prefix of the initial value. Any secret key, and RSA and EC
//     private keys as PKCS#8.
//
// CKM_AES_CBC_PAD (mech_aes_cbc.go) wraps too: the key material encrypted
// with the 16-byte IV of its parameter and PKCS#7 padding, any secret key
// and RSA and EC private keys as PKCS#8.
//
// Unwrap answers CKR_WRAPPED_KEY_LEN_RANGE for a length no wrap makes and
// CKR_WRAPPED_KEY_INVALID for anything that does not authenticate (checked
// in constant time, token/keywrap).

import (
	"errors"
	"fmt"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/keywrap"
)

// ckmAESKeyWrapKWP is CKM_AES_KEY_WRAP_KWP (PKCS#11 3.0).
const ckmAESKeyWrapKWP = 0x210B

func init() {
	aesKW := func(m *mechanism) *mechanism {
		m.flags = ck.CKF_WRAP | ck.CKF_UNWRAP
		m.minBits, m.maxBits, m.sizeInBytes = 16, 32, true
		m.keyTypes = []uint64{ck.CKK_AES}
		return m
	}
	registerMechanism(aesKW(&mechanism{typ: ck.CKM_AES_KEY_WRAP, params: aesKWParams(8),
		wrap: aesKeyWrap, unwrap: aesKeyUnwrap}))
	registerMechanism(aesKW(&mechanism{typ: ck.CKM_AES_KEY_WRAP_PAD, params: aesKWParams(0),
		wrap: aesKeyWrapPad, unwrap: aesKeyUnwrapPad, wrapsPrivate: true}))
	registerMechanism(aesKW(&mechanism{typ: ckmAESKeyWrapKWP, params: aesKWParams(4),
		wrap: aesKeyWrapPad, unwrap: aesKeyUnwrapPad, wrapsPrivate: true}))
}

// aesKWParams decodes an optional initial value of ivLen bytes (0: the
// mechanism takes no parameter). The decoded parameter is the IV (nil: the
// default).
func aesKWParams(ivLen int) func(mech *mechanism, m *Mechanism) (any, error) {
	return func(mech *mechanism, m *Mechanism) (any, error) {
		if m.PSS != nil || m.OAEP != nil {
			return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s takes no such parameter", ck.Name("CKM_", mech.typ))
		}
		switch {
		case len(m.Param) == 0:
			return []byte(nil), nil
		case ivLen != 0 && len(m.Param) == ivLen:
			return append([]byte(nil), m.Param...), nil
		case ivLen == 0:
			return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s takes no parameter", ck.Name("CKM_", mech.typ))
		}
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s: an initial value of %d bytes, want %d or none",
			ck.Name("CKM_", mech.typ), len(m.Param), ivLen)
	}
}

func aesKeyWrap(op *operation, material []byte) ([]byte, error) {
	b, err := op.aesBlock()
	if err != nil {
		return nil, err
	}
	out, err := keywrap.Wrap(b, op.params.([]byte), material)
	if errors.Is(err, keywrap.ErrLength) {
		return nil, ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "CKM_AES_KEY_WRAP wraps keys of 16 bytes or more in multiples of 8, not %d bytes (CKM_AES_KEY_WRAP_KWP wraps any)", len(material))
	}
	return out, kwErr(err)
}

func aesKeyUnwrap(op *operation, wrapped []byte) ([]byte, error) {
	b, err := op.aesBlock()
	if err != nil {
		return nil, err
	}
	out, err := keywrap.Unwrap(b, op.params.([]byte), wrapped)
	return out, kwErr(err)
}

func aesKeyWrapPad(op *operation, material []byte) ([]byte, error) {
	b, err := op.aesBlock()
	if err != nil {
		return nil, err
	}
	out, err := keywrap.WrapPad(b, op.params.([]byte), material)
	if errors.Is(err, keywrap.ErrLength) {
		return nil, ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "%s: a key of %d bytes", ck.Name("CKM_", op.mech.typ), len(material))
	}
	return out, kwErr(err)
}

func aesKeyUnwrapPad(op *operation, wrapped []byte) ([]byte, error) {
	b, err := op.aesBlock()
	if err != nil {
		return nil, err
	}
	out, err := keywrap.UnwrapPad(b, op.params.([]byte), wrapped)
	return out, kwErr(err)
}

// kwErr maps a keywrap error to its CKR code.
func kwErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, keywrap.ErrIntegrity):
		return ck.Errorf(ck.CKR_WRAPPED_KEY_INVALID, "the wrapped key does not authenticate under this key")
	case errors.Is(err, keywrap.ErrLength):
		return ck.Errorf(ck.CKR_WRAPPED_KEY_LEN_RANGE, "no wrap has this length")
	case errors.Is(err, keywrap.ErrIV):
		return ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "initial value length")
	}
	return ck.Errorf(ck.CKR_FUNCTION_FAILED, "key wrap: %v", err)
}

// streamWrap wraps with a symmetric encryption stream (CKM_AES_CBC_PAD).
func streamWrap(op *operation, material []byte) ([]byte, error) {
	if err := op.initSymmetric(); err != nil {
		return nil, err
	}
	return streamOnce(op, material)
}

// streamUnwrap unwraps with a symmetric decryption stream: a ciphertext
// of the wrong length is CKR_WRAPPED_KEY_LEN_RANGE, bad padding
// CKR_WRAPPED_KEY_INVALID.
func streamUnwrap(op *operation, wrapped []byte) ([]byte, error) {
	if err := op.initSymmetric(); err != nil {
		return nil, err
	}
	out, err := streamOnce(op, wrapped)
	switch ck.RV(err) {
	case uint64(ck.CKR_ENCRYPTED_DATA_LEN_RANGE):
		return nil, fmt.Errorf("%w: %w", ck.CKR_WRAPPED_KEY_LEN_RANGE, err)
	case uint64(ck.CKR_ENCRYPTED_DATA_INVALID):
		return nil, fmt.Errorf("%w: %w", ck.CKR_WRAPPED_KEY_INVALID, err)
	}
	if err == nil && len(out) == 0 {
		return nil, ck.Errorf(ck.CKR_WRAPPED_KEY_INVALID, "an empty key")
	}
	return out, err
}
