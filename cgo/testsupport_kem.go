//go:build modexp_testhooks

package main

// Test support: C_EncapsulateKey, C_DecapsulateKey and the
// C_VerifySignature functions through the 3.2 function list, with their arguments in C memory (testsupport_p11.go).

/*
#include "pkcs11_3.h"

const CK_FUNCTION_LIST_3_2 *ts_list_3_2(void); // testsupport.go

static CK_RV ts_encapsulate(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE pub,
			    CK_ATTRIBUTE_PTR t, CK_ULONG n, CK_BYTE_PTR ct, CK_ULONG_PTR ctLen,
			    CK_OBJECT_HANDLE_PTR key)
{
	const CK_FUNCTION_LIST_3_2 *f = ts_list_3_2();
	if (f == NULL)
		return CKR_GENERAL_ERROR;
	return f->C_EncapsulateKey(h, m, pub, t, n, ct, ctLen, key);
}

static CK_RV ts_decapsulate(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE priv,
			    CK_ATTRIBUTE_PTR t, CK_ULONG n, CK_BYTE_PTR ct, CK_ULONG ctLen,
			    CK_OBJECT_HANDLE_PTR key)
{
	const CK_FUNCTION_LIST_3_2 *f = ts_list_3_2();
	if (f == NULL)
		return CKR_GENERAL_ERROR;
	return f->C_DecapsulateKey(h, m, priv, t, n, ct, ctLen, key);
}

static CK_RV ts_verify_signature(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE key,
				 CK_BYTE_PTR sig, CK_ULONG sigLen, CK_BYTE_PTR data, CK_ULONG dataLen, int parts)
{
	const CK_FUNCTION_LIST_3_2 *f = ts_list_3_2();
	if (f == NULL)
		return CKR_GENERAL_ERROR;
	CK_RV rv = f->C_VerifySignatureInit(h, m, key, sig, sigLen);
	if (rv != CKR_OK)
		return rv;
	if (!parts)
		return f->C_VerifySignature(h, data, dataLen);
	for (CK_ULONG i = 0; i < dataLen; i += 5) {
		rv = f->C_VerifySignatureUpdate(h, data + i, dataLen - i < 5 ? dataLen - i : 5);
		if (rv != CKR_OK)
			return rv;
	}
	return f->C_VerifySignatureFinal(h);
}

// ts_lists_mech: whether C_GetMechanismList of the 3.2 list (v32) or of
// the 2.40 list lists mech on slot; -1 on an error.
static int ts_lists_mech(CK_SLOT_ID slot, int v32, CK_MECHANISM_TYPE mech)
{
	const CK_FUNCTION_LIST_3_2 *f = ts_list_3_2();
	CK_FUNCTION_LIST_PTR f2 = NULL;
	if (f == NULL || C_GetFunctionList(&f2) != CKR_OK)
		return -1;
	CK_C_GetMechanismList gml = v32 ? f->base.C_GetMechanismList : f2->C_GetMechanismList;
	CK_MECHANISM_TYPE list[512];
	CK_ULONG n = 512;
	if (gml(slot, list, &n) != CKR_OK)
		return -1;
	for (CK_ULONG i = 0; i < n; i++)
		if (list[i] == mech)
			return 1;
	return 0;
}
*/
import "C"

// tsEncapsulate calls C_EncapsulateKey with a NULL ciphertext (query) or
// a buffer of capacity bytes; it returns *pulCiphertextLen, the bytes
// written and *phKey (left 0 unless the call wrote it).
func tsEncapsulate(h uint64, mech tsMech, pub uint64, tmpl []tsAttr, query bool, capacity int) (rv, ctLen uint64, ct []byte, key uint64) {
	var a cArena
	defer a.free()
	t, n := a.template(tmpl)
	buf := a.alloc(uintptr(capacity + 1))
	p := (*C.CK_BYTE)(buf)
	if query {
		p = nil
	}
	l := C.CK_ULONG(capacity)
	var hk C.CK_OBJECT_HANDLE
	r := C.ts_encapsulate(C.CK_SESSION_HANDLE(h), a.mechanism(mech), C.CK_OBJECT_HANDLE(pub), t, n, p, &l, &hk)
	if r == C.CKR_OK && !query {
		ct = C.GoBytes(buf, C.int(l))
	}
	return uint64(r), uint64(l), ct, uint64(hk)
}

// tsDecapsulate calls C_DecapsulateKey.
func tsDecapsulate(h uint64, mech tsMech, priv uint64, tmpl []tsAttr, ct []byte) (rv, key uint64) {
	var a cArena
	defer a.free()
	t, n := a.template(tmpl)
	var hk C.CK_OBJECT_HANDLE
	r := C.ts_decapsulate(C.CK_SESSION_HANDLE(h), a.mechanism(mech), C.CK_OBJECT_HANDLE(priv), t, n,
		(*C.CK_BYTE)(a.bytes(ct)), C.CK_ULONG(len(ct)), &hk)
	return uint64(r), uint64(hk)
}

// tsVerifySignature runs C_VerifySignatureInit then C_VerifySignature, or
// C_VerifySignatureUpdate in 5-byte parts and C_VerifySignatureFinal.
func tsVerifySignature(h uint64, mech tsMech, key uint64, sig, data []byte, parts bool) uint64 {
	var a cArena
	defer a.free()
	p := C.int(0)
	if parts {
		p = 1
	}
	return uint64(C.ts_verify_signature(C.CK_SESSION_HANDLE(h), a.mechanism(mech), C.CK_OBJECT_HANDLE(key),
		(*C.CK_BYTE)(a.bytes(sig)), C.CK_ULONG(len(sig)), (*C.CK_BYTE)(a.bytes(data)), C.CK_ULONG(len(data)), p))
}

// tsListsMech reports whether the 3.2 list's (v32) or the 2.40 list's
// C_GetMechanismList lists mech on slot (-1: an error).
func tsListsMech(slot uint64, v32 bool, mech uint64) int {
	w := C.int(0)
	if v32 {
		w = 1
	}
	return int(C.ts_lists_mech(C.CK_SLOT_ID(slot), w, C.CK_MECHANISM_TYPE(mech)))
}
