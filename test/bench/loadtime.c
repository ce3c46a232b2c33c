/*
 * loadtime — what loading a PKCS#11 module costs a fresh process, and how
 * long its mechanism list is.
 *
 * Prints one line, tab-separated: the wall time of dlopen and of
 * C_GetFunctionList + C_Initialize (ms), the length of C_GetMechanismList
 * on the first slot of the 2.40 list and of the 3.2 list (C_GetInterface
 * "PKCS 11" 3.2; 0 when the module has none), the mean wall time of one
 * two-call C_GetMechanismList on the 2.40 list (µs, over 1000), then the
 * process CPU time (every thread: the Go runtime's too) of dlopen through
 * C_Initialize (ms) and of one two-call C_GetMechanismList (µs), which a
 * shared machine disturbs less. test/bench/loadtime.sh runs it in
 * alternating fresh processes on two modules.
 *
 * Build: cc -O2 -Wall -Wextra -o loadtime loadtime.c -ldl
 * Usage: loadtime MODULE
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../cgo/pkcs11_3.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail(const char *what, CK_RV rv)
{
	fprintf(stderr, "loadtime: %s: CKR 0x%lx\n", what, (unsigned long)rv);
	return 1;
}

/* The number of mechanisms of the first slot with a token, two-call. */
static CK_RV mech_count(CK_FUNCTION_LIST_PTR f, CK_SLOT_ID slot, CK_ULONG *n)
{
	CK_MECHANISM_TYPE list[1024];
	CK_ULONG c = 0;
	CK_RV rv = f->C_GetMechanismList(slot, NULL, &c);
	if (rv != CKR_OK)
		return rv;
	if (c > sizeof list / sizeof list[0])
		return CKR_BUFFER_TOO_SMALL;
	rv = f->C_GetMechanismList(slot, list, &c);
	*n = c;
	return rv;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: loadtime MODULE\n");
		return 2;
	}
	double c0 = cpu(), t0 = now();
	void *dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	double t1 = now();
	if (!dl) {
		fprintf(stderr, "loadtime: dlopen: %s\n", dlerror());
		return 1;
	}
	void *sym = dlsym(dl, "C_GetFunctionList");
	CK_C_GetFunctionList gfl = NULL;
	memcpy(&gfl, &sym, sizeof gfl); /* POSIX: object pointer to function pointer */
	if (!gfl) {
		fprintf(stderr, "loadtime: no C_GetFunctionList\n");
		return 1;
	}
	CK_FUNCTION_LIST_PTR f = NULL;
	CK_RV rv = gfl(&f);
	if (rv != CKR_OK)
		return fail("C_GetFunctionList", rv);
	CK_C_INITIALIZE_ARGS ia;
	memset(&ia, 0, sizeof ia);
	ia.flags = CKF_OS_LOCKING_OK;
	rv = f->C_Initialize(&ia);
	double t2 = now(), c2 = cpu();
	if (rv != CKR_OK)
		return fail("C_Initialize", rv);

	CK_SLOT_ID slots[16];
	CK_ULONG ns = 16;
	rv = f->C_GetSlotList(CK_FALSE, slots, &ns);
	if (rv != CKR_OK || ns == 0)
		return fail("C_GetSlotList", rv);
	CK_ULONG n240 = 0, n32 = 0;
	rv = mech_count(f, slots[0], &n240);
	if (rv != CKR_OK)
		return fail("C_GetMechanismList", rv);
	void *isym = dlsym(dl, "C_GetInterface");
	CK_C_GetInterface gif = NULL;
	memcpy(&gif, &isym, sizeof gif);
	if (gif) {
		CK_VERSION v = {3, 2};
		CK_INTERFACE_PTR iface = NULL;
		if (gif((CK_UTF8CHAR_PTR) "PKCS 11", &v, &iface, 0) == CKR_OK && iface) {
			rv = mech_count(iface->pFunctionList, slots[0], &n32);
			if (rv != CKR_OK)
				return fail("C_GetMechanismList (3.2)", rv);
		}
	}
	double t3 = now(), c3 = cpu();
	for (int i = 0; i < 1000; i++) {
		CK_ULONG c;
		rv = mech_count(f, slots[0], &c);
		if (rv != CKR_OK)
			return fail("C_GetMechanismList", rv);
	}
	double t4 = now(), c4 = cpu();
	rv = f->C_Finalize(NULL);
	if (rv != CKR_OK)
		return fail("C_Finalize", rv);
	printf("%.3f\t%.3f\t%lu\t%lu\t%.2f\t%.3f\t%.2f\n", 1e3 * (t1 - t0), 1e3 * (t2 - t1), (unsigned long)n240,
	       (unsigned long)n32, 1e6 * (t4 - t3) / 1000, 1e3 * (c2 - c0), 1e6 * (c4 - c3) / 1000);
	return 0;
}
