package main

// Session and login entry points.

/*
#include "pkcs11_3.h"
*/
import "C"

import "github.com/modexp-token/modexp-token/token"

// sessionOp is a token call taking only a session handle.
type sessionOp func(*token.Module, uint64) error

// onSession runs op for the session h.
func onSession(fn string, h C.CK_SESSION_HANDLE, op sessionOp) (rv C.CK_RV) {
	c := enter(fn)
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	return c.rvOf(op(m, uint64(h)))
}

//export goInitPIN
func goInitPIN(h C.CK_SESSION_HANDLE, pPin *C.CK_UTF8CHAR, pinLen C.CK_ULONG) (rv C.CK_RV) {
	c := enter("C_InitPIN")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	pin, ok := bytesView((*C.CK_BYTE)(pPin), pinLen)
	if !ok {
		return rvArgumentsBad
	}
	return c.rvOf(m.InitPIN(uint64(h), pin))
}

//export goSetPIN
func goSetPIN(h C.CK_SESSION_HANDLE, pOld *C.CK_UTF8CHAR, oldLen C.CK_ULONG, pNew *C.CK_UTF8CHAR, newLen C.CK_ULONG) (rv C.CK_RV) {
	c := enter("C_SetPIN")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	oldPIN, ok1 := bytesView((*C.CK_BYTE)(pOld), oldLen)
	newPIN, ok2 := bytesView((*C.CK_BYTE)(pNew), newLen)
	if !ok1 || !ok2 {
		return rvArgumentsBad
	}
	return c.rvOf(m.SetPIN(uint64(h), oldPIN, newPIN))
}

// goOpenSession ignores pApplication and Notify: this module never calls
// back (it has no callbacks to make).
//
//export goOpenSession
func goOpenSession(slot C.CK_SLOT_ID, flags C.CK_FLAGS, ph *C.CK_SESSION_HANDLE) (rv C.CK_RV) {
	c := enter("C_OpenSession")
	defer c.leave(&rv)
	m := c.m
	c.slot(slot)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	if ph == nil {
		return rvArgumentsBad
	}
	sh, err := m.OpenSession(uint64(slot), uint64(flags))
	if err != nil {
		return c.rvOf(err)
	}
	*ph = C.CK_SESSION_HANDLE(sh)
	return rvOK
}

//export goCloseSession
func goCloseSession(h C.CK_SESSION_HANDLE) C.CK_RV {
	return onSession("C_CloseSession", h, (*token.Module).CloseSession)
}

//export goCloseAllSessions
func goCloseAllSessions(slot C.CK_SLOT_ID) (rv C.CK_RV) {
	c := enter("C_CloseAllSessions")
	defer c.leave(&rv)
	m := c.m
	c.slot(slot)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	return c.rvOf(m.CloseAllSessions(uint64(slot)))
}

//export goGetSessionInfo
func goGetSessionInfo(h C.CK_SESSION_HANDLE, p *C.CK_SESSION_INFO) (rv C.CK_RV) {
	c := enter("C_GetSessionInfo")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	if p == nil {
		return rvArgumentsBad
	}
	si, err := m.SessionInfo(uint64(h))
	if err != nil {
		return c.rvOf(err)
	}
	p.slotID = C.CK_SLOT_ID(si.SlotID)
	p.state = C.CK_STATE(si.State)
	p.flags = C.CK_FLAGS(si.Flags)
	p.ulDeviceError = C.CK_ULONG(si.DeviceError)
	return rvOK
}

//export goLogin
func goLogin(h C.CK_SESSION_HANDLE, userType C.CK_USER_TYPE, pPin *C.CK_UTF8CHAR, pinLen C.CK_ULONG) (rv C.CK_RV) {
	c := enter("C_Login")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	pin, ok := bytesView((*C.CK_BYTE)(pPin), pinLen)
	if !ok {
		return rvArgumentsBad
	}
	return c.rvOf(m.Login(uint64(h), uint64(userType), pin))
}

// goLoginUser is C_LoginUser (3.0). The token has no named users: an empty
// username (NULL_PTR or length 0) logs in as C_Login does; a non-empty one is
// CKR_ARGUMENTS_BAD, because accepting it would let the caller believe it is
// logged in as someone this token does not know.
//
//export goLoginUser
func goLoginUser(h C.CK_SESSION_HANDLE, userType C.CK_USER_TYPE, pPin *C.CK_UTF8CHAR, pinLen C.CK_ULONG, pUser *C.CK_UTF8CHAR, userLen C.CK_ULONG) (rv C.CK_RV) {
	c := enter("C_LoginUser")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	pin, ok1 := bytesView((*C.CK_BYTE)(pPin), pinLen)
	user, ok2 := bytesView((*C.CK_BYTE)(pUser), userLen)
	if !ok1 || !ok2 || len(user) != 0 {
		return rvArgumentsBad
	}
	return c.rvOf(m.Login(uint64(h), uint64(userType), pin))
}

//export goLogout
func goLogout(h C.CK_SESSION_HANDLE) C.CK_RV {
	return onSession("C_Logout", h, (*token.Module).Logout)
}

//export goSessionCancel
func goSessionCancel(h C.CK_SESSION_HANDLE, flags C.CK_FLAGS) (rv C.CK_RV) {
	c := enter("C_SessionCancel")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	return c.rvOf(m.SessionCancel(uint64(h), uint64(flags)))
}
