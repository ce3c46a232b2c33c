/*
 * host: one module host process for the fault test (fault_test.go). It
 * loads the PKCS#11 module with dlopen, logs in to the token labelled
 * LABEL, finds the private key labelled KEY (P-256) and signs random
 * 32-byte hashes with CKM_ECDSA for SECONDS, one every ~2 ms, printing
 * every signature for the test to verify with Go's crypto; then it writes
 * (C_CreateObject of a token data object), retrying for up to 15 s.
 *
 *   host MODULE LABEL PIN KEY SECONDS
 *
 * Output lines: POINT hex (CKA_EC_POINT), SIG unix_ms call_us hash sig,
 * ERR unix_ms call_us rv, WRITE rv attempts ms, DONE. Exit 2 on setup errors.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <p11-kit-1/p11-kit/pkcs11.h>

static CK_FUNCTION_LIST_PTR f;

static void die(const char *what, CK_RV rv)
{
	printf("SETUP %s 0x%lx\n", what, (unsigned long)rv);
	exit(2);
}

static double now_ms(int clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void hex(const unsigned char *p, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		printf("%02x", p[i]);
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: host MODULE LABEL PIN KEY SECONDS\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	void *lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		printf("SETUP dlopen %s\n", dlerror());
		return 2;
	}
	CK_RV (*get)(CK_FUNCTION_LIST_PTR_PTR) = (CK_RV(*)(CK_FUNCTION_LIST_PTR_PTR))dlsym(lib, "C_GetFunctionList");
	if (!get)
		die("C_GetFunctionList", 0);
	CK_RV rv = get(&f);
	if (rv != CKR_OK)
		die("C_GetFunctionList", rv);
	if ((rv = f->C_Initialize(NULL)) != CKR_OK)
		die("C_Initialize", rv);

	CK_SLOT_ID slots[16], slot = 0;
	CK_ULONG n = 16;
	int found = 0;
	if ((rv = f->C_GetSlotList(CK_TRUE, slots, &n)) != CKR_OK)
		die("C_GetSlotList", rv);
	for (CK_ULONG i = 0; i < n && !found; i++) {
		CK_TOKEN_INFO ti;
		if (f->C_GetTokenInfo(slots[i], &ti) != CKR_OK)
			continue;
		size_t l = strlen(argv[2]);
		if (l <= 32 && memcmp(ti.label, argv[2], l) == 0 && (l == 32 || ti.label[l] == ' ')) {
			slot = slots[i];
			found = 1;
		}
	}
	if (!found)
		die("no token", 0);
	CK_SESSION_HANDLE s;
	if ((rv = f->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &s)) != CKR_OK)
		die("C_OpenSession", rv);
	if ((rv = f->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)argv[3], strlen(argv[3]))) != CKR_OK)
		die("C_Login", rv);

	CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
	CK_ATTRIBUTE tmpl[] = {{CKA_CLASS, &cls, sizeof cls}, {CKA_LABEL, argv[4], strlen(argv[4])}};
	CK_OBJECT_HANDLE priv, pub;
	CK_ULONG got = 0;
	if (f->C_FindObjectsInit(s, tmpl, 2) != CKR_OK || f->C_FindObjects(s, &priv, 1, &got) != CKR_OK || got != 1)
		die("private key", 0);
	f->C_FindObjectsFinal(s);
	cls = CKO_PUBLIC_KEY;
	if (f->C_FindObjectsInit(s, tmpl, 2) != CKR_OK || f->C_FindObjects(s, &pub, 1, &got) != CKR_OK || got != 1)
		die("public key", 0);
	f->C_FindObjectsFinal(s);
	unsigned char point[160];
	CK_ATTRIBUTE pa = {CKA_EC_POINT, point, sizeof point};
	if ((rv = f->C_GetAttributeValue(s, pub, &pa, 1)) != CKR_OK)
		die("CKA_EC_POINT", rv);
	printf("POINT ");
	hex(point, pa.ulValueLen);
	printf("\n");

	CK_MECHANISM mech = {CKM_ECDSA, NULL, 0};
	double end = now_ms(CLOCK_MONOTONIC) + atof(argv[5]) * 1e3;
	while (now_ms(CLOCK_MONOTONIC) < end) {
		unsigned char h[32], sig[132];
		CK_ULONG sl = sizeof sig;
		if (getrandom(h, sizeof h, 0) != sizeof h)
			die("getrandom", 0);
		double t0 = now_ms(CLOCK_MONOTONIC);
		rv = f->C_SignInit(s, &mech, priv);
		if (rv == CKR_OK)
			rv = f->C_Sign(s, h, sizeof h, sig, &sl);
		double us = (now_ms(CLOCK_MONOTONIC) - t0) * 1e3;
		if (rv == CKR_OK) {
			printf("SIG %.0f %.0f ", now_ms(CLOCK_REALTIME), us);
			hex(h, sizeof h);
			printf(" ");
			hex(sig, sl);
			printf("\n");
		} else {
			printf("ERR %.0f %.0f 0x%lx\n", now_ms(CLOCK_REALTIME), us, (unsigned long)rv);
		}
		usleep(2000);
	}

	/* A write: a token data object, retried while the store recovers. */
	CK_OBJECT_CLASS dc = CKO_DATA;
	CK_BBOOL yes = CK_TRUE;
	char value[32];
	snprintf(value, sizeof value, "written by %d", (int)getpid());
	CK_ATTRIBUTE dt[] = {{CKA_CLASS, &dc, sizeof dc}, {CKA_TOKEN, &yes, sizeof yes},
			     {CKA_LABEL, "fault-write", 11}, {CKA_VALUE, value, strlen(value)}};
	double w0 = now_ms(CLOCK_MONOTONIC);
	int attempts = 0;
	CK_OBJECT_HANDLE obj;
	do {
		attempts++;
		rv = f->C_CreateObject(s, dt, 4, &obj);
		if (rv != CKR_OK)
			usleep(200000);
	} while (rv != CKR_OK && now_ms(CLOCK_MONOTONIC) - w0 < 15e3);
	printf("WRITE 0x%lx %d %.0f\n", (unsigned long)rv, attempts, now_ms(CLOCK_MONOTONIC) - w0);
	f->C_Logout(s);
	f->C_CloseSession(s);
	f->C_Finalize(NULL);
	printf("DONE\n");
	return 0;
}
