/*
 * forkmech.c: what a forked child offers, against its parent (issue 17).
 * Driven by test/fork/forkmech_test.go.
 *
 *   forkmech MODULE
 *
 * Loads MODULE, takes its 3.0 interface (C_GetInterface), C_Initialize,
 * logs in (PIN from FORKMECH_PIN), and prints for the parent and then for
 * a forked child (which calls C_Initialize again, opens its own session
 * and logs in):
 *
 *   <who> version <major>.<minor>          C_GetInfo through the 3.0 interface
 *   <who> version240 <major>.<minor>       C_GetInfo of C_GetFunctionList's list
 *   <who> info <manufacturer>|<description>|<library version>
 *   <who> mechs <hex>,<hex>,...            C_GetMechanismList, sorted
 *   <who> sig <MECH> <hex message> <hex signature>
 *   <who> digest SHA224 <hex message> <hex digest>
 *
 * The signatures (keys "rsa" and "ec" on the token) use CKM_ECDSA_SHA256,
 * CKM_ECDSA_SHA224, CKM_SHA256_RSA_PKCS_PSS, CKM_SHA224_RSA_PKCS and
 * CKM_SHA384_RSA_PKCS_PSS, in one part and in parts; the Go test verifies
 * them with crypto/ecdsa and crypto/rsa and compares the two processes.
 * "FAIL ..." lines say what went wrong.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <p11-kit-1/p11-kit/pkcs11.h>

/* The few 3.0 declarations needed (PKCS #11 3.0 §5.4). */
typedef struct {
	CK_UTF8CHAR *pInterfaceName;
	void *pFunctionList;
	CK_FLAGS flags;
} fm_interface;
typedef CK_RV (*fm_get_interface)(CK_UTF8CHAR *, CK_VERSION *, fm_interface **, CK_FLAGS);

static CK_FUNCTION_LIST *f;    /* the 3.0 list, used as its 2.40 prefix */
static CK_FUNCTION_LIST *f240; /* C_GetFunctionList's */
static const char *who = "parent";
static int failed;

static void fail(const char *what, CK_RV rv)
{
	printf("FAIL %s: %s: 0x%lx\n", who, what, (unsigned long)rv);
	failed = 1;
}

static void hex(const CK_BYTE *p, CK_ULONG n)
{
	for (CK_ULONG i = 0; i < n; i++)
		printf("%02x", p[i]);
}

static int cmp_mech(const void *a, const void *b)
{
	CK_MECHANISM_TYPE x = *(const CK_MECHANISM_TYPE *)a, y = *(const CK_MECHANISM_TYPE *)b;
	return x < y ? -1 : x > y;
}

static void report_info(CK_SLOT_ID slot)
{
	CK_INFO info;
	CK_RV rv = f->C_GetInfo(&info);
	if (rv != CKR_OK)
		return fail("C_GetInfo (3.0)", rv);
	printf("%s version %d.%d\n", who, info.cryptokiVersion.major, info.cryptokiVersion.minor);
	printf("%s info %.32s|%.32s|%d.%d\n", who, info.manufacturerID, info.libraryDescription,
	       info.libraryVersion.major, info.libraryVersion.minor);
	if ((rv = f240->C_GetInfo(&info)) != CKR_OK)
		return fail("C_GetInfo (2.40)", rv);
	printf("%s version240 %d.%d\n", who, info.cryptokiVersion.major, info.cryptokiVersion.minor);
	CK_MECHANISM_TYPE mechs[256];
	CK_ULONG n = 0;
	if ((rv = f->C_GetMechanismList(slot, NULL, &n)) != CKR_OK || n > 256)
		return fail("C_GetMechanismList (count)", rv);
	if ((rv = f->C_GetMechanismList(slot, mechs, &n)) != CKR_OK)
		return fail("C_GetMechanismList", rv);
	qsort(mechs, n, sizeof mechs[0], cmp_mech);
	printf("%s mechs ", who);
	for (CK_ULONG i = 0; i < n; i++) {
		CK_MECHANISM_INFO mi;
		printf("%s%lx", i ? "," : "", (unsigned long)mechs[i]);
		if ((rv = f->C_GetMechanismInfo(slot, mechs[i], &mi)) != CKR_OK) {
			printf("\n");
			return fail("C_GetMechanismInfo of a listed mechanism", rv);
		}
	}
	printf("\n");
}

static CK_OBJECT_HANDLE find(CK_SESSION_HANDLE s, const char *label)
{
	CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
	CK_ATTRIBUTE t[] = {{CKA_CLASS, &cls, sizeof cls}, {CKA_LABEL, (void *)label, strlen(label)}};
	CK_OBJECT_HANDLE h = 0;
	CK_ULONG n = 0;
	if (f->C_FindObjectsInit(s, t, 2) != CKR_OK)
		return 0;
	f->C_FindObjects(s, &h, 1, &n);
	f->C_FindObjectsFinal(s);
	return n == 1 ? h : 0;
}

static void sign(CK_SESSION_HANDLE s, CK_OBJECT_HANDLE key, const char *name, CK_MECHANISM *m, int parts)
{
	CK_BYTE msg[100], sig[1024];
	CK_ULONG siglen = 0;
	for (size_t i = 0; i < sizeof msg; i++)
		msg[i] = (CK_BYTE)(rand() ^ getpid());
	CK_RV rv = f->C_SignInit(s, m, key);
	if (rv != CKR_OK)
		return fail(name, rv);
	if (parts) {
		if ((rv = f->C_SignUpdate(s, msg, 37)) != CKR_OK || (rv = f->C_SignUpdate(s, msg + 37, sizeof msg - 37)) != CKR_OK)
			return fail(name, rv);
		if ((rv = f->C_SignFinal(s, NULL, &siglen)) != CKR_OK) /* length query */
			return fail(name, rv);
		rv = f->C_SignFinal(s, sig, &siglen);
	} else {
		if ((rv = f->C_Sign(s, msg, sizeof msg, NULL, &siglen)) != CKR_OK)
			return fail(name, rv);
		rv = f->C_Sign(s, msg, sizeof msg, sig, &siglen);
	}
	if (rv != CKR_OK)
		return fail(name, rv);
	printf("%s sig %s ", who, name);
	hex(msg, sizeof msg);
	printf(" ");
	hex(sig, siglen);
	printf("\n");
}

static void work(CK_SESSION_HANDLE s)
{
	CK_OBJECT_HANDLE rsa = find(s, "rsa"), ec = find(s, "ec");
	if (rsa == 0 || ec == 0)
		return fail("find keys", CKR_GENERAL_ERROR);
	CK_RSA_PKCS_PSS_PARAMS pss256 = {CKM_SHA256, CKG_MGF1_SHA256, 32};
	CK_RSA_PKCS_PSS_PARAMS pss384 = {CKM_SHA384, CKG_MGF1_SHA384, 48};
	CK_MECHANISM m;
	m = (CK_MECHANISM){CKM_ECDSA_SHA256, NULL, 0};
	sign(s, ec, "ECDSA_SHA256", &m, 0);
	sign(s, ec, "ECDSA_SHA256", &m, 1);
	m = (CK_MECHANISM){CKM_ECDSA_SHA224, NULL, 0};
	sign(s, ec, "ECDSA_SHA224", &m, 1);
	m = (CK_MECHANISM){CKM_SHA256_RSA_PKCS_PSS, &pss256, sizeof pss256};
	sign(s, rsa, "SHA256_RSA_PKCS_PSS", &m, 0);
	sign(s, rsa, "SHA256_RSA_PKCS_PSS", &m, 1);
	m = (CK_MECHANISM){CKM_SHA384_RSA_PKCS_PSS, &pss384, sizeof pss384};
	sign(s, rsa, "SHA384_RSA_PKCS_PSS", &m, 0);
	m = (CK_MECHANISM){CKM_SHA224_RSA_PKCS, NULL, 0};
	sign(s, rsa, "SHA224_RSA_PKCS", &m, 1);

	/* Wrong parameters are refused, as by the parent. */
	CK_RSA_PKCS_PSS_PARAMS bad = {CKM_SHA_1, CKG_MGF1_SHA256, 32};
	m = (CK_MECHANISM){CKM_SHA256_RSA_PKCS_PSS, &bad, sizeof bad};
	CK_RV rv = f->C_SignInit(s, &m, rsa);
	printf("%s badparams 0x%lx\n", who, (unsigned long)rv);

	CK_BYTE msg[] = "abc", d[64];
	CK_ULONG dl = sizeof d;
	m = (CK_MECHANISM){CKM_SHA224, NULL, 0};
	if ((rv = f->C_DigestInit(s, &m)) != CKR_OK || (rv = f->C_Digest(s, msg, 3, d, &dl)) != CKR_OK)
		return fail("SHA224 digest", rv);
	printf("%s digest SHA224 616263 ", who);
	hex(d, dl);
	printf("\n");
}

static CK_SESSION_HANDLE login(void)
{
	CK_SLOT_ID slot;
	CK_ULONG n = 1;
	CK_SESSION_HANDLE s = 0;
	CK_RV rv = f->C_GetSlotList(CK_TRUE, &slot, &n);
	if (rv != CKR_OK || n < 1) {
		fail("C_GetSlotList", rv);
		return 0;
	}
	report_info(slot);
	if ((rv = f->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &s)) != CKR_OK) {
		fail("C_OpenSession", rv);
		return 0;
	}
	const char *pin = getenv("FORKMECH_PIN");
	rv = f->C_Login(s, CKU_USER, (CK_UTF8CHAR *)pin, strlen(pin));
	if (rv != CKR_OK && rv != CKR_USER_ALREADY_LOGGED_IN) {
		fail("C_Login", rv);
		return 0;
	}
	return s;
}

int main(int argc, char **argv)
{
	if (argc != 2 || getenv("FORKMECH_PIN") == NULL) {
		fprintf(stderr, "usage: FORKMECH_PIN=... forkmech MODULE\n");
		return 2;
	}
	void *dl = dlopen(argv[1], RTLD_NOW);
	if (dl == NULL) {
		printf("FAIL dlopen: %s\n", dlerror());
		return 1;
	}
	fm_get_interface gi = (fm_get_interface)dlsym(dl, "C_GetInterface");
	CK_C_GetFunctionList gl = (CK_C_GetFunctionList)dlsym(dl, "C_GetFunctionList");
	fm_interface *iface = NULL;
	CK_VERSION v30 = {3, 0};
	if (gi == NULL || gl == NULL || gi((CK_UTF8CHAR *)"PKCS 11", &v30, &iface, 0) != CKR_OK ||
	    gl(&f240) != CKR_OK) {
		printf("FAIL no 3.0 interface\n");
		return 1;
	}
	f = iface->pFunctionList;
	CK_RV rv = f->C_Initialize(NULL);
	if (rv != CKR_OK) {
		fail("C_Initialize", rv);
		return 1;
	}
	CK_SESSION_HANDLE s = login();
	if (s != 0)
		work(s);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		who = "child";
		rv = f->C_Initialize(NULL);
		if (rv != CKR_OK && rv != CKR_CRYPTOKI_ALREADY_INITIALIZED)
			fail("child C_Initialize", rv);
		s = login();
		if (s != 0)
			work(s);
		f->C_Finalize(NULL);
		fflush(stdout);
		_exit(failed);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		printf("FAIL child exit status 0x%x\n", status);
	f->C_Finalize(NULL);
	return failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}
