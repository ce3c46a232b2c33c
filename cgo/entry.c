/*
 * entry.c: the C face of libmodexp-pkcs11.so.
 *
 * The static function lists (CK_FUNCTION_LIST 2.40, CK_FUNCTION_LIST_3_0 and
 * CK_FUNCTION_LIST_3_2),
 * C_GetFunctionList, C_GetInterfaceList, C_GetInterface, and one wrapper per
 * entry point. A wrapper checks for a forked child (FORK_GUARD: served by
 * a second copy of this library, fork.c) and otherwise calls one Go export
 * from _cgo_export.h.
 * Nothing here knows PKCS#11 semantics beyond the interface lists.
 */
#include <string.h>

#include "pkcs11_3.h"
#include "_cgo_export.h"
#include "fork.h"

/* ------------------------------------------------------------------------
 * Fork. Go code must never run in a child forked without exec: it hangs as
 * soon as it needs the scheduler or the GC. fork.c's atfork child handler
 * marks the child; every wrapper then forwards, without entering this
 * copy's Go, to the same function of a second copy of this library that
 * fork.c loads in the child (its Go runtime is whole there). C_Initialize
 * and C_Finalize have their own rules there; C_GetInfo and
 * C_GetMechanismList go to the copy's list of the same version.
 * ---------------------------------------------------------------------- */

#define FORKED_CHILD() __builtin_expect(__atomic_load_n(&modexp_forked_child, __ATOMIC_RELAXED), 0)

/* FORK_SERVE: in a forked child, answer with call (t_ holds the copy's
 * function lists) and return. */
#define FORK_SERVE(call)                                                    \
	do {                                                                \
		if (FORKED_CHILD()) {                                       \
			CK_RV rv_ = CKR_GENERAL_ERROR;                      \
			const struct modexp_fork_lists *t_ = modexp_fork_target(&rv_); \
			if (t_ == NULL)                                     \
				return rv_;                                 \
			return call;                                        \
		}                                                           \
	} while (0)

/* FORK_GUARD: a function of the 3.0 list (2.40's included); FORK_GUARD_3_2:
 * one of the functions 3.2 added. */
#define FORK_GUARD(name, args) FORK_SERVE(t_->v32->base.name args)
#define FORK_GUARD_3_2(name, args) FORK_SERVE(t_->v32->name args)

/* ------------------------------------------------------------------------
 * General purpose.
 * ---------------------------------------------------------------------- */

CK_RV C_Initialize(CK_VOID_PTR pInitArgs)
{
	if (FORKED_CHILD())
		return modexp_fork_initialize(pInitArgs);
	CK_C_INITIALIZE_ARGS stripped; /* a copy's C_Initialize called by fork.c */
	return goInitialize(modexp_fork_take_handover(pInitArgs, &stripped));
}

CK_RV C_Finalize(CK_VOID_PTR pReserved)
{
	if (FORKED_CHILD())
		return modexp_fork_finalize(pReserved);
	return goFinalize(pReserved);
}

/* C_GetInfo reports the version of the interface the caller chose: the 2.40
 * list and the exported symbol say 2.40, the 3.0 list 3.0, the 3.2 list 3.2
 * (pkcs11-provider compares it with the interface it took). */
CK_RV C_GetInfo(CK_INFO_PTR pInfo)
{
	FORK_SERVE(t_->v240->C_GetInfo(pInfo));
	return goGetInfo(pInfo, 2, 40);
}

static CK_RV modexp_GetInfo_3_0(CK_INFO_PTR pInfo)
{
	FORK_SERVE(t_->v30->C_GetInfo(pInfo));
	return goGetInfo(pInfo, 3, 0);
}

static CK_RV modexp_GetInfo_3_2(CK_INFO_PTR pInfo)
{
	FORK_SERVE(t_->v32->base.C_GetInfo(pInfo));
	return goGetInfo(pInfo, 3, 2);
}

/* ------------------------------------------------------------------------
 * Slots and tokens.
 * ---------------------------------------------------------------------- */

CK_RV C_GetSlotList(CK_BBOOL tokenPresent, CK_SLOT_ID_PTR pSlotList, CK_ULONG_PTR pulCount)
{
	FORK_GUARD(C_GetSlotList, (tokenPresent, pSlotList, pulCount));
	return goGetSlotList(tokenPresent, pSlotList, pulCount);
}

CK_RV C_GetSlotInfo(CK_SLOT_ID slotID, CK_SLOT_INFO_PTR pInfo)
{
	FORK_GUARD(C_GetSlotInfo, (slotID, pInfo));
	return goGetSlotInfo(slotID, pInfo);
}

CK_RV C_GetTokenInfo(CK_SLOT_ID slotID, CK_TOKEN_INFO_PTR pInfo)
{
	FORK_GUARD(C_GetTokenInfo, (slotID, pInfo));
	return goGetTokenInfo(slotID, pInfo);
}

/* C_GetMechanismList of the 2.40 and 3.0 lists leaves out the mechanisms
 * PKCS#11 3.2 introduced (ML-KEM, ML-DSA...); the 3.2 list's lists all. */
CK_RV C_GetMechanismList(CK_SLOT_ID slotID, CK_MECHANISM_TYPE_PTR pMechanismList, CK_ULONG_PTR pulCount)
{
	FORK_SERVE(t_->v240->C_GetMechanismList(slotID, pMechanismList, pulCount));
	return goGetMechanismList(slotID, pMechanismList, pulCount, 0);
}

static CK_RV modexp_GetMechanismList_3_2(CK_SLOT_ID slotID, CK_MECHANISM_TYPE_PTR pMechanismList, CK_ULONG_PTR pulCount)
{
	FORK_GUARD(C_GetMechanismList, (slotID, pMechanismList, pulCount));
	return goGetMechanismList(slotID, pMechanismList, pulCount, 1);
}

CK_RV C_GetMechanismInfo(CK_SLOT_ID slotID, CK_MECHANISM_TYPE type, CK_MECHANISM_INFO_PTR pInfo)
{
	FORK_GUARD(C_GetMechanismInfo, (slotID, type, pInfo));
	return goGetMechanismInfo(slotID, type, pInfo);
}

CK_RV C_InitToken(CK_SLOT_ID slotID, CK_UTF8CHAR_PTR pPin, CK_ULONG ulPinLen, CK_UTF8CHAR_PTR pLabel)
{
	FORK_GUARD(C_InitToken, (slotID, pPin, ulPinLen, pLabel));
	return goInitToken(slotID, pPin, ulPinLen, pLabel);
}

CK_RV C_InitPIN(CK_SESSION_HANDLE hSession, CK_UTF8CHAR_PTR pPin, CK_ULONG ulPinLen)
{
	FORK_GUARD(C_InitPIN, (hSession, pPin, ulPinLen));
	return goInitPIN(hSession, pPin, ulPinLen);
}

CK_RV C_SetPIN(CK_SESSION_HANDLE hSession, CK_UTF8CHAR_PTR pOldPin, CK_ULONG ulOldLen,
	       CK_UTF8CHAR_PTR pNewPin, CK_ULONG ulNewLen)
{
	FORK_GUARD(C_SetPIN, (hSession, pOldPin, ulOldLen, pNewPin, ulNewLen));
	return goSetPIN(hSession, pOldPin, ulOldLen, pNewPin, ulNewLen);
}

CK_RV C_WaitForSlotEvent(CK_FLAGS flags, CK_SLOT_ID_PTR pSlot, CK_VOID_PTR pReserved)
{
	FORK_GUARD(C_WaitForSlotEvent, (flags, pSlot, pReserved));
	return goWaitForSlotEvent(flags, pSlot, pReserved);
}

/* ------------------------------------------------------------------------
 * Sessions.
 * ---------------------------------------------------------------------- */

CK_RV C_OpenSession(CK_SLOT_ID slotID, CK_FLAGS flags, CK_VOID_PTR pApplication,
		    CK_NOTIFY Notify, CK_SESSION_HANDLE_PTR phSession)
{
	FORK_GUARD(C_OpenSession, (slotID, flags, pApplication, Notify, phSession));
	return goOpenSession(slotID, flags, phSession);
}

CK_RV C_CloseSession(CK_SESSION_HANDLE hSession)
{
	FORK_GUARD(C_CloseSession, (hSession));
	return goCloseSession(hSession);
}

CK_RV C_CloseAllSessions(CK_SLOT_ID slotID)
{
	FORK_GUARD(C_CloseAllSessions, (slotID));
	return goCloseAllSessions(slotID);
}

CK_RV C_GetSessionInfo(CK_SESSION_HANDLE hSession, CK_SESSION_INFO_PTR pInfo)
{
	FORK_GUARD(C_GetSessionInfo, (hSession, pInfo));
	return goGetSessionInfo(hSession, pInfo);
}

CK_RV C_GetOperationState(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pOperationState,
			  CK_ULONG_PTR pulOperationStateLen)
{
	FORK_GUARD(C_GetOperationState, (hSession, pOperationState, pulOperationStateLen));
	return goUnsupported();
}

CK_RV C_SetOperationState(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pOperationState,
			  CK_ULONG ulOperationStateLen, CK_OBJECT_HANDLE hEncryptionKey,
			  CK_OBJECT_HANDLE hAuthenticationKey)
{
	FORK_GUARD(C_SetOperationState, (hSession, pOperationState, ulOperationStateLen,
					 hEncryptionKey, hAuthenticationKey));
	return goUnsupported();
}

CK_RV C_Login(CK_SESSION_HANDLE hSession, CK_USER_TYPE userType, CK_UTF8CHAR_PTR pPin, CK_ULONG ulPinLen)
{
	FORK_GUARD(C_Login, (hSession, userType, pPin, ulPinLen));
	return goLogin(hSession, userType, pPin, ulPinLen);
}

CK_RV C_Logout(CK_SESSION_HANDLE hSession)
{
	FORK_GUARD(C_Logout, (hSession));
	return goLogout(hSession);
}

CK_RV C_LoginUser(CK_SESSION_HANDLE hSession, CK_USER_TYPE userType, CK_UTF8CHAR_PTR pPin,
		  CK_ULONG ulPinLen, CK_UTF8CHAR_PTR pUsername, CK_ULONG ulUsernameLen)
{
	FORK_GUARD(C_LoginUser, (hSession, userType, pPin, ulPinLen, pUsername, ulUsernameLen));
	return goLoginUser(hSession, userType, pPin, ulPinLen, pUsername, ulUsernameLen);
}

CK_RV C_SessionCancel(CK_SESSION_HANDLE hSession, CK_FLAGS flags)
{
	FORK_GUARD(C_SessionCancel, (hSession, flags));
	return goSessionCancel(hSession, flags);
}

/* ------------------------------------------------------------------------
 * Objects.
 * ---------------------------------------------------------------------- */

CK_RV C_CreateObject(CK_SESSION_HANDLE hSession, CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount,
		     CK_OBJECT_HANDLE_PTR phObject)
{
	FORK_GUARD(C_CreateObject, (hSession, pTemplate, ulCount, phObject));
	return goCreateObject(hSession, pTemplate, ulCount, phObject);
}

CK_RV C_CopyObject(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject, CK_ATTRIBUTE_PTR pTemplate,
		   CK_ULONG ulCount, CK_OBJECT_HANDLE_PTR phNewObject)
{
	FORK_GUARD(C_CopyObject, (hSession, hObject, pTemplate, ulCount, phNewObject));
	return goCopyObject(hSession, hObject, pTemplate, ulCount, phNewObject);
}

CK_RV C_DestroyObject(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject)
{
	FORK_GUARD(C_DestroyObject, (hSession, hObject));
	return goDestroyObject(hSession, hObject);
}

CK_RV C_GetObjectSize(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject, CK_ULONG_PTR pulSize)
{
	FORK_GUARD(C_GetObjectSize, (hSession, hObject, pulSize));
	return goGetObjectSize(hSession, hObject, pulSize);
}

CK_RV C_GetAttributeValue(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject,
			  CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount)
{
	FORK_GUARD(C_GetAttributeValue, (hSession, hObject, pTemplate, ulCount));
	return goGetAttributeValue(hSession, hObject, pTemplate, ulCount);
}

CK_RV C_SetAttributeValue(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject,
			  CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount)
{
	FORK_GUARD(C_SetAttributeValue, (hSession, hObject, pTemplate, ulCount));
	return goSetAttributeValue(hSession, hObject, pTemplate, ulCount);
}

CK_RV C_FindObjectsInit(CK_SESSION_HANDLE hSession, CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount)
{
	FORK_GUARD(C_FindObjectsInit, (hSession, pTemplate, ulCount));
	return goFindObjectsInit(hSession, pTemplate, ulCount);
}

CK_RV C_FindObjects(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE_PTR phObject,
		    CK_ULONG ulMaxObjectCount, CK_ULONG_PTR pulObjectCount)
{
	FORK_GUARD(C_FindObjects, (hSession, phObject, ulMaxObjectCount, pulObjectCount));
	return goFindObjects(hSession, phObject, ulMaxObjectCount, pulObjectCount);
}

CK_RV C_FindObjectsFinal(CK_SESSION_HANDLE hSession)
{
	FORK_GUARD(C_FindObjectsFinal, (hSession));
	return goFindObjectsFinal(hSession);
}

/* ------------------------------------------------------------------------
 * Encryption and decryption.
 * ---------------------------------------------------------------------- */

CK_RV C_EncryptInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey)
{
	FORK_GUARD(C_EncryptInit, (hSession, pMechanism, hKey));
	return goEncryptInit(hSession, pMechanism, hKey);
}

CK_RV C_Encrypt(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
		CK_BYTE_PTR pEncryptedData, CK_ULONG_PTR pulEncryptedDataLen)
{
	FORK_GUARD(C_Encrypt, (hSession, pData, ulDataLen, pEncryptedData, pulEncryptedDataLen));
	return goEncrypt(hSession, pData, ulDataLen, pEncryptedData, pulEncryptedDataLen);
}

CK_RV C_EncryptUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen,
		      CK_BYTE_PTR pEncryptedPart, CK_ULONG_PTR pulEncryptedPartLen)
{
	FORK_GUARD(C_EncryptUpdate, (hSession, pPart, ulPartLen, pEncryptedPart, pulEncryptedPartLen));
	return goEncryptUpdate(hSession, pPart, ulPartLen, pEncryptedPart, pulEncryptedPartLen);
}

CK_RV C_EncryptFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pLastEncryptedPart,
		     CK_ULONG_PTR pulLastEncryptedPartLen)
{
	FORK_GUARD(C_EncryptFinal, (hSession, pLastEncryptedPart, pulLastEncryptedPartLen));
	return goEncryptFinal(hSession, pLastEncryptedPart, pulLastEncryptedPartLen);
}

CK_RV C_DecryptInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey)
{
	FORK_GUARD(C_DecryptInit, (hSession, pMechanism, hKey));
	return goDecryptInit(hSession, pMechanism, hKey);
}

CK_RV C_Decrypt(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedData, CK_ULONG ulEncryptedDataLen,
		CK_BYTE_PTR pData, CK_ULONG_PTR pulDataLen)
{
	FORK_GUARD(C_Decrypt, (hSession, pEncryptedData, ulEncryptedDataLen, pData, pulDataLen));
	return goDecrypt(hSession, pEncryptedData, ulEncryptedDataLen, pData, pulDataLen);
}

CK_RV C_DecryptUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedPart, CK_ULONG ulEncryptedPartLen,
		      CK_BYTE_PTR pPart, CK_ULONG_PTR pulPartLen)
{
	FORK_GUARD(C_DecryptUpdate, (hSession, pEncryptedPart, ulEncryptedPartLen, pPart, pulPartLen));
	return goDecryptUpdate(hSession, pEncryptedPart, ulEncryptedPartLen, pPart, pulPartLen);
}

CK_RV C_DecryptFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pLastPart, CK_ULONG_PTR pulLastPartLen)
{
	FORK_GUARD(C_DecryptFinal, (hSession, pLastPart, pulLastPartLen));
	return goDecryptFinal(hSession, pLastPart, pulLastPartLen);
}

/* ------------------------------------------------------------------------
 * Digests.
 * ---------------------------------------------------------------------- */

CK_RV C_DigestInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism)
{
	FORK_GUARD(C_DigestInit, (hSession, pMechanism));
	return goDigestInit(hSession, pMechanism);
}

CK_RV C_Digest(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
	       CK_BYTE_PTR pDigest, CK_ULONG_PTR pulDigestLen)
{
	FORK_GUARD(C_Digest, (hSession, pData, ulDataLen, pDigest, pulDigestLen));
	return goDigest(hSession, pData, ulDataLen, pDigest, pulDigestLen);
}

CK_RV C_DigestUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen)
{
	FORK_GUARD(C_DigestUpdate, (hSession, pPart, ulPartLen));
	return goDigestUpdate(hSession, pPart, ulPartLen);
}

CK_RV C_DigestKey(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hKey)
{
	FORK_GUARD(C_DigestKey, (hSession, hKey));
	return goDigestKey(hSession, hKey);
}

CK_RV C_DigestFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pDigest, CK_ULONG_PTR pulDigestLen)
{
	FORK_GUARD(C_DigestFinal, (hSession, pDigest, pulDigestLen));
	return goDigestFinal(hSession, pDigest, pulDigestLen);
}

/* ------------------------------------------------------------------------
 * Signatures.
 * ---------------------------------------------------------------------- */

CK_RV C_SignInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey)
{
	FORK_GUARD(C_SignInit, (hSession, pMechanism, hKey));
	return goSignInit(hSession, pMechanism, hKey);
}

CK_RV C_Sign(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
	     CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen)
{
	FORK_GUARD(C_Sign, (hSession, pData, ulDataLen, pSignature, pulSignatureLen));
	return goSign(hSession, pData, ulDataLen, pSignature, pulSignatureLen);
}

CK_RV C_SignUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen)
{
	FORK_GUARD(C_SignUpdate, (hSession, pPart, ulPartLen));
	return goSignUpdate(hSession, pPart, ulPartLen);
}

CK_RV C_SignFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen)
{
	FORK_GUARD(C_SignFinal, (hSession, pSignature, pulSignatureLen));
	return goSignFinal(hSession, pSignature, pulSignatureLen);
}

CK_RV C_SignRecoverInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey)
{
	FORK_GUARD(C_SignRecoverInit, (hSession, pMechanism, hKey));
	return goUnsupported();
}

CK_RV C_SignRecover(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
		    CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen)
{
	FORK_GUARD(C_SignRecover, (hSession, pData, ulDataLen, pSignature, pulSignatureLen));
	return goUnsupported();
}

CK_RV C_VerifyInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey)
{
	FORK_GUARD(C_VerifyInit, (hSession, pMechanism, hKey));
	return goVerifyInit(hSession, pMechanism, hKey);
}

CK_RV C_Verify(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
	       CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen)
{
	FORK_GUARD(C_Verify, (hSession, pData, ulDataLen, pSignature, ulSignatureLen));
	return goVerify(hSession, pData, ulDataLen, pSignature, ulSignatureLen);
}

CK_RV C_VerifyUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen)
{
	FORK_GUARD(C_VerifyUpdate, (hSession, pPart, ulPartLen));
	return goVerifyUpdate(hSession, pPart, ulPartLen);
}

CK_RV C_VerifyFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen)
{
	FORK_GUARD(C_VerifyFinal, (hSession, pSignature, ulSignatureLen));
	return goVerifyFinal(hSession, pSignature, ulSignatureLen);
}

CK_RV C_VerifyRecoverInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey)
{
	FORK_GUARD(C_VerifyRecoverInit, (hSession, pMechanism, hKey));
	return goUnsupported();
}

CK_RV C_VerifyRecover(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen,
		      CK_BYTE_PTR pData, CK_ULONG_PTR pulDataLen)
{
	FORK_GUARD(C_VerifyRecover, (hSession, pSignature, ulSignatureLen, pData, pulDataLen));
	return goUnsupported();
}

/* ------------------------------------------------------------------------
 * Dual-function operations: not supported.
 * ---------------------------------------------------------------------- */

CK_RV C_DigestEncryptUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen,
			    CK_BYTE_PTR pEncryptedPart, CK_ULONG_PTR pulEncryptedPartLen)
{
	FORK_GUARD(C_DigestEncryptUpdate, (hSession, pPart, ulPartLen, pEncryptedPart, pulEncryptedPartLen));
	return goUnsupported();
}

CK_RV C_DecryptDigestUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedPart,
			    CK_ULONG ulEncryptedPartLen, CK_BYTE_PTR pPart, CK_ULONG_PTR pulPartLen)
{
	FORK_GUARD(C_DecryptDigestUpdate, (hSession, pEncryptedPart, ulEncryptedPartLen, pPart, pulPartLen));
	return goUnsupported();
}

CK_RV C_SignEncryptUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen,
			  CK_BYTE_PTR pEncryptedPart, CK_ULONG_PTR pulEncryptedPartLen)
{
	FORK_GUARD(C_SignEncryptUpdate, (hSession, pPart, ulPartLen, pEncryptedPart, pulEncryptedPartLen));
	return goUnsupported();
}

CK_RV C_DecryptVerifyUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedPart,
			    CK_ULONG ulEncryptedPartLen, CK_BYTE_PTR pPart, CK_ULONG_PTR pulPartLen)
{
	FORK_GUARD(C_DecryptVerifyUpdate, (hSession, pEncryptedPart, ulEncryptedPartLen, pPart, pulPartLen));
	return goUnsupported();
}

/* ------------------------------------------------------------------------
 * Keys and random numbers.
 * ---------------------------------------------------------------------- */

CK_RV C_GenerateKey(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_ATTRIBUTE_PTR pTemplate,
		    CK_ULONG ulCount, CK_OBJECT_HANDLE_PTR phKey)
{
	FORK_GUARD(C_GenerateKey, (hSession, pMechanism, pTemplate, ulCount, phKey));
	return goGenerateKey(hSession, pMechanism, pTemplate, ulCount, phKey);
}

CK_RV C_GenerateKeyPair(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
			CK_ATTRIBUTE_PTR pPublicKeyTemplate, CK_ULONG ulPublicKeyAttributeCount,
			CK_ATTRIBUTE_PTR pPrivateKeyTemplate, CK_ULONG ulPrivateKeyAttributeCount,
			CK_OBJECT_HANDLE_PTR phPublicKey, CK_OBJECT_HANDLE_PTR phPrivateKey)
{
	FORK_GUARD(C_GenerateKeyPair, (hSession, pMechanism, pPublicKeyTemplate, ulPublicKeyAttributeCount,
				       pPrivateKeyTemplate, ulPrivateKeyAttributeCount, phPublicKey,
				       phPrivateKey));
	return goGenerateKeyPair(hSession, pMechanism, pPublicKeyTemplate, ulPublicKeyAttributeCount,
				 pPrivateKeyTemplate, ulPrivateKeyAttributeCount, phPublicKey, phPrivateKey);
}

CK_RV C_WrapKey(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hWrappingKey,
		CK_OBJECT_HANDLE hKey, CK_BYTE_PTR pWrappedKey, CK_ULONG_PTR pulWrappedKeyLen)
{
	FORK_GUARD(C_WrapKey, (hSession, pMechanism, hWrappingKey, hKey, pWrappedKey, pulWrappedKeyLen));
	return goWrapKey(hSession, pMechanism, hWrappingKey, hKey, pWrappedKey, pulWrappedKeyLen);
}

CK_RV C_UnwrapKey(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hUnwrappingKey,
		  CK_BYTE_PTR pWrappedKey, CK_ULONG ulWrappedKeyLen, CK_ATTRIBUTE_PTR pTemplate,
		  CK_ULONG ulAttributeCount, CK_OBJECT_HANDLE_PTR phKey)
{
	FORK_GUARD(C_UnwrapKey, (hSession, pMechanism, hUnwrappingKey, pWrappedKey, ulWrappedKeyLen,
				 pTemplate, ulAttributeCount, phKey));
	return goUnwrapKey(hSession, pMechanism, hUnwrappingKey, pWrappedKey, ulWrappedKeyLen, pTemplate,
			   ulAttributeCount, phKey);
}

CK_RV C_DeriveKey(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hBaseKey,
		  CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulAttributeCount, CK_OBJECT_HANDLE_PTR phKey)
{
	FORK_GUARD(C_DeriveKey, (hSession, pMechanism, hBaseKey, pTemplate, ulAttributeCount, phKey));
	return goDeriveKey(hSession, pMechanism, hBaseKey, pTemplate, ulAttributeCount, phKey);
}

CK_RV C_SeedRandom(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSeed, CK_ULONG ulSeedLen)
{
	FORK_GUARD(C_SeedRandom, (hSession, pSeed, ulSeedLen));
	return goSeedRandom(hSession, pSeed, ulSeedLen);
}

CK_RV C_GenerateRandom(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pRandomData, CK_ULONG ulRandomLen)
{
	FORK_GUARD(C_GenerateRandom, (hSession, pRandomData, ulRandomLen));
	return goGenerateRandom(hSession, pRandomData, ulRandomLen);
}

/* Legacy parallel-function management: CKR_FUNCTION_NOT_PARALLEL. */
CK_RV C_GetFunctionStatus(CK_SESSION_HANDLE hSession)
{
	FORK_GUARD(C_GetFunctionStatus, (hSession));
	return goNotParallel();
}

CK_RV C_CancelFunction(CK_SESSION_HANDLE hSession)
{
	FORK_GUARD(C_CancelFunction, (hSession));
	return goNotParallel();
}

/* ------------------------------------------------------------------------
 * 3.0 message-based functions (cgo/message.go). In a forked child they
 * answer CKR_FUNCTION_NOT_SUPPORTED, as every 3.0 function there.
 * ---------------------------------------------------------------------- */

#define MODEXP_UNSUPPORTED_3_0(name, params, args) \
	CK_RV name params                           \
	{                                           \
		FORK_GUARD(name, args);             \
		return goUnsupported();             \
	}

/* The same for a function 3.2 added. */
#define MODEXP_UNSUPPORTED_3_2(name, params, args) \
	CK_RV name params                           \
	{                                           \
		FORK_GUARD_3_2(name, args);         \
		return goUnsupported();             \
	}

#define MODEXP_SERVED_3_0(name, goname, params, args) \
	CK_RV name params                              \
	{                                              \
		FORK_GUARD(name, args);                \
		return goname args;                    \
	}

MODEXP_SERVED_3_0(C_MessageEncryptInit, goMessageEncryptInit,
	(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey),
	(hSession, pMechanism, hKey))
MODEXP_SERVED_3_0(C_EncryptMessage, goEncryptMessage,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen,
	 CK_BYTE_PTR pAssociatedData, CK_ULONG ulAssociatedDataLen, CK_BYTE_PTR pPlaintext,
	 CK_ULONG ulPlaintextLen, CK_BYTE_PTR pCiphertext, CK_ULONG_PTR pulCiphertextLen),
	(hSession, pParameter, ulParameterLen, pAssociatedData, ulAssociatedDataLen, pPlaintext,
	 ulPlaintextLen, pCiphertext, pulCiphertextLen))
MODEXP_SERVED_3_0(C_EncryptMessageBegin, goEncryptMessageBegin,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen,
	 CK_BYTE_PTR pAssociatedData, CK_ULONG ulAssociatedDataLen),
	(hSession, pParameter, ulParameterLen, pAssociatedData, ulAssociatedDataLen))
MODEXP_SERVED_3_0(C_EncryptMessageNext, goEncryptMessageNext,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen,
	 CK_BYTE_PTR pPlaintextPart, CK_ULONG ulPlaintextPartLen, CK_BYTE_PTR pCiphertextPart,
	 CK_ULONG_PTR pulCiphertextPartLen, CK_FLAGS flags),
	(hSession, pParameter, ulParameterLen, pPlaintextPart, ulPlaintextPartLen, pCiphertextPart,
	 pulCiphertextPartLen, flags))
MODEXP_SERVED_3_0(C_MessageEncryptFinal, goMessageEncryptFinal, (CK_SESSION_HANDLE hSession), (hSession))
MODEXP_SERVED_3_0(C_MessageDecryptInit, goMessageDecryptInit,
	(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey),
	(hSession, pMechanism, hKey))
MODEXP_SERVED_3_0(C_DecryptMessage, goDecryptMessage,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen,
	 CK_BYTE_PTR pAssociatedData, CK_ULONG ulAssociatedDataLen, CK_BYTE_PTR pCiphertext,
	 CK_ULONG ulCiphertextLen, CK_BYTE_PTR pPlaintext, CK_ULONG_PTR pulPlaintextLen),
	(hSession, pParameter, ulParameterLen, pAssociatedData, ulAssociatedDataLen, pCiphertext,
	 ulCiphertextLen, pPlaintext, pulPlaintextLen))
MODEXP_SERVED_3_0(C_DecryptMessageBegin, goDecryptMessageBegin,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen,
	 CK_BYTE_PTR pAssociatedData, CK_ULONG ulAssociatedDataLen),
	(hSession, pParameter, ulParameterLen, pAssociatedData, ulAssociatedDataLen))
MODEXP_SERVED_3_0(C_DecryptMessageNext, goDecryptMessageNext,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen,
	 CK_BYTE_PTR pCiphertextPart, CK_ULONG ulCiphertextPartLen, CK_BYTE_PTR pPlaintextPart,
	 CK_ULONG_PTR pulPlaintextPartLen, CK_FLAGS flags),
	(hSession, pParameter, ulParameterLen, pCiphertextPart, ulCiphertextPartLen, pPlaintextPart,
	 pulPlaintextPartLen, flags))
MODEXP_SERVED_3_0(C_MessageDecryptFinal, goMessageDecryptFinal, (CK_SESSION_HANDLE hSession), (hSession))
MODEXP_SERVED_3_0(C_MessageSignInit, goMessageSignInit,
	(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey),
	(hSession, pMechanism, hKey))
MODEXP_SERVED_3_0(C_SignMessage, goSignMessage,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen,
	 CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen),
	(hSession, pParameter, ulParameterLen, pData, ulDataLen, pSignature, pulSignatureLen))
MODEXP_SERVED_3_0(C_SignMessageBegin, goSignMessageBegin,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen),
	(hSession, pParameter, ulParameterLen))
MODEXP_SERVED_3_0(C_SignMessageNext, goSignMessageNext,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen,
	 CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen),
	(hSession, pParameter, ulParameterLen, pData, ulDataLen, pSignature, pulSignatureLen))
MODEXP_SERVED_3_0(C_MessageSignFinal, goMessageSignFinal, (CK_SESSION_HANDLE hSession), (hSession))
MODEXP_SERVED_3_0(C_MessageVerifyInit, goMessageVerifyInit,
	(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey),
	(hSession, pMechanism, hKey))
MODEXP_SERVED_3_0(C_VerifyMessage, goVerifyMessage,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen,
	 CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen),
	(hSession, pParameter, ulParameterLen, pData, ulDataLen, pSignature, ulSignatureLen))
MODEXP_SERVED_3_0(C_VerifyMessageBegin, goVerifyMessageBegin,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen),
	(hSession, pParameter, ulParameterLen))
MODEXP_SERVED_3_0(C_VerifyMessageNext, goVerifyMessageNext,
	(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen,
	 CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen),
	(hSession, pParameter, ulParameterLen, pData, ulDataLen, pSignature, ulSignatureLen))
MODEXP_SERVED_3_0(C_MessageVerifyFinal, goMessageVerifyFinal, (CK_SESSION_HANDLE hSession), (hSession))

/* ------------------------------------------------------------------------
 * 3.2 functions: key encapsulation and the verification of a signature
 * given at Init are served; the others answer CKR_FUNCTION_NOT_SUPPORTED.
 * ---------------------------------------------------------------------- */

CK_RV C_EncapsulateKey(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hPublicKey,
		       CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulAttributeCount, CK_BYTE_PTR pCiphertext,
		       CK_ULONG_PTR pulCiphertextLen, CK_OBJECT_HANDLE_PTR phKey)
{
	FORK_GUARD_3_2(C_EncapsulateKey, (hSession, pMechanism, hPublicKey, pTemplate, ulAttributeCount, pCiphertext, pulCiphertextLen, phKey));
	return goEncapsulateKey(hSession, pMechanism, hPublicKey, pTemplate, ulAttributeCount, pCiphertext,
				pulCiphertextLen, phKey);
}

CK_RV C_DecapsulateKey(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hPrivateKey,
		       CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulAttributeCount, CK_BYTE_PTR pCiphertext,
		       CK_ULONG ulCiphertextLen, CK_OBJECT_HANDLE_PTR phKey)
{
	FORK_GUARD_3_2(C_DecapsulateKey, (hSession, pMechanism, hPrivateKey, pTemplate, ulAttributeCount, pCiphertext, ulCiphertextLen, phKey));
	return goDecapsulateKey(hSession, pMechanism, hPrivateKey, pTemplate, ulAttributeCount, pCiphertext,
				ulCiphertextLen, phKey);
}

CK_RV C_VerifySignatureInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey,
			    CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen)
{
	FORK_GUARD_3_2(C_VerifySignatureInit, (hSession, pMechanism, hKey, pSignature, ulSignatureLen));
	return goVerifySignatureInit(hSession, pMechanism, hKey, pSignature, ulSignatureLen);
}

CK_RV C_VerifySignature(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen)
{
	FORK_GUARD_3_2(C_VerifySignature, (hSession, pData, ulDataLen));
	return goVerifySignature(hSession, pData, ulDataLen);
}

CK_RV C_VerifySignatureUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen)
{
	FORK_GUARD_3_2(C_VerifySignatureUpdate, (hSession, pPart, ulPartLen));
	return goVerifySignatureUpdate(hSession, pPart, ulPartLen);
}

CK_RV C_VerifySignatureFinal(CK_SESSION_HANDLE hSession)
{
	FORK_GUARD_3_2(C_VerifySignatureFinal, (hSession));
	return goVerifySignatureFinal(hSession);
}

MODEXP_UNSUPPORTED_3_2(C_GetSessionValidationFlags,
	(CK_SESSION_HANDLE hSession, CK_SESSION_VALIDATION_FLAGS_TYPE type, CK_FLAGS_PTR pFlags),
	(hSession, type, pFlags))
MODEXP_UNSUPPORTED_3_2(C_AsyncComplete,
	(CK_SESSION_HANDLE hSession, CK_UTF8CHAR_PTR pFunctionName, CK_ASYNC_DATA_PTR pResult),
	(hSession, pFunctionName, pResult))
MODEXP_UNSUPPORTED_3_2(C_AsyncGetID,
	(CK_SESSION_HANDLE hSession, CK_UTF8CHAR_PTR pFunctionName, CK_ULONG_PTR pulID),
	(hSession, pFunctionName, pulID))
MODEXP_UNSUPPORTED_3_2(C_AsyncJoin,
	(CK_SESSION_HANDLE hSession, CK_UTF8CHAR_PTR pFunctionName, CK_ULONG ulID, CK_BYTE_PTR pData,
	 CK_ULONG ulData),
	(hSession, pFunctionName, ulID, pData, ulData))
MODEXP_UNSUPPORTED_3_2(C_WrapKeyAuthenticated,
	(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hWrappingKey,
	 CK_OBJECT_HANDLE hKey, CK_BYTE_PTR pAssociatedData, CK_ULONG ulAssociatedDataLen,
	 CK_BYTE_PTR pWrappedKey, CK_ULONG_PTR pulWrappedKeyLen),
	(hSession, pMechanism, hWrappingKey, hKey, pAssociatedData, ulAssociatedDataLen, pWrappedKey,
	 pulWrappedKeyLen))
MODEXP_UNSUPPORTED_3_2(C_UnwrapKeyAuthenticated,
	(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hUnwrappingKey,
	 CK_BYTE_PTR pWrappedKey, CK_ULONG ulWrappedKeyLen, CK_ATTRIBUTE_PTR pTemplate,
	 CK_ULONG ulAttributeCount, CK_BYTE_PTR pAssociatedData, CK_ULONG ulAssociatedDataLen,
	 CK_OBJECT_HANDLE_PTR phKey),
	(hSession, pMechanism, hUnwrappingKey, pWrappedKey, ulWrappedKeyLen, pTemplate, ulAttributeCount,
	 pAssociatedData, ulAssociatedDataLen, phKey))

/* ------------------------------------------------------------------------
 * Function lists and interfaces.
 * ---------------------------------------------------------------------- */

#define MODEXP_FUNCTIONS_2_40(getinfo, getmechlist)                                               \
	C_Initialize, C_Finalize, getinfo, C_GetFunctionList, C_GetSlotList, C_GetSlotInfo,       \
	C_GetTokenInfo, getmechlist, C_GetMechanismInfo, C_InitToken, C_InitPIN, C_SetPIN, \
	C_OpenSession, C_CloseSession, C_CloseAllSessions, C_GetSessionInfo,                      \
	C_GetOperationState, C_SetOperationState, C_Login, C_Logout, C_CreateObject,              \
	C_CopyObject, C_DestroyObject, C_GetObjectSize, C_GetAttributeValue,                      \
	C_SetAttributeValue, C_FindObjectsInit, C_FindObjects, C_FindObjectsFinal,                \
	C_EncryptInit, C_Encrypt, C_EncryptUpdate, C_EncryptFinal, C_DecryptInit, C_Decrypt,      \
	C_DecryptUpdate, C_DecryptFinal, C_DigestInit, C_Digest, C_DigestUpdate, C_DigestKey,     \
	C_DigestFinal, C_SignInit, C_Sign, C_SignUpdate, C_SignFinal, C_SignRecoverInit,          \
	C_SignRecover, C_VerifyInit, C_Verify, C_VerifyUpdate, C_VerifyFinal,                     \
	C_VerifyRecoverInit, C_VerifyRecover, C_DigestEncryptUpdate, C_DecryptDigestUpdate,       \
	C_SignEncryptUpdate, C_DecryptVerifyUpdate, C_GenerateKey, C_GenerateKeyPair, C_WrapKey,  \
	C_UnwrapKey, C_DeriveKey, C_SeedRandom, C_GenerateRandom, C_GetFunctionStatus,            \
	C_CancelFunction, C_WaitForSlotEvent

static const CK_FUNCTION_LIST modexp_functions_2_40 = {
	{2, 40},
	MODEXP_FUNCTIONS_2_40(C_GetInfo, C_GetMechanismList),
};

#define MODEXP_FUNCTIONS_3_0                                                                      \
	C_GetInterfaceList, C_GetInterface, C_LoginUser, C_SessionCancel,                         \
	C_MessageEncryptInit, C_EncryptMessage, C_EncryptMessageBegin, C_EncryptMessageNext,      \
	C_MessageEncryptFinal, C_MessageDecryptInit, C_DecryptMessage, C_DecryptMessageBegin,     \
	C_DecryptMessageNext, C_MessageDecryptFinal, C_MessageSignInit, C_SignMessage,            \
	C_SignMessageBegin, C_SignMessageNext, C_MessageSignFinal, C_MessageVerifyInit,           \
	C_VerifyMessage, C_VerifyMessageBegin, C_VerifyMessageNext, C_MessageVerifyFinal

static const CK_FUNCTION_LIST_3_0 modexp_functions_3_0 = {
	{3, 0},
	MODEXP_FUNCTIONS_2_40(modexp_GetInfo_3_0, C_GetMechanismList),
	MODEXP_FUNCTIONS_3_0,
};

static const CK_FUNCTION_LIST_3_2 modexp_functions_3_2 = {
	{
		{3, 2},
		MODEXP_FUNCTIONS_2_40(modexp_GetInfo_3_2, modexp_GetMechanismList_3_2),
		MODEXP_FUNCTIONS_3_0,
	},
	C_EncapsulateKey, C_DecapsulateKey, C_VerifySignatureInit, C_VerifySignature,
	C_VerifySignatureUpdate, C_VerifySignatureFinal, C_GetSessionValidationFlags,
	C_AsyncComplete, C_AsyncGetID, C_AsyncJoin, C_WrapKeyAuthenticated,
	C_UnwrapKeyAuthenticated,
};

static CK_UTF8CHAR modexp_interface_name[] = "PKCS 11";

/* The interfaces, default (the newest) first. Not CKF_INTERFACE_FORK_SAFE. */
#define MODEXP_NUM_INTERFACES 3
static CK_INTERFACE modexp_interfaces[MODEXP_NUM_INTERFACES] = {
	{modexp_interface_name, (CK_VOID_PTR)&modexp_functions_3_2, 0},
	{modexp_interface_name, (CK_VOID_PTR)&modexp_functions_3_0, 0},
	{modexp_interface_name, (CK_VOID_PTR)&modexp_functions_2_40, 0},
};

CK_RV C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR ppFunctionList)
{
	if (ppFunctionList == NULL)
		return CKR_ARGUMENTS_BAD;
	*ppFunctionList = (CK_FUNCTION_LIST_PTR)&modexp_functions_2_40;
	return CKR_OK;
}

CK_RV C_GetInterfaceList(CK_INTERFACE_PTR pInterfacesList, CK_ULONG_PTR pulCount)
{
	if (pulCount == NULL)
		return CKR_ARGUMENTS_BAD;
	if (pInterfacesList == NULL) {
		*pulCount = MODEXP_NUM_INTERFACES;
		return CKR_OK;
	}
	if (*pulCount < MODEXP_NUM_INTERFACES) {
		*pulCount = MODEXP_NUM_INTERFACES;
		return CKR_BUFFER_TOO_SMALL;
	}
	memcpy(pInterfacesList, modexp_interfaces, sizeof modexp_interfaces);
	*pulCount = MODEXP_NUM_INTERFACES;
	return CKR_OK;
}

/* C_GetInterface: a NULL name means the default interface, a NULL version the
 * latest; an interface must carry every flag asked for. No match is
 * CKR_ARGUMENTS_BAD. */
CK_RV C_GetInterface(CK_UTF8CHAR_PTR pInterfaceName, CK_VERSION_PTR pVersion,
		     CK_INTERFACE_PTR_PTR ppInterface, CK_FLAGS flags)
{
	if (ppInterface == NULL)
		return CKR_ARGUMENTS_BAD;
	for (int i = 0; i < MODEXP_NUM_INTERFACES; i++) {
		CK_INTERFACE *it = &modexp_interfaces[i];
		const CK_VERSION *v = (const CK_VERSION *)it->pFunctionList;
		if (pInterfaceName != NULL &&
		    strcmp((const char *)pInterfaceName, (const char *)it->pInterfaceName) != 0)
			continue;
		if (pVersion != NULL && (pVersion->major != v->major || pVersion->minor != v->minor))
			continue;
		if ((it->flags & flags) != flags)
			continue;
		*ppInterface = it;
		return CKR_OK;
	}
	*ppInterface = NULL;
	return CKR_ARGUMENTS_BAD;
}
