// Command cgo is the C ABI of ModExp Token: built with -buildmode=c-shared it
// becomes libmodexp-pkcs11.so, a PKCS#11 module offering the "PKCS 11"
// interface in versions 3.0 and 2.40.
//
// # What lives here
//
// entry.c holds the static function lists, C_GetFunctionList,
// C_GetInterfaceList, C_GetInterface and one small C wrapper per entry
// point. Each wrapper first asks whether it runs in a forked child (see
// below) and otherwise calls one Go export (goSign for C_Sign...). The Go
// exports marshal C structs into the types of package token and back:
//
//   - NULL pointers where the standard requires a pointer, and lengths that
//     cannot be right, are CKR_ARGUMENTS_BAD;
//   - every output buffer follows the two-call convention through token.Out;
//   - C_GetAttributeValue answers per attribute (length query,
//     CK_UNAVAILABLE_INFORMATION on a short buffer, a sensitive or an
//     unknown attribute);
//   - mechanism parameters with pointers (CK_RSA_PKCS_PSS_PARAMS,
//     CK_RSA_PKCS_OAEP_PARAMS) are decoded and copied;
//   - strings are blank-padded, never NUL-terminated.
//
// Nothing of PKCS#11 semantics (session states, policy, key rules) is decided
// here: that is package token's job, reached through *token.Module.
//
// # Concurrency, lifetime, panics
//
// One *token.Module lives between C_Initialize and C_Finalize, guarded by a
// sync.RWMutex: calls hold the read lock for their whole duration, so
// C_Finalize (write lock) waits for calls in flight and resets every piece of
// state of this package. Go marks a c-shared library NODELETE, so dlclose
// keeps this state alive; Finalize → dlclose → dlopen → Initialize therefore
// works. The module is used with OS locking whatever the caller passes in
// CK_C_INITIALIZE_ARGS (see checkInitArgs). Every export recovers panics into
// CKR_GENERAL_ERROR: a panic must never abort the host.
//
// Input byte buffers (data to sign, encrypt, digest...) are passed to the
// token as views of the caller's C memory, without copying; they are valid
// only during the call and the token must not keep them; PINs too, so that
// this layer leaves no copy of a secret on the Go heap. Attribute values,
// labels and mechanism parameters are copied.
//
// # Fork
//
// Go code cannot run in a child forked (without exec) from a process that
// loaded this module: it hangs on the first scheduler or GC interaction.
// fork.c's pthread_atfork child handler marks the child, and every entry
// point then forwards, in C and without entering this copy's Go, to the same
// function of a second copy of this library that fork.c loads in the child
// from an in-memory image of the library file (made at the parent's first
// fork): a whole Go runtime serving the same token in process. C_Initialize
// in the child loads and initialises it; a child that inherited an
// initialised module does so on its first call. When the copy cannot be
// made the child gets a clean error at once. The rules, limits and costs
// are in docs/FORK.md; noteInitialized below tells fork.c whether the
// parent was initialised.
//
// # Must never
//
// Print to stdout or stderr (stdout is the RPC pipe under p11-kit remote):
// the only output is log/slog to the file named by MODEXP_TOKEN_LOG (or the
// configuration's log), else warnings and errors to the system log
// (syslog.go).
package main

/*
#include "pkcs11_3.h"

void modexp_note_initialized(int initialized);
*/
import "C"

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// main is required by -buildmode=c-shared and never runs.
func main() {}

// state is everything this package keeps between calls. C_Finalize resets it
// to its zero value (apart from the mutex).
var state struct {
	mu  sync.RWMutex
	mod *token.Module // nil outside C_Initialize … C_Finalize
}

// logger receives panics and lifecycle failures; it discards everything
// unless MODEXP_TOKEN_LOG names a file when C_Initialize runs.
var (
	logger  atomic.Pointer[slog.Logger]
	logFile *os.File // guarded by state.mu (write lock)
)

// Return values used by this package, converted once.
const (
	rvOK                 = C.CK_RV(C.CKR_OK)
	rvArgumentsBad       = C.CK_RV(C.CKR_ARGUMENTS_BAD)
	rvGeneralError       = C.CK_RV(C.CKR_GENERAL_ERROR)
	rvNotInitialized     = C.CK_RV(C.CKR_CRYPTOKI_NOT_INITIALIZED)
	rvAlreadyInitialized = C.CK_RV(C.CKR_CRYPTOKI_ALREADY_INITIALIZED)
	rvBufferTooSmall     = C.CK_RV(C.CKR_BUFFER_TOO_SMALL)
	rvNotSupported       = C.CK_RV(C.CKR_FUNCTION_NOT_SUPPORTED)
	rvMechParamInvalid   = C.CK_RV(C.CKR_MECHANISM_PARAM_INVALID)
)

// maxLen bounds every length the caller passes (bytes or template entries);
// anything larger is a bad length (CKR_ARGUMENTS_BAD) rather than a slice we
// could not even address.
const maxLen = math.MaxInt32

func init() {
	logger.Store(slog.New(slog.DiscardHandler))
	token.FallbackLogHandler = newSyslogHandler()
}

// enter and leave (one call under the read lock, with its debug record)
// are in trace.go.

// recoverOnly is leave without the lock, for the exports that take the write
// lock themselves (C_Initialize, C_Finalize).
func recoverOnly(rv *C.CK_RV) {
	if r := recover(); r != nil {
		logPanic(r)
		*rv = rvGeneralError
	}
}

// loaded is called by every export after its deferred leave: it runs the test
// hook and reports CKR_CRYPTOKI_NOT_INITIALIZED for a nil module.
func loaded(m *token.Module) C.CK_RV {
	testHook()
	if m == nil {
		return rvNotInitialized
	}
	return rvOK
}

func logPanic(r any) {
	logger.Load().Error("cgo: panic recovered, returning CKR_GENERAL_ERROR",
		"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
}

// rvOf maps a token error to its CK_RV (nil is CKR_OK).
func rvOf(err error) C.CK_RV { return C.CK_RV(ck.RV(err)) }

// openLog points logger at MODEXP_TOKEN_LOG (append mode), if set. Called
// with the write lock held.
func openLog() {
	path := os.Getenv("MODEXP_TOKEN_LOG")
	if path == "" {
		logger.Store(slog.New(newSyslogHandler()).With("component", "cgo"))
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		// Never stderr: the system log says why, C_Initialize then fails.
		l := slog.New(newSyslogHandler()).With("component", "cgo")
		l.Error("cannot open the log file named by MODEXP_TOKEN_LOG: fix the path or its directory's permissions, or unset it",
			"path", path, "err", err)
		logger.Store(l)
		return
	}
	logFile = f
	logger.Store(slog.New(slog.NewTextHandler(f, nil)).With("component", "cgo"))
}

// closeLog undoes openLog. Called with the write lock held.
func closeLog() {
	logger.Store(slog.New(slog.DiscardHandler))
	sysLog.reset()
	if logFile != nil {
		_ = logFile.Close()
		logFile = nil
	}
}

// noteInitialized tells entry.c whether the module is initialised, so that a
// forked child can answer C_Initialize without entering Go.
func noteInitialized(on bool) {
	if on {
		C.modexp_note_initialized(1)
	} else {
		C.modexp_note_initialized(0)
	}
}

// resetState returns the package to its state before C_Initialize. Called
// with the write lock held.
func resetState() {
	state.mod = nil
	noteInitialized(false)
	closeLog()
}
