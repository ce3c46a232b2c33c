package mech

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
// CKM_AES_CBC_PAD (aes_cbc.go) wraps too: the key material encrypted
// with the 16-byte IV of its parameter and PKCS#7 padding, any secret key
// and RSA and EC private keys as PKCS#8; CKM_AES_ECB and CKM_AES_CBC a
// secret key of whole blocks.
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

// aesKWMechanisms are the AES key wrap mechanisms.
func aesKWMechanisms() []Mechanism {
	return []Mechanism{
		&aesKW{MechBase: aesBase(ck.CKM_AES_KEY_WRAP), ivLen: 8, wrapF: keywrap.Wrap, unwrapF: keywrap.Unwrap},
		&aesKW{MechBase: aesBase(ck.CKM_AES_KEY_WRAP_PAD), wrapF: keywrap.WrapPad, unwrapF: keywrap.UnwrapPad, private: true},
		&aesKW{MechBase: aesBase(ckmAESKeyWrapKWP), ivLen: 4, wrapF: keywrap.WrapPad, unwrapF: keywrap.UnwrapPad, private: true},
	}
}

// keyWrapFunc is one of token/keywrap's functions.
type keyWrapFunc func(b cipher.Block, iv, in []byte) ([]byte, error)

// aesKW is an AES key wrap mechanism bound to its initial value.
type aesKW struct {
	MechBase
	ivLen          int // the optional initial value's length (0: none taken)
	wrapF, unwrapF keyWrapFunc
	private        bool   // wraps private keys (as PKCS#8) too
	iv             []byte // the bound initial value (nil: the default)
}

// withParam decodes an optional initial value of ivLen bytes.
func (m *aesKW) withParam(cm *CKMechanism) (Mechanism, error) {
	if cm.PSS != nil || cm.OAEP != nil {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s takes no such parameter", m.Name())
	}
	b := *m
	switch {
	case len(cm.Param) == 0:
		b.iv = nil
	case m.ivLen != 0 && len(cm.Param) == m.ivLen:
		b.iv = append([]byte(nil), cm.Param...)
	case m.ivLen == 0:
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s takes no parameter", m.Name())
	default:
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s: an initial value of %d bytes, want %d or none",
			m.Name(), len(cm.Param), m.ivLen)
	}
	return &b, nil
}

func (m *aesKW) WrapsPrivate() bool { return m.private }

func (m *aesKW) Wrap(op Op, material []byte) ([]byte, error) {
	b, err := aesBlock(op)
	if err != nil {
		return nil, err
	}
	out, err := m.wrapF(b, m.iv, material)
	if errors.Is(err, keywrap.ErrLength) {
		return nil, ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "%s cannot wrap a key of %d bytes (CKM_AES_KEY_WRAP: 16 or more, in multiples of 8; CKM_AES_KEY_WRAP_KWP: any)",
			m.Name(), len(material))
	}
	return out, kwErr(err)
}

func (m *aesKW) Unwrap(op Op, wrapped []byte) ([]byte, error) {
	b, err := aesBlock(op)
	if err != nil {
		return nil, err
	}
	out, err := m.unwrapF(b, m.iv, wrapped)
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
