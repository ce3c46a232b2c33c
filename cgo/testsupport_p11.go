//go:build modexp_testhooks

package main

// Test support: a small Go client of the real C entry points (C_Login,
// C_GenerateKeyPair, C_WrapKey...), for the conformance tests of this
// package. Every call goes through the C function, with its arguments in C
// memory, exactly as a C client makes it. Compiled only with the build
// tag modexp_testhooks, like testsupport.go.

/*
#include <stdlib.h>
#include <string.h>

#include "pkcs11_3.h"

// ts_session_info_loop calls C_GetSessionInfo n times (the cost of one
// trip through an export, measured without Go on the caller's side).
static CK_RV ts_session_info_loop(CK_SESSION_HANDLE h, long n)
{
	CK_SESSION_INFO si;
	CK_RV rv = CKR_OK;
	for (long i = 0; i < n && rv == CKR_OK; i++)
		rv = C_GetSessionInfo(h, &si);
	return rv;
}

// ts_find_sign_loop makes, n times, what libp11's engine calls per TLS
// handshake when the server loads the key for each one: a search for every
// private key (C_FindObjectsInit with CKA_CLASS only, C_FindObjects one
// handle at a time until none, C_FindObjectsFinal), then, when mech is not
// (CK_ULONG)-1, C_SignInit and C_Sign of a 32-byte hash with key. The
// search must return key.
static CK_RV ts_find_sign_loop(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE key, CK_MECHANISM_TYPE mech, long n)
{
	CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
	CK_ATTRIBUTE t[] = {{CKA_CLASS, &cls, sizeof cls}};
	CK_MECHANISM m = {mech, NULL, 0};
	CK_BYTE hash[32] = {1, 2, 3};
	CK_BYTE sig[512];
	for (long i = 0; i < n; i++) {
		CK_RV rv = C_FindObjectsInit(h, t, 1);
		if (rv != CKR_OK)
			return rv;
		int seen = 0;
		for (;;) {
			CK_OBJECT_HANDLE o = 0;
			CK_ULONG got = 0;
			rv = C_FindObjects(h, &o, 1, &got);
			if (rv != CKR_OK)
				return rv;
			if (got == 0)
				break;
			seen |= o == key;
		}
		if ((rv = C_FindObjectsFinal(h)) != CKR_OK)
			return rv;
		if (!seen)
			return CKR_OBJECT_HANDLE_INVALID;
		if (mech == (CK_MECHANISM_TYPE)-1)
			continue;
		if ((rv = C_SignInit(h, &m, key)) != CKR_OK)
			return rv;
		memcpy(hash + 8, &i, sizeof i);
		CK_ULONG l = sizeof sig;
		if ((rv = C_Sign(h, hash, sizeof hash, sig, &l)) != CKR_OK)
			return rv;
	}
	return CKR_OK;
}
*/
import "C"

import (
	"unsafe"

	"github.com/modexp-token/modexp-token/token/ck"
)

// cArena is C memory freed at once.
type cArena []unsafe.Pointer

func (a *cArena) bytes(b []byte) unsafe.Pointer {
	p := C.malloc(C.size_t(len(b) + 1))
	if len(b) > 0 {
		C.memcpy(p, unsafe.Pointer(&b[0]), C.size_t(len(b)))
	}
	*a = append(*a, p)
	return p
}

func (a *cArena) alloc(n uintptr) unsafe.Pointer {
	p := C.calloc(1, C.size_t(n+1))
	*a = append(*a, p)
	return p
}

func (a *cArena) free() {
	for _, p := range *a {
		C.free(p)
	}
	*a = nil
}

// template builds a C template from spec (see tsAttr).
func (a *cArena) template(spec []tsAttr) (*C.CK_ATTRIBUTE, C.CK_ULONG) {
	if len(spec) == 0 {
		return nil, 0
	}
	attrs := (*C.CK_ATTRIBUTE)(a.alloc(uintptr(len(spec)) * unsafe.Sizeof(C.CK_ATTRIBUTE{})))
	as := unsafe.Slice(attrs, len(spec))
	for i, s := range spec {
		as[i]._type = C.CK_ATTRIBUTE_TYPE(s.Type)
		if !s.NullPtr {
			as[i].pValue = a.bytes(s.Value)
		}
		as[i].ulValueLen = C.CK_ULONG(len(s.Value))
		if s.Len != 0 {
			as[i].ulValueLen = C.CK_ULONG(s.Len)
		}
	}
	return attrs, C.CK_ULONG(len(spec))
}

// mechanism builds a C mechanism from s (Kind 0 raw and 2 OAEP are
// supported; see tsMech).
func (a *cArena) mechanism(s tsMech) *C.CK_MECHANISM {
	if s.NullMech {
		return nil
	}
	m := (*C.CK_MECHANISM)(a.alloc(unsafe.Sizeof(C.CK_MECHANISM{})))
	m.mechanism = C.CK_MECHANISM_TYPE(s.Type)
	switch s.Kind {
	case 0:
		if len(s.Raw) > 0 {
			m.pParameter, m.ulParameterLen = a.bytes(s.Raw), C.CK_ULONG(len(s.Raw))
		}
	case 2:
		p := (*C.CK_RSA_PKCS_OAEP_PARAMS)(a.alloc(unsafe.Sizeof(C.CK_RSA_PKCS_OAEP_PARAMS{})))
		p.hashAlg = C.CK_MECHANISM_TYPE(s.OAEP.Hash)
		p.mgf = C.CK_RSA_PKCS_MGF_TYPE(s.OAEP.MGF)
		p.source = C.CK_RSA_PKCS_OAEP_SOURCE_TYPE(s.OAEP.Source)
		if len(s.OAEP.SourceData) > 0 {
			p.pSourceData = a.bytes(s.OAEP.SourceData)
		}
		p.ulSourceDataLen = C.CK_ULONG(len(s.OAEP.SourceData))
		m.pParameter, m.ulParameterLen = unsafe.Pointer(p), C.CK_ULONG(unsafe.Sizeof(*p))
	case 6:
		p := (*C.CK_SIGN_ADDITIONAL_CONTEXT)(a.alloc(unsafe.Sizeof(C.CK_SIGN_ADDITIONAL_CONTEXT{})))
		p.hedgeVariant = C.CK_HEDGE_TYPE(s.Sign.Hedge)
		if len(s.Sign.Context) > 0 {
			p.pContext = (*C.CK_BYTE)(a.bytes(s.Sign.Context))
		}
		p.ulContextLen = C.CK_ULONG(len(s.Sign.Context))
		m.pParameter, m.ulParameterLen = unsafe.Pointer(p), C.CK_ULONG(unsafe.Sizeof(*p))
	}
	if s.NullParam {
		m.pParameter = nil
	}
	m.ulParameterLen = C.CK_ULONG(int(m.ulParameterLen) + s.LenDelta)
	return m
}

// tsInitToken calls C_InitToken.
func tsInitToken(slot uint64, soPIN, label string) uint64 {
	var a cArena
	defer a.free()
	lbl := make([]byte, 32)
	for i := range lbl {
		lbl[i] = ' '
	}
	copy(lbl, label)
	return uint64(C.C_InitToken(C.CK_SLOT_ID(slot), (*C.CK_UTF8CHAR)(a.bytes([]byte(soPIN))),
		C.CK_ULONG(len(soPIN)), (*C.CK_UTF8CHAR)(a.bytes(lbl))))
}

// tsLogin calls C_Login with pin (NULL when nullPIN) and length n.
func tsLogin(h, userType uint64, pin []byte, nullPIN bool, n uint64) uint64 {
	var a cArena
	defer a.free()
	var p *C.CK_UTF8CHAR
	if !nullPIN {
		p = (*C.CK_UTF8CHAR)(a.bytes(pin))
	}
	return uint64(C.C_Login(C.CK_SESSION_HANDLE(h), C.CK_USER_TYPE(userType), p, C.CK_ULONG(n)))
}

// tsLogout calls C_Logout.
func tsLogout(h uint64) uint64 { return uint64(C.C_Logout(C.CK_SESSION_HANDLE(h))) }

// tsInitPIN calls C_InitPIN.
func tsInitPIN(h uint64, pin string) uint64 {
	var a cArena
	defer a.free()
	return uint64(C.C_InitPIN(C.CK_SESSION_HANDLE(h), (*C.CK_UTF8CHAR)(a.bytes([]byte(pin))), C.CK_ULONG(len(pin))))
}

// tsTokenFlags calls C_GetTokenInfo and returns its flags.
func tsTokenFlags(slot uint64) (uint64, uint64) {
	var ti C.CK_TOKEN_INFO
	rv := C.C_GetTokenInfo(C.CK_SLOT_ID(slot), &ti)
	return uint64(rv), uint64(ti.flags)
}

// tsSeedRandom calls C_SeedRandom.
func tsSeedRandom(h uint64, seed []byte) uint64 {
	var a cArena
	defer a.free()
	return uint64(C.C_SeedRandom(C.CK_SESSION_HANDLE(h), (*C.CK_BYTE)(a.bytes(seed)), C.CK_ULONG(len(seed))))
}

// tsWaitForSlotEvent calls C_WaitForSlotEvent; slot is what the module
// left in *pSlot (preset to 0xAB).
func tsWaitForSlotEvent(flags uint64, nullSlot, reserved bool) (rv, slot uint64) {
	s := C.CK_SLOT_ID(0xAB)
	ps := &s
	if nullSlot {
		ps = nil
	}
	var res unsafe.Pointer
	if reserved {
		res = unsafe.Pointer(&s)
	}
	r := C.C_WaitForSlotEvent(C.CK_FLAGS(flags), ps, res)
	return uint64(r), uint64(s)
}

// tsGenerateKeyPair calls C_GenerateKeyPair.
func tsGenerateKeyPair(h uint64, mech tsMech, pub, priv []tsAttr) (rv, hPub, hPriv uint64) {
	var a cArena
	defer a.free()
	pt, pn := a.template(pub)
	qt, qn := a.template(priv)
	var hp, hq C.CK_OBJECT_HANDLE
	r := C.C_GenerateKeyPair(C.CK_SESSION_HANDLE(h), a.mechanism(mech), pt, pn, qt, qn, &hp, &hq)
	return uint64(r), uint64(hp), uint64(hq)
}

// tsGenerateKey calls C_GenerateKey.
func tsGenerateKey(h uint64, mech tsMech, tmpl []tsAttr) (rv, key uint64) {
	var a cArena
	defer a.free()
	t, n := a.template(tmpl)
	var hk C.CK_OBJECT_HANDLE
	r := C.C_GenerateKey(C.CK_SESSION_HANDLE(h), a.mechanism(mech), t, n, &hk)
	return uint64(r), uint64(hk)
}

// tsCreateObject calls C_CreateObject.
func tsCreateObject(h uint64, tmpl []tsAttr) (rv, obj uint64) {
	var a cArena
	defer a.free()
	t, n := a.template(tmpl)
	var ho C.CK_OBJECT_HANDLE
	r := C.C_CreateObject(C.CK_SESSION_HANDLE(h), t, n, &ho)
	return uint64(r), uint64(ho)
}

// tsGetAttribute reads one attribute (up to 16 KiB).
func tsGetAttribute(h, obj, typ uint64) (uint64, []byte) {
	var a cArena
	defer a.free()
	const max = 16 << 10
	attr := (*C.CK_ATTRIBUTE)(a.alloc(unsafe.Sizeof(C.CK_ATTRIBUTE{})))
	attr._type = C.CK_ATTRIBUTE_TYPE(typ)
	attr.pValue = a.alloc(max)
	attr.ulValueLen = max
	r := C.C_GetAttributeValue(C.CK_SESSION_HANDLE(h), C.CK_OBJECT_HANDLE(obj), attr, 1)
	if r != C.CKR_OK {
		return uint64(r), nil
	}
	return uint64(r), C.GoBytes(attr.pValue, C.int(attr.ulValueLen))
}

// tsSign runs C_SignInit and C_Sign (a buffer of 64 KiB, enough for
// every SLH-DSA signature).
func tsSign(h uint64, mech tsMech, key uint64, data []byte) (uint64, []byte) {
	var a cArena
	defer a.free()
	if r := C.C_SignInit(C.CK_SESSION_HANDLE(h), a.mechanism(mech), C.CK_OBJECT_HANDLE(key)); r != C.CKR_OK {
		return uint64(r), nil
	}
	const capacity = 64 << 10
	out := a.alloc(capacity)
	l := C.CK_ULONG(capacity)
	r := C.C_Sign(C.CK_SESSION_HANDLE(h), (*C.CK_BYTE)(a.bytes(data)), C.CK_ULONG(len(data)), (*C.CK_BYTE)(out), &l)
	if r != C.CKR_OK {
		return uint64(r), nil
	}
	return uint64(r), C.GoBytes(out, C.int(l))
}

// tsWrapKey calls C_WrapKey with a NULL output (query), or a buffer of
// capacity bytes; it returns *pulWrappedKeyLen and the bytes written.
func tsWrapKey(h uint64, mech tsMech, wrapping, key uint64, query bool, capacity int) (rv, outLen uint64, out []byte) {
	var a cArena
	defer a.free()
	buf := a.alloc(uintptr(capacity))
	p := (*C.CK_BYTE)(buf)
	if query {
		p = nil
	}
	l := C.CK_ULONG(capacity)
	r := C.C_WrapKey(C.CK_SESSION_HANDLE(h), a.mechanism(mech), C.CK_OBJECT_HANDLE(wrapping), C.CK_OBJECT_HANDLE(key), p, &l)
	if r == C.CKR_OK && !query {
		out = C.GoBytes(buf, C.int(l))
	}
	return uint64(r), uint64(l), out
}

// tsUnwrapKey calls C_UnwrapKey.
func tsUnwrapKey(h uint64, mech tsMech, unwrapping uint64, wrapped []byte, tmpl []tsAttr) (rv, key uint64) {
	var a cArena
	defer a.free()
	t, n := a.template(tmpl)
	var hk C.CK_OBJECT_HANDLE
	r := C.C_UnwrapKey(C.CK_SESSION_HANDLE(h), a.mechanism(mech), C.CK_OBJECT_HANDLE(unwrapping),
		(*C.CK_BYTE)(a.bytes(wrapped)), C.CK_ULONG(len(wrapped)), t, n, &hk)
	return uint64(r), uint64(hk)
}

// tsUnwrapKeyRaw calls C_UnwrapKey with the given pointers' NULL-ness: a
// NULL wrapped key with wrappedLen, a NULL phKey.
func tsUnwrapKeyRaw(h uint64, mech tsMech, unwrapping uint64, nullWrapped bool, wrappedLen uint64, nullPh bool) uint64 {
	var a cArena
	defer a.free()
	var w *C.CK_BYTE
	if !nullWrapped {
		w = (*C.CK_BYTE)(a.alloc(uintptr(wrappedLen)))
	}
	var hk C.CK_OBJECT_HANDLE
	ph := &hk
	if nullPh {
		ph = nil
	}
	return uint64(C.C_UnwrapKey(C.CK_SESSION_HANDLE(h), a.mechanism(mech), C.CK_OBJECT_HANDLE(unwrapping), w, C.CK_ULONG(wrappedLen), nil, 0, ph))
}

// tsWrapKeyNullLen calls C_WrapKey with a NULL pulWrappedKeyLen.
func tsWrapKeyNullLen(h uint64, mech tsMech, wrapping, key uint64) uint64 {
	var a cArena
	defer a.free()
	return uint64(C.C_WrapKey(C.CK_SESSION_HANDLE(h), a.mechanism(mech), C.CK_OBJECT_HANDLE(wrapping), C.CK_OBJECT_HANDLE(key), nil, nil))
}

// tsBool and tsULong encode attribute values.
func tsBool(b bool) []byte {
	if b {
		return []byte{1}
	}
	return []byte{0}
}

func tsULong(v uint64) []byte { return ck.ULong(v) }

// tsSessionInfoLoop calls C_GetSessionInfo n times from C.
func tsSessionInfoLoop(h uint64, n int) uint64 {
	return uint64(C.ts_session_info_loop(C.CK_SESSION_HANDLE(h), C.long(n)))
}

// tsFindSignLoop runs ts_find_sign_loop: n times libp11's per-handshake
// search for private keys, then (unless noSign) C_SignInit and C_Sign of
// a 32-byte hash with key and mech (no parameters).
func tsFindSignLoop(h, key, mech uint64, noSign bool, n int) uint64 {
	m := C.CK_MECHANISM_TYPE(mech)
	if noSign {
		m = ^C.CK_MECHANISM_TYPE(0)
	}
	return uint64(C.ts_find_sign_loop(C.CK_SESSION_HANDLE(h), C.CK_OBJECT_HANDLE(key), m, C.long(n)))
}

// tsInitCall calls C_SignInit, C_VerifyInit, C_EncryptInit, C_DecryptInit
// or C_DigestInit (by the CKF_ flag of the kind) with mech (NullMech: a
// NULL pMechanism) and key.
func tsInitCall(h uint64, flag uint64, mech tsMech, key uint64) uint64 {
	var a cArena
	defer a.free()
	sh, m, k := C.CK_SESSION_HANDLE(h), a.mechanism(mech), C.CK_OBJECT_HANDLE(key)
	switch flag {
	case ck.CKF_SIGN:
		return uint64(C.C_SignInit(sh, m, k))
	case ck.CKF_VERIFY:
		return uint64(C.C_VerifyInit(sh, m, k))
	case ck.CKF_ENCRYPT:
		return uint64(C.C_EncryptInit(sh, m, k))
	case ck.CKF_DECRYPT:
		return uint64(C.C_DecryptInit(sh, m, k))
	case ck.CKF_DIGEST:
		return uint64(C.C_DigestInit(sh, m))
	}
	return uint64(ck.CKR_GENERAL_ERROR)
}
