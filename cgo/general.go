package main

// General-purpose, slot and token entry points.

/*
#include "pkcs11_3.h"

int modexp_fork_parent_initialized(void);
*/
import "C"

import (
	"os"
	"unsafe"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

//export goInitialize
func goInitialize(pInitArgs unsafe.Pointer) (rv C.CK_RV) {
	defer recoverOnly(&rv)
	a := initArgs{present: pInitArgs != nil}
	if a.present {
		ia := (*C.CK_C_INITIALIZE_ARGS)(pInitArgs)
		a.createMutex = ia.CreateMutex != nil
		a.destroyMutex = ia.DestroyMutex != nil
		a.lockMutex = ia.LockMutex != nil
		a.unlockMutex = ia.UnlockMutex != nil
		a.flags = uint64(ia.flags)
		a.reserved = ia.pReserved != nil
	}
	if err := checkInitArgs(a); err != nil {
		return rvOf(err)
	}
	state.mu.Lock()
	defer state.mu.Unlock()
	testHook()
	if state.mod != nil {
		return rvAlreadyInitialized
	}
	openLog()
	// A forked child's copy of this library whose parent had the module
	// initialised: the parent ran the engine self-tests (fork.c).
	token.ParentRanSelfTests = C.modexp_fork_parent_initialized() != 0
	m, err := token.LoadFromEnv()
	if err != nil {
		logger.Load().Error("C_Initialize failed: the module did not load its configuration, engines or token files; fix what err names",
			"err", err, "config", os.Getenv("MODEXP_TOKEN_CONF"))
		closeLog()
		return rvOf(err)
	}
	state.mod = m
	noteInitialized(true)
	if m.TracingCalls() {
		m.LogCall(&token.CallRecord{Function: "C_Initialize"})
	}
	return rvOK
}

//export goFinalize
func goFinalize(pReserved unsafe.Pointer) (rv C.CK_RV) {
	defer recoverOnly(&rv)
	state.mu.Lock()
	defer state.mu.Unlock()
	testHook()
	if state.mod == nil {
		return rvNotInitialized
	}
	if pReserved != nil {
		return rvArgumentsBad
	}
	m := state.mod
	if m.TracingCalls() {
		m.LogCall(&token.CallRecord{Function: "C_Finalize"})
	}
	log := logger.Load()
	resetState() // first: even a panicking Close leaves the package reset
	if err := m.Close(); err != nil {
		log.Error("cgo: C_Finalize: close module", "err", err)
		return rvOf(err)
	}
	return rvOK
}

//export goGetInfo
func goGetInfo(p *C.CK_INFO, major, minor C.uchar) (rv C.CK_RV) {
	c := enter("C_GetInfo")
	defer c.leave(&rv)
	m := c.m
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	if p == nil {
		return rvArgumentsBad
	}
	info := m.Info()
	*p = C.CK_INFO{}
	p.cryptokiVersion = C.CK_VERSION{major: major, minor: minor}
	pad(p.manufacturerID[:], info.ManufacturerID)
	pad(p.libraryDescription[:], info.LibraryDescription)
	p.libraryVersion = version(info.LibraryVersion)
	return rvOK
}

//export goGetSlotList
func goGetSlotList(tokenPresent C.CK_BBOOL, pList *C.CK_SLOT_ID, pCount *C.CK_ULONG) (rv C.CK_RV) {
	c := enter("C_GetSlotList")
	defer c.leave(&rv)
	m := c.m
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	if pCount == nil {
		return rvArgumentsBad
	}
	return ulongsOut(pList, pCount, m.SlotList(tokenPresent != 0))
}

//export goGetSlotInfo
func goGetSlotInfo(slot C.CK_SLOT_ID, p *C.CK_SLOT_INFO) (rv C.CK_RV) {
	c := enter("C_GetSlotInfo")
	defer c.leave(&rv)
	m := c.m
	c.slot(slot)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	if p == nil {
		return rvArgumentsBad
	}
	info, err := m.SlotInfo(uint64(slot))
	if err != nil {
		return c.rvOf(err)
	}
	*p = C.CK_SLOT_INFO{}
	pad(p.slotDescription[:], info.Description)
	pad(p.manufacturerID[:], info.ManufacturerID)
	p.flags = C.CK_FLAGS(info.Flags)
	p.hardwareVersion = version(info.HardwareVersion)
	p.firmwareVersion = version(info.FirmwareVersion)
	return rvOK
}

//export goGetTokenInfo
func goGetTokenInfo(slot C.CK_SLOT_ID, p *C.CK_TOKEN_INFO) (rv C.CK_RV) {
	c := enter("C_GetTokenInfo")
	defer c.leave(&rv)
	m := c.m
	c.slot(slot)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	if p == nil {
		return rvArgumentsBad
	}
	ti, err := m.TokenInfo(uint64(slot))
	if err != nil {
		return c.rvOf(err)
	}
	*p = C.CK_TOKEN_INFO{}
	pad(p.label[:], ti.Label)
	pad(p.manufacturerID[:], ti.ManufacturerID)
	pad(p.model[:], ti.Model)
	pad(p.serialNumber[:], ti.SerialNumber)
	p.flags = C.CK_FLAGS(ti.Flags)
	p.ulMaxSessionCount = C.CK_ULONG(ti.MaxSessionCount)
	p.ulSessionCount = C.CK_ULONG(ti.SessionCount)
	p.ulMaxRwSessionCount = C.CK_ULONG(ti.MaxRwSessionCount)
	p.ulRwSessionCount = C.CK_ULONG(ti.RwSessionCount)
	p.ulMaxPinLen = C.CK_ULONG(ti.MaxPinLen)
	p.ulMinPinLen = C.CK_ULONG(ti.MinPinLen)
	p.ulTotalPublicMemory = C.CK_ULONG(ti.TotalPublicMemory)
	p.ulFreePublicMemory = C.CK_ULONG(ti.FreePublicMemory)
	p.ulTotalPrivateMemory = C.CK_ULONG(ti.TotalPrivateMemory)
	p.ulFreePrivateMemory = C.CK_ULONG(ti.FreePrivateMemory)
	p.hardwareVersion = version(ti.HardwareVersion)
	p.firmwareVersion = version(ti.FirmwareVersion)
	pad(p.utcTime[:], ti.UTCTime)
	return rvOK
}

//export goGetMechanismList
func goGetMechanismList(slot C.CK_SLOT_ID, pList *C.CK_MECHANISM_TYPE, pCount *C.CK_ULONG, v32 C.int) (rv C.CK_RV) {
	c := enter("C_GetMechanismList")
	defer c.leave(&rv)
	m := c.m
	c.slot(slot)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	if pCount == nil {
		return rvArgumentsBad
	}
	mechs, err := m.MechanismList(uint64(slot))
	if err != nil {
		return c.rvOf(err)
	}
	if v32 == 0 {
		// A caller of the 2.40 or 3.0 interface is not shown the 3.2
		// mechanisms: it has no C_EncapsulateKey, and clients built on
		// older headers fail on values they cannot name (PyKCS11 1.5's
		// getMechanismList raises KeyError).
		old := mechs[:0:0]
		for _, mt := range mechs {
			if !ck.Mechanism32(mt) {
				old = append(old, mt)
			}
		}
		mechs = old
	}
	return ulongsOut(pList, pCount, mechs)
}

//export goGetMechanismInfo
func goGetMechanismInfo(slot C.CK_SLOT_ID, typ C.CK_MECHANISM_TYPE, p *C.CK_MECHANISM_INFO) (rv C.CK_RV) {
	c := enter("C_GetMechanismInfo")
	defer c.leave(&rv)
	m := c.m
	c.slot(slot)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	if p == nil {
		return rvArgumentsBad
	}
	mi, err := m.MechanismInfo(uint64(slot), uint64(typ))
	if err != nil {
		return c.rvOf(err)
	}
	p.ulMinKeySize = C.CK_ULONG(mi.MinKeySize)
	p.ulMaxKeySize = C.CK_ULONG(mi.MaxKeySize)
	p.flags = C.CK_FLAGS(mi.Flags)
	return rvOK
}

//export goInitToken
func goInitToken(slot C.CK_SLOT_ID, pPin *C.CK_UTF8CHAR, pinLen C.CK_ULONG, pLabel *C.CK_UTF8CHAR) (rv C.CK_RV) {
	c := enter("C_InitToken")
	defer c.leave(&rv)
	m := c.m
	c.slot(slot)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	pin, ok := bytesView((*C.CK_BYTE)(pPin), pinLen)
	if !ok || pLabel == nil {
		return rvArgumentsBad
	}
	return c.rvOf(m.InitToken(uint64(slot), pin, labelOf(pLabel)))
}

// goWaitForSlotEvent is C_WaitForSlotEvent. Slots never appear, disappear
// or change tokens while the module is loaded: a poll (CKF_DONT_BLOCK)
// answers CKR_NO_EVENT, and a blocking wait, which could never return, is
// CKR_FUNCTION_NOT_SUPPORTED (SoftHSMv2 answers both that way). pSlot is
// not written.
//
//export goWaitForSlotEvent
func goWaitForSlotEvent(flags C.CK_FLAGS, pSlot *C.CK_SLOT_ID, pReserved unsafe.Pointer) (rv C.CK_RV) {
	c := enter("C_WaitForSlotEvent")
	defer c.leave(&rv)
	m := c.m
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	if pReserved != nil {
		return rvArgumentsBad
	}
	if flags&C.CKF_DONT_BLOCK == 0 {
		return rvNotSupported
	}
	return C.CKR_NO_EVENT
}

// goUnsupported serves the entry points this module does not implement
// (C_GetOperationState, C_WrapKey, the 3.0 message functions...).
//
//export goUnsupported
func goUnsupported() (rv C.CK_RV) {
	c := enter("C_Unsupported")
	defer c.leave(&rv)
	m := c.m
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	return rvNotSupported
}

// goNotParallel serves the legacy C_GetFunctionStatus and C_CancelFunction,
// which the standard answers with CKR_FUNCTION_NOT_PARALLEL.
//
//export goNotParallel
func goNotParallel() (rv C.CK_RV) {
	c := enter("C_NotParallel")
	defer c.leave(&rv)
	m := c.m
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	return C.CKR_FUNCTION_NOT_PARALLEL
}
