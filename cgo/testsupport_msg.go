//go:build modexp_testhooks

package main

// Test support of the message-based functions: Go-typed calls of the real
// C entry points with a CK_GCM_MESSAGE_PARAMS built in C memory, reading
// back what the module wrote into it.

/*
#include <stdlib.h>
#include "pkcs11_3.h"
*/
import "C"

import (
	"unsafe"
)

// tsGCMMsg describes a CK_GCM_MESSAGE_PARAMS: IV is pIv's content
// (ulIvLen = len(IV)), Tag pTag's (TagBits/8 bytes are allocated when Tag
// is shorter); NullParam passes a NULL pParameter (with ulParameterLen
// LenDelta), NullIV and NullTag NULL pointers; LenDelta is otherwise
// added to ulParameterLen.
type tsGCMMsg struct {
	IV                            []byte
	FixedBits, Generator, TagBits uint64
	Tag                           []byte
	NullParam, NullIV, NullTag    bool
	LenDelta                      int
}

// tsMsgResult is what a call left in the parameter and output buffer.
type tsMsgResult struct {
	RV, OutLen uint64
	Out        []byte
	IV, Tag    []byte // pIv and pTag after the call
}

// build lays p out in C memory.
func (p *tsGCMMsg) build(a *cArena) (unsafe.Pointer, C.CK_ULONG, *C.MODEXP_GCM_MESSAGE_PARAMS) {
	if p == nil {
		return nil, 0, nil
	}
	if p.NullParam {
		return nil, C.CK_ULONG(p.LenDelta), nil
	}
	g := (*C.MODEXP_GCM_MESSAGE_PARAMS)(a.alloc(unsafe.Sizeof(C.MODEXP_GCM_MESSAGE_PARAMS{})))
	if !p.NullIV {
		g.pIv = (*C.CK_BYTE)(a.bytes(p.IV))
	}
	g.ulIvLen, g.ulIvFixedBits, g.ivGenerator, g.ulTagBits = C.CK_ULONG(len(p.IV)), C.CK_ULONG(p.FixedBits), C.MODEXP_GENERATOR_FUNCTION(p.Generator), C.CK_ULONG(p.TagBits)
	if !p.NullTag {
		tag := make([]byte, max(int(p.TagBits/8), len(p.Tag)))
		copy(tag, p.Tag)
		g.pTag = (*C.CK_BYTE)(a.bytes(tag))
	}
	return unsafe.Pointer(g), sizeofGCMMessage + C.CK_ULONG(p.LenDelta), g
}

// readBack fills r's IV and tag from g.
func (r *tsMsgResult) readBack(g *C.MODEXP_GCM_MESSAGE_PARAMS) {
	if g == nil {
		return
	}
	if g.pIv != nil {
		r.IV = C.GoBytes(unsafe.Pointer(g.pIv), C.int(g.ulIvLen))
	}
	if g.pTag != nil {
		r.Tag = C.GoBytes(unsafe.Pointer(g.pTag), C.int(g.ulTagBits/8))
	}
}

// tsMsgInit calls C_MessageEncryptInit, C_MessageDecryptInit,
// C_MessageSignInit or C_MessageVerifyInit (kind tsKEncrypt ...) with a
// raw parameter.
func tsMsgInit(h uint64, kind int, mech uint64, raw []byte, key uint64) uint64 {
	var a cArena
	defer a.free()
	m := a.mechanism(tsMech{Type: mech, Raw: raw})
	sh, k := C.CK_SESSION_HANDLE(h), C.CK_OBJECT_HANDLE(key)
	switch kind {
	case tsKEncrypt:
		return uint64(C.C_MessageEncryptInit(sh, m, k))
	case tsKDecrypt:
		return uint64(C.C_MessageDecryptInit(sh, m, k))
	case tsKSign:
		return uint64(C.C_MessageSignInit(sh, m, k))
	}
	return uint64(C.C_MessageVerifyInit(sh, m, k))
}

// tsMsgFinal calls C_Message*Final of kind.
func tsMsgFinal(h uint64, kind int) uint64 {
	sh := C.CK_SESSION_HANDLE(h)
	switch kind {
	case tsKEncrypt:
		return uint64(C.C_MessageEncryptFinal(sh))
	case tsKDecrypt:
		return uint64(C.C_MessageDecryptFinal(sh))
	case tsKSign:
		return uint64(C.C_MessageSignFinal(sh))
	}
	return uint64(C.C_MessageVerifyFinal(sh))
}

// outBuf is an output buffer of capacity bytes (NULL when query) and its
// length variable.
func outBuf(a *cArena, query bool, capacity int) (buf, p *C.CK_BYTE, l *C.CK_ULONG) {
	buf = (*C.CK_BYTE)(a.alloc(uintptr(capacity + 1)))
	p = buf
	if query {
		p = nil
	}
	l = (*C.CK_ULONG)(a.alloc(unsafe.Sizeof(C.CK_ULONG(0))))
	*l = C.CK_ULONG(capacity)
	return buf, p, l
}

// tsCryptMessage calls C_EncryptMessage (encrypt) or C_DecryptMessage.
func tsCryptMessage(h uint64, encrypt bool, p *tsGCMMsg, aad, in []byte, query bool, capacity int) tsMsgResult {
	var a cArena
	defer a.free()
	param, plen, g := p.build(&a)
	buf, out, l := outBuf(&a, query, capacity)
	pa, pin := (*C.CK_BYTE)(a.bytes(aad)), (*C.CK_BYTE)(a.bytes(in))
	sh := C.CK_SESSION_HANDLE(h)
	var rv C.CK_RV
	if encrypt {
		rv = C.C_EncryptMessage(sh, C.CK_VOID_PTR(param), plen, pa, C.CK_ULONG(len(aad)), pin, C.CK_ULONG(len(in)), out, l)
	} else {
		rv = C.C_DecryptMessage(sh, C.CK_VOID_PTR(param), plen, pa, C.CK_ULONG(len(aad)), pin, C.CK_ULONG(len(in)), out, l)
	}
	r := tsMsgResult{RV: uint64(rv), OutLen: uint64(*l)}
	if rv == C.CKR_OK && !query {
		r.Out = C.GoBytes(unsafe.Pointer(buf), C.int(*l))
	}
	r.readBack(g)
	return r
}

// tsCryptMessageBegin calls C_EncryptMessageBegin or C_DecryptMessageBegin.
func tsCryptMessageBegin(h uint64, encrypt bool, p *tsGCMMsg, aad []byte) tsMsgResult {
	var a cArena
	defer a.free()
	param, plen, g := p.build(&a)
	pa := (*C.CK_BYTE)(a.bytes(aad))
	sh := C.CK_SESSION_HANDLE(h)
	var rv C.CK_RV
	if encrypt {
		rv = C.C_EncryptMessageBegin(sh, C.CK_VOID_PTR(param), plen, pa, C.CK_ULONG(len(aad)))
	} else {
		rv = C.C_DecryptMessageBegin(sh, C.CK_VOID_PTR(param), plen, pa, C.CK_ULONG(len(aad)))
	}
	r := tsMsgResult{RV: uint64(rv)}
	r.readBack(g)
	return r
}

// tsCryptMessageNext calls C_EncryptMessageNext or C_DecryptMessageNext.
func tsCryptMessageNext(h uint64, encrypt bool, p *tsGCMMsg, in []byte, query bool, capacity int, flags uint64) tsMsgResult {
	var a cArena
	defer a.free()
	param, plen, g := p.build(&a)
	buf, out, l := outBuf(&a, query, capacity)
	pin := (*C.CK_BYTE)(a.bytes(in))
	sh := C.CK_SESSION_HANDLE(h)
	var rv C.CK_RV
	if encrypt {
		rv = C.C_EncryptMessageNext(sh, C.CK_VOID_PTR(param), plen, pin, C.CK_ULONG(len(in)), out, l, C.CK_FLAGS(flags))
	} else {
		rv = C.C_DecryptMessageNext(sh, C.CK_VOID_PTR(param), plen, pin, C.CK_ULONG(len(in)), out, l, C.CK_FLAGS(flags))
	}
	r := tsMsgResult{RV: uint64(rv), OutLen: uint64(*l)}
	if rv == C.CKR_OK && !query {
		r.Out = C.GoBytes(unsafe.Pointer(buf), C.int(*l))
	}
	r.readBack(g)
	return r
}

// tsSignMessage calls C_SignMessage (param: a non-NULL pParameter of 8
// bytes).
func tsSignMessage(h uint64, param bool, data []byte, query bool, capacity int) tsMsgResult {
	var a cArena
	defer a.free()
	var pp unsafe.Pointer
	var plen C.CK_ULONG
	if param {
		pp, plen = a.alloc(8), 8
	}
	buf, out, l := outBuf(&a, query, capacity)
	rv := C.C_SignMessage(C.CK_SESSION_HANDLE(h), C.CK_VOID_PTR(pp), plen, (*C.CK_BYTE)(a.bytes(data)), C.CK_ULONG(len(data)), out, l)
	r := tsMsgResult{RV: uint64(rv), OutLen: uint64(*l)}
	if rv == C.CKR_OK && !query {
		r.Out = C.GoBytes(unsafe.Pointer(buf), C.int(*l))
	}
	return r
}

// tsSignedBegin calls C_SignMessageBegin (sign) or C_VerifyMessageBegin.
func tsSignedBegin(h uint64, sign bool) uint64 {
	if sign {
		return uint64(C.C_SignMessageBegin(C.CK_SESSION_HANDLE(h), nil, 0))
	}
	return uint64(C.C_VerifyMessageBegin(C.CK_SESSION_HANDLE(h), nil, 0))
}

// tsSignMessageNext calls C_SignMessageNext: a NULL pulSignatureLen
// unless last.
func tsSignMessageNext(h uint64, data []byte, last, query bool, capacity int) tsMsgResult {
	var a cArena
	defer a.free()
	buf, out, l := outBuf(&a, query, capacity)
	if !last {
		out, l = nil, nil
	}
	rv := C.C_SignMessageNext(C.CK_SESSION_HANDLE(h), nil, 0, (*C.CK_BYTE)(a.bytes(data)), C.CK_ULONG(len(data)), out, l)
	r := tsMsgResult{RV: uint64(rv)}
	if l != nil {
		r.OutLen = uint64(*l)
	}
	if rv == C.CKR_OK && last && !query {
		r.Out = C.GoBytes(unsafe.Pointer(buf), C.int(*l))
	}
	return r
}

// tsVerifyMessage calls C_VerifyMessage, or C_VerifyMessageNext when next
// (a nil sig is a NULL pSignature there: not the last part).
func tsVerifyMessage(h uint64, next bool, data, sig []byte) uint64 {
	var a cArena
	defer a.free()
	var ps *C.CK_BYTE
	if sig != nil {
		ps = (*C.CK_BYTE)(a.bytes(sig))
	}
	pd := (*C.CK_BYTE)(a.bytes(data))
	sh := C.CK_SESSION_HANDLE(h)
	if next {
		return uint64(C.C_VerifyMessageNext(sh, nil, 0, pd, C.CK_ULONG(len(data)), ps, C.CK_ULONG(len(sig))))
	}
	return uint64(C.C_VerifyMessage(sh, nil, 0, pd, C.CK_ULONG(len(data)), ps, C.CK_ULONG(len(sig))))
}

// tsMechFlags is C_GetMechanismInfo's flags of mech on slot.
func tsMechFlags(slot, mech uint64) (uint64, uint64) {
	var info C.CK_MECHANISM_INFO
	rv := C.C_GetMechanismInfo(C.CK_SLOT_ID(slot), C.CK_MECHANISM_TYPE(mech), &info)
	return uint64(rv), uint64(info.flags)
}
