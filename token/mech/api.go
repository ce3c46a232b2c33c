package mech

// CKMechanism is a CK_MECHANISM with its parameter decoded by the C layer.
// A mechanism whose parameter holds no pointer gets its raw bytes in Param:
// CKM_DH_PKCS_DERIVE's parameter, the peer's public value, arrives there as
// is.
type CKMechanism struct {
	Type  uint64
	Param []byte             // raw parameter bytes for mechanisms without pointer parameters
	PSS   *PSSParams         // CKM_*RSA_PKCS_PSS: decoded CK_RSA_PKCS_PSS_PARAMS
	OAEP  *OAEPParams        // CKM_RSA_PKCS_OAEP: decoded CK_RSA_PKCS_OAEP_PARAMS
	ECDH  *ECDH1DeriveParams // CKM_ECDH1_DERIVE, CKM_ECDH1_COFACTOR_DERIVE
	EdDSA *EdDSAParams       // CKM_EDDSA with CK_EDDSA_PARAMS (nil: none given)
	// SignContext: CKM_ML_DSA, CKM_SLH_DSA and their CKM_HASH_* variants
	// with CK_SIGN_ADDITIONAL_CONTEXT or CK_HASH_SIGN_ADDITIONAL_CONTEXT
	// (nil: none given).
	SignContext *SignContextParams
	GCM         *GCMParams // CKM_AES_GCM: decoded CK_GCM_PARAMS
	// EncryptData: CKM_AES_ECB_ENCRYPT_DATA's (and the DES ones')
	// CK_KEY_DERIVATION_STRING_DATA (IV nil), CKM_AES_CBC_ENCRYPT_DATA's
	// CK_AES_CBC_ENCRYPT_DATA_PARAMS or CKM_DES(3)_CBC_ENCRYPT_DATA's
	// CK_DES_CBC_ENCRYPT_DATA_PARAMS.
	EncryptData *EncryptDataParams
	HKDF        *HKDFParams // CKM_HKDF_DERIVE, CKM_HKDF_DATA: decoded CK_HKDF_PARAMS
}

// HKDFParams is CK_HKDF_PARAMS with the salt and info copied.
type HKDFParams struct {
	Extract, Expand bool   // bExtract, bExpand
	PRF             uint64 // prfHashMechanism: a digest mechanism (CKM_SHA256 ...)
	SaltType        uint64 // ulSaltType: CKF_HKDF_SALT_NULL, _DATA or _KEY
	Salt            []byte // pSalt (nil when absent)
	SaltKey         uint64 // hSaltKey, for CKF_HKDF_SALT_KEY
	Info            []byte // pInfo (nil when absent)
}

// EncryptDataParams is the parameter of the key derivations by data
// encryption, with the data copied.
type EncryptDataParams struct {
	IV   []byte // the CBC IV (16 bytes for AES, 8 for DES); nil for ECB
	Data []byte
}

// GCMParams is CK_GCM_PARAMS with the IV and AAD copied. IVBits is the 3.0
// structure's ulIvBits; for the 2.40 structure (without it) the C layer
// sets 8·len(IV).
type GCMParams struct {
	IV, AAD         []byte
	IVBits, TagBits uint64
}

// EdDSAParams is CK_EDDSA_PARAMS with the context copied.
type EdDSAParams struct {
	PH      bool   // phFlag: the pre-hash variant (Ed25519ph)
	Context []byte // the context (nil when absent)
}

// SignContextParams is CK_SIGN_ADDITIONAL_CONTEXT, or
// CK_HASH_SIGN_ADDITIONAL_CONTEXT with its hash, with the context copied.
type SignContextParams struct {
	Hedge   uint64 // hedgeVariant: CKH_HEDGE_PREFERRED, _REQUIRED, CKH_DETERMINISTIC_REQUIRED
	Context []byte // pContext (nil when absent)
	// Hash is CK_HASH_SIGN_ADDITIONAL_CONTEXT's hash (CKM_HASH_ML_DSA,
	// CKM_HASH_SLH_DSA); HasHash tells that structure from the other.
	Hash    uint64
	HasHash bool
}

// ECDH1DeriveParams is CK_ECDH1_DERIVE_PARAMS with its data copied.
type ECDH1DeriveParams struct {
	KDF        uint64 // CKD_NULL, CKD_SHA*_KDF
	SharedData []byte // the KDF's shared info (nil when absent)
	PublicData []byte // the peer's point, raw or as a DER OCTET STRING
}

// PSSParams is CK_RSA_PKCS_PSS_PARAMS.
type PSSParams struct {
	Hash, MGF, SaltLen uint64
}

// OAEPParams is CK_RSA_PKCS_OAEP_PARAMS with the source data copied.
type OAEPParams struct {
	Hash, MGF, Source uint64
	SourceData        []byte
}

// Info is CK_MECHANISM_INFO.
type Info struct {
	MinKeySize, MaxKeySize, Flags uint64
}
