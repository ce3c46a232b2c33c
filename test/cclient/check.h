/*
 * check.h: what the C clients in test/cclient share: the report the Go
 * tests read (CHECK, EXPECT and EXPECT2 print "ok ..." or "FAIL ..." and
 * count into passes and fails; print_hex prints "DATA name hex"), return
 * values by name, hex arguments, and the 2.40 function list of a module.
 */
#ifndef MODEXP_CCLIENT_CHECK_H
#define MODEXP_CCLIENT_CHECK_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkcs11_3.h"

static int passes __attribute__((unused)), fails __attribute__((unused));

/* rvname names a return value (CKR_0x... for one not listed). */
static inline const char *rvname(CK_RV rv)
{
	static char buf[32];
	switch (rv) {
#define N(x) case x: return #x;
	N(CKR_OK) N(CKR_GENERAL_ERROR) N(CKR_FUNCTION_FAILED) N(CKR_ARGUMENTS_BAD)
	N(CKR_ATTRIBUTE_SENSITIVE) N(CKR_ATTRIBUTE_TYPE_INVALID) N(CKR_ATTRIBUTE_VALUE_INVALID)
	N(CKR_BUFFER_TOO_SMALL) N(CKR_CRYPTOKI_ALREADY_INITIALIZED) N(CKR_CRYPTOKI_NOT_INITIALIZED)
	N(CKR_DATA_LEN_RANGE) N(CKR_ENCRYPTED_DATA_INVALID) N(CKR_FUNCTION_NOT_SUPPORTED)
	N(CKR_KEY_HANDLE_INVALID) N(CKR_KEY_TYPE_INCONSISTENT) N(CKR_KEY_FUNCTION_NOT_PERMITTED)
	N(CKR_MECHANISM_INVALID) N(CKR_MECHANISM_PARAM_INVALID) N(CKR_OBJECT_HANDLE_INVALID)
	N(CKR_OPERATION_ACTIVE) N(CKR_OPERATION_NOT_INITIALIZED) N(CKR_PIN_INCORRECT)
	N(CKR_PIN_LEN_RANGE) N(CKR_SESSION_HANDLE_INVALID) N(CKR_SESSION_READ_ONLY)
	N(CKR_SIGNATURE_INVALID) N(CKR_SIGNATURE_LEN_RANGE) N(CKR_TEMPLATE_INCOMPLETE)
	N(CKR_TEMPLATE_INCONSISTENT) N(CKR_USER_ALREADY_LOGGED_IN) N(CKR_USER_NOT_LOGGED_IN)
	N(CKR_USER_PIN_NOT_INITIALIZED) N(CKR_USER_TYPE_INVALID) N(CKR_TOKEN_NOT_RECOGNIZED)
#undef N
	}
	snprintf(buf, sizeof buf, "CKR_0x%lX", rv);
	return buf;
}

#define CHECK(cond, ...)                                   \
	do {                                               \
		int c_ = (cond);                           \
		if (c_) passes++; else fails++;            \
		printf("%s ", c_ ? "ok" : "FAIL");         \
		printf(__VA_ARGS__);                       \
		printf("\n");                              \
		fflush(stdout);                            \
	} while (0)

/* EXPECT checks a return value; it evaluates to whether it matched. */
#define EXPECT(call, want, what)                                                        \
	({                                                                              \
		CK_RV r_ = (call);                                                      \
		CHECK(r_ == (want), "%s: %s (want %s)", what, rvname(r_), rvname(want)); \
		r_ == (want);                                                           \
	})

#define EXPECT2(call, want1, want2, what)                                              \
	({                                                                              \
		CK_RV r_ = (call);                                                      \
		CHECK(r_ == (want1) || r_ == (want2), "%s: %s (want %s or %s)", what,   \
		      rvname(r_), rvname(want1), rvname(want2));                         \
		r_ == (want1) || r_ == (want2);                                         \
	})

static inline void print_hex(const char *name, const CK_BYTE *p, CK_ULONG n)
{
	printf("DATA %s ", name);
	for (CK_ULONG i = 0; i < n; i++)
		printf("%02x", p[i]);
	printf("\n");
}

/* unhex decodes s ("-" is empty) into a malloc'ed buffer. */
static inline CK_BYTE *unhex(const char *s, CK_ULONG *n)
{
	size_t l = strcmp(s, "-") == 0 ? 0 : strlen(s) / 2;
	CK_BYTE *b = malloc(l ? l : 1);
	for (size_t i = 0; i < l; i++) {
		unsigned v;
		sscanf(s + 2 * i, "%2x", &v);
		b[i] = (CK_BYTE)v;
	}
	*n = l;
	return b;
}

/*
 * load_2_40 dlopens the module at path and returns its 2.40 function list
 * (C_GetFunctionList), or NULL after a FAIL line.
 */
static inline CK_FUNCTION_LIST *load_2_40(const char *path)
{
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		printf("FAIL dlopen: %s\n", dlerror());
		return NULL;
	}
	CK_FUNCTION_LIST *fl;
	CK_C_GetFunctionList gfl = (CK_C_GetFunctionList)dlsym(lib, "C_GetFunctionList");
	if (gfl == NULL || gfl(&fl) != CKR_OK) {
		printf("FAIL C_GetFunctionList\n");
		return NULL;
	}
	return fl;
}

#endif
