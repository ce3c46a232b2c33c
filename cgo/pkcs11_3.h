/*
 * pkcs11_3.h: the PKCS#11 3.0 and 3.2 declarations that p11-kit's 2.40
 * header lacks (CK_INTERFACE, CK_FUNCTION_LIST_3_0 and CK_FUNCTION_LIST_3_2
 * with their function prototypes, CK_EDDSA_PARAMS, CK_HKDF_PARAMS, the 3.2
 * values, CK_SIGN_ADDITIONAL_CONTEXT), written from the OASIS PKCS#11 3.0
 * base and current mechanisms specifications and the PKCS #11 3.2
 * specification.
 *
 * Include this instead of <p11-kit-1/p11-kit/pkcs11.h>. p11-kit's header is
 * used in its default (compatibility) mode: only the CK_* names are used
 * here, never its lowercase helper macros.
 */
#ifndef MODEXP_PKCS11_3_H
#define MODEXP_PKCS11_3_H

#include <p11-kit-1/p11-kit/pkcs11.h>

/* Section 3.6 of the 3.0 base specification: interfaces. */
#ifndef CKF_INTERFACE_FORK_SAFE
#define CKF_INTERFACE_FORK_SAFE (0x00000001UL)
#endif

/* 3.0 return value absent from the 2.40 header. */
#ifndef CKR_OPERATION_CANCEL_FAILED
#define CKR_OPERATION_CANCEL_FAILED (0x00000202UL)
#endif

/* Section 2.3.6 of the 3.0 current mechanisms specification:
 * CKM_EDDSA's optional parameter. */
typedef struct CK_EDDSA_PARAMS {
	CK_BBOOL phFlag;
	CK_ULONG ulContextDataLen;
	CK_BYTE_PTR pContextData;
} CK_EDDSA_PARAMS;

/* The HKDF mechanisms of the 3.0 current mechanisms specification
 * (CKM_HKDF_*, CKK_HKDF, CK_HKDF_PARAMS and its salt types). */
#ifndef CKM_HKDF_DERIVE
#define CKM_HKDF_DERIVE (0x0000402aUL)
#define CKM_HKDF_DATA (0x0000402bUL)
#define CKM_HKDF_KEY_GEN (0x0000402cUL)
#define CKK_HKDF (0x00000042UL)
#define CKF_HKDF_SALT_NULL (0x00000001UL)
#define CKF_HKDF_SALT_DATA (0x00000002UL)
#define CKF_HKDF_SALT_KEY (0x00000004UL)
typedef struct CK_HKDF_PARAMS {
	CK_BBOOL bExtract;
	CK_BBOOL bExpand;
	CK_MECHANISM_TYPE prfHashMechanism;
	CK_ULONG ulSaltType;
	CK_BYTE_PTR pSalt;
	CK_ULONG ulSaltLen;
	CK_OBJECT_HANDLE hSaltKey;
	CK_BYTE_PTR pInfo;
	CK_ULONG ulInfoLen;
} CK_HKDF_PARAMS;
#endif

typedef struct CK_INTERFACE {
	CK_UTF8CHAR_PTR pInterfaceName;
	CK_VOID_PTR pFunctionList;
	CK_FLAGS flags;
} CK_INTERFACE;

typedef CK_INTERFACE *CK_INTERFACE_PTR;
typedef CK_INTERFACE_PTR *CK_INTERFACE_PTR_PTR;

/* The 3.0 entry points, declared with the same macro pattern as p11-kit's:
 * a CK_C_<name> pointer type and the prototype. */
#define MODEXP_DECLARE_3_0(name, args) \
	typedef CK_RV (*CK_##name) args; \
	CK_RV name args

MODEXP_DECLARE_3_0(C_GetInterfaceList,
	(CK_INTERFACE_PTR pInterfacesList, CK_ULONG_PTR pulCount));
MODEXP_DECLARE_3_0(C_GetInterface,
	(CK_UTF8CHAR_PTR pInterfaceName, CK_VERSION_PTR pVersion,
	 CK_INTERFACE_PTR_PTR ppInterface, CK_FLAGS flags));
MODEXP_DECLARE_3_0(C_LoginUser,
	(CK_SESSION_HANDLE hSession, CK_USER_TYPE userType,
	 CK_UTF8CHAR_PTR pPin, CK_ULONG ulPinLen,
	 CK_UTF8CHAR_PTR pUsername, CK_ULONG ulUsernameLen));
MODEXP_DECLARE_3_0(C_SessionCancel,
	(CK_SESSION_HANDLE hSession, CK_FLAGS flags));
MODEXP_DECLARE_3_0(C_MessageEncryptInit,
	(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
	 CK_OBJECT_HANDLE hKey));
MODEXP_DECLARE_3_0(C_EncryptMessage,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
	 CK_ULONG ulParameterLen, CK_BYTE_PTR pAssociatedData,
	 CK_ULONG ulAssociatedDataLen, CK_BYTE_PTR pPlaintext,
	 CK_ULONG ulPlaintextLen, CK_BYTE_PTR pCiphertext,
	 CK_ULONG_PTR pulCiphertextLen));
MODEXP_DECLARE_3_0(C_EncryptMessageBegin,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
	 CK_ULONG ulParameterLen, CK_BYTE_PTR pAssociatedData,
	 CK_ULONG ulAssociatedDataLen));
MODEXP_DECLARE_3_0(C_EncryptMessageNext,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
	 CK_ULONG ulParameterLen, CK_BYTE_PTR pPlaintextPart,
	 CK_ULONG ulPlaintextPartLen, CK_BYTE_PTR pCiphertextPart,
	 CK_ULONG_PTR pulCiphertextPartLen, CK_FLAGS flags));
MODEXP_DECLARE_3_0(C_MessageEncryptFinal, (CK_SESSION_HANDLE hSession));
MODEXP_DECLARE_3_0(C_MessageDecryptInit,
	(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
	 CK_OBJECT_HANDLE hKey));
MODEXP_DECLARE_3_0(C_DecryptMessage,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
	 CK_ULONG ulParameterLen, CK_BYTE_PTR pAssociatedData,
	 CK_ULONG ulAssociatedDataLen, CK_BYTE_PTR pCiphertext,
	 CK_ULONG ulCiphertextLen, CK_BYTE_PTR pPlaintext,
	 CK_ULONG_PTR pulPlaintextLen));
MODEXP_DECLARE_3_0(C_DecryptMessageBegin,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
	 CK_ULONG ulParameterLen, CK_BYTE_PTR pAssociatedData,
	 CK_ULONG ulAssociatedDataLen));
MODEXP_DECLARE_3_0(C_DecryptMessageNext,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
	 CK_ULONG ulParameterLen, CK_BYTE_PTR pCiphertextPart,
	 CK_ULONG ulCiphertextPartLen, CK_BYTE_PTR pPlaintextPart,
	 CK_ULONG_PTR pulPlaintextPartLen, CK_FLAGS flags));
MODEXP_DECLARE_3_0(C_MessageDecryptFinal, (CK_SESSION_HANDLE hSession));
MODEXP_DECLARE_3_0(C_MessageSignInit,
	(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
	 CK_OBJECT_HANDLE hKey));
MODEXP_DECLARE_3_0(C_SignMessage,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
	 CK_ULONG ulParameterLen, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
	 CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen));
MODEXP_DECLARE_3_0(C_SignMessageBegin,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
	 CK_ULONG ulParameterLen));
MODEXP_DECLARE_3_0(C_SignMessageNext,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
	 CK_ULONG ulParameterLen, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
	 CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen));
MODEXP_DECLARE_3_0(C_MessageSignFinal, (CK_SESSION_HANDLE hSession));
MODEXP_DECLARE_3_0(C_MessageVerifyInit,
	(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
	 CK_OBJECT_HANDLE hKey));
MODEXP_DECLARE_3_0(C_VerifyMessage,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
	 CK_ULONG ulParameterLen, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
	 CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen));
MODEXP_DECLARE_3_0(C_VerifyMessageBegin,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
	 CK_ULONG ulParameterLen));
MODEXP_DECLARE_3_0(C_VerifyMessageNext,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
	 CK_ULONG ulParameterLen, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
	 CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen));
MODEXP_DECLARE_3_0(C_MessageVerifyFinal, (CK_SESSION_HANDLE hSession));

/* CK_FUNCTION_LIST_3_0: the 2.40 list, same order, then the 3.0 additions. */
typedef struct CK_FUNCTION_LIST_3_0 {
	CK_VERSION version;
	CK_C_Initialize C_Initialize;
	CK_C_Finalize C_Finalize;
	CK_C_GetInfo C_GetInfo;
	CK_C_GetFunctionList C_GetFunctionList;
	CK_C_GetSlotList C_GetSlotList;
	CK_C_GetSlotInfo C_GetSlotInfo;
	CK_C_GetTokenInfo C_GetTokenInfo;
	CK_C_GetMechanismList C_GetMechanismList;
	CK_C_GetMechanismInfo C_GetMechanismInfo;
	CK_C_InitToken C_InitToken;
	CK_C_InitPIN C_InitPIN;
	CK_C_SetPIN C_SetPIN;
	CK_C_OpenSession C_OpenSession;
	CK_C_CloseSession C_CloseSession;
	CK_C_CloseAllSessions C_CloseAllSessions;
	CK_C_GetSessionInfo C_GetSessionInfo;
	CK_C_GetOperationState C_GetOperationState;
	CK_C_SetOperationState C_SetOperationState;
	CK_C_Login C_Login;
	CK_C_Logout C_Logout;
	CK_C_CreateObject C_CreateObject;
	CK_C_CopyObject C_CopyObject;
	CK_C_DestroyObject C_DestroyObject;
	CK_C_GetObjectSize C_GetObjectSize;
	CK_C_GetAttributeValue C_GetAttributeValue;
	CK_C_SetAttributeValue C_SetAttributeValue;
	CK_C_FindObjectsInit C_FindObjectsInit;
	CK_C_FindObjects C_FindObjects;
	CK_C_FindObjectsFinal C_FindObjectsFinal;
	CK_C_EncryptInit C_EncryptInit;
	CK_C_Encrypt C_Encrypt;
	CK_C_EncryptUpdate C_EncryptUpdate;
	CK_C_EncryptFinal C_EncryptFinal;
	CK_C_DecryptInit C_DecryptInit;
	CK_C_Decrypt C_Decrypt;
	CK_C_DecryptUpdate C_DecryptUpdate;
	CK_C_DecryptFinal C_DecryptFinal;
	CK_C_DigestInit C_DigestInit;
	CK_C_Digest C_Digest;
	CK_C_DigestUpdate C_DigestUpdate;
	CK_C_DigestKey C_DigestKey;
	CK_C_DigestFinal C_DigestFinal;
	CK_C_SignInit C_SignInit;
	CK_C_Sign C_Sign;
	CK_C_SignUpdate C_SignUpdate;
	CK_C_SignFinal C_SignFinal;
	CK_C_SignRecoverInit C_SignRecoverInit;
	CK_C_SignRecover C_SignRecover;
	CK_C_VerifyInit C_VerifyInit;
	CK_C_Verify C_Verify;
	CK_C_VerifyUpdate C_VerifyUpdate;
	CK_C_VerifyFinal C_VerifyFinal;
	CK_C_VerifyRecoverInit C_VerifyRecoverInit;
	CK_C_VerifyRecover C_VerifyRecover;
	CK_C_DigestEncryptUpdate C_DigestEncryptUpdate;
	CK_C_DecryptDigestUpdate C_DecryptDigestUpdate;
	CK_C_SignEncryptUpdate C_SignEncryptUpdate;
	CK_C_DecryptVerifyUpdate C_DecryptVerifyUpdate;
	CK_C_GenerateKey C_GenerateKey;
	CK_C_GenerateKeyPair C_GenerateKeyPair;
	CK_C_WrapKey C_WrapKey;
	CK_C_UnwrapKey C_UnwrapKey;
	CK_C_DeriveKey C_DeriveKey;
	CK_C_SeedRandom C_SeedRandom;
	CK_C_GenerateRandom C_GenerateRandom;
	CK_C_GetFunctionStatus C_GetFunctionStatus;
	CK_C_CancelFunction C_CancelFunction;
	CK_C_WaitForSlotEvent C_WaitForSlotEvent;
	CK_C_GetInterfaceList C_GetInterfaceList;
	CK_C_GetInterface C_GetInterface;
	CK_C_LoginUser C_LoginUser;
	CK_C_SessionCancel C_SessionCancel;
	CK_C_MessageEncryptInit C_MessageEncryptInit;
	CK_C_EncryptMessage C_EncryptMessage;
	CK_C_EncryptMessageBegin C_EncryptMessageBegin;
	CK_C_EncryptMessageNext C_EncryptMessageNext;
	CK_C_MessageEncryptFinal C_MessageEncryptFinal;
	CK_C_MessageDecryptInit C_MessageDecryptInit;
	CK_C_DecryptMessage C_DecryptMessage;
	CK_C_DecryptMessageBegin C_DecryptMessageBegin;
	CK_C_DecryptMessageNext C_DecryptMessageNext;
	CK_C_MessageDecryptFinal C_MessageDecryptFinal;
	CK_C_MessageSignInit C_MessageSignInit;
	CK_C_SignMessage C_SignMessage;
	CK_C_SignMessageBegin C_SignMessageBegin;
	CK_C_SignMessageNext C_SignMessageNext;
	CK_C_MessageSignFinal C_MessageSignFinal;
	CK_C_MessageVerifyInit C_MessageVerifyInit;
	CK_C_VerifyMessage C_VerifyMessage;
	CK_C_VerifyMessageBegin C_VerifyMessageBegin;
	CK_C_VerifyMessageNext C_VerifyMessageNext;
	CK_C_MessageVerifyFinal C_MessageVerifyFinal;
} CK_FUNCTION_LIST_3_0;

typedef CK_FUNCTION_LIST_3_0 *CK_FUNCTION_LIST_3_0_PTR;
typedef CK_FUNCTION_LIST_3_0_PTR *CK_FUNCTION_LIST_3_0_PTR_PTR;

/* ------------------------------------------------------------------------
 * PKCS#11 3.0 values for the Montgomery curves (X25519, X448), absent from
 * the 2.40 header.
 * ---------------------------------------------------------------------- */
#ifndef CKK_EC_MONTGOMERY
#define CKK_EC_MONTGOMERY (0x00000041UL)
#endif
#ifndef CKM_EC_MONTGOMERY_KEY_PAIR_GEN
#define CKM_EC_MONTGOMERY_KEY_PAIR_GEN (0x00001056UL)
#endif

/* ------------------------------------------------------------------------
 * PKCS#11 3.2 (OASIS PKCS #11 Specification Version 3.2): the values, the
 * new types and structures, the twelve new functions and
 * CK_FUNCTION_LIST_3_2. token/ck/v32.go holds the same values for Go.
 * ---------------------------------------------------------------------- */
#ifndef CK_SP800_108_KEY_HANDLE
#define CK_SP800_108_KEY_HANDLE (0x00000005UL)
#endif
#ifndef CKA_HSS_LEVELS
#define CKA_HSS_LEVELS (0x00000617UL)
#endif
#ifndef CKA_HSS_LMS_TYPE
#define CKA_HSS_LMS_TYPE (0x00000618UL)
#endif
#ifndef CKA_HSS_LMOTS_TYPE
#define CKA_HSS_LMOTS_TYPE (0x00000619UL)
#endif
#ifndef CKA_HSS_LMS_TYPES
#define CKA_HSS_LMS_TYPES (0x0000061aUL)
#endif
#ifndef CKA_HSS_LMOTS_TYPES
#define CKA_HSS_LMOTS_TYPES (0x0000061bUL)
#endif
#ifndef CKA_HSS_KEYS_REMAINING
#define CKA_HSS_KEYS_REMAINING (0x0000061cUL)
#endif
#ifndef CKA_PARAMETER_SET
#define CKA_PARAMETER_SET (0x0000061dUL)
#endif
#ifndef CKA_OBJECT_VALIDATION_FLAGS
#define CKA_OBJECT_VALIDATION_FLAGS (0x0000061eUL)
#endif
#ifndef CKA_VALIDATION_TYPE
#define CKA_VALIDATION_TYPE (0x0000061fUL)
#endif
#ifndef CKA_VALIDATION_VERSION
#define CKA_VALIDATION_VERSION (0x00000620UL)
#endif
#ifndef CKA_VALIDATION_LEVEL
#define CKA_VALIDATION_LEVEL (0x00000621UL)
#endif
#ifndef CKA_VALIDATION_MODULE_ID
#define CKA_VALIDATION_MODULE_ID (0x00000622UL)
#endif
#ifndef CKA_VALIDATION_FLAG
#define CKA_VALIDATION_FLAG (0x00000623UL)
#endif
#ifndef CKA_VALIDATION_AUTHORITY_TYPE
#define CKA_VALIDATION_AUTHORITY_TYPE (0x00000624UL)
#endif
#ifndef CKA_VALIDATION_COUNTRY
#define CKA_VALIDATION_COUNTRY (0x00000625UL)
#endif
#ifndef CKA_VALIDATION_CERTIFICATE_IDENTIFIER
#define CKA_VALIDATION_CERTIFICATE_IDENTIFIER (0x00000626UL)
#endif
#ifndef CKA_VALIDATION_CERTIFICATE_URI
#define CKA_VALIDATION_CERTIFICATE_URI (0x00000627UL)
#endif
#ifndef CKA_VALIDATION_VENDOR_URI
#define CKA_VALIDATION_VENDOR_URI (0x00000628UL)
#endif
#ifndef CKA_VALIDATION_PROFILE
#define CKA_VALIDATION_PROFILE (0x00000629UL)
#endif
#ifndef CKA_ENCAPSULATE_TEMPLATE
#define CKA_ENCAPSULATE_TEMPLATE (0x0000062aUL)
#endif
#ifndef CKA_DECAPSULATE_TEMPLATE
#define CKA_DECAPSULATE_TEMPLATE (0x0000062bUL)
#endif
#ifndef CKA_TRUST_SERVER_AUTH
#define CKA_TRUST_SERVER_AUTH (0x0000062cUL)
#endif
#ifndef CKA_TRUST_CLIENT_AUTH
#define CKA_TRUST_CLIENT_AUTH (0x0000062dUL)
#endif
#ifndef CKA_TRUST_CODE_SIGNING
#define CKA_TRUST_CODE_SIGNING (0x0000062eUL)
#endif
#ifndef CKA_TRUST_EMAIL_PROTECTION
#define CKA_TRUST_EMAIL_PROTECTION (0x0000062fUL)
#endif
#ifndef CKA_TRUST_IPSEC_IKE
#define CKA_TRUST_IPSEC_IKE (0x00000630UL)
#endif
#ifndef CKA_TRUST_TIME_STAMPING
#define CKA_TRUST_TIME_STAMPING (0x00000631UL)
#endif
#ifndef CKA_TRUST_OCSP_SIGNING
#define CKA_TRUST_OCSP_SIGNING (0x00000632UL)
#endif
#ifndef CKA_ENCAPSULATE
#define CKA_ENCAPSULATE (0x00000633UL)
#endif
#ifndef CKA_DECAPSULATE
#define CKA_DECAPSULATE (0x00000634UL)
#endif
#ifndef CKA_HASH_OF_CERTIFICATE
#define CKA_HASH_OF_CERTIFICATE (0x00000635UL)
#endif
#ifndef CKA_PUBLIC_CRC64_VALUE
#define CKA_PUBLIC_CRC64_VALUE (0x00000636UL)
#endif
#ifndef CKA_SEED
#define CKA_SEED (0x00000637UL)
#endif
#ifndef CKF_ASYNC_SESSION
#define CKF_ASYNC_SESSION (0x00000008UL)
#endif
#ifndef CKF_SEED_RANDOM_REQUIRED
#define CKF_SEED_RANDOM_REQUIRED (0x02000000UL)
#endif
#ifndef CKF_ASYNC_SESSION_SUPPORTED
#define CKF_ASYNC_SESSION_SUPPORTED (0x04000000UL)
#endif
#ifndef CKF_ENCAPSULATE
#define CKF_ENCAPSULATE (0x10000000UL)
#endif
#ifndef CKF_DECAPSULATE
#define CKF_DECAPSULATE (0x20000000UL)
#endif
#ifndef CKG_GENERATE_COUNTER_XOR
#define CKG_GENERATE_COUNTER_XOR (0x00000004UL)
#endif
#ifndef CKH_HEDGE_PREFERRED
#define CKH_HEDGE_PREFERRED (0x00000000UL)
#endif
#ifndef CKH_HEDGE_REQUIRED
#define CKH_HEDGE_REQUIRED (0x00000001UL)
#endif
#ifndef CKH_DETERMINISTIC_REQUIRED
#define CKH_DETERMINISTIC_REQUIRED (0x00000002UL)
#endif
#ifndef CKK_HSS
#define CKK_HSS (0x00000046UL)
#endif
#ifndef CKK_XMSS
#define CKK_XMSS (0x00000047UL)
#endif
#ifndef CKK_XMSSMT
#define CKK_XMSSMT (0x00000048UL)
#endif
#ifndef CKK_ML_KEM
#define CKK_ML_KEM (0x00000049UL)
#endif
#ifndef CKK_ML_DSA
#define CKK_ML_DSA (0x0000004aUL)
#endif
#ifndef CKK_SLH_DSA
#define CKK_SLH_DSA (0x0000004bUL)
#endif
#ifndef CKM_ML_KEM_KEY_PAIR_GEN
#define CKM_ML_KEM_KEY_PAIR_GEN (0x0000000fUL)
#endif
#ifndef CKM_ML_KEM
#define CKM_ML_KEM (0x00000017UL)
#endif
#ifndef CKM_ML_DSA_KEY_PAIR_GEN
#define CKM_ML_DSA_KEY_PAIR_GEN (0x0000001cUL)
#endif
#ifndef CKM_ML_DSA
#define CKM_ML_DSA (0x0000001dUL)
#endif
#ifndef CKM_HASH_ML_DSA
#define CKM_HASH_ML_DSA (0x0000001fUL)
#endif
#ifndef CKM_HASH_ML_DSA_SHA224
#define CKM_HASH_ML_DSA_SHA224 (0x00000023UL)
#endif
#ifndef CKM_HASH_ML_DSA_SHA256
#define CKM_HASH_ML_DSA_SHA256 (0x00000024UL)
#endif
#ifndef CKM_HASH_ML_DSA_SHA384
#define CKM_HASH_ML_DSA_SHA384 (0x00000025UL)
#endif
#ifndef CKM_HASH_ML_DSA_SHA512
#define CKM_HASH_ML_DSA_SHA512 (0x00000026UL)
#endif
#ifndef CKM_HASH_ML_DSA_SHA3_224
#define CKM_HASH_ML_DSA_SHA3_224 (0x00000027UL)
#endif
#ifndef CKM_HASH_ML_DSA_SHA3_256
#define CKM_HASH_ML_DSA_SHA3_256 (0x00000028UL)
#endif
#ifndef CKM_HASH_ML_DSA_SHA3_384
#define CKM_HASH_ML_DSA_SHA3_384 (0x00000029UL)
#endif
#ifndef CKM_HASH_ML_DSA_SHA3_512
#define CKM_HASH_ML_DSA_SHA3_512 (0x0000002aUL)
#endif
#ifndef CKM_HASH_ML_DSA_SHAKE128
#define CKM_HASH_ML_DSA_SHAKE128 (0x0000002bUL)
#endif
#ifndef CKM_HASH_ML_DSA_SHAKE256
#define CKM_HASH_ML_DSA_SHAKE256 (0x0000002cUL)
#endif
#ifndef CKM_SLH_DSA_KEY_PAIR_GEN
#define CKM_SLH_DSA_KEY_PAIR_GEN (0x0000002dUL)
#endif
#ifndef CKM_SLH_DSA
#define CKM_SLH_DSA (0x0000002eUL)
#endif
#ifndef CKM_HASH_SLH_DSA
#define CKM_HASH_SLH_DSA (0x00000034UL)
#endif
#ifndef CKM_HASH_SLH_DSA_SHA224
#define CKM_HASH_SLH_DSA_SHA224 (0x00000036UL)
#endif
#ifndef CKM_HASH_SLH_DSA_SHA256
#define CKM_HASH_SLH_DSA_SHA256 (0x00000037UL)
#endif
#ifndef CKM_HASH_SLH_DSA_SHA384
#define CKM_HASH_SLH_DSA_SHA384 (0x00000038UL)
#endif
#ifndef CKM_HASH_SLH_DSA_SHA512
#define CKM_HASH_SLH_DSA_SHA512 (0x00000039UL)
#endif
#ifndef CKM_HASH_SLH_DSA_SHA3_224
#define CKM_HASH_SLH_DSA_SHA3_224 (0x0000003aUL)
#endif
#ifndef CKM_HASH_SLH_DSA_SHA3_256
#define CKM_HASH_SLH_DSA_SHA3_256 (0x0000003bUL)
#endif
#ifndef CKM_HASH_SLH_DSA_SHA3_384
#define CKM_HASH_SLH_DSA_SHA3_384 (0x0000003cUL)
#endif
#ifndef CKM_HASH_SLH_DSA_SHA3_512
#define CKM_HASH_SLH_DSA_SHA3_512 (0x0000003dUL)
#endif
#ifndef CKM_HASH_SLH_DSA_SHAKE128
#define CKM_HASH_SLH_DSA_SHAKE128 (0x0000003eUL)
#endif
#ifndef CKM_HASH_SLH_DSA_SHAKE256
#define CKM_HASH_SLH_DSA_SHAKE256 (0x0000003fUL)
#endif
#ifndef CKM_TLS12_EXTENDED_MASTER_KEY_DERIVE
#define CKM_TLS12_EXTENDED_MASTER_KEY_DERIVE (0x00000056UL)
#endif
#ifndef CKM_TLS12_EXTENDED_MASTER_KEY_DERIVE_DH
#define CKM_TLS12_EXTENDED_MASTER_KEY_DERIVE_DH (0x00000057UL)
#endif
#ifndef CKM_AES_KEY_WRAP_PKCS7
#define CKM_AES_KEY_WRAP_PKCS7 (0x0000210cUL)
#endif
#ifndef CKM_IKE2_PRF_PLUS_DERIVE
#define CKM_IKE2_PRF_PLUS_DERIVE (0x0000402eUL)
#endif
#ifndef CKM_IKE_PRF_DERIVE
#define CKM_IKE_PRF_DERIVE (0x0000402fUL)
#endif
#ifndef CKM_IKE1_PRF_DERIVE
#define CKM_IKE1_PRF_DERIVE (0x00004030UL)
#endif
#ifndef CKM_IKE1_EXTENDED_DERIVE
#define CKM_IKE1_EXTENDED_DERIVE (0x00004031UL)
#endif
#ifndef CKM_HSS_KEY_PAIR_GEN
#define CKM_HSS_KEY_PAIR_GEN (0x00004032UL)
#endif
#ifndef CKM_HSS
#define CKM_HSS (0x00004033UL)
#endif
#ifndef CKM_XMSS_KEY_PAIR_GEN
#define CKM_XMSS_KEY_PAIR_GEN (0x00004034UL)
#endif
#ifndef CKM_XMSSMT_KEY_PAIR_GEN
#define CKM_XMSSMT_KEY_PAIR_GEN (0x00004035UL)
#endif
#ifndef CKM_XMSS
#define CKM_XMSS (0x00004036UL)
#endif
#ifndef CKM_XMSSMT
#define CKM_XMSSMT (0x00004037UL)
#endif
#ifndef CKM_ECDH_X_AES_KEY_WRAP
#define CKM_ECDH_X_AES_KEY_WRAP (0x00004038UL)
#endif
#ifndef CKM_ECDH_COF_AES_KEY_WRAP
#define CKM_ECDH_COF_AES_KEY_WRAP (0x00004039UL)
#endif
#ifndef CKM_PUB_KEY_FROM_PRIV_KEY
#define CKM_PUB_KEY_FROM_PRIV_KEY (0x0000403aUL)
#endif
#ifndef CKO_VALIDATION
#define CKO_VALIDATION (0x0000000aUL)
#endif
#ifndef CKO_TRUST
#define CKO_TRUST (0x0000000bUL)
#endif
#ifndef CKP_ML_DSA_44
#define CKP_ML_DSA_44 (0x00000001UL)
#endif
#ifndef CKP_ML_KEM_512
#define CKP_ML_KEM_512 (0x00000001UL)
#endif
#ifndef CKP_SLH_DSA_SHA2_128S
#define CKP_SLH_DSA_SHA2_128S (0x00000001UL)
#endif
#ifndef CKP_ML_DSA_65
#define CKP_ML_DSA_65 (0x00000002UL)
#endif
#ifndef CKP_ML_KEM_768
#define CKP_ML_KEM_768 (0x00000002UL)
#endif
#ifndef CKP_SLH_DSA_SHAKE_128S
#define CKP_SLH_DSA_SHAKE_128S (0x00000002UL)
#endif
#ifndef CKP_ML_DSA_87
#define CKP_ML_DSA_87 (0x00000003UL)
#endif
#ifndef CKP_ML_KEM_1024
#define CKP_ML_KEM_1024 (0x00000003UL)
#endif
#ifndef CKP_SLH_DSA_SHA2_128F
#define CKP_SLH_DSA_SHA2_128F (0x00000003UL)
#endif
#ifndef CKP_SLH_DSA_SHAKE_128F
#define CKP_SLH_DSA_SHAKE_128F (0x00000004UL)
#endif
#ifndef CKP_COMPLETE_PROVIDER
#define CKP_COMPLETE_PROVIDER (0x00000005UL)
#endif
#ifndef CKP_SLH_DSA_SHA2_192S
#define CKP_SLH_DSA_SHA2_192S (0x00000005UL)
#endif
#ifndef CKP_HKDF_TLS_TOKEN
#define CKP_HKDF_TLS_TOKEN (0x00000006UL)
#endif
#ifndef CKP_SLH_DSA_SHAKE_192S
#define CKP_SLH_DSA_SHAKE_192S (0x00000006UL)
#endif
#ifndef CKP_SLH_DSA_SHA2_192F
#define CKP_SLH_DSA_SHA2_192F (0x00000007UL)
#endif
#ifndef CKP_SLH_DSA_SHAKE_192F
#define CKP_SLH_DSA_SHAKE_192F (0x00000008UL)
#endif
#ifndef CKP_SLH_DSA_SHA2_256S
#define CKP_SLH_DSA_SHA2_256S (0x00000009UL)
#endif
#ifndef CKP_SLH_DSA_SHAKE_256S
#define CKP_SLH_DSA_SHAKE_256S (0x0000000aUL)
#endif
#ifndef CKP_SLH_DSA_SHA2_256F
#define CKP_SLH_DSA_SHA2_256F (0x0000000bUL)
#endif
#ifndef CKP_SLH_DSA_SHAKE_256F
#define CKP_SLH_DSA_SHAKE_256F (0x0000000cUL)
#endif
#ifndef CKS_LAST_VALIDATION_OK
#define CKS_LAST_VALIDATION_OK (0x00000001UL)
#endif
#ifndef CKT_TRUST_UNKNOWN
#define CKT_TRUST_UNKNOWN (0x00000000UL)
#endif
#ifndef CKT_TRUSTED
#define CKT_TRUSTED (0x00000001UL)
#endif
#ifndef CKT_TRUST_ANCHOR
#define CKT_TRUST_ANCHOR (0x00000002UL)
#endif
#ifndef CKT_NOT_TRUSTED
#define CKT_NOT_TRUSTED (0x00000003UL)
#endif
#ifndef CKT_TRUST_MUST_VERIFY_TRUST
#define CKT_TRUST_MUST_VERIFY_TRUST (0x00000004UL)
#endif
#ifndef CKV_AUTHORITY_TYPE_UNSPECIFIED
#define CKV_AUTHORITY_TYPE_UNSPECIFIED (0x00000000UL)
#endif
#ifndef CKV_TYPE_UNSPECIFIED
#define CKV_TYPE_UNSPECIFIED (0x00000000UL)
#endif
#ifndef CKV_AUTHORITY_TYPE_NIST_CMVP
#define CKV_AUTHORITY_TYPE_NIST_CMVP (0x00000001UL)
#endif
#ifndef CKV_TYPE_SOFTWARE
#define CKV_TYPE_SOFTWARE (0x00000001UL)
#endif
#ifndef CKV_AUTHORITY_TYPE_COMMON_CRITERIA
#define CKV_AUTHORITY_TYPE_COMMON_CRITERIA (0x00000002UL)
#endif
#ifndef CKV_TYPE_HARDWARE
#define CKV_TYPE_HARDWARE (0x00000002UL)
#endif
#ifndef CKV_TYPE_FIRMWARE
#define CKV_TYPE_FIRMWARE (0x00000003UL)
#endif
#ifndef CKV_TYPE_HYBRID
#define CKV_TYPE_HYBRID (0x00000004UL)
#endif
#ifndef CKR_KEY_EXHAUSTED
#define CKR_KEY_EXHAUSTED (0x00000203UL)
#endif
#ifndef CKR_PENDING
#define CKR_PENDING (0x00000204UL)
#endif
#ifndef CKR_SESSION_ASYNC_NOT_SUPPORTED
#define CKR_SESSION_ASYNC_NOT_SUPPORTED (0x00000205UL)
#endif
#ifndef CKR_SEED_RANDOM_REQUIRED
#define CKR_SEED_RANDOM_REQUIRED (0x00000206UL)
#endif
#ifndef CKR_OPERATION_NOT_VALIDATED
#define CKR_OPERATION_NOT_VALIDATED (0x00000207UL)
#endif
#ifndef CKR_TOKEN_NOT_INITIALIZED
#define CKR_TOKEN_NOT_INITIALIZED (0x00000208UL)
#endif
#ifndef CKR_PARAMETER_SET_NOT_SUPPORTED
#define CKR_PARAMETER_SET_NOT_SUPPORTED (0x00000209UL)
#endif

typedef CK_ULONG CK_HEDGE_TYPE;
typedef CK_ULONG CK_ML_DSA_PARAMETER_SET_TYPE;
typedef CK_ULONG CK_ML_KEM_PARAMETER_SET_TYPE;
typedef CK_ULONG CK_SLH_DSA_PARAMETER_SET_TYPE;
typedef CK_ULONG CK_SESSION_VALIDATION_FLAGS_TYPE;
typedef CK_FLAGS *CK_FLAGS_PTR;

/* The parameter of CKM_ML_DSA and CKM_SLH_DSA (optional), and of the
 * CKM_HASH_*_SHA*-style mechanisms. */
typedef struct CK_SIGN_ADDITIONAL_CONTEXT {
	CK_HEDGE_TYPE hedgeVariant;
	CK_BYTE_PTR pContext;
	CK_ULONG ulContextLen;
} CK_SIGN_ADDITIONAL_CONTEXT;
typedef CK_SIGN_ADDITIONAL_CONTEXT *CK_SIGN_ADDITIONAL_CONTEXT_PTR;

/* The parameter of CKM_HASH_ML_DSA and CKM_HASH_SLH_DSA. */
typedef struct CK_HASH_SIGN_ADDITIONAL_CONTEXT {
	CK_HEDGE_TYPE hedgeVariant;
	CK_BYTE_PTR pContext;
	CK_ULONG ulContextLen;
	CK_MECHANISM_TYPE hash;
} CK_HASH_SIGN_ADDITIONAL_CONTEXT;
typedef CK_HASH_SIGN_ADDITIONAL_CONTEXT *CK_HASH_SIGN_ADDITIONAL_CONTEXT_PTR;

typedef struct CK_ASYNC_DATA {
	CK_ULONG ulVersion;
	CK_BYTE_PTR pValue;
	CK_ULONG ulValue;
	CK_OBJECT_HANDLE hObject;
	CK_OBJECT_HANDLE hAdditionalObject;
} CK_ASYNC_DATA;
typedef CK_ASYNC_DATA *CK_ASYNC_DATA_PTR;

/* The 3.2 entry points, entries 93 to 104 of CK_FUNCTION_LIST_3_2. */
MODEXP_DECLARE_3_0(C_EncapsulateKey,
	(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
	 CK_OBJECT_HANDLE hPublicKey, CK_ATTRIBUTE_PTR pTemplate,
	 CK_ULONG ulAttributeCount, CK_BYTE_PTR pCiphertext,
	 CK_ULONG_PTR pulCiphertextLen, CK_OBJECT_HANDLE_PTR phKey));
MODEXP_DECLARE_3_0(C_DecapsulateKey,
	(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
	 CK_OBJECT_HANDLE hPrivateKey, CK_ATTRIBUTE_PTR pTemplate,
	 CK_ULONG ulAttributeCount, CK_BYTE_PTR pCiphertext,
	 CK_ULONG ulCiphertextLen, CK_OBJECT_HANDLE_PTR phKey));
MODEXP_DECLARE_3_0(C_VerifySignatureInit,
	(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
	 CK_OBJECT_HANDLE hKey, CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen));
MODEXP_DECLARE_3_0(C_VerifySignature,
	(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen));
MODEXP_DECLARE_3_0(C_VerifySignatureUpdate,
	(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen));
MODEXP_DECLARE_3_0(C_VerifySignatureFinal, (CK_SESSION_HANDLE hSession));
MODEXP_DECLARE_3_0(C_GetSessionValidationFlags,
	(CK_SESSION_HANDLE hSession, CK_SESSION_VALIDATION_FLAGS_TYPE type,
	 CK_FLAGS_PTR pFlags));
MODEXP_DECLARE_3_0(C_AsyncComplete,
	(CK_SESSION_HANDLE hSession, CK_UTF8CHAR_PTR pFunctionName,
	 CK_ASYNC_DATA_PTR pResult));
MODEXP_DECLARE_3_0(C_AsyncGetID,
	(CK_SESSION_HANDLE hSession, CK_UTF8CHAR_PTR pFunctionName,
	 CK_ULONG_PTR pulID));
MODEXP_DECLARE_3_0(C_AsyncJoin,
	(CK_SESSION_HANDLE hSession, CK_UTF8CHAR_PTR pFunctionName,
	 CK_ULONG ulID, CK_BYTE_PTR pData, CK_ULONG ulData));
MODEXP_DECLARE_3_0(C_WrapKeyAuthenticated,
	(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
	 CK_OBJECT_HANDLE hWrappingKey, CK_OBJECT_HANDLE hKey,
	 CK_BYTE_PTR pAssociatedData, CK_ULONG ulAssociatedDataLen,
	 CK_BYTE_PTR pWrappedKey, CK_ULONG_PTR pulWrappedKeyLen));
MODEXP_DECLARE_3_0(C_UnwrapKeyAuthenticated,
	(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
	 CK_OBJECT_HANDLE hUnwrappingKey, CK_BYTE_PTR pWrappedKey,
	 CK_ULONG ulWrappedKeyLen, CK_ATTRIBUTE_PTR pTemplate,
	 CK_ULONG ulAttributeCount, CK_BYTE_PTR pAssociatedData,
	 CK_ULONG ulAssociatedDataLen, CK_OBJECT_HANDLE_PTR phKey));

/* CK_FUNCTION_LIST_3_2: the 3.0 list, same order, then the 3.2 additions.
 * Declared by extending the 3.0 layout field for field (a 3.2 list is a
 * valid 3.0 list for a 3.0 caller). */
typedef struct CK_FUNCTION_LIST_3_2 {
	CK_FUNCTION_LIST_3_0 base;
	CK_C_EncapsulateKey C_EncapsulateKey;
	CK_C_DecapsulateKey C_DecapsulateKey;
	CK_C_VerifySignatureInit C_VerifySignatureInit;
	CK_C_VerifySignature C_VerifySignature;
	CK_C_VerifySignatureUpdate C_VerifySignatureUpdate;
	CK_C_VerifySignatureFinal C_VerifySignatureFinal;
	CK_C_GetSessionValidationFlags C_GetSessionValidationFlags;
	CK_C_AsyncComplete C_AsyncComplete;
	CK_C_AsyncGetID C_AsyncGetID;
	CK_C_AsyncJoin C_AsyncJoin;
	CK_C_WrapKeyAuthenticated C_WrapKeyAuthenticated;
	CK_C_UnwrapKeyAuthenticated C_UnwrapKeyAuthenticated;
} CK_FUNCTION_LIST_3_2;

typedef CK_FUNCTION_LIST_3_2 *CK_FUNCTION_LIST_3_2_PTR;
typedef CK_FUNCTION_LIST_3_2_PTR *CK_FUNCTION_LIST_3_2_PTR_PTR;

/* CK_GCM_PARAMS as PKCS#11 2.40 defined it (p11-kit's CK_GCM_PARAMS is the
 * 3.0 form, with ulIvBits): clients built on 2.40 headers pass this one;
 * the two are told apart by ulParameterLen. */
typedef struct MODEXP_GCM_PARAMS_2_40 {
	CK_BYTE_PTR pIv;
	CK_ULONG ulIvLen;
	CK_BYTE_PTR pAAD;
	CK_ULONG ulAADLen;
	CK_ULONG ulTagBits;
} MODEXP_GCM_PARAMS_2_40;

/* The message-based functions (PKCS#11 3.0): the mechanism flags, the last
 * part's flag, the IV generators and CK_GCM_MESSAGE_PARAMS, which p11-kit's
 * header lacks. */
#ifndef CKF_MESSAGE_ENCRYPT
#define CKF_MESSAGE_ENCRYPT (0x00000002UL)
#define CKF_MESSAGE_DECRYPT (0x00000004UL)
#define CKF_MESSAGE_SIGN (0x00000008UL)
#define CKF_MESSAGE_VERIFY (0x00000010UL)
#define CKF_MULTI_MESSAGE (0x00000020UL)
#endif
#ifndef CKF_END_OF_MESSAGE
#define CKF_END_OF_MESSAGE (0x00000001UL)
#endif
#ifndef CKG_NO_GENERATE
#define CKG_NO_GENERATE (0x00000000UL)
#define CKG_GENERATE (0x00000001UL)
#define CKG_GENERATE_COUNTER (0x00000002UL)
#define CKG_GENERATE_RANDOM (0x00000003UL)
#endif

typedef CK_ULONG MODEXP_GENERATOR_FUNCTION;

typedef struct MODEXP_GCM_MESSAGE_PARAMS {
	CK_BYTE_PTR pIv;
	CK_ULONG ulIvLen;
	CK_ULONG ulIvFixedBits;
	MODEXP_GENERATOR_FUNCTION ivGenerator;
	CK_BYTE_PTR pTag;
	CK_ULONG ulTagBits;
} MODEXP_GCM_MESSAGE_PARAMS;

#endif /* MODEXP_PKCS11_3_H */
