package token

import (
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/mech"
)

// This file is the contract between the C layer (cgo/) and the token: the
// Go-typed form of every PKCS#11 call. cgo/ marshals C structs into these
// types and back and applies nothing of PKCS#11 semantics; everything else
// (state rules, policy, lengths) is decided here.
//
// Conventions:
//   - Every method is safe for concurrent use.
//   - Errors carry their CK_RV as a ck.Error somewhere in the chain (use
//     ck.Errorf); ck.RV maps them. A nil error is CKR_OK.
//   - Attribute values are the raw bytes the C caller passes: CK_ULONG as 8
//     bytes in native (little-endian on amd64) order, CK_BBOOL as 1 byte.
//   - Output buffers follow the two-call convention through Out: the method
//     returns need (the length the full output takes). If out.Query (NULL
//     output pointer) it returns need and a nil error with data nil; if
//     out.Cap < need it returns need and CKR_BUFFER_TOO_SMALL. In both cases
//     the operation stays active (the token may compute the result once and
//     keep it for the repeated call). Otherwise data (len == need) is the
//     output and the operation ends as the standard says.

// Out describes the caller's output buffer.
type Out struct {
	Query bool // output pointer was NULL: report the length only
	Cap   int  // bytes available in the caller's buffer
	// Buf, when not nil, is the caller's buffer itself (len(Buf) == Cap):
	// the bulk ciphers (C_Encrypt, C_Decrypt, C_EncryptUpdate,
	// C_DecryptUpdate) may write their output there directly and return
	// it as data, a prefix of Buf, instead of a copy to be made. On an
	// error Buf holds no output (a failed decryption leaves no plaintext).
	Buf []byte
}

// AttributeResult is one answer of GetAttributeValue.
type AttributeResult struct {
	Value []byte // the value, when Err == 0
	// Err is 0, CKR_ATTRIBUTE_SENSITIVE or CKR_ATTRIBUTE_TYPE_INVALID; the C
	// layer then writes CK_UNAVAILABLE_INFORMATION into that length.
	Err uint64
}

// Version is a CK_VERSION.
type Version struct{ Major, Minor byte }

// ModuleInfo is CK_INFO (strings unpadded; the C layer pads with spaces).
type ModuleInfo struct {
	CryptokiVersion    Version
	ManufacturerID     string
	LibraryDescription string
	LibraryVersion     Version
}

// SlotInfo is CK_SLOT_INFO.
type SlotInfo struct {
	Description, ManufacturerID string
	Flags                       uint64
	HardwareVersion             Version
	FirmwareVersion             Version
}

// TokenInfo is CK_TOKEN_INFO. Counts use ck.CK_UNAVAILABLE_INFORMATION or
// CK_EFFECTIVELY_INFINITE (0) where the standard allows.
type TokenInfo struct {
	Label, ManufacturerID, Model, SerialNumber string
	Flags                                      uint64
	MaxSessionCount, SessionCount              uint64
	MaxRwSessionCount, RwSessionCount          uint64
	MaxPinLen, MinPinLen                       uint64
	TotalPublicMemory, FreePublicMemory        uint64
	TotalPrivateMemory, FreePrivateMemory      uint64
	HardwareVersion, FirmwareVersion           Version
	UTCTime                                    string // 16 chars, or "" if no clock
}

// SessionInfo is CK_SESSION_INFO.
type SessionInfo struct {
	SlotID, State, Flags, DeviceError uint64
}

// The types of the PKCS#11 API that the mechanism library (token/mech)
// or the attribute model (token/attr) defines, under the names the C
// layer uses.
type (
	// Attribute is a CK_ATTRIBUTE (attr.Attribute).
	Attribute = attr.Attribute
	// Mechanism is a CK_MECHANISM with its decoded parameter
	// (mech.CKMechanism).
	Mechanism = mech.CKMechanism
	// MechanismInfo is a CK_MECHANISM_INFO (mech.Info).
	MechanismInfo = mech.Info
	// HKDFParams is CK_HKDF_PARAMS (mech.HKDFParams).
	HKDFParams = mech.HKDFParams
	// EncryptDataParams is a CK_*_CBC_ENCRYPT_DATA_PARAMS (mech.EncryptDataParams).
	EncryptDataParams = mech.EncryptDataParams
	// GCMParams is CK_GCM_PARAMS (mech.GCMParams).
	GCMParams = mech.GCMParams
	// EdDSAParams is CK_EDDSA_PARAMS (mech.EdDSAParams).
	EdDSAParams = mech.EdDSAParams
	// SignContextParams is CK_SIGN_ADDITIONAL_CONTEXT and its hash form
	// (mech.SignContextParams).
	SignContextParams = mech.SignContextParams
	// ECDH1DeriveParams is CK_ECDH1_DERIVE_PARAMS (mech.ECDH1DeriveParams).
	ECDH1DeriveParams = mech.ECDH1DeriveParams
	// PSSParams is CK_RSA_PKCS_PSS_PARAMS (mech.PSSParams).
	PSSParams = mech.PSSParams
	// OAEPParams is CK_RSA_PKCS_OAEP_PARAMS (mech.OAEPParams).
	OAEPParams = mech.OAEPParams
	// GCMMessageParams is CK_GCM_MESSAGE_PARAMS (mech.GCMMessageParams).
	GCMMessageParams = mech.GCMMessageParams
	// MessageOut is what a message encryption hands back (mech.MessageOut).
	MessageOut = mech.MessageOut
)

// CipherInitCopiesParam reports whether C_EncryptInit and C_DecryptInit
// with mechanism typ copy whatever they keep of its parameter
// (mech.CopiesParam: the AES modes), so that the C layer may hand the
// parameter over as views of the caller's memory, valid for the call.
func CipherInitCopiesParam(typ uint64) bool { return mech.CopiesParam(typ) }

// ParsePrivateKeyInfo reads a PKCS#8 PrivateKeyInfo or OneAsymmetricKey
// as C_CreateObject would check it (mech.ParsePrivateKeyInfo): the key
// type, the private key's value attributes and the DER
// SubjectPublicKeyInfo of its public key.
func ParsePrivateKeyInfo(der []byte) (keyType uint64, priv []Attribute, spki []byte, err error) {
	return mech.ParsePrivateKeyInfo(der)
}
