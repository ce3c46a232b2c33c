/*
 * p11bench — side-by-side PKCS#11 signing benchmark.
 *
 * Loads one or two PKCS#11 modules with dlopen (no other library: plain C
 * against <p11-kit-1/p11-kit/pkcs11.h>), logs in to a token on each, makes
 * or finds its keys, and measures ops/s for RSA, ECDSA, DSA, Ed25519, Ed448,
 * ML-DSA and SLH-DSA sign/verify, P-256 ECDH and X25519 derivation, ML-KEM
 * encapsulation and decapsulation (C_EncapsulateKey and C_DecapsulateKey
 * of the PKCS#11 3.2 interface, taken with C_GetInterface where the module
 * offers it) and key-pair generation, at several thread counts (one session per thread, all
 * sharing the application's login state). The two modules are measured
 * alternately, cell by cell, in A-B-B-A rounds, so that drift in the load of
 * the machine hits both alike.
 *
 * Only calls that returned CKR_OK are counted. After each cell, outside the
 * timed window, a sample of the signatures is checked: C_Verify on the
 * signing module must accept it, must reject it with one bit flipped
 * (CKR_SIGNATURE_INVALID), and the other module must accept it too (the
 * public key is copied there as a session object). A cell whose check fails
 * is reported as BAD, not as a rate. An ECDH cell is checked by agreement:
 * each module derives with its own key and the other's public point, and
 * the two secrets must be equal. An ML-KEM cell is checked by decapsulating
 * a fresh encapsulation (the same secret) and the ciphertext with a bit
 * flipped (another secret: FIPS 203's implicit rejection).
 *
 * Every call into a module runs under a watchdog: a phase that overruns its
 * limit prints what was measured so far and exits with status 3.
 *
 * Build: cc -O2 -pthread -Wall -Wextra -o p11bench p11bench.c -ldl
 * Usage: see usage() below or run with --help.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* p11-kit's header and the 3.0/3.2 declarations it lacks (the module's own:
 * CK_FUNCTION_LIST_3_2 for C_EncapsulateKey, the ML-DSA, SLH-DSA, ML-KEM
 * and Montgomery values). */
#include "../../cgo/pkcs11_3.h"

#define MAX_THREADS 16
#define NSAMPLES 4
#define MAXSIG 17088 /* SLH-DSA-SHA2-128f */
#define MAXDATA 64
#define ERR_STOP_CONSECUTIVE 20
#define ERR_STOP_TOTAL 1000

/* ------------------------------------------------------------------ */
/* Small utilities                                                     */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Latencies of the calls of a cell, in seconds (a growing array). */
typedef struct {
	double *v;
	size_t n, cap;
} lat_t;

static void lat_add(lat_t *l, double x)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 4096;
		double *v = realloc(l->v, cap * sizeof *v);
		if (v == NULL)
			return; /* a sample fewer, not an abort */
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = x;
}

static void lat_merge(lat_t *dst, lat_t *src)
{
	for (size_t i = 0; i < src->n; i++)
		lat_add(dst, src->v[i]);
	free(src->v);
	src->v = NULL;
	src->n = src->cap = 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The q-quantile (0 < q < 1) of l, sorting it; 0 when empty. */
static double lat_quantile(lat_t *l, double q)
{
	if (l->n == 0)
		return 0;
	qsort(l->v, l->n, sizeof *l->v, cmp_double);
	size_t i = (size_t)(q * (double)(l->n - 1) + 0.5);
	return l->v[i];
}

static double thread_cpu_seconds(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_seconds(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("p11bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static const struct {
	CK_RV rv;
	const char *name;
} RV_NAMES[] = {
	{CKR_OK, "CKR_OK"},
	{CKR_CANCEL, "CKR_CANCEL"},
	{CKR_HOST_MEMORY, "CKR_HOST_MEMORY"},
	{CKR_SLOT_ID_INVALID, "CKR_SLOT_ID_INVALID"},
	{CKR_GENERAL_ERROR, "CKR_GENERAL_ERROR"},
	{CKR_FUNCTION_FAILED, "CKR_FUNCTION_FAILED"},
	{CKR_ARGUMENTS_BAD, "CKR_ARGUMENTS_BAD"},
	{CKR_CANT_LOCK, "CKR_CANT_LOCK"},
	{CKR_ATTRIBUTE_READ_ONLY, "CKR_ATTRIBUTE_READ_ONLY"},
	{CKR_ATTRIBUTE_SENSITIVE, "CKR_ATTRIBUTE_SENSITIVE"},
	{CKR_ATTRIBUTE_TYPE_INVALID, "CKR_ATTRIBUTE_TYPE_INVALID"},
	{CKR_ATTRIBUTE_VALUE_INVALID, "CKR_ATTRIBUTE_VALUE_INVALID"},
	{CKR_DATA_INVALID, "CKR_DATA_INVALID"},
	{CKR_DATA_LEN_RANGE, "CKR_DATA_LEN_RANGE"},
	{CKR_DEVICE_ERROR, "CKR_DEVICE_ERROR"},
	{CKR_DEVICE_MEMORY, "CKR_DEVICE_MEMORY"},
	{CKR_DEVICE_REMOVED, "CKR_DEVICE_REMOVED"},
	{CKR_FUNCTION_CANCELED, "CKR_FUNCTION_CANCELED"},
	{CKR_FUNCTION_NOT_SUPPORTED, "CKR_FUNCTION_NOT_SUPPORTED"},
	{CKR_KEY_HANDLE_INVALID, "CKR_KEY_HANDLE_INVALID"},
	{CKR_KEY_SIZE_RANGE, "CKR_KEY_SIZE_RANGE"},
	{CKR_KEY_TYPE_INCONSISTENT, "CKR_KEY_TYPE_INCONSISTENT"},
	{CKR_KEY_FUNCTION_NOT_PERMITTED, "CKR_KEY_FUNCTION_NOT_PERMITTED"},
	{CKR_MECHANISM_INVALID, "CKR_MECHANISM_INVALID"},
	{CKR_MECHANISM_PARAM_INVALID, "CKR_MECHANISM_PARAM_INVALID"},
	{CKR_OBJECT_HANDLE_INVALID, "CKR_OBJECT_HANDLE_INVALID"},
	{CKR_OPERATION_ACTIVE, "CKR_OPERATION_ACTIVE"},
	{CKR_OPERATION_NOT_INITIALIZED, "CKR_OPERATION_NOT_INITIALIZED"},
	{CKR_PIN_INCORRECT, "CKR_PIN_INCORRECT"},
	{CKR_PIN_INVALID, "CKR_PIN_INVALID"},
	{CKR_PIN_LEN_RANGE, "CKR_PIN_LEN_RANGE"},
	{CKR_PIN_LOCKED, "CKR_PIN_LOCKED"},
	{CKR_SESSION_CLOSED, "CKR_SESSION_CLOSED"},
	{CKR_SESSION_COUNT, "CKR_SESSION_COUNT"},
	{CKR_SESSION_HANDLE_INVALID, "CKR_SESSION_HANDLE_INVALID"},
	{CKR_SESSION_PARALLEL_NOT_SUPPORTED, "CKR_SESSION_PARALLEL_NOT_SUPPORTED"},
	{CKR_SESSION_READ_ONLY, "CKR_SESSION_READ_ONLY"},
	{CKR_SESSION_EXISTS, "CKR_SESSION_EXISTS"},
	{CKR_SESSION_READ_ONLY_EXISTS, "CKR_SESSION_READ_ONLY_EXISTS"},
	{CKR_SESSION_READ_WRITE_SO_EXISTS, "CKR_SESSION_READ_WRITE_SO_EXISTS"},
	{CKR_SIGNATURE_INVALID, "CKR_SIGNATURE_INVALID"},
	{CKR_SIGNATURE_LEN_RANGE, "CKR_SIGNATURE_LEN_RANGE"},
	{CKR_TEMPLATE_INCOMPLETE, "CKR_TEMPLATE_INCOMPLETE"},
	{CKR_TEMPLATE_INCONSISTENT, "CKR_TEMPLATE_INCONSISTENT"},
	{CKR_TOKEN_NOT_PRESENT, "CKR_TOKEN_NOT_PRESENT"},
	{CKR_TOKEN_NOT_RECOGNIZED, "CKR_TOKEN_NOT_RECOGNIZED"},
	{CKR_TOKEN_WRITE_PROTECTED, "CKR_TOKEN_WRITE_PROTECTED"},
	{CKR_USER_ALREADY_LOGGED_IN, "CKR_USER_ALREADY_LOGGED_IN"},
	{CKR_USER_NOT_LOGGED_IN, "CKR_USER_NOT_LOGGED_IN"},
	{CKR_USER_PIN_NOT_INITIALIZED, "CKR_USER_PIN_NOT_INITIALIZED"},
	{CKR_USER_TYPE_INVALID, "CKR_USER_TYPE_INVALID"},
	{CKR_USER_ANOTHER_ALREADY_LOGGED_IN, "CKR_USER_ANOTHER_ALREADY_LOGGED_IN"},
	{CKR_USER_TOO_MANY_TYPES, "CKR_USER_TOO_MANY_TYPES"},
	{CKR_DOMAIN_PARAMS_INVALID, "CKR_DOMAIN_PARAMS_INVALID"},
	{CKR_CURVE_NOT_SUPPORTED, "CKR_CURVE_NOT_SUPPORTED"},
	{CKR_BUFFER_TOO_SMALL, "CKR_BUFFER_TOO_SMALL"},
	{CKR_RANDOM_SEED_NOT_SUPPORTED, "CKR_RANDOM_SEED_NOT_SUPPORTED"},
	{CKR_RANDOM_NO_RNG, "CKR_RANDOM_NO_RNG"},
	{CKR_CRYPTOKI_NOT_INITIALIZED, "CKR_CRYPTOKI_NOT_INITIALIZED"},
	{CKR_CRYPTOKI_ALREADY_INITIALIZED, "CKR_CRYPTOKI_ALREADY_INITIALIZED"},
	{CKR_MUTEX_BAD, "CKR_MUTEX_BAD"},
	{CKR_MUTEX_NOT_LOCKED, "CKR_MUTEX_NOT_LOCKED"},
	{CKR_NEED_TO_CREATE_THREADS, "CKR_NEED_TO_CREATE_THREADS"},
	{CKR_CANT_LOCK, "CKR_CANT_LOCK"},
};

static const char *rv_name(CK_RV rv)
{
	static __thread char buf[32];
	for (size_t i = 0; i < sizeof RV_NAMES / sizeof RV_NAMES[0]; i++)
		if (RV_NAMES[i].rv == rv)
			return RV_NAMES[i].name;
	snprintf(buf, sizeof buf, "CKR_0x%lx", (unsigned long)rv);
	return buf;
}

static const char *mech_name(CK_MECHANISM_TYPE m)
{
	static __thread char buf[32];
	switch (m) {
	case CKM_RSA_PKCS_KEY_PAIR_GEN: return "CKM_RSA_PKCS_KEY_PAIR_GEN";
	case CKM_SHA256_RSA_PKCS: return "CKM_SHA256_RSA_PKCS";
	case CKM_RSA_PKCS_PSS: return "CKM_RSA_PKCS_PSS";
	case CKM_EC_KEY_PAIR_GEN: return "CKM_EC_KEY_PAIR_GEN";
	case CKM_ECDSA: return "CKM_ECDSA";
	case CKM_DSA: return "CKM_DSA";
	case CKM_DH_PKCS_DERIVE: return "CKM_DH_PKCS_DERIVE";
	case CKM_DH_PKCS_KEY_PAIR_GEN: return "CKM_DH_PKCS_KEY_PAIR_GEN";
	case CKM_DSA_KEY_PAIR_GEN: return "CKM_DSA_KEY_PAIR_GEN";
	case CKM_EC_EDWARDS_KEY_PAIR_GEN: return "CKM_EC_EDWARDS_KEY_PAIR_GEN";
	case CKM_EDDSA: return "CKM_EDDSA";
	case CKM_ECDH1_DERIVE: return "CKM_ECDH1_DERIVE";
	case CKM_EC_MONTGOMERY_KEY_PAIR_GEN: return "CKM_EC_MONTGOMERY_KEY_PAIR_GEN";
	case CKM_ML_DSA_KEY_PAIR_GEN: return "CKM_ML_DSA_KEY_PAIR_GEN";
	case CKM_ML_DSA: return "CKM_ML_DSA";
	case CKM_SLH_DSA_KEY_PAIR_GEN: return "CKM_SLH_DSA_KEY_PAIR_GEN";
	case CKM_SLH_DSA: return "CKM_SLH_DSA";
	case CKM_ML_KEM_KEY_PAIR_GEN: return "CKM_ML_KEM_KEY_PAIR_GEN";
	case CKM_ML_KEM: return "CKM_ML_KEM";
	}
	snprintf(buf, sizeof buf, "CKM_0x%lx", (unsigned long)m);
	return buf;
}

/* Copy a blank-padded PKCS#11 string field into a C string. */
static void padded(char *dst, size_t dstlen, const unsigned char *src, size_t srclen)
{
	size_t n = srclen;
	while (n > 0 && (src[n - 1] == ' ' || src[n - 1] == 0))
		n--;
	if (n >= dstlen)
		n = dstlen - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

/* ------------------------------------------------------------------ */
/* Watchdog: every phase has a deadline; overrunning it aborts the run. */

static pthread_mutex_t wd_mu = PTHREAD_MUTEX_INITIALIZER;
static char wd_phase[160];
static double wd_deadline; /* 0 = none */
static void print_results(FILE *out, int partial);

static void phase(double limit, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void phase(double limit, const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&wd_mu);
	va_start(ap, fmt);
	vsnprintf(wd_phase, sizeof wd_phase, fmt, ap);
	va_end(ap);
	wd_deadline = limit > 0 ? now() + limit : 0;
	pthread_mutex_unlock(&wd_mu);
}

static void *watchdog(void *arg)
{
	(void)arg;
	for (;;) {
		struct timespec ts = {0, 200 * 1000 * 1000};
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&wd_mu);
		int fired = wd_deadline > 0 && now() > wd_deadline;
		char ph[sizeof wd_phase];
		memcpy(ph, wd_phase, sizeof ph);
		pthread_mutex_unlock(&wd_mu);
		if (fired) {
			fprintf(stderr, "p11bench: TIMEOUT: %s did not finish in time; aborting\n", ph);
			print_results(stdout, 1);
			fflush(stdout);
			fflush(stderr);
			_exit(3);
		}
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Keys and operations                                                 */

enum {
	K_RSA2048, K_RSA3072, K_RSA4096, K_P256, K_P384, K_P521, K_DSA1024, K_DSA2048, K_ED25519, K_DH2048, K_ED448,
	K_MLDSA44, K_MLDSA65, K_MLDSA87, K_SLH128F, K_SLH128S, K_MLKEM768, K_X25519, K_AES256, K_N
};

static const unsigned char OID_P256[] = {0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};
/* Ed25519's CKA_EC_PARAMS as pkcs11-tool and SoftHSMv2 have it: PrintableString "edwards25519". */
static const unsigned char ED25519_PARAMS[] = {0x13, 0x0c, 'e', 'd', 'w', 'a', 'r', 'd', 's', '2', '5', '5', '1', '9'};
static const unsigned char ED448_PARAMS[] = {0x06, 0x03, 0x2b, 0x65, 0x71}; /* id-Ed448 */
static const unsigned char X25519_PARAMS[] = {0x06, 0x03, 0x2b, 0x65, 0x6e}; /* id-X25519 */
static const unsigned char OID_P384[] = {0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22};
static const unsigned char OID_P521[] = {0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23};

/* DSA domain parameters (engine/alg/dsa/testdata, made by openssl genpkey -genparam). */
static const unsigned char DSA1024_P[] = {
	0xb2, 0xd8, 0xf2, 0xbd, 0x6c, 0xab, 0xa9, 0x52, 0x2a, 0x9e, 0x0d, 0x13, 0x66, 0xff, 0x75, 0xe6,
	0xae, 0x66, 0x76, 0x42, 0x71, 0x1b, 0x90, 0x90, 0xe6, 0x3b, 0xc9, 0xba, 0xfc, 0x09, 0xb7, 0x4c,
	0x0a, 0x36, 0xc5, 0x05, 0x99, 0xc0, 0xbc, 0x61, 0x54, 0xc5, 0x6e, 0x7f, 0x0d, 0x88, 0xfd, 0x13,
	0xad, 0x47, 0xc6, 0xb0, 0x7d, 0xcd, 0x7a, 0xb7, 0x1e, 0x05, 0xdb, 0xe6, 0x8e, 0xb6, 0x44, 0x42,
	0xb6, 0x26, 0xce, 0x75, 0x90, 0x90, 0x6a, 0xba, 0x2e, 0x9f, 0x99, 0x4c, 0x6a, 0x2c, 0xf0, 0x8d,
	0xcf, 0xa6, 0xbd, 0x05, 0xd4, 0x63, 0x7b, 0x47, 0xb0, 0xf1, 0x30, 0x88, 0xe1, 0x06, 0x30, 0x12,
	0x0e, 0xe9, 0xbb, 0xb0, 0x82, 0x0b, 0x06, 0x6a, 0x93, 0x57, 0x2d, 0xcd, 0x75, 0x61, 0x6b, 0x1d,
	0x52, 0x77, 0xd3, 0xea, 0x34, 0xb3, 0x11, 0x21, 0x1a, 0x67, 0x6d, 0xa5, 0x01, 0x56, 0xb7, 0xbd,
};
static const unsigned char DSA1024_Q[] = {
	0x84, 0xcf, 0x19, 0x1c, 0x88, 0x92, 0x7d, 0x4a, 0x97, 0xc6, 0xf4, 0x86, 0xfd, 0xaa, 0x26, 0x3b,
	0x6f, 0x7f, 0x9a, 0x09,
};
static const unsigned char DSA1024_G[] = {
	0x60, 0xa8, 0x29, 0xbe, 0x49, 0x1d, 0xdb, 0x2b, 0xce, 0x9a, 0x43, 0x88, 0x3b, 0xfc, 0xcc, 0xcc,
	0x87, 0x2d, 0x9f, 0x3a, 0xa9, 0x9f, 0x30, 0xfa, 0xdb, 0x63, 0x5c, 0xc5, 0x7a, 0xb7, 0x85, 0xbf,
	0x45, 0x0e, 0xbb, 0x50, 0xb2, 0x51, 0x85, 0x9a, 0x4b, 0xc1, 0x8b, 0x2c, 0x87, 0x59, 0xc3, 0xf9,
	0xea, 0x9e, 0xb6, 0x40, 0x1a, 0x02, 0xe1, 0xd6, 0xb9, 0x50, 0x1a, 0x2e, 0x12, 0x16, 0x25, 0x2b,
	0xc4, 0x41, 0xbf, 0x85, 0xda, 0x60, 0xed, 0xb6, 0x81, 0x06, 0xcb, 0x03, 0x92, 0xbd, 0xf4, 0x9c,
	0x47, 0xa2, 0x2f, 0x39, 0xd3, 0xa5, 0xb5, 0xef, 0x0f, 0xcd, 0x99, 0xd4, 0x65, 0xb1, 0xe7, 0x25,
	0xad, 0xab, 0x28, 0xb4, 0xa6, 0xec, 0x4a, 0x2a, 0x71, 0xcd, 0x2d, 0x7a, 0x50, 0x0e, 0x34, 0x9d,
	0x0d, 0x56, 0x74, 0xee, 0xb1, 0x90, 0x44, 0x24, 0x27, 0x4c, 0x12, 0x8b, 0x8e, 0x18, 0x15, 0xa9,
};
static const unsigned char DSA2048_P[] = {
	0xd3, 0x34, 0x1e, 0x8a, 0x98, 0x04, 0xfd, 0x72, 0x14, 0x51, 0x1f, 0x5b, 0x31, 0xe8, 0xa5, 0x0d,
	0xd9, 0x69, 0x1e, 0x1e, 0x6c, 0x8a, 0x8c, 0x4f, 0x69, 0x18, 0xfa, 0xb6, 0x42, 0xa6, 0x98, 0xe1,
	0x57, 0xfb, 0xaf, 0x58, 0x10, 0x79, 0xd1, 0xd5, 0x37, 0xcf, 0xf3, 0x1f, 0x66, 0x1e, 0x21, 0x0b,
	0xac, 0xb5, 0x8a, 0xb1, 0xaa, 0xe4, 0xf7, 0xc9, 0x53, 0xba, 0xa3, 0xe1, 0x63, 0x9a, 0x68, 0x9c,
	0xfb, 0xdf, 0x63, 0x03, 0x5b, 0xd6, 0x3c, 0x97, 0xd7, 0x34, 0xc1, 0xab, 0x61, 0x8e, 0x5e, 0x9a,
	0x5a, 0xc6, 0x5a, 0x11, 0x4f, 0x56, 0xd1, 0xdb, 0xda, 0xf6, 0x29, 0x6d, 0x47, 0x71, 0xe1, 0x9c,
	0x47, 0x23, 0xa3, 0x1e, 0xa9, 0xdc, 0x93, 0x51, 0x83, 0xc6, 0x1c, 0x18, 0x61, 0xba, 0x62, 0x8e,
	0x1f, 0x29, 0xdc, 0x0d, 0xf6, 0x11, 0x27, 0x02, 0x31, 0x30, 0x67, 0x5d, 0x90, 0x13, 0xc0, 0x59,
	0x02, 0xe4, 0x70, 0x61, 0x3c, 0x77, 0xc4, 0x96, 0x56, 0x4d, 0x15, 0xe8, 0xec, 0x60, 0x93, 0xb5,
	0x42, 0x13, 0x41, 0xa1, 0xed, 0xab, 0xf5, 0xd6, 0x59, 0x15, 0x14, 0xa5, 0xfa, 0x0f, 0x4b, 0x73,
	0xfb, 0x8a, 0x6c, 0xf2, 0x3d, 0xd2, 0xa0, 0x7d, 0xbb, 0xe2, 0xc0, 0x19, 0x98, 0x67, 0x42, 0xc0,
	0x66, 0x90, 0x69, 0x84, 0x95, 0x60, 0xa1, 0xe3, 0x48, 0x6e, 0x8c, 0x4c, 0x7b, 0x87, 0xc1, 0x47,
	0xeb, 0x34, 0x92, 0xfd, 0xbb, 0x83, 0xc3, 0x2d, 0x7e, 0xc1, 0x9b, 0xdc, 0xdf, 0x74, 0x09, 0xd1,
	0x05, 0x8d, 0x77, 0xfa, 0x5c, 0x9c, 0xb8, 0xc2, 0x6a, 0x6a, 0x7b, 0x4f, 0xaf, 0xf9, 0xd7, 0xc5,
	0x6d, 0x6e, 0x37, 0x0c, 0x47, 0x8c, 0x68, 0x78, 0x4e, 0x03, 0xb2, 0x55, 0x57, 0x04, 0xd1, 0x3f,
	0x50, 0xea, 0x84, 0xbe, 0x1a, 0xf1, 0x52, 0x85, 0x65, 0x98, 0x79, 0x4a, 0x9c, 0x4b, 0x3e, 0x0b,
};
static const unsigned char DSA2048_Q[] = {
	0xc2, 0x84, 0xa9, 0xf5, 0xe8, 0xa0, 0xae, 0x47, 0x47, 0x0f, 0x87, 0x9e, 0x9f, 0x3d, 0xcd, 0xd5,
	0x82, 0x97, 0xdc, 0x36, 0x42, 0x01, 0x70, 0xfb, 0xbb, 0xaa, 0x66, 0x06, 0xff, 0x2a, 0xc4, 0x0b,
};
static const unsigned char DSA2048_G[] = {
	0x9e, 0xd1, 0x8c, 0xa6, 0xc4, 0x9b, 0x62, 0xe8, 0xdf, 0xc6, 0x8b, 0xf6, 0x9f, 0xda, 0x1d, 0x3a,
	0x4d, 0x4b, 0x64, 0xc2, 0x21, 0xea, 0xcf, 0xfd, 0xbd, 0x32, 0x5b, 0xdf, 0x2d, 0xa7, 0x13, 0xaf,
	0xad, 0xba, 0xc5, 0xd7, 0x37, 0x1e, 0x8c, 0x91, 0xc2, 0xeb, 0xea, 0x2c, 0x18, 0x0f, 0x9b, 0x67,
	0x30, 0x3d, 0x06, 0x44, 0xa1, 0xef, 0x09, 0x89, 0xae, 0x8f, 0x76, 0x5f, 0x8d, 0x26, 0x26, 0x80,
	0x6a, 0xcc, 0xbd, 0x8a, 0x4c, 0x30, 0xf6, 0x5a, 0x31, 0xd0, 0x1e, 0x28, 0xdd, 0xd2, 0xd6, 0x68,
	0x11, 0xd8, 0x70, 0x2e, 0x4f, 0xdf, 0xa5, 0xd7, 0x3c, 0x1a, 0xa1, 0x4f, 0xdf, 0xda, 0x65, 0x73,
	0xe5, 0xbb, 0x38, 0x5a, 0xf3, 0x25, 0x6c, 0x72, 0x48, 0x43, 0x6d, 0x94, 0x92, 0x68, 0x8a, 0xa3,
	0x27, 0x81, 0xc7, 0xc6, 0xad, 0x75, 0xfa, 0x4c, 0x1d, 0x9c, 0x01, 0x43, 0xab, 0x17, 0x9b, 0x7d,
	0x16, 0xc9, 0x25, 0x53, 0x8c, 0x95, 0xa3, 0xb3, 0x99, 0xf3, 0x06, 0xd0, 0x60, 0x46, 0x19, 0x5c,
	0xcc, 0x32, 0xd5, 0x46, 0x6b, 0xdf, 0x9c, 0x05, 0xed, 0xfb, 0xdc, 0xf9, 0xc4, 0x5d, 0x70, 0x60,
	0x9c, 0x6c, 0x86, 0x72, 0x6e, 0x1f, 0x88, 0x69, 0xb5, 0x63, 0x10, 0x54, 0xb0, 0x01, 0x24, 0x47,
	0x79, 0xe7, 0x16, 0xf2, 0x43, 0x64, 0x21, 0xf6, 0x2c, 0x95, 0x13, 0x00, 0x5e, 0xf5, 0x4f, 0xf9,
	0x53, 0x5c, 0xc2, 0xe8, 0x5e, 0xf7, 0x42, 0x3c, 0x5b, 0xdb, 0x44, 0x63, 0x81, 0x3a, 0x07, 0x14,
	0x10, 0x24, 0x17, 0x17, 0xff, 0x7d, 0x99, 0x45, 0x26, 0x54, 0x56, 0xe7, 0x9a, 0x3c, 0xcb, 0x20,
	0xe0, 0xb5, 0x34, 0x08, 0xf9, 0x5d, 0x79, 0x45, 0xac, 0x12, 0x2b, 0x79, 0x44, 0xb8, 0x69, 0x77,
	0x24, 0x3f, 0x24, 0x28, 0xbb, 0x83, 0x3d, 0xa8, 0x89, 0x6f, 0x46, 0xe3, 0x08, 0xd8, 0x00, 0xf9,
};

/* RFC 7919 ffdhe2048, generator 2. */
static const unsigned char FFDHE2048_P[] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xad, 0xf8, 0x54, 0x58, 0xa2, 0xbb, 0x4a, 0x9a,
	0xaf, 0xdc, 0x56, 0x20, 0x27, 0x3d, 0x3c, 0xf1, 0xd8, 0xb9, 0xc5, 0x83, 0xce, 0x2d, 0x36, 0x95,
	0xa9, 0xe1, 0x36, 0x41, 0x14, 0x64, 0x33, 0xfb, 0xcc, 0x93, 0x9d, 0xce, 0x24, 0x9b, 0x3e, 0xf9,
	0x7d, 0x2f, 0xe3, 0x63, 0x63, 0x0c, 0x75, 0xd8, 0xf6, 0x81, 0xb2, 0x02, 0xae, 0xc4, 0x61, 0x7a,
	0xd3, 0xdf, 0x1e, 0xd5, 0xd5, 0xfd, 0x65, 0x61, 0x24, 0x33, 0xf5, 0x1f, 0x5f, 0x06, 0x6e, 0xd0,
	0x85, 0x63, 0x65, 0x55, 0x3d, 0xed, 0x1a, 0xf3, 0xb5, 0x57, 0x13, 0x5e, 0x7f, 0x57, 0xc9, 0x35,
	0x98, 0x4f, 0x0c, 0x70, 0xe0, 0xe6, 0x8b, 0x77, 0xe2, 0xa6, 0x89, 0xda, 0xf3, 0xef, 0xe8, 0x72,
	0x1d, 0xf1, 0x58, 0xa1, 0x36, 0xad, 0xe7, 0x35, 0x30, 0xac, 0xca, 0x4f, 0x48, 0x3a, 0x79, 0x7a,
	0xbc, 0x0a, 0xb1, 0x82, 0xb3, 0x24, 0xfb, 0x61, 0xd1, 0x08, 0xa9, 0x4b, 0xb2, 0xc8, 0xe3, 0xfb,
	0xb9, 0x6a, 0xda, 0xb7, 0x60, 0xd7, 0xf4, 0x68, 0x1d, 0x4f, 0x42, 0xa3, 0xde, 0x39, 0x4d, 0xf4,
	0xae, 0x56, 0xed, 0xe7, 0x63, 0x72, 0xbb, 0x19, 0x0b, 0x07, 0xa7, 0xc8, 0xee, 0x0a, 0x6d, 0x70,
	0x9e, 0x02, 0xfc, 0xe1, 0xcd, 0xf7, 0xe2, 0xec, 0xc0, 0x34, 0x04, 0xcd, 0x28, 0x34, 0x2f, 0x61,
	0x91, 0x72, 0xfe, 0x9c, 0xe9, 0x85, 0x83, 0xff, 0x8e, 0x4f, 0x12, 0x32, 0xee, 0xf2, 0x81, 0x83,
	0xc3, 0xfe, 0x3b, 0x1b, 0x4c, 0x6f, 0xad, 0x73, 0x3b, 0xb5, 0xfc, 0xbc, 0x2e, 0xc2, 0x20, 0x05,
	0xc5, 0x8e, 0xf1, 0x83, 0x7d, 0x16, 0x83, 0xb2, 0xc6, 0xf3, 0x4a, 0x26, 0xc1, 0xb2, 0xef, 0xfa,
	0x88, 0x6b, 0x42, 0x38, 0x61, 0x28, 0x5c, 0x97, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};
static const unsigned char FFDHE_G[] = {0x02};

/* Finite-field domain parameters: DSA (p, q, g) or DH (p, g; dh set, no q). */
static const struct ffparams {
	const unsigned char *p, *q, *g;
	size_t plen, qlen, glen;
	int dh;
} DSA1024 = {DSA1024_P, DSA1024_Q, DSA1024_G, sizeof DSA1024_P, sizeof DSA1024_Q, sizeof DSA1024_G, 0},
  DSA2048 = {DSA2048_P, DSA2048_Q, DSA2048_G, sizeof DSA2048_P, sizeof DSA2048_Q, sizeof DSA2048_G, 0},
  DH2048 = {FFDHE2048_P, NULL, FFDHE_G, sizeof FFDHE2048_P, 0, sizeof FFDHE_G, 1};

static const struct keyspec {
	const char *label;
	int ec; /* 1: a Weierstrass curve (CKK_EC), 2: Edwards (CKK_EC_EDWARDS), 3: Montgomery (CKK_EC_MONTGOMERY), 4: an AES secret key */
	CK_ULONG bits;
	const unsigned char *oid;
	size_t oidlen;
	double gen_limit; /* watchdog limit for generating it, seconds */
	const struct ffparams *ff; /* DSA and DH keys: the domain parameters */
	CK_KEY_TYPE pq;     /* CKK_ML_DSA, CKK_SLH_DSA, CKK_ML_KEM (0: none of them) */
	CK_ULONG pset;      /* their CKA_PARAMETER_SET */
	CK_ULONG siglen;    /* their signature (ML-KEM: ciphertext) length */
} KEYS[K_N] = {
	{"bench-rsa2048", 0, 2048, NULL, 0, 120, NULL, 0, 0, 0},
	{"bench-rsa3072", 0, 3072, NULL, 0, 300, NULL, 0, 0, 0},
	{"bench-rsa4096", 0, 4096, NULL, 0, 600, NULL, 0, 0, 0},
	{"bench-p256", 1, 256, OID_P256, sizeof OID_P256, 60, NULL, 0, 0, 0},
	{"bench-p384", 1, 384, OID_P384, sizeof OID_P384, 60, NULL, 0, 0, 0},
	{"bench-p521", 1, 521, OID_P521, sizeof OID_P521, 60, NULL, 0, 0, 0},
	{"bench-dsa1024", 0, 1024, NULL, 0, 60, &DSA1024, 0, 0, 0},
	{"bench-dsa2048", 0, 2048, NULL, 0, 60, &DSA2048, 0, 0, 0},
	{"bench-ed25519", 2, 256, ED25519_PARAMS, sizeof ED25519_PARAMS, 60, NULL, 0, 0, 0},
	{"bench-dh2048", 0, 2048, NULL, 0, 60, &DH2048, 0, 0, 0},
	{"bench-ed448", 2, 448, ED448_PARAMS, sizeof ED448_PARAMS, 60, NULL, 0, 0, 0},
	{"bench-ml-dsa-44", 0, 0, NULL, 0, 60, NULL, CKK_ML_DSA, CKP_ML_DSA_44, 2420},
	{"bench-ml-dsa-65", 0, 0, NULL, 0, 60, NULL, CKK_ML_DSA, CKP_ML_DSA_65, 3309},
	{"bench-ml-dsa-87", 0, 0, NULL, 0, 60, NULL, CKK_ML_DSA, CKP_ML_DSA_87, 4627},
	{"bench-slh-dsa-sha2-128f", 0, 0, NULL, 0, 60, NULL, CKK_SLH_DSA, CKP_SLH_DSA_SHA2_128F, 17088},
	{"bench-slh-dsa-sha2-128s", 0, 0, NULL, 0, 120, NULL, CKK_SLH_DSA, CKP_SLH_DSA_SHA2_128S, 7856},
	{"bench-ml-kem-768", 0, 0, NULL, 0, 60, NULL, CKK_ML_KEM, CKP_ML_KEM_768, 1088},
	{"bench-x25519", 3, 255, X25519_PARAMS, sizeof X25519_PARAMS, 60, NULL, 0, 0, 0},
	{"bench-aes256", 4, 256, NULL, 0, 60, NULL, 0, 0, 0},
};

/* The AES-256 key of the bulk-cipher rows: the same value in both modules,
 * so that each decrypts what the other encrypted (the check). */
static const unsigned char AES_KEY[32] = {0x60, 0x3d, 0xeb, 0x10, 0x15, 0xca, 0x71, 0xbe, 0x2b, 0x73, 0xae,
					  0xf0, 0x85, 0x7d, 0x77, 0x81, 0x1f, 0x35, 0x2c, 0x07, 0x3b, 0x61,
					  0x08, 0xd7, 0x2d, 0x98, 0x10, 0xa3, 0x09, 0x14, 0xdf, 0xf4};

/* A fresh 12-byte IV for every encryption of the run (our module refuses a
 * GCM IV repeated on one key; CBC takes the first 16 bytes of iv). */
static uint64_t IV_COUNTER;
static void next_iv(unsigned char iv[16])
{
	uint64_t n = __atomic_add_fetch(&IV_COUNTER, 1, __ATOMIC_RELAXED);
	memset(iv, 0, 16);
	memcpy(iv + 4, &n, sizeof n);
}

/* The parameter of an encryption row: GCM's, CTR's (CBC's is the IV). */
typedef struct {
	CK_GCM_PARAMS gcm;
	CK_AES_CTR_PARAMS ctr;
} cipher_params_t;

/* The CK_MECHANISM of an encryption row, its parameter in *p and iv (CTR:
 * a 128-bit counter starting at iv). */
static CK_MECHANISM cipher_mechanism(CK_MECHANISM_TYPE t, unsigned char iv[16], cipher_params_t *p)
{
	CK_MECHANISM m = {t, iv, 16};
	if (t == CKM_AES_GCM) {
		memset(&p->gcm, 0, sizeof p->gcm);
		p->gcm.pIv = iv;
		p->gcm.ulIvLen = 12;
		p->gcm.ulIvBits = 96;
		p->gcm.ulTagBits = 128;
		m.pParameter = &p->gcm;
		m.ulParameterLen = sizeof p->gcm;
	} else if (t == CKM_AES_CTR) {
		p->ctr.counter_bits = 128;
		memcpy(p->ctr.cb, iv, 16);
		m.pParameter = &p->ctr;
		m.ulParameterLen = sizeof p->ctr;
	}
	return m;
}

/* The ciphertext length of an encryption row. */
static CK_ULONG cipher_len(CK_MECHANISM_TYPE t, CK_ULONG n) { return t == CKM_AES_GCM ? n + 16 : n; }

/* The generation mechanism of a key spec. */
static CK_MECHANISM_TYPE gen_mech(const struct keyspec *ks)
{
	if (ks->pq)
		return ks->pq == CKK_ML_DSA ? CKM_ML_DSA_KEY_PAIR_GEN
		       : ks->pq == CKK_SLH_DSA ? CKM_SLH_DSA_KEY_PAIR_GEN : CKM_ML_KEM_KEY_PAIR_GEN;
	if (ks->ec == 3)
		return CKM_EC_MONTGOMERY_KEY_PAIR_GEN;
	if (ks->ec == 4)
		return CKM_AES_KEY_GEN;
	if (ks->ff)
		return ks->ff->dh ? CKM_DH_PKCS_KEY_PAIR_GEN : CKM_DSA_KEY_PAIR_GEN;
	if (ks->ec == 2)
		return CKM_EC_EDWARDS_KEY_PAIR_GEN;
	return ks->ec ? CKM_EC_KEY_PAIR_GEN : CKM_RSA_PKCS_KEY_PAIR_GEN;
}

/* The signature mechanism of a key spec, for checks. */
static CK_MECHANISM_TYPE sig_mech(const struct keyspec *ks)
{
	if (ks->pq)
		return ks->pq == CKK_ML_DSA ? CKM_ML_DSA : ks->pq == CKK_SLH_DSA ? CKM_SLH_DSA : CKM_ML_KEM;
	if (ks->ec == 3)
		return CKM_ECDH1_DERIVE;
	if (ks->ff)
		return ks->ff->dh ? CKM_DH_PKCS_DERIVE : CKM_DSA;
	if (ks->ec == 2)
		return CKM_EDDSA;
	return ks->ec ? CKM_ECDSA : CKM_SHA256_RSA_PKCS;
}

/* OP_DERIVE: C_DeriveKey of a 32-byte generic secret, then C_DestroyObject of it. */
/* OP_FIND_SIGN: what libp11's engine does per TLS handshake when nginx loads
 * the key for every handshake (test/bench/nginx.sh, worker mode): a search
 * for every private key (C_FindObjectsInit with CKA_CLASS only, C_FindObjects
 * one handle at a time until none, C_FindObjectsFinal), then C_SignInit and
 * C_Sign with the key's handle, which the search must have returned. */
/* OP_LOGIN: C_Logout then C_Login with the right user PIN, the login a
 * process repeats (issue 27: ours remembers a right PIN, pin_cache;
 * SoftHSMv2 runs PBKDF2). Login state is the application's, so threads
 * race: a C_Logout that finds no login and a C_Login that finds one are
 * not errors, and only a C_Login that answers CKR_OK counts. */
/* OP_ENCAP: C_EncapsulateKey of a 32-byte generic secret with the public
 * key, then C_DestroyObject of it; OP_DECAP: C_DecapsulateKey of a
 * ciphertext made before the clock, then C_DestroyObject. */
/* OP_ENCRYPT: C_EncryptInit + C_Encrypt of dlen bytes with the AES key and a
 * fresh IV; a sample ciphertext per thread is decrypted by both modules. */
typedef enum { OP_SIGN, OP_VERIFY, OP_KEYGEN, OP_DERIVE, OP_FIND_SIGN, OP_LOGIN, OP_ENCAP, OP_DECAP, OP_ENCRYPT } opkind_t;

typedef struct {
	const char *id;
	const char *title;
	opkind_t kind;
	int key;
	CK_MECHANISM_TYPE mech;
	int pss;
	CK_ULONG dlen;
} opdef_t;

static const opdef_t OPS[] = {
	{"rsa2048-sign-pkcs1", "RSA-2048 sign SHA256-RSA-PKCS", OP_SIGN, K_RSA2048, CKM_SHA256_RSA_PKCS, 0, 32},
	{"rsa2048-sign-pss", "RSA-2048 sign PSS (SHA-256)", OP_SIGN, K_RSA2048, CKM_RSA_PKCS_PSS, 1, 32},
	{"rsa3072-sign-pkcs1", "RSA-3072 sign SHA256-RSA-PKCS", OP_SIGN, K_RSA3072, CKM_SHA256_RSA_PKCS, 0, 32},
	{"rsa3072-sign-pss", "RSA-3072 sign PSS (SHA-256)", OP_SIGN, K_RSA3072, CKM_RSA_PKCS_PSS, 1, 32},
	{"rsa4096-sign-pkcs1", "RSA-4096 sign SHA256-RSA-PKCS", OP_SIGN, K_RSA4096, CKM_SHA256_RSA_PKCS, 0, 32},
	{"rsa4096-sign-pss", "RSA-4096 sign PSS (SHA-256)", OP_SIGN, K_RSA4096, CKM_RSA_PKCS_PSS, 1, 32},
	{"rsa2048-verify", "RSA-2048 verify SHA256-RSA-PKCS", OP_VERIFY, K_RSA2048, CKM_SHA256_RSA_PKCS, 0, 32},
	{"rsa3072-verify", "RSA-3072 verify SHA256-RSA-PKCS", OP_VERIFY, K_RSA3072, CKM_SHA256_RSA_PKCS, 0, 32},
	{"rsa4096-verify", "RSA-4096 verify SHA256-RSA-PKCS", OP_VERIFY, K_RSA4096, CKM_SHA256_RSA_PKCS, 0, 32},
	{"p256-sign", "P-256 sign ECDSA (32-byte hash)", OP_SIGN, K_P256, CKM_ECDSA, 0, 32},
	{"p256-verify", "P-256 verify ECDSA", OP_VERIFY, K_P256, CKM_ECDSA, 0, 32},
	{"p256-find-sign", "P-256 find private keys + sign ECDSA (libp11)", OP_FIND_SIGN, K_P256, CKM_ECDSA, 0, 32},
	{"rsa2048-find-sign", "RSA-2048 find private keys + sign PSS (libp11)", OP_FIND_SIGN, K_RSA2048, CKM_RSA_PKCS_PSS, 1, 32},
	{"p384-sign", "P-384 sign ECDSA (48-byte hash)", OP_SIGN, K_P384, CKM_ECDSA, 0, 48},
	{"p384-verify", "P-384 verify ECDSA", OP_VERIFY, K_P384, CKM_ECDSA, 0, 48},
	{"p521-sign", "P-521 sign ECDSA (64-byte hash)", OP_SIGN, K_P521, CKM_ECDSA, 0, 64},
	{"p521-verify", "P-521 verify ECDSA", OP_VERIFY, K_P521, CKM_ECDSA, 0, 64},
	{"dsa1024-sign", "DSA-1024/160 sign (32-byte hash)", OP_SIGN, K_DSA1024, CKM_DSA, 0, 32},
	{"dsa1024-verify", "DSA-1024/160 verify", OP_VERIFY, K_DSA1024, CKM_DSA, 0, 32},
	{"dsa2048-sign", "DSA-2048/256 sign (32-byte hash)", OP_SIGN, K_DSA2048, CKM_DSA, 0, 32},
	{"dsa2048-verify", "DSA-2048/256 verify", OP_VERIFY, K_DSA2048, CKM_DSA, 0, 32},
	{"ed25519-sign", "Ed25519 sign EdDSA (32-byte msg)", OP_SIGN, K_ED25519, CKM_EDDSA, 0, 32},
	{"ed25519-verify", "Ed25519 verify EdDSA", OP_VERIFY, K_ED25519, CKM_EDDSA, 0, 32},
	{"ed448-sign", "Ed448 sign EdDSA (32-byte msg)", OP_SIGN, K_ED448, CKM_EDDSA, 0, 32},
	{"ed448-verify", "Ed448 verify EdDSA", OP_VERIFY, K_ED448, CKM_EDDSA, 0, 32},
	{"mldsa44-sign", "ML-DSA-44 sign (32-byte msg)", OP_SIGN, K_MLDSA44, CKM_ML_DSA, 0, 32},
	{"mldsa44-verify", "ML-DSA-44 verify", OP_VERIFY, K_MLDSA44, CKM_ML_DSA, 0, 32},
	{"mldsa65-sign", "ML-DSA-65 sign (32-byte msg)", OP_SIGN, K_MLDSA65, CKM_ML_DSA, 0, 32},
	{"mldsa65-verify", "ML-DSA-65 verify", OP_VERIFY, K_MLDSA65, CKM_ML_DSA, 0, 32},
	{"mldsa87-sign", "ML-DSA-87 sign (32-byte msg)", OP_SIGN, K_MLDSA87, CKM_ML_DSA, 0, 32},
	{"mldsa87-verify", "ML-DSA-87 verify", OP_VERIFY, K_MLDSA87, CKM_ML_DSA, 0, 32},
	{"slhdsa128f-sign", "SLH-DSA-SHA2-128f sign (32 bytes)", OP_SIGN, K_SLH128F, CKM_SLH_DSA, 0, 32},
	{"slhdsa128s-sign", "SLH-DSA-SHA2-128s sign (32 bytes)", OP_SIGN, K_SLH128S, CKM_SLH_DSA, 0, 32},
	{"mlkem768-encap", "ML-KEM-768 encapsulate + destroy", OP_ENCAP, K_MLKEM768, CKM_ML_KEM, 0, 0},
	{"mlkem768-decap", "ML-KEM-768 decapsulate + destroy", OP_DECAP, K_MLKEM768, CKM_ML_KEM, 0, 0},
	{"p256-ecdh", "P-256 ECDH derive + destroy", OP_DERIVE, K_P256, CKM_ECDH1_DERIVE, 0, 0},
	{"x25519-derive", "X25519 derive + destroy", OP_DERIVE, K_X25519, CKM_ECDH1_DERIVE, 0, 0},
	{"dh2048-derive", "DH ffdhe2048 derive + destroy", OP_DERIVE, K_DH2048, CKM_DH_PKCS_DERIVE, 0, 0},
	{"rsa2048-keygen", "RSA-2048 key-pair generation", OP_KEYGEN, K_RSA2048, CKM_RSA_PKCS_KEY_PAIR_GEN, 0, 0},
	{"p256-keygen", "P-256 key-pair generation", OP_KEYGEN, K_P256, CKM_EC_KEY_PAIR_GEN, 0, 0},
	{"login", "C_Logout + C_Login, right user PIN", OP_LOGIN, K_P256, 0, 0, 0},
	{"aes-gcm-64k", "AES-256-GCM encrypt 64 KiB (x64 KiB/s)", OP_ENCRYPT, K_AES256, CKM_AES_GCM, 0, 65536},
	{"aes-cbc-64k", "AES-256-CBC encrypt 64 KiB (x64 KiB/s)", OP_ENCRYPT, K_AES256, CKM_AES_CBC, 0, 65536},
	{"aes-gcm-1k", "AES-256-GCM encrypt 1 KiB", OP_ENCRYPT, K_AES256, CKM_AES_GCM, 0, 1024},
	{"aes-cbc-1k", "AES-256-CBC encrypt 1 KiB", OP_ENCRYPT, K_AES256, CKM_AES_CBC, 0, 1024},
	{"aes-ctr-64k", "AES-256-CTR encrypt 64 KiB (x64 KiB/s)", OP_ENCRYPT, K_AES256, CKM_AES_CTR, 0, 65536},
};
#define NOPS ((int)(sizeof OPS / sizeof OPS[0]))

/* PSS parameters of the issue: SHA-256, MGF1-SHA256, 32-byte salt. Read only. */
static CK_RSA_PKCS_PSS_PARAMS PSS = {CKM_SHA256, CKG_MGF1_SHA256, 32};

static CK_MECHANISM op_mechanism(const opdef_t *op)
{
	CK_MECHANISM m = {op->mech, NULL, 0};
	if (op->pss) {
		m.pParameter = &PSS;
		m.ulParameterLen = sizeof PSS;
	}
	return m;
}

/* ------------------------------------------------------------------ */
/* Modules                                                             */

typedef struct {
	CK_OBJECT_HANDLE priv, pub;
	int ok;
	int failed; /* not ok because a call failed (not because something is unsupported) */
	char why[128];
	CK_ULONG siglen;        /* expected signature length */
	CK_OBJECT_HANDLE xpub;  /* this public key copied into the other module */
	int xok;
	char xwhy[128];
	unsigned char point[512]; /* EC keys: the public point, bare SEC 1 (an ECDH peer value); DH keys: y */
	CK_ULONG pointlen;
} bkey_t;

typedef struct module {
	const char *name, *path, *label, *pin, *so_pin;
	long slotarg;
	void *dl;
	CK_FUNCTION_LIST_PTR f;
	CK_FUNCTION_LIST_3_2 *f32; /* the 3.2 interface when the module offers it, else NULL */
	int shared;  /* same function list as the other module: initialise/finalise once */
	int dead;
	char why[200];
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE sess;
	CK_MECHANISM_TYPE *mechs;
	CK_ULONG nmech;
	bkey_t keys[K_N];
	char info[256];
	struct module *other;
} module_t;

static void kill_module(module_t *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void kill_module(module_t *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->why, sizeof m->why, fmt, ap);
	va_end(ap);
	m->dead = 1;
	fprintf(stderr, "p11bench: %s: %s\n", m->name, m->why);
}

static int has_mech(const module_t *m, CK_MECHANISM_TYPE t)
{
	for (CK_ULONG i = 0; i < m->nmech; i++)
		if (m->mechs[i] == t)
			return 1;
	return 0;
}

static int label_eq(const unsigned char *field, const char *label)
{
	char buf[33];
	padded(buf, sizeof buf, field, 32);
	return strcmp(buf, label) == 0;
}

/* Find the slot whose token carries label; returns 1 when found. */
static int find_slot_by_label(module_t *m, const char *label, CK_SLOT_ID *out, CK_SLOT_ID *uninit, int *have_uninit)
{
	CK_ULONG n = 0;
	CK_RV rv;
	*have_uninit = 0;
	phase(60, "%s: C_GetSlotList", m->name);
	rv = m->f->C_GetSlotList(CK_TRUE, NULL, &n);
	if (rv != CKR_OK) {
		kill_module(m, "C_GetSlotList: %s", rv_name(rv));
		return 0;
	}
	if (n == 0)
		return 0;
	CK_SLOT_ID *ids = calloc(n, sizeof *ids);
	if (!ids)
		die("out of memory");
	rv = m->f->C_GetSlotList(CK_TRUE, ids, &n);
	if (rv != CKR_OK) {
		kill_module(m, "C_GetSlotList: %s", rv_name(rv));
		free(ids);
		return 0;
	}
	int found = 0;
	for (CK_ULONG i = 0; i < n && !found; i++) {
		CK_TOKEN_INFO ti;
		rv = m->f->C_GetTokenInfo(ids[i], &ti);
		if (rv != CKR_OK) {
			fprintf(stderr, "p11bench: %s: C_GetTokenInfo(slot %lu): %s\n", m->name,
				(unsigned long)ids[i], rv_name(rv));
			continue;
		}
		if ((ti.flags & CKF_TOKEN_INITIALIZED) && label_eq(ti.label, label)) {
			*out = ids[i];
			found = 1;
		} else if (!(ti.flags & CKF_TOKEN_INITIALIZED) && !*have_uninit) {
			*uninit = ids[i];
			*have_uninit = 1;
		}
	}
	free(ids);
	return found;
}

static void module_open(module_t *m, module_t *other_loaded)
{
	CK_RV rv;
	m->dl = dlopen(m->path, RTLD_NOW | RTLD_LOCAL);
	if (!m->dl) {
		kill_module(m, "dlopen: %s", dlerror());
		return;
	}
	/* The 3.2 interface where the module has it: its function list starts
	 * as the 2.40 one, and its C_GetMechanismList names the 3.2 mechanisms. */
	void *isym = dlsym(m->dl, "C_GetInterface");
	CK_C_GetInterface gif = NULL;
	memcpy(&gif, &isym, sizeof gif); /* POSIX: object pointer to function pointer */
	if (gif) {
		CK_VERSION v32 = {3, 2};
		CK_INTERFACE_PTR iface = NULL;
		phase(60, "%s: C_GetInterface", m->name);
		rv = gif((CK_UTF8CHAR_PTR) "PKCS 11", &v32, &iface, 0);
		if (rv == CKR_OK && iface && iface->pFunctionList) {
			m->f32 = iface->pFunctionList;
			m->f = iface->pFunctionList;
		}
	}
	void *sym = dlsym(m->dl, "C_GetFunctionList");
	CK_C_GetFunctionList gfl = NULL;
	memcpy(&gfl, &sym, sizeof gfl);
	if (!m->f && !gfl) {
		kill_module(m, "no C_GetFunctionList in %s", m->path);
		return;
	}
	if (!m->f) {
		phase(60, "%s: C_GetFunctionList", m->name);
		rv = gfl(&m->f);
		if (rv != CKR_OK || !m->f) {
			kill_module(m, "C_GetFunctionList: %s", rv_name(rv));
			return;
		}
	}
	if (other_loaded && other_loaded->f && other_loaded->f == m->f) {
		m->shared = 1;
	} else {
		CK_C_INITIALIZE_ARGS ia;
		memset(&ia, 0, sizeof ia);
		ia.flags = CKF_OS_LOCKING_OK;
		phase(120, "%s: C_Initialize", m->name);
		rv = m->f->C_Initialize(&ia);
		if (rv != CKR_OK) {
			kill_module(m, "C_Initialize: %s", rv_name(rv));
			m->f = NULL;
			return;
		}
	}
	CK_INFO info;
	phase(60, "%s: C_GetInfo", m->name);
	rv = m->f->C_GetInfo(&info);
	if (rv == CKR_OK) {
		char man[33], desc[33];
		padded(man, sizeof man, info.manufacturerID, 32);
		padded(desc, sizeof desc, info.libraryDescription, 32);
		snprintf(m->info, sizeof m->info, "%s / %s %u.%u (Cryptoki %u.%u)", man, desc,
			 info.libraryVersion.major, info.libraryVersion.minor,
			 info.cryptokiVersion.major, info.cryptokiVersion.minor);
	} else {
		snprintf(m->info, sizeof m->info, "C_GetInfo: %s", rv_name(rv));
	}

	/* Slot. */
	CK_SLOT_ID uninit = 0;
	int have_uninit = 0;
	if (m->slotarg >= 0) {
		m->slot = (CK_SLOT_ID)m->slotarg;
	} else if (!find_slot_by_label(m, m->label, &m->slot, &uninit, &have_uninit)) {
		if (m->dead)
			return;
		if (!m->so_pin) {
			kill_module(m, "no token labelled \"%s\" (give --so-pin to initialise one)", m->label);
			return;
		}
		if (!have_uninit) {
			kill_module(m, "no token labelled \"%s\" and no uninitialised token", m->label);
			return;
		}
		unsigned char lab[32];
		memset(lab, ' ', sizeof lab);
		memcpy(lab, m->label, strlen(m->label) < 32 ? strlen(m->label) : 32);
		phase(300, "%s: C_InitToken", m->name);
		rv = m->f->C_InitToken(uninit, (CK_UTF8CHAR_PTR)m->so_pin, strlen(m->so_pin), lab);
		if (rv != CKR_OK) {
			kill_module(m, "C_InitToken(slot %lu): %s", (unsigned long)uninit, rv_name(rv));
			return;
		}
		/* SoftHSM renumbers slots after C_InitToken: look again. */
		if (!find_slot_by_label(m, m->label, &m->slot, &uninit, &have_uninit)) {
			if (!m->dead)
				kill_module(m, "token \"%s\" not found after C_InitToken", m->label);
			return;
		}
		CK_SESSION_HANDLE so;
		phase(60, "%s: C_OpenSession (SO)", m->name);
		rv = m->f->C_OpenSession(m->slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &so);
		if (rv != CKR_OK) {
			kill_module(m, "C_OpenSession (SO): %s", rv_name(rv));
			return;
		}
		phase(300, "%s: C_Login (SO)", m->name);
		rv = m->f->C_Login(so, CKU_SO, (CK_UTF8CHAR_PTR)m->so_pin, strlen(m->so_pin));
		if (rv != CKR_OK) {
			kill_module(m, "C_Login(CKU_SO): %s", rv_name(rv));
			return;
		}
		phase(300, "%s: C_InitPIN", m->name);
		rv = m->f->C_InitPIN(so, (CK_UTF8CHAR_PTR)m->pin, strlen(m->pin));
		if (rv != CKR_OK) {
			kill_module(m, "C_InitPIN: %s", rv_name(rv));
			return;
		}
		phase(60, "%s: C_Logout (SO)", m->name);
		rv = m->f->C_Logout(so);
		if (rv != CKR_OK) {
			kill_module(m, "C_Logout (SO): %s", rv_name(rv));
			return;
		}
		rv = m->f->C_CloseSession(so);
		if (rv != CKR_OK) {
			kill_module(m, "C_CloseSession (SO): %s", rv_name(rv));
			return;
		}
	}

	CK_TOKEN_INFO ti;
	phase(60, "%s: C_GetTokenInfo", m->name);
	rv = m->f->C_GetTokenInfo(m->slot, &ti);
	if (rv != CKR_OK) {
		kill_module(m, "C_GetTokenInfo(slot %lu): %s", (unsigned long)m->slot, rv_name(rv));
		return;
	}
	{
		char lab[33], model[17];
		padded(lab, sizeof lab, ti.label, 32);
		padded(model, sizeof model, ti.model, 16);
		size_t l = strlen(m->info);
		snprintf(m->info + l, sizeof m->info - l, "; token \"%s\" model \"%s\" slot %lu", lab, model,
			 (unsigned long)m->slot);
	}

	/* Mechanisms. */
	phase(60, "%s: C_GetMechanismList", m->name);
	rv = m->f->C_GetMechanismList(m->slot, NULL, &m->nmech);
	if (rv != CKR_OK) {
		kill_module(m, "C_GetMechanismList: %s", rv_name(rv));
		return;
	}
	m->mechs = calloc(m->nmech + 1, sizeof *m->mechs);
	if (!m->mechs)
		die("out of memory");
	rv = m->f->C_GetMechanismList(m->slot, m->mechs, &m->nmech);
	if (rv != CKR_OK) {
		kill_module(m, "C_GetMechanismList: %s", rv_name(rv));
		return;
	}

	/* Session and login (shared by every session of this application). */
	phase(60, "%s: C_OpenSession", m->name);
	rv = m->f->C_OpenSession(m->slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &m->sess);
	if (rv != CKR_OK) {
		kill_module(m, "C_OpenSession: %s", rv_name(rv));
		return;
	}
	phase(300, "%s: C_Login", m->name);
	rv = m->f->C_Login(m->sess, CKU_USER, (CK_UTF8CHAR_PTR)m->pin, strlen(m->pin));
	if (rv != CKR_OK && rv != CKR_USER_ALREADY_LOGGED_IN) {
		kill_module(m, "C_Login(CKU_USER): %s", rv_name(rv));
		return;
	}
}

/* Find objects of class cls with the given label; returns the count found (up to max). */
static int find_objects(module_t *m, CK_OBJECT_CLASS cls, const char *label, CK_OBJECT_HANDLE *out, CK_ULONG max, CK_RV *rvp)
{
	CK_ATTRIBUTE t[] = {
		{CKA_CLASS, &cls, sizeof cls},
		{CKA_LABEL, (void *)label, strlen(label)},
	};
	CK_ULONG n = 0;
	CK_RV rv = m->f->C_FindObjectsInit(m->sess, t, 2);
	if (rv != CKR_OK) {
		*rvp = rv;
		return -1;
	}
	rv = m->f->C_FindObjects(m->sess, out, max, &n);
	CK_RV rv2 = m->f->C_FindObjectsFinal(m->sess);
	if (rv != CKR_OK || rv2 != CKR_OK) {
		*rvp = rv != CKR_OK ? rv : rv2;
		return -1;
	}
	*rvp = CKR_OK;
	return (int)n;
}

/* Build key-pair generation templates for a key spec into caller arrays. */
typedef struct {
	CK_BBOOL yes, no;
	CK_ULONG bits, pset;
	CK_BYTE e[3];
	CK_ATTRIBUTE pub[8], priv[8];
	CK_ULONG npub, npriv;
	CK_MECHANISM mech;
} gentmpl_t;

static void gen_template(gentmpl_t *g, const struct keyspec *ks, int token, const char *label)
{
	memset(g, 0, sizeof *g);
	g->yes = CK_TRUE;
	g->no = CK_FALSE;
	g->bits = ks->bits;
	g->e[0] = 1;
	g->e[1] = 0;
	g->e[2] = 1;
	CK_BBOOL *tok = token ? &g->yes : &g->no;
	CK_ULONG i = 0;
	/* ML-KEM and Montgomery keys neither sign nor verify. */
	int signs = ks->pq != CKK_ML_KEM && ks->ec != 3;
	g->pub[i++] = (CK_ATTRIBUTE){CKA_TOKEN, tok, sizeof(CK_BBOOL)};
	if (signs)
		g->pub[i++] = (CK_ATTRIBUTE){CKA_VERIFY, &g->yes, sizeof(CK_BBOOL)};
	g->pub[i++] = (CK_ATTRIBUTE){CKA_LABEL, (void *)label, strlen(label)};
	g->pub[i++] = (CK_ATTRIBUTE){CKA_ID, (void *)label, strlen(label)};
	if (ks->pq) {
		g->pset = ks->pset;
		g->pub[i++] = (CK_ATTRIBUTE){CKA_PARAMETER_SET, &g->pset, sizeof g->pset};
		if (ks->pq == CKK_ML_KEM)
			g->pub[i++] = (CK_ATTRIBUTE){CKA_ENCAPSULATE, &g->yes, sizeof(CK_BBOOL)};
		g->mech.mechanism = gen_mech(ks);
	} else if (ks->ff) {
		g->pub[i++] = (CK_ATTRIBUTE){CKA_PRIME, (void *)ks->ff->p, ks->ff->plen};
		if (ks->ff->q)
			g->pub[i++] = (CK_ATTRIBUTE){CKA_SUBPRIME, (void *)ks->ff->q, ks->ff->qlen};
		g->pub[i++] = (CK_ATTRIBUTE){CKA_BASE, (void *)ks->ff->g, ks->ff->glen};
		g->mech.mechanism = gen_mech(ks);
	} else if (ks->ec) {
		g->pub[i++] = (CK_ATTRIBUTE){CKA_EC_PARAMS, (void *)ks->oid, ks->oidlen};
		g->mech.mechanism = gen_mech(ks);
	} else {
		g->pub[i++] = (CK_ATTRIBUTE){CKA_MODULUS_BITS, &g->bits, sizeof g->bits};
		g->pub[i++] = (CK_ATTRIBUTE){CKA_PUBLIC_EXPONENT, g->e, sizeof g->e};
		g->mech.mechanism = CKM_RSA_PKCS_KEY_PAIR_GEN;
	}
	g->npub = i;
	i = 0;
	g->priv[i++] = (CK_ATTRIBUTE){CKA_TOKEN, tok, sizeof(CK_BBOOL)};
	g->priv[i++] = (CK_ATTRIBUTE){CKA_PRIVATE, &g->yes, sizeof(CK_BBOOL)};
	g->priv[i++] = (CK_ATTRIBUTE){CKA_SENSITIVE, &g->yes, sizeof(CK_BBOOL)};
	if (signs)
		g->priv[i++] = (CK_ATTRIBUTE){CKA_SIGN, &g->yes, sizeof(CK_BBOOL)};
	g->priv[i++] = (CK_ATTRIBUTE){CKA_LABEL, (void *)label, strlen(label)};
	g->priv[i++] = (CK_ATTRIBUTE){CKA_ID, (void *)label, strlen(label)};
	if (ks->ec == 1 || ks->ec == 3 || (ks->ff && ks->ff->dh))
		g->priv[i++] = (CK_ATTRIBUTE){CKA_DERIVE, &g->yes, sizeof(CK_BBOOL)}; /* p256-ecdh, x25519-derive, dh2048-derive */
	if (ks->pq == CKK_ML_KEM)
		g->priv[i++] = (CK_ATTRIBUTE){CKA_DECAPSULATE, &g->yes, sizeof(CK_BBOOL)};
	g->npriv = i;
}

static CK_ULONG ec_siglen(CK_ULONG bits) { return 2 * ((bits + 7) / 8); }

/* The AES key k on module m: a session object of AES_KEY (session objects
 * are visible to every session of the process). */
static void ensure_secret(module_t *m, int k)
{
	bkey_t *key = &m->keys[k];
	CK_OBJECT_CLASS cls = CKO_SECRET_KEY;
	CK_KEY_TYPE kt = CKK_AES;
	CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
	CK_ATTRIBUTE t[] = {
		{CKA_CLASS, &cls, sizeof cls},		{CKA_KEY_TYPE, &kt, sizeof kt},
		{CKA_TOKEN, &no, sizeof no},		{CKA_ENCRYPT, &yes, sizeof yes},
		{CKA_DECRYPT, &yes, sizeof yes},	{CKA_VALUE, (void *)AES_KEY, sizeof AES_KEY},
		{CKA_LABEL, (void *)KEYS[k].label, strlen(KEYS[k].label)},
	};
	if (!has_mech(m, CKM_AES_CBC) && !has_mech(m, CKM_AES_GCM)) {
		snprintf(key->why, sizeof key->why, "no AES");
		return;
	}
	phase(60, "%s: C_CreateObject %s", m->name, KEYS[k].label);
	CK_RV rv = m->f->C_CreateObject(m->sess, t, sizeof t / sizeof t[0], &key->priv);
	if (rv != CKR_OK) {
		snprintf(key->why, sizeof key->why, "C_CreateObject(%s): %s", KEYS[k].label, rv_name(rv));
		key->failed = 1;
		return;
	}
	key->pub = key->priv;
	key->ok = 1;
}

/* Make or find the key pair k on module m. */
static void ensure_key(module_t *m, int k)
{
	const struct keyspec *ks = &KEYS[k];
	bkey_t *key = &m->keys[k];
	CK_RV rv;
	key->ok = 0;
	if (ks->ec == 4) {
		ensure_secret(m, k);
		return;
	}
	CK_MECHANISM_TYPE genmech = gen_mech(ks);

	CK_OBJECT_HANDLE privs[4], pubs[4];
	phase(60, "%s: find %s", m->name, ks->label);
	int np = find_objects(m, CKO_PRIVATE_KEY, ks->label, privs, 4, &rv);
	if (np < 0) {
		snprintf(key->why, sizeof key->why, "C_FindObjects(private %s): %s", ks->label, rv_name(rv));
		key->failed = 1;
		return;
	}
	int nq = find_objects(m, CKO_PUBLIC_KEY, ks->label, pubs, 4, &rv);
	if (nq < 0) {
		snprintf(key->why, sizeof key->why, "C_FindObjects(public %s): %s", ks->label, rv_name(rv));
		key->failed = 1;
		return;
	}
	if (np >= 1 && nq >= 1) {
		key->priv = privs[0];
		key->pub = pubs[0];
	} else {
		/* Remove a half pair left by an earlier, interrupted run. */
		for (int i = 0; i < np; i++) {
			rv = m->f->C_DestroyObject(m->sess, privs[i]);
			if (rv != CKR_OK)
				fprintf(stderr, "p11bench: %s: C_DestroyObject(orphan %s): %s\n", m->name, ks->label, rv_name(rv));
		}
		for (int i = 0; i < nq; i++) {
			rv = m->f->C_DestroyObject(m->sess, pubs[i]);
			if (rv != CKR_OK)
				fprintf(stderr, "p11bench: %s: C_DestroyObject(orphan %s): %s\n", m->name, ks->label, rv_name(rv));
		}
		if (!has_mech(m, genmech)) {
			snprintf(key->why, sizeof key->why, "no %s", mech_name(genmech));
			return;
		}
		gentmpl_t g;
		gen_template(&g, ks, 1, ks->label);
		phase(ks->gen_limit, "%s: C_GenerateKeyPair %s", m->name, ks->label);
		double t0 = now();
		rv = m->f->C_GenerateKeyPair(m->sess, &g.mech, g.pub, g.npub, g.priv, g.npriv, &key->pub, &key->priv);
		if (rv != CKR_OK) {
			/* These say "this curve or size is not supported": the row is n/a. */
			int unsupported = rv == CKR_CURVE_NOT_SUPPORTED || rv == CKR_DOMAIN_PARAMS_INVALID ||
					  rv == CKR_KEY_SIZE_RANGE || rv == CKR_MECHANISM_INVALID ||
					  (ks->ec && rv == CKR_ATTRIBUTE_VALUE_INVALID);
			key->failed = !unsupported;
			snprintf(key->why, sizeof key->why, "C_GenerateKeyPair(%s): %s", ks->label, rv_name(rv));
			fprintf(stderr, "p11bench: %s: %s\n", m->name, key->why);
			return;
		}
		fprintf(stderr, "p11bench: %s: generated %s in %.2f s\n", m->name, ks->label, now() - t0);
	}

	/* Expected signature length, from the public key. */
	phase(60, "%s: C_GetAttributeValue %s", m->name, ks->label);
	if (ks->pq) {
		CK_ULONG set = 0;
		CK_ATTRIBUTE a = {CKA_PARAMETER_SET, &set, sizeof set};
		rv = m->f->C_GetAttributeValue(m->sess, key->pub, &a, 1);
		if (rv != CKR_OK) {
			snprintf(key->why, sizeof key->why, "C_GetAttributeValue(CKA_PARAMETER_SET): %s", rv_name(rv));
			key->failed = 1;
			return;
		}
		if (set != ks->pset) {
			snprintf(key->why, sizeof key->why, "existing %s has other parameter set", ks->label);
			return;
		}
		key->siglen = ks->siglen;
	} else if (ks->ff && ks->ff->dh) {
		/* The public value y: the peer value of a derivation. */
		CK_ATTRIBUTE a = {CKA_VALUE, key->point, sizeof key->point};
		rv = m->f->C_GetAttributeValue(m->sess, key->pub, &a, 1);
		if (rv != CKR_OK) {
			snprintf(key->why, sizeof key->why, "C_GetAttributeValue(CKA_VALUE): %s", rv_name(rv));
			key->failed = 1;
			return;
		}
		key->pointlen = a.ulValueLen;
	} else if (ks->ff) {
		CK_ATTRIBUTE a = {CKA_SUBPRIME, NULL, 0};
		rv = m->f->C_GetAttributeValue(m->sess, key->pub, &a, 1);
		if (rv != CKR_OK) {
			snprintf(key->why, sizeof key->why, "C_GetAttributeValue(CKA_SUBPRIME): %s", rv_name(rv));
			key->failed = 1;
			return;
		}
		if (a.ulValueLen != ks->ff->qlen) {
			snprintf(key->why, sizeof key->why, "existing %s has other parameters", ks->label);
			return;
		}
		key->siglen = 2 * ks->ff->qlen;
	} else if (ks->ec) {
		CK_BYTE params[16];
		CK_ATTRIBUTE a = {CKA_EC_PARAMS, params, sizeof params};
		rv = m->f->C_GetAttributeValue(m->sess, key->pub, &a, 1);
		if (rv != CKR_OK) {
			snprintf(key->why, sizeof key->why, "C_GetAttributeValue(CKA_EC_PARAMS): %s", rv_name(rv));
			key->failed = 1;
			return;
		}
		if (a.ulValueLen != ks->oidlen || memcmp(params, ks->oid, ks->oidlen) != 0) {
			snprintf(key->why, sizeof key->why, "existing %s has other curve", ks->label);
			return;
		}
		key->siglen = ks->ec == 2 && ks->bits == 448 ? 114 : ec_siglen(ks->bits); /* Ed448: 2 x 57 bytes */
		/* The public point, unwrapped from CKA_EC_POINT's DER OCTET STRING. */
		unsigned char der[sizeof key->point + 4];
		CK_ATTRIBUTE p = {CKA_EC_POINT, der, sizeof der};
		rv = m->f->C_GetAttributeValue(m->sess, key->pub, &p, 1);
		if (rv != CKR_OK || p.ulValueLen < 3 || der[0] != 0x04) {
			snprintf(key->why, sizeof key->why, "C_GetAttributeValue(CKA_EC_POINT): %s", rv_name(rv));
			key->failed = 1;
			return;
		}
		CK_ULONG hdr = der[1] == 0x81 ? 3 : 2;
		key->pointlen = p.ulValueLen - hdr;
		memcpy(key->point, der + hdr, key->pointlen);
	} else {
		CK_ATTRIBUTE a = {CKA_MODULUS, NULL, 0};
		rv = m->f->C_GetAttributeValue(m->sess, key->pub, &a, 1);
		if (rv != CKR_OK) {
			snprintf(key->why, sizeof key->why, "C_GetAttributeValue(CKA_MODULUS): %s", rv_name(rv));
			key->failed = 1;
			return;
		}
		if (a.ulValueLen != ks->bits / 8) {
			snprintf(key->why, sizeof key->why, "%s modulus is %lu bytes, want %lu", ks->label,
				 (unsigned long)a.ulValueLen, (unsigned long)(ks->bits / 8));
			return;
		}
		key->siglen = ks->bits / 8;
	}
	key->ok = 1;
}

/* Copy the public key k of m into its other module as a session object. */
static void import_pub(module_t *m, int k)
{
	const struct keyspec *ks = &KEYS[k];
	bkey_t *key = &m->keys[k];
	module_t *o = m->other;
	CK_RV rv;
	key->xok = 0;
	if (!key->ok || o->dead)
		return;
	if (ks->ec == 4) {
		/* The same value is in both modules already (ensure_secret). */
		key->xpub = o->keys[k].priv;
		key->xok = o->keys[k].ok;
		return;
	}
	if ((ks->ff && ks->ff->dh) || ks->ec == 3 || ks->pq == CKK_ML_KEM) {
		/* No verification cell: the derive and KEM cells check by agreement. */
		snprintf(key->xwhy, sizeof key->xwhy, "key-agreement and KEM keys are not imported");
		return;
	}
	if (!has_mech(o, sig_mech(ks))) {
		snprintf(key->xwhy, sizeof key->xwhy, "%s has no %s", o->name, mech_name(sig_mech(ks)));
		return;
	}
	CK_ATTRIBUTE a[4];
	memset(a, 0, sizeof a);
	CK_ULONG na = 2;
	if (ks->pq) {
		a[0] = (CK_ATTRIBUTE){CKA_PARAMETER_SET, NULL, 0};
		a[1] = (CK_ATTRIBUTE){CKA_VALUE, NULL, 0};
	} else if (ks->ff) {
		a[0] = (CK_ATTRIBUTE){CKA_PRIME, NULL, 0};
		a[1] = (CK_ATTRIBUTE){CKA_SUBPRIME, NULL, 0};
		a[2] = (CK_ATTRIBUTE){CKA_BASE, NULL, 0};
		a[3] = (CK_ATTRIBUTE){CKA_VALUE, NULL, 0};
		na = 4;
	} else if (ks->ec) {
		a[0] = (CK_ATTRIBUTE){CKA_EC_PARAMS, NULL, 0};
		a[1] = (CK_ATTRIBUTE){CKA_EC_POINT, NULL, 0};
	} else {
		a[0] = (CK_ATTRIBUTE){CKA_MODULUS, NULL, 0};
		a[1] = (CK_ATTRIBUTE){CKA_PUBLIC_EXPONENT, NULL, 0};
	}
	phase(60, "%s: read public %s", m->name, ks->label);
	rv = m->f->C_GetAttributeValue(m->sess, key->pub, a, na);
	if (rv != CKR_OK) {
		snprintf(key->xwhy, sizeof key->xwhy, "%s C_GetAttributeValue(public %s): %s", m->name, ks->label, rv_name(rv));
		return;
	}
	for (CK_ULONG i = 0; i < na; i++) {
		a[i].pValue = malloc(a[i].ulValueLen + 1);
		if (!a[i].pValue)
			die("out of memory");
	}
	rv = m->f->C_GetAttributeValue(m->sess, key->pub, a, na);
	if (rv != CKR_OK) {
		snprintf(key->xwhy, sizeof key->xwhy, "%s C_GetAttributeValue(public %s): %s", m->name, ks->label, rv_name(rv));
		goto out;
	}
	CK_OBJECT_CLASS cls = CKO_PUBLIC_KEY;
	CK_KEY_TYPE kt = ks->pq ? ks->pq : ks->ff ? CKK_DSA : ks->ec == 2 ? CKK_EC_EDWARDS : ks->ec ? CKK_EC : CKK_RSA;
	CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
	CK_ATTRIBUTE t[] = {
		{CKA_CLASS, &cls, sizeof cls},
		{CKA_KEY_TYPE, &kt, sizeof kt},
		{CKA_TOKEN, &no, sizeof no},
		{CKA_VERIFY, &yes, sizeof yes},
		a[0],
		a[1],
		a[2],
		a[3],
	};
	phase(60, "%s: C_CreateObject (public %s of %s)", o->name, ks->label, m->name);
	rv = o->f->C_CreateObject(o->sess, t, 4 + na, &key->xpub);
	if (rv != CKR_OK) {
		snprintf(key->xwhy, sizeof key->xwhy, "%s C_CreateObject(public %s of %s): %s", o->name, ks->label, m->name, rv_name(rv));
		fprintf(stderr, "p11bench: %s\n", key->xwhy);
		goto out;
	}
	key->xok = 1;
out:
	for (CK_ULONG i = 0; i < na; i++)
		free(a[i].pValue);
}

/* ------------------------------------------------------------------ */
/* Verification helpers (never timed)                                  */

static CK_RV do_verify(module_t *m, CK_SESSION_HANDLE s, const opdef_t *op, CK_OBJECT_HANDLE pub,
		       const unsigned char *data, CK_ULONG dlen, const unsigned char *sig, CK_ULONG slen)
{
	CK_MECHANISM mech = op_mechanism(op);
	CK_RV rv = m->f->C_VerifyInit(s, &mech, pub);
	if (rv != CKR_OK)
		return rv;
	return m->f->C_Verify(s, (CK_BYTE_PTR)data, dlen, (CK_BYTE_PTR)sig, slen);
}

/*
 * Check one signature made by m with key k over data: m must accept it, must
 * reject it with a bit flipped, and the other module must accept it.
 * Returns 1 when good; otherwise writes why.
 */
static int check_signature(module_t *m, int k, const opdef_t *sigop, const unsigned char *data, CK_ULONG dlen,
			   const unsigned char *sig, CK_ULONG slen, char *why, size_t whylen)
{
	bkey_t *key = &m->keys[k];
	unsigned char bad[MAXSIG];
	CK_RV rv;
	phase(60, "%s: verification pass", m->name);
	rv = do_verify(m, m->sess, sigop, key->pub, data, dlen, sig, slen);
	if (rv != CKR_OK) {
		snprintf(why, whylen, "own C_Verify of its signature: %s", rv_name(rv));
		return 0;
	}
	if (slen > sizeof bad || slen == 0) {
		snprintf(why, whylen, "signature length %lu", (unsigned long)slen);
		return 0;
	}
	memcpy(bad, sig, slen);
	bad[slen / 2] ^= 0x01;
	rv = do_verify(m, m->sess, sigop, key->pub, data, dlen, bad, slen);
	if (rv != CKR_SIGNATURE_INVALID) {
		snprintf(why, whylen, "C_Verify of a tampered signature: %s, want CKR_SIGNATURE_INVALID", rv_name(rv));
		return 0;
	}
	if (key->xok) {
		module_t *o = m->other;
		phase(60, "%s: cross-verification of %s", o->name, m->name);
		rv = do_verify(o, o->sess, sigop, key->xpub, data, dlen, sig, slen);
		if (rv != CKR_OK) {
			snprintf(why, whylen, "%s rejects the signature: %s", o->name, rv_name(rv));
			return 0;
		}
	}
	return 1;
}

/* The template of a derived key: a 32-byte session generic secret whose
 * value can be read (for the agreement check). */
typedef struct {
	CK_OBJECT_CLASS cls;
	CK_KEY_TYPE kt;
	CK_BBOOL yes, no;
	CK_ULONG len;
	CK_ATTRIBUTE t[6];
} derivetmpl_t;

static void derive_template(derivetmpl_t *d)
{
	d->cls = CKO_SECRET_KEY;
	d->kt = CKK_GENERIC_SECRET;
	d->yes = CK_TRUE;
	d->no = CK_FALSE;
	d->len = 32;
	d->t[0] = (CK_ATTRIBUTE){CKA_CLASS, &d->cls, sizeof d->cls};
	d->t[1] = (CK_ATTRIBUTE){CKA_KEY_TYPE, &d->kt, sizeof d->kt};
	d->t[2] = (CK_ATTRIBUTE){CKA_TOKEN, &d->no, sizeof d->no};
	d->t[3] = (CK_ATTRIBUTE){CKA_SENSITIVE, &d->no, sizeof d->no};
	d->t[4] = (CK_ATTRIBUTE){CKA_EXTRACTABLE, &d->yes, sizeof d->yes};
	d->t[5] = (CK_ATTRIBUTE){CKA_VALUE_LEN, &d->len, sizeof d->len};
}

/* ECDH (CKD_NULL) with priv and the bare peer point, or DH
 * (CKM_DH_PKCS_DERIVE, dh set) with the peer's y: the secret's value into
 * out[32] (never timed). */
static CK_RV derive_value(module_t *m, CK_SESSION_HANDLE s, CK_OBJECT_HANDLE priv, const unsigned char *peer,
			  CK_ULONG peerlen, int dh, unsigned char out[32])
{
	CK_ECDH1_DERIVE_PARAMS p = {CKD_NULL, 0, NULL, peerlen, (CK_BYTE_PTR)peer};
	CK_MECHANISM mech = {CKM_ECDH1_DERIVE, &p, sizeof p};
	if (dh)
		mech = (CK_MECHANISM){CKM_DH_PKCS_DERIVE, (CK_BYTE_PTR)peer, peerlen};
	derivetmpl_t d;
	derive_template(&d);
	CK_OBJECT_HANDLE h = 0;
	CK_RV rv = m->f->C_DeriveKey(s, &mech, priv, d.t, 6, &h);
	if (rv != CKR_OK)
		return rv;
	CK_ATTRIBUTE a = {CKA_VALUE, out, 32};
	rv = m->f->C_GetAttributeValue(s, h, &a, 1);
	if (rv == CKR_OK && a.ulValueLen != 32)
		rv = CKR_GENERAL_ERROR;
	CK_RV rv2 = m->f->C_DestroyObject(s, h);
	return rv != CKR_OK ? rv : rv2;
}

/*
 * The agreement check of an ECDH cell: m derives with its key and the other
 * module's public point, the other module with its key and m's point; the
 * secrets must be equal. Without the other module, m's own two derivations
 * with its own point must agree. Returns 1 when good; otherwise writes why.
 */
static int check_agreement(module_t *m, int k, char *why, size_t whylen)
{
	bkey_t *key = &m->keys[k];
	module_t *o = m->other;
	unsigned char a[32], b[32];
	phase(60, "%s: ECDH agreement check", m->name);
	int cross = o != m && !o->dead && o->keys[k].ok && o->keys[k].pointlen > 0;
	const bkey_t *peer = cross ? &o->keys[k] : key;
	int dh = KEYS[k].ff && KEYS[k].ff->dh;
	CK_RV rv = derive_value(m, m->sess, key->priv, peer->point, peer->pointlen, dh, a);
	if (rv != CKR_OK) {
		snprintf(why, whylen, "C_DeriveKey with the %s point: %s", cross ? "other module's" : "own", rv_name(rv));
		return 0;
	}
	if (cross)
		rv = derive_value(o, o->sess, o->keys[k].priv, key->point, key->pointlen, dh, b);
	else
		rv = derive_value(m, m->sess, key->priv, key->point, key->pointlen, dh, b);
	if (rv != CKR_OK) {
		snprintf(why, whylen, "%s C_DeriveKey: %s", cross ? o->name : m->name, rv_name(rv));
		return 0;
	}
	if (memcmp(a, b, 32) != 0) {
		snprintf(why, whylen, "ECDH secrets differ%s", cross ? " between the modules" : "");
		return 0;
	}
	return 1;
}

/* The secret of an ML-KEM encapsulation (ct into ct[*ctlen], the secret
 * into out[32]) or, with decap set, of the decapsulation of ct (never timed). */
static CK_RV kem_value(module_t *m, int k, int decap, unsigned char *ct, CK_ULONG *ctlen, unsigned char out[32])
{
	const bkey_t *key = &m->keys[k];
	CK_MECHANISM mech = {CKM_ML_KEM, NULL, 0};
	derivetmpl_t d;
	derive_template(&d);
	CK_OBJECT_HANDLE h = 0;
	CK_RV rv = decap ? m->f32->C_DecapsulateKey(m->sess, &mech, key->priv, d.t, 6, ct, *ctlen, &h)
			 : m->f32->C_EncapsulateKey(m->sess, &mech, key->pub, d.t, 6, ct, ctlen, &h);
	if (rv != CKR_OK)
		return rv;
	CK_ATTRIBUTE a = {CKA_VALUE, out, 32};
	rv = m->f->C_GetAttributeValue(m->sess, h, &a, 1);
	if (rv == CKR_OK && a.ulValueLen != 32)
		rv = CKR_GENERAL_ERROR;
	CK_RV rv2 = m->f->C_DestroyObject(m->sess, h);
	return rv != CKR_OK ? rv : rv2;
}

/*
 * The check of an ML-KEM cell: a fresh encapsulation decapsulates to its
 * secret, and the ciphertext with a bit flipped to another one (FIPS 203's
 * implicit rejection). Returns 1 when good; otherwise writes why.
 */
static int check_kem(module_t *m, int k, char *why, size_t whylen)
{
	unsigned char ct[MAXSIG], a[32], b[32];
	CK_ULONG ctlen = sizeof ct;
	phase(60, "%s: ML-KEM check", m->name);
	CK_RV rv = kem_value(m, k, 0, ct, &ctlen, a);
	if (rv != CKR_OK) {
		snprintf(why, whylen, "C_EncapsulateKey: %s", rv_name(rv));
		return 0;
	}
	rv = kem_value(m, k, 1, ct, &ctlen, b);
	if (rv != CKR_OK || memcmp(a, b, 32) != 0) {
		snprintf(why, whylen, "C_DecapsulateKey: %s", rv != CKR_OK ? rv_name(rv) : "another secret than encapsulated");
		return 0;
	}
	ct[ctlen / 2] ^= 1;
	rv = kem_value(m, k, 1, ct, &ctlen, b);
	if (rv != CKR_OK || memcmp(a, b, 32) == 0) {
		snprintf(why, whylen, "C_DecapsulateKey of a tampered ciphertext: %s",
			 rv != CKR_OK ? rv_name(rv) : "the same secret");
		return 0;
	}
	return 1;
}

/* ------------------------------------------------------------------ */
/* Workers                                                             */

typedef struct {
	unsigned char data[MAXDATA];
	unsigned char sig[MAXSIG];
	CK_ULONG siglen;
} sample_t;

typedef struct {
	module_t *m;
	const opdef_t *op;
	int tid;
	double seconds;
	pthread_barrier_t *bar;
	const unsigned char *base;     /* base data */
	const unsigned char *vsig;     /* signature to verify (OP_VERIFY) */
	CK_ULONG vsiglen;
	/* results */
	unsigned long ops, errs;
	CK_RV first_err;
	char err_call[64];
	double t0, t1, c0, c1; /* wall clock and this thread's CPU time */
	int nsamp;
	sample_t samp[NSAMPLES];
	int keycheck_done, keycheck_ok;
	char keycheck_why[160];
	/* OP_ENCRYPT: the message buffers and the first encryption, kept */
	unsigned char *pt, *ct, *spt, *sct;
	CK_ULONG sctlen;
	unsigned char siv[16];
	int have_sample;
	lat_t lat; /* sign calls: seconds from C_SignInit to C_Sign's return */
} worker_t;

static void record_err(worker_t *w, const char *call, CK_RV rv, unsigned long *consecutive)
{
	if (w->errs == 0) {
		w->first_err = rv;
		snprintf(w->err_call, sizeof w->err_call, "%s", call);
	}
	w->errs++;
	(*consecutive)++;
}

static void keep_sample(worker_t *w, const unsigned char *data, CK_ULONG dlen, const unsigned char *sig, CK_ULONG slen)
{
	/* The first two and then the latest two signatures. */
	int slot;
	if (w->nsamp < NSAMPLES) {
		slot = w->nsamp++;
	} else {
		slot = 2 + (int)(w->ops % (NSAMPLES - 2));
	}
	memcpy(w->samp[slot].data, data, dlen);
	memcpy(w->samp[slot].sig, sig, slen);
	w->samp[slot].siglen = slen;
}

/* Sign with, and verify with, a freshly generated key pair (outside the clock). */
static void check_new_pair(worker_t *w, CK_SESSION_HANDLE s, CK_OBJECT_HANDLE pub, CK_OBJECT_HANDLE priv)
{
	module_t *m = w->m;
	const struct keyspec *ks = &KEYS[w->op->key];
	opdef_t sop = {"", "", OP_SIGN, w->op->key, sig_mech(ks), 0, 32};
	CK_MECHANISM mech = op_mechanism(&sop);
	unsigned char sig[MAXSIG];
	CK_ULONG slen = sizeof sig;
	if (!has_mech(m, sop.mech))
		return; /* nothing to check it with */
	w->keycheck_done = 1;
	CK_RV rv = m->f->C_SignInit(s, &mech, priv);
	if (rv == CKR_OK)
		rv = m->f->C_Sign(s, (CK_BYTE_PTR)w->base, 32, sig, &slen);
	if (rv != CKR_OK) {
		snprintf(w->keycheck_why, sizeof w->keycheck_why, "sign with generated key: %s", rv_name(rv));
		return;
	}
	rv = do_verify(m, s, &sop, pub, w->base, 32, sig, slen);
	if (rv != CKR_OK) {
		snprintf(w->keycheck_why, sizeof w->keycheck_why, "verify with generated key: %s", rv_name(rv));
		return;
	}
	sig[slen / 2] ^= 1;
	rv = do_verify(m, s, &sop, pub, w->base, 32, sig, slen);
	if (rv != CKR_SIGNATURE_INVALID) {
		snprintf(w->keycheck_why, sizeof w->keycheck_why,
			 "generated key accepts a tampered signature: %s", rv_name(rv));
		return;
	}
	w->keycheck_ok = 1;
}

/* Decrypt one sample of w (module m) with key k of module o (handle h):
 * it must give the plaintext back. */
static int decrypt_sample(module_t *o, CK_OBJECT_HANDLE h, const opdef_t *op, worker_t *w, unsigned char *buf,
			  char *why, size_t whylen)
{
	unsigned char iv[16];
	cipher_params_t gcm;
	memcpy(iv, w->siv, sizeof iv);
	CK_MECHANISM cm = cipher_mechanism(op->mech, iv, &gcm);
	CK_RV rv = o->f->C_DecryptInit(o->sess, &cm, h);
	CK_ULONG n = op->dlen + 16;
	if (rv == CKR_OK)
		rv = o->f->C_Decrypt(o->sess, w->sct, w->sctlen, buf, &n);
	if (rv != CKR_OK) {
		snprintf(why, whylen, "%s C_Decrypt of a ciphertext of %s: %s", o->name, w->m->name, rv_name(rv));
		return 0;
	}
	if (n != op->dlen || memcmp(buf, w->spt, n) != 0) {
		snprintf(why, whylen, "%s decrypts a ciphertext of %s to other bytes", o->name, w->m->name);
		return 0;
	}
	return 1;
}

/* Check the sample ciphertext of w: its module and the other decrypt it to
 * the plaintext, and with GCM its module refuses a flipped tag bit. */
static int check_cipher(module_t *m, const opdef_t *op, worker_t *w, char *why, size_t whylen)
{
	bkey_t *key = &m->keys[op->key];
	unsigned char *buf = malloc(op->dlen + 16);
	int ok = 0;
	if (!buf)
		die("out of memory");
	phase(60, "%s: decryption pass", m->name);
	if (!decrypt_sample(m, key->priv, op, w, buf, why, whylen))
		goto out;
	if (key->xok && !decrypt_sample(m->other, key->xpub, op, w, buf, why, whylen))
		goto out;
	if (op->mech == CKM_AES_GCM) {
		unsigned char iv[16];
		cipher_params_t gcm;
		memcpy(iv, w->siv, sizeof iv);
		CK_MECHANISM cm = cipher_mechanism(op->mech, iv, &gcm);
		w->sct[w->sctlen - 1] ^= 1;
		CK_ULONG n = op->dlen + 16;
		CK_RV rv = m->f->C_DecryptInit(m->sess, &cm, key->priv);
		if (rv == CKR_OK)
			rv = m->f->C_Decrypt(m->sess, w->sct, w->sctlen, buf, &n);
		w->sct[w->sctlen - 1] ^= 1;
		/* SoftHSMv2 2.6.1 answers CKR_GENERAL_ERROR: any refusal will do. */
		if (rv == CKR_OK) {
			snprintf(why, whylen, "C_Decrypt accepts a tampered tag");
			goto out;
		}
	}
	ok = 1;
out:
	free(buf);
	return ok;
}

static void *worker(void *arg)
{
	worker_t *w = arg;
	module_t *m = w->m;
	const opdef_t *op = w->op;
	bkey_t *key = &m->keys[op->key];
	CK_SESSION_HANDLE s = 0;
	unsigned long consecutive = 0;
	unsigned char data[MAXDATA];
	unsigned char sig[MAXSIG];
	memcpy(data, w->base, sizeof data);
	data[0] ^= (unsigned char)(w->tid + 1);

	CK_RV rv = m->f->C_OpenSession(m->slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &s);
	int setup_ok = rv == CKR_OK;
	if (!setup_ok)
		record_err(w, "C_OpenSession", rv, &consecutive);
	CK_MECHANISM mech = op_mechanism(op);
	gentmpl_t g;
	if (op->kind == OP_KEYGEN)
		gen_template(&g, &KEYS[op->key], 0, "bench-tmp");
	/* OP_DERIVE: the key's own public point as the peer's (a valid point). */
	CK_ECDH1_DERIVE_PARAMS ecdh = {CKD_NULL, 0, NULL, key->pointlen, key->point};
	derivetmpl_t dt;
	if (op->kind == OP_DERIVE) {
		mech.pParameter = &ecdh;
		mech.ulParameterLen = sizeof ecdh;
		if (op->mech == CKM_DH_PKCS_DERIVE) {
			/* DH: the key's own y as the peer's (in the group). */
			mech.pParameter = key->point;
			mech.ulParameterLen = key->pointlen;
		}
		derive_template(&dt);
	}
	if (op->kind == OP_ENCAP || op->kind == OP_DECAP)
		derive_template(&dt);
	CK_MECHANISM kem = {CKM_ML_KEM, NULL, 0};
	CK_OBJECT_HANDLE keep_pub = 0, keep_priv = 0;
	if (op->kind == OP_ENCRYPT) {
		CK_ULONG n = op->dlen + 16;
		w->pt = calloc(1, n), w->ct = calloc(1, n), w->spt = calloc(1, n), w->sct = calloc(1, n);
		if (!w->pt || !w->ct || !w->spt || !w->sct)
			die("out of memory");
		memcpy(w->pt, w->base, MAXDATA);
	}

	pthread_barrier_wait(w->bar);
	w->c0 = thread_cpu_seconds();
	w->t0 = now();
	double deadline = w->t0 + w->seconds;
	uint64_t ctr = 0;
	while (setup_ok && now() < deadline) {
		if (consecutive >= ERR_STOP_CONSECUTIVE || w->errs >= ERR_STOP_TOTAL)
			break;
		ctr++;
		switch (op->kind) {
		case OP_FIND_SIGN: {
			CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
			CK_ATTRIBUTE t[] = {{CKA_CLASS, &cls, sizeof cls}};
			rv = m->f->C_FindObjectsInit(s, t, 1);
			if (rv != CKR_OK) {
				record_err(w, "C_FindObjectsInit", rv, &consecutive);
				continue;
			}
			int seen = 0;
			for (;;) {
				CK_OBJECT_HANDLE h = 0;
				CK_ULONG n = 0;
				rv = m->f->C_FindObjects(s, &h, 1, &n);
				if (rv != CKR_OK || n == 0)
					break;
				seen |= h == key->priv;
			}
			CK_RV rv2 = m->f->C_FindObjectsFinal(s);
			if (rv != CKR_OK || rv2 != CKR_OK) {
				record_err(w, rv != CKR_OK ? "C_FindObjects" : "C_FindObjectsFinal", rv != CKR_OK ? rv : rv2,
					   &consecutive);
				continue;
			}
			if (!seen) {
				record_err(w, "C_FindObjects (the key not found)", CKR_OK, &consecutive);
				continue;
			}
		}
			/* fall through */
		case OP_SIGN: {
			memcpy(data + 8, &ctr, sizeof ctr); /* every message differs */
			double l0 = now();
			rv = m->f->C_SignInit(s, &mech, key->priv);
			if (rv != CKR_OK) {
				record_err(w, "C_SignInit", rv, &consecutive);
				continue;
			}
			CK_ULONG slen = sizeof sig;
			rv = m->f->C_Sign(s, data, op->dlen, sig, &slen);
			if (rv != CKR_OK) {
				record_err(w, "C_Sign", rv, &consecutive);
				continue;
			}
			if (slen != key->siglen) {
				record_err(w, "C_Sign (wrong signature length)", CKR_OK, &consecutive);
				continue;
			}
			lat_add(&w->lat, now() - l0);
			w->ops++;
			consecutive = 0;
			keep_sample(w, data, op->dlen, sig, slen);
			break;
		}
		case OP_VERIFY: {
			rv = m->f->C_VerifyInit(s, &mech, key->pub);
			if (rv != CKR_OK) {
				record_err(w, "C_VerifyInit", rv, &consecutive);
				continue;
			}
			rv = m->f->C_Verify(s, (CK_BYTE_PTR)w->base, op->dlen, (CK_BYTE_PTR)w->vsig, w->vsiglen);
			if (rv != CKR_OK) {
				record_err(w, "C_Verify", rv, &consecutive);
				continue;
			}
			w->ops++;
			consecutive = 0;
			break;
		}
		case OP_DERIVE:
		case OP_ENCAP:
		case OP_DECAP: {
			/* A new 32-byte session secret, destroyed at once. */
			CK_OBJECT_HANDLE h = 0;
			CK_ULONG ctlen = sizeof sig;
			const char *call = "C_DeriveKey";
			if (op->kind == OP_DERIVE) {
				rv = m->f->C_DeriveKey(s, &mech, key->priv, dt.t, 6, &h);
			} else if (op->kind == OP_ENCAP) {
				call = "C_EncapsulateKey";
				rv = m->f32->C_EncapsulateKey(s, &kem, key->pub, dt.t, 6, sig, &ctlen, &h);
			} else {
				call = "C_DecapsulateKey";
				rv = m->f32->C_DecapsulateKey(s, &kem, key->priv, dt.t, 6, (CK_BYTE_PTR)w->vsig, w->vsiglen, &h);
			}
			if (rv != CKR_OK) {
				record_err(w, call, rv, &consecutive);
				continue;
			}
			rv = m->f->C_DestroyObject(s, h);
			if (rv != CKR_OK) {
				record_err(w, "C_DestroyObject", rv, &consecutive);
				continue;
			}
			if (op->kind == OP_ENCAP && ctlen != key->siglen) {
				record_err(w, "C_EncapsulateKey (wrong ciphertext length)", CKR_OK, &consecutive);
				continue;
			}
			w->ops++;
			consecutive = 0;
			break;
		}
		case OP_ENCRYPT: {
			unsigned char iv[16];
			cipher_params_t gcm;
			next_iv(iv);
			memcpy(w->pt, &ctr, sizeof ctr); /* every message differs */
			CK_MECHANISM cm = cipher_mechanism(op->mech, iv, &gcm);
			rv = m->f->C_EncryptInit(s, &cm, key->priv);
			if (rv != CKR_OK) {
				record_err(w, "C_EncryptInit", rv, &consecutive);
				continue;
			}
			CK_ULONG clen = cipher_len(op->mech, op->dlen);
			rv = m->f->C_Encrypt(s, w->pt, op->dlen, w->ct, &clen);
			if (rv != CKR_OK) {
				record_err(w, "C_Encrypt", rv, &consecutive);
				continue;
			}
			if (clen != cipher_len(op->mech, op->dlen)) {
				record_err(w, "C_Encrypt (wrong ciphertext length)", CKR_OK, &consecutive);
				continue;
			}
			w->ops++;
			consecutive = 0;
			if (!w->have_sample) { /* once per thread and cell */
				memcpy(w->spt, w->pt, op->dlen);
				memcpy(w->sct, w->ct, clen);
				memcpy(w->siv, iv, sizeof iv);
				w->sctlen = clen;
				w->have_sample = 1;
			}
			break;
		}
		case OP_LOGIN: {
			rv = m->f->C_Logout(s);
			if (rv != CKR_OK && rv != CKR_USER_NOT_LOGGED_IN) {
				record_err(w, "C_Logout", rv, &consecutive);
				continue;
			}
			rv = m->f->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)m->pin, strlen(m->pin));
			if (rv == CKR_USER_ALREADY_LOGGED_IN)
				continue;
			if (rv != CKR_OK) {
				record_err(w, "C_Login", rv, &consecutive);
				continue;
			}
			w->ops++;
			consecutive = 0;
			break;
		}
		case OP_KEYGEN: {
			CK_OBJECT_HANDLE pub = 0, priv = 0;
			rv = m->f->C_GenerateKeyPair(s, &g.mech, g.pub, g.npub, g.priv, g.npriv, &pub, &priv);
			if (rv != CKR_OK) {
				record_err(w, "C_GenerateKeyPair", rv, &consecutive);
				continue;
			}
			w->ops++;
			consecutive = 0;
			if (!keep_pub) {
				keep_pub = pub;
				keep_priv = priv;
				break;
			}
			rv = m->f->C_DestroyObject(s, pub);
			if (rv != CKR_OK)
				record_err(w, "C_DestroyObject", rv, &consecutive);
			rv = m->f->C_DestroyObject(s, priv);
			if (rv != CKR_OK)
				record_err(w, "C_DestroyObject", rv, &consecutive);
			break;
		}
		}
	}
	w->t1 = now();
	w->c1 = thread_cpu_seconds();
	if (op->kind == OP_LOGIN) /* the rows after this one need the login */
		(void)m->f->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)m->pin, strlen(m->pin));
	if (keep_pub) {
		check_new_pair(w, s, keep_pub, keep_priv);
		rv = m->f->C_DestroyObject(s, keep_pub);
		if (rv != CKR_OK)
			record_err(w, "C_DestroyObject", rv, &consecutive);
		rv = m->f->C_DestroyObject(s, keep_priv);
		if (rv != CKR_OK)
			record_err(w, "C_DestroyObject", rv, &consecutive);
	}
	if (setup_ok) {
		rv = m->f->C_CloseSession(s);
		if (rv != CKR_OK)
			record_err(w, "C_CloseSession", rv, &consecutive);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Cells                                                               */

enum { CELL_NOTRUN = 0, CELL_NA, CELL_RAN };

typedef struct {
	int state;
	char why[200];
	unsigned long ops, errs;
	double eff_time; /* sum over rounds of the mean per-thread measuring time */
	double wall, cpu, tcpu; /* tcpu: CPU time of the calling threads inside the timed loops */
	CK_RV first_err;
	char err_call[64];
	int checked, bad;
	char bad_why[200];
	int setup_failed; /* with CELL_NA: the key could not be made or read */
	lat_t lat;	  /* sign calls, all rounds */
} cell_t;

static module_t MODS[2];
static int NMODS;
static int THREADS[MAX_THREADS];
static int NTHREADS;
static cell_t CELLS[sizeof OPS / sizeof OPS[0]][MAX_THREADS][2];
static int SELECTED[sizeof OPS / sizeof OPS[0]];
static double SECONDS = 2.0, KEYGEN_SECONDS = 0;
static int ROUNDS = 2;
static double GRACE = 120; /* a cell may overrun its time by this much before the watchdog fires */
static unsigned char BASE[MAXDATA];
static char HEADER[1024];

/* Why op cannot run on m ("" when it can). */
static const char *op_unavailable(const module_t *m, const opdef_t *op)
{
	static char buf[200];
	if (m->dead) {
		snprintf(buf, sizeof buf, "module: %s", m->why);
		return buf;
	}
	if ((op->kind == OP_ENCAP || op->kind == OP_DECAP) && !m->f32) {
		snprintf(buf, sizeof buf, "no PKCS#11 3.2 interface (C_EncapsulateKey)");
		return buf;
	}
	if (!has_mech(m, op->mech)) {
		snprintf(buf, sizeof buf, "no %s", mech_name(op->mech));
		return buf;
	}
	const bkey_t *k = &m->keys[op->key];
	if (!k->ok) {
		snprintf(buf, sizeof buf, "%s", k->why[0] ? k->why : "key not available");
		return buf;
	}
	return "";
}

static void run_once(module_t *m, const opdef_t *op, int nthr, double seconds, cell_t *c)
{
	pthread_t th[MAX_THREADS];
	worker_t *ws = calloc((size_t)nthr, sizeof *ws);
	pthread_barrier_t bar;
	unsigned char vsig[MAXSIG];
	CK_ULONG vsiglen = 0;
	bkey_t *key = &m->keys[op->key];
	CK_RV rv;
	if (!ws)
		die("out of memory");

	if (op->kind == OP_VERIFY) {
		/* Make the signature to verify, and check it, before the clock. */
		opdef_t sop = *op;
		CK_MECHANISM mech = op_mechanism(&sop);
		phase(60, "%s: signature for %s", m->name, op->id);
		vsiglen = sizeof vsig;
		rv = m->f->C_SignInit(m->sess, &mech, key->priv);
		if (rv == CKR_OK)
			rv = m->f->C_Sign(m->sess, BASE, op->dlen, vsig, &vsiglen);
		if (rv != CKR_OK) {
			c->bad = 1;
			snprintf(c->bad_why, sizeof c->bad_why, "C_Sign for the verify cell: %s", rv_name(rv));
			free(ws);
			return;
		}
		char why[200];
		c->checked++;
		if (!check_signature(m, op->key, op, BASE, op->dlen, vsig, vsiglen, why, sizeof why)) {
			c->bad = 1;
			snprintf(c->bad_why, sizeof c->bad_why, "%s", why);
			free(ws);
			return;
		}
	}

	if (op->kind == OP_DECAP) {
		/* The ciphertext to decapsulate, made before the clock. */
		unsigned char secret[32];
		vsiglen = sizeof vsig;
		phase(60, "%s: ciphertext for %s", m->name, op->id);
		rv = kem_value(m, op->key, 0, vsig, &vsiglen, secret);
		if (rv != CKR_OK) {
			c->bad = 1;
			snprintf(c->bad_why, sizeof c->bad_why, "C_EncapsulateKey for the decapsulate cell: %s", rv_name(rv));
			free(ws);
			return;
		}
	}

	if (pthread_barrier_init(&bar, NULL, (unsigned)nthr) != 0)
		die("pthread_barrier_init failed");
	/* A cell may overrun by one operation (key generation): allow for it. */
	phase(seconds + (op->kind == OP_KEYGEN ? 2.5 * GRACE : GRACE), "%s: %s at %d thread(s)", m->name, op->id, nthr);
	double cpu0 = cpu_seconds(), w0 = now();
	for (int i = 0; i < nthr; i++) {
		ws[i].m = m;
		ws[i].op = op;
		ws[i].tid = i;
		ws[i].seconds = seconds;
		ws[i].bar = &bar;
		ws[i].base = BASE;
		ws[i].vsig = vsig;
		ws[i].vsiglen = vsiglen;
		if (pthread_create(&th[i], NULL, worker, &ws[i]) != 0)
			die("pthread_create failed");
	}
	for (int i = 0; i < nthr; i++)
		pthread_join(th[i], NULL);
	double w1 = now(), cpu1 = cpu_seconds();
	pthread_barrier_destroy(&bar);

	double tsum = 0;
	for (int i = 0; i < nthr; i++) {
		worker_t *w = &ws[i];
		c->ops += w->ops;
		lat_merge(&c->lat, &w->lat);
		tsum += w->t1 - w->t0;
		c->tcpu += w->c1 - w->c0;
		if (w->errs) {
			if (c->errs == 0) {
				c->first_err = w->first_err;
				snprintf(c->err_call, sizeof c->err_call, "%s", w->err_call);
			}
			c->errs += w->errs;
		}
	}
	c->eff_time += tsum / nthr;
	c->wall += w1 - w0;
	c->cpu += cpu1 - cpu0;

	/* Verification pass over the samples, outside the clock. */
	for (int i = 0; i < nthr && !c->bad; i++) {
		worker_t *w = &ws[i];
		if (op->kind == OP_SIGN || op->kind == OP_FIND_SIGN) {
			for (int j = 0; j < w->nsamp && !c->bad; j++) {
				char why[200];
				c->checked++;
				if (!check_signature(m, op->key, op, w->samp[j].data, op->dlen, w->samp[j].sig,
						     w->samp[j].siglen, why, sizeof why)) {
					c->bad = 1;
					snprintf(c->bad_why, sizeof c->bad_why, "%s", why);
				}
			}
		} else if (op->kind == OP_ENCRYPT && w->have_sample) {
			char why[200];
			c->checked++;
			if (!check_cipher(m, op, w, why, sizeof why)) {
				c->bad = 1;
				snprintf(c->bad_why, sizeof c->bad_why, "%s", why);
			}
		} else if (op->kind == OP_KEYGEN && w->keycheck_done) {
			c->checked++;
			if (!w->keycheck_ok) {
				c->bad = 1;
				snprintf(c->bad_why, sizeof c->bad_why, "%s", w->keycheck_why);
			}
		}
	}
	if (op->kind == OP_DERIVE && !c->bad && c->ops > 0) {
		char why[200];
		c->checked++;
		if (!check_agreement(m, op->key, why, sizeof why)) {
			c->bad = 1;
			snprintf(c->bad_why, sizeof c->bad_why, "%s", why);
		}
	}
	if ((op->kind == OP_ENCAP || op->kind == OP_DECAP) && !c->bad && c->ops > 0) {
		char why[200];
		c->checked++;
		if (!check_kem(m, op->key, why, sizeof why)) {
			c->bad = 1;
			snprintf(c->bad_why, sizeof c->bad_why, "%s", why);
		}
	}
	if (op->kind == OP_VERIFY && !c->bad && c->ops > 0) {
		/* A module that accepts anything would look fast: make sure it refuses. */
		char why[200];
		c->checked++;
		if (!check_signature(m, op->key, op, BASE, op->dlen, vsig, vsiglen, why, sizeof why)) {
			c->bad = 1;
			snprintf(c->bad_why, sizeof c->bad_why, "%s", why);
		}
	}
	for (int i = 0; i < nthr; i++) {
		free(ws[i].pt);
		free(ws[i].ct);
		free(ws[i].spt);
		free(ws[i].sct);
	}
	free(ws);
}

static void run_cell(int oi, int ti)
{
	const opdef_t *op = &OPS[oi];
	int nthr = THREADS[ti];
	double secs = op->kind == OP_KEYGEN ? KEYGEN_SECONDS : SECONDS;
	for (int mi = 0; mi < NMODS; mi++) {
		const char *why = op_unavailable(&MODS[mi], op);
		if (why[0]) {
			CELLS[oi][ti][mi].state = CELL_NA;
			CELLS[oi][ti][mi].setup_failed = !MODS[mi].dead && MODS[mi].keys[op->key].failed &&
							 has_mech(&MODS[mi], op->mech);
			snprintf(CELLS[oi][ti][mi].why, sizeof CELLS[oi][ti][mi].why, "%s", why);
		}
	}
	/* A B B A ... so that drift in machine load hits both modules alike. */
	for (int r = 0; r < ROUNDS; r++) {
		for (int j = 0; j < NMODS; j++) {
			int mi = (r % 2 == 0) ? j : NMODS - 1 - j;
			cell_t *c = &CELLS[oi][ti][mi];
			if (c->state == CELL_NA || c->bad)
				continue;
			run_once(&MODS[mi], op, nthr, secs / ROUNDS, c);
			c->state = CELL_RAN;
		}
	}
	phase(0, "idle");
}

/* ------------------------------------------------------------------ */
/* Output                                                              */

static double cell_rate(const cell_t *c)
{
	return c->eff_time > 0 ? (double)c->ops / c->eff_time : 0;
}

/* Operations per second of process CPU time: robust when the machine is shared. */
static double cell_cpu_rate(const cell_t *c)
{
	return c->cpu > 0 ? (double)c->ops / c->cpu : 0;
}

/* 1 when the cell has a trustworthy rate. */
static int cell_good(const cell_t *c)
{
	return c->state == CELL_RAN && !c->bad && c->ops > 0;
}

static void fmt_cell(char *buf, size_t n, const cell_t *c)
{
	if (c->state == CELL_NOTRUN)
		snprintf(buf, n, "-");
	else if (c->state == CELL_NA)
		snprintf(buf, n, c->setup_failed ? "ERR" : "n/a");
	else if (c->bad)
		snprintf(buf, n, "BAD");
	else if (c->ops == 0)
		snprintf(buf, n, "ERR");
	else {
		double r = cell_rate(c);
		snprintf(buf, n, r >= 100 ? "%.0f%s" : "%.2f%s", r, c->errs ? "*" : "");
	}
}

static void print_results(FILE *out, int partial)
{
	char a[32], b[32], ratio[32];
	fputs(HEADER, out);
	if (partial)
		fprintf(out, "(PARTIAL: the run was aborted)\n");
	fprintf(out, "\n%-34s %3s %14s", "operation", "thr", MODS[0].name);
	if (NMODS > 1)
		fprintf(out, " %14s %8s %9s", MODS[1].name, "ratio", "ratio/CPU");
	fprintf(out, "\n");
	for (int oi = 0; oi < NOPS; oi++) {
		if (!SELECTED[oi])
			continue;
		for (int ti = 0; ti < NTHREADS; ti++) {
			cell_t *ca = &CELLS[oi][ti][0], *cb = &CELLS[oi][ti][1];
			fmt_cell(a, sizeof a, ca);
			fprintf(out, "%-34s %3d %14s", OPS[oi].title, THREADS[ti], a);
			if (NMODS > 1) {
				fmt_cell(b, sizeof b, cb);
				char cratio[32];
				if (cell_good(ca) && cell_good(cb)) {
					snprintf(ratio, sizeof ratio, "%.2f", cell_rate(ca) / cell_rate(cb));
					snprintf(cratio, sizeof cratio, "%.2f", cell_cpu_rate(ca) / cell_cpu_rate(cb));
				} else {
					snprintf(ratio, sizeof ratio, "-");
					snprintf(cratio, sizeof cratio, "-");
				}
				fprintf(out, " %14s %8s %9s", b, ratio, cratio);
			}
			fprintf(out, "\n");
		}
	}
	/* Latency of the sign calls (C_SignInit to C_Sign's return, every call). */
	int lfirst = 1;
	for (int oi = 0; oi < NOPS; oi++) {
		if (!SELECTED[oi])
			continue;
		for (int ti = 0; ti < NTHREADS; ti++) {
			char line[256];
			int len = 0, any = 0;
			for (int mi = 0; mi < NMODS; mi++) {
				cell_t *c = &CELLS[oi][ti][mi];
				if (c->lat.n == 0)
					continue;
				len += snprintf(line + len, sizeof line - (size_t)len, "%s%s %.2f / %.2f", any ? ", " : "",
						MODS[mi].name, 1e3 * lat_quantile(&c->lat, 0.5), 1e3 * lat_quantile(&c->lat, 0.99));
				any = 1;
				if (len >= (int)sizeof line)
					break;
			}
			if (!any)
				continue;
			if (lfirst) {
				fprintf(out, "\nlatency of a signature, C_SignInit + C_Sign, ms p50 / p99:\n");
				lfirst = 0;
			}
			fprintf(out, "  %-34s %3d thr: %s\n", OPS[oi].title, THREADS[ti], line);
		}
	}
	/* Notes: why cells are n/a, errors, failed checks. */
	int first = 1;
	for (int oi = 0; oi < NOPS; oi++) {
		if (!SELECTED[oi])
			continue;
		for (int ti = 0; ti < NTHREADS; ti++)
			for (int mi = 0; mi < NMODS; mi++) {
				cell_t *c = &CELLS[oi][ti][mi];
				char line[512];
				line[0] = 0;
				if (c->state == CELL_NA && ti == 0)
					snprintf(line, sizeof line, "%s: %s", c->setup_failed ? "ERR (setup failed)" : "n/a",
						 c->why);
				else if (c->bad)
					snprintf(line, sizeof line, "BAD (check failed): %s", c->bad_why);
				else if (c->errs)
					snprintf(line, sizeof line, "%lu failed call(s), first %s -> %s%s", c->errs,
						 c->err_call, rv_name(c->first_err),
						 c->ops ? " (* = rate of the calls that returned CKR_OK)" : "");
				if (!line[0])
					continue;
				if (first) {
					fprintf(out, "\nnotes:\n");
					first = 0;
				}
				fprintf(out, "  %s, %s, %d thr: %s\n", MODS[mi].name, OPS[oi].id, THREADS[ti], line);
			}
	}
	for (int mi = 0; mi < NMODS; mi++)
		for (int k = 0; k < K_N; k++) {
			const bkey_t *key = &MODS[mi].keys[k];
			const struct keyspec *ks = &KEYS[k];
			if (MODS[mi].dead || !key->ok || key->xok)
				continue;
			if ((ks->ff && ks->ff->dh) || ks->ec == 3 || ks->pq == CKK_ML_KEM)
				continue; /* no signatures: checked by agreement */
			if (first) {
				fprintf(out, "\nnotes:\n");
				first = 0;
			}
			fprintf(out, "  %s: signatures of %s not cross-verified by %s: %s\n", MODS[mi].name, KEYS[k].label,
				MODS[mi].other->name, key->xwhy[0] ? key->xwhy : "other module unavailable");
		}
	fflush(out);
}

static void status_str(char *buf, size_t n, const cell_t *c)
{
	if (c->state == CELL_NOTRUN)
		snprintf(buf, n, "not-run");
	else if (c->state == CELL_NA)
		snprintf(buf, n, "%s: %s", c->setup_failed ? "error" : "n/a", c->why);
	else if (c->bad)
		snprintf(buf, n, "bad: %s", c->bad_why);
	else if (c->errs)
		snprintf(buf, n, "errors: %s %s", c->err_call, rv_name(c->first_err));
	else
		snprintf(buf, n, "ok");
}

static void print_tsv(FILE *out)
{
	fprintf(out, "op\toperation\tthreads");
	for (int mi = 0; mi < NMODS; mi++)
		fprintf(out, "\t%s_ops_per_s", MODS[mi].name);
	if (NMODS > 1)
		fprintf(out, "\tratio\tratio_cpu");
	for (int mi = 0; mi < NMODS; mi++)
		fprintf(out, "\t%s_ops_per_cpu_s\t%s_ops_per_thread_cpu_s\t%s_ops\t%s_errors\t%s_checked\t%s_cpu_util\t%s_status",
			MODS[mi].name, MODS[mi].name, MODS[mi].name, MODS[mi].name, MODS[mi].name, MODS[mi].name,
			MODS[mi].name);
	fprintf(out, "\n");
	for (int oi = 0; oi < NOPS; oi++) {
		if (!SELECTED[oi])
			continue;
		for (int ti = 0; ti < NTHREADS; ti++) {
			fprintf(out, "%s\t%s\t%d", OPS[oi].id, OPS[oi].title, THREADS[ti]);
			for (int mi = 0; mi < NMODS; mi++) {
				cell_t *c = &CELLS[oi][ti][mi];
				if (cell_good(c))
					fprintf(out, "\t%.2f", cell_rate(c));
				else
					fprintf(out, "\t");
			}
			if (NMODS > 1) {
				cell_t *ca = &CELLS[oi][ti][0], *cb = &CELLS[oi][ti][1];
				if (cell_good(ca) && cell_good(cb))
					fprintf(out, "\t%.3f\t%.3f", cell_rate(ca) / cell_rate(cb),
						cell_cpu_rate(ca) / cell_cpu_rate(cb));
				else
					fprintf(out, "\t\t");
			}
			for (int mi = 0; mi < NMODS; mi++) {
				cell_t *c = &CELLS[oi][ti][mi];
				char st[300];
				status_str(st, sizeof st, c);
				double util = c->wall > 0 ? c->cpu / (c->wall * THREADS[ti]) : 0;
				if (cell_good(c) && c->tcpu > 0)
					fprintf(out, "\t%.2f\t%.2f", cell_cpu_rate(c), (double)c->ops / c->tcpu);
				else
					fprintf(out, "\t\t");
				fprintf(out, "\t%lu\t%lu\t%d\t%.2f\t%s", c->ops, c->errs, c->checked, util, st);
			}
			fprintf(out, "\n");
		}
	}
}

/* ------------------------------------------------------------------ */
/* Main                                                                */

static void machine_header(void)
{
	char cpu[128] = "unknown";
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f) {
		char line[256];
		while (fgets(line, sizeof line, f)) {
			if (strncmp(line, "model name", 10) == 0) {
				char *p = strchr(line, ':');
				if (p) {
					p++;
					while (*p == ' ' || *p == '\t')
						p++;
					p[strcspn(p, "\n")] = 0;
					snprintf(cpu, sizeof cpu, "%s", p);
				}
				break;
			}
		}
		fclose(f);
	}
	char load[64] = "?";
	f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fgets(load, sizeof load, f))
			load[strcspn(load, "\n")] = 0;
		fclose(f);
	}
	char date[64];
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", &tm);
	size_t n = 0;
	n += (size_t)snprintf(HEADER + n, sizeof HEADER - n,
			      "p11bench %s | CPU: %s | cores: %ld | loadavg at start: %s\n", date, cpu,
			      sysconf(_SC_NPROCESSORS_ONLN), load);
	n += (size_t)snprintf(HEADER + n, sizeof HEADER - n,
			      "%.1f s per cell (key generation %.1f s), %d alternating rounds; ops/s = calls that returned CKR_OK;\n"
			      "ratio = ours/theirs in ops/s (wall clock); ratio/CPU = the same in ops per process CPU-second\n",
			      SECONDS, KEYGEN_SECONDS, ROUNDS);
	for (int i = 0; i < NMODS && n < sizeof HEADER; i++)
		n += (size_t)snprintf(HEADER + n, sizeof HEADER - n, "%s: %s [%s]\n", MODS[i].name, MODS[i].path,
				      MODS[i].dead ? MODS[i].why : MODS[i].info);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: p11bench --module PATH (--label L | --slot N) --pin PIN [--so-pin SO] [--name NAME]\n"
		"                [--module2 PATH (--label2 L | --slot2 N) --pin2 PIN [--so-pin2 SO] [--name2 NAME]]\n"
		"                [--seconds S] [--keygen-seconds S] [--rounds R] [--threads 1,2] [--only ID,ID]\n"
		"                [--grace S] [--tsv FILE] [--list]\n"
		"With --so-pin, a missing token labelled L is created on the first uninitialised\n"
		"token (C_InitToken, C_InitPIN). Keys bench-rsa2048 ... bench-p521 are reused when\n"
		"present and generated on the token otherwise. --only takes substrings of the op ids\n"
		"(--list prints them). A cell that runs --grace seconds (default 120) past its\n"
		"time aborts the run. Exit status: 0 ok, 1 a check failed, 2 usage or setup, 3 timeout.\n");
}

static int selected_by(const char *id, const char *only)
{
	if (!only)
		return 1;
	char *dup = strdup(only);
	if (!dup)
		die("out of memory");
	int hit = 0;
	for (char *save = NULL, *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (*tok && strstr(id, tok))
			hit = 1;
	free(dup);
	return hit;
}

int main(int argc, char **argv)
{
	const char *only = NULL, *tsv = NULL, *threads = "1,2";
	memset(MODS, 0, sizeof MODS);
	for (int i = 0; i < 2; i++) {
		MODS[i].slotarg = -1;
		MODS[i].name = i == 0 ? "A" : "B";
	}
	static const struct option lo[] = {
		{"module", required_argument, 0, 'm'}, {"label", required_argument, 0, 'l'},
		{"slot", required_argument, 0, 's'},   {"pin", required_argument, 0, 'p'},
		{"so-pin", required_argument, 0, 'o'}, {"name", required_argument, 0, 'n'},
		{"module2", required_argument, 0, 'M'}, {"label2", required_argument, 0, 'L'},
		{"slot2", required_argument, 0, 'S'},  {"pin2", required_argument, 0, 'P'},
		{"so-pin2", required_argument, 0, 'O'}, {"name2", required_argument, 0, 'N'},
		{"seconds", required_argument, 0, 't'}, {"keygen-seconds", required_argument, 0, 'k'},
		{"rounds", required_argument, 0, 'r'}, {"threads", required_argument, 0, 'T'},
		{"only", required_argument, 0, 'x'},   {"tsv", required_argument, 0, 'v'},
		{"grace", required_argument, 0, 'g'},
		{"list", no_argument, 0, 'Z'},         {"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'm': MODS[0].path = optarg; break;
		case 'l': MODS[0].label = optarg; break;
		case 's': MODS[0].slotarg = strtol(optarg, NULL, 0); break;
		case 'p': MODS[0].pin = optarg; break;
		case 'o': MODS[0].so_pin = optarg; break;
		case 'n': MODS[0].name = optarg; break;
		case 'M': MODS[1].path = optarg; break;
		case 'L': MODS[1].label = optarg; break;
		case 'S': MODS[1].slotarg = strtol(optarg, NULL, 0); break;
		case 'P': MODS[1].pin = optarg; break;
		case 'O': MODS[1].so_pin = optarg; break;
		case 'N': MODS[1].name = optarg; break;
		case 't': SECONDS = atof(optarg); break;
		case 'k': KEYGEN_SECONDS = atof(optarg); break;
		case 'r': ROUNDS = atoi(optarg); break;
		case 'g': GRACE = atof(optarg); break;
		case 'T': threads = optarg; break;
		case 'x': only = optarg; break;
		case 'v': tsv = optarg; break;
		case 'Z':
			for (int i = 0; i < NOPS; i++)
				printf("%-20s %s\n", OPS[i].id, OPS[i].title);
			return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || !MODS[0].path || !MODS[0].pin || (!MODS[0].label && MODS[0].slotarg < 0)) {
		usage(stderr);
		return 2;
	}
	NMODS = MODS[1].path ? 2 : 1;
	if (NMODS == 2 && (!MODS[1].pin || (!MODS[1].label && MODS[1].slotarg < 0))) {
		usage(stderr);
		return 2;
	}
	for (int i = 0; i < NMODS; i++)
		if (!MODS[i].label)
			MODS[i].label = "";
	if (!(SECONDS > 0 && SECONDS <= 3600) || ROUNDS < 1 || ROUNDS > 100 || !(GRACE > 0))
		die("--seconds must be in (0, 3600], --rounds in [1, 100], --grace > 0");
	if (KEYGEN_SECONDS <= 0) /* RSA key generation is slow and its time varies a lot */
		KEYGEN_SECONDS = 3 * SECONDS < 3 ? 3 : 3 * SECONDS;
	{
		char *dup = strdup(threads);
		if (!dup)
			die("out of memory");
		for (char *save = NULL, *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			int t = atoi(tok);
			if (t < 1 || t > MAX_THREADS || NTHREADS >= MAX_THREADS)
				die("bad --threads %s (1..%d)", threads, MAX_THREADS);
			THREADS[NTHREADS++] = t;
		}
		free(dup);
		if (NTHREADS == 0)
			die("bad --threads %s", threads);
	}
	int nsel = 0;
	for (int i = 0; i < NOPS; i++)
		nsel += SELECTED[i] = selected_by(OPS[i].id, only);
	if (nsel == 0)
		die("--only %s selects no operation (see --list)", only);
	if (getrandom(BASE, sizeof BASE, 0) != (ssize_t)sizeof BASE)
		die("getrandom: %s", strerror(errno));

	pthread_t wd;
	if (pthread_create(&wd, NULL, watchdog, NULL) != 0)
		die("pthread_create (watchdog) failed");
	pthread_detach(wd);

	/* Modules, tokens, keys. */
	for (int i = 0; i < NMODS; i++) {
		MODS[i].other = &MODS[NMODS - 1 - i];
		module_open(&MODS[i], i == 1 ? &MODS[0] : NULL);
	}
	machine_header();
	int need[K_N] = {0};
	for (int oi = 0; oi < NOPS; oi++)
		if (SELECTED[oi])
			need[OPS[oi].key] = 1;
	for (int i = 0; i < NMODS; i++) {
		if (MODS[i].dead)
			continue;
		for (int k = 0; k < K_N; k++) {
			if (need[k])
				ensure_key(&MODS[i], k);
			else
				snprintf(MODS[i].keys[k].why, sizeof MODS[i].keys[k].why, "not selected");
		}
	}
	for (int i = 0; i < NMODS; i++)
		if (!MODS[i].dead)
			for (int k = 0; k < K_N; k++)
				import_pub(&MODS[i], k);
	phase(0, "idle");

	/* Cells. */
	for (int oi = 0; oi < NOPS; oi++) {
		if (!SELECTED[oi])
			continue;
		for (int ti = 0; ti < NTHREADS; ti++) {
			fprintf(stderr, "p11bench: %s, %d thread(s)...\n", OPS[oi].id, THREADS[ti]);
			run_cell(oi, ti);
		}
	}

	print_results(stdout, 0);
	int status = 0;
	for (int oi = 0; oi < NOPS; oi++)
		for (int ti = 0; ti < NTHREADS; ti++)
			for (int mi = 0; mi < NMODS; mi++)
				if (SELECTED[oi] && (CELLS[oi][ti][mi].bad || CELLS[oi][ti][mi].setup_failed ||
						     (CELLS[oi][ti][mi].state == CELL_RAN && CELLS[oi][ti][mi].errs)))
					status = 1;
	for (int mi = 0; mi < NMODS; mi++)
		if (MODS[mi].dead)
			status = 2;
	if (tsv) {
		FILE *f = strcmp(tsv, "-") == 0 ? stdout : fopen(tsv, "w");
		if (!f)
			die("%s: %s", tsv, strerror(errno));
		print_tsv(f);
		if (f != stdout && fclose(f) != 0)
			die("%s: %s", tsv, strerror(errno));
	}

	/* Tear down. */
	for (int i = 0; i < NMODS; i++) {
		module_t *m = &MODS[i];
		if (m->dead || !m->f)
			continue;
		phase(60, "%s: C_Logout/C_CloseSession", m->name);
		CK_RV rv = m->f->C_Logout(m->sess);
		if (rv != CKR_OK && rv != CKR_USER_NOT_LOGGED_IN)
			fprintf(stderr, "p11bench: %s: C_Logout: %s\n", m->name, rv_name(rv));
		rv = m->f->C_CloseSession(m->sess);
		if (rv != CKR_OK)
			fprintf(stderr, "p11bench: %s: C_CloseSession: %s\n", m->name, rv_name(rv));
	}
	for (int i = 0; i < NMODS; i++) {
		module_t *m = &MODS[i];
		if (!m->f || m->shared)
			continue;
		phase(60, "%s: C_Finalize", m->name);
		CK_RV rv = m->f->C_Finalize(NULL);
		if (rv != CKR_OK)
			fprintf(stderr, "p11bench: %s: C_Finalize: %s\n", m->name, rv_name(rv));
	}
	phase(0, "done");
	for (int i = 0; i < NMODS; i++)
		free(MODS[i].mechs);
	return status;
}
