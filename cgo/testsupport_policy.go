//go:build modexp_testhooks

package main

// Test support for the key-management policy tests (policy_test.go):
// C_DeriveKey with the parameters of the derivation attacks and
// C_SetAttributeValue, through the real C entry points. Nothing in the
// library calls them.

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

// tsDeriveEncryptData calls C_DeriveKey with mech (CKM_AES_ECB_ENCRYPT_DATA
// and the other ECB derivations by data encryption) and a
// CK_KEY_DERIVATION_STRING_DATA holding data.
func tsDeriveEncryptData(h, mech, base uint64, data []byte, attrs []token.Attribute) (rv, obj uint64) {
	var a cArena
	defer a.free()
	p := (*C.CK_KEY_DERIVATION_STRING_DATA)(a.alloc(unsafe.Sizeof(C.CK_KEY_DERIVATION_STRING_DATA{})))
	p.pData, p.ulLen = (*C.CK_BYTE)(a.bytes(data)), C.CK_ULONG(len(data))
	return tsDerive(h, mech, base, unsafe.Pointer(p), unsafe.Sizeof(*p), attrs)
}

// tsDerive calls C_DeriveKey with mech and its parameter (size bytes at
// param, in C memory) from base, with the template attrs.
func tsDerive(h, mech, base uint64, param unsafe.Pointer, size uintptr, attrs []token.Attribute) (rv, obj uint64) {
	m := C.CK_MECHANISM{mechanism: C.CK_MECHANISM_TYPE(mech), pParameter: param, ulParameterLen: C.CK_ULONG(size)}
	t := tsNewTemplate(attrs)
	defer t.free()
	var o C.CK_OBJECT_HANDLE
	r := C.C_DeriveKey(C.CK_SESSION_HANDLE(h), &m, C.CK_OBJECT_HANDLE(base), t.p, C.CK_ULONG(t.n), &o)
	return uint64(r), uint64(o)
}

// tsDeriveHKDF calls C_DeriveKey with mech (CKM_HKDF_DERIVE or
// CKM_HKDF_DATA) and a CK_HKDF_PARAMS: extract (no salt) and expand with
// HMAC-SHA256 and info.
func tsDeriveHKDF(h, mech, base uint64, info []byte, attrs []token.Attribute) (rv, obj uint64) {
	var a cArena
	defer a.free()
	p := (*C.CK_HKDF_PARAMS)(a.alloc(unsafe.Sizeof(C.CK_HKDF_PARAMS{})))
	p.bExtract, p.bExpand = C.CK_TRUE, C.CK_TRUE
	p.prfHashMechanism = C.CKM_SHA256
	p.ulSaltType = 1 // CKF_HKDF_SALT_NULL
	p.pInfo, p.ulInfoLen = (*C.CK_BYTE)(a.bytes(info)), C.CK_ULONG(len(info))
	return tsDerive(h, mech, base, unsafe.Pointer(p), unsafe.Sizeof(*p), attrs)
}

// tsSetAttrs calls C_SetAttributeValue.
func tsSetAttrs(h, obj uint64, attrs []token.Attribute) uint64 {
	t := tsNewTemplate(attrs)
	defer t.free()
	return uint64(C.C_SetAttributeValue(C.CK_SESSION_HANDLE(h), C.CK_OBJECT_HANDLE(obj), t.p, C.CK_ULONG(t.n)))
}
