package mech

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
//   - All three wrap (C_WrapKey, C_UnwrapKey) a secret key's value: ECB and
//     CBC one of whole blocks (else CKR_KEY_SIZE_RANGE), CBC_PAD any, and
//     private keys as PKCS#8 too.
//
// Key sizes in CK_MECHANISM_INFO are bytes: 16 to 32.

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"sync"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/internal/aesni"
)

// aesBase is the common part of the AES mechanisms.
func aesBase(typ uint64) MechBase {
	return MechBase{Type: typ, KeyTypes: []uint64{ck.CKK_AES}, MinBits: 16, MaxBits: 32, SizeInBytes: true}
}

// CopiesParam reports whether binding mechanism typ to its parameter
// (BindParam, BindParamReusing) copies whatever the binding keeps of it:
// CK_GCM_PARAMS' IV and AAD, the CBC IV, CK_AES_CTR_PARAMS. The C layer
// then passes those parameters as views of the caller's memory
// (TestBindingCopiesParam).
func CopiesParam(typ uint64) bool {
	switch typ {
	case ck.CKM_AES_GCM, ck.CKM_AES_CBC, ck.CKM_AES_CBC_PAD, ck.CKM_AES_CTR, ck.CKM_AES_ECB:
		return true
	}
	return false
}

// aesBlockMechanisms are CKM_AES_ECB, CKM_AES_CBC and CKM_AES_CBC_PAD.
func aesBlockMechanisms() []Mechanism {
	return []Mechanism{
		&aesBlockMode{MechBase: aesBase(ck.CKM_AES_ECB)},
		&aesBlockMode{MechBase: aesBase(ck.CKM_AES_CBC), cbc: true},
		&aesBlockMode{MechBase: aesBase(ck.CKM_AES_CBC_PAD), cbc: true, pad: true},
	}
}

// aesBlockMode is CKM_AES_ECB or CKM_AES_CBC (cbc), bound to its IV; with
// newCipher, the same modes of another block cipher (des.go: Triple
// DES, 8-byte blocks).
type aesBlockMode struct {
	MechBase
	cbc, pad  bool
	iv        []byte
	newCipher func(key []byte) (cipher.Block, error) // nil: AES
	blockLen  int                                    // newCipher's block size
	// b is the memory of a bound copy (nil in the registry's values).
	b *blockBinding
}

// blockBinding is a bound ECB, CBC or CBC_PAD in one allocation: the
// mechanism, its IV and its operation's stream (with the AES-CBC
// encrypter), which the session's next Init of the mode overwrites
// (rebind) once the operation ended.
type blockBinding struct {
	m   aesBlockMode
	iv  [aes.BlockSize]byte
	st  blockStream
	buf [2 * aes.BlockSize]byte // st.buf's room
	enc aesni.CBCEncrypter
	ecb ecbMode
}

// block returns the cipher of the operation's key.
func (m *aesBlockMode) block(op Op) (cipher.Block, error) {
	if m.newCipher == nil {
		return aesBlock(op)
	}
	k, err := op.Key().SecretValue()
	if err != nil {
		return nil, err
	}
	return m.newCipher(k)
}

// bs is the block size (and CBC's IV length).
func (m *aesBlockMode) bs() int {
	if m.newCipher == nil {
		return aes.BlockSize
	}
	return m.blockLen
}

func (m *aesBlockMode) withParam(cm *CKMechanism) (Mechanism, error) { return m.rebind(nil, cm) }

func (m *aesBlockMode) rebind(prev Mechanism, cm *CKMechanism) (Mechanism, error) {
	if err := m.checkIV(cm); err != nil {
		return nil, err
	}
	if old, ok := prev.(*aesBlockMode); ok && old.b != nil && &old.b.m == old {
		return m.bindInto(old.b, cm), nil
	}
	return m.bindInto(new(blockBinding), cm), nil
}

// checkIV checks CBC's IV, one block (ECB takes no parameter).
func (m *aesBlockMode) checkIV(cm *CKMechanism) error {
	if !m.cbc {
		return noParam(m, cm)
	}
	if len(cm.Param) != m.bs() || cm.Decoded() {
		return ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s needs a %d-byte IV, got %d bytes", m.Name(), m.bs(), len(cm.Param))
	}
	return nil
}

// bindInto makes b the binding of m to cm's checked IV.
func (m *aesBlockMode) bindInto(b *blockBinding, cm *CKMechanism) *aesBlockMode {
	b.m = *m
	b.m.b = b
	if m.cbc {
		b.m.iv = b.iv[:copy(b.iv[:], cm.Param)]
	}
	return &b.m
}

// Wrap encrypts a secret key's value (C_WrapKey): ECB and CBC take whole
// blocks (another length is CKR_KEY_SIZE_RANGE), the padded modes any.
func (m *aesBlockMode) Wrap(op Op, material []byte) ([]byte, error) {
	if !m.pad && len(material)%m.bs() != 0 {
		return nil, ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "%s wraps whole %d-byte blocks, the key is %d bytes", m.Name(), m.bs(), len(material))
	}
	if err := op.InitInput(); err != nil {
		return nil, err
	}
	return StreamOnce(op, material, nil)
}

// Unwrap decrypts a wrapped secret key's value (C_UnwrapKey): a length
// that is not whole blocks is CKR_WRAPPED_KEY_LEN_RANGE, bad padding
// CKR_WRAPPED_KEY_INVALID.
func (m *aesBlockMode) Unwrap(op Op, wrapped []byte) ([]byte, error) {
	if len(wrapped) == 0 || len(wrapped)%m.bs() != 0 {
		return nil, ck.Errorf(ck.CKR_WRAPPED_KEY_LEN_RANGE, "%s unwraps whole %d-byte blocks, got %d bytes", m.Name(), m.bs(), len(wrapped))
	}
	if err := op.InitInput(); err != nil {
		return nil, err
	}
	out, err := StreamOnce(op, wrapped, nil)
	if err != nil {
		return nil, unwrapErr(err)
	}
	if len(out) == 0 {
		return nil, ck.Errorf(ck.CKR_WRAPPED_KEY_INVALID, "an empty key")
	}
	return out, nil
}

// WrapsPrivate: ECB and CBC wrap secret keys only; the padded modes
// private keys too (PKCS#8).
func (m *aesBlockMode) WrapsPrivate() bool { return m.pad }

// aesKey is an AES key object's prepared form (preparedKey): the round
// keys of crypto/aes and of the aesni kernels (CBC encryption, CBC-MAC,
// CMAC), made once per object snapshot and shared, read-only, by the
// operations of every session.
type aesKey struct {
	block cipher.Block
	ni    *aesni.Key

	// gcm is GCM with a 12-byte IV and a 16-byte tag, the usual
	// parameters, made on first use (its tables of powers of H) and then
	// shared: a crypto/cipher AEAD is not changed by Seal and Open.
	gcmOnce sync.Once
	gcm     cipher.AEAD
	gcmErr  error
}

// standardGCM returns the key's GCM with a 12-byte IV and a 16-byte tag.
func (k *aesKey) standardGCM() (cipher.AEAD, error) {
	k.gcmOnce.Do(func() { k.gcm, k.gcmErr = cipher.NewGCM(k.block) })
	return k.gcm, k.gcmErr
}

// aesPrepared returns the prepared AES key of the operation.
func aesPrepared(op Op) (*aesKey, error) {
	if k, ok := cachedKey[*aesKey](op.Key()); ok {
		return k, nil
	}
	return preparedKey(op.Key(), nil, func() (*aesKey, error) {
		k, err := op.Key().SecretValue()
		if err != nil {
			return nil, err
		}
		b, err := aes.NewCipher(k)
		if err != nil {
			return nil, ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "AES key of %d bytes", len(k))
		}
		ni, err := aesni.NewKey(k)
		if err != nil {
			return nil, ck.Errorf(ck.CKR_KEY_SIZE_RANGE, "AES key: %v", err)
		}
		return &aesKey{block: b, ni: ni}, nil
	})
}

// aesBlock returns the AES cipher of the operation's key.
func aesBlock(op Op) (cipher.Block, error) {
	k, err := aesPrepared(op)
	if err != nil {
		return nil, err
	}
	return k.block, nil
}

// blockStream is ECB, CBC or CBC_PAD in one direction.
type blockStream struct {
	mode    cipher.BlockMode
	bs      int // the block size
	encrypt bool
	pad     bool
	buf     []byte              // input held back: a partial block (and the last block when unpadding)
	last    [aes.BlockSize]byte // once's padded last block (bs ≤ 16)
}

func (m *aesBlockMode) NewStream(op Op) (SymStream, error) {
	encrypt := op.Kind() == OpEncrypt
	if m.cbc && encrypt && m.newCipher == nil {
		// AES-CBC encryption on the kernel that keeps the round keys in
		// registers (crypto/cipher calls the cipher block by block).
		k, err := aesPrepared(op)
		if err != nil {
			return nil, err
		}
		if b := m.b; b != nil {
			// The binding's stream and encrypter: its operation's only ones.
			b.enc.Reset(k.ni, m.iv)
			b.st = blockStream{mode: &b.enc, bs: aes.BlockSize, encrypt: true, pad: m.pad, buf: b.buf[:0]}
			return &b.st, nil
		}
		return &blockStream{mode: aesni.NewCBCEncrypter(k.ni, m.iv), bs: aes.BlockSize, encrypt: true, pad: m.pad,
			buf: make([]byte, 0, 2*aes.BlockSize)}, nil
	}
	b, err := m.block(op)
	if err != nil {
		return nil, err
	}
	var s *blockStream
	if bb := m.b; bb != nil {
		bb.st = blockStream{bs: b.BlockSize(), encrypt: encrypt, pad: m.pad, buf: bb.buf[:0]}
		s = &bb.st
	} else {
		s = &blockStream{bs: b.BlockSize(), encrypt: encrypt, pad: m.pad, buf: make([]byte, 0, 2*b.BlockSize())}
	}
	switch {
	case !m.cbc && m.b != nil:
		m.b.ecb = ecbMode{b: b, encrypt: s.encrypt}
		s.mode = &m.b.ecb
	case !m.cbc:
		s.mode = ecbMode{b: b, encrypt: s.encrypt}
	case s.encrypt:
		s.mode = cipher.NewCBCEncrypter(b, m.iv)
	default:
		s.mode = cipher.NewCBCDecrypter(b, m.iv)
	}
	return s, nil
}

func (s *blockStream) UpdateLen(n int) (int, error) {
	t := len(s.buf) + n
	if s.pad && !s.encrypt && t > 0 {
		// Keep the last block (1 to 16 bytes) back for Final.
		r := t % s.bs
		if r == 0 {
			r = s.bs
		}
		return t - r, nil
	}
	return t - t%s.bs, nil
}

func (s *blockStream) Update(dst, in []byte) ([]byte, error) {
	n, _ := s.UpdateLen(len(in))
	out := dst
	if len(out) < n {
		out = make([]byte, n, n+s.bs) // room for Final's block (streamOnce)
	}
	out = out[:n]
	if n == 0 {
		s.buf = append(s.buf, in...)
		return out, nil
	}
	// The first block may straddle the held-back bytes and the input.
	done := 0
	if len(s.buf) > 0 {
		k := s.bs - len(s.buf)
		s.buf = append(s.buf, in[:k]...)
		s.mode.CryptBlocks(out[:s.bs], s.buf)
		in, done = in[k:], s.bs
		s.buf = s.buf[:0]
	}
	rest := n - done
	s.mode.CryptBlocks(out[done:], in[:rest])
	s.buf = append(s.buf, in[rest:]...)
	return out, nil
}

// onceLen is the single-part output length: whole blocks, one more with
// padding when encrypting; the length errors are those of final.
func (s *blockStream) onceLen(n int) (int, error) {
	switch {
	case s.encrypt && s.pad:
		return n - n%s.bs + s.bs, nil
	case s.encrypt && n%s.bs != 0:
		return 0, ck.Errorf(ck.CKR_DATA_LEN_RANGE, "input is not a multiple of the block size")
	case !s.encrypt && s.pad && (n == 0 || n%s.bs != 0):
		return 0, ck.Errorf(ck.CKR_ENCRYPTED_DATA_LEN_RANGE, "padded ciphertext is not a positive multiple of the block size")
	case n%s.bs != 0:
		return 0, ck.Errorf(ck.CKR_ENCRYPTED_DATA_LEN_RANGE, "ciphertext is not a multiple of the block size")
	}
	return n, nil
}

// once is the single-part call from in to dst (onceStream): the whole
// blocks in one CryptBlocks, then the padding block, or the unpadding of
// the last block in place.
func (s *blockStream) once(dst, in []byte) ([]byte, error) {
	full := len(in) - len(in)%s.bs
	last := &s.last // in the stream: a local array would escape to the heap (CryptBlocks)
	if s.encrypt && s.pad {
		r := copy(last[:], in[full:]) // before dst, which may be in, is written
		for i := r; i < s.bs; i++ {
			last[i] = byte(s.bs - r)
		}
	}
	s.mode.CryptBlocks(dst[:full], in[:full])
	switch {
	case s.encrypt && s.pad:
		s.mode.CryptBlocks(dst[full:full+s.bs], last[:s.bs])
		return dst[:full+s.bs], nil
	case !s.encrypt && s.pad:
		n, ok := unpadPKCS7(dst[full-s.bs : full])
		if !ok {
			clear(dst[:full])
			return nil, ck.Errorf(ck.CKR_ENCRYPTED_DATA_INVALID, "bad padding")
		}
		return dst[:full-s.bs+n], nil
	}
	return dst[:full], nil
}

func (s *blockStream) Final() ([]byte, error) {
	switch {
	case s.encrypt && !s.pad:
		if len(s.buf) != 0 {
			return nil, ck.Errorf(ck.CKR_DATA_LEN_RANGE, "input is not a multiple of the block size")
		}
		return []byte{}, nil
	case s.encrypt:
		p := s.bs - len(s.buf)
		blk := append(s.buf, make([]byte, p)...)
		for i := len(blk) - p; i < len(blk); i++ {
			blk[i] = byte(p)
		}
		out := make([]byte, s.bs)
		s.mode.CryptBlocks(out, blk)
		return out, nil
	case !s.pad:
		if len(s.buf) != 0 {
			return nil, ck.Errorf(ck.CKR_ENCRYPTED_DATA_LEN_RANGE, "ciphertext is not a multiple of the block size")
		}
		return []byte{}, nil
	}
	if len(s.buf) != s.bs {
		return nil, ck.Errorf(ck.CKR_ENCRYPTED_DATA_LEN_RANGE, "padded ciphertext is not a positive multiple of the block size")
	}
	blk := make([]byte, s.bs)
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

// ecbMode is ECB as a cipher.BlockMode.
type ecbMode struct {
	b       cipher.Block
	encrypt bool
}

func (e ecbMode) BlockSize() int { return e.b.BlockSize() }

func (e ecbMode) CryptBlocks(dst, src []byte) {
	bs := e.b.BlockSize()
	for i := 0; i < len(src); i += bs {
		if e.encrypt {
			e.b.Encrypt(dst[i:i+bs], src[i:i+bs])
		} else {
			e.b.Decrypt(dst[i:i+bs], src[i:i+bs])
		}
	}
}
