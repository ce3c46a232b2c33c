// Package ck holds the PKCS#11 vocabulary in pure Go: the constants of the
// standard (generated from p11-kit's pkcs11.h), the few 3.0 additions the
// 2.40 header lacks, and Error, the CK_RV carried as a Go error.
//
// It exists so that the token can speak PKCS#11 without cgo and without
// importing a PKCS#11 client library. It must never import "C".
package ck

//go:generate sh -c "go run ./internal/gen /usr/include/p11-kit-1/p11-kit/pkcs11.h | gofmt > const.go"

import (
	"errors"
	"fmt"
)

// PKCS#11 3.0 values absent from the 2.40 header.
const (
	CKR_OPERATION_CANCEL_FAILED Error = 0x202
	CKF_INTERFACE_FORK_SAFE           = 0x1
)

// Error is a PKCS#11 return value (CK_RV) used as a Go error. CKR_OK is never
// returned as an Error: success is a nil error.
type Error uint64

// Error returns the CKR_ name of the code.
func (e Error) Error() string {
	return Name("CKR_", uint64(e))
}

// RV maps any error to the CK_RV the C layer returns: nil is CKR_OK, an
// Error anywhere in the chain is itself, anything else CKR_GENERAL_ERROR.
func RV(err error) uint64 {
	if err == nil {
		return uint64(CKR_OK)
	}
	var e Error
	if errors.As(err, &e) {
		return uint64(e)
	}
	return uint64(CKR_GENERAL_ERROR)
}

// Errorf wraps a formatted message around code, so the CK_RV survives
// while the log keeps the context.
func Errorf(code Error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", code, fmt.Sprintf(format, args...))
}

// ULong encodes v as a CK_ULONG attribute value (8 bytes, little-endian, as
// on the 64-bit platforms the module is built for).
func ULong(v uint64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return b
}

// Bool encodes v as a CK_BBOOL attribute value.
func Bool(v bool) []byte {
	if v {
		return []byte{1}
	}
	return []byte{0}
}

// ParseULong decodes a CK_ULONG attribute value; ok is false unless b has
// exactly 8 bytes.
func ParseULong(b []byte) (v uint64, ok bool) {
	if len(b) != 8 {
		return 0, false
	}
	for i := range b {
		v |= uint64(b[i]) << (8 * i)
	}
	return v, true
}

// Name returns the constant's name for v within a family named by its
// prefix ("CKR_", "CKM_", "CKA_", "CKK_", "CKO_", "CKC_", "CKU_", "CKS_"),
// or prefix followed by the value in hex when v has no name.
func Name(prefix string, v uint64) string {
	if n, ok := names[prefix][v]; ok {
		return n
	}
	return fmt.Sprintf("%s0x%X", prefix, v)
}
