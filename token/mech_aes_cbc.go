package token

// CKM_AES_ECB, CKM_AES_CBC and CKM_AES_CBC_PAD (PKCS#11 3.0 Current
// Mechanisms §2.10), single- and multi-part.
//
//   - ECB and CBC take whole blocks: a total input that is not a multiple
//     of 16 bytes is CKR_DATA_LEN_RANGE when encrypting and
//     CKR_ENCRYPTED_DATA_LEN_RANGE when decrypting (at Final, or at the
//     single-part call). An empty input gives an empty output.
//   - CBC_PAD pads with PKCS#7 (1 to 16 bytes): the ciphertext is always a
//     positive multiple of 16 bytes. Decrypting, C_DecryptUpdate holds the
//     last block back (its output is the whole blocks before the last
//     one) and C_DecryptFinal removes the padding; a ciphertext of the
//     wrong length is CKR_ENCRYPTED_DATA_LEN_RANGE, bad padding
//     CKR_ENCRYPTED_DATA_INVALID (checked in constant time).
//   - CBC and CBC_PAD take the 16-byte IV as parameter
//     (CKR_MECHANISM_PARAM_INVALID otherwise), ECB none.
//
// Key sizes in CK_MECHANISM_INFO are bytes: 16 to 32.

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"

	"github.com/modexp-token/modexp-token/token/ck"
)

// aesMechanism is the common shape of the AES mechanisms.
func aesMechanism(m *mechanism) *mechanism {
	m.keyTypes, m.minBits, m.maxBits, m.sizeInBytes = []uint64{ck.CKK_AES}, 16, 32, true
	return m
}

func init() {
	for _, m := range []struct {
		typ       uint64
		cbc, pad  bool
		paramFunc func(*mechanism, *Mechanism) (any, error)
	}{
		{ck.CKM_AES_ECB, false, false, nil},
		{ck.CKM_AES_CBC, true, false, ivParam},
		{ck.CKM_AES_CBC_PAD, true, true, ivParam},
	} {
		mech := aesMechanism(&mechanism{
			typ: m.typ, flags: ck.CKF_ENCRYPT | ck.CKF_DECRYPT,
			params: m.paramFunc, newStream: newBlockStream(m.cbc, m.pad),
			encrypt: streamOnce, decrypt: streamOnce,
		})
		if m.pad { // CBC_PAD also wraps (aeskw_mech.go)
			mech.flags |= ck.CKF_WRAP | ck.CKF_UNWRAP
			mech.wrap, mech.unwrap, mech.wrapsPrivate = streamWrap, streamUnwrap, true
		}
		registerMechanism(mech)
	}
}

// ivParam decodes the 16-byte IV of CBC and CBC_PAD.
func ivParam(mech *mechanism, m *Mechanism) (any, error) {
	if len(m.Param) != aes.BlockSize || m.decoded() {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s needs a 16-byte IV, got %d bytes", ck.Name("CKM_", mech.typ), len(m.Param))
	}
	return append([]byte(nil), m.Param...), nil
}

// aesBlock returns the AES cipher of the operation's key.
func (op *operation) aesBlock() (cipher.Block, error) {
	k, err := op.key.secretValue()
	if err != nil {
		return nil, err
	}
	b, err := aes.NewCipher(k)
	if err != nil {
		return nil, ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "AES key of %d bytes", len(k))
	}
	return b, nil
}

// blockStream is ECB, CBC or CBC_PAD in one direction.
type blockStream struct {
	mode    cipher.BlockMode
	encrypt bool
	pad     bool
	buf     []byte // input held back: a partial block (and the last block when unpadding)
}

func newBlockStream(cbc, pad bool) func(op *operation) (symStream, error) {
	return func(op *operation) (symStream, error) {
		b, err := op.aesBlock()
		if err != nil {
			return nil, err
		}
		s := &blockStream{encrypt: op.kind == opEncrypt, pad: pad, buf: make([]byte, 0, 2*aes.BlockSize)}
		switch {
		case !cbc:
			s.mode = ecbMode{b: b, encrypt: s.encrypt}
		case s.encrypt:
			s.mode = cipher.NewCBCEncrypter(b, op.params.([]byte))
		default:
			s.mode = cipher.NewCBCDecrypter(b, op.params.([]byte))
		}
		return s, nil
	}
}

func (s *blockStream) updateLen(n int) (int, error) {
	t := len(s.buf) + n
	if s.pad && !s.encrypt && t > 0 {
		// Keep the last block (1 to 16 bytes) back for Final.
		r := t % aes.BlockSize
		if r == 0 {
			r = aes.BlockSize
		}
		return t - r, nil
	}
	return t - t%aes.BlockSize, nil
}

func (s *blockStream) update(in []byte) ([]byte, error) {
	n, _ := s.updateLen(len(in))
	out := make([]byte, n, n+aes.BlockSize) // room for Final's block (streamOnce)
	if n == 0 {
		s.buf = append(s.buf, in...)
		return out, nil
	}
	// The first block may straddle the held-back bytes and the input.
	done := 0
	if len(s.buf) > 0 {
		k := aes.BlockSize - len(s.buf)
		s.buf = append(s.buf, in[:k]...)
		s.mode.CryptBlocks(out[:aes.BlockSize], s.buf)
		in, done = in[k:], aes.BlockSize
		s.buf = s.buf[:0]
	}
	rest := n - done
	s.mode.CryptBlocks(out[done:], in[:rest])
	s.buf = append(s.buf, in[rest:]...)
	return out, nil
}

func (s *blockStream) final() ([]byte, error) {
	switch {
	case s.encrypt && !s.pad:
		if len(s.buf) != 0 {
			return nil, ck.Errorf(ck.CKR_DATA_LEN_RANGE, "input is not a multiple of the block size")
		}
		return []byte{}, nil
	case s.encrypt:
		p := aes.BlockSize - len(s.buf)
		blk := append(s.buf, make([]byte, p)...)
		for i := len(blk) - p; i < len(blk); i++ {
			blk[i] = byte(p)
		}
		out := make([]byte, aes.BlockSize)
		s.mode.CryptBlocks(out, blk)
		return out, nil
	case !s.pad:
		if len(s.buf) != 0 {
			return nil, ck.Errorf(ck.CKR_ENCRYPTED_DATA_LEN_RANGE, "ciphertext is not a multiple of the block size")
		}
		return []byte{}, nil
	}
	if len(s.buf) != aes.BlockSize {
		return nil, ck.Errorf(ck.CKR_ENCRYPTED_DATA_LEN_RANGE, "padded ciphertext is not a positive multiple of the block size")
	}
	blk := make([]byte, aes.BlockSize)
	s.mode.CryptBlocks(blk, s.buf)
	n, ok := unpadPKCS7(blk)
	if !ok {
		return nil, ck.Errorf(ck.CKR_ENCRYPTED_DATA_INVALID, "bad padding")
	}
	return blk[:n], nil
}

// unpadPKCS7 checks the padding of a last block in constant time and
// returns the data length.
func unpadPKCS7(blk []byte) (int, bool) {
	p := int(blk[len(blk)-1])
	good := subtle.ConstantTimeLessOrEq(1, p) & subtle.ConstantTimeLessOrEq(p, len(blk))
	for i := 0; i < len(blk); i++ {
		// Byte i is padding if i >= len-p; then it must equal p.
		inPad := subtle.ConstantTimeLessOrEq(len(blk)-p, i)
		eq := subtle.ConstantTimeByteEq(blk[i], byte(p))
		good &= subtle.ConstantTimeSelect(inPad, eq, 1)
	}
	return len(blk) - p, good == 1
}

// ecbMode is AES-ECB as a cipher.BlockMode.
type ecbMode struct {
	b       cipher.Block
	encrypt bool
}

func (e ecbMode) BlockSize() int { return e.b.BlockSize() }

func (e ecbMode) CryptBlocks(dst, src []byte) {
	for i := 0; i < len(src); i += aes.BlockSize {
		if e.encrypt {
			e.b.Encrypt(dst[i:i+aes.BlockSize], src[i:i+aes.BlockSize])
		} else {
			e.b.Decrypt(dst[i:i+aes.BlockSize], src[i:i+aes.BlockSize])
		}
	}
}
