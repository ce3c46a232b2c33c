/*
 * forkall.c: a forked child against its parent, function by function.
 * Driven by test/fork/forkall_test.go.
 *
 *   forkall MODULE OUTDIR CHILDREN
 *
 * The parent loads MODULE, takes its interfaces (C_GetInterface 3.2 and
 * 3.0, C_GetFunctionList 2.40), C_Initialize, logs in (PIN from
 * FORKALL_PIN), makes the token keys it needs when they are missing
 * (Ed25519 "fa-ed", P-256 "fa-ec", ML-DSA-65 "fa-mldsa"), writes its
 * report to OUTDIR/parent, forks CHILDREN children and, after they are
 * gone, writes OUTDIR/parent-after. Every child writes OUTDIR/child<i>:
 *
 *   child 0   C_Initialize, then the report from two threads at once
 *             (child0 and child0-t1, each on its own session);
 *   child 1   never calls C_Initialize (it inherits an initialised module),
 *             then forks a grandchild that does the same (grandchild1);
 *   child 2   C_Initialize, report, C_Finalize, C_Initialize, report again
 *             (child2-again);
 *   child 3   clears its environment and points MODEXP_TOKEN_CONF, HOME and
 *             XDG_DATA_HOME elsewhere (as nginx clears its workers'), then
 *             C_Initialize and report: the copy must still see the token;
 *   others    C_Initialize, report.
 *
 * A report is lines "<what> <value>": the three interfaces' C_GetInfo, the
 * interface list, both mechanism lists and every mechanism's info, then
 * one round trip per family, whose outputs are deterministic so that the Go
 * test can compare every process with the parent and check them against Go's
 * own implementations:
 *
 *   gcm        AES-256-GCM of a fixed message (fixed key, IV, AAD), and the
 *              token's decryption of it; the key's CKA_ALLOWED_MECHANISMS
 *              (GCM, key wrap) refuses CKM_AES_CBC_PAD (allowed-refuses);
 *   wrap       CKM_AES_KEY_WRAP of a fixed AES-128 key;
 *   hkdf       CKM_HKDF_DERIVE (SHA-256, salt, info) of a fixed key: the
 *              derived value;
 *   ecdh       CKM_ECDH1_DERIVE of fa-ec with the P-256 generator as the
 *              peer: the shared secret, fa-ec's x coordinate;
 *   eddsa      CKM_EDDSA signature of a fixed message by fa-ed;
 *   mldsa      CKM_ML_DSA sign, then C_VerifySignatureInit/C_VerifySignature
 *              (3.2) of it and of a changed message: the return values;
 *   rv30       return values of 3.0 functions (C_SessionCancel,
 *              C_MessageEncryptInit, C_LoginUser) and 3.2 ones
 *              (C_GetSessionValidationFlags, C_WrapKeyAuthenticated);
 *   pub-ed, pub-ec  CKA_EC_POINT of the keys, for the Go checks.
 *
 * Lines "FAIL ..." say what went wrong; exit status 0 means every process
 * did all its work.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pkcs11_3.h"

static CK_FUNCTION_LIST_3_2 *f32;
static CK_FUNCTION_LIST_3_0 *f30;
static CK_FUNCTION_LIST *f240;
static CK_FUNCTION_LIST_3_0 *f; /* &f32->base */
static CK_C_GetInterfaceList getiflist;
static const char *outdir, *pin;
static CK_SLOT_ID slot;
static char procname[64] = "parent";
static int failures;
static pthread_mutex_t fail_mu = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&fail_mu);
	printf("FAIL %s: ", procname);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failures++;
	pthread_mutex_unlock(&fail_mu);
}

#define CHECK(call)                                                   \
	do {                                                          \
		CK_RV rv_ = (call);                                   \
		if (rv_ != CKR_OK) {                                  \
			fail("%s:%d %s = 0x%lx", __FILE__, __LINE__, #call, rv_); \
			return -1;                                    \
		}                                                     \
	} while (0)

static void hex(FILE *out, const CK_BYTE *p, CK_ULONG n)
{
	for (CK_ULONG i = 0; i < n; i++)
		fprintf(out, "%02x", p[i]);
}

static void line(FILE *out, const char *what, const CK_BYTE *p, CK_ULONG n)
{
	fprintf(out, "%s ", what);
	hex(out, p, n);
	fprintf(out, "\n");
}

static int cmp_ulong(const void *a, const void *b)
{
	CK_ULONG x = *(const CK_ULONG *)a, y = *(const CK_ULONG *)b;
	return x < y ? -1 : x > y;
}

static CK_BBOOL yes = CK_TRUE, no = CK_FALSE;

/* find returns the object of class cls labelled label, or 0. */
static CK_OBJECT_HANDLE find(CK_SESSION_HANDLE s, CK_OBJECT_CLASS cls, const char *label)
{
	CK_ATTRIBUTE t[] = {{CKA_CLASS, &cls, sizeof cls}, {CKA_LABEL, (void *)label, strlen(label)}};
	CK_OBJECT_HANDLE h = 0;
	CK_ULONG n = 0;
	if (f->C_FindObjectsInit(s, t, 2) != CKR_OK)
		return 0;
	f->C_FindObjects(s, &h, 1, &n);
	f->C_FindObjectsFinal(s);
	return n ? h : 0;
}

/* DER OIDs as CKA_EC_PARAMS. */
static CK_BYTE oid_ed25519[] = {0x06, 0x03, 0x2b, 0x65, 0x70};
static CK_BYTE oid_p256[] = {0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};

static int genpair(CK_SESSION_HANDLE s, CK_MECHANISM_TYPE mt, const char *label, CK_ATTRIBUTE *extra,
		   CK_ULONG nextra, int derive)
{
	CK_MECHANISM m = {mt, NULL, 0};
	CK_ATTRIBUTE pub[4] = {{CKA_TOKEN, &yes, 1}, {CKA_LABEL, (void *)label, strlen(label)}};
	CK_ATTRIBUTE priv[4] = {{CKA_TOKEN, &yes, 1}, {CKA_LABEL, (void *)label, strlen(label)},
				{derive ? CKA_DERIVE : CKA_SIGN, &yes, 1}};
	CK_ULONG np = 2;
	for (CK_ULONG i = 0; i < nextra; i++)
		pub[np++] = extra[i];
	CK_OBJECT_HANDLE hp, hk;
	CHECK(f->C_GenerateKeyPair(s, &m, pub, np, priv, 3, &hp, &hk));
	return 0;
}

/* setup makes the token keys when missing (parent only). */
static int setup(CK_SESSION_HANDLE s)
{
	CK_ULONG set = CKP_ML_DSA_65;
	CK_ATTRIBUTE ed[] = {{CKA_EC_PARAMS, oid_ed25519, sizeof oid_ed25519}};
	CK_ATTRIBUTE ec[] = {{CKA_EC_PARAMS, oid_p256, sizeof oid_p256}};
	CK_ATTRIBUTE ml[] = {{CKA_PARAMETER_SET, &set, sizeof set}};
	if (!find(s, CKO_PRIVATE_KEY, "fa-ed") && genpair(s, CKM_EC_EDWARDS_KEY_PAIR_GEN, "fa-ed", ed, 1, 0))
		return -1;
	if (!find(s, CKO_PRIVATE_KEY, "fa-ec") && genpair(s, CKM_EC_KEY_PAIR_GEN, "fa-ec", ec, 1, 1))
		return -1;
	if (!find(s, CKO_PRIVATE_KEY, "fa-mldsa") && genpair(s, CKM_ML_DSA_KEY_PAIR_GEN, "fa-mldsa", ml, 1, 0))
		return -1;
	return 0;
}

/* secret creates a session secret key of type kt with a fixed value. */
static CK_OBJECT_HANDLE secret(CK_SESSION_HANDLE s, CK_KEY_TYPE kt, const CK_BYTE *v, CK_ULONG n)
{
	CK_OBJECT_CLASS c = CKO_SECRET_KEY;
	CK_ATTRIBUTE t[] = {
		{CKA_CLASS, &c, sizeof c}, {CKA_KEY_TYPE, &kt, sizeof kt}, {CKA_VALUE, (void *)v, n},
		{CKA_TOKEN, &no, 1}, {CKA_EXTRACTABLE, &yes, 1}, {CKA_SENSITIVE, &no, 1},
		{CKA_ENCRYPT, &yes, 1}, {CKA_DECRYPT, &yes, 1}, {CKA_WRAP, &yes, 1}, {CKA_UNWRAP, &yes, 1},
	};
	static CK_MECHANISM_TYPE allowed[] = {CKM_AES_GCM, CKM_AES_KEY_WRAP};
	CK_ATTRIBUTE t2[11];
	memcpy(t2, t, sizeof t);
	t2[10] = (CK_ATTRIBUTE){CKA_ALLOWED_MECHANISMS, allowed, sizeof allowed};
	CK_ULONG nt = n == 32 ? 11 : 10; /* the AES-256 key: GCM and key wrap only */
	if (kt != CKK_AES) {
		t[6] = (CK_ATTRIBUTE){CKA_DERIVE, &yes, 1};
		nt = 7;
	}
	CK_OBJECT_HANDLE h = 0;
	CK_RV rv = f->C_CreateObject(s, nt == 11 ? t2 : t, nt, &h);
	if (rv != CKR_OK)
		fail("C_CreateObject(secret 0x%lx): 0x%lx", kt, rv);
	return h;
}

/* value reads a derived key's CKA_VALUE into out. */
static int value(CK_SESSION_HANDLE s, CK_OBJECT_HANDLE h, CK_BYTE *out, CK_ULONG *n)
{
	CK_ATTRIBUTE a = {CKA_VALUE, out, *n};
	CHECK(f->C_GetAttributeValue(s, h, &a, 1));
	*n = a.ulValueLen;
	return 0;
}

static int report_general(FILE *out)
{
	CK_INFO info;
	struct {
		const char *what;
		CK_C_GetInfo fn;
	} infos[] = {{"info32", f32->base.C_GetInfo}, {"info30", f30->C_GetInfo}, {"info240", f240->C_GetInfo}};
	for (int i = 0; i < 3; i++) {
		CHECK(infos[i].fn(&info));
		fprintf(out, "%s %d.%d %.32s|%.32s|%d.%d\n", infos[i].what, info.cryptokiVersion.major,
			info.cryptokiVersion.minor, (char *)info.manufacturerID, (char *)info.libraryDescription,
			info.libraryVersion.major, info.libraryVersion.minor);
	}
	CK_INTERFACE ifs[8];
	CK_ULONG nif = 8;
	CHECK(getiflist(ifs, &nif));
	fprintf(out, "interfaces");
	for (CK_ULONG i = 0; i < nif; i++) {
		CK_VERSION *v = ifs[i].pFunctionList;
		fprintf(out, " %s/%d.%d/%lx", (char *)ifs[i].pInterfaceName, v->major, v->minor, ifs[i].flags);
	}
	fprintf(out, "\n");
	CK_MECHANISM_TYPE mechs[512];
	struct {
		const char *what;
		CK_C_GetMechanismList fn;
	} lists[] = {{"mechs32", f32->base.C_GetMechanismList}, {"mechs240", f240->C_GetMechanismList}};
	for (int l = 0; l < 2; l++) {
		CK_ULONG n = 0;
		CHECK(lists[l].fn(slot, NULL, &n));
		if (n > 512) {
			fail("%lu mechanisms", n);
			return -1;
		}
		CHECK(lists[l].fn(slot, mechs, &n));
		qsort(mechs, n, sizeof mechs[0], cmp_ulong);
		fprintf(out, "%s %lu", lists[l].what, n);
		for (CK_ULONG i = 0; i < n; i++)
			fprintf(out, " %lx", mechs[i]);
		fprintf(out, "\n");
		if (l == 0)
			for (CK_ULONG i = 0; i < n; i++) {
				CK_MECHANISM_INFO mi;
				CHECK(f->C_GetMechanismInfo(slot, mechs[i], &mi));
				fprintf(out, "mechinfo %lx %lu %lu %lx\n", mechs[i], mi.ulMinKeySize, mi.ulMaxKeySize,
					mi.flags);
			}
	}
	return 0;
}

static CK_BYTE msg[] = "a forked child has the whole token";

static int report_ops(FILE *out, CK_SESSION_HANDLE s)
{
	CK_BYTE k256[32], k128[16], ikm[32], buf[8192], buf2[8192];
	for (int i = 0; i < 32; i++)
		k256[i] = (CK_BYTE)i, ikm[i] = (CK_BYTE)(0xa0 + i);
	for (int i = 0; i < 16; i++)
		k128[i] = (CK_BYTE)(0x40 + i);
	CK_ULONG n, n2;

	/* AES-GCM (a new key object per report: the token refuses a caller IV
	 * repeated on one key). */
	CK_OBJECT_HANDLE aes = secret(s, CKK_AES, k256, 32);
	if (aes == 0)
		return -1;
	CK_BYTE iv[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, aad[] = "header";
	CK_GCM_PARAMS gp = {iv, sizeof iv, 96, aad, sizeof aad - 1, 128};
	CK_MECHANISM gcm = {CKM_AES_GCM, &gp, sizeof gp};
	CHECK(f->C_EncryptInit(s, &gcm, aes));
	n = sizeof buf;
	CHECK(f->C_Encrypt(s, msg, sizeof msg - 1, buf, &n));
	line(out, "gcm", buf, n);
	CHECK(f->C_DecryptInit(s, &gcm, aes));
	n2 = sizeof buf2;
	CHECK(f->C_Decrypt(s, buf, n, buf2, &n2));
	line(out, "gcm-decrypt", buf2, n2);
	/* A mechanism the key's CKA_ALLOWED_MECHANISMS leaves out. */
	CK_BYTE cbciv[16] = {0};
	CK_MECHANISM cbc = {CKM_AES_CBC_PAD, cbciv, sizeof cbciv};
	fprintf(out, "allowed-refuses %lx\n", f->C_EncryptInit(s, &cbc, aes));

	/* AES key wrap of a fixed AES-128 key. */
	CK_OBJECT_HANDLE inner = secret(s, CKK_AES, k128, 16);
	if (inner == 0)
		return -1;
	CK_MECHANISM kw = {CKM_AES_KEY_WRAP, NULL, 0};
	n = sizeof buf;
	CHECK(f->C_WrapKey(s, &kw, aes, inner, buf, &n));
	line(out, "wrap", buf, n);

	/* HKDF. */
	CK_OBJECT_HANDLE base = secret(s, CKK_GENERIC_SECRET, ikm, 32);
	if (base == 0)
		return -1;
	CK_BYTE salt[] = "salt", hinfo[] = "info";
	CK_HKDF_PARAMS hp = {CK_TRUE, CK_TRUE, CKM_SHA256, CKF_HKDF_SALT_DATA, salt, sizeof salt - 1, 0,
			     hinfo, sizeof hinfo - 1};
	CK_MECHANISM hkdf = {CKM_HKDF_DERIVE, &hp, sizeof hp};
	CK_OBJECT_CLASS sc = CKO_SECRET_KEY;
	CK_KEY_TYPE gk = CKK_GENERIC_SECRET;
	CK_ULONG vlen = 32;
	CK_ATTRIBUTE dt[] = {{CKA_CLASS, &sc, sizeof sc}, {CKA_KEY_TYPE, &gk, sizeof gk}, {CKA_VALUE_LEN, &vlen, sizeof vlen},
			     {CKA_SENSITIVE, &no, 1}, {CKA_EXTRACTABLE, &yes, 1}, {CKA_TOKEN, &no, 1}};
	CK_OBJECT_HANDLE dk;
	CHECK(f->C_DeriveKey(s, &hkdf, base, dt, 6, &dk));
	n = sizeof buf;
	if (value(s, dk, buf, &n))
		return -1;
	line(out, "hkdf", buf, n);

	/* ECDH with the P-256 generator as the peer's point. */
	static CK_BYTE g[] = {0x04,
		0x6b, 0x17, 0xd1, 0xf2, 0xe1, 0x2c, 0x42, 0x47, 0xf8, 0xbc, 0xe6, 0xe5, 0x63, 0xa4, 0x40, 0xf2,
		0x77, 0x03, 0x7d, 0x81, 0x2d, 0xeb, 0x33, 0xa0, 0xf4, 0xa1, 0x39, 0x45, 0xd8, 0x98, 0xc2, 0x96,
		0x4f, 0xe3, 0x42, 0xe2, 0xfe, 0x1a, 0x7f, 0x9b, 0x8e, 0xe7, 0xeb, 0x4a, 0x7c, 0x0f, 0x9e, 0x16,
		0x2b, 0xce, 0x33, 0x57, 0x6b, 0x31, 0x5e, 0xce, 0xcb, 0xb6, 0x40, 0x68, 0x37, 0xbf, 0x51, 0xf5};
	CK_ECDH1_DERIVE_PARAMS ep = {CKD_NULL, 0, NULL, sizeof g, g};
	CK_MECHANISM ecdh = {CKM_ECDH1_DERIVE, &ep, sizeof ep};
	CK_OBJECT_HANDLE eck = find(s, CKO_PRIVATE_KEY, "fa-ec"), ecpub = find(s, CKO_PUBLIC_KEY, "fa-ec");
	if (eck == 0 || ecpub == 0) {
		fail("no fa-ec key");
		return -1;
	}
	CHECK(f->C_DeriveKey(s, &ecdh, eck, dt, 6, &dk));
	n = sizeof buf;
	if (value(s, dk, buf, &n))
		return -1;
	line(out, "ecdh", buf, n);
	CK_ATTRIBUTE pt = {CKA_EC_POINT, buf, sizeof buf};
	CHECK(f->C_GetAttributeValue(s, ecpub, &pt, 1));
	line(out, "pub-ec", buf, pt.ulValueLen);

	/* EdDSA. */
	CK_OBJECT_HANDLE ed = find(s, CKO_PRIVATE_KEY, "fa-ed"), edpub = find(s, CKO_PUBLIC_KEY, "fa-ed");
	if (ed == 0 || edpub == 0) {
		fail("no fa-ed key");
		return -1;
	}
	CK_MECHANISM eddsa = {CKM_EDDSA, NULL, 0};
	CHECK(f->C_SignInit(s, &eddsa, ed));
	n = sizeof buf;
	CHECK(f->C_Sign(s, msg, sizeof msg - 1, buf, &n));
	line(out, "eddsa", buf, n);
	pt = (CK_ATTRIBUTE){CKA_EC_POINT, buf, sizeof buf};
	CHECK(f->C_GetAttributeValue(s, edpub, &pt, 1));
	line(out, "pub-ed", buf, pt.ulValueLen);

	/* ML-DSA, verified through the 3.2 functions. */
	CK_OBJECT_HANDLE ml = find(s, CKO_PRIVATE_KEY, "fa-mldsa"), mlpub = find(s, CKO_PUBLIC_KEY, "fa-mldsa");
	if (ml == 0 || mlpub == 0) {
		fail("no fa-mldsa key");
		return -1;
	}
	CK_MECHANISM mldsa = {CKM_ML_DSA, NULL, 0};
	CHECK(f->C_SignInit(s, &mldsa, ml));
	n = sizeof buf;
	CHECK(f->C_Sign(s, msg, sizeof msg - 1, buf, &n));
	CK_RV good = f32->C_VerifySignatureInit(s, &mldsa, mlpub, buf, n);
	if (good == CKR_OK)
		good = f32->C_VerifySignature(s, msg, sizeof msg - 1);
	CK_RV bad = f32->C_VerifySignatureInit(s, &mldsa, mlpub, buf, n);
	if (bad == CKR_OK)
		bad = f32->C_VerifySignature(s, msg, sizeof msg - 2);
	fprintf(out, "mldsa %lu %lx %lx\n", n, good, bad);

	/* 3.0 and 3.2 functions the token answers without serving. */
	CK_FLAGS vf = 0;
	fprintf(out, "rv30 %lx %lx %lx %lx %lx\n", f->C_SessionCancel(s, CKF_SIGN),
		f->C_MessageEncryptInit(s, &gcm, aes), f->C_LoginUser(s, CKU_USER, NULL, 0, NULL, 0),
		f32->C_GetSessionValidationFlags(s, 0, &vf),
		f32->C_WrapKeyAuthenticated(s, &kw, aes, inner, NULL, 0, NULL, &n));
	return 0;
}

/* open_session opens a session on slot and logs in (CKR_USER_ALREADY_LOGGED_IN
 * is fine: another session of the process did). */
static int open_session(CK_SESSION_HANDLE *s)
{
	CHECK(f->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, s));
	CK_RV rv = f->C_Login(*s, CKU_USER, (CK_UTF8CHAR *)pin, strlen(pin));
	if (rv != CKR_OK && rv != CKR_USER_ALREADY_LOGGED_IN) {
		fail("C_Login: 0x%lx", rv);
		return -1;
	}
	return 0;
}

/* report writes OUTDIR/name: the general part and the operations on a new
 * session. */
static int report(const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", outdir, name);
	FILE *out = fopen(path, "w");
	if (out == NULL) {
		fail("%s: %s", path, strerror(errno));
		return -1;
	}
	CK_SESSION_HANDLE s;
	int rc = report_general(out);
	if (rc == 0)
		rc = open_session(&s);
	if (rc == 0) {
		rc = report_ops(out, s);
		f->C_CloseSession(s);
	}
	fclose(out);
	return rc;
}

static void *thread_report(void *arg)
{
	return (void *)(long)report((const char *)arg);
}

static void child(int i)
{
	snprintf(procname, sizeof procname, "child%d", i);
	char name[64];
	snprintf(name, sizeof name, "child%d", i);
	CK_RV rv;
	if (i == 3) {
		clearenv();
		setenv("MODEXP_TOKEN_CONF", "/nonexistent/modexp-token.toml", 1);
		setenv("HOME", "/nonexistent", 1);
		setenv("XDG_DATA_HOME", "/nonexistent", 1);
	}
	if (i != 1 && (rv = f->C_Initialize(NULL)) != CKR_OK) {
		fail("C_Initialize: 0x%lx", rv);
		return;
	}
	switch (i) {
	case 0: {
		pthread_t t;
		pthread_create(&t, NULL, thread_report, "child0-t1");
		report(name);
		void *r;
		pthread_join(t, &r);
		break;
	}
	case 1: {
		report(name);
		fflush(NULL);
		pid_t g = fork();
		if (g == 0) {
			snprintf(procname, sizeof procname, "grandchild1");
			report("grandchild1");
			fflush(NULL);
			_exit(failures ? 1 : 0);
		}
		int st;
		if (waitpid(g, &st, 0) != g || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			fail("grandchild exit 0x%x", st);
		break;
	}
	case 2:
		report(name);
		if ((rv = f->C_Finalize(NULL)) != CKR_OK)
			fail("C_Finalize: 0x%lx", rv);
		if ((rv = f->C_Initialize(NULL)) != CKR_OK)
			fail("C_Initialize again: 0x%lx", rv);
		report("child2-again");
		break;
	default:
		report(name);
	}
	if ((rv = f->C_Finalize(NULL)) != CKR_OK)
		fail("C_Finalize at the end: 0x%lx", rv);
}

int main(int argc, char **argv)
{
	if (argc != 4 || (pin = getenv("FORKALL_PIN")) == NULL) {
		fprintf(stderr, "usage: FORKALL_PIN=... %s MODULE OUTDIR CHILDREN\n", argv[0]);
		return 2;
	}
	outdir = argv[2];
	int children = atoi(argv[3]);
	if (children < 3 || children > 32) {
		fprintf(stderr, "CHILDREN: 3 to 32\n");
		return 2;
	}
	void *dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (dl == NULL) {
		fail("dlopen: %s", dlerror());
		return 1;
	}
	CK_C_GetInterface getif = (CK_C_GetInterface)dlsym(dl, "C_GetInterface");
	CK_C_GetFunctionList getfl = (CK_C_GetFunctionList)dlsym(dl, "C_GetFunctionList");
	getiflist = (CK_C_GetInterfaceList)dlsym(dl, "C_GetInterfaceList");
	CK_INTERFACE *it32, *it30;
	CK_VERSION v32 = {3, 2}, v30 = {3, 0};
	if (getif == NULL || getfl == NULL || getiflist == NULL || getif(NULL, &v32, &it32, 0) != CKR_OK ||
	    getif(NULL, &v30, &it30, 0) != CKR_OK || getfl(&f240) != CKR_OK) {
		fail("the module's interfaces");
		return 1;
	}
	f32 = it32->pFunctionList;
	f30 = it30->pFunctionList;
	f = &f32->base;
	CK_C_INITIALIZE_ARGS ia = {NULL, NULL, NULL, NULL, CKF_OS_LOCKING_OK, NULL};
	CK_RV rv = f->C_Initialize(&ia);
	CK_ULONG ns = 1;
	if (rv != CKR_OK || f->C_GetSlotList(CK_TRUE, &slot, &ns) != CKR_OK || ns < 1) {
		fail("C_Initialize or C_GetSlotList: 0x%lx", rv);
		return 1;
	}
	CK_SESSION_HANDLE s;
	if (open_session(&s) != 0 || setup(s) != 0 || report("parent") != 0)
		return 1;
	fflush(NULL);
	pid_t pids[32];
	for (int i = 0; i < children; i++) {
		if ((pids[i] = fork()) < 0) {
			fail("fork: %s", strerror(errno));
			return 1;
		}
		if (pids[i] == 0) {
			alarm(120);
			child(i);
			fflush(NULL);
			_exit(failures ? 1 : 0);
		}
	}
	for (int i = 0; i < children; i++) {
		int st;
		if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			fail("child%d exit 0x%x", i, st);
	}
	/* The parent keeps working, on its old session too. */
	CK_SESSION_INFO si;
	if ((rv = f->C_GetSessionInfo(s, &si)) != CKR_OK || si.state != CKS_RW_USER_FUNCTIONS)
		fail("parent C_GetSessionInfo after the children: 0x%lx state %lu", rv, si.state);
	report("parent-after");
	f->C_Finalize(NULL);
	printf("%s\n", failures ? "FAILED" : "PASS");
	return failures ? 1 : 0;
}
