package mech

// CKM_AES_GCM (PKCS#11 3.0 Current Mechanisms §2.12.1), single- and
// multi-part.
//
//   - The parameter is CK_GCM_PARAMS, decoded by the C layer into
//     Mechanism.GCM from either form: PKCS#11 3.0's (with ulIvBits) or
//     2.40's (without). The IV is 1 to 4096 bytes (12 is the recommended
//     size; the caller must never repeat an IV under one key, and a repeat
//     within the window of token/gcmiv.go is refused at Init); ulIvBits
//     is ignored (ulIvLen decides: Node's pkcs11js leaves it garbage). The
//     tag is 32, 64, 96, 104, 112, 120 or 128 bits (NIST SP 800-38D §5.2.1.2);
//     anything else is CKR_MECHANISM_PARAM_INVALID. The AAD is any length.
//   - Go's crypto/cipher GCM is not incremental: the Update calls buffer
//     (their output is empty) and Final encrypts, or decrypts and checks
//     the tag, at once. Decrypted data is released only after the tag
//     matched; a wrong tag is CKR_ENCRYPTED_DATA_INVALID, a ciphertext
//     shorter than the tag CKR_ENCRYPTED_DATA_LEN_RANGE. At most 64 MiB are
//     buffered (CKR_DATA_LEN_RANGE or CKR_ENCRYPTED_DATA_LEN_RANGE beyond).
//   - Tags shorter than 16 bytes are the leading bytes of the full tag
//     (SP 800-38D §7.1). With a 12-byte IV crypto/cipher takes the tag size
//     directly; with another IV size the full tag is computed and cut, and
//     decryption recovers the plaintext from the keystream (a sealing of
//     zeros) before sealing it again to compare the leading tag bytes in
//     constant time.

import (
	"crypto/cipher"

	"github.com/modexp-token/modexp-token/token/ck"
)

// GCM parameter limits.
const (
	gcmMaxIV       = 4096
	gcmStandardIV  = 12
	gcmFullTagSize = 16
)

// AESGCM is CKM_AES_GCM bound to its CK_GCM_PARAMS.
type AESGCM struct {
	MechBase
	p *gcmParam
	// b is the memory of a bound copy (nil in the registry's value).
	b *gcmBinding
}

// gcmBinding is a bound CKM_AES_GCM in one allocation: the mechanism, its
// parameter and the stream of its operation, which the session's next
// GCM Init overwrites (rebind) once the operation ended.
type gcmBinding struct {
	m  AESGCM
	p  gcmParam
	st gcmStream
}

// gcmKeepAAD bounds the AAD buffer a binding keeps for the next one.
const gcmKeepAAD = 4096

// gcmParam is a checked CK_GCM_PARAMS.
type gcmParam struct {
	iv, aad []byte
	TagLen  int
	// ivUsed: the caller IV was recorded in the Module's window (token/gcmiv.go)
	// by this operation's first encryption stream; a single-part retry
	// (resetInput) makes a new stream for the same IV and must not count
	// it twice.
	ivUsed bool
}

func (m *AESGCM) withParam(cm *CKMechanism) (Mechanism, error) { return m.rebind(nil, cm) }

func (m *AESGCM) rebind(prev Mechanism, cm *CKMechanism) (Mechanism, error) {
	p, err := checkGCMParam(cm)
	if err != nil {
		return nil, err
	}
	if old, ok := prev.(*AESGCM); ok && old.b != nil && &old.b.m == old {
		return m.bindInto(old.b, p), nil
	}
	return m.bindInto(new(gcmBinding), p), nil
}

// bindInto makes b the binding of m to the checked parameter p, reusing
// the buffers b has.
func (m *AESGCM) bindInto(b *gcmBinding, p *GCMParams) *AESGCM {
	aad := b.p.aad[:0]
	if cap(aad) > gcmKeepAAD {
		aad = nil
	}
	b.p = gcmParam{iv: append(b.p.iv[:0], p.IV...), aad: append(aad, p.AAD...), TagLen: int(p.TagBits / 8)}
	b.st = gcmStream{}
	b.m = AESGCM{MechBase: m.MechBase, p: &b.p, b: b}
	return &b.m
}

// checkGCMParam returns cm's CK_GCM_PARAMS once checked.
func checkGCMParam(cm *CKMechanism) (*GCMParams, error) {
	p := cm.GCM
	if p == nil || len(cm.Param) != 0 {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKM_AES_GCM needs CK_GCM_PARAMS")
	}
	if len(p.IV) < 1 || len(p.IV) > gcmMaxIV {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKM_AES_GCM: IV of %d bytes, want 1 to %d", len(p.IV), gcmMaxIV)
	}
	// ulIvBits is not checked: ulIvLen is authoritative (as in SoftHSMv2).
	// pkcs11js 2.1.7, under graphene-pk11 too, hands over CK_GCM_PARAMS
	// with ulIvBits uninitialised (test/nodeclient).
	switch p.TagBits {
	case 32, 64, 96, 104, 112, 120, 128:
	default:
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKM_AES_GCM: tag of %d bits", p.TagBits)
	}
	return p, nil
}

// gcmStream buffers the message for Final.
type gcmStream struct {
	P       *gcmParam
	aead    cipher.AEAD // tag of p.tagLen bytes, or full when cut is set
	cut     bool        // aead makes full tags: cut them to p.tagLen
	encrypt bool
	Buf     []byte
}

// NewStream is StreamCipher's: a GCM encryption or decryption in parts.
func (m *AESGCM) NewStream(op Op) (SymStream, error) {
	k, err := aesPrepared(op)
	if err != nil {
		return nil, err
	}
	p := m.p
	encrypt := op.Kind() == OpEncrypt
	if encrypt && !p.ivUsed {
		if err := checkCallerIV(op, p.iv); err != nil {
			return nil, err
		}
		p.ivUsed = true
	}
	if m.b != nil {
		s := &m.b.st // the binding's: its operation's only stream
		if err := initGCMStream(s, k, p, encrypt); err != nil {
			return nil, err
		}
		return s, nil
	}
	return newGCMStream(k, p, encrypt)
}

// checkCallerIV applies the slot's gcm_caller_iv switch and the Module's
// window (token/gcmiv.go) to a caller-chosen IV for an encryption under op's
// key, and records it.
func checkCallerIV(op Op, iv []byte) error {
	if !op.Slot().Policy().GCMCallerIVOn() {
		return ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKM_AES_GCM: caller-chosen IVs are refused for encryption in this slot (gcm_caller_iv = false)")
	}
	if !op.Slot().UseGCMIV(op.Key(), iv) {
		return ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKM_AES_GCM: this key already encrypted with this IV (the last %d IVs of a key are refused)", GCMIVWindow)
	}
	return nil
}

// newGCMStream is the GCM of key k for the checked parameter p.
func newGCMStream(k *aesKey, p *gcmParam, encrypt bool) (*gcmStream, error) {
	s := new(gcmStream)
	if err := initGCMStream(s, k, p, encrypt); err != nil {
		return nil, err
	}
	return s, nil
}

// initGCMStream makes *s the GCM of key k for the checked parameter p.
func initGCMStream(s *gcmStream, k *aesKey, p *gcmParam, encrypt bool) error {
	*s = gcmStream{P: p, encrypt: encrypt}
	b := k.block
	var err error
	switch {
	case len(p.iv) == gcmStandardIV && p.TagLen == gcmFullTagSize:
		s.aead, err = k.standardGCM()
	case len(p.iv) == gcmStandardIV && p.TagLen >= 12:
		s.aead, err = cipher.NewGCMWithTagSize(b, p.TagLen)
	case len(p.iv) == gcmStandardIV:
		s.aead, err = cipher.NewGCM(b)
		s.cut = true
	default:
		s.aead, err = cipher.NewGCMWithNonceSize(b, len(p.iv))
		s.cut = p.TagLen != gcmFullTagSize
	}
	if err != nil {
		return ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKM_AES_GCM: %v", err)
	}
	return nil
}

func (s *gcmStream) lenErr() ck.Error {
	if s.encrypt {
		return ck.CKR_DATA_LEN_RANGE
	}
	return ck.CKR_ENCRYPTED_DATA_LEN_RANGE
}

func (s *gcmStream) UpdateLen(n int) (int, error) {
	if len(s.Buf)+n > MaxBuffered {
		return 0, ck.Errorf(s.lenErr(), "CKM_AES_GCM buffers at most %d bytes", MaxBuffered)
	}
	return 0, nil
}

func (s *gcmStream) Update(_, in []byte) ([]byte, error) {
	if _, err := s.UpdateLen(len(in)); err != nil {
		return nil, err
	}
	s.Buf = append(s.Buf, in...)
	return []byte{}, nil
}

// onceLen is the single-part output length: the message and the tag, or
// the ciphertext without it.
func (s *gcmStream) onceLen(n int) (int, error) {
	if _, err := s.UpdateLen(n); err != nil {
		return 0, err
	}
	if s.encrypt {
		return n + s.P.TagLen, nil
	}
	if n < s.P.TagLen {
		return 0, ck.Errorf(ck.CKR_ENCRYPTED_DATA_LEN_RANGE, "ciphertext of %d bytes is shorter than the %d-byte tag", n, s.P.TagLen)
	}
	return n - s.P.TagLen, nil
}

// once seals or opens in straight into dst, without buffering it
// (onceStream); a cut tag takes final's path.
func (s *gcmStream) once(dst, in []byte) ([]byte, error) {
	p := s.P
	if s.cut {
		s.Buf = in
		r, err := s.Final()
		s.Buf = nil
		if err != nil {
			return nil, err
		}
		return append(dst[:0], r...), nil
	}
	if s.encrypt {
		return s.aead.Seal(dst[:0], p.iv, in, p.aad), nil
	}
	out, err := s.aead.Open(dst[:0], p.iv, in, p.aad) // clears dst on a mismatch
	if err != nil {
		return nil, ck.Errorf(ck.CKR_ENCRYPTED_DATA_INVALID, "GCM tag mismatch")
	}
	return out, nil
}

func (s *gcmStream) Final() ([]byte, error) {
	p := s.P
	if s.encrypt {
		out := s.aead.Seal(nil, p.iv, s.Buf, p.aad)
		if s.cut {
			out = out[:len(s.Buf)+p.TagLen]
		}
		return out, nil
	}
	if len(s.Buf) < p.TagLen {
		return nil, ck.Errorf(ck.CKR_ENCRYPTED_DATA_LEN_RANGE, "ciphertext of %d bytes is shorter than the %d-byte tag", len(s.Buf), p.TagLen)
	}
	if !s.cut {
		out, err := s.aead.Open(nil, p.iv, s.Buf, p.aad)
		if err != nil {
			return nil, ck.Errorf(ck.CKR_ENCRYPTED_DATA_INVALID, "GCM tag mismatch")
		}
		if out == nil {
			out = []byte{}
		}
		return out, nil
	}
	// A cut tag: the plaintext is the ciphertext xor the keystream (the
	// sealing of zeros), and must seal to the same leading tag bytes.
	n := len(s.Buf) - p.TagLen
	ct, tag := s.Buf[:n], s.Buf[n:]
	ks := s.aead.Seal(nil, p.iv, make([]byte, n), nil)
	pt := make([]byte, n)
	for i := range pt {
		pt[i] = ct[i] ^ ks[i]
	}
	full := s.aead.Seal(nil, p.iv, pt, p.aad)
	if !EqualCT(full[n:n+p.TagLen], tag) {
		clear(pt)
		return nil, ck.Errorf(ck.CKR_ENCRYPTED_DATA_INVALID, "GCM tag mismatch")
	}
	return pt, nil
}
