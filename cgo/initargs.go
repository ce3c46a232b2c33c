package main

import "github.com/modexp-token/modexp-token/token/ck"

// initArgs is CK_C_INITIALIZE_ARGS reduced to what C_Initialize decides on.
type initArgs struct {
	present bool // pInitArgs was not NULL_PTR
	// The four mutex callbacks, each present or not.
	createMutex, destroyMutex, lockMutex, unlockMutex bool
	flags                                             uint64
	reserved                                          bool // pReserved was not NULL_PTR
}

// checkInitArgs applies the rules of C_Initialize (PKCS#11 3.0 §5.4,
// CK_C_INITIALIZE_ARGS and the table of mutex flags and functions) to what
// this module can do: it always locks with OS primitives (Go's sync) and
// cannot use the application's mutex callbacks.
//
//   - pReserved not NULL_PTR: CKR_ARGUMENTS_BAD.
//   - Some but not all four callbacks supplied: CKR_ARGUMENTS_BAD.
//   - CKF_LIBRARY_CANT_CREATE_OS_THREADS is accepted. Strictly, the Go
//     runtime does start OS threads of its own, and the standard would have
//     us answer CKR_NEED_TO_CREATE_THREADS; but GnuTLS passes this flag (with
//     CKF_OS_LOCKING_OK) on every C_Initialize, so refusing it would shut out
//     every GnuTLS program (p11tool, certtool, gnutls-cli). The module never
//     asks the application to create threads and never calls back into it.
//   - Table, case by case:
//     1. no CKF_OS_LOCKING_OK, no callbacks: the application promises not to
//     call concurrently; we lock anyway: CKR_OK.
//     2. no CKF_OS_LOCKING_OK, callbacks: the library must use the callbacks;
//     we cannot: CKR_CANT_LOCK.
//     3. CKF_OS_LOCKING_OK, no callbacks: the library must use OS locking:
//     CKR_OK.
//     4. CKF_OS_LOCKING_OK, callbacks: either may be used; we use OS
//     locking: CKR_OK.
func checkInitArgs(a initArgs) error {
	if !a.present {
		return nil // NULL_PTR: as case 1
	}
	if a.reserved {
		return ck.Errorf(ck.CKR_ARGUMENTS_BAD, "C_Initialize: pReserved is not NULL_PTR")
	}
	n := 0
	for _, set := range []bool{a.createMutex, a.destroyMutex, a.lockMutex, a.unlockMutex} {
		if set {
			n++
		}
	}
	if n != 0 && n != 4 {
		return ck.Errorf(ck.CKR_ARGUMENTS_BAD, "C_Initialize: %d of the 4 mutex functions supplied", n)
	}
	if n == 4 && a.flags&ck.CKF_OS_LOCKING_OK == 0 {
		return ck.Errorf(ck.CKR_CANT_LOCK, "C_Initialize: application mutex callbacks without CKF_OS_LOCKING_OK")
	}
	return nil
}
