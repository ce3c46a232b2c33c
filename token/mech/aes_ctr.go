package mech

// CKM_AES_CTR (PKCS#11 3.0 Current Mechanisms §2.10.5 and RFC 3686's
// counter block): the parameter is CK_AES_CTR_PARAMS { CK_ULONG
// ulCounterBits; CK_BYTE cb[16] }, passed by the C layer as its raw bytes
// (a CK_ULONG as ck.ULong encodes it, then the 16-byte counter block).
//
// The low ulCounterBits bits of the block (1 to 128) are the counter, a
// big-endian integer incremented per block; the other bits stay fixed.
// The counter may not wrap: a message needing more blocks than the
// counter has values left is CKR_DATA_LEN_RANGE (encrypting) or
// CKR_ENCRYPTED_DATA_LEN_RANGE (decrypting). CTR is a stream: any length,
// each Update returns as many bytes as it is given, Final returns none.

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"math/bits"

	"github.com/modexp-token/modexp-token/token/ck"
)

// ctrParamLen is sizeof(CK_AES_CTR_PARAMS) with an 8-byte CK_ULONG.
const ctrParamLen = 8 + aes.BlockSize

// aesCTR is CKM_AES_CTR bound to its CK_AES_CTR_PARAMS.
type aesCTR struct {
	MechBase
	p ctrParam
	// b is the memory of a bound copy (nil in the registry's value).
	b *ctrBinding
}

// ctrBinding is a bound CKM_AES_CTR with its operation's stream, which the
// session's next CTR Init overwrites (rebind) once the operation ended.
type ctrBinding struct {
	m  aesCTR
	st ctrStream
}

// ctrParam is a decoded CK_AES_CTR_PARAMS.
type ctrParam struct {
	bits uint
	cb   [aes.BlockSize]byte
}

func (m *aesCTR) withParam(cm *CKMechanism) (Mechanism, error) { return m.rebind(nil, cm) }

// rebind checks cm's CK_AES_CTR_PARAMS and binds m to it, in prev's
// memory when prev is a binding of CTR.
func (m *aesCTR) rebind(prev Mechanism, cm *CKMechanism) (Mechanism, error) {
	if len(cm.Param) != ctrParamLen || cm.Decoded() {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKM_AES_CTR needs CK_AES_CTR_PARAMS (%d bytes), got %d", ctrParamLen, len(cm.Param))
	}
	bits, _ := ck.ParseULong(cm.Param[:8])
	if bits < 1 || bits > 128 {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKM_AES_CTR: ulCounterBits %d, want 1 to 128", bits)
	}
	var bb *ctrBinding
	if old, ok := prev.(*aesCTR); ok && old.b != nil && &old.b.m == old {
		bb = old.b
	} else {
		bb = new(ctrBinding)
	}
	bb.m = aesCTR{MechBase: m.MechBase, p: ctrParam{bits: uint(bits)}, b: bb}
	copy(bb.m.p.cb[:], cm.Param[8:])
	bb.st = ctrStream{}
	return &bb.m, nil
}

// ctrStream is AES-CTR with a counter of p.bits bits. crypto/cipher's CTR
// (Go's AES-NI path, eight blocks at a time) increments the whole block;
// that is the same keystream, because an input that would carry out of the
// counter's bits is refused before any of it is processed (updateLen). The
// output is written into the caller's buffer when it is long enough.
type ctrStream struct {
	ks   cipher.Stream
	used int // bytes of the current counter block used (16: none left)
	// leftHi:leftLo is the number of counter values left, a 128-bit
	// integer (2^bits − the start value); unbounded: 2^128, never reached.
	leftHi, leftLo uint64
	unbounded      bool
	errCode        ck.Error
}

func (m *aesCTR) NewStream(op Op) (SymStream, error) {
	b, err := aesBlock(op)
	if err != nil {
		return nil, err
	}
	p := &m.p
	var s *ctrStream
	if m.b != nil {
		s = &m.b.st // the binding's: its operation's only stream
	} else {
		s = new(ctrStream)
	}
	*s = ctrStream{ks: cipher.NewCTR(b, p.cb[:]), used: aes.BlockSize, errCode: ck.CKR_DATA_LEN_RANGE, unbounded: p.bits == 128}
	if op.Kind() == OpDecrypt {
		s.errCode = ck.CKR_ENCRYPTED_DATA_LEN_RANGE
	}
	if !s.unbounded {
		// Values left: 2^bits − (the counter's start value mod 2^bits).
		hi, lo := binary.BigEndian.Uint64(p.cb[:8]), binary.BigEndian.Uint64(p.cb[8:])
		var mHi, mLo uint64 // 2^bits
		if p.bits < 64 {
			mLo = 1 << p.bits
			hi, lo = 0, lo&(mLo-1)
		} else {
			mHi = 1 << (p.bits - 64)
			hi &= mHi - 1
		}
		var borrow uint64
		s.leftLo, borrow = bits.Sub64(mLo, lo, 0)
		s.leftHi, _ = bits.Sub64(mHi, hi, borrow)
	}
	return s, nil
}

// blocksNeeded is how many new counter blocks n more bytes take.
func (s *ctrStream) blocksNeeded(n int) uint64 {
	avail := aes.BlockSize - s.used
	if n <= avail {
		return 0
	}
	return uint64((n - avail + aes.BlockSize - 1) / aes.BlockSize)
}

func (s *ctrStream) UpdateLen(n int) (int, error) {
	if !s.unbounded && s.leftHi == 0 && s.blocksNeeded(n) > s.leftLo {
		return 0, ck.Errorf(s.errCode, "the %d-byte input wraps the counter", n)
	}
	return n, nil
}

func (s *ctrStream) Update(dst, in []byte) ([]byte, error) {
	if _, err := s.UpdateLen(len(in)); err != nil {
		return nil, err
	}
	if !s.unbounded {
		var borrow uint64
		s.leftLo, borrow = bits.Sub64(s.leftLo, s.blocksNeeded(len(in)), 0)
		s.leftHi -= borrow
	}
	if avail := aes.BlockSize - s.used; len(in) <= avail {
		s.used += len(in)
	} else {
		s.used = (len(in)-avail-1)%aes.BlockSize + 1
	}
	out := dst
	if len(out) < len(in) {
		out = make([]byte, len(in))
	}
	out = out[:len(in)]
	s.ks.XORKeyStream(out, in)
	return out, nil
}

func (s *ctrStream) Final() ([]byte, error) { return []byte{}, nil }
