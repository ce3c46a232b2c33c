/*
 * host: one module host process for the fault test (fault_test.go). It
 * loads the PKCS#11 module with dlopen, logs in to the token labelled
 * LABEL, finds the private key labelled KEY (P-256), prints its point and
 * waits for a line on stdin ("go": the test starts every host's SECONDS
 * at once, however long each took to log in); then it signs random
 * 32-byte hashes with CKM_ECDSA for SECONDS, one every ~2 ms, printing
 * every signature for the test to verify with Go's crypto; then it writes
 * (C_CreateObject of a token data object), retrying for up to 15 s.
 *
 *   host MODULE LABEL PIN KEY SECONDS [mixed | guess]
 *
 * mixed: a second thread, with its own session, generates P-256 key pairs
 * on the token (labelled mixed-PID-N) while the main thread signs, and
 * destroys every third private key; after SECONDS both stop (the second
 * once two generations were acknowledged, on a loaded machine), the host says
 * WRITTEN and, for each line "list" on stdin, lists the private keys
 * labelled mixed-* that it finds (the test asks until every host's view
 * holds the acknowledged writes of all); another line ends the listing.
 * guess: no login and no key; C_Login as the user with PIN (a wrong one)
 * every 20 ms for SECONDS, and on until one says CKR_PIN_LOCKED (no stdin).
 *
 * Output lines: POINT hex (CKA_EC_POINT), SIG unix_ms call_us hash sig,
 * ERR unix_ms call_us rv, WRITE rv attempts ms; mixed: GEN label rv ms,
 * DEL label rv ms, WRITTEN, HAVE label ... LISTED; guess: GUESS rv; DONE.
 * Exit 2 on setup errors.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
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

/* mixed: the writer thread's stop time and slot. */
static double writer_end;
static CK_SLOT_ID writer_slot;
static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

static void *writer(void *arg)
{
	(void)arg;
	CK_SESSION_HANDLE s;
	if (f->C_OpenSession(writer_slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &s) != CKR_OK)
		return NULL;
	/* The DER OID of P-256. */
	static const unsigned char p256[] = {0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};
	CK_BBOOL yes = CK_TRUE;
	CK_MECHANISM gen = {CKM_EC_KEY_PAIR_GEN, NULL, 0};
	/* SECONDS, and on until two generations were acknowledged (the test's
	 * writes to check), for at most two more minutes. */
	int acked = 0;
	for (int i = 0; now_ms(CLOCK_MONOTONIC) < writer_end || (acked < 2 && now_ms(CLOCK_MONOTONIC) < writer_end + 120e3); i++) {
		char label[64];
		snprintf(label, sizeof label, "mixed-%d-%d", (int)getpid(), i);
		CK_ATTRIBUTE pubt[] = {{CKA_EC_PARAMS, (void *)p256, sizeof p256}, {CKA_TOKEN, &yes, sizeof yes},
				       {CKA_VERIFY, &yes, sizeof yes}, {CKA_LABEL, label, strlen(label)}};
		CK_ATTRIBUTE privt[] = {{CKA_TOKEN, &yes, sizeof yes}, {CKA_PRIVATE, &yes, sizeof yes},
					{CKA_SIGN, &yes, sizeof yes}, {CKA_LABEL, label, strlen(label)}};
		CK_OBJECT_HANDLE pub, priv;
		double t0 = now_ms(CLOCK_MONOTONIC);
		CK_RV rv = f->C_GenerateKeyPair(s, &gen, pubt, 4, privt, 4, &pub, &priv);
		if (rv == CKR_OK)
			acked++;
		pthread_mutex_lock(&out_mu);
		printf("GEN %s 0x%lx %.0f\n", label, (unsigned long)rv, now_ms(CLOCK_MONOTONIC) - t0);
		pthread_mutex_unlock(&out_mu);
		if (rv == CKR_OK && i % 3 == 0) {
			t0 = now_ms(CLOCK_MONOTONIC);
			rv = f->C_DestroyObject(s, priv);
			pthread_mutex_lock(&out_mu);
			printf("DEL %s 0x%lx %.0f\n", label, (unsigned long)rv, now_ms(CLOCK_MONOTONIC) - t0);
			pthread_mutex_unlock(&out_mu);
		}
		usleep(rv == CKR_OK ? 20000 : 100000);
	}
	f->C_CloseSession(s);
	return NULL;
}

/* have lists the private keys labelled mixed-* the host finds. */
static void have(CK_SESSION_HANDLE s)
{
	CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
	CK_ATTRIBUTE t = {CKA_CLASS, &cls, sizeof cls};
	if (f->C_FindObjectsInit(s, &t, 1) != CKR_OK)
		die("find", 0);
	CK_OBJECT_HANDLE h[64];
	CK_ULONG got;
	while (f->C_FindObjects(s, h, 64, &got) == CKR_OK && got > 0) {
		for (CK_ULONG i = 0; i < got; i++) {
			char label[65] = {0};
			CK_ATTRIBUTE a = {CKA_LABEL, label, 64};
			if (f->C_GetAttributeValue(s, h[i], &a, 1) == CKR_OK && strncmp(label, "mixed-", 6) == 0)
				printf("HAVE %s\n", label);
		}
	}
	f->C_FindObjectsFinal(s);
}

int main(int argc, char **argv)
{
	if (argc != 6 && argc != 7) {
		fprintf(stderr, "usage: host MODULE LABEL PIN KEY SECONDS [mixed | guess]\n");
		return 2;
	}
	const char *mode = argc == 7 ? argv[6] : "";
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
	CK_C_INITIALIZE_ARGS init = {NULL, NULL, NULL, NULL, CKF_OS_LOCKING_OK, NULL};
	if ((rv = f->C_Initialize(&init)) != CKR_OK)
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
	if (strcmp(mode, "guess") == 0) {
		/* SECONDS, and on until the token says locked (the test wants the
		 * lockout reached), for at most two more minutes. */
		double gend = now_ms(CLOCK_MONOTONIC) + atof(argv[5]) * 1e3;
		rv = CKR_OK;
		while (now_ms(CLOCK_MONOTONIC) < gend || (rv != CKR_PIN_LOCKED && now_ms(CLOCK_MONOTONIC) < gend + 120e3)) {
			rv = f->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)argv[3], strlen(argv[3]));
			printf("GUESS 0x%lx\n", (unsigned long)rv);
			if (rv == CKR_OK)
				f->C_Logout(s);
			usleep(20000);
		}
		f->C_Finalize(NULL);
		printf("DONE\n");
		return 0;
	}
	/* The login (a write: the PIN count) is setup, not what is tested: on
	 * a loaded machine it may meet the 1 s request timeout; retried for a
	 * minute. */
	double lend = now_ms(CLOCK_MONOTONIC) + 60e3;
	while ((rv = f->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)argv[3], strlen(argv[3]))) == CKR_DEVICE_ERROR && now_ms(CLOCK_MONOTONIC) < lend)
		usleep(100000);
	if (rv != CKR_OK)
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
	char line[16];
	if (!fgets(line, sizeof line, stdin))
		die("no go on stdin", 0);

	CK_MECHANISM mech = {CKM_ECDSA, NULL, 0};
	double end = now_ms(CLOCK_MONOTONIC) + atof(argv[5]) * 1e3;
	pthread_t wt;
	int mixed = strcmp(mode, "mixed") == 0;
	if (mixed) {
		writer_end = end;
		writer_slot = slot;
		if (pthread_create(&wt, NULL, writer, NULL) != 0)
			die("pthread_create", 0);
	}
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
		pthread_mutex_lock(&out_mu);
		if (rv == CKR_OK) {
			printf("SIG %.0f %.0f ", now_ms(CLOCK_REALTIME), us);
			hex(h, sizeof h);
			printf(" ");
			hex(sig, sl);
			printf("\n");
		} else {
			printf("ERR %.0f %.0f 0x%lx\n", now_ms(CLOCK_REALTIME), us, (unsigned long)rv);
		}
		pthread_mutex_unlock(&out_mu);
		usleep(2000);
	}
	if (mixed) {
		pthread_join(wt, NULL);
		printf("WRITTEN\n");
		while (fgets(line, sizeof line, stdin) && strncmp(line, "list", 4) == 0) {
			have(s);
			printf("LISTED\n");
		}
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
