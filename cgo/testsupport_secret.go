//go:build modexp_testhooks

package main

// Test support for secret keys: C templates (with attribute arrays), the
// key and object calls, and C_GetAttributeValue on attribute arrays, all
// through the real C entry points. Nothing in the library calls them.

/*
#include <stdlib.h>
#include <string.h>

#include "pkcs11_3.h"
*/
import "C"

import (
	"unsafe"

	"github.com/modexp-token/modexp-token/token"
)

// tsCTemplate is a template in C memory.
type tsCTemplate struct {
	p     *C.CK_ATTRIBUTE
	n     int
	frees []unsafe.Pointer
}

// tsNewTemplate copies attrs into C memory; an attribute-array value
// (token.EncodeAttributes form) becomes a nested CK_ATTRIBUTE array.
func tsNewTemplate(attrs []token.Attribute) *tsCTemplate {
	t := &tsCTemplate{n: len(attrs)}
	t.p = t.array(attrs)
	return t
}

func (t *tsCTemplate) alloc(n int) unsafe.Pointer {
	p := C.calloc(C.size_t(n+1), 1)
	t.frees = append(t.frees, p)
	return p
}

func (t *tsCTemplate) array(attrs []token.Attribute) *C.CK_ATTRIBUTE {
	p := (*C.CK_ATTRIBUTE)(t.alloc(len(attrs) * int(sizeofAttr)))
	as := unsafe.Slice(p, len(attrs)+1)
	for i, a := range attrs {
		as[i]._type = C.CK_ATTRIBUTE_TYPE(a.Type)
		if token.IsAttributeArray(a.Type) && len(a.Value) > 0 {
			inner, err := token.DecodeAttributes(a.Value)
			if err == nil {
				as[i].pValue = unsafe.Pointer(t.array(inner))
				as[i].ulValueLen = C.CK_ULONG(len(inner)) * sizeofAttr
				continue
			}
		}
		v := t.alloc(len(a.Value))
		if len(a.Value) > 0 {
			C.memcpy(v, unsafe.Pointer(&a.Value[0]), C.size_t(len(a.Value)))
		}
		as[i].pValue = v
		as[i].ulValueLen = C.CK_ULONG(len(a.Value))
	}
	return p
}

func (t *tsCTemplate) free() {
	for _, p := range t.frees {
		C.free(p)
	}
}

// tsReadySession initialises the token of slot (SO PIN "so-pin-1", user
// PIN "user-pin") and returns a R/W session logged in as the user.
func tsReadySession(slot uint64) (rv, h uint64) {
	so, user := []byte("so-pin-1"), []byte("user-pin")
	label := tsPad(32, "cgo secret")
	cso, cuser, clabel := C.CBytes(so), C.CBytes(user), C.CBytes(label)
	defer C.free(cso)
	defer C.free(cuser)
	defer C.free(clabel)
	if r := C.C_InitToken(C.CK_SLOT_ID(slot), (*C.CK_UTF8CHAR)(cso), C.CK_ULONG(len(so)), (*C.CK_UTF8CHAR)(clabel)); r != C.CKR_OK {
		return uint64(r), 0
	}
	var sh C.CK_SESSION_HANDLE
	if r := C.C_OpenSession(C.CK_SLOT_ID(slot), C.CKF_SERIAL_SESSION|C.CKF_RW_SESSION, nil, nil, &sh); r != C.CKR_OK {
		return uint64(r), 0
	}
	steps := []func() C.CK_RV{
		func() C.CK_RV { return C.C_Login(sh, C.CKU_SO, (*C.CK_UTF8CHAR)(cso), C.CK_ULONG(len(so))) },
		func() C.CK_RV { return C.C_InitPIN(sh, (*C.CK_UTF8CHAR)(cuser), C.CK_ULONG(len(user))) },
		func() C.CK_RV { return C.C_Logout(sh) },
		func() C.CK_RV { return C.C_Login(sh, C.CKU_USER, (*C.CK_UTF8CHAR)(cuser), C.CK_ULONG(len(user))) },
	}
	for _, s := range steps {
		if r := s(); r != C.CKR_OK {
			return uint64(r), 0
		}
	}
	return 0, uint64(sh)
}

// tsCreate calls C_CreateObject.
func tsCreate(h uint64, attrs []token.Attribute) (rv, obj uint64) {
	t := tsNewTemplate(attrs)
	defer t.free()
	var o C.CK_OBJECT_HANDLE
	r := C.C_CreateObject(C.CK_SESSION_HANDLE(h), t.p, C.CK_ULONG(t.n), &o)
	return uint64(r), uint64(o)
}

// tsCopyObject calls C_CopyObject.
func tsCopyObject(h, obj uint64, attrs []token.Attribute) (rv, copied uint64) {
	t := tsNewTemplate(attrs)
	defer t.free()
	var o C.CK_OBJECT_HANDLE
	r := C.C_CopyObject(C.CK_SESSION_HANDLE(h), C.CK_OBJECT_HANDLE(obj), t.p, C.CK_ULONG(t.n), &o)
	return uint64(r), uint64(o)
}

// tsDestroyObject calls C_DestroyObject.
func tsDestroyObject(h, obj uint64) uint64 {
	return uint64(C.C_DestroyObject(C.CK_SESSION_HANDLE(h), C.CK_OBJECT_HANDLE(obj)))
}

// tsCMech is a CK_MECHANISM with a raw parameter in C memory.
func tsCMech(mech uint64, param []byte) (*C.CK_MECHANISM, func()) {
	m := (*C.CK_MECHANISM)(C.calloc(1, C.size_t(unsafe.Sizeof(C.CK_MECHANISM{}))))
	m.mechanism = C.CK_MECHANISM_TYPE(mech)
	if param != nil {
		m.pParameter = C.CBytes(param)
		m.ulParameterLen = C.CK_ULONG(len(param))
	}
	return m, func() {
		if m.pParameter != nil {
			C.free(m.pParameter)
		}
		C.free(unsafe.Pointer(m))
	}
}

// tsGenKey calls C_GenerateKey with a raw mechanism parameter.
func tsGenKey(h, mech uint64, param []byte, attrs []token.Attribute) (rv, obj uint64) {
	t := tsNewTemplate(attrs)
	defer t.free()
	m, free := tsCMech(mech, param)
	defer free()
	var o C.CK_OBJECT_HANDLE
	r := C.C_GenerateKey(C.CK_SESSION_HANDLE(h), m, t.p, C.CK_ULONG(t.n), &o)
	return uint64(r), uint64(o)
}

// tsGetAttr calls C_GetAttributeValue for one attribute with a buffer of
// capacity bytes (negative: NULL pValue).
func tsGetAttr(h, obj, typ uint64, capacity int) (rv, length uint64, value []byte) {
	var a C.CK_ATTRIBUTE
	a._type = C.CK_ATTRIBUTE_TYPE(typ)
	if capacity >= 0 {
		a.pValue = C.calloc(C.size_t(capacity+1), 1)
		defer C.free(a.pValue)
		a.ulValueLen = C.CK_ULONG(capacity)
	}
	r := C.C_GetAttributeValue(C.CK_SESSION_HANDLE(h), C.CK_OBJECT_HANDLE(obj), &a, 1)
	if r == C.CKR_OK && a.pValue != nil {
		value = C.GoBytes(a.pValue, C.int(a.ulValueLen))
	}
	return uint64(r), uint64(a.ulValueLen), value
}

// tsArrayStep is one step of reading an attribute array.
type tsArrayStep struct {
	RV     uint64
	Length uint64 // the outer ulValueLen
	Types  []uint64
	Lens   []uint64
	Values [][]byte
}

// tsGetArray reads attribute array typ of obj the way the standard lets a
// caller: (1) NULL pValue for the size; (2) an array of that many
// CK_ATTRIBUTEs with NULL pValues for the types and lengths; (3) buffers
// of those lengths (shrunk by short bytes for the first element) for the
// values; (4) a lookup of types only, extra typ given.
func tsGetArray(h, obj, typ uint64, short int, extra uint64) (steps [4]tsArrayStep) {
	var a C.CK_ATTRIBUTE
	a._type = C.CK_ATTRIBUTE_TYPE(typ)
	r := C.C_GetAttributeValue(C.CK_SESSION_HANDLE(h), C.CK_OBJECT_HANDLE(obj), &a, 1)
	steps[0] = tsArrayStep{RV: uint64(r), Length: uint64(a.ulValueLen)}
	if r != C.CKR_OK || a.ulValueLen == unavailable {
		return steps
	}
	n := int(a.ulValueLen / sizeofAttr)
	elems := (*C.CK_ATTRIBUTE)(C.calloc(C.size_t(n+1), C.size_t(sizeofAttr)))
	defer C.free(unsafe.Pointer(elems))
	es := unsafe.Slice(elems, n+1)
	a.pValue = unsafe.Pointer(elems)
	r = C.C_GetAttributeValue(C.CK_SESSION_HANDLE(h), C.CK_OBJECT_HANDLE(obj), &a, 1)
	steps[1] = tsArrayStep{RV: uint64(r), Length: uint64(a.ulValueLen)}
	for i := 0; i < n; i++ {
		steps[1].Types = append(steps[1].Types, uint64(es[i]._type))
		steps[1].Lens = append(steps[1].Lens, uint64(es[i].ulValueLen))
	}
	for i := 0; i < n; i++ {
		l := int(es[i].ulValueLen)
		if i == 0 {
			l -= short
		}
		es[i].pValue = C.calloc(C.size_t(max(l, 0)+1), 1)
		es[i].ulValueLen = C.CK_ULONG(max(l, 0))
	}
	defer func() {
		for i := 0; i < n; i++ {
			C.free(es[i].pValue)
		}
	}()
	r = C.C_GetAttributeValue(C.CK_SESSION_HANDLE(h), C.CK_OBJECT_HANDLE(obj), &a, 1)
	steps[2] = tsArrayStep{RV: uint64(r), Length: uint64(a.ulValueLen)}
	for i := 0; i < n; i++ {
		steps[2].Types = append(steps[2].Types, uint64(es[i]._type))
		steps[2].Lens = append(steps[2].Lens, uint64(es[i].ulValueLen))
		var v []byte
		if es[i].ulValueLen != unavailable {
			v = C.GoBytes(es[i].pValue, C.int(es[i].ulValueLen))
		}
		steps[2].Values = append(steps[2].Values, v)
	}
	if n > 0 {
		es[0]._type = C.CK_ATTRIBUTE_TYPE(extra)
		es[0].ulValueLen = 64
		C.free(es[0].pValue)
		es[0].pValue = C.calloc(65, 1)
		r = C.C_GetAttributeValue(C.CK_SESSION_HANDLE(h), C.CK_OBJECT_HANDLE(obj), &a, 1)
		steps[3] = tsArrayStep{RV: uint64(r), Length: uint64(a.ulValueLen), Lens: []uint64{uint64(es[0].ulValueLen)}}
	}
	return steps
}

// in runs templateIn on the template.
func (t *tsCTemplate) in() ([]token.Attribute, uint64) {
	got, rv := templateIn(t.p, C.CK_ULONG(t.n))
	return got, uint64(rv)
}

// tsNestedArray runs templateIn on an attribute array holding an attribute
// array.
func tsNestedArray() uint64 {
	var leaf, mid, top C.CK_ATTRIBUTE
	leaf._type = C.CKA_TOKEN
	mid._type = C.CKA_WRAP_TEMPLATE
	mid.pValue, mid.ulValueLen = unsafe.Pointer(&leaf), sizeofAttr
	top._type = C.CKA_UNWRAP_TEMPLATE
	top.pValue, top.ulValueLen = unsafe.Pointer(&mid), sizeofAttr
	_, rv := templateIn(&top, 1)
	return uint64(rv)
}

// tsGCM describes a CK_GCM_PARAMS built by tsInit: Form 3 is PKCS#11
// 3.0's structure (with ulIvBits), 2 the 2.40 one; NullIV passes a NULL
// pIv with ulIvLen = len(IV); LenDelta is added to ulParameterLen.
type tsGCM struct {
	Form            int
	IV, AAD         []byte
	IVBits, TagBits uint64
	NullIV          bool
	LenDelta        int
}

// Operation kinds and calls of tsInit and tsCall.
const (
	tsKEncrypt = iota
	tsKDecrypt
	tsKSign
	tsKVerify
)

// tsInit calls C_EncryptInit, C_DecryptInit, C_SignInit or C_VerifyInit
// with a raw parameter (raw) or a CK_GCM_PARAMS (gcm non-nil).
func tsInit(h uint64, kind int, mech uint64, raw []byte, gcm *tsGCM, key uint64) uint64 {
	var arena cArena
	defer arena.free()
	m := (*C.CK_MECHANISM)(arena.alloc(unsafe.Sizeof(C.CK_MECHANISM{})))
	m.mechanism = C.CK_MECHANISM_TYPE(mech)
	switch {
	case gcm != nil:
		var iv, aad unsafe.Pointer
		if len(gcm.IV) > 0 && !gcm.NullIV {
			iv = arena.bytes(gcm.IV)
		}
		if len(gcm.AAD) > 0 {
			aad = arena.bytes(gcm.AAD)
		}
		if gcm.Form == 2 {
			g := (*C.MODEXP_GCM_PARAMS_2_40)(arena.alloc(unsafe.Sizeof(C.MODEXP_GCM_PARAMS_2_40{})))
			g.pIv, g.ulIvLen, g.pAAD, g.ulAADLen, g.ulTagBits = (*C.CK_BYTE)(iv), C.CK_ULONG(len(gcm.IV)), (*C.CK_BYTE)(aad), C.CK_ULONG(len(gcm.AAD)), C.CK_ULONG(gcm.TagBits)
			m.pParameter, m.ulParameterLen = unsafe.Pointer(g), sizeofGCM240
		} else {
			g := (*C.CK_GCM_PARAMS)(arena.alloc(unsafe.Sizeof(C.CK_GCM_PARAMS{})))
			g.pIv, g.ulIvLen, g.ulIvBits = (*C.CK_BYTE)(iv), C.CK_ULONG(len(gcm.IV)), C.CK_ULONG(gcm.IVBits)
			g.pAAD, g.ulAADLen, g.ulTagBits = (*C.CK_BYTE)(aad), C.CK_ULONG(len(gcm.AAD)), C.CK_ULONG(gcm.TagBits)
			m.pParameter, m.ulParameterLen = unsafe.Pointer(g), sizeofGCM
		}
		m.ulParameterLen += C.CK_ULONG(gcm.LenDelta)
	case raw != nil:
		m.pParameter, m.ulParameterLen = arena.bytes(raw), C.CK_ULONG(len(raw))
	}
	sh, k := C.CK_SESSION_HANDLE(h), C.CK_OBJECT_HANDLE(key)
	switch kind {
	case tsKEncrypt:
		return uint64(C.C_EncryptInit(sh, m, k))
	case tsKDecrypt:
		return uint64(C.C_DecryptInit(sh, m, k))
	case tsKSign:
		return uint64(C.C_SignInit(sh, m, k))
	}
	return uint64(C.C_VerifyInit(sh, m, k))
}

// Calls of tsCall.
const (
	tsCEncrypt = iota
	tsCEncryptUpdate
	tsCEncryptFinal
	tsCDecrypt
	tsCDecryptUpdate
	tsCDecryptFinal
	tsCSign
	tsCSignFinal
)

// tsCall makes one output-producing call with input in (unused by the
// Final calls) and an output buffer of capacity bytes (NULL when query).
func tsCall(h uint64, call int, in []byte, query bool, capacity int) (rv, outLen uint64, out []byte) {
	var arena cArena
	defer arena.free()
	pin := (*C.CK_BYTE)(arena.bytes(in))
	buf := (*C.CK_BYTE)(arena.alloc(uintptr(capacity + 1)))
	p := buf
	if query {
		p = nil
	}
	l := C.CK_ULONG(capacity)
	sh, n := C.CK_SESSION_HANDLE(h), C.CK_ULONG(len(in))
	var r C.CK_RV
	switch call {
	case tsCEncrypt:
		r = C.C_Encrypt(sh, pin, n, p, &l)
	case tsCEncryptUpdate:
		r = C.C_EncryptUpdate(sh, pin, n, p, &l)
	case tsCEncryptFinal:
		r = C.C_EncryptFinal(sh, p, &l)
	case tsCDecrypt:
		r = C.C_Decrypt(sh, pin, n, p, &l)
	case tsCDecryptUpdate:
		r = C.C_DecryptUpdate(sh, pin, n, p, &l)
	case tsCDecryptFinal:
		r = C.C_DecryptFinal(sh, p, &l)
	case tsCSign:
		r = C.C_Sign(sh, pin, n, p, &l)
	case tsCSignFinal:
		r = C.C_SignFinal(sh, p, &l)
	}
	if r == C.CKR_OK && !query {
		out = C.GoBytes(unsafe.Pointer(buf), C.int(l))
	}
	return uint64(r), uint64(l), out
}

// tsUpdate calls C_SignUpdate (sign) or C_VerifyUpdate.
func tsUpdate(h uint64, sign bool, in []byte) uint64 {
	var arena cArena
	defer arena.free()
	p := (*C.CK_BYTE)(arena.bytes(in))
	if sign {
		return uint64(C.C_SignUpdate(C.CK_SESSION_HANDLE(h), p, C.CK_ULONG(len(in))))
	}
	return uint64(C.C_VerifyUpdate(C.CK_SESSION_HANDLE(h), p, C.CK_ULONG(len(in))))
}

// tsVerifyCall calls C_Verify (data non-nil) or C_VerifyFinal.
func tsVerifyCall(h uint64, data, sig []byte, final bool) uint64 {
	var arena cArena
	defer arena.free()
	d, s := (*C.CK_BYTE)(arena.bytes(data)), (*C.CK_BYTE)(arena.bytes(sig))
	if final {
		return uint64(C.C_VerifyFinal(C.CK_SESSION_HANDLE(h), s, C.CK_ULONG(len(sig))))
	}
	return uint64(C.C_Verify(C.CK_SESSION_HANDLE(h), d, C.CK_ULONG(len(data)), s, C.CK_ULONG(len(sig))))
}

// tsDigestKey calls C_DigestInit(mech) then C_DigestKey(key), and
// C_DigestFinal when both succeed.
func tsDigestKey(h, mech, key uint64) (rv uint64, digest []byte) {
	if r := tsDigestInit(h, mech); r != 0 {
		return r, nil
	}
	if r := C.C_DigestKey(C.CK_SESSION_HANDLE(h), C.CK_OBJECT_HANDLE(key)); r != C.CKR_OK {
		return uint64(r), nil
	}
	var buf [64]C.CK_BYTE
	l := C.CK_ULONG(len(buf))
	r := C.C_DigestFinal(C.CK_SESSION_HANDLE(h), &buf[0], &l)
	return uint64(r), C.GoBytes(unsafe.Pointer(&buf[0]), C.int(l))
}
