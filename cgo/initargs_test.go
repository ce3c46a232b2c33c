//go:build modexp_testhooks

package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// initCase is one row of the C_Initialize argument table.
type initCase struct {
	name     string
	present  bool
	mask     int // callbacks supplied: 1 create, 2 destroy, 4 lock, 8 unlock
	flags    uint64
	reserved bool
	want     ck.Error // CKR_OK for success
}

// initCases is the standard's table (PKCS#11 3.0 §5.4 / 2.40 §5.4 "Summary
// of mutex flags and functions") plus the argument errors, read for a
// library that always uses OS locking and cannot use the application's
// callbacks.
func initCases() []initCase {
	cases := []initCase{
		{name: "NULL_PTR", present: false, want: ck.CKR_OK},
		{name: "case 1: no flag, no callbacks", present: true, want: ck.CKR_OK},
		{name: "case 2: no flag, all callbacks", present: true, mask: 15, want: ck.CKR_CANT_LOCK},
		{name: "case 3: OS_LOCKING_OK, no callbacks", present: true, flags: ck.CKF_OS_LOCKING_OK, want: ck.CKR_OK},
		{name: "case 4: OS_LOCKING_OK, all callbacks", present: true, mask: 15, flags: ck.CKF_OS_LOCKING_OK, want: ck.CKR_OK},
		{name: "pReserved set", present: true, reserved: true, want: ck.CKR_ARGUMENTS_BAD},
		{name: "pReserved set with OS_LOCKING_OK", present: true, flags: ck.CKF_OS_LOCKING_OK, reserved: true, want: ck.CKR_ARGUMENTS_BAD},
		// GnuTLS's flags: accepted (see checkInitArgs).
		{name: "cannot create threads", present: true, flags: ck.CKF_LIBRARY_CANT_CREATE_OS_THREADS, want: ck.CKR_OK},
		{name: "GnuTLS: cannot create threads, OS_LOCKING_OK", present: true,
			flags: ck.CKF_LIBRARY_CANT_CREATE_OS_THREADS | ck.CKF_OS_LOCKING_OK, want: ck.CKR_OK},
		{name: "cannot create threads, callbacks, no OS_LOCKING_OK", present: true, mask: 15,
			flags: ck.CKF_LIBRARY_CANT_CREATE_OS_THREADS, want: ck.CKR_CANT_LOCK},
	}
	// Every partial set of callbacks, with and without the flag.
	for mask := 1; mask < 15; mask++ {
		for _, flags := range []uint64{0, ck.CKF_OS_LOCKING_OK} {
			cases = append(cases, initCase{
				name:    fmt.Sprintf("partial callbacks %04b flags %#x", mask, flags),
				present: true, mask: mask, flags: flags, want: ck.CKR_ARGUMENTS_BAD,
			})
		}
	}
	return cases
}

func TestCheckInitArgs(t *testing.T) {
	for _, c := range initCases() {
		t.Run(c.name, func(t *testing.T) {
			a := initArgs{present: c.present, createMutex: c.mask&1 != 0, destroyMutex: c.mask&2 != 0,
				lockMutex: c.mask&4 != 0, unlockMutex: c.mask&8 != 0, flags: c.flags, reserved: c.reserved}
			err := checkInitArgs(a)
			if c.want == ck.CKR_OK {
				if err != nil {
					t.Fatalf("checkInitArgs = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("checkInitArgs = %v, want %v", err, c.want)
			}
		})
	}
}

// TestInitializeArgs drives the same table through the real C_Initialize.
func TestInitializeArgs(t *testing.T) {
	useTempConfig(t)
	for _, c := range initCases() {
		t.Run(c.name, func(t *testing.T) {
			got := tsInitialize(c.present, c.mask, c.flags, c.reserved)
			if got == uint64(ck.CKR_OK) {
				if rv := tsFinalize(false); rv != 0 {
					t.Errorf("C_Finalize = %v", ck.Error(rv))
				}
			}
			if got != uint64(c.want) {
				t.Fatalf("C_Initialize = %v, want %v", ck.Error(got), c.want)
			}
		})
	}
}
