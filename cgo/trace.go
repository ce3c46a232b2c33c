package main

// Per-call debug records. When the module logs at debug level
// (MODEXP_TOKEN_LOG_LEVEL=debug with a log), every export that reaches the
// module leaves one record: the function, its session, slot, object and
// mechanism where it has them, the duration, the return value and, for a
// refusal, the reason the token gave (the ck.Error chain, e.g.
// "CKA_MODULUS: must be odd"). Nothing else: no template value, PIN,
// data, signature or key byte is ever put in a record.
//
// When debug logging is off a call pays for two words on its stack and a
// branch per note: no clock read, no allocation (BenchmarkCallOverhead).

/*
#include "pkcs11_3.h"
*/
import "C"

import (
	"time"

	"github.com/modexp-token/modexp-token/engine/cores"
	"github.com/modexp-token/modexp-token/token"
)

// call is one export in progress: the module (nil before C_Initialize) and,
// when the module traces calls, the debug record being built (nil
// otherwise: two words on the stack).
type call struct {
	m   *token.Module
	rec *token.CallRecord
}

// enter takes the read lock for one call of the C function fn and returns
// the call. The caller defers c.leave right after. It counts the call in
// the module and lets GOMAXPROCS grow with the host threads there
// (cores.Enter): a C thread that
// finds no P free sleeps until one is handed to it, two thread switches
// a call (RSA-2048 with 8 signing threads on 2 cores: 1.25 CPUs used of 2
// at GOMAXPROCS 2, 1.55 at 4, docs/PERFORMANCE.md).
func enter(fn string) call {
	cores.Enter()
	state.mu.RLock()
	c := call{m: state.mod}
	if c.m != nil && c.m.TracingCalls() {
		c.rec = &token.CallRecord{Function: fn, Start: time.Now()}
	}
	return c
}

// leave recovers a panic of the export into CKR_GENERAL_ERROR, logs the
// call record and releases the read lock taken by enter. It must be
// deferred directly.
func (c *call) leave(rv *C.CK_RV) {
	if r := recover(); r != nil {
		logPanic(r)
		*rv = rvGeneralError
	}
	if c.rec != nil {
		c.rec.Duration = time.Since(c.rec.Start)
		c.rec.RV = uint64(*rv)
		c.m.LogCall(c.rec)
	}
	state.mu.RUnlock()
	cores.Leave()
}

// session, slot, object and mech add to the record (no-ops when off).
func (c *call) session(h C.CK_SESSION_HANDLE) {
	if c.rec != nil {
		c.rec.Session, c.rec.HasSession = uint64(h), true
	}
}

func (c *call) slot(id C.CK_SLOT_ID) {
	if c.rec != nil {
		c.rec.Slot, c.rec.HasSlot = uint64(id), true
	}
}

func (c *call) object(h C.CK_OBJECT_HANDLE) {
	if c.rec != nil {
		c.rec.Objects = append(c.rec.Objects, uint64(h))
	}
}

func (c *call) mech(m *token.Mechanism) {
	if c.rec != nil && m != nil {
		c.rec.Mechanism, c.rec.HasMechanism = m.Type, true
	}
}

// rvOf maps a token error to its CK_RV and keeps the error as the reason.
func (c *call) rvOf(err error) C.CK_RV {
	if c.rec != nil && err != nil {
		c.rec.Err = err
	}
	return rvOf(err)
}

// note keeps err as the reason and returns it.
func (c *call) note(err error) error {
	if c.rec != nil && err != nil {
		c.rec.Err = err
	}
	return err
}
