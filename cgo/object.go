package main

// Object, attribute and search entry points.

/*
#include "pkcs11_3.h"
*/
import "C"

import (
	"unsafe"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

//export goCreateObject
func goCreateObject(h C.CK_SESSION_HANDLE, pTmpl *C.CK_ATTRIBUTE, n C.CK_ULONG, ph *C.CK_OBJECT_HANDLE) (rv C.CK_RV) {
	m := enter()
	defer leave(&rv)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	tmpl, rv := templateIn(pTmpl, n)
	if rv != rvOK {
		return rv
	}
	if ph == nil {
		return rvArgumentsBad
	}
	obj, err := m.CreateObject(uint64(h), tmpl)
	if err != nil {
		return rvOf(err)
	}
	*ph = C.CK_OBJECT_HANDLE(obj)
	return rvOK
}

//export goCopyObject
func goCopyObject(h C.CK_SESSION_HANDLE, obj C.CK_OBJECT_HANDLE, pTmpl *C.CK_ATTRIBUTE, n C.CK_ULONG, ph *C.CK_OBJECT_HANDLE) (rv C.CK_RV) {
	m := enter()
	defer leave(&rv)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	tmpl, rv := templateIn(pTmpl, n)
	if rv != rvOK {
		return rv
	}
	if ph == nil {
		return rvArgumentsBad
	}
	copied, err := m.CopyObject(uint64(h), uint64(obj), tmpl)
	if err != nil {
		return rvOf(err)
	}
	*ph = C.CK_OBJECT_HANDLE(copied)
	return rvOK
}

//export goDestroyObject
func goDestroyObject(h C.CK_SESSION_HANDLE, obj C.CK_OBJECT_HANDLE) (rv C.CK_RV) {
	m := enter()
	defer leave(&rv)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	return rvOf(m.DestroyObject(uint64(h), uint64(obj)))
}

//export goGetObjectSize
func goGetObjectSize(h C.CK_SESSION_HANDLE, obj C.CK_OBJECT_HANDLE, pSize *C.CK_ULONG) (rv C.CK_RV) {
	m := enter()
	defer leave(&rv)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	if pSize == nil {
		return rvArgumentsBad
	}
	size, err := m.GetObjectSize(uint64(h), uint64(obj))
	if err != nil {
		return rvOf(err)
	}
	*pSize = C.CK_ULONG(size)
	return rvOK
}

// goGetAttributeValue answers each attribute of the template:
//
//   - sensitive or unknown to the token: ulValueLen = CK_UNAVAILABLE_INFORMATION;
//   - pValue NULL_PTR: ulValueLen = the value's length;
//   - buffer large enough: the value is copied, ulValueLen = its length;
//   - buffer too small: ulValueLen = CK_UNAVAILABLE_INFORMATION.
//
// Every attribute is processed. When several problems occur the call returns
// the first of CKR_ATTRIBUTE_SENSITIVE, CKR_ATTRIBUTE_TYPE_INVALID,
// CKR_BUFFER_TOO_SMALL (the standard lets the library choose; this is the
// order it lists them in).
//
//export goGetAttributeValue
func goGetAttributeValue(h C.CK_SESSION_HANDLE, obj C.CK_OBJECT_HANDLE, pTmpl *C.CK_ATTRIBUTE, n C.CK_ULONG) (rv C.CK_RV) {
	m := enter()
	defer leave(&rv)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	if (pTmpl == nil && n != 0) || n > maxLen {
		return rvArgumentsBad
	}
	var attrs []C.CK_ATTRIBUTE
	if n > 0 {
		attrs = unsafe.Slice(pTmpl, int(n))
	}
	types := make([]uint64, len(attrs))
	for i := range attrs {
		types[i] = uint64(attrs[i]._type)
	}
	res, err := m.GetAttributeValue(uint64(h), uint64(obj), types)
	if err != nil {
		return rvOf(err)
	}
	if len(res) != len(attrs) {
		return rvGeneralError // the token broke its contract
	}
	return fillAttributes(attrs, res)
}

// fillAttributes writes the token's answers into the caller's template (see
// goGetAttributeValue) and returns the call's CK_RV.
func fillAttributes(attrs []C.CK_ATTRIBUTE, res []token.AttributeResult) C.CK_RV {
	var sensitive, invalid, small bool
	other := rvOK
	for i := range attrs {
		a, r := &attrs[i], res[i]
		switch {
		case r.Err != 0:
			a.ulValueLen = unavailable
			switch ck.Error(r.Err) {
			case ck.CKR_ATTRIBUTE_SENSITIVE:
				sensitive = true
			case ck.CKR_ATTRIBUTE_TYPE_INVALID:
				invalid = true
			default:
				other = C.CK_RV(r.Err)
			}
		case a.pValue == nil:
			a.ulValueLen = C.CK_ULONG(len(r.Value))
		case a.ulValueLen >= C.CK_ULONG(len(r.Value)):
			copy(unsafe.Slice((*byte)(a.pValue), len(r.Value)), r.Value)
			a.ulValueLen = C.CK_ULONG(len(r.Value))
		default:
			a.ulValueLen = unavailable
			small = true
		}
	}
	switch {
	case other != rvOK:
		return other
	case sensitive:
		return C.CKR_ATTRIBUTE_SENSITIVE
	case invalid:
		return C.CKR_ATTRIBUTE_TYPE_INVALID
	case small:
		return rvBufferTooSmall
	}
	return rvOK
}

//export goSetAttributeValue
func goSetAttributeValue(h C.CK_SESSION_HANDLE, obj C.CK_OBJECT_HANDLE, pTmpl *C.CK_ATTRIBUTE, n C.CK_ULONG) (rv C.CK_RV) {
	m := enter()
	defer leave(&rv)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	tmpl, rv := templateIn(pTmpl, n)
	if rv != rvOK {
		return rv
	}
	return rvOf(m.SetAttributeValue(uint64(h), uint64(obj), tmpl))
}

//export goFindObjectsInit
func goFindObjectsInit(h C.CK_SESSION_HANDLE, pTmpl *C.CK_ATTRIBUTE, n C.CK_ULONG) (rv C.CK_RV) {
	m := enter()
	defer leave(&rv)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	tmpl, rv := templateIn(pTmpl, n)
	if rv != rvOK {
		return rv
	}
	return rvOf(m.FindObjectsInit(uint64(h), tmpl))
}

//export goFindObjects
func goFindObjects(h C.CK_SESSION_HANDLE, ph *C.CK_OBJECT_HANDLE, max C.CK_ULONG, pCount *C.CK_ULONG) (rv C.CK_RV) {
	m := enter()
	defer leave(&rv)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	if pCount == nil || (ph == nil && max != 0) {
		return rvArgumentsBad
	}
	found, err := m.FindObjects(uint64(h), clampCap(max))
	if err != nil {
		return rvOf(err)
	}
	if C.CK_ULONG(len(found)) > max {
		return rvGeneralError // the token broke its contract
	}
	if len(found) > 0 {
		dst := unsafe.Slice(ph, len(found))
		for i, o := range found {
			dst[i] = C.CK_OBJECT_HANDLE(o)
		}
	}
	*pCount = C.CK_ULONG(len(found))
	return rvOK
}

//export goFindObjectsFinal
func goFindObjectsFinal(h C.CK_SESSION_HANDLE) C.CK_RV {
	return onSession(h, (*token.Module).FindObjectsFinal)
}
