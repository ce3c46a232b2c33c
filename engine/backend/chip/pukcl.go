package chip

import "fmt"

// Status is a PUKCL service return code (CryptoLib_Rc_pb.h, cited in
// research ENGINES.md §B.2): 0 is success, 0x8000|x a warning, 0xC000|x a
// severe error.
type Status uint16

// PUKCL return codes the pukcc simulator produces.
const (
	StatusOK                 Status = 0x0000
	StatusPointAtInfinity    Status = 0x8001 // warning: the result is the point at infinity
	StatusWrongSignature     Status = 0x8002 // warning: ECDSA signature does not verify
	StatusPointIsNotOnCurve  Status = 0x8004 // warning: input point is not on the curve
	StatusParamWrongLength   Status = 0xC014 // severe: an operand length is outside the service's limits
	StatusMalformedModulus   Status = 0xC102 // severe: even, zero or too short modulus
	StatusFaultDetected      Status = 0xC103 // severe: the hardware detected a fault
	StatusParamInvalidOption Status = 0xC015 // severe: unsupported option (window, curve)
)

var statusNames = map[Status]string{
	StatusOK:                 "PUKCL_OK",
	StatusPointAtInfinity:    "PUKCL_POINT_AT_INFINITY",
	StatusWrongSignature:     "PUKCL_WRONG_SIGNATURE",
	StatusPointIsNotOnCurve:  "PUKCL_POINT_IS_NOT_ON_CURVE",
	StatusParamWrongLength:   "PUKCL_PARAM_WRONG_LENGTH",
	StatusMalformedModulus:   "PUKCL_MALFORMED_MODULUS",
	StatusFaultDetected:      "PUKCL_FAULT_DETECTED",
	StatusParamInvalidOption: "PUKCL_PARAM_INVALID_OPTION",
}

// String returns the PUKCL_ name of the code.
func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("PUKCL_0x%04X", uint16(s))
}

// Severe reports whether the code is a severe error (0xC000 class).
func (s Status) Severe() bool { return s&0xC000 == 0xC000 }

// StatusError is a failed pukcc service call. It wraps the engine sentinel
// that classifies it (engine.ErrOperandTooLarge for PARAM_WRONG_LENGTH, ...),
// if any.
type StatusError struct {
	Service string // PUKCL service: "ExpMod", "CRT", "ZpEccMulFast", "ZpEcDsaQuickVerify", ...
	Status  Status
	Detail  string
	Err     error
}

// Error describes the failure with its PUKCL code.
func (e *StatusError) Error() string {
	s := fmt.Sprintf("chip: pukcc: %s: %s (0x%04X): %s", e.Service, e.Status, uint16(e.Status), e.Detail)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the classifying sentinel.
func (e *StatusError) Unwrap() error { return e.Err }
