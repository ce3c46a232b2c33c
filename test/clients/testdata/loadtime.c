/*
 * loadtime: the start-up cost of a PKCS#11 module, as a host pays it.
 *
 *   loadtime MODULE OUTFILE
 *
 * Times dlopen + C_GetFunctionList + C_Initialize(NULL) + C_GetSlotList +
 * C_Finalize once, in this fresh process, and writes
 * "<dlopen ns> <init ns> <total ns>\n" to OUTFILE. It prints nothing on
 * stdout or stderr itself, so anything there came from the module. Exit
 * status: 0 on success, 2 on a usage or load error, 3 on a CKR error.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>
#include <p11-kit-1/p11-kit/pkcs11.h>

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	int64_t t0 = now_ns();
	void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL)
		return 2;
	int64_t t1 = now_ns();
	CK_C_GetFunctionList getList = (CK_C_GetFunctionList)dlsym(lib, "C_GetFunctionList");
	CK_FUNCTION_LIST_PTR f = NULL;
	if (getList == NULL || getList(&f) != CKR_OK || f == NULL)
		return 3;
	if (f->C_Initialize(NULL) != CKR_OK)
		return 3;
	CK_ULONG n = 0;
	if (f->C_GetSlotList(CK_FALSE, NULL, &n) != CKR_OK)
		return 3;
	if (f->C_Finalize(NULL) != CKR_OK)
		return 3;
	int64_t t2 = now_ns();
	FILE *out = fopen(argv[2], "w");
	if (out == NULL)
		return 2;
	fprintf(out, "%lld %lld %lld\n", (long long)(t1 - t0), (long long)(t2 - t1), (long long)(t2 - t0));
	return fclose(out) == 0 ? 0 : 2;
}
