/*
 * signer.c: the C host of the many-processes test (test/robust). It dlopens
 * libmodexp-pkcs11.so, logs in as the user and, ITER times:
 *
 *   - lists every visible object (C_FindObjectsInit/FindObjects/Final) and
 *     prints "find T0 T1 LABEL..." with CLOCK_MONOTONIC times around it;
 *   - finds the signing key by CKA_ID and signs "message <i>" with
 *     CKM_SHA256_RSA_PKCS, printing "sig <i> HEX";
 *   - every 4th round creates a public token data object labelled c-<i>
 *     ("created T c-<i>"), twelve rounds later destroys it ("deleting T
 *     c-<i>", "deleted T c-<i>");
 *   - pauses PAUSE milliseconds, so that the other processes' work
 *     interleaves with its own.
 *
 *   signer <module> <user PIN> <signing key CKA_ID> <iterations> <pause ms>
 *
 * Any CK_RV other than CKR_OK prints "FAIL <call> 0x<rv>" and exits 1.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <p11-kit-1/p11-kit/pkcs11.h>

static CK_FUNCTION_LIST_PTR f;

static long long now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void ok(CK_RV rv, const char *what)
{
	if (rv != CKR_OK) {
		printf("FAIL %s 0x%lx\n", what, (unsigned long)rv);
		fflush(stdout);
		exit(1);
	}
}

/* label reads obj's CKA_LABEL into buf (NUL-terminated). */
static void label(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE obj, char *buf, size_t cap)
{
	CK_ATTRIBUTE a = {CKA_LABEL, NULL, 0};
	ok(f->C_GetAttributeValue(h, obj, &a, 1), "C_GetAttributeValue(len)");
	if (a.ulValueLen >= cap) {
		printf("FAIL label too long\n");
		exit(1);
	}
	a.pValue = buf;
	ok(f->C_GetAttributeValue(h, obj, &a, 1), "C_GetAttributeValue");
	buf[a.ulValueLen] = 0;
}

static void list(CK_SESSION_HANDLE h)
{
	CK_OBJECT_HANDLE found[64];
	CK_ULONG n;
	static char line[1 << 16];
	size_t used = 0;
	long long t0 = now();
	ok(f->C_FindObjectsInit(h, NULL, 0), "C_FindObjectsInit");
	for (;;) {
		ok(f->C_FindObjects(h, found, 64, &n), "C_FindObjects");
		if (n == 0)
			break;
		for (CK_ULONG i = 0; i < n; i++) {
			char buf[256];
			label(h, found[i], buf, sizeof buf);
			if (used + strlen(buf) + 2 < sizeof line)
				used += (size_t)snprintf(line + used, sizeof line - used, " %s", buf);
		}
	}
	ok(f->C_FindObjectsFinal(h), "C_FindObjectsFinal");
	printf("find %lld %lld%s\n", t0, now(), line);
	line[0] = 0;
	fflush(stdout);
}

static void sign(CK_SESSION_HANDLE h, const char *id, int i)
{
	CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
	CK_ATTRIBUTE t[] = {
		{CKA_CLASS, &cls, sizeof cls},
		{CKA_ID, (void *)id, strlen(id)},
	};
	CK_OBJECT_HANDLE key;
	CK_ULONG n;
	ok(f->C_FindObjectsInit(h, t, 2), "C_FindObjectsInit(id)");
	ok(f->C_FindObjects(h, &key, 1, &n), "C_FindObjects(id)");
	ok(f->C_FindObjectsFinal(h), "C_FindObjectsFinal(id)");
	if (n != 1) {
		printf("FAIL signing key not found\n");
		exit(1);
	}
	char msg[64];
	snprintf(msg, sizeof msg, "message %d", i);
	CK_MECHANISM m = {CKM_SHA256_RSA_PKCS, NULL, 0};
	unsigned char sig[1024];
	CK_ULONG len = sizeof sig;
	ok(f->C_SignInit(h, &m, key), "C_SignInit");
	ok(f->C_Sign(h, (CK_BYTE_PTR)msg, strlen(msg), sig, &len), "C_Sign");
	printf("sig %d ", i);
	for (CK_ULONG j = 0; j < len; j++)
		printf("%02x", sig[j]);
	printf("\n");
	fflush(stdout);
}

static CK_OBJECT_HANDLE create(CK_SESSION_HANDLE h, const char *lbl)
{
	CK_OBJECT_CLASS cls = CKO_DATA;
	CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
	CK_ATTRIBUTE t[] = {
		{CKA_CLASS, &cls, sizeof cls},
		{CKA_TOKEN, &yes, sizeof yes},
		{CKA_PRIVATE, &no, sizeof no},
		{CKA_LABEL, (void *)lbl, strlen(lbl)},
		{CKA_VALUE, "data", 4},
	};
	CK_OBJECT_HANDLE obj;
	ok(f->C_CreateObject(h, t, 5, &obj), "C_CreateObject");
	printf("created %lld %s\n", now(), lbl);
	fflush(stdout);
	return obj;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: signer module pin keyid iterations pause-ms\n");
		return 2;
	}
	void *lib = dlopen(argv[1], RTLD_NOW);
	if (lib == NULL) {
		printf("FAIL dlopen %s\n", dlerror());
		return 1;
	}
	CK_C_GetFunctionList gfl = (CK_C_GetFunctionList)dlsym(lib, "C_GetFunctionList");
	if (gfl == NULL) {
		printf("FAIL dlsym\n");
		return 1;
	}
	ok(gfl(&f), "C_GetFunctionList");
	ok(f->C_Initialize(NULL), "C_Initialize");
	CK_SLOT_ID slots[8];
	CK_ULONG nslots = 8;
	ok(f->C_GetSlotList(CK_TRUE, slots, &nslots), "C_GetSlotList");
	CK_SESSION_HANDLE h;
	ok(f->C_OpenSession(slots[0], CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &h), "C_OpenSession");
	ok(f->C_Login(h, CKU_USER, (CK_UTF8CHAR_PTR)argv[2], strlen(argv[2])), "C_Login");
	printf("ready\n");
	fflush(stdout);
	int iters = atoi(argv[4]);
	struct timespec pause = {0, atoi(argv[5]) * 1000000L};
	CK_OBJECT_HANDLE mine[1024];
	char names[1024][32];
	for (int i = 0; i < iters && i < 1024; i++) {
		list(h);
		sign(h, argv[3], i);
		if (i % 4 == 0) {
			snprintf(names[i], sizeof names[i], "c-%d", i);
			mine[i] = create(h, names[i]);
		}
		if (i % 4 == 0 && i >= 12) {
			printf("deleting %lld %s\n", now(), names[i - 12]);
			fflush(stdout);
			ok(f->C_DestroyObject(h, mine[i - 12]), "C_DestroyObject");
			printf("deleted %lld %s\n", now(), names[i - 12]);
			fflush(stdout);
		}
		nanosleep(&pause, NULL);
	}
	ok(f->C_Logout(h), "C_Logout");
	ok(f->C_CloseSession(h), "C_CloseSession");
	ok(f->C_Finalize(NULL), "C_Finalize");
	printf("done\n");
	return 0;
}
