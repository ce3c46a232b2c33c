package main

// The message-based entry points of PKCS#11 3.0 (C_MessageEncryptInit ...
// C_MessageVerifyFinal; token/message.go). The per-message parameter of
// the encryption functions is CK_GCM_MESSAGE_PARAMS, copied in here and,
// after CKR_OK, written back: the IV the token generated into pIv, the tag
// into pTag. The signature functions take no per-message parameter.

/*
#include "pkcs11_3.h"
*/
import "C"

import (
	"unsafe"

	"github.com/modexp-token/modexp-token/token"
)

const sizeofGCMMessage = C.CK_ULONG(unsafe.Sizeof(C.MODEXP_GCM_MESSAGE_PARAMS{}))

// GCM bounds checked before any copy.
const (
	gcmMessageMaxIV      = 4096
	gcmMessageMaxTagBits = 128
)

// messageMechanismIn decodes the mechanism of C_MessageEncryptInit and
// C_MessageDecryptInit: the AEAD's parameters come with each message, so
// a parameter here is kept raw (the token refuses it).
func messageMechanismIn(p *C.CK_MECHANISM) (*token.Mechanism, C.CK_RV) {
	if p == nil || p.pParameter == nil && p.ulParameterLen != 0 {
		return nil, rvArgumentsBad
	}
	raw, ok := bytesCopy(p.pParameter, p.ulParameterLen)
	if !ok {
		return nil, rvArgumentsBad
	}
	return &token.Mechanism{Type: uint64(p.mechanism), Param: raw}, rvOK
}

// gcmMessageIn decodes a CK_GCM_MESSAGE_PARAMS: nil for a NULL parameter
// (the token says what it needs), CKR_ARGUMENTS_BAD for a NULL one with a
// length, CKR_MECHANISM_PARAM_INVALID for another size, an IV or tag
// beyond GCM's bounds, or a NULL pIv or pTag (decryption reads the tag,
// encryption writes it).
func gcmMessageIn(param unsafe.Pointer, plen C.CK_ULONG) (*token.GCMMessageParams, C.CK_RV) {
	switch {
	case param == nil && plen == 0:
		return nil, rvOK
	case param == nil:
		return nil, rvArgumentsBad
	case plen != sizeofGCMMessage:
		return nil, rvMechParamInvalid
	}
	g := (*C.MODEXP_GCM_MESSAGE_PARAMS)(param)
	if g.ulIvLen > gcmMessageMaxIV || g.ulTagBits > gcmMessageMaxTagBits || g.pIv == nil || g.pTag == nil && g.ulTagBits != 0 {
		return nil, rvMechParamInvalid
	}
	iv, ok1 := bytesCopy(unsafe.Pointer(g.pIv), g.ulIvLen)
	tag, ok2 := bytesCopy(unsafe.Pointer(g.pTag), g.ulTagBits/8)
	if !ok1 || !ok2 {
		return nil, rvMechParamInvalid
	}
	return &token.GCMMessageParams{IV: iv, FixedBits: uint64(g.ulIvFixedBits), Generator: uint64(g.ivGenerator),
		Tag: tag, TagBits: uint64(g.ulTagBits)}, rvOK
}

// gcmMessageOut writes what the token handed back into the caller's
// CK_GCM_MESSAGE_PARAMS (the token keeps the lengths: the IV is ulIvLen
// bytes, the tag ulTagBits/8).
func gcmMessageOut(param unsafe.Pointer, mo *token.MessageOut) C.CK_RV {
	if mo == nil || (mo.IV == nil && mo.Tag == nil) {
		return rvOK
	}
	if param == nil {
		return rvGeneralError
	}
	g := (*C.MODEXP_GCM_MESSAGE_PARAMS)(param)
	if mo.IV != nil {
		if C.CK_ULONG(len(mo.IV)) != g.ulIvLen {
			return rvGeneralError
		}
		copy(unsafe.Slice((*byte)(unsafe.Pointer(g.pIv)), len(mo.IV)), mo.IV)
	}
	if mo.Tag != nil {
		if C.CK_ULONG(len(mo.Tag)) != g.ulTagBits/8 {
			return rvGeneralError
		}
		copy(unsafe.Slice((*byte)(unsafe.Pointer(g.pTag)), len(mo.Tag)), mo.Tag)
	}
	return rvOK
}

//export goMessageEncryptInit
func goMessageEncryptInit(h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM, key C.CK_OBJECT_HANDLE) C.CK_RV {
	return opInitWith("C_MessageEncryptInit", h, pMech, key, (*token.Module).MessageEncryptInit, C.CKF_MESSAGE_ENCRYPT, messageMechanismIn)
}

//export goMessageDecryptInit
func goMessageDecryptInit(h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM, key C.CK_OBJECT_HANDLE) C.CK_RV {
	return opInitWith("C_MessageDecryptInit", h, pMech, key, (*token.Module).MessageDecryptInit, C.CKF_MESSAGE_DECRYPT, messageMechanismIn)
}

//export goMessageSignInit
func goMessageSignInit(h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM, key C.CK_OBJECT_HANDLE) C.CK_RV {
	return opInit("C_MessageSignInit", h, pMech, key, (*token.Module).MessageSignInit, C.CKF_MESSAGE_SIGN)
}

//export goMessageVerifyInit
func goMessageVerifyInit(h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM, key C.CK_OBJECT_HANDLE) C.CK_RV {
	return opInit("C_MessageVerifyInit", h, pMech, key, (*token.Module).MessageVerifyInit, C.CKF_MESSAGE_VERIFY)
}

// messageFinal is C_Message*Final.
func messageFinal(fn string, h C.CK_SESSION_HANDLE, final func(*token.Module, uint64) error) (rv C.CK_RV) {
	c := enter(fn)
	defer c.leave(&rv)
	c.session(h)
	if rv := loaded(c.m); rv != rvOK {
		return rv
	}
	return c.rvOf(final(c.m, uint64(h)))
}

//export goMessageEncryptFinal
func goMessageEncryptFinal(h C.CK_SESSION_HANDLE) C.CK_RV {
	return messageFinal("C_MessageEncryptFinal", h, (*token.Module).MessageEncryptFinal)
}

//export goMessageDecryptFinal
func goMessageDecryptFinal(h C.CK_SESSION_HANDLE) C.CK_RV {
	return messageFinal("C_MessageDecryptFinal", h, (*token.Module).MessageDecryptFinal)
}

//export goMessageSignFinal
func goMessageSignFinal(h C.CK_SESSION_HANDLE) C.CK_RV {
	return messageFinal("C_MessageSignFinal", h, (*token.Module).MessageSignFinal)
}

//export goMessageVerifyFinal
func goMessageVerifyFinal(h C.CK_SESSION_HANDLE) C.CK_RV {
	return messageFinal("C_MessageVerifyFinal", h, (*token.Module).MessageVerifyFinal)
}

// messageIO is what an encryption or decryption call hands the token.
type messageIO struct {
	h       uint64
	p       *token.GCMMessageParams
	aad, in []byte
	out     token.Out
}

// messageRun is the token's side of an encryption or decryption call.
type messageRun func(m *token.Module, io messageIO) ([]byte, int, *token.MessageOut, error)

// cryptMessageCall is C_EncryptMessage, C_DecryptMessage and their Next
// (argsOK false: CKR_ARGUMENTS_BAD, for flags the caller got wrong): the
// parameter decoded, the output under the two-call convention, and what
// the token handed back (nothing for a length report) written into the
// parameter.
func cryptMessageCall(fn string, h C.CK_SESSION_HANDLE, pParam unsafe.Pointer, plen C.CK_ULONG, pAAD *C.CK_BYTE, aadLen C.CK_ULONG,
	pIn *C.CK_BYTE, inLen C.CK_ULONG, pOut *C.CK_BYTE, pOutLen *C.CK_ULONG, argsOK bool, run messageRun) (rv C.CK_RV) {
	c := enter(fn)
	defer c.leave(&rv)
	c.session(h)
	if rv := loaded(c.m); rv != rvOK {
		return rv
	}
	p, rv := gcmMessageIn(pParam, plen)
	if rv != rvOK {
		return sessionFirst(&c, h, rv)
	}
	aad, ok1 := bytesView(pAAD, aadLen)
	in, ok2 := bytesView(pIn, inLen)
	out, ok3 := outOf(pOut, pOutLen)
	if !ok1 || !ok2 || !ok3 || !argsOK {
		return sessionFirst(&c, h, rvArgumentsBad)
	}
	data, need, mo, err := run(c.m, messageIO{h: uint64(h), p: p, aad: aad, in: in, out: out})
	if err == nil {
		if rv := gcmMessageOut(pParam, mo); rv != rvOK {
			return rv
		}
	}
	return putOut(pOut, pOutLen, data, need, c.note(err))
}

//export goEncryptMessage
func goEncryptMessage(h C.CK_SESSION_HANDLE, pParam unsafe.Pointer, plen C.CK_ULONG, pAAD *C.CK_BYTE, aadLen C.CK_ULONG,
	pIn *C.CK_BYTE, inLen C.CK_ULONG, pOut *C.CK_BYTE, pOutLen *C.CK_ULONG) C.CK_RV {
	return cryptMessageCall("C_EncryptMessage", h, pParam, plen, pAAD, aadLen, pIn, inLen, pOut, pOutLen, true,
		func(m *token.Module, io messageIO) ([]byte, int, *token.MessageOut, error) {
			return m.EncryptMessage(io.h, io.p, io.aad, io.in, io.out)
		})
}

//export goDecryptMessage
func goDecryptMessage(h C.CK_SESSION_HANDLE, pParam unsafe.Pointer, plen C.CK_ULONG, pAAD *C.CK_BYTE, aadLen C.CK_ULONG,
	pIn *C.CK_BYTE, inLen C.CK_ULONG, pOut *C.CK_BYTE, pOutLen *C.CK_ULONG) C.CK_RV {
	return cryptMessageCall("C_DecryptMessage", h, pParam, plen, pAAD, aadLen, pIn, inLen, pOut, pOutLen, true,
		func(m *token.Module, io messageIO) ([]byte, int, *token.MessageOut, error) {
			d, n, err := m.DecryptMessage(io.h, io.p, io.aad, io.in, io.out)
			return d, n, nil, err
		})
}

// goEncryptMessageBegin: a Begin has no output; the IV the token
// generated goes into pIv.
//
//export goEncryptMessageBegin
func goEncryptMessageBegin(h C.CK_SESSION_HANDLE, pParam unsafe.Pointer, plen C.CK_ULONG, pAAD *C.CK_BYTE, aadLen C.CK_ULONG) C.CK_RV {
	var none C.CK_ULONG
	return cryptMessageCall("C_EncryptMessageBegin", h, pParam, plen, pAAD, aadLen, nil, 0, nil, &none, true,
		func(m *token.Module, io messageIO) ([]byte, int, *token.MessageOut, error) {
			mo, err := m.EncryptMessageBegin(io.h, io.p, io.aad)
			return nil, 0, mo, err
		})
}

//export goDecryptMessageBegin
func goDecryptMessageBegin(h C.CK_SESSION_HANDLE, pParam unsafe.Pointer, plen C.CK_ULONG, pAAD *C.CK_BYTE, aadLen C.CK_ULONG) C.CK_RV {
	var none C.CK_ULONG
	return cryptMessageCall("C_DecryptMessageBegin", h, pParam, plen, pAAD, aadLen, nil, 0, nil, &none, true,
		func(m *token.Module, io messageIO) ([]byte, int, *token.MessageOut, error) {
			return nil, 0, nil, m.DecryptMessageBegin(io.h, io.p, io.aad)
		})
}

//export goEncryptMessageNext
func goEncryptMessageNext(h C.CK_SESSION_HANDLE, pParam unsafe.Pointer, plen C.CK_ULONG, pIn *C.CK_BYTE, inLen C.CK_ULONG,
	pOut *C.CK_BYTE, pOutLen *C.CK_ULONG, flags C.CK_FLAGS) C.CK_RV {
	end := flags&C.CKF_END_OF_MESSAGE != 0
	return cryptMessageCall("C_EncryptMessageNext", h, pParam, plen, nil, 0, pIn, inLen, pOut, pOutLen, flags&^C.CKF_END_OF_MESSAGE == 0,
		func(m *token.Module, io messageIO) ([]byte, int, *token.MessageOut, error) {
			return m.EncryptMessageNext(io.h, io.p, io.in, io.out, end)
		})
}

//export goDecryptMessageNext
func goDecryptMessageNext(h C.CK_SESSION_HANDLE, pParam unsafe.Pointer, plen C.CK_ULONG, pIn *C.CK_BYTE, inLen C.CK_ULONG,
	pOut *C.CK_BYTE, pOutLen *C.CK_ULONG, flags C.CK_FLAGS) C.CK_RV {
	end := flags&C.CKF_END_OF_MESSAGE != 0
	return cryptMessageCall("C_DecryptMessageNext", h, pParam, plen, nil, 0, pIn, inLen, pOut, pOutLen, flags&^C.CKF_END_OF_MESSAGE == 0,
		func(m *token.Module, io messageIO) ([]byte, int, *token.MessageOut, error) {
			d, n, err := m.DecryptMessageNext(io.h, io.p, io.in, io.out, end)
			return d, n, nil, err
		})
}

// hasParam reports a per-message parameter given to a signature call; a
// NULL one with a length is not ok.
func hasParam(pParam unsafe.Pointer, plen C.CK_ULONG) (bool, bool) {
	if pParam == nil {
		return false, plen == 0
	}
	return true, true
}

// signedCall is the common part of the message signature calls: the
// module loaded, the per-message parameter (given or not) and the data
// read; run does the rest.
func signedCall(fn string, h C.CK_SESSION_HANDLE, pParam unsafe.Pointer, plen C.CK_ULONG, pData *C.CK_BYTE, dataLen C.CK_ULONG,
	run func(c *call, given bool, data []byte) C.CK_RV) (rv C.CK_RV) {
	c := enter(fn)
	defer c.leave(&rv)
	c.session(h)
	if rv := loaded(c.m); rv != rvOK {
		return rv
	}
	given, ok1 := hasParam(pParam, plen)
	data, ok2 := bytesView(pData, dataLen)
	if !ok1 || !ok2 {
		return sessionFirst(&c, h, rvArgumentsBad)
	}
	return run(&c, given, data)
}

// sessionFirst answers a call whose arguments the C layer refused with rv
// unless its session is invalid: that is reported first, as the token
// reports it for every call (the session, then the parameters).
func sessionFirst(c *call, h C.CK_SESSION_HANDLE, rv C.CK_RV) C.CK_RV {
	if _, err := c.m.SessionInfo(uint64(h)); err != nil {
		return c.rvOf(err)
	}
	return rv
}

// sigIn is a signature to verify: empty, never nil, for a NULL one of
// length 0.
func sigIn(p *C.CK_BYTE, n C.CK_ULONG) ([]byte, bool) {
	sig, ok := bytesView(p, n)
	if ok && sig == nil {
		sig = []byte{}
	}
	return sig, ok
}

//export goSignMessage
func goSignMessage(h C.CK_SESSION_HANDLE, pParam unsafe.Pointer, plen C.CK_ULONG, pData *C.CK_BYTE, dataLen C.CK_ULONG,
	pSig *C.CK_BYTE, pSigLen *C.CK_ULONG) C.CK_RV {
	return signedCall("C_SignMessage", h, pParam, plen, pData, dataLen, func(c *call, given bool, data []byte) C.CK_RV {
		out, ok := outOf(pSig, pSigLen)
		if !ok {
			return rvArgumentsBad
		}
		sig, need, err := c.m.SignMessage(uint64(h), given, data, out)
		return putOut(pSig, pSigLen, sig, need, c.note(err))
	})
}

//export goSignMessageBegin
func goSignMessageBegin(h C.CK_SESSION_HANDLE, pParam unsafe.Pointer, plen C.CK_ULONG) C.CK_RV {
	return signedCall("C_SignMessageBegin", h, pParam, plen, nil, 0, func(c *call, given bool, _ []byte) C.CK_RV {
		return c.rvOf(c.m.SignMessageBegin(uint64(h), given))
	})
}

//export goVerifyMessageBegin
func goVerifyMessageBegin(h C.CK_SESSION_HANDLE, pParam unsafe.Pointer, plen C.CK_ULONG) C.CK_RV {
	return signedCall("C_VerifyMessageBegin", h, pParam, plen, nil, 0, func(c *call, given bool, _ []byte) C.CK_RV {
		return c.rvOf(c.m.VerifyMessageBegin(uint64(h), given))
	})
}

// goSignMessageNext: a NULL pulSignatureLen continues the message, a
// non-NULL one ends it with the signature (the two-call convention).
//
//export goSignMessageNext
func goSignMessageNext(h C.CK_SESSION_HANDLE, pParam unsafe.Pointer, plen C.CK_ULONG, pData *C.CK_BYTE, dataLen C.CK_ULONG,
	pSig *C.CK_BYTE, pSigLen *C.CK_ULONG) C.CK_RV {
	return signedCall("C_SignMessageNext", h, pParam, plen, pData, dataLen, func(c *call, given bool, data []byte) C.CK_RV {
		if pSigLen == nil {
			_, _, err := c.m.SignMessageNext(uint64(h), given, data, false, token.Out{})
			return c.rvOf(err)
		}
		out, _ := outOf(pSig, pSigLen)
		sig, need, err := c.m.SignMessageNext(uint64(h), given, data, true, out)
		return putOut(pSig, pSigLen, sig, need, c.note(err))
	})
}

//export goVerifyMessage
func goVerifyMessage(h C.CK_SESSION_HANDLE, pParam unsafe.Pointer, plen C.CK_ULONG, pData *C.CK_BYTE, dataLen C.CK_ULONG,
	pSig *C.CK_BYTE, sigLen C.CK_ULONG) C.CK_RV {
	return signedCall("C_VerifyMessage", h, pParam, plen, pData, dataLen, func(c *call, given bool, data []byte) C.CK_RV {
		sig, ok := sigIn(pSig, sigLen)
		if !ok {
			return rvArgumentsBad
		}
		return c.rvOf(c.m.VerifyMessage(uint64(h), given, data, sig))
	})
}

// goVerifyMessageNext: a NULL pSignature continues the message, a
// non-NULL one ends it with the verdict.
//
//export goVerifyMessageNext
func goVerifyMessageNext(h C.CK_SESSION_HANDLE, pParam unsafe.Pointer, plen C.CK_ULONG, pData *C.CK_BYTE, dataLen C.CK_ULONG,
	pSig *C.CK_BYTE, sigLen C.CK_ULONG) C.CK_RV {
	return signedCall("C_VerifyMessageNext", h, pParam, plen, pData, dataLen, func(c *call, given bool, data []byte) C.CK_RV {
		var sig []byte
		if pSig != nil {
			var ok bool
			if sig, ok = sigIn(pSig, sigLen); !ok {
				return rvArgumentsBad
			}
		}
		return c.rvOf(c.m.VerifyMessageNext(uint64(h), given, data, sig))
	})
}
