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
	c := enter("C_CreateObject")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
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
		return c.rvOf(err)
	}
	*ph = C.CK_OBJECT_HANDLE(obj)
	return rvOK
}

//export goCopyObject
func goCopyObject(h C.CK_SESSION_HANDLE, obj C.CK_OBJECT_HANDLE, pTmpl *C.CK_ATTRIBUTE, n C.CK_ULONG, ph *C.CK_OBJECT_HANDLE) (rv C.CK_RV) {
	c := enter("C_CopyObject")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	c.object(obj)
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
		return c.rvOf(err)
	}
	*ph = C.CK_OBJECT_HANDLE(copied)
	return rvOK
}

//export goDestroyObject
func goDestroyObject(h C.CK_SESSION_HANDLE, obj C.CK_OBJECT_HANDLE) (rv C.CK_RV) {
	c := enter("C_DestroyObject")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	c.object(obj)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	return c.rvOf(m.DestroyObject(uint64(h), uint64(obj)))
}

//export goGetObjectSize
func goGetObjectSize(h C.CK_SESSION_HANDLE, obj C.CK_OBJECT_HANDLE, pSize *C.CK_ULONG) (rv C.CK_RV) {
	c := enter("C_GetObjectSize")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	c.object(obj)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	if pSize == nil {
		return rvArgumentsBad
	}
	size, err := m.GetObjectSize(uint64(h), uint64(obj))
	if err != nil {
		return c.rvOf(err)
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
	c := enter("C_GetAttributeValue")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	c.object(obj)
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
		return c.rvOf(err)
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
		case r.Err == 0 && token.IsAttributeArray(uint64(a._type)):
			switch fillArray(a, r.Value) {
			case rvBufferTooSmall:
				small = true
			case C.CKR_ATTRIBUTE_TYPE_INVALID:
				invalid = true
			case rvGeneralError:
				other = rvGeneralError
			}
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

// fillArray answers one attribute-array attribute (CKA_WRAP_TEMPLATE...)
// whose token value is enc (token.EncodeAttributes form). The outer
// ulValueLen is the array's size in bytes (n CK_ATTRIBUTEs). With a NULL
// pValue only that size is reported; a smaller buffer is
// CKR_BUFFER_TOO_SMALL. Otherwise pValue holds the caller's CK_ATTRIBUTE
// array: if every element's pValue is NULL the types and value lengths
// are filled in, in the token's order; else each element is answered by
// its type as C_GetAttributeValue answers a template (unknown type:
// CKR_ATTRIBUTE_TYPE_INVALID, short buffer: CKR_BUFFER_TOO_SMALL, both
// with CK_UNAVAILABLE_INFORMATION in that element's length).
func fillArray(a *C.CK_ATTRIBUTE, enc []byte) C.CK_RV {
	list, err := token.DecodeAttributes(enc)
	if err != nil {
		a.ulValueLen = unavailable
		return rvGeneralError
	}
	need := C.CK_ULONG(len(list)) * sizeofAttr
	if a.pValue == nil {
		a.ulValueLen = need
		return rvOK
	}
	if a.ulValueLen < need {
		a.ulValueLen = unavailable
		return rvBufferTooSmall
	}
	elems := unsafe.Slice((*C.CK_ATTRIBUTE)(a.pValue), int(a.ulValueLen/sizeofAttr))
	a.ulValueLen = need
	allNull := true
	for i := range elems {
		allNull = allNull && elems[i].pValue == nil
	}
	if allNull {
		for i, v := range list {
			elems[i]._type = C.CK_ATTRIBUTE_TYPE(v.Type)
			elems[i].ulValueLen = C.CK_ULONG(len(v.Value))
		}
		return rvOK
	}
	rv := rvOK
	for i := range elems {
		e := &elems[i]
		var val []byte
		found := false
		for _, v := range list {
			if uint64(e._type) == v.Type {
				val, found = v.Value, true
				break
			}
		}
		switch {
		case !found:
			e.ulValueLen = unavailable
			rv = C.CKR_ATTRIBUTE_TYPE_INVALID
		case e.pValue == nil:
			e.ulValueLen = C.CK_ULONG(len(val))
		case e.ulValueLen >= C.CK_ULONG(len(val)):
			copy(unsafe.Slice((*byte)(e.pValue), len(val)), val)
			e.ulValueLen = C.CK_ULONG(len(val))
		default:
			e.ulValueLen = unavailable
			if rv == rvOK {
				rv = rvBufferTooSmall
			}
		}
	}
	return rv
}

//export goSetAttributeValue
func goSetAttributeValue(h C.CK_SESSION_HANDLE, obj C.CK_OBJECT_HANDLE, pTmpl *C.CK_ATTRIBUTE, n C.CK_ULONG) (rv C.CK_RV) {
	c := enter("C_SetAttributeValue")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	c.object(obj)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	tmpl, rv := templateIn(pTmpl, n)
	if rv != rvOK {
		return rv
	}
	return c.rvOf(m.SetAttributeValue(uint64(h), uint64(obj), tmpl))
}

//export goFindObjectsInit
func goFindObjectsInit(h C.CK_SESSION_HANDLE, pTmpl *C.CK_ATTRIBUTE, n C.CK_ULONG) (rv C.CK_RV) {
	c := enter("C_FindObjectsInit")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	tmpl, rv := templateIn(pTmpl, n)
	if rv != rvOK {
		return rv
	}
	return c.rvOf(m.FindObjectsInit(uint64(h), tmpl))
}

//export goFindObjects
func goFindObjects(h C.CK_SESSION_HANDLE, ph *C.CK_OBJECT_HANDLE, max C.CK_ULONG, pCount *C.CK_ULONG) (rv C.CK_RV) {
	c := enter("C_FindObjects")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	if pCount == nil || (ph == nil && max != 0) {
		return rvArgumentsBad
	}
	found, err := m.FindObjects(uint64(h), clampCap(max))
	if err != nil {
		return c.rvOf(err)
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
	return onSession("C_FindObjectsFinal", h, (*token.Module).FindObjectsFinal)
}
