/*
 * pkcs11_3.h: the few PKCS#11 3.0 declarations that p11-kit's 2.40 header
 * lacks (CK_INTERFACE, CK_FUNCTION_LIST_3_0 and the 3.0 function
 * prototypes, CK_EDDSA_PARAMS, CK_HKDF_PARAMS), written from the OASIS
 * PKCS#11 3.0 base and current mechanisms specifications.
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

#endif /* MODEXP_PKCS11_3_H */
