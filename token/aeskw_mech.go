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
	"crypto/cipher"
	"errors"

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
	kw := aesKeyWrapWith(keywrap.Wrap, true)
	kwUnwrap := aesKeyWrapWith(keywrap.Unwrap, false)
	kwp := aesKeyWrapWith(keywrap.WrapPad, true)
	kwpUnwrap := aesKeyWrapWith(keywrap.UnwrapPad, false)
	registerMechanism(aesKW(&mechanism{typ: ck.CKM_AES_KEY_WRAP, params: aesKWParams(8),
		wrap: kw, unwrap: kwUnwrap}))
	registerMechanism(aesKW(&mechanism{typ: ck.CKM_AES_KEY_WRAP_PAD, params: aesKWParams(0),
		wrap: kwp, unwrap: kwpUnwrap, wrapsPrivate: true}))
	registerMechanism(aesKW(&mechanism{typ: ckmAESKeyWrapKWP, params: aesKWParams(4),
		wrap: kwp, unwrap: kwpUnwrap, wrapsPrivate: true}))
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

// keyWrapFunc is one of token/keywrap's functions.
type keyWrapFunc func(b cipher.Block, iv, in []byte) ([]byte, error)

// aesKeyWrapWith makes a mechanism's wrap (or unwrap) from a keywrap
// function: the operation's key is the AES key, its parameter the IV.
func aesKeyWrapWith(f keyWrapFunc, wrap bool) func(op *operation, in []byte) ([]byte, error) {
	return func(op *operation, in []byte) ([]byte, error) {
		b, err := op.aesBlock()
		if err != nil {
			return nil, err
		}
		out, err := f(b, op.params.([]byte), in)
		if wrap && errors.Is(err, keywrap.ErrLength) {
			return nil, ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "%s cannot wrap a key of %d bytes (CKM_AES_KEY_WRAP: 16 or more, in multiples of 8; CKM_AES_KEY_WRAP_KWP: any)",
				ck.Name("CKM_", op.mech.typ), len(in))
		}
		return out, kwErr(err)
	}
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
	if err != nil {
		return nil, unwrapErr(err)
	}
	if len(out) == 0 {
		return nil, ck.Errorf(ck.CKR_WRAPPED_KEY_INVALID, "an empty key")
	}
	return out, nil
}
