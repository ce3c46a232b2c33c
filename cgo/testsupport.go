//go:build modexp_testhooks

package main

// Test support: Go-typed helpers that build C structures and call the real C
// entry points, for the tests of this package (a _test.go file cannot import
// "C"). Compiled only with the build tag modexp_testhooks (make test-cgo:
// go test -tags modexp_testhooks ./cgo), which also turns on the test hooks
// of fork.c: the built library contains none of it (test/symbols_test.go).

/*
#cgo CFLAGS: -DMODEXP_TEST_HOOKS
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pkcs11_3.h"

#define TS_NUM_ENTRIES 104

static const char *ts_entry_names[TS_NUM_ENTRIES] = {
	"C_Initialize",
	"C_Finalize",
	"C_GetInfo",
	"C_GetFunctionList",
	"C_GetSlotList",
	"C_GetSlotInfo",
	"C_GetTokenInfo",
	"C_GetMechanismList",
	"C_GetMechanismInfo",
	"C_InitToken",
	"C_InitPIN",
	"C_SetPIN",
	"C_OpenSession",
	"C_CloseSession",
	"C_CloseAllSessions",
	"C_GetSessionInfo",
	"C_GetOperationState",
	"C_SetOperationState",
	"C_Login",
	"C_Logout",
	"C_CreateObject",
	"C_CopyObject",
	"C_DestroyObject",
	"C_GetObjectSize",
	"C_GetAttributeValue",
	"C_SetAttributeValue",
	"C_FindObjectsInit",
	"C_FindObjects",
	"C_FindObjectsFinal",
	"C_EncryptInit",
	"C_Encrypt",
	"C_EncryptUpdate",
	"C_EncryptFinal",
	"C_DecryptInit",
	"C_Decrypt",
	"C_DecryptUpdate",
	"C_DecryptFinal",
	"C_DigestInit",
	"C_Digest",
	"C_DigestUpdate",
	"C_DigestKey",
	"C_DigestFinal",
	"C_SignInit",
	"C_Sign",
	"C_SignUpdate",
	"C_SignFinal",
	"C_SignRecoverInit",
	"C_SignRecover",
	"C_VerifyInit",
	"C_Verify",
	"C_VerifyUpdate",
	"C_VerifyFinal",
	"C_VerifyRecoverInit",
	"C_VerifyRecover",
	"C_DigestEncryptUpdate",
	"C_DecryptDigestUpdate",
	"C_SignEncryptUpdate",
	"C_DecryptVerifyUpdate",
	"C_GenerateKey",
	"C_GenerateKeyPair",
	"C_WrapKey",
	"C_UnwrapKey",
	"C_DeriveKey",
	"C_SeedRandom",
	"C_GenerateRandom",
	"C_GetFunctionStatus",
	"C_CancelFunction",
	"C_WaitForSlotEvent",
	"C_GetInterfaceList",
	"C_GetInterface",
	"C_LoginUser",
	"C_SessionCancel",
	"C_MessageEncryptInit",
	"C_EncryptMessage",
	"C_EncryptMessageBegin",
	"C_EncryptMessageNext",
	"C_MessageEncryptFinal",
	"C_MessageDecryptInit",
	"C_DecryptMessage",
	"C_DecryptMessageBegin",
	"C_DecryptMessageNext",
	"C_MessageDecryptFinal",
	"C_MessageSignInit",
	"C_SignMessage",
	"C_SignMessageBegin",
	"C_SignMessageNext",
	"C_MessageSignFinal",
	"C_MessageVerifyInit",
	"C_VerifyMessage",
	"C_VerifyMessageBegin",
	"C_VerifyMessageNext",
	"C_MessageVerifyFinal",
	"C_EncapsulateKey",
	"C_DecapsulateKey",
	"C_VerifySignatureInit",
	"C_VerifySignature",
	"C_VerifySignatureUpdate",
	"C_VerifySignatureFinal",
	"C_GetSessionValidationFlags",
	"C_AsyncComplete",
	"C_AsyncGetID",
	"C_AsyncJoin",
	"C_WrapKeyAuthenticated",
	"C_UnwrapKeyAuthenticated"
};

static const char *ts_entry_name(int i) { return ts_entry_names[i]; }

static const CK_FUNCTION_LIST_3_0 *ts_list_3_0(void)
{
	CK_INTERFACE_PTR it = NULL;
	CK_VERSION v = {3, 0};
	if (C_GetInterface((CK_UTF8CHAR_PTR)"PKCS 11", &v, &it, 0) != CKR_OK || it == NULL)
		return NULL;
	return (const CK_FUNCTION_LIST_3_0 *)it->pFunctionList;
}

// ts_list_3_2 is the 3.2 function list (NULL on an error); extern, for
// the other test support files (testsupport_kem.go).
const CK_FUNCTION_LIST_3_2 *ts_list_3_2(void)
{
	CK_INTERFACE_PTR it = NULL;
	CK_VERSION v = {3, 2};
	if (C_GetInterface((CK_UTF8CHAR_PTR)"PKCS 11", &v, &it, 0) != CKR_OK || it == NULL)
		return NULL;
	return (const CK_FUNCTION_LIST_3_2 *)it->pFunctionList;
}

// ts_call_all calls every entry point of the 3.2 list with zero arguments
// (C_Initialize only when with_init).
static void ts_call_all(CK_RV *rv, int with_init)
{
	const CK_FUNCTION_LIST_3_2 *f32 = ts_list_3_2();
	const CK_FUNCTION_LIST_3_0 *f = &f32->base;
	int i = 0;
	rv[i++] = with_init ? f->C_Initialize(0) : CKR_OK;
	rv[i++] = f->C_Finalize(0);
	rv[i++] = f->C_GetInfo(0);
	rv[i++] = f->C_GetFunctionList(0);
	rv[i++] = f->C_GetSlotList(0, 0, 0);
	rv[i++] = f->C_GetSlotInfo(0, 0);
	rv[i++] = f->C_GetTokenInfo(0, 0);
	rv[i++] = f->C_GetMechanismList(0, 0, 0);
	rv[i++] = f->C_GetMechanismInfo(0, 0, 0);
	rv[i++] = f->C_InitToken(0, 0, 0, 0);
	rv[i++] = f->C_InitPIN(0, 0, 0);
	rv[i++] = f->C_SetPIN(0, 0, 0, 0, 0);
	rv[i++] = f->C_OpenSession(0, 0, 0, 0, 0);
	rv[i++] = f->C_CloseSession(0);
	rv[i++] = f->C_CloseAllSessions(0);
	rv[i++] = f->C_GetSessionInfo(0, 0);
	rv[i++] = f->C_GetOperationState(0, 0, 0);
	rv[i++] = f->C_SetOperationState(0, 0, 0, 0, 0);
	rv[i++] = f->C_Login(0, 0, 0, 0);
	rv[i++] = f->C_Logout(0);
	rv[i++] = f->C_CreateObject(0, 0, 0, 0);
	rv[i++] = f->C_CopyObject(0, 0, 0, 0, 0);
	rv[i++] = f->C_DestroyObject(0, 0);
	rv[i++] = f->C_GetObjectSize(0, 0, 0);
	rv[i++] = f->C_GetAttributeValue(0, 0, 0, 0);
	rv[i++] = f->C_SetAttributeValue(0, 0, 0, 0);
	rv[i++] = f->C_FindObjectsInit(0, 0, 0);
	rv[i++] = f->C_FindObjects(0, 0, 0, 0);
	rv[i++] = f->C_FindObjectsFinal(0);
	rv[i++] = f->C_EncryptInit(0, 0, 0);
	rv[i++] = f->C_Encrypt(0, 0, 0, 0, 0);
	rv[i++] = f->C_EncryptUpdate(0, 0, 0, 0, 0);
	rv[i++] = f->C_EncryptFinal(0, 0, 0);
	rv[i++] = f->C_DecryptInit(0, 0, 0);
	rv[i++] = f->C_Decrypt(0, 0, 0, 0, 0);
	rv[i++] = f->C_DecryptUpdate(0, 0, 0, 0, 0);
	rv[i++] = f->C_DecryptFinal(0, 0, 0);
	rv[i++] = f->C_DigestInit(0, 0);
	rv[i++] = f->C_Digest(0, 0, 0, 0, 0);
	rv[i++] = f->C_DigestUpdate(0, 0, 0);
	rv[i++] = f->C_DigestKey(0, 0);
	rv[i++] = f->C_DigestFinal(0, 0, 0);
	rv[i++] = f->C_SignInit(0, 0, 0);
	rv[i++] = f->C_Sign(0, 0, 0, 0, 0);
	rv[i++] = f->C_SignUpdate(0, 0, 0);
	rv[i++] = f->C_SignFinal(0, 0, 0);
	rv[i++] = f->C_SignRecoverInit(0, 0, 0);
	rv[i++] = f->C_SignRecover(0, 0, 0, 0, 0);
	rv[i++] = f->C_VerifyInit(0, 0, 0);
	rv[i++] = f->C_Verify(0, 0, 0, 0, 0);
	rv[i++] = f->C_VerifyUpdate(0, 0, 0);
	rv[i++] = f->C_VerifyFinal(0, 0, 0);
	rv[i++] = f->C_VerifyRecoverInit(0, 0, 0);
	rv[i++] = f->C_VerifyRecover(0, 0, 0, 0, 0);
	rv[i++] = f->C_DigestEncryptUpdate(0, 0, 0, 0, 0);
	rv[i++] = f->C_DecryptDigestUpdate(0, 0, 0, 0, 0);
	rv[i++] = f->C_SignEncryptUpdate(0, 0, 0, 0, 0);
	rv[i++] = f->C_DecryptVerifyUpdate(0, 0, 0, 0, 0);
	rv[i++] = f->C_GenerateKey(0, 0, 0, 0, 0);
	rv[i++] = f->C_GenerateKeyPair(0, 0, 0, 0, 0, 0, 0, 0);
	rv[i++] = f->C_WrapKey(0, 0, 0, 0, 0, 0);
	rv[i++] = f->C_UnwrapKey(0, 0, 0, 0, 0, 0, 0, 0);
	rv[i++] = f->C_DeriveKey(0, 0, 0, 0, 0, 0);
	rv[i++] = f->C_SeedRandom(0, 0, 0);
	rv[i++] = f->C_GenerateRandom(0, 0, 0);
	rv[i++] = f->C_GetFunctionStatus(0);
	rv[i++] = f->C_CancelFunction(0);
	rv[i++] = f->C_WaitForSlotEvent(0, 0, 0);
	rv[i++] = f->C_GetInterfaceList(0, 0);
	rv[i++] = f->C_GetInterface(0, 0, 0, 0);
	rv[i++] = f->C_LoginUser(0, 0, 0, 0, 0, 0);
	rv[i++] = f->C_SessionCancel(0, 0);
	rv[i++] = f->C_MessageEncryptInit(0, 0, 0);
	rv[i++] = f->C_EncryptMessage(0, 0, 0, 0, 0, 0, 0, 0, 0);
	rv[i++] = f->C_EncryptMessageBegin(0, 0, 0, 0, 0);
	rv[i++] = f->C_EncryptMessageNext(0, 0, 0, 0, 0, 0, 0, 0);
	rv[i++] = f->C_MessageEncryptFinal(0);
	rv[i++] = f->C_MessageDecryptInit(0, 0, 0);
	rv[i++] = f->C_DecryptMessage(0, 0, 0, 0, 0, 0, 0, 0, 0);
	rv[i++] = f->C_DecryptMessageBegin(0, 0, 0, 0, 0);
	rv[i++] = f->C_DecryptMessageNext(0, 0, 0, 0, 0, 0, 0, 0);
	rv[i++] = f->C_MessageDecryptFinal(0);
	rv[i++] = f->C_MessageSignInit(0, 0, 0);
	rv[i++] = f->C_SignMessage(0, 0, 0, 0, 0, 0, 0);
	rv[i++] = f->C_SignMessageBegin(0, 0, 0);
	rv[i++] = f->C_SignMessageNext(0, 0, 0, 0, 0, 0, 0);
	rv[i++] = f->C_MessageSignFinal(0);
	rv[i++] = f->C_MessageVerifyInit(0, 0, 0);
	rv[i++] = f->C_VerifyMessage(0, 0, 0, 0, 0, 0, 0);
	rv[i++] = f->C_VerifyMessageBegin(0, 0, 0);
	rv[i++] = f->C_VerifyMessageNext(0, 0, 0, 0, 0, 0, 0);
	rv[i++] = f->C_MessageVerifyFinal(0);
	rv[i++] = f32->C_EncapsulateKey(0, 0, 0, 0, 0, 0, 0, 0);
	rv[i++] = f32->C_DecapsulateKey(0, 0, 0, 0, 0, 0, 0, 0);
	rv[i++] = f32->C_VerifySignatureInit(0, 0, 0, 0, 0);
	rv[i++] = f32->C_VerifySignature(0, 0, 0);
	rv[i++] = f32->C_VerifySignatureUpdate(0, 0, 0);
	rv[i++] = f32->C_VerifySignatureFinal(0);
	rv[i++] = f32->C_GetSessionValidationFlags(0, 0, 0);
	rv[i++] = f32->C_AsyncComplete(0, 0, 0);
	rv[i++] = f32->C_AsyncGetID(0, 0, 0);
	rv[i++] = f32->C_AsyncJoin(0, 0, 0, 0, 0);
	rv[i++] = f32->C_WrapKeyAuthenticated(0, 0, 0, 0, 0, 0, 0, 0);
	rv[i++] = f32->C_UnwrapKeyAuthenticated(0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
	(void)i;
}

static CK_RV ts_mutex_create(CK_VOID_PTR_PTR m) { *m = NULL; return CKR_OK; }
static CK_RV ts_mutex_other(CK_VOID_PTR m) { (void)m; return CKR_OK; }

// ts_initialize calls C_Initialize with NULL_PTR (present == 0) or with args
// holding the callbacks selected by mask (1 create, 2 destroy, 4 lock, 8
// unlock), flags and a non-NULL pReserved when reserved.
static CK_RV ts_initialize(int present, int mask, CK_FLAGS flags, int reserved)
{
	CK_C_INITIALIZE_ARGS a;
	memset(&a, 0, sizeof a);
	if (mask & 1) a.CreateMutex = ts_mutex_create;
	if (mask & 2) a.DestroyMutex = ts_mutex_other;
	if (mask & 4) a.LockMutex = ts_mutex_other;
	if (mask & 8) a.UnlockMutex = ts_mutex_other;
	a.flags = flags;
	a.pReserved = reserved ? (CK_VOID_PTR)&a : NULL;
	return C_Initialize(present ? (CK_VOID_PTR)&a : NULL);
}

static CK_RV ts_finalize(int reserved)
{
	int x;
	return C_Finalize(reserved ? (CK_VOID_PTR)&x : NULL);
}

// ts_get_info calls C_GetInfo through the 3.2 list, the 3.0 list, the 2.40
// list or the exported symbol (which = 32, 3, 2, 0).
static CK_RV ts_get_info(int which, CK_INFO *info)
{
	CK_FUNCTION_LIST_PTR l2 = NULL;
	memset(info, 0, sizeof *info);
	switch (which) {
	case 32: return ts_list_3_2()->base.C_GetInfo(info);
	case 3: return ts_list_3_0()->C_GetInfo(info);
	case 2: C_GetFunctionList(&l2); return l2->C_GetInfo(info);
	default: return C_GetInfo(info);
	}
}

// ts_lists_check returns the number of NULL entries in both lists, or -1 if
// a list is missing.
static int ts_lists_check(CK_VERSION *v2, CK_VERSION *v3, CK_VERSION *v32, int *same_getinfo)
{
	CK_FUNCTION_LIST_PTR l2 = NULL;
	const CK_FUNCTION_LIST_3_0 *l3 = ts_list_3_0();
	const CK_FUNCTION_LIST_3_2 *l32 = ts_list_3_2();
	if (C_GetFunctionList(&l2) != CKR_OK || l2 == NULL || l3 == NULL || l32 == NULL)
		return -1;
	*v2 = l2->version;
	*v3 = l3->version;
	*v32 = l32->base.version;
	*same_getinfo = l2->C_GetInfo == l3->C_GetInfo || l3->C_GetInfo == l32->base.C_GetInfo ||
			l2->C_GetInfo == l32->base.C_GetInfo;
	// The 3.0 part of the 3.2 list is the 3.0 list's functions, in order
	// (C_GetInfo and C_GetMechanismList aside); the 3.2 entries are all set.
	{
		void (**a)(void) = (void (**)(void))&l3->C_Initialize;
		void (**b)(void) = (void (**)(void))&l32->base.C_Initialize;
		int n30 = (sizeof *l3 - sizeof(CK_VERSION)) / sizeof(void *);
		int n32 = (sizeof *l32 - sizeof(CK_VERSION)) / sizeof(void *);
		int bad = 0;
		for (int i = 0; i < n32; i++) bad += b[i] == NULL;
		for (int i = 0; i < n30; i++) // C_GetInfo and C_GetMechanismList aside
			if (i != 2 && i != 7 && a[i] != b[i]) bad++;
		if (bad != 0)
			return 1000 + bad;
	}
	int nulls = 0;
	void (**p)(void) = (void (**)(void))&l2->C_Initialize;
	int n2 = (sizeof *l2 - sizeof(CK_VERSION)) / sizeof(void *);
	for (int i = 0; i < n2; i++) nulls += p[i] == NULL;
	p = (void (**)(void))&l3->C_Initialize;
	int n3 = (sizeof *l3 - sizeof(CK_VERSION)) / sizeof(void *);
	for (int i = 0; i < n3; i++) nulls += p[i] == NULL;
	// The 2.40 part of the 3.0 list is the same functions, in the same order.
	void (**q)(void) = (void (**)(void))&l2->C_Initialize;
	for (int i = 0; i < n2; i++)
		if (i != 2 && p[i] != q[i]) nulls++;
	return nulls;
}

// ts_get_interface: name NULL when !has_name; version NULL when !has_version.
// Returns rv; *major/*minor the chosen list's version.
static CK_RV ts_get_interface(int has_name, const char *name, int has_version, int vmaj, int vmin,
			      CK_FLAGS flags, int null_pp, int *major, int *minor)
{
	CK_VERSION v = {(CK_BYTE)vmaj, (CK_BYTE)vmin};
	CK_INTERFACE_PTR it = NULL;
	CK_RV rv = C_GetInterface(has_name ? (CK_UTF8CHAR_PTR)name : NULL, has_version ? &v : NULL,
				  null_pp ? NULL : &it, flags);
	if (rv == CKR_OK && it != NULL) {
		const CK_VERSION *lv = (const CK_VERSION *)it->pFunctionList;
		*major = lv->major;
		*minor = lv->minor;
		if (strcmp((const char *)it->pInterfaceName, "PKCS 11") != 0)
			*major = -1;
	}
	return rv;
}

// ts_get_interface_list: mode 0 NULL count, 1 NULL list, 2 short list, 3 full.
static CK_RV ts_get_interface_list(int mode, CK_ULONG *count)
{
	CK_INTERFACE list[4];
	*count = mode == 2 ? 1 : 4;
	switch (mode) {
	case 0: return C_GetInterfaceList(list, NULL);
	case 1: return C_GetInterfaceList(NULL, count);
	default: return C_GetInterfaceList(list, count);
	}
}

// ts_bad_args calls entry points with NULL pointers or bad lengths; names[i]
// says which. Returns the number of calls.
static int ts_bad_args(CK_RV *rv, const char **names)
{
	int i = 0;
	CK_BYTE buf[64];
	CK_ULONG len = sizeof buf;
	CK_INFO info;
	CK_MECHANISM mech = {CKM_SHA256_RSA_PKCS_PSS, NULL, 0};
	CK_RSA_PKCS_PSS_PARAMS pss = {CKM_SHA256, CKG_MGF1_SHA256, 32};
	CK_RSA_PKCS_OAEP_PARAMS oaep = {CKM_SHA256, CKG_MGF1_SHA256, CKZ_DATA_SPECIFIED, NULL, 4};
	CK_ATTRIBUTE attr = {CKA_LABEL, NULL, 5};
	CK_OBJECT_HANDLE h;
	(void)info;
#define TS_CALL(desc, call) do { names[i] = desc; rv[i++] = (call); } while (0)
	TS_CALL("C_GetInfo(NULL)", C_GetInfo(NULL));
	TS_CALL("C_GetSlotList(count NULL)", C_GetSlotList(CK_FALSE, NULL, NULL));
	TS_CALL("C_GetSlotInfo(info NULL)", C_GetSlotInfo(1, NULL));
	TS_CALL("C_GetTokenInfo(info NULL)", C_GetTokenInfo(1, NULL));
	TS_CALL("C_GetMechanismList(count NULL)", C_GetMechanismList(1, NULL, NULL));
	TS_CALL("C_GetMechanismInfo(info NULL)", C_GetMechanismInfo(1, CKM_RSA_PKCS, NULL));
	TS_CALL("C_InitToken(label NULL)", C_InitToken(1, (CK_UTF8CHAR_PTR)"1234", 4, NULL));
	TS_CALL("C_InitToken(pin NULL, len 4)", C_InitToken(1, NULL, 4, (CK_UTF8CHAR_PTR)"label"));
	TS_CALL("C_InitPIN(pin NULL, len 4)", C_InitPIN(1, NULL, 4));
	TS_CALL("C_SetPIN(new NULL, len 4)", C_SetPIN(1, (CK_UTF8CHAR_PTR)"1234", 4, NULL, 4));
	TS_CALL("C_OpenSession(phSession NULL)", C_OpenSession(1, CKF_SERIAL_SESSION, NULL, NULL, NULL));
	TS_CALL("C_GetSessionInfo(info NULL)", C_GetSessionInfo(1, NULL));
	TS_CALL("C_Login(pin NULL, len 4)", C_Login(1, CKU_USER, NULL, 4));
	TS_CALL("C_LoginUser(username given)", C_LoginUser(1, CKU_USER, (CK_UTF8CHAR_PTR)"1234", 4, (CK_UTF8CHAR_PTR)"alice", 5));
	TS_CALL("C_CreateObject(template NULL, count 1)", C_CreateObject(1, NULL, 1, &h));
	TS_CALL("C_CreateObject(pValue NULL, len 5)", C_CreateObject(1, &attr, 1, &h));
	TS_CALL("C_CreateObject(phObject NULL)", C_CreateObject(1, NULL, 0, NULL));
	TS_CALL("C_CopyObject(phNewObject NULL)", C_CopyObject(1, 2, NULL, 0, NULL));
	TS_CALL("C_GetObjectSize(pulSize NULL)", C_GetObjectSize(1, 2, NULL));
	TS_CALL("C_GetAttributeValue(template NULL, count 1)", C_GetAttributeValue(1, 2, NULL, 1));
	TS_CALL("C_SetAttributeValue(pValue NULL, len 5)", C_SetAttributeValue(1, 2, &attr, 1));
	TS_CALL("C_FindObjectsInit(template NULL, count 1)", C_FindObjectsInit(1, NULL, 1));
	TS_CALL("C_FindObjects(count NULL)", C_FindObjects(1, &h, 1, NULL));
	TS_CALL("C_FindObjects(handles NULL, max 1)", C_FindObjects(1, NULL, 1, &len));
	TS_CALL("C_SignInit(mechanism NULL)", C_SignInit(1, NULL, 2));
	TS_CALL("C_VerifyInit(mechanism NULL)", C_VerifyInit(1, NULL, 2));
	TS_CALL("C_EncryptInit(mechanism NULL)", C_EncryptInit(1, NULL, 2));
	TS_CALL("C_DecryptInit(mechanism NULL)", C_DecryptInit(1, NULL, 2));
	TS_CALL("C_DigestInit(mechanism NULL)", C_DigestInit(1, NULL));
	mech.mechanism = CKM_SHA256_RSA_PKCS; mech.pParameter = NULL; mech.ulParameterLen = 8;
	TS_CALL("C_SignInit(pParameter NULL, len 8)", C_SignInit(1, &mech, 2));
	TS_CALL("C_Sign(pulSignatureLen NULL)", C_Sign(1, buf, 32, buf, NULL));
	TS_CALL("C_Sign(pData NULL, len 32)", C_Sign(1, NULL, 32, buf, &len));
	TS_CALL("C_SignUpdate(pPart NULL, len 32)", C_SignUpdate(1, NULL, 32));
	TS_CALL("C_SignFinal(pulSignatureLen NULL)", C_SignFinal(1, buf, NULL));
	TS_CALL("C_Verify(pSignature NULL, len 8)", C_Verify(1, buf, 32, NULL, 8));
	TS_CALL("C_VerifyFinal(pSignature NULL, len 8)", C_VerifyFinal(1, NULL, 8));
	TS_CALL("C_Encrypt(pulEncryptedDataLen NULL)", C_Encrypt(1, buf, 32, buf, NULL));
	TS_CALL("C_EncryptUpdate(pulEncryptedPartLen NULL)", C_EncryptUpdate(1, buf, 32, buf, NULL));
	TS_CALL("C_EncryptFinal(pulLastEncryptedPartLen NULL)", C_EncryptFinal(1, buf, NULL));
	TS_CALL("C_Decrypt(pEncryptedData NULL, len 32)", C_Decrypt(1, NULL, 32, buf, &len));
	TS_CALL("C_DecryptUpdate(pulPartLen NULL)", C_DecryptUpdate(1, buf, 32, buf, NULL));
	TS_CALL("C_DecryptFinal(pulLastPartLen NULL)", C_DecryptFinal(1, buf, NULL));
	TS_CALL("C_Digest(pulDigestLen NULL)", C_Digest(1, buf, 32, buf, NULL));
	TS_CALL("C_DigestUpdate(pPart NULL, len 1)", C_DigestUpdate(1, NULL, 1));
	TS_CALL("C_DigestFinal(pulDigestLen NULL)", C_DigestFinal(1, buf, NULL));
	TS_CALL("C_GenerateKeyPair(mechanism NULL)", C_GenerateKeyPair(1, NULL, NULL, 0, NULL, 0, &h, &h));
	mech.mechanism = CKM_RSA_PKCS_KEY_PAIR_GEN; mech.pParameter = NULL; mech.ulParameterLen = 0;
	TS_CALL("C_GenerateKeyPair(phPublicKey NULL)", C_GenerateKeyPair(1, &mech, NULL, 0, NULL, 0, NULL, &h));
	TS_CALL("C_GenerateKeyPair(public template NULL, count 2)", C_GenerateKeyPair(1, &mech, NULL, 2, NULL, 0, &h, &h));
	TS_CALL("C_GenerateKey(mechanism NULL)", C_GenerateKey(1, NULL, NULL, 0, &h));
	mech.mechanism = CKM_AES_KEY_GEN; mech.pParameter = NULL; mech.ulParameterLen = 0;
	TS_CALL("C_GenerateKey(phKey NULL)", C_GenerateKey(1, &mech, NULL, 0, NULL));
	TS_CALL("C_GenerateKey(template NULL, count 2)", C_GenerateKey(1, &mech, NULL, 2, &h));
	TS_CALL("C_SeedRandom(pSeed NULL, len 4)", C_SeedRandom(1, NULL, 4));
	TS_CALL("C_GenerateRandom(pRandomData NULL, len 4)", C_GenerateRandom(1, NULL, 4));
	// Mechanism parameters of the wrong size.
	mech.mechanism = CKM_SHA256_RSA_PKCS_PSS; mech.pParameter = &pss; mech.ulParameterLen = sizeof pss - 1;
	TS_CALL("PARAM C_SignInit(PSS params, len short by 1)", C_SignInit(1, &mech, 2));
	mech.ulParameterLen = sizeof pss + 8;
	TS_CALL("PARAM C_VerifyInit(PSS params, len long by 8)", C_VerifyInit(1, &mech, 2));
	mech.mechanism = CKM_RSA_PKCS_PSS; mech.pParameter = NULL; mech.ulParameterLen = 0;
	TS_CALL("PARAM C_SignInit(RSA_PKCS_PSS without params)", C_SignInit(1, &mech, 2));
	mech.mechanism = CKM_RSA_PKCS_OAEP; mech.pParameter = &oaep; mech.ulParameterLen = sizeof oaep - 8;
	TS_CALL("PARAM C_EncryptInit(OAEP params, len short by 8)", C_EncryptInit(1, &mech, 2));
	mech.ulParameterLen = sizeof oaep;
	TS_CALL("PARAM C_DecryptInit(OAEP pSourceData NULL, len 4)", C_DecryptInit(1, &mech, 2));
#undef TS_CALL
	return i;
}

// The copy a forked child loads, faked: the test binary is no library to
// load again, so fork.c is given ts_fake_getinterface
// (modexp_fork_test_set_getinterface) as the copy's C_GetInterface, and these
// tests check its state machine. The fake counts its C_Initialize calls in
// this process and answers C_GetInfo with a manufacturer of "fake copy" and
// the version of the list it was called through, C_Sign with
// CKR_DATA_INVALID and C_LoginUser with CKR_USER_TYPE_INVALID (values no
// other path returns).
void modexp_fork_test_set_getinterface(CK_C_GetInterface fn);
void modexp_fork_test_set_module(const char *path);

static int ts_fake_inits;
static CK_RV ts_fake_Initialize(CK_VOID_PTR a) { (void)a; ts_fake_inits++; return CKR_OK; }
static CK_RV ts_fake_Finalize(CK_VOID_PTR r) { (void)r; return CKR_OK; }
static void ts_fake_info(CK_INFO_PTR p, int major, int minor)
{
	memset(p, ' ', sizeof *p);
	memcpy(p->manufacturerID, "fake copy", 9);
	p->cryptokiVersion.major = major;
	p->cryptokiVersion.minor = minor;
}
static CK_RV ts_fake_GetInfo_240(CK_INFO_PTR p) { ts_fake_info(p, 2, 40); return CKR_OK; }
static CK_RV ts_fake_GetInfo_30(CK_INFO_PTR p) { ts_fake_info(p, 3, 0); return CKR_OK; }
static CK_RV ts_fake_GetInfo_32(CK_INFO_PTR p) { ts_fake_info(p, 3, 2); return CKR_OK; }
static CK_RV ts_fake_Sign(CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dl, CK_BYTE_PTR s, CK_ULONG_PTR sl)
{
	(void)h; (void)d; (void)dl; (void)s; (void)sl;
	return CKR_DATA_INVALID;
}
static CK_RV ts_fake_LoginUser(CK_SESSION_HANDLE h, CK_USER_TYPE u, CK_UTF8CHAR_PTR p, CK_ULONG pl,
			       CK_UTF8CHAR_PTR n, CK_ULONG nl)
{
	(void)h; (void)u; (void)p; (void)pl; (void)n; (void)nl;
	return CKR_USER_TYPE_INVALID;
}
static CK_FUNCTION_LIST_3_2 ts_fake_32;
static CK_FUNCTION_LIST_3_0 ts_fake_30;
static CK_FUNCTION_LIST ts_fake_240;
static CK_INTERFACE ts_fake_ifs[3];
static CK_UTF8CHAR ts_fake_name[] = "PKCS 11";
static CK_RV ts_fake_getinterface(CK_UTF8CHAR_PTR name, CK_VERSION_PTR v, CK_INTERFACE_PTR_PTR pp, CK_FLAGS flags)
{
	(void)name; (void)flags;
	ts_fake_32.base.version.major = 3; ts_fake_32.base.version.minor = 2;
	ts_fake_32.base.C_Initialize = ts_fake_Initialize;
	ts_fake_32.base.C_Finalize = ts_fake_Finalize;
	ts_fake_32.base.C_GetInfo = ts_fake_GetInfo_32;
	ts_fake_32.base.C_Sign = ts_fake_Sign;
	ts_fake_32.base.C_LoginUser = ts_fake_LoginUser;
	ts_fake_30 = ts_fake_32.base;
	ts_fake_30.version.minor = 0;
	ts_fake_30.C_GetInfo = ts_fake_GetInfo_30;
	ts_fake_240.version.major = 2; ts_fake_240.version.minor = 40;
	ts_fake_240.C_Initialize = ts_fake_Initialize;
	ts_fake_240.C_Finalize = ts_fake_Finalize;
	ts_fake_240.C_GetInfo = ts_fake_GetInfo_240;
	ts_fake_240.C_Sign = ts_fake_Sign;
	void *lists[3] = {&ts_fake_32, &ts_fake_30, &ts_fake_240};
	for (int i = 0; i < 3; i++) {
		const CK_VERSION *lv = lists[i];
		if (v->major == lv->major && v->minor == lv->minor) {
			ts_fake_ifs[i].pInterfaceName = ts_fake_name;
			ts_fake_ifs[i].pFunctionList = lists[i];
			*pp = &ts_fake_ifs[i];
			return CKR_OK;
		}
	}
	return CKR_ARGUMENTS_BAD;
}

// ts_fake_client selects the fake copy (1), the real path with a module
// that cannot be served (0: the library file is missing), or the defaults
// (-1).
static void ts_fake_client(int on)
{
	modexp_fork_test_set_getinterface(on == 1 ? ts_fake_getinterface : NULL);
	modexp_fork_test_set_module(on == 0 ? "/nonexistent/libmodexp-pkcs11.so" : NULL);
}

#define TS_FORK_MAX 16

// ts_fork_script runs one script in a forked child (script 3: in a
// grandchild too) and reports the return values through a pipe; for
// C_GetInfo it reports 0 only when the fake copy answered. Scripts:
//   0: C_Initialize, C_GetInfo, C_GetSlotList, C_Sign, C_Finalize
//   1: C_GetInfo, C_Initialize, C_Sign, C_LoginUser, C_Finalize, C_GetInfo,
//      C_Finalize, C_Initialize, C_Initialize, fake C_Initialize count
//   2: C_Finalize, C_GetInfo, C_Initialize, C_GetInfo
//   3: C_Initialize, then in a grandchild: C_GetInfo, fake C_Initialize
//      count, C_Initialize
// The parent waits at most timeout_ms. Returns the number of values, -1
// when the child hung (it is killed), -2 on a short report or a bad exit,
// -3 on a failing fork or pipe.
static int ts_fork_script(int script, CK_RV *out, int timeout_ms)
{
	int p[2];
	if (pipe(p) != 0)
		return -3;
	pid_t pid = fork();
	if (pid < 0)
		return -3;
	if (pid == 0) {
		CK_RV r[TS_FORK_MAX];
		int n = 0;
		CK_INFO info;
		CK_ULONG count = 0;
		CK_BYTE data[32] = {0}, sig[512];
		CK_ULONG siglen = sizeof sig;
		close(p[0]);
#define TS_INFO() (C_GetInfo(&info) == CKR_OK ? (memcmp(info.manufacturerID, "fake copy", 9) == 0 && info.cryptokiVersion.major == 2 && info.cryptokiVersion.minor == 40 ? CKR_OK : CKR_FUNCTION_FAILED) : C_GetInfo(&info))
		switch (script) {
		case 0:
			r[n++] = C_Initialize(NULL);
			r[n++] = C_GetInfo(&info);
			r[n++] = C_GetSlotList(CK_FALSE, NULL, &count);
			r[n++] = C_Sign(1, data, sizeof data, sig, &siglen);
			r[n++] = C_Finalize(NULL);
			break;
		case 1:
			r[n++] = TS_INFO();
			r[n++] = C_Initialize(NULL);
			r[n++] = C_Sign(1, data, sizeof data, sig, &siglen);
			r[n++] = C_LoginUser(1, CKU_USER, NULL, 0, NULL, 0);
			r[n++] = C_Finalize(NULL);
			r[n++] = C_GetInfo(&info);
			r[n++] = C_Finalize(NULL);
			r[n++] = C_Initialize(NULL);
			r[n++] = C_Initialize(NULL);
			r[n++] = (CK_RV)ts_fake_inits;
			break;
		case 2:
			r[n++] = C_Finalize(NULL);
			r[n++] = C_GetInfo(&info);
			r[n++] = C_Initialize(NULL);
			r[n++] = TS_INFO();
			break;
		case 3: {
			r[n++] = C_Initialize(NULL);
			int q[2];
			if (pipe(q) != 0)
				_exit(3);
			pid_t g = fork();
			if (g == 0) {
				CK_RV gr[3];
				gr[0] = TS_INFO();
				gr[1] = (CK_RV)ts_fake_inits;
				gr[2] = C_Initialize(NULL);
				if (write(q[1], gr, sizeof gr) != (ssize_t)sizeof gr)
					_exit(2);
				_exit(0);
			}
			close(q[1]);
			if (read(q[0], r + n, 3 * sizeof(CK_RV)) != 3 * (ssize_t)sizeof(CK_RV))
				_exit(4);
			n += 3;
			waitpid(g, NULL, 0);
			break;
		}
		}
#undef TS_INFO
		if (write(p[1], r, n * sizeof(CK_RV)) != (ssize_t)(n * sizeof(CK_RV)))
			_exit(2);
		_exit(0);
	}
	close(p[1]);
	struct pollfd pfd = {p[0], POLLIN, 0};
	int got = 0;
	int want = TS_FORK_MAX * (int)sizeof(CK_RV);
	for (;;) {
		if (poll(&pfd, 1, timeout_ms) <= 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			close(p[0]);
			return -1;
		}
		ssize_t n = read(p[0], (char *)out + got, want - got);
		if (n <= 0)
			break;
		got += n;
	}
	close(p[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	if (got % (int)sizeof(CK_RV) != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -2;
	return got / (int)sizeof(CK_RV);
}
*/
import "C"

import (
	"unsafe"

	"github.com/modexp-token/modexp-token/token"
)

// tsEntryNames lists the 3.0 function list's entries in order.
func tsEntryNames() []string {
	names := make([]string, C.TS_NUM_ENTRIES)
	for i := range names {
		names[i] = C.GoString(C.ts_entry_name(C.int(i)))
	}
	return names
}

// tsCallAll calls every entry point with zero arguments.
func tsCallAll(withInit bool) []uint64 {
	var rv [C.TS_NUM_ENTRIES]C.CK_RV
	w := C.int(0)
	if withInit {
		w = 1
	}
	C.ts_call_all(&rv[0], w)
	out := make([]uint64, len(rv))
	for i, r := range rv {
		out[i] = uint64(r)
	}
	return out
}

// tsInitialize calls C_Initialize; see ts_initialize.
func tsInitialize(present bool, mask int, flags uint64, reserved bool) uint64 {
	return uint64(C.ts_initialize(cbool(present), C.int(mask), C.CK_FLAGS(flags), cbool(reserved)))
}

// tsFinalize calls C_Finalize.
func tsFinalize(reserved bool) uint64 { return uint64(C.ts_finalize(cbool(reserved))) }

// tsInfo is the part of CK_INFO the tests look at.
type tsInfo struct {
	Major, Minor              byte
	Manufacturer, Description []byte
}

// tsGetInfo calls C_GetInfo through the 3.0 list (3), the 2.40 list (2) or
// the exported symbol (0).
func tsGetInfo(which int) (uint64, tsInfo) {
	var info C.CK_INFO
	rv := C.ts_get_info(C.int(which), &info)
	return uint64(rv), tsInfo{
		Major:        byte(info.cryptokiVersion.major),
		Minor:        byte(info.cryptokiVersion.minor),
		Manufacturer: C.GoBytes(unsafe.Pointer(&info.manufacturerID[0]), 32),
		Description:  C.GoBytes(unsafe.Pointer(&info.libraryDescription[0]), 32),
	}
}

// tsListsCheck reports the two lists' versions, whether they share C_GetInfo,
// and how many entries are NULL or differ between the lists' 2.40 parts.
func tsListsCheck() (v2, v3, v32 [2]byte, sameGetInfo bool, bad int) {
	var a, b, c C.CK_VERSION
	var same C.int
	n := C.ts_lists_check(&a, &b, &c, &same)
	return [2]byte{byte(a.major), byte(a.minor)}, [2]byte{byte(b.major), byte(b.minor)},
		[2]byte{byte(c.major), byte(c.minor)}, same != 0, int(n)
}

// tsGetInterface calls C_GetInterface; name and version nil mean NULL_PTR.
func tsGetInterface(name *string, version *[2]byte, flags uint64, nullPP bool) (rv uint64, major, minor int) {
	var cname *C.char
	if name != nil {
		cname = C.CString(*name)
		defer C.free(unsafe.Pointer(cname))
	}
	var hasV, vmaj, vmin C.int
	if version != nil {
		hasV, vmaj, vmin = 1, C.int(version[0]), C.int(version[1])
	}
	var cmaj, cmin C.int = -2, -2
	r := C.ts_get_interface(cbool(name != nil), cname, hasV, vmaj, vmin, C.CK_FLAGS(flags), cbool(nullPP), &cmaj, &cmin)
	return uint64(r), int(cmaj), int(cmin)
}

// tsGetInterfaceList calls C_GetInterfaceList; see ts_get_interface_list.
func tsGetInterfaceList(mode int) (uint64, uint64) {
	var count C.CK_ULONG
	rv := C.ts_get_interface_list(C.int(mode), &count)
	return uint64(rv), uint64(count)
}

// tsBadArgs runs ts_bad_args.
func tsBadArgs() (names []string, rvs []uint64) {
	var rv [128]C.CK_RV
	var cn [128]*C.char
	n := int(C.ts_bad_args(&rv[0], &cn[0]))
	for i := 0; i < n; i++ {
		names = append(names, C.GoString(cn[i]))
		rvs = append(rvs, uint64(rv[i]))
	}
	return names, rvs
}

// tsForkScript runs ts_fork_script with the fake client (fake) or with a
// module that cannot be served; status is the count of values or a negative
// ts_fork_script error.
func tsForkScript(script int, fake bool, timeoutMS int) (status int, rvs []uint64) {
	var out [C.TS_FORK_MAX]C.CK_RV
	on := 0
	if fake {
		on = 1
	}
	C.ts_fake_client(C.int(on))
	defer C.ts_fake_client(-1)
	status = int(C.ts_fork_script(C.int(script), &out[0], C.int(timeoutMS)))
	for i := 0; i < status; i++ {
		rvs = append(rvs, uint64(out[i]))
	}
	return status, rvs
}

// tsGetSlotList calls C_GetSlotList: query (NULL list) or with room for
// capacity slots.
func tsGetSlotList(query bool, capacity int) (rv uint64, count uint64, slots []uint64) {
	buf := make([]C.CK_SLOT_ID, capacity+1)
	var list *C.CK_SLOT_ID
	if !query {
		list = &buf[0]
	}
	cnt := C.CK_ULONG(capacity)
	r := C.C_GetSlotList(C.CK_FALSE, list, &cnt)
	if r == C.CKR_OK && !query {
		for _, s := range buf[:cnt] {
			slots = append(slots, uint64(s))
		}
	}
	return uint64(r), uint64(cnt), slots
}

// tsOpenSession opens a session on slot.
func tsOpenSession(slot uint64, flags uint64) (uint64, uint64) {
	var h C.CK_SESSION_HANDLE
	rv := C.C_OpenSession(C.CK_SLOT_ID(slot), C.CK_FLAGS(flags), nil, nil, &h)
	return uint64(rv), uint64(h)
}

// tsCloseSession closes a session.
func tsCloseSession(h uint64) uint64 { return uint64(C.C_CloseSession(C.CK_SESSION_HANDLE(h))) }

// tsDigestInit starts a digest without parameters.
func tsDigestInit(h, mech uint64) uint64 {
	m := C.CK_MECHANISM{mechanism: C.CK_MECHANISM_TYPE(mech)}
	return uint64(C.C_DigestInit(C.CK_SESSION_HANDLE(h), &m))
}

// tsDigest calls C_Digest with a NULL output (query) or a buffer of
// capacity bytes.
func tsDigest(h uint64, data []byte, query bool, capacity int) (rv, outLen uint64, out []byte) {
	in := C.CBytes(data)
	defer C.free(in)
	buf := (*C.CK_BYTE)(C.malloc(C.size_t(capacity + 1)))
	defer C.free(unsafe.Pointer(buf))
	p := buf
	if query {
		p = nil
	}
	l := C.CK_ULONG(capacity)
	r := C.C_Digest(C.CK_SESSION_HANDLE(h), (*C.CK_BYTE)(in), C.CK_ULONG(len(data)), p, &l)
	if r == C.CKR_OK && !query {
		out = C.GoBytes(unsafe.Pointer(buf), C.int(l))
	}
	return uint64(r), uint64(l), out
}

// tsGenerateRandom calls C_GenerateRandom for n bytes.
func tsGenerateRandom(h uint64, n int) (uint64, []byte) {
	buf := C.malloc(C.size_t(n + 1))
	defer C.free(buf)
	r := C.C_GenerateRandom(C.CK_SESSION_HANDLE(h), (*C.CK_BYTE)(buf), C.CK_ULONG(n))
	return uint64(r), C.GoBytes(buf, C.int(n))
}

// tsPad runs pad on an n-byte field.
func tsPad(n int, s string) []byte {
	dst := make([]C.uchar, n)
	pad(dst, s)
	out := make([]byte, n)
	for i, c := range dst {
		out[i] = byte(c)
	}
	return out
}

// tsPutOut runs putOut with a C buffer of capacity bytes (NULL when null).
func tsPutOut(null bool, capacity uint64, data []byte, need int, err error) (rv, outLen uint64, written []byte) {
	buf := (*C.CK_BYTE)(C.malloc(C.size_t(len(data) + 64)))
	defer C.free(unsafe.Pointer(buf))
	p := buf
	if null {
		p = nil
	}
	l := C.CK_ULONG(capacity)
	r := putOut(p, &l, data, need, err)
	if r == C.CKR_OK && !null {
		written = C.GoBytes(unsafe.Pointer(buf), C.int(l))
	}
	return uint64(r), uint64(l), written
}

// tsOutOf runs outOf on a C buffer of length bytes (or NULL) and a length
// (or NULL); aliased reports whether Out.Buf is that buffer, all of it. The
// buffer is as long as the length says, as a caller's is: a shorter one
// would make outOf's view reach past it (checkptr, under -race, rejects a
// view of Go memory that does).
func tsOutOf(nullBuf, nullLen bool, length uint64) (out token.Out, ok, aliased bool) {
	var p *C.CK_BYTE
	if !nullBuf {
		p = (*C.CK_BYTE)(C.malloc(C.size_t(max(length, 1))))
		defer C.free(unsafe.Pointer(p))
	}
	l := C.CK_ULONG(length)
	pl := &l
	if nullLen {
		pl = nil
	}
	out, ok = outOf(p, pl)
	aliased = p != nil && len(out.Buf) == out.Cap && out.Cap > 0 &&
		unsafe.Pointer(&out.Buf[0]) == unsafe.Pointer(p)
	return out, ok, aliased
}

// tsAttr describes one attribute of a C template built by tsTemplate.
type tsAttr struct {
	Type    uint64
	Value   []byte
	NullPtr bool   // pValue NULL_PTR
	Len     uint64 // ulValueLen when non-zero, else len(Value)
}

// tsTemplate builds a C template, runs templateIn, then overwrites the C
// memory: the result must not change (values are copies).
func tsTemplate(spec []tsAttr, nullTemplate bool) ([]token.Attribute, uint64) {
	n := len(spec)
	attrs := (*C.CK_ATTRIBUTE)(C.calloc(C.size_t(n+1), C.size_t(unsafe.Sizeof(C.CK_ATTRIBUTE{}))))
	defer C.free(unsafe.Pointer(attrs))
	as := unsafe.Slice(attrs, n+1)
	for i, a := range spec {
		as[i]._type = C.CK_ATTRIBUTE_TYPE(a.Type)
		if !a.NullPtr {
			as[i].pValue = C.CBytes(append(a.Value, 0))
		}
		as[i].ulValueLen = C.CK_ULONG(len(a.Value))
		if a.Len != 0 {
			as[i].ulValueLen = C.CK_ULONG(a.Len)
		}
	}
	p := attrs
	if nullTemplate {
		p = nil
	}
	got, rv := templateIn(p, C.CK_ULONG(n))
	for i, a := range spec {
		if as[i].pValue != nil {
			C.memset(as[i].pValue, 0xEE, C.size_t(len(a.Value)))
			C.free(as[i].pValue)
		}
	}
	return got, uint64(rv)
}

// tsMech describes a CK_MECHANISM built by tsMechanism.
type tsMech struct {
	Type       uint64
	Kind       int // 0 raw bytes in Raw, 1 CK_RSA_PKCS_PSS_PARAMS, 2 CK_RSA_PKCS_OAEP_PARAMS, 3 CK_ECDH1_DERIVE_PARAMS, 4 CK_EDDSA_PARAMS, 5 CK_HKDF_PARAMS, 6 CK_SIGN_ADDITIONAL_CONTEXT, 7 CK_HASH_SIGN_ADDITIONAL_CONTEXT
	Raw        []byte
	PSS        token.PSSParams
	OAEP       token.OAEPParams        // SourceData copied into C memory
	ECDH       token.ECDH1DeriveParams // SharedData, PublicData copied into C memory
	EdDSA      token.EdDSAParams       // Context copied into C memory (the ECDH public data's slot)
	HKDF       token.HKDFParams        // Salt (the ECDH shared data's slot) and Info (the public data's) copied into C memory
	HKDFBools  [2]byte                 // bExtract, bExpand as given when non-zero (else from HKDF)
	Sign       token.SignContextParams // Context copied into C memory (the ECDH public data's slot); Hash for Kind 7
	SourceNull bool                    // OAEP pSourceData (ECDH pPublicData) NULL with its length given
	LenDelta   int                     // added to ulParameterLen
	NullParam  bool                    // pParameter NULL (ulParameterLen as computed)
	NullMech   bool                    // pMechanism NULL
}

// tsMechanism builds a C mechanism, runs mechanismIn, then overwrites the C
// memory: the result must not change.
func tsMechanism(s tsMech) (*token.Mechanism, uint64) {
	var m C.CK_MECHANISM
	m.mechanism = C.CK_MECHANISM_TYPE(s.Type)
	var param unsafe.Pointer
	var plen int
	var src, src2 unsafe.Pointer
	switch s.Kind {
	case 0:
		if len(s.Raw) > 0 {
			param, plen = C.CBytes(s.Raw), len(s.Raw)
		}
	case 1:
		p := (*C.CK_RSA_PKCS_PSS_PARAMS)(C.calloc(1, C.size_t(unsafe.Sizeof(C.CK_RSA_PKCS_PSS_PARAMS{}))+16))
		p.hashAlg = C.CK_MECHANISM_TYPE(s.PSS.Hash)
		p.mgf = C.CK_RSA_PKCS_MGF_TYPE(s.PSS.MGF)
		p.sLen = C.CK_ULONG(s.PSS.SaltLen)
		param, plen = unsafe.Pointer(p), int(unsafe.Sizeof(*p))
	case 2:
		p := (*C.CK_RSA_PKCS_OAEP_PARAMS)(C.calloc(1, C.size_t(unsafe.Sizeof(C.CK_RSA_PKCS_OAEP_PARAMS{}))+16))
		p.hashAlg = C.CK_MECHANISM_TYPE(s.OAEP.Hash)
		p.mgf = C.CK_RSA_PKCS_MGF_TYPE(s.OAEP.MGF)
		p.source = C.CK_RSA_PKCS_OAEP_SOURCE_TYPE(s.OAEP.Source)
		if len(s.OAEP.SourceData) > 0 && !s.SourceNull {
			src = C.CBytes(s.OAEP.SourceData)
			p.pSourceData = src
		}
		p.ulSourceDataLen = C.CK_ULONG(len(s.OAEP.SourceData))
		param, plen = unsafe.Pointer(p), int(unsafe.Sizeof(*p))
	case 3:
		p := (*C.CK_ECDH1_DERIVE_PARAMS)(C.calloc(1, C.size_t(unsafe.Sizeof(C.CK_ECDH1_DERIVE_PARAMS{}))+16))
		p.kdf = C.ck_ec_kdf_t(s.ECDH.KDF)
		if len(s.ECDH.SharedData) > 0 {
			src2 = C.CBytes(s.ECDH.SharedData)
			p.pSharedData = (*C.CK_BYTE)(src2)
		}
		p.ulSharedDataLen = C.CK_ULONG(len(s.ECDH.SharedData))
		if len(s.ECDH.PublicData) > 0 && !s.SourceNull {
			src = C.CBytes(s.ECDH.PublicData)
			p.pPublicData = (*C.CK_BYTE)(src)
		}
		p.ulPublicDataLen = C.CK_ULONG(len(s.ECDH.PublicData))
		param, plen = unsafe.Pointer(p), int(unsafe.Sizeof(*p))
	case 4:
		p := (*C.CK_EDDSA_PARAMS)(C.calloc(1, C.size_t(unsafe.Sizeof(C.CK_EDDSA_PARAMS{}))+16))
		if s.EdDSA.PH {
			p.phFlag = 1
		}
		if len(s.EdDSA.Context) > 0 && !s.SourceNull {
			src = C.CBytes(s.EdDSA.Context)
			p.pContextData = (*C.CK_BYTE)(src)
		}
		p.ulContextDataLen = C.CK_ULONG(len(s.EdDSA.Context))
		param, plen = unsafe.Pointer(p), int(unsafe.Sizeof(*p))
	case 5:
		p := (*C.CK_HKDF_PARAMS)(C.calloc(1, C.size_t(unsafe.Sizeof(C.CK_HKDF_PARAMS{}))+16))
		p.bExtract, p.bExpand = C.CK_BBOOL(s.HKDFBools[0]), C.CK_BBOOL(s.HKDFBools[1])
		if s.HKDFBools[0] == 0 && s.HKDF.Extract {
			p.bExtract = 1
		}
		if s.HKDFBools[1] == 0 && s.HKDF.Expand {
			p.bExpand = 1
		}
		p.prfHashMechanism = C.CK_MECHANISM_TYPE(s.HKDF.PRF)
		p.ulSaltType = C.CK_ULONG(s.HKDF.SaltType)
		p.hSaltKey = C.CK_OBJECT_HANDLE(s.HKDF.SaltKey)
		if len(s.HKDF.Salt) > 0 {
			src2 = C.CBytes(s.HKDF.Salt)
			p.pSalt = (*C.CK_BYTE)(src2)
		}
		p.ulSaltLen = C.CK_ULONG(len(s.HKDF.Salt))
		if len(s.HKDF.Info) > 0 && !s.SourceNull {
			src = C.CBytes(s.HKDF.Info)
			p.pInfo = (*C.CK_BYTE)(src)
		}
		p.ulInfoLen = C.CK_ULONG(len(s.HKDF.Info))
		param, plen = unsafe.Pointer(p), int(unsafe.Sizeof(*p))
	case 6:
		p := (*C.CK_SIGN_ADDITIONAL_CONTEXT)(C.calloc(1, C.size_t(unsafe.Sizeof(C.CK_SIGN_ADDITIONAL_CONTEXT{}))+16))
		p.hedgeVariant = C.CK_HEDGE_TYPE(s.Sign.Hedge)
		if len(s.Sign.Context) > 0 && !s.SourceNull {
			src = C.CBytes(s.Sign.Context)
			p.pContext = (*C.CK_BYTE)(src)
		}
		p.ulContextLen = C.CK_ULONG(len(s.Sign.Context))
		param, plen = unsafe.Pointer(p), int(unsafe.Sizeof(*p))
	case 7:
		p := (*C.CK_HASH_SIGN_ADDITIONAL_CONTEXT)(C.calloc(1, C.size_t(unsafe.Sizeof(C.CK_HASH_SIGN_ADDITIONAL_CONTEXT{}))+16))
		p.hedgeVariant = C.CK_HEDGE_TYPE(s.Sign.Hedge)
		p.hash = C.CK_MECHANISM_TYPE(s.Sign.Hash)
		if len(s.Sign.Context) > 0 && !s.SourceNull {
			src = C.CBytes(s.Sign.Context)
			p.pContext = (*C.CK_BYTE)(src)
		}
		p.ulContextLen = C.CK_ULONG(len(s.Sign.Context))
		param, plen = unsafe.Pointer(p), int(unsafe.Sizeof(*p))
	}
	if !s.NullParam {
		m.pParameter = param
	}
	m.ulParameterLen = C.CK_ULONG(plen + s.LenDelta)
	pm := &m
	if s.NullMech {
		pm = nil
	}
	got, rv := mechanismIn(pm)
	for _, b := range []struct {
		p unsafe.Pointer
		n int
	}{{src, len(s.OAEP.SourceData) + len(s.ECDH.PublicData) + len(s.EdDSA.Context) + len(s.HKDF.Info) + len(s.Sign.Context)},
		{src2, len(s.ECDH.SharedData) + len(s.HKDF.Salt)}} {
		if b.p != nil {
			C.memset(b.p, 0xEE, C.size_t(b.n))
			C.free(b.p)
		}
	}
	if param != nil {
		C.memset(param, 0xEE, C.size_t(plen))
		C.free(param)
	}
	return got, uint64(rv)
}

// tsOutAttr is one attribute of a GetAttributeValue template.
type tsOutAttr struct {
	Type      uint64
	NullValue bool // pValue NULL_PTR: a length query
	Cap       int  // buffer size otherwise
}

// tsFillAttributes builds the caller's template, runs fillAttributes with
// the token's results and returns each ulValueLen and the bytes written.
func tsFillAttributes(spec []tsOutAttr, res []token.AttributeResult) (rv uint64, lens []uint64, values [][]byte) {
	n := len(spec)
	attrs := (*C.CK_ATTRIBUTE)(C.calloc(C.size_t(n+1), C.size_t(unsafe.Sizeof(C.CK_ATTRIBUTE{}))))
	defer C.free(unsafe.Pointer(attrs))
	as := unsafe.Slice(attrs, n+1)[:n]
	for i, s := range spec {
		as[i]._type = C.CK_ATTRIBUTE_TYPE(s.Type)
		if !s.NullValue {
			as[i].pValue = C.calloc(C.size_t(s.Cap+1), 1)
			defer C.free(as[i].pValue)
		}
		as[i].ulValueLen = C.CK_ULONG(s.Cap)
	}
	r := fillAttributes(as, res)
	for i := range as {
		lens = append(lens, uint64(as[i].ulValueLen))
		var v []byte
		if as[i].pValue != nil && as[i].ulValueLen != unavailable {
			v = C.GoBytes(as[i].pValue, C.int(as[i].ulValueLen))
		}
		values = append(values, v)
	}
	return uint64(r), lens, values
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
