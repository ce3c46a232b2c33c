/*
 * common.h: what badargs.c and stress.c share: loading the module through
 * C_GetInterface (3.0) and C_GetFunctionList (2.40), names of return values,
 * a token set-up (C_InitToken and C_InitPIN when the token is blank), key
 * generation and hex output. Header-only (static functions): each program
 * is one translation unit.
 */
#ifndef STRESS_COMMON_H
#define STRESS_COMMON_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pkcs11_3.h"

static CK_FUNCTION_LIST_3_0 *F3; /* the 3.0 list, from C_GetInterface */
static CK_FUNCTION_LIST *F2;     /* the 2.40 list, from C_GetFunctionList */
static CK_C_GetFunctionList sym_GetFunctionList;
static CK_C_GetInterface sym_GetInterface;
static CK_C_GetInterfaceList sym_GetInterfaceList;

/* rvname names the return values these programs meet; others print as hex. */
static const char *rvname(CK_RV rv)
{
	static __thread char buf[32];
	switch (rv) {
#define N(x) case x: return #x;
	N(CKR_OK) N(CKR_CANCEL) N(CKR_HOST_MEMORY) N(CKR_SLOT_ID_INVALID) N(CKR_GENERAL_ERROR)
	N(CKR_FUNCTION_FAILED) N(CKR_ARGUMENTS_BAD) N(CKR_NO_EVENT) N(CKR_NEED_TO_CREATE_THREADS)
	N(CKR_CANT_LOCK) N(CKR_ATTRIBUTE_READ_ONLY) N(CKR_ATTRIBUTE_SENSITIVE)
	N(CKR_ATTRIBUTE_TYPE_INVALID) N(CKR_ATTRIBUTE_VALUE_INVALID) N(CKR_ACTION_PROHIBITED)
	N(CKR_DATA_INVALID) N(CKR_DATA_LEN_RANGE) N(CKR_DEVICE_ERROR) N(CKR_DEVICE_MEMORY)
	N(CKR_DEVICE_REMOVED) N(CKR_ENCRYPTED_DATA_INVALID) N(CKR_ENCRYPTED_DATA_LEN_RANGE)
	N(CKR_FUNCTION_CANCELED) N(CKR_FUNCTION_NOT_PARALLEL) N(CKR_FUNCTION_NOT_SUPPORTED)
	N(CKR_KEY_HANDLE_INVALID) N(CKR_KEY_SIZE_RANGE) N(CKR_KEY_TYPE_INCONSISTENT)
	N(CKR_KEY_NOT_NEEDED) N(CKR_KEY_CHANGED) N(CKR_KEY_NEEDED) N(CKR_KEY_INDIGESTIBLE)
	N(CKR_KEY_FUNCTION_NOT_PERMITTED) N(CKR_KEY_NOT_WRAPPABLE) N(CKR_KEY_UNEXTRACTABLE)
	N(CKR_MECHANISM_INVALID) N(CKR_MECHANISM_PARAM_INVALID) N(CKR_OBJECT_HANDLE_INVALID)
	N(CKR_OPERATION_ACTIVE) N(CKR_OPERATION_NOT_INITIALIZED) N(CKR_PIN_INCORRECT)
	N(CKR_PIN_INVALID) N(CKR_PIN_LEN_RANGE) N(CKR_PIN_EXPIRED) N(CKR_PIN_LOCKED)
	N(CKR_SESSION_CLOSED) N(CKR_SESSION_COUNT) N(CKR_SESSION_HANDLE_INVALID)
	N(CKR_SESSION_PARALLEL_NOT_SUPPORTED) N(CKR_SESSION_READ_ONLY) N(CKR_SESSION_EXISTS)
	N(CKR_SESSION_READ_ONLY_EXISTS) N(CKR_SESSION_READ_WRITE_SO_EXISTS)
	N(CKR_SIGNATURE_INVALID) N(CKR_SIGNATURE_LEN_RANGE) N(CKR_TEMPLATE_INCOMPLETE)
	N(CKR_TEMPLATE_INCONSISTENT) N(CKR_TOKEN_NOT_PRESENT) N(CKR_TOKEN_NOT_RECOGNIZED)
	N(CKR_TOKEN_WRITE_PROTECTED) N(CKR_UNWRAPPING_KEY_HANDLE_INVALID)
	N(CKR_USER_ALREADY_LOGGED_IN) N(CKR_USER_NOT_LOGGED_IN) N(CKR_USER_PIN_NOT_INITIALIZED)
	N(CKR_USER_TYPE_INVALID) N(CKR_USER_ANOTHER_ALREADY_LOGGED_IN) N(CKR_USER_TOO_MANY_TYPES)
	N(CKR_WRAPPED_KEY_INVALID) N(CKR_WRAPPED_KEY_LEN_RANGE) N(CKR_WRAPPING_KEY_HANDLE_INVALID)
	N(CKR_WRAPPING_KEY_SIZE_RANGE) N(CKR_WRAPPING_KEY_TYPE_INCONSISTENT)
	N(CKR_UNWRAPPING_KEY_SIZE_RANGE) N(CKR_UNWRAPPING_KEY_TYPE_INCONSISTENT)
	N(CKR_RANDOM_SEED_NOT_SUPPORTED) N(CKR_RANDOM_NO_RNG)
	N(CKR_DOMAIN_PARAMS_INVALID) N(CKR_CURVE_NOT_SUPPORTED) N(CKR_BUFFER_TOO_SMALL)
	N(CKR_SAVED_STATE_INVALID) N(CKR_INFORMATION_SENSITIVE) N(CKR_STATE_UNSAVEABLE)
	N(CKR_CRYPTOKI_NOT_INITIALIZED) N(CKR_CRYPTOKI_ALREADY_INITIALIZED)
	N(CKR_MUTEX_BAD) N(CKR_MUTEX_NOT_LOCKED) N(CKR_FUNCTION_REJECTED)
	N(CKR_OPERATION_CANCEL_FAILED)
#undef N
	}
	snprintf(buf, sizeof buf, "CKR_0x%lX", (unsigned long)rv);
	return buf;
}

/* known_rv: rvname knows the value (a return value of the standard). */
static __attribute__((unused)) int known_rv(CK_RV rv) { return strncmp(rvname(rv), "CKR_0x", 6) != 0; }

static __attribute__((unused)) double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* load dlopens the module and fills F3, F2 and the three bare symbols. */
static int load(const char *path)
{
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		printf("FAIL dlopen %s: %s\n", path, dlerror());
		return 0;
	}
	sym_GetFunctionList = (CK_C_GetFunctionList)dlsym(lib, "C_GetFunctionList");
	sym_GetInterface = (CK_C_GetInterface)dlsym(lib, "C_GetInterface");
	sym_GetInterfaceList = (CK_C_GetInterfaceList)dlsym(lib, "C_GetInterfaceList");
	if (sym_GetFunctionList == NULL || sym_GetInterface == NULL || sym_GetInterfaceList == NULL) {
		printf("FAIL dlsym\n");
		return 0;
	}
	CK_INTERFACE *it = NULL;
	CK_VERSION v3 = {3, 0};
	if (sym_GetInterface((CK_UTF8CHAR_PTR) "PKCS 11", &v3, &it, 0) != CKR_OK || it == NULL) {
		printf("FAIL C_GetInterface(PKCS 11, 3.0)\n");
		return 0;
	}
	F3 = (CK_FUNCTION_LIST_3_0 *)it->pFunctionList;
	if (sym_GetFunctionList(&F2) != CKR_OK || F2 == NULL) {
		printf("FAIL C_GetFunctionList\n");
		return 0;
	}
	return 1;
}

static __attribute__((unused)) void print_hex(const char *prefix, const CK_BYTE *p, CK_ULONG n)
{
	fputs(prefix, stdout);
	for (CK_ULONG i = 0; i < n; i++)
		printf("%02x", p[i]);
	putchar('\n');
}

/* first_slot returns the first slot with a token. */
static __attribute__((unused)) CK_RV first_slot(CK_SLOT_ID *slot)
{
	CK_SLOT_ID slots[16];
	CK_ULONG n = 16;
	CK_RV rv = F3->C_GetSlotList(CK_TRUE, slots, &n);
	if (rv != CKR_OK)
		return rv;
	if (n == 0)
		return CKR_TOKEN_NOT_PRESENT;
	*slot = slots[0];
	return CKR_OK;
}

/* setup_token initialises a blank token with so_pin and user_pin. */
static __attribute__((unused)) CK_RV setup_token(CK_SLOT_ID slot, const char *so_pin, const char *user_pin)
{
	CK_TOKEN_INFO ti;
	CK_RV rv = F3->C_GetTokenInfo(slot, &ti);
	if (rv != CKR_OK)
		return rv;
	if (ti.flags & CKF_USER_PIN_INITIALIZED)
		return CKR_OK;
	if (!(ti.flags & CKF_TOKEN_INITIALIZED)) {
		CK_UTF8CHAR label[32];
		memset(label, ' ', sizeof label);
		memcpy(label, "stress", 6);
		rv = F3->C_InitToken(slot, (CK_UTF8CHAR_PTR)so_pin, strlen(so_pin), label);
		if (rv != CKR_OK)
			return rv;
	}
	CK_SESSION_HANDLE h;
	rv = F3->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &h);
	if (rv != CKR_OK)
		return rv;
	rv = F3->C_Login(h, CKU_SO, (CK_UTF8CHAR_PTR)so_pin, strlen(so_pin));
	if (rv == CKR_OK)
		rv = F3->C_InitPIN(h, (CK_UTF8CHAR_PTR)user_pin, strlen(user_pin));
	F3->C_Logout(h);
	F3->C_CloseSession(h);
	return rv;
}

/* gen_rsa generates an RSA key pair of bits (e = 65537) labelled label. */
static __attribute__((unused)) CK_RV gen_rsa(CK_SESSION_HANDLE h, CK_ULONG bits, CK_BBOOL token, const char *label,
		     CK_OBJECT_HANDLE *pub, CK_OBJECT_HANDLE *priv)
{
	CK_MECHANISM m = {CKM_RSA_PKCS_KEY_PAIR_GEN, NULL, 0};
	CK_BYTE e[] = {1, 0, 1};
	CK_BBOOL yes = CK_TRUE;
	CK_ATTRIBUTE pt[] = {
		{CKA_TOKEN, &token, sizeof token},
		{CKA_MODULUS_BITS, &bits, sizeof bits},
		{CKA_PUBLIC_EXPONENT, e, sizeof e},
		{CKA_VERIFY, &yes, sizeof yes},
		{CKA_ENCRYPT, &yes, sizeof yes},
		{CKA_LABEL, (void *)label, strlen(label)},
	};
	CK_ATTRIBUTE st[] = {
		{CKA_TOKEN, &token, sizeof token},
		{CKA_PRIVATE, &yes, sizeof yes},
		{CKA_SENSITIVE, &yes, sizeof yes},
		{CKA_SIGN, &yes, sizeof yes},
		{CKA_DECRYPT, &yes, sizeof yes},
		{CKA_LABEL, (void *)label, strlen(label)},
	};
	return F3->C_GenerateKeyPair(h, &m, pt, 6, st, 6, pub, priv);
}

/* DER of the P-256 OID (1.2.840.10045.3.1.7). */
static CK_BYTE P256_OID[] = {0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};

static __attribute__((unused)) CK_RV gen_ec(CK_SESSION_HANDLE h, CK_BBOOL token, const char *label,
		    CK_OBJECT_HANDLE *pub, CK_OBJECT_HANDLE *priv)
{
	CK_MECHANISM m = {CKM_EC_KEY_PAIR_GEN, NULL, 0};
	CK_BBOOL yes = CK_TRUE;
	CK_ATTRIBUTE pt[] = {
		{CKA_TOKEN, &token, sizeof token},
		{CKA_EC_PARAMS, P256_OID, sizeof P256_OID},
		{CKA_VERIFY, &yes, sizeof yes},
		{CKA_LABEL, (void *)label, strlen(label)},
	};
	CK_ATTRIBUTE st[] = {
		{CKA_TOKEN, &token, sizeof token},
		{CKA_PRIVATE, &yes, sizeof yes},
		{CKA_SENSITIVE, &yes, sizeof yes},
		{CKA_SIGN, &yes, sizeof yes},
		{CKA_LABEL, (void *)label, strlen(label)},
	};
	return F3->C_GenerateKeyPair(h, &m, pt, 4, st, 5, pub, priv);
}

/* find_count sets *total to what a search with no template finds; it
 * returns the first failing call's code (CKR_OK when none failed). */
static __attribute__((unused)) CK_RV find_count(CK_SESSION_HANDLE h, long *total)
{
	CK_OBJECT_HANDLE buf[256];
	CK_ULONG n;
	*total = 0;
	CK_RV rv = F3->C_FindObjectsInit(h, NULL, 0);
	if (rv != CKR_OK)
		return rv;
	do {
		rv = F3->C_FindObjects(h, buf, 256, &n);
		if (rv != CKR_OK) {
			F3->C_FindObjectsFinal(h);
			return rv;
		}
		*total += (long)n;
	} while (n > 0);
	return F3->C_FindObjectsFinal(h);
}

/* has_mech reports whether slot lists mechanism m. */
static __attribute__((unused)) int has_mech(CK_SLOT_ID slot, CK_MECHANISM_TYPE m)
{
	CK_MECHANISM_TYPE list[256];
	CK_ULONG n = 256;
	if (F3->C_GetMechanismList(slot, list, &n) != CKR_OK)
		return 0;
	for (CK_ULONG i = 0; i < n; i++)
		if (list[i] == m)
			return 1;
	return 0;
}

/* get_attr reads one attribute into buf (cap bytes); returns its length or -1. */
static __attribute__((unused)) long get_attr(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE o, CK_ATTRIBUTE_TYPE t, void *buf, CK_ULONG cap)
{
	CK_ATTRIBUTE a = {t, buf, cap};
	if (F3->C_GetAttributeValue(h, o, &a, 1) != CKR_OK)
		return -1;
	return (long)a.ulValueLen;
}

#endif /* STRESS_COMMON_H */
