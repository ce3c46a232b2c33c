/*
 * badargs.c: every entry point of libmodexp-pkcs11.so with bad arguments,
 * driven by test/stress (TestBadArgs).
 *
 *   badargs <module> <SO PIN> <user PIN>
 *
 * It loads the module (C_GetInterface for the 3.0 list, C_GetFunctionList
 * for the 2.40 list) and runs, in order:
 *
 *   1. before C_Initialize: every function of both lists, with NULLs and
 *      with valid-looking arguments: CKR_CRYPTOKI_NOT_INITIALIZED;
 *   2. C_Initialize with bad CK_C_INITIALIZE_ARGS, then a good one; the
 *      token is set up, a token RSA-2048 key pair "keep" is generated and a
 *      reference signature made (CKM_SHA256_RSA_PKCS is deterministic);
 *   3. the sweep: every function of both lists under twelve argument
 *      variants (NULLs, NULLs with lengths, lengths of ULONG_MAX and 2^31
 *      with small real buffers, valid arguments, session handles 0 / closed
 *      / random / ULONG_MAX, object handles 0 / destroyed / random, a R/O
 *      session). Every call must return a standard CK_RV other than
 *      CKR_GENERAL_ERROR; an invalid session must never give CKR_OK (nor an
 *      invalid object), an input length of ULONG_MAX or 2^31 must never be
 *      accepted;
 *   4. the table: specific expected codes for the important cases (bad
 *      arguments, stale handles, session states, logins, mechanisms,
 *      two-call lengths, huge but valid inputs);
 *   5. the stored data is untouched: same object count, the key signs the
 *      same signature; C_Finalize, then every function again gives
 *      CKR_CRYPTOKI_NOT_INITIALIZED; C_Initialize again and the same checks.
 *
 * Every call runs under a deadline (a watchdog thread: 20 s per call, a
 * hang prints "HANG <call>" and exits 3); a fault in C code prints
 * "CRASH <call>" (a fault in Go code is the Go runtime's report).
 *
 * Output: "ok <what>" / "FAIL <what>" lines for the table, "FAIL" lines
 * only for the sweep, "DATA name hex" (modulus, reference signature,
 * signatures after) for the Go test, "sweep calls=N" and "DONE passes=P
 * fails=F". Exit status 0 when nothing failed.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "common.h"

static int passes, fails;
static long sweep_calls;

/* ------------------------------------------------------------------------
 * Per-call deadline and crash report.
 * ---------------------------------------------------------------------- */

static const char *_Atomic cur_call = "start";
static _Atomic double deadline;
#define CALL_SECONDS 20.0

static void *watchdog(void *arg)
{
	(void)arg;
	for (;;) {
		usleep(50000);
		double d = atomic_load(&deadline);
		if (d > 0 && now_s() > d) {
			printf("HANG %s\n", atomic_load(&cur_call));
			fflush(stdout);
			_exit(3);
		}
	}
	return NULL;
}

static void on_fault(int sig)
{
	const char *c = atomic_load(&cur_call);
	char buf[300];
	int n = snprintf(buf, sizeof buf, "\nCRASH signal %d in %s\n", sig, c);
	if (n > 0)
		(void)!write(1, buf, (size_t)n);
	_exit(4);
}

/* check_any: every call's rule: a standard CK_RV, never CKR_GENERAL_ERROR. */
static CK_RV check_any(const char *what, CK_RV rv)
{
	atomic_store(&deadline, 0);
	if (!known_rv(rv) || rv == CKR_GENERAL_ERROR) {
		fails++;
		printf("FAIL %s: %s is not an acceptable return value\n", what, rvname(rv));
		fflush(stdout);
	}
	return rv;
}

#define DO(what, expr)                                                  \
	({                                                              \
		atomic_store(&cur_call, (what));                        \
		atomic_store(&deadline, now_s() + CALL_SECONDS);        \
		check_any((what), (expr));                              \
	})

static int expect_in(const char *what, CK_RV got, const CK_RV *want, size_t n)
{
	int ok = 0;
	for (size_t i = 0; i < n; i++)
		ok |= got == want[i];
	if (ok)
		passes++;
	else
		fails++;
	printf("%s %s: %s (want %s", ok ? "ok" : "FAIL", what, rvname(got), rvname(want[0]));
	for (size_t i = 1; i < n; i++)
		printf(" or %s", rvname(want[i]));
	printf(")\n");
	fflush(stdout);
	return ok;
}

#define WANT(what, expr, ...)                                                         \
	expect_in((what), DO((what), (expr)), (const CK_RV[]){__VA_ARGS__},          \
		  sizeof((const CK_RV[]){__VA_ARGS__}) / sizeof(CK_RV))

static void check(int cond, const char *what)
{
	if (cond)
		passes++;
	else
		fails++;
	printf("%s %s\n", cond ? "ok" : "FAIL", what);
	fflush(stdout);
}

/* must: a set-up call that has to succeed. */
#define MUST(what, expr)                                                      \
	do {                                                                  \
		CK_RV r_ = DO((what), (expr));                                \
		if (r_ != CKR_OK) {                                           \
			printf("FAIL setup %s: %s\n", (what), rvname(r_));     \
			printf("DONE passes=%d fails=%d\n", passes, fails + 1); \
			exit(1);                                              \
		}                                                             \
	} while (0)

/* ------------------------------------------------------------------------
 * The state the sweep and the table work on.
 * ---------------------------------------------------------------------- */

static const char *SO_PIN, *USER_PIN;
static CK_SLOT_ID slot;
static CK_SESSION_HANDLE main_h; /* R/W, user logged in, open all along */
static CK_OBJECT_HANDLE keep_pub, keep_priv;
static CK_BYTE MSG[] = "badargs: the reference message";
#define MSG_LEN (sizeof MSG - 1)
static CK_BYTE ref_sig[256];
static CK_ULONG ref_sig_len;

static CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
static CK_OBJECT_CLASS data_class = CKO_DATA;

static CK_SESSION_HANDLE open_session(int rw)
{
	CK_SESSION_HANDLE h = 0;
	CK_FLAGS fl = CKF_SERIAL_SESSION | (rw ? CKF_RW_SESSION : 0);
	MUST("open session", F3->C_OpenSession(slot, fl, NULL, NULL, &h));
	return h;
}

/* data_object creates a public data object labelled label. */
static CK_OBJECT_HANDLE data_object(CK_SESSION_HANDLE h, CK_BBOOL token, const char *label)
{
	CK_ATTRIBUTE t[] = {
		{CKA_CLASS, &data_class, sizeof data_class},
		{CKA_TOKEN, &token, sizeof token},
		{CKA_PRIVATE, &no, sizeof no},
		{CKA_LABEL, (void *)label, strlen(label)},
		{CKA_VALUE, "data", 4},
	};
	CK_OBJECT_HANDLE o = 0;
	MUST("create data object", F3->C_CreateObject(h, t, 5, &o));
	return o;
}

/* count_objects is find_count (common.h), fatal on an error. */
static long count_objects(CK_SESSION_HANDLE h)
{
	long total;
	MUST("count: find", find_count(h, &total));
	return total;
}

static CK_RV sign_msg(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE key, CK_BYTE *sig, CK_ULONG *len)
{
	CK_MECHANISM m = {CKM_SHA256_RSA_PKCS, NULL, 0};
	CK_RV rv = F3->C_SignInit(h, &m, key);
	if (rv != CKR_OK)
		return rv;
	return F3->C_Sign(h, MSG, MSG_LEN, sig, len);
}

static int find_by_label(CK_SESSION_HANDLE h, CK_OBJECT_CLASS cls, const char *label, CK_OBJECT_HANDLE *o);

/* ensure_login puts main_h back: open and the user logged in (the sweep
 * calls C_Logout and C_CloseAllSessions too). */
static void ensure_login(void)
{
	CK_SESSION_INFO si;
	if (F3->C_GetSessionInfo(main_h, &si) != CKR_OK) {
		main_h = open_session(1);
		F3->C_GetSessionInfo(main_h, &si);
	}
	if (si.state != CKS_RW_USER_FUNCTIONS) {
		if (si.state == CKS_RW_SO_FUNCTIONS)
			F3->C_Logout(main_h);
		MUST("re-login", F3->C_Login(main_h, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN)));
		/* PKCS#11 3.0 C_Logout: handles to private objects end, even
		 * across a new login. Find the key again. */
		if (find_by_label(main_h, CKO_PRIVATE_KEY, "keep", &keep_priv) != 1) {
			printf("FAIL re-login: private key \"keep\" not found exactly once\n");
			fails++;
		}
	}
}

/* ------------------------------------------------------------------------
 * The sweep: one adapter per entry point, fed from one argument set.
 * ---------------------------------------------------------------------- */

typedef struct {
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE h;
	CK_OBJECT_HANDLE o; /* object or key handle */
	CK_MECHANISM_PTR mech;
	CK_MECHANISM_PTR mech_enc; /* the same for encryption (CKM_RSA_PKCS) */
	CK_ATTRIBUTE_PTR tmpl;
	CK_ULONG n;          /* template count */
	CK_BYTE_PTR in;      /* input bytes */
	CK_ULONG inlen;      /* input length */
	CK_BYTE_PTR out;     /* output bytes */
	CK_ULONG_PTR outlen; /* output length (in/out) */
	CK_ULONG outcap;     /* an output length passed by value */
	CK_ULONG_PTR pul;    /* a CK_ULONG result */
	void *info;          /* a structure result */
	CK_OBJECT_HANDLE_PTR ph, ph2;
	CK_INTERFACE_PTR_PTR pif;
} A;

typedef CK_RV (*adapter)(const A *a, int v3);

/* L is the list the adapter calls through: 3.0 or 2.40 (same layout). */
#define L (v3 ? (CK_FUNCTION_LIST *)F3 : F2)

enum { SESS = 1, OBJ = 2, IN = 4, V30 = 8, SLOT = 16 };

static CK_RV a_GetInfo(const A *a, int v3) { return L->C_GetInfo((CK_INFO_PTR)a->info); }
static CK_RV a_GetSlotList(const A *a, int v3) { return L->C_GetSlotList(CK_TRUE, (CK_SLOT_ID_PTR)a->out, a->outlen); }
static CK_RV a_GetSlotInfo(const A *a, int v3) { return L->C_GetSlotInfo(a->slot, (CK_SLOT_INFO_PTR)a->info); }
static CK_RV a_GetTokenInfo(const A *a, int v3) { return L->C_GetTokenInfo(a->slot, (CK_TOKEN_INFO_PTR)a->info); }
static CK_RV a_GetMechanismList(const A *a, int v3) { return L->C_GetMechanismList(a->slot, (CK_MECHANISM_TYPE_PTR)a->out, a->outlen); }
static CK_RV a_GetMechanismInfo(const A *a, int v3) { return L->C_GetMechanismInfo(a->slot, a->mech ? a->mech->mechanism : CKM_RSA_PKCS, (CK_MECHANISM_INFO_PTR)a->info); }
/* C_InitToken: never with a label, so that it cannot wipe the token. */
static CK_RV a_InitToken(const A *a, int v3) { return L->C_InitToken(a->slot, a->in, a->inlen, NULL); }
static CK_RV a_InitPIN(const A *a, int v3) { return L->C_InitPIN(a->h, a->in, a->inlen); }
/* C_SetPIN: the new PIN is always NULL with a length, so no PIN changes. */
static CK_RV a_SetPIN(const A *a, int v3) { return L->C_SetPIN(a->h, a->in, a->inlen, NULL, 8); }
static CK_RV a_OpenSession(const A *a, int v3)
{
	CK_RV rv = L->C_OpenSession(a->slot, a->outcap == 0 ? 0 : CKF_SERIAL_SESSION, NULL, NULL, a->ph);
	if (rv == CKR_OK && a->ph)
		F3->C_CloseSession(*a->ph);
	return rv;
}
static CK_RV a_CloseSession(const A *a, int v3) { return L->C_CloseSession(a->h); }
/* C_CloseAllSessions: never on the real slot in the sweep. */
static CK_RV a_CloseAllSessions(const A *a, int v3) { return L->C_CloseAllSessions(a->slot ^ 0x5a5a5a5aUL); }
static CK_RV a_GetSessionInfo(const A *a, int v3) { return L->C_GetSessionInfo(a->h, (CK_SESSION_INFO_PTR)a->info); }
static CK_RV a_GetOperationState(const A *a, int v3) { return L->C_GetOperationState(a->h, a->out, a->outlen); }
static CK_RV a_SetOperationState(const A *a, int v3) { return L->C_SetOperationState(a->h, a->in, a->inlen, a->o, a->o); }
static CK_RV a_Login(const A *a, int v3) { return L->C_Login(a->h, CKU_USER, a->in, a->inlen); }
static CK_RV a_Logout(const A *a, int v3) { return L->C_Logout(a->h); }
static CK_RV a_CreateObject(const A *a, int v3) { return L->C_CreateObject(a->h, a->tmpl, a->n, a->ph); }
static CK_RV a_CopyObject(const A *a, int v3) { return L->C_CopyObject(a->h, a->o, a->tmpl, a->n, a->ph); }
static CK_RV a_DestroyObject(const A *a, int v3) { return L->C_DestroyObject(a->h, a->o); }
static CK_RV a_GetObjectSize(const A *a, int v3) { return L->C_GetObjectSize(a->h, a->o, a->pul); }
static CK_RV a_GetAttributeValue(const A *a, int v3) { return L->C_GetAttributeValue(a->h, a->o, a->tmpl, a->n); }
static CK_RV a_SetAttributeValue(const A *a, int v3) { return L->C_SetAttributeValue(a->h, a->o, a->tmpl, a->n); }
static CK_RV a_FindObjectsInit(const A *a, int v3) { return L->C_FindObjectsInit(a->h, a->tmpl, a->n); }
static CK_RV a_FindObjects(const A *a, int v3) { return L->C_FindObjects(a->h, a->ph, a->outcap, a->pul); }
static CK_RV a_FindObjectsFinal(const A *a, int v3) { return L->C_FindObjectsFinal(a->h); }
static CK_RV a_EncryptInit(const A *a, int v3) { return L->C_EncryptInit(a->h, a->mech_enc, a->o); }
static CK_RV a_Encrypt(const A *a, int v3) { return L->C_Encrypt(a->h, a->in, a->inlen, a->out, a->outlen); }
static CK_RV a_EncryptUpdate(const A *a, int v3) { return L->C_EncryptUpdate(a->h, a->in, a->inlen, a->out, a->outlen); }
static CK_RV a_EncryptFinal(const A *a, int v3) { return L->C_EncryptFinal(a->h, a->out, a->outlen); }
static CK_RV a_DecryptInit(const A *a, int v3) { return L->C_DecryptInit(a->h, a->mech_enc, a->o); }
static CK_RV a_Decrypt(const A *a, int v3) { return L->C_Decrypt(a->h, a->in, a->inlen, a->out, a->outlen); }
static CK_RV a_DecryptUpdate(const A *a, int v3) { return L->C_DecryptUpdate(a->h, a->in, a->inlen, a->out, a->outlen); }
static CK_RV a_DecryptFinal(const A *a, int v3) { return L->C_DecryptFinal(a->h, a->out, a->outlen); }
static CK_RV a_DigestInit(const A *a, int v3) { return L->C_DigestInit(a->h, a->mech); }
static CK_RV a_Digest(const A *a, int v3) { return L->C_Digest(a->h, a->in, a->inlen, a->out, a->outlen); }
static CK_RV a_DigestUpdate(const A *a, int v3) { return L->C_DigestUpdate(a->h, a->in, a->inlen); }
static CK_RV a_DigestKey(const A *a, int v3) { return L->C_DigestKey(a->h, a->o); }
static CK_RV a_DigestFinal(const A *a, int v3) { return L->C_DigestFinal(a->h, a->out, a->outlen); }
static CK_RV a_SignInit(const A *a, int v3) { return L->C_SignInit(a->h, a->mech, a->o); }
static CK_RV a_Sign(const A *a, int v3) { return L->C_Sign(a->h, a->in, a->inlen, a->out, a->outlen); }
static CK_RV a_SignUpdate(const A *a, int v3) { return L->C_SignUpdate(a->h, a->in, a->inlen); }
static CK_RV a_SignFinal(const A *a, int v3) { return L->C_SignFinal(a->h, a->out, a->outlen); }
static CK_RV a_SignRecoverInit(const A *a, int v3) { return L->C_SignRecoverInit(a->h, a->mech, a->o); }
static CK_RV a_SignRecover(const A *a, int v3) { return L->C_SignRecover(a->h, a->in, a->inlen, a->out, a->outlen); }
static CK_RV a_VerifyInit(const A *a, int v3) { return L->C_VerifyInit(a->h, a->mech, a->o); }
static CK_RV a_Verify(const A *a, int v3) { return L->C_Verify(a->h, a->in, a->inlen, a->in, a->inlen); }
static CK_RV a_VerifyUpdate(const A *a, int v3) { return L->C_VerifyUpdate(a->h, a->in, a->inlen); }
static CK_RV a_VerifyFinal(const A *a, int v3) { return L->C_VerifyFinal(a->h, a->in, a->inlen); }
static CK_RV a_VerifyRecoverInit(const A *a, int v3) { return L->C_VerifyRecoverInit(a->h, a->mech, a->o); }
static CK_RV a_VerifyRecover(const A *a, int v3) { return L->C_VerifyRecover(a->h, a->in, a->inlen, a->out, a->outlen); }
static CK_RV a_DigestEncryptUpdate(const A *a, int v3) { return L->C_DigestEncryptUpdate(a->h, a->in, a->inlen, a->out, a->outlen); }
static CK_RV a_DecryptDigestUpdate(const A *a, int v3) { return L->C_DecryptDigestUpdate(a->h, a->in, a->inlen, a->out, a->outlen); }
static CK_RV a_SignEncryptUpdate(const A *a, int v3) { return L->C_SignEncryptUpdate(a->h, a->in, a->inlen, a->out, a->outlen); }
static CK_RV a_DecryptVerifyUpdate(const A *a, int v3) { return L->C_DecryptVerifyUpdate(a->h, a->in, a->inlen, a->out, a->outlen); }
static CK_RV a_GenerateKey(const A *a, int v3) { return L->C_GenerateKey(a->h, a->mech, a->tmpl, a->n, a->ph); }
static CK_RV a_GenerateKeyPair(const A *a, int v3) { return L->C_GenerateKeyPair(a->h, a->mech, a->tmpl, a->n, a->tmpl, a->n, a->ph, a->ph2); }
static CK_RV a_WrapKey(const A *a, int v3) { return L->C_WrapKey(a->h, a->mech, a->o, a->o, a->out, a->outlen); }
static CK_RV a_UnwrapKey(const A *a, int v3) { return L->C_UnwrapKey(a->h, a->mech, a->o, a->in, a->inlen, a->tmpl, a->n, a->ph); }
static CK_RV a_DeriveKey(const A *a, int v3) { return L->C_DeriveKey(a->h, a->mech, a->o, a->tmpl, a->n, a->ph); }
static CK_RV a_SeedRandom(const A *a, int v3) { return L->C_SeedRandom(a->h, a->in, a->inlen); }
static CK_RV a_GenerateRandom(const A *a, int v3) { return L->C_GenerateRandom(a->h, a->out, a->outcap); }
static CK_RV a_GetFunctionStatus(const A *a, int v3) { return L->C_GetFunctionStatus(a->h); }
static CK_RV a_CancelFunction(const A *a, int v3) { return L->C_CancelFunction(a->h); }
/* C_WaitForSlotEvent: always CKF_DONT_BLOCK (a blocking wait may wait forever). */
static CK_RV a_WaitForSlotEvent(const A *a, int v3) { return L->C_WaitForSlotEvent(CKF_DONT_BLOCK, (CK_SLOT_ID_PTR)a->pul, NULL); }
/* 3.0 only (v3 is always 1 for these). */
#define L3 F3
static CK_RV a_GetInterfaceList(const A *a, int v3) { (void)v3; return L3->C_GetInterfaceList((CK_INTERFACE_PTR)a->out, a->outlen); }
static CK_RV a_GetInterface(const A *a, int v3) { (void)v3; return L3->C_GetInterface(a->in && a->inlen < 1000 ? (CK_UTF8CHAR_PTR) "PKCS 11" : NULL, NULL, a->pif, 0); }
static CK_RV a_LoginUser(const A *a, int v3) { (void)v3; return L3->C_LoginUser(a->h, CKU_USER, a->in, a->inlen, a->in, a->inlen); }
static CK_RV a_SessionCancel(const A *a, int v3) { (void)v3; return L3->C_SessionCancel(a->h, CKF_SIGN | CKF_VERIFY | CKF_DIGEST | CKF_ENCRYPT | CKF_DECRYPT); }
static CK_RV a_MessageEncryptInit(const A *a, int v3) { (void)v3; return L3->C_MessageEncryptInit(a->h, a->mech, a->o); }
static CK_RV a_EncryptMessage(const A *a, int v3) { (void)v3; return L3->C_EncryptMessage(a->h, a->in, a->inlen, a->in, a->inlen, a->in, a->inlen, a->out, a->outlen); }
static CK_RV a_EncryptMessageBegin(const A *a, int v3) { (void)v3; return L3->C_EncryptMessageBegin(a->h, a->in, a->inlen, a->in, a->inlen); }
static CK_RV a_EncryptMessageNext(const A *a, int v3) { (void)v3; return L3->C_EncryptMessageNext(a->h, a->in, a->inlen, a->in, a->inlen, a->out, a->outlen, 0); }
static CK_RV a_MessageEncryptFinal(const A *a, int v3) { (void)v3; return L3->C_MessageEncryptFinal(a->h); }
static CK_RV a_MessageDecryptInit(const A *a, int v3) { (void)v3; return L3->C_MessageDecryptInit(a->h, a->mech, a->o); }
static CK_RV a_DecryptMessage(const A *a, int v3) { (void)v3; return L3->C_DecryptMessage(a->h, a->in, a->inlen, a->in, a->inlen, a->in, a->inlen, a->out, a->outlen); }
static CK_RV a_DecryptMessageBegin(const A *a, int v3) { (void)v3; return L3->C_DecryptMessageBegin(a->h, a->in, a->inlen, a->in, a->inlen); }
static CK_RV a_DecryptMessageNext(const A *a, int v3) { (void)v3; return L3->C_DecryptMessageNext(a->h, a->in, a->inlen, a->in, a->inlen, a->out, a->outlen, 0); }
static CK_RV a_MessageDecryptFinal(const A *a, int v3) { (void)v3; return L3->C_MessageDecryptFinal(a->h); }
static CK_RV a_MessageSignInit(const A *a, int v3) { (void)v3; return L3->C_MessageSignInit(a->h, a->mech, a->o); }
static CK_RV a_SignMessage(const A *a, int v3) { (void)v3; return L3->C_SignMessage(a->h, a->in, a->inlen, a->in, a->inlen, a->out, a->outlen); }
static CK_RV a_SignMessageBegin(const A *a, int v3) { (void)v3; return L3->C_SignMessageBegin(a->h, a->in, a->inlen); }
static CK_RV a_SignMessageNext(const A *a, int v3) { (void)v3; return L3->C_SignMessageNext(a->h, a->in, a->inlen, a->in, a->inlen, a->out, a->outlen); }
static CK_RV a_MessageSignFinal(const A *a, int v3) { (void)v3; return L3->C_MessageSignFinal(a->h); }
static CK_RV a_MessageVerifyInit(const A *a, int v3) { (void)v3; return L3->C_MessageVerifyInit(a->h, a->mech, a->o); }
static CK_RV a_VerifyMessage(const A *a, int v3) { (void)v3; return L3->C_VerifyMessage(a->h, a->in, a->inlen, a->in, a->inlen, a->in, a->inlen); }
static CK_RV a_VerifyMessageBegin(const A *a, int v3) { (void)v3; return L3->C_VerifyMessageBegin(a->h, a->in, a->inlen); }
static CK_RV a_VerifyMessageNext(const A *a, int v3) { (void)v3; return L3->C_VerifyMessageNext(a->h, a->in, a->inlen, a->in, a->inlen, a->in, a->inlen); }
static CK_RV a_MessageVerifyFinal(const A *a, int v3) { (void)v3; return L3->C_MessageVerifyFinal(a->h); }

typedef struct {
	const char *name;
	adapter fn;
	int flags;
} entry;

#define E(name, flags) {#name, a_##name, flags}

/* Every entry point but C_Initialize, C_Finalize and C_GetFunctionList,
 * which phases 1, 2 and 5 and the table call directly. */
static const entry entries[] = {
	E(GetInfo, 0), E(GetSlotList, 0), E(GetSlotInfo, SLOT), E(GetTokenInfo, SLOT),
	E(GetMechanismList, SLOT), E(GetMechanismInfo, SLOT), E(InitToken, SLOT | IN),
	E(InitPIN, SESS | IN), E(SetPIN, SESS | IN), E(OpenSession, SLOT), E(CloseSession, SESS),
	E(CloseAllSessions, 0), E(GetSessionInfo, SESS), E(GetOperationState, SESS),
	E(SetOperationState, SESS | IN), E(Login, SESS | IN), E(Logout, SESS),
	E(CreateObject, SESS), E(CopyObject, SESS | OBJ), E(DestroyObject, SESS | OBJ),
	E(GetObjectSize, SESS | OBJ), E(GetAttributeValue, SESS | OBJ),
	E(SetAttributeValue, SESS | OBJ), E(FindObjectsInit, SESS), E(FindObjects, SESS),
	E(FindObjectsFinal, SESS), E(EncryptInit, SESS | OBJ), E(Encrypt, SESS | IN),
	E(EncryptUpdate, SESS | IN), E(EncryptFinal, SESS), E(DecryptInit, SESS | OBJ),
	E(Decrypt, SESS | IN), E(DecryptUpdate, SESS | IN), E(DecryptFinal, SESS),
	E(DigestInit, SESS), E(Digest, SESS | IN), E(DigestUpdate, SESS | IN),
	E(DigestKey, SESS | OBJ), E(DigestFinal, SESS), E(SignInit, SESS | OBJ),
	E(Sign, SESS | IN), E(SignUpdate, SESS | IN), E(SignFinal, SESS),
	E(SignRecoverInit, SESS | OBJ), E(SignRecover, SESS | IN), E(VerifyInit, SESS | OBJ),
	E(Verify, SESS | IN), E(VerifyUpdate, SESS | IN), E(VerifyFinal, SESS | IN),
	E(VerifyRecoverInit, SESS | OBJ), E(VerifyRecover, SESS | IN),
	E(DigestEncryptUpdate, SESS | IN), E(DecryptDigestUpdate, SESS | IN),
	E(SignEncryptUpdate, SESS | IN), E(DecryptVerifyUpdate, SESS | IN),
	E(GenerateKey, SESS), E(GenerateKeyPair, SESS), E(WrapKey, SESS | OBJ),
	E(UnwrapKey, SESS | OBJ | IN), E(DeriveKey, SESS | OBJ), E(SeedRandom, SESS | IN),
	E(GenerateRandom, SESS), E(GetFunctionStatus, SESS), E(CancelFunction, SESS),
	E(WaitForSlotEvent, 0),
	/* 3.0 */
	E(GetInterfaceList, V30), E(GetInterface, V30), E(LoginUser, V30 | SESS | IN),
	E(SessionCancel, V30 | SESS), E(MessageEncryptInit, V30 | SESS | OBJ),
	E(EncryptMessage, V30 | SESS | IN), E(EncryptMessageBegin, V30 | SESS | IN),
	E(EncryptMessageNext, V30 | SESS | IN), E(MessageEncryptFinal, V30 | SESS),
	E(MessageDecryptInit, V30 | SESS | OBJ), E(DecryptMessage, V30 | SESS | IN),
	E(DecryptMessageBegin, V30 | SESS | IN), E(DecryptMessageNext, V30 | SESS | IN),
	E(MessageDecryptFinal, V30 | SESS), E(MessageSignInit, V30 | SESS | OBJ),
	E(SignMessage, V30 | SESS | IN), E(SignMessageBegin, V30 | SESS | IN),
	E(SignMessageNext, V30 | SESS | IN), E(MessageSignFinal, V30 | SESS),
	E(MessageVerifyInit, V30 | SESS | OBJ), E(VerifyMessage, V30 | SESS | IN),
	E(VerifyMessageBegin, V30 | SESS | IN), E(VerifyMessageNext, V30 | SESS | IN),
	E(MessageVerifyFinal, V30 | SESS),
};
#define NENTRIES (sizeof entries / sizeof entries[0])

/* Buffers of the sweep: small real input, a large real output. */
#define OUTCAP 65536
static CK_BYTE small_in[64];
static CK_BYTE big_out[OUTCAP] __attribute__((aligned(16)));
static CK_BYTE info_buf[4096] __attribute__((aligned(16)));
static CK_ULONG out_len, pul_val;
static CK_OBJECT_HANDLE ph_val, ph2_val;
static CK_INTERFACE_PTR if_val;
static CK_ATTRIBUTE sweep_tmpl[4];
static CK_BYTE label_buf[] = "sweep";
static CK_MECHANISM sweep_mech, sweep_mech_enc;

/* The variants. */
enum {
	V_NULLS,         /* NULL pointers, zero lengths */
	V_NULL_LENGTHS,  /* NULL pointers, non-zero lengths */
	V_HUGE,          /* real small buffers, lengths ULONG_MAX */
	V_2_31,          /* real small buffers, lengths 2^31 */
	V_VALID,         /* valid-looking arguments */
	V_SESSION_0,     /* V_VALID with session handle 0 */
	V_SESSION_CLOSED,
	V_SESSION_RANDOM,
	V_SESSION_MAX,   /* ULONG_MAX */
	V_OBJECT_0,
	V_OBJECT_DESTROYED,
	V_OBJECT_RANDOM,
	V_READ_ONLY,     /* V_VALID in a R/O session */
	NVARIANTS
};
static const char *vnames[NVARIANTS] = {
	"nulls", "null-lengths", "ulong-max", "2^31", "valid", "session-0", "session-closed",
	"session-random", "session-ulong-max", "object-0", "object-destroyed", "object-random",
	"read-only",
};

static CK_OBJECT_HANDLE destroyed_obj;
static unsigned rnd_state = 12345;
static CK_ULONG rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return ((CK_ULONG)rnd_state << 16) ^ 0x7a3c0000UL ^ (rnd_state >> 7);
}

/* fill sets up a for variant v in session h with scratch object scratch. */
static void fill(A *a, int v, CK_SESSION_HANDLE h, CK_OBJECT_HANDLE scratch)
{
	memset(a, 0, sizeof *a);
	a->slot = slot;
	a->h = h;
	a->o = scratch;
	switch (v) {
	case V_NULLS:
		return;
	case V_NULL_LENGTHS:
		a->n = 3;
		a->inlen = 16;
		a->outcap = 16;
		return;
	default:
		break;
	}
	/* Real buffers. */
	memset(small_in, 0x5a, sizeof small_in);
	a->in = small_in;
	a->inlen = sizeof small_in;
	a->out = big_out;
	out_len = OUTCAP;
	a->outlen = &out_len;
	a->outcap = 256;
	pul_val = 0;
	a->pul = &pul_val;
	a->info = info_buf;
	a->ph = &ph_val;
	a->ph2 = &ph2_val;
	a->pif = &if_val;
	sweep_tmpl[0] = (CK_ATTRIBUTE){CKA_CLASS, &data_class, sizeof data_class};
	sweep_tmpl[1] = (CK_ATTRIBUTE){CKA_TOKEN, &no, sizeof no};
	sweep_tmpl[2] = (CK_ATTRIBUTE){CKA_LABEL, label_buf, sizeof label_buf - 1};
	a->tmpl = sweep_tmpl;
	a->n = 3;
	sweep_mech = (CK_MECHANISM){CKM_SHA256_RSA_PKCS, NULL, 0};
	a->mech = &sweep_mech;
	sweep_mech_enc = (CK_MECHANISM){CKM_RSA_PKCS, NULL, 0};
	a->mech_enc = &sweep_mech_enc;
	switch (v) {
	case V_HUGE:
	case V_2_31: {
		CK_ULONG big = v == V_HUGE ? ~(CK_ULONG)0 : (CK_ULONG)1 << 31;
		a->inlen = big;
		a->n = big;
		out_len = big; /* the real buffer is large enough for any output here */
		a->outcap = big;
		sweep_tmpl[2].ulValueLen = big;
		sweep_mech.pParameter = small_in;
		sweep_mech.ulParameterLen = big;
		sweep_mech_enc = sweep_mech;
		sweep_mech_enc.mechanism = CKM_RSA_PKCS;
		break;
	}
	case V_SESSION_0: a->h = 0; break;
	case V_SESSION_CLOSED: {
		CK_SESSION_HANDLE c = open_session(1);
		F3->C_CloseSession(c);
		a->h = c;
		break;
	}
	case V_SESSION_RANDOM: a->h = rnd(); break;
	case V_SESSION_MAX: a->h = ~(CK_SESSION_HANDLE)0; break;
	case V_OBJECT_0: a->o = 0; break;
	case V_OBJECT_DESTROYED: a->o = destroyed_obj; break;
	case V_OBJECT_RANDOM: a->o = rnd(); break;
	}
}

static int in_set(CK_RV rv, const CK_RV *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (rv == set[i])
			return 1;
	return 0;
}

static void sweep_fail(const char *what, CK_RV rv, const char *rule)
{
	fails++;
	printf("FAIL sweep %s: %s (%s)\n", what, rvname(rv), rule);
	fflush(stdout);
}

static void sweep(void)
{
	static const CK_RV bad_session[] = {CKR_SESSION_HANDLE_INVALID, CKR_SESSION_CLOSED,
					    CKR_ARGUMENTS_BAD, CKR_FUNCTION_NOT_SUPPORTED,
					    CKR_FUNCTION_NOT_PARALLEL};
	static const CK_RV bad_object[] = {CKR_OBJECT_HANDLE_INVALID, CKR_KEY_HANDLE_INVALID,
					   CKR_WRAPPING_KEY_HANDLE_INVALID, CKR_UNWRAPPING_KEY_HANDLE_INVALID,
					   CKR_FUNCTION_NOT_SUPPORTED, CKR_OPERATION_NOT_INITIALIZED};
	char what[160];
	for (int v = 0; v < NVARIANTS; v++) {
		for (int list = 0; list < 2; list++) {
			int v3 = list == 0;
			for (size_t i = 0; i < NENTRIES; i++) {
				const entry *e = &entries[i];
				if ((e->flags & V30) && !v3)
					continue;
				CK_SESSION_HANDLE h = open_session(v != V_READ_ONLY);
				CK_OBJECT_HANDLE scratch = data_object(h, CK_FALSE, "scratch");
				A a;
				fill(&a, v, h, scratch);
				snprintf(what, sizeof what, "%s C_%s [%s]", v3 ? "3.0" : "2.40", e->name, vnames[v]);
				CK_RV rv = DO(what, e->fn(&a, v3));
				sweep_calls++;
				int bad_sess = v >= V_SESSION_0 && v <= V_SESSION_MAX;
				int bad_obj = v >= V_OBJECT_0 && v <= V_OBJECT_RANDOM;
				if (bad_sess && (e->flags & SESS) &&
				    !in_set(rv, bad_session, sizeof bad_session / sizeof bad_session[0]))
					sweep_fail(what, rv, "want an invalid-session error");
				if (bad_obj && (e->flags & OBJ) &&
				    !in_set(rv, bad_object, sizeof bad_object / sizeof bad_object[0]))
					sweep_fail(what, rv, "want an invalid-object error");
				if ((v == V_HUGE || v == V_2_31) && (e->flags & IN) && rv == CKR_OK)
					sweep_fail(what, rv, "accepted an input length the caller cannot have");
				if (v == V_NULL_LENGTHS && (e->flags & IN) && rv == CKR_OK)
					sweep_fail(what, rv, "accepted a NULL input with a length");
				F3->C_CloseSession(h);
				ensure_login();
			}
		}
	}
	printf("sweep calls=%ld\n", sweep_calls);
}

/* not_initialized: every function, NULLs and valid-looking arguments, must
 * answer CKR_CRYPTOKI_NOT_INITIALIZED (phase 1 and after C_Finalize). */
static void not_initialized(const char *when)
{
	char what[160];
	int bad = 0, n = 0;
	for (int v = V_NULLS; v <= V_VALID; v += V_VALID) {
		for (int list = 0; list < 2; list++) {
			int v3 = list == 0;
			for (size_t i = 0; i < NENTRIES; i++) {
				const entry *e = &entries[i];
				if ((e->flags & V30) && !v3)
					continue;
				if (e->fn == a_GetInterfaceList || e->fn == a_GetInterface)
					continue; /* these work without C_Initialize */
				A a;
				memset(&a, 0, sizeof a);
				if (v == V_VALID) {
					/* fill without sessions: a handle that looks real */
					memset(small_in, 0x5a, sizeof small_in);
					a.slot = 1; a.h = 1; a.o = 1;
					a.in = small_in; a.inlen = sizeof small_in;
					a.out = big_out; out_len = OUTCAP; a.outlen = &out_len;
					a.outcap = 16; a.pul = &pul_val; a.info = info_buf;
					a.ph = &ph_val; a.ph2 = &ph2_val;
					sweep_mech = (CK_MECHANISM){CKM_SHA256_RSA_PKCS, NULL, 0};
					a.mech = &sweep_mech;
					a.mech_enc = &sweep_mech;
				}
				snprintf(what, sizeof what, "%s: %s C_%s [%s]", when, v3 ? "3.0" : "2.40",
					 e->name, vnames[v]);
				CK_RV rv = DO(what, e->fn(&a, v3));
				n++;
				if (rv != CKR_CRYPTOKI_NOT_INITIALIZED) {
					bad++;
					printf("FAIL %s: %s (want CKR_CRYPTOKI_NOT_INITIALIZED)\n", what, rvname(rv));
				}
			}
		}
	}
	fails += bad;
	if (bad == 0)
		passes++;
	printf("%s %s: %d calls, %d without CKR_CRYPTOKI_NOT_INITIALIZED\n", bad ? "FAIL" : "ok", when, n, bad);
	WANT("C_Finalize(NULL) when not initialised", F3->C_Finalize(NULL), CKR_CRYPTOKI_NOT_INITIALIZED);
	WANT("C_GetFunctionList(NULL)", sym_GetFunctionList(NULL), CKR_ARGUMENTS_BAD);
	CK_INTERFACE *it = NULL;
	WANT("C_GetInterface(NULL, NULL, &p, 0) without C_Initialize", sym_GetInterface(NULL, NULL, &it, 0), CKR_OK);
}

/* ------------------------------------------------------------------------
 * The table of expected codes.
 * ---------------------------------------------------------------------- */

static void table_general(void)
{
	CK_INFO info;
	CK_ULONG n;
	CK_SLOT_ID slots[4];
	WANT("C_GetInfo(NULL)", F3->C_GetInfo(NULL), CKR_ARGUMENTS_BAD);
	WANT("2.40 C_GetInfo(NULL)", F2->C_GetInfo(NULL), CKR_ARGUMENTS_BAD);
	WANT("C_GetInfo(&info)", F3->C_GetInfo(&info), CKR_OK);
	WANT("C_GetSlotList(list, NULL count)", F3->C_GetSlotList(CK_TRUE, slots, NULL), CKR_ARGUMENTS_BAD);
	n = 0;
	WANT("C_GetSlotList(list, count 0)", F3->C_GetSlotList(CK_TRUE, slots, &n), CKR_BUFFER_TOO_SMALL);
	check(n == 1, "C_GetSlotList(count 0) reports the count (1)");
	n = ~(CK_ULONG)0;
	WANT("C_GetSlotList(list, count ULONG_MAX)", F3->C_GetSlotList(CK_TRUE, slots, &n), CKR_OK);
	check(n == 1 && slots[0] == slot, "C_GetSlotList(count ULONG_MAX) lists the slot");
	WANT("C_GetSlotInfo(slot, NULL)", F3->C_GetSlotInfo(slot, NULL), CKR_ARGUMENTS_BAD);
	CK_SLOT_INFO si;
	CK_TOKEN_INFO ti;
	CK_MECHANISM_INFO mi;
	WANT("C_GetSlotInfo(ULONG_MAX)", F3->C_GetSlotInfo(~(CK_SLOT_ID)0, &si), CKR_SLOT_ID_INVALID);
	WANT("C_GetSlotInfo(slot+1)", F3->C_GetSlotInfo(slot + 1, &si), CKR_SLOT_ID_INVALID);
	WANT("C_GetTokenInfo(slot, NULL)", F3->C_GetTokenInfo(slot, NULL), CKR_ARGUMENTS_BAD);
	WANT("C_GetTokenInfo(0)", F3->C_GetTokenInfo(0, &ti), CKR_SLOT_ID_INVALID);
	WANT("C_GetMechanismList(slot, NULL, NULL)", F3->C_GetMechanismList(slot, NULL, NULL), CKR_ARGUMENTS_BAD);
	CK_MECHANISM_TYPE mechs[2];
	n = 1;
	WANT("C_GetMechanismList(count 1)", F3->C_GetMechanismList(slot, mechs, &n), CKR_BUFFER_TOO_SMALL);
	check(n > 1, "C_GetMechanismList(count 1) reports the count");
	WANT("C_GetMechanismList(bad slot)", F3->C_GetMechanismList(12345, NULL, &n), CKR_SLOT_ID_INVALID);
	WANT("C_GetMechanismInfo(unknown CKM 0x80001234)", F3->C_GetMechanismInfo(slot, 0x80001234UL, &mi), CKR_MECHANISM_INVALID);
	WANT("C_GetMechanismInfo(RSA_PKCS, NULL)", F3->C_GetMechanismInfo(slot, CKM_RSA_PKCS, NULL), CKR_ARGUMENTS_BAD);
	WANT("C_GetMechanismInfo(bad slot)", F3->C_GetMechanismInfo(~(CK_SLOT_ID)0, CKM_RSA_PKCS, &mi), CKR_SLOT_ID_INVALID);
	CK_SLOT_ID ev;
	WANT("C_WaitForSlotEvent(DONT_BLOCK)", F3->C_WaitForSlotEvent(CKF_DONT_BLOCK, &ev, NULL),
	     CKR_NO_EVENT);
	/* Interfaces. */
	CK_ULONG ni = 0;
	CK_INTERFACE ifs[4];
	WANT("C_GetInterfaceList(NULL, NULL)", sym_GetInterfaceList(NULL, NULL), CKR_ARGUMENTS_BAD);
	WANT("C_GetInterfaceList(NULL, &n)", sym_GetInterfaceList(NULL, &ni), CKR_OK);
	check(ni == 3, "C_GetInterfaceList counts 3 interfaces");
	ni = 1;
	WANT("C_GetInterfaceList(count 1)", sym_GetInterfaceList(ifs, &ni), CKR_BUFFER_TOO_SMALL);
	check(ni == 3, "C_GetInterfaceList(count 1) reports 3");
	CK_INTERFACE *it = NULL;
	CK_VERSION v9 = {9, 9};
	WANT("C_GetInterface(NULL ppInterface)", sym_GetInterface(NULL, NULL, NULL, 0), CKR_ARGUMENTS_BAD);
	WANT("C_GetInterface(\"nope\")", sym_GetInterface((CK_UTF8CHAR_PTR) "nope", NULL, &it, 0), CKR_ARGUMENTS_BAD);
	WANT("C_GetInterface(version 9.9)", sym_GetInterface(NULL, &v9, &it, 0), CKR_ARGUMENTS_BAD);
	WANT("C_GetInterface(CKF_INTERFACE_FORK_SAFE)", sym_GetInterface(NULL, NULL, &it, CKF_INTERFACE_FORK_SAFE), CKR_ARGUMENTS_BAD);
	/* Initialize / Finalize while initialised. */
	CK_C_INITIALIZE_ARGS ia;
	memset(&ia, 0, sizeof ia);
	WANT("C_Initialize again", F3->C_Initialize(NULL), CKR_CRYPTOKI_ALREADY_INITIALIZED);
	ia.pReserved = &ia;
	WANT("C_Initialize(pReserved set) while initialised", F3->C_Initialize(&ia), CKR_ARGUMENTS_BAD, CKR_CRYPTOKI_ALREADY_INITIALIZED);
	WANT("C_Finalize(non-NULL)", F3->C_Finalize(&ia), CKR_ARGUMENTS_BAD);
	/* C_InitToken: label NULL; sessions open. */
	CK_UTF8CHAR label[32];
	memset(label, ' ', sizeof label);
	WANT("C_InitToken(label NULL)", F3->C_InitToken(slot, (CK_UTF8CHAR_PTR)SO_PIN, strlen(SO_PIN), NULL), CKR_ARGUMENTS_BAD);
	WANT("C_InitToken(PIN NULL, length 8)", F3->C_InitToken(slot, NULL, 8, label), CKR_ARGUMENTS_BAD);
	WANT("C_InitToken(bad slot)", F3->C_InitToken(0x5a5a5a5aUL, (CK_UTF8CHAR_PTR)SO_PIN, strlen(SO_PIN), label), CKR_SLOT_ID_INVALID);
	WANT("C_InitToken with sessions open", F3->C_InitToken(slot, (CK_UTF8CHAR_PTR)SO_PIN, strlen(SO_PIN), label), CKR_SESSION_EXISTS);
}

static void table_sessions(void)
{
	CK_SESSION_HANDLE h;
	CK_SESSION_INFO si;
	WANT("C_OpenSession(phSession NULL)", F3->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, NULL), CKR_ARGUMENTS_BAD);
	WANT("C_OpenSession(no CKF_SERIAL_SESSION)", F3->C_OpenSession(slot, CKF_RW_SESSION, NULL, NULL, &h), CKR_SESSION_PARALLEL_NOT_SUPPORTED);
	WANT("C_OpenSession(bad slot)", F3->C_OpenSession(0x5a5a5a5aUL, CKF_SERIAL_SESSION, NULL, NULL, &h), CKR_SLOT_ID_INVALID);
	WANT("C_GetSessionInfo(h, NULL)", F3->C_GetSessionInfo(main_h, NULL), CKR_ARGUMENTS_BAD);
	CK_SESSION_HANDLE c = open_session(1);
	WANT("C_CloseSession", F3->C_CloseSession(c), CKR_OK);
	WANT("C_CloseSession twice", F3->C_CloseSession(c), CKR_SESSION_HANDLE_INVALID);
	WANT("C_GetSessionInfo(closed)", F3->C_GetSessionInfo(c, &si), CKR_SESSION_HANDLE_INVALID);
	WANT("C_GetSessionInfo(0)", F3->C_GetSessionInfo(0, &si), CKR_SESSION_HANDLE_INVALID);
	WANT("C_GetSessionInfo(ULONG_MAX)", F3->C_GetSessionInfo(~(CK_ULONG)0, &si), CKR_SESSION_HANDLE_INVALID);
	WANT("C_Sign(closed session)", F3->C_Sign(c, MSG, MSG_LEN, big_out, &out_len), CKR_SESSION_HANDLE_INVALID);
	WANT("C_CloseAllSessions(bad slot)", F3->C_CloseAllSessions(0x5a5a5a5aUL), CKR_SLOT_ID_INVALID);
	WANT("C_GetFunctionStatus", F3->C_GetFunctionStatus(main_h), CKR_FUNCTION_NOT_PARALLEL);
	WANT("C_CancelFunction", F3->C_CancelFunction(main_h), CKR_FUNCTION_NOT_PARALLEL);
	CK_ULONG n = 16;
	WANT("C_GetOperationState", F3->C_GetOperationState(main_h, big_out, &n), CKR_FUNCTION_NOT_SUPPORTED, CKR_STATE_UNSAVEABLE);
}

static void table_login(void)
{
	CK_SESSION_HANDLE ro = open_session(0), rw = open_session(1);
	CK_SESSION_INFO si;
	/* The user is logged in (main_h). */
	WANT("C_Login(user) again", F3->C_Login(rw, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN)), CKR_USER_ALREADY_LOGGED_IN);
	WANT("C_Login(SO) while the user is", F3->C_Login(rw, CKU_SO, (CK_UTF8CHAR_PTR)SO_PIN, strlen(SO_PIN)), CKR_USER_ANOTHER_ALREADY_LOGGED_IN);
	WANT("C_Login(user type 42)", F3->C_Login(rw, 42, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN)), CKR_USER_TYPE_INVALID);
	WANT("C_Login(PIN NULL, length 4)", F3->C_Login(rw, CKU_USER, NULL, 4), CKR_ARGUMENTS_BAD);
	WANT("C_Login(PIN length 2^31)", F3->C_Login(rw, CKU_USER, small_in, (CK_ULONG)1 << 31), CKR_ARGUMENTS_BAD);
	WANT("C_LoginUser(username \"bob\")", F3->C_LoginUser(rw, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN), (CK_UTF8CHAR_PTR) "bob", 3), CKR_ARGUMENTS_BAD, CKR_USER_ALREADY_LOGGED_IN);
	WANT("C_InitPIN as the user", F3->C_InitPIN(rw, (CK_UTF8CHAR_PTR) "whatever", 8), CKR_USER_NOT_LOGGED_IN);
	WANT("C_SetPIN in a R/O session", F3->C_SetPIN(ro, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN), (CK_UTF8CHAR_PTR) "newpin99", 8), CKR_SESSION_READ_ONLY);
	WANT("C_SetPIN(old NULL, length 8)", F3->C_SetPIN(rw, NULL, 8, (CK_UTF8CHAR_PTR) "newpin99", 8), CKR_ARGUMENTS_BAD);
	WANT("C_GetSessionInfo(R/O, user)", F3->C_GetSessionInfo(ro, &si), CKR_OK);
	check(si.state == CKS_RO_USER_FUNCTIONS, "R/O session state is CKS_RO_USER_FUNCTIONS");

	/* Logged out. */
	CK_OBJECT_HANDLE old_priv = keep_priv;
	CK_ATTRIBUTE priv_sess[] = {
		{CKA_CLASS, &data_class, sizeof data_class},
		{CKA_TOKEN, &no, sizeof no},
		{CKA_PRIVATE, &yes, sizeof yes},
		{CKA_LABEL, "private-session", 15},
	};
	CK_OBJECT_HANDLE psess = 0;
	WANT("C_CreateObject(private session object)", F3->C_CreateObject(rw, priv_sess, 4, &psess), CKR_OK);
	WANT("C_Logout", F3->C_Logout(rw), CKR_OK);
	WANT("C_Logout twice", F3->C_Logout(rw), CKR_USER_NOT_LOGGED_IN);
	CK_BYTE sig[512];
	CK_ULONG sl = sizeof sig;
	CK_MECHANISM m = {CKM_SHA256_RSA_PKCS, NULL, 0};
	WANT("C_SignInit(private key) logged out", F3->C_SignInit(rw, &m, keep_priv), CKR_USER_NOT_LOGGED_IN, CKR_KEY_HANDLE_INVALID);
	WANT("C_Sign logged out, no operation", F3->C_Sign(rw, MSG, MSG_LEN, sig, &sl), CKR_OPERATION_NOT_INITIALIZED, CKR_USER_NOT_LOGGED_IN);
	CK_ATTRIBUTE priv_obj[] = {
		{CKA_CLASS, &data_class, sizeof data_class},
		{CKA_TOKEN, &no, sizeof no},
		{CKA_PRIVATE, &yes, sizeof yes},
	};
	CK_OBJECT_HANDLE o;
	WANT("C_CreateObject(private) logged out", F3->C_CreateObject(rw, priv_obj, 3, &o), CKR_USER_NOT_LOGGED_IN);
	CK_OBJECT_HANDLE pub, priv;
	WANT("C_GenerateKeyPair logged out", gen_rsa(rw, 1024, CK_FALSE, "x", &pub, &priv), CKR_USER_NOT_LOGGED_IN);
	WANT("C_InitPIN logged out", F3->C_InitPIN(rw, (CK_UTF8CHAR_PTR) "whatever", 8), CKR_USER_NOT_LOGGED_IN);
	WANT("C_Login(SO) with a R/O session open", F3->C_Login(rw, CKU_SO, (CK_UTF8CHAR_PTR)SO_PIN, strlen(SO_PIN)), CKR_SESSION_READ_ONLY_EXISTS);
	WANT("C_Login(user, wrong PIN)", F3->C_Login(rw, CKU_USER, (CK_UTF8CHAR_PTR) "wrong-pin", 9), CKR_PIN_INCORRECT);
	/* An empty PIN is a missing argument (SoftHSMv2, PyKCS11): no KDF, no try used. */
	WANT("C_Login(user, 0-byte PIN)", F3->C_Login(rw, CKU_USER, NULL, 0), CKR_ARGUMENTS_BAD);
	F3->C_CloseSession(ro);

	/* The SO. */
	WANT("C_Login(SO)", F3->C_Login(rw, CKU_SO, (CK_UTF8CHAR_PTR)SO_PIN, strlen(SO_PIN)), CKR_OK);
	WANT("C_Login(SO) again", F3->C_Login(rw, CKU_SO, (CK_UTF8CHAR_PTR)SO_PIN, strlen(SO_PIN)), CKR_USER_ALREADY_LOGGED_IN);
	WANT("C_Login(user) while the SO is", F3->C_Login(rw, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN)), CKR_USER_ANOTHER_ALREADY_LOGGED_IN);
	CK_SESSION_HANDLE ro2;
	WANT("C_OpenSession(R/O) while the SO is logged in", F3->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &ro2), CKR_SESSION_READ_WRITE_SO_EXISTS);
	WANT("C_SignInit(user's private key) as SO", F3->C_SignInit(rw, &m, keep_priv), CKR_USER_NOT_LOGGED_IN, CKR_KEY_HANDLE_INVALID);
	WANT("C_CreateObject(private) as SO", F3->C_CreateObject(rw, priv_obj, 3, &o), CKR_USER_NOT_LOGGED_IN);
	WANT("C_InitPIN(PIN NULL, length 8) as SO", F3->C_InitPIN(rw, NULL, 8), CKR_ARGUMENTS_BAD);
	WANT("C_InitPIN(PIN of 300 bytes) as SO", F3->C_InitPIN(rw, big_out, 300), CKR_PIN_LEN_RANGE);
	WANT("C_Logout(SO)", F3->C_Logout(rw), CKR_OK);
	F3->C_CloseSession(rw);
	ensure_login();
	/* PKCS#11 3.0 §5.6 C_Logout: "any of the application's handles to
	 * private objects become invalid (even if a user is later logged back
	 * into the token ...)", and private session objects are destroyed. */
	WANT("C_SignInit(private key handle from before C_Logout) after a new login", F3->C_SignInit(main_h, &m, old_priv), CKR_KEY_HANDLE_INVALID);
	F3->C_SessionCancel(main_h, CKF_SIGN);
	CK_BYTE lb[32];
	CK_ATTRIBUTE lba = {CKA_LABEL, lb, sizeof lb};
	WANT("C_GetAttributeValue(private session object from before C_Logout)", F3->C_GetAttributeValue(main_h, psess, &lba, 1), CKR_OBJECT_HANDLE_INVALID);
	CK_OBJECT_HANDLE dummy;
	check(find_by_label(main_h, CKO_DATA, "private-session", &dummy) == 0, "C_Logout destroyed the private session object");
	WANT("C_SignInit(private key found again)", F3->C_SignInit(main_h, &m, keep_priv), CKR_OK);
	F3->C_SessionCancel(main_h, CKF_SIGN);
	CK_TOKEN_INFO ti;
	WANT("C_GetTokenInfo after the logins", F3->C_GetTokenInfo(slot, &ti), CKR_OK);
	check(!(ti.flags & (CKF_USER_PIN_LOCKED | CKF_SO_PIN_LOCKED | CKF_USER_PIN_COUNT_LOW)),
	      "no PIN locked or counted low after a successful login");
}

static void table_objects(void)
{
	CK_SESSION_HANDLE rw = open_session(1), ro = open_session(0);
	CK_OBJECT_HANDLE o, tok = data_object(rw, CK_TRUE, "badargs-token-data");
	CK_ATTRIBUTE tok_obj[] = {
		{CKA_CLASS, &data_class, sizeof data_class},
		{CKA_TOKEN, &yes, sizeof yes},
		{CKA_PRIVATE, &no, sizeof no},
	};
	CK_ATTRIBUTE null_val[] = {
		{CKA_CLASS, &data_class, sizeof data_class},
		{CKA_LABEL, NULL, 4},
	};
	WANT("C_CreateObject(template NULL, count 3)", F3->C_CreateObject(rw, NULL, 3, &o), CKR_ARGUMENTS_BAD);
	WANT("C_CreateObject(phObject NULL)", F3->C_CreateObject(rw, tok_obj, 3, NULL), CKR_ARGUMENTS_BAD);
	WANT("C_CreateObject(pValue NULL, length 4)", F3->C_CreateObject(rw, null_val, 2, &o), CKR_ARGUMENTS_BAD);
	WANT("C_CreateObject(count 0)", F3->C_CreateObject(rw, NULL, 0, &o), CKR_TEMPLATE_INCOMPLETE);
	WANT("C_CreateObject(token object) in a R/O session", F3->C_CreateObject(ro, tok_obj, 3, &o), CKR_SESSION_READ_ONLY);
	WANT("C_DestroyObject(token object) in a R/O session", F3->C_DestroyObject(ro, tok), CKR_SESSION_READ_ONLY);
	CK_ATTRIBUTE lbl = {CKA_LABEL, "x", 1};
	WANT("C_SetAttributeValue(token object) in a R/O session", F3->C_SetAttributeValue(ro, tok, &lbl, 1), CKR_SESSION_READ_ONLY);
	WANT("C_CopyObject(to token) in a R/O session", F3->C_CopyObject(ro, tok, tok_obj + 1, 1, &o), CKR_SESSION_READ_ONLY);
	CK_OBJECT_HANDLE pub, priv;
	WANT("C_GenerateKeyPair(token keys) in a R/O session", gen_rsa(ro, 1024, CK_TRUE, "ro", &pub, &priv), CKR_SESSION_READ_ONLY);
	/* Stale objects. */
	CK_OBJECT_HANDLE sess_obj;
	{
		CK_SESSION_HANDLE tmp = open_session(1);
		sess_obj = data_object(tmp, CK_FALSE, "dies with its session");
		F3->C_CloseSession(tmp);
	}
	CK_ULONG size;
	CK_BYTE val[64];
	CK_ATTRIBUTE get = {CKA_LABEL, val, sizeof val};
	WANT("C_DestroyObject(token data)", F3->C_DestroyObject(rw, tok), CKR_OK);
	WANT("C_DestroyObject(destroyed)", F3->C_DestroyObject(rw, tok), CKR_OBJECT_HANDLE_INVALID);
	WANT("C_GetAttributeValue(destroyed)", F3->C_GetAttributeValue(rw, tok, &get, 1), CKR_OBJECT_HANDLE_INVALID);
	WANT("C_GetAttributeValue(object of a closed session)", F3->C_GetAttributeValue(rw, sess_obj, &get, 1), CKR_OBJECT_HANDLE_INVALID);
	WANT("C_GetObjectSize(0)", F3->C_GetObjectSize(rw, 0, &size), CKR_OBJECT_HANDLE_INVALID);
	WANT("C_GetObjectSize(keep, NULL)", F3->C_GetObjectSize(rw, keep_pub, NULL), CKR_ARGUMENTS_BAD);
	WANT("C_SetAttributeValue(0xdeadbeef)", F3->C_SetAttributeValue(rw, 0xdeadbeefUL, &lbl, 1), CKR_OBJECT_HANDLE_INVALID);
	WANT("C_CopyObject(ULONG_MAX)", F3->C_CopyObject(rw, ~(CK_ULONG)0, NULL, 0, &o), CKR_OBJECT_HANDLE_INVALID);
	WANT("C_CopyObject(phNewObject NULL)", F3->C_CopyObject(rw, keep_pub, NULL, 0, NULL), CKR_ARGUMENTS_BAD);
	/* Attributes: two-call convention. */
	CK_ATTRIBUTE mod = {CKA_MODULUS, NULL, 0};
	WANT("C_GetAttributeValue(template NULL, count 1)", F3->C_GetAttributeValue(rw, keep_pub, NULL, 1), CKR_ARGUMENTS_BAD);
	WANT("C_GetAttributeValue(count 2^31)", F3->C_GetAttributeValue(rw, keep_pub, &mod, (CK_ULONG)1 << 31), CKR_ARGUMENTS_BAD);
	WANT("C_GetAttributeValue(modulus length)", F3->C_GetAttributeValue(rw, keep_pub, &mod, 1), CKR_OK);
	check(mod.ulValueLen == 256, "CKA_MODULUS length query says 256");
	mod.pValue = val;
	mod.ulValueLen = 10;
	WANT("C_GetAttributeValue(modulus into 10 bytes)", F3->C_GetAttributeValue(rw, keep_pub, &mod, 1), CKR_BUFFER_TOO_SMALL);
	check(mod.ulValueLen == CK_UNAVAILABLE_INFORMATION, "short attribute buffer gives CK_UNAVAILABLE_INFORMATION");
	CK_ATTRIBUTE pexp = {CKA_PRIVATE_EXPONENT, val, sizeof val};
	WANT("C_GetAttributeValue(CKA_PRIVATE_EXPONENT)", F3->C_GetAttributeValue(rw, keep_priv, &pexp, 1), CKR_ATTRIBUTE_SENSITIVE);
	CK_ATTRIBUTE unk = {0x7fff1234UL, val, sizeof val};
	WANT("C_GetAttributeValue(unknown type)", F3->C_GetAttributeValue(rw, keep_pub, &unk, 1), CKR_ATTRIBUTE_TYPE_INVALID);
	/* Searches. */
	CK_OBJECT_HANDLE found[4];
	CK_ULONG nf;
	WANT("C_FindObjects without Init", F3->C_FindObjects(rw, found, 4, &nf), CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_FindObjectsFinal without Init", F3->C_FindObjectsFinal(rw), CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_FindObjectsInit(template NULL, count 2)", F3->C_FindObjectsInit(rw, NULL, 2), CKR_ARGUMENTS_BAD);
	WANT("C_FindObjectsInit", F3->C_FindObjectsInit(rw, NULL, 0), CKR_OK);
	WANT("C_FindObjectsInit again", F3->C_FindObjectsInit(rw, NULL, 0), CKR_OPERATION_ACTIVE);
	WANT("C_FindObjects(pulObjectCount NULL)", F3->C_FindObjects(rw, found, 4, NULL), CKR_ARGUMENTS_BAD);
	WANT("C_FindObjects(phObject NULL, max 4)", F3->C_FindObjects(rw, NULL, 4, &nf), CKR_ARGUMENTS_BAD);
	WANT("C_FindObjects(max 0)", F3->C_FindObjects(rw, found, 0, &nf), CKR_OK, CKR_ARGUMENTS_BAD);
	WANT("C_FindObjects", F3->C_FindObjects(rw, found, 4, &nf), CKR_OK);
	WANT("C_FindObjectsFinal", F3->C_FindObjectsFinal(rw), CKR_OK);
	/* Huge but valid: a 4 MiB session data object, read back. */
	static CK_BYTE bigval[4 << 20];
	memset(bigval, 0xa5, sizeof bigval);
	CK_ATTRIBUTE bigobj[] = {
		{CKA_CLASS, &data_class, sizeof data_class},
		{CKA_TOKEN, &no, sizeof no},
		{CKA_VALUE, bigval, sizeof bigval},
	};
	CK_RV rv = WANT("C_CreateObject(4 MiB CKA_VALUE, session)", F3->C_CreateObject(rw, bigobj, 3, &o), CKR_OK, CKR_ATTRIBUTE_VALUE_INVALID, CKR_DEVICE_MEMORY);
	if (rv) {
		CK_ATTRIBUTE back = {CKA_VALUE, NULL, 0};
		WANT("C_GetAttributeValue(4 MiB length)", F3->C_GetAttributeValue(rw, o, &back, 1), CKR_OK);
		check(back.ulValueLen == sizeof bigval, "4 MiB value length reads back");
		WANT("C_FindObjectsInit(4 MiB value in the template)", F3->C_FindObjectsInit(rw, bigobj, 3), CKR_OK);
		WANT("C_FindObjects(4 MiB value)", F3->C_FindObjects(rw, found, 4, &nf), CKR_OK);
		check(nf == 1 && found[0] == o, "the search by a 4 MiB value finds the object");
		F3->C_FindObjectsFinal(rw);
		WANT("C_DestroyObject(4 MiB object)", F3->C_DestroyObject(rw, o), CKR_OK);
	}
	F3->C_CloseSession(ro);
	F3->C_CloseSession(rw);
}

static void table_crypto(void)
{
	CK_SESSION_HANDLE h = open_session(1), h2 = open_session(1);
	CK_MECHANISM m = {CKM_SHA256_RSA_PKCS, NULL, 0};
	CK_MECHANISM raw = {CKM_RSA_PKCS, NULL, 0};
	CK_MECHANISM sha = {CKM_SHA256, NULL, 0};
	CK_MECHANISM unknown = {0x80001234UL, NULL, 0};
	CK_MECHANISM nullparam = {CKM_SHA256_RSA_PKCS, NULL, 8};
	CK_RSA_PKCS_PSS_PARAMS pss = {CKM_SHA256, CKG_MGF1_SHA256, 32};
	CK_MECHANISM pss_short = {CKM_SHA256_RSA_PKCS_PSS, &pss, sizeof pss - 1};
	CK_MECHANISM pss_huge = {CKM_SHA256_RSA_PKCS_PSS, &pss, ~(CK_ULONG)0};
	CK_BYTE sig[512];
	CK_ULONG sl;
	/* Not initialised. */
	sl = sizeof sig;
	WANT("C_Sign without SignInit", F3->C_Sign(h, MSG, MSG_LEN, sig, &sl), CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_SignUpdate without SignInit", F3->C_SignUpdate(h, MSG, MSG_LEN), CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_SignFinal without SignInit", F3->C_SignFinal(h, sig, &sl), CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_Verify without VerifyInit", F3->C_Verify(h, MSG, MSG_LEN, sig, 256), CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_VerifyUpdate without VerifyInit", F3->C_VerifyUpdate(h, MSG, MSG_LEN), CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_VerifyFinal without VerifyInit", F3->C_VerifyFinal(h, sig, 256), CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_Encrypt without EncryptInit", F3->C_Encrypt(h, MSG, MSG_LEN, sig, &sl), CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_EncryptUpdate without EncryptInit", F3->C_EncryptUpdate(h, MSG, MSG_LEN, sig, &sl), CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_EncryptFinal without EncryptInit", F3->C_EncryptFinal(h, sig, &sl), CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_Decrypt without DecryptInit", F3->C_Decrypt(h, sig, 256, sig, &sl), CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_DecryptUpdate without DecryptInit", F3->C_DecryptUpdate(h, sig, 256, sig, &sl), CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_DecryptFinal without DecryptInit", F3->C_DecryptFinal(h, sig, &sl), CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_Digest without DigestInit", F3->C_Digest(h, MSG, MSG_LEN, sig, &sl), CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_DigestUpdate without DigestInit", F3->C_DigestUpdate(h, MSG, MSG_LEN), CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_DigestKey without DigestInit", F3->C_DigestKey(h, keep_pub), CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_DigestFinal without DigestInit", F3->C_DigestFinal(h, sig, &sl), CKR_OPERATION_NOT_INITIALIZED);
	/* Mechanisms and keys. */
	WANT("C_SignInit(pMechanism NULL)", F3->C_SignInit(h, NULL, keep_priv), CKR_ARGUMENTS_BAD);
	WANT("C_SignInit(pParameter NULL, length 8)", F3->C_SignInit(h, &nullparam, keep_priv), CKR_ARGUMENTS_BAD);
	WANT("C_SignInit(PSS params one byte short)", F3->C_SignInit(h, &pss_short, keep_priv), CKR_MECHANISM_PARAM_INVALID);
	WANT("C_SignInit(PSS params length ULONG_MAX)", F3->C_SignInit(h, &pss_huge, keep_priv), CKR_MECHANISM_PARAM_INVALID, CKR_ARGUMENTS_BAD);
	WANT("C_SignInit(unknown mechanism)", F3->C_SignInit(h, &unknown, keep_priv), CKR_MECHANISM_INVALID);
	WANT("C_SignInit(CKM_SHA256)", F3->C_SignInit(h, &sha, keep_priv), CKR_MECHANISM_INVALID);
	WANT("C_DigestInit(CKM_RSA_PKCS)", F3->C_DigestInit(h, &raw), CKR_MECHANISM_INVALID);
	WANT("C_DigestInit(NULL)", F3->C_DigestInit(h, NULL), CKR_ARGUMENTS_BAD);
	WANT("C_EncryptInit(CKM_SHA256_RSA_PKCS)", F3->C_EncryptInit(h, &m, keep_pub), CKR_MECHANISM_INVALID);
	WANT("C_SignInit(key 0)", F3->C_SignInit(h, &m, 0), CKR_KEY_HANDLE_INVALID);
	WANT("C_SignInit(key 0xdeadbeef)", F3->C_SignInit(h, &m, 0xdeadbeefUL), CKR_KEY_HANDLE_INVALID);
	WANT("C_VerifyInit(key ULONG_MAX)", F3->C_VerifyInit(h, &m, ~(CK_ULONG)0), CKR_KEY_HANDLE_INVALID);
	WANT("C_EncryptInit(key 0)", F3->C_EncryptInit(h, &raw, 0), CKR_KEY_HANDLE_INVALID);
	WANT("C_DecryptInit(key 0)", F3->C_DecryptInit(h, &raw, 0), CKR_KEY_HANDLE_INVALID);
	WANT("C_SignInit(public key)", F3->C_SignInit(h, &m, keep_pub), CKR_KEY_TYPE_INCONSISTENT, CKR_KEY_FUNCTION_NOT_PERMITTED);
	CK_OBJECT_HANDLE dobj = data_object(h, CK_FALSE, "not a key");
	WANT("C_SignInit(data object)", F3->C_SignInit(h, &m, dobj), CKR_KEY_HANDLE_INVALID, CKR_KEY_TYPE_INCONSISTENT);
	WANT("C_GenerateKeyPair(CKM_SHA256)", F3->C_GenerateKeyPair(h, &sha, NULL, 0, NULL, 0, &dobj, &dobj), CKR_MECHANISM_INVALID);
	WANT("C_GenerateKeyPair(pMechanism NULL)", F3->C_GenerateKeyPair(h, NULL, NULL, 0, NULL, 0, &dobj, &dobj), CKR_ARGUMENTS_BAD);
	CK_MECHANISM kg = {CKM_RSA_PKCS_KEY_PAIR_GEN, NULL, 0};
	WANT("C_GenerateKeyPair(phPrivateKey NULL)", F3->C_GenerateKeyPair(h, &kg, NULL, 0, NULL, 0, &dobj, NULL), CKR_ARGUMENTS_BAD);
	WANT("C_GenerateKey(AES)", F3->C_GenerateKey(h, &kg, NULL, 0, &dobj), CKR_FUNCTION_NOT_SUPPORTED, CKR_MECHANISM_INVALID);

	/* Operation active; the first operation survives the second Init. */
	WANT("C_SignInit", F3->C_SignInit(h, &m, keep_priv), CKR_OK);
	WANT("C_SignInit again", F3->C_SignInit(h, &m, keep_priv), CKR_OPERATION_ACTIVE);
	sl = 10;
	WANT("C_Sign into 10 bytes", F3->C_Sign(h, MSG, MSG_LEN, sig, &sl), CKR_BUFFER_TOO_SMALL);
	check(sl == 256, "C_Sign(BUFFER_TOO_SMALL) reports 256");
	WANT("C_Sign(NULL signature) length query", F3->C_Sign(h, MSG, MSG_LEN, NULL, &sl), CKR_OK);
	check(sl == 256, "C_Sign length query says 256");
	WANT("C_Sign(pulSignatureLen NULL)", F3->C_Sign(h, MSG, MSG_LEN, sig, NULL), CKR_ARGUMENTS_BAD);
	WANT("C_Sign(data NULL, length 5)", F3->C_Sign(h, NULL, 5, sig, &sl), CKR_ARGUMENTS_BAD);
	WANT("C_Sign(data length 2^31)", F3->C_Sign(h, MSG, (CK_ULONG)1 << 31, sig, &sl), CKR_ARGUMENTS_BAD);
	WANT("C_Sign(data length ULONG_MAX)", F3->C_Sign(h, MSG, ~(CK_ULONG)0, sig, &sl), CKR_ARGUMENTS_BAD);
	/* The first CKR_ARGUMENTS_BAD ended the operation (only BUFFER_TOO_SMALL
	 * and a length query keep it). */
	sl = sizeof sig;
	WANT("C_Sign after the error ended the operation", F3->C_Sign(h, MSG, MSG_LEN, sig, &sl), CKR_OPERATION_NOT_INITIALIZED);

	/* PKCS#11: C_Sign, C_Verify, C_Encrypt, C_Digest... always terminate the
	 * active operation unless they return CKR_BUFFER_TOO_SMALL or answer a
	 * length query. Does a CKR_ARGUMENTS_BAD end it? (Reported, not failed:
	 * see test/stress/README.md.) */
	for (int k = 0; k < 4; k++) {
		static const char *names[] = {"C_Sign", "C_Verify", "C_Encrypt", "C_Digest"};
		CK_RV r1, r2, r3;
		switch (k) {
		case 0:
			r1 = F3->C_SignInit(h, &m, keep_priv);
			r2 = DO("C_Sign(pulSignatureLen NULL)", F3->C_Sign(h, MSG, MSG_LEN, sig, NULL));
			r3 = F3->C_SignInit(h, &m, keep_priv);
			break;
		case 1:
			r1 = F3->C_VerifyInit(h, &m, keep_pub);
			r2 = DO("C_Verify(pSignature NULL, 256)", F3->C_Verify(h, MSG, MSG_LEN, NULL, 256));
			r3 = F3->C_VerifyInit(h, &m, keep_pub);
			break;
		case 2:
			r1 = F3->C_EncryptInit(h, &raw, keep_pub);
			r2 = DO("C_Encrypt(pulEncryptedDataLen NULL)", F3->C_Encrypt(h, MSG, MSG_LEN, sig, NULL));
			r3 = F3->C_EncryptInit(h, &raw, keep_pub);
			break;
		default:
			r1 = F3->C_DigestInit(h, &sha);
			r2 = DO("C_Digest(pData NULL, 5)", F3->C_Digest(h, NULL, 5, sig, &sl));
			r3 = F3->C_DigestInit(h, &sha);
			break;
		}
		char what[128];
		snprintf(what, sizeof what, "%s with a bad argument after its Init", names[k]);
		expect_in(what, r1 == CKR_OK ? r2 : r1, (const CK_RV[]){CKR_ARGUMENTS_BAD}, 1);
		snprintf(what, sizeof what, "Init again after %s's CKR_ARGUMENTS_BAD", names[k]);
		/* Every error but CKR_BUFFER_TOO_SMALL (and a length query) ends the operation. */
		expect_in(what, r3, (const CK_RV[]){CKR_OK}, 1);
		F3->C_SessionCancel(h, CKF_SIGN | CKF_VERIFY | CKF_ENCRYPT | CKF_DIGEST);
	}

	WANT("C_VerifyInit", F3->C_VerifyInit(h, &m, keep_pub), CKR_OK);
	WANT("C_VerifyInit again", F3->C_VerifyInit(h, &m, keep_pub), CKR_OPERATION_ACTIVE);
	WANT("C_Verify(signature NULL, length 256)", F3->C_Verify(h, MSG, MSG_LEN, NULL, 256), CKR_ARGUMENTS_BAD);
	WANT("C_Verify(reference) after the error ended the operation", F3->C_Verify(h, MSG, MSG_LEN, ref_sig, ref_sig_len), CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_VerifyInit", F3->C_VerifyInit(h, &m, keep_pub), CKR_OK);
	WANT("C_Verify(255-byte signature)", F3->C_Verify(h, MSG, MSG_LEN, ref_sig, ref_sig_len - 1), CKR_SIGNATURE_LEN_RANGE);
	WANT("C_VerifyInit", F3->C_VerifyInit(h, &m, keep_pub), CKR_OK);
	CK_BYTE bad[256];
	memcpy(bad, ref_sig, 256);
	bad[100] ^= 1;
	WANT("C_Verify(flipped bit)", F3->C_Verify(h, MSG, MSG_LEN, bad, 256), CKR_SIGNATURE_INVALID);
	WANT("C_Verify after C_Verify", F3->C_Verify(h, MSG, MSG_LEN, ref_sig, 256), CKR_OPERATION_NOT_INITIALIZED);

	WANT("C_DigestInit(SHA256)", F3->C_DigestInit(h, &sha), CKR_OK);
	WANT("C_DigestInit again", F3->C_DigestInit(h, &sha), CKR_OPERATION_ACTIVE);
	sl = 31;
	WANT("C_Digest into 31 bytes", F3->C_Digest(h, MSG, MSG_LEN, sig, &sl), CKR_BUFFER_TOO_SMALL);
	check(sl == 32, "C_Digest(BUFFER_TOO_SMALL) reports 32");
	WANT("C_Digest", F3->C_Digest(h, MSG, MSG_LEN, sig, &sl), CKR_OK);

	WANT("C_EncryptInit(RSA_PKCS)", F3->C_EncryptInit(h, &raw, keep_pub), CKR_OK);
	WANT("C_EncryptInit again", F3->C_EncryptInit(h, &raw, keep_pub), CKR_OPERATION_ACTIVE);
	sl = 255;
	WANT("C_Encrypt into 255 bytes", F3->C_Encrypt(h, MSG, MSG_LEN, sig, &sl), CKR_BUFFER_TOO_SMALL);
	check(sl == 256, "C_Encrypt(BUFFER_TOO_SMALL) reports 256");
	WANT("C_SessionCancel(encrypt)", F3->C_SessionCancel(h, CKF_ENCRYPT), CKR_OK);
	WANT("C_Encrypt after C_SessionCancel", F3->C_Encrypt(h, MSG, MSG_LEN, sig, &sl), CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_DecryptInit(RSA_PKCS)", F3->C_DecryptInit(h, &raw, keep_priv), CKR_OK);
	WANT("C_DecryptInit again", F3->C_DecryptInit(h, &raw, keep_priv), CKR_OPERATION_ACTIVE);
	sl = sizeof sig;
	WANT("C_Decrypt(100 bytes)", F3->C_Decrypt(h, sig, 100, sig, &sl), CKR_ENCRYPTED_DATA_LEN_RANGE, CKR_ENCRYPTED_DATA_INVALID);

	/* Huge but valid inputs: a real 16 MiB buffer. */
	static CK_BYTE huge[16 << 20];
	memset(huge, 0x3c, sizeof huge);
	sl = sizeof sig;
	WANT("C_SignInit(RSA_PKCS)", F3->C_SignInit(h, &raw, keep_priv), CKR_OK);
	WANT("C_Sign(RSA_PKCS, 16 MiB)", F3->C_Sign(h, huge, sizeof huge, sig, &sl), CKR_DATA_LEN_RANGE);
	WANT("C_EncryptInit(RSA_PKCS)", F3->C_EncryptInit(h, &raw, keep_pub), CKR_OK);
	sl = sizeof sig;
	WANT("C_Encrypt(RSA_PKCS, 16 MiB)", F3->C_Encrypt(h, huge, sizeof huge, sig, &sl), CKR_DATA_LEN_RANGE);
	WANT("C_VerifyInit", F3->C_VerifyInit(h, &m, keep_pub), CKR_OK);
	WANT("C_Verify(16 MiB signature)", F3->C_Verify(h, MSG, MSG_LEN, huge, sizeof huge), CKR_SIGNATURE_LEN_RANGE);
	WANT("C_SignInit(SHA256_RSA_PKCS)", F3->C_SignInit(h, &m, keep_priv), CKR_OK);
	sl = sizeof sig;
	WANT("C_Sign(SHA256_RSA_PKCS, 16 MiB)", F3->C_Sign(h, huge, sizeof huge, sig, &sl), CKR_OK);
	WANT("C_VerifyInit", F3->C_VerifyInit(h2, &m, keep_pub), CKR_OK);
	WANT("C_Verify(16 MiB message) in another session", F3->C_Verify(h2, huge, sizeof huge, sig, sl), CKR_OK);
	print_hex("DATA sig16m ", sig, sl);
	WANT("C_DigestInit(SHA256)", F3->C_DigestInit(h, &sha), CKR_OK);
	WANT("C_DigestUpdate(16 MiB)", F3->C_DigestUpdate(h, huge, sizeof huge), CKR_OK);
	WANT("C_DigestUpdate(length 2^31)", F3->C_DigestUpdate(h, huge, (CK_ULONG)1 << 31), CKR_ARGUMENTS_BAD);
	sl = sizeof sig;
	WANT("C_DigestFinal", F3->C_DigestFinal(h, sig, &sl), CKR_OK, CKR_OPERATION_NOT_INITIALIZED);
	WANT("C_GenerateRandom(1 MiB)", F3->C_GenerateRandom(h, huge, 1 << 20), CKR_OK);
	/* token/digest.go: maxRandom = 1 MiB per call, CKR_ARGUMENTS_BAD above. */
	WANT("C_GenerateRandom(16 MiB)", F3->C_GenerateRandom(h, huge, sizeof huge), CKR_OK, CKR_ARGUMENTS_BAD);
	WANT("C_GenerateRandom(NULL, 16)", F3->C_GenerateRandom(h, NULL, 16), CKR_ARGUMENTS_BAD);
	WANT("C_GenerateRandom(length ULONG_MAX)", F3->C_GenerateRandom(h, huge, ~(CK_ULONG)0), CKR_ARGUMENTS_BAD);
	WANT("C_GenerateRandom(length 0)", F3->C_GenerateRandom(h, huge, 0), CKR_OK);
	WANT("C_SeedRandom(16 MiB)", F3->C_SeedRandom(h, huge, sizeof huge), CKR_OK);
	WANT("C_SeedRandom(NULL, 16)", F3->C_SeedRandom(h, NULL, 16), CKR_ARGUMENTS_BAD);
	WANT("C_Login(16 MiB PIN)", F3->C_Login(h, CKU_CONTEXT_SPECIFIC, huge, sizeof huge), CKR_PIN_LEN_RANGE, CKR_OPERATION_NOT_INITIALIZED);

	/* A key destroyed while an operation on it is active. */
	CK_OBJECT_HANDLE pub, priv;
	WANT("C_GenerateKeyPair(RSA-1024 session keys)", gen_rsa(h, 1024, CK_FALSE, "doomed", &pub, &priv), CKR_OK);
	WANT("C_SignInit(doomed key)", F3->C_SignInit(h, &m, priv), CKR_OK);
	WANT("C_DestroyObject(doomed key) from another session", F3->C_DestroyObject(h2, priv), CKR_OK);
	sl = sizeof sig;
	WANT("C_Sign with the key destroyed after SignInit", F3->C_Sign(h, MSG, MSG_LEN, sig, &sl), CKR_OK, CKR_KEY_HANDLE_INVALID, CKR_OBJECT_HANDLE_INVALID);
	WANT("C_SignInit(destroyed key)", F3->C_SignInit(h, &m, priv), CKR_KEY_HANDLE_INVALID);
	WANT("C_DestroyObject(doomed public key)", F3->C_DestroyObject(h, pub), CKR_OK);
	WANT("C_VerifyInit(destroyed public key)", F3->C_VerifyInit(h, &m, pub), CKR_KEY_HANDLE_INVALID);

	/* The message functions of 3.0 (test/msgapi_test.go drives them in full). */
	WANT("C_MessageSignInit", F3->C_MessageSignInit(h, &m, keep_priv), CKR_OK);
	sl = sizeof sig;
	WANT("C_SignMessage", F3->C_SignMessage(h, NULL, 0, MSG, MSG_LEN, sig, &sl), CKR_OK);
	WANT("C_MessageSignFinal", F3->C_MessageSignFinal(h), CKR_OK);
	WANT("C_SignMessage after C_MessageSignFinal", F3->C_SignMessage(h, NULL, 0, MSG, MSG_LEN, sig, &sl), CKR_OPERATION_NOT_INITIALIZED);

	/* An operation ends when its session closes; a logout ends private-key operations. */
	WANT("C_SignInit", F3->C_SignInit(h, &m, keep_priv), CKR_OK);
	F3->C_CloseSession(h);
	sl = sizeof sig;
	WANT("C_Sign(session closed after SignInit)", F3->C_Sign(h, MSG, MSG_LEN, sig, &sl), CKR_SESSION_HANDLE_INVALID);
	WANT("C_SignInit", F3->C_SignInit(h2, &m, keep_priv), CKR_OK);
	WANT("C_Logout", F3->C_Logout(h2), CKR_OK);
	sl = sizeof sig;
	WANT("C_Sign after C_Logout", F3->C_Sign(h2, MSG, MSG_LEN, sig, &sl), CKR_USER_NOT_LOGGED_IN, CKR_KEY_HANDLE_INVALID, CKR_OPERATION_NOT_INITIALIZED);
	/* A PIN too long for the token is refused before it is tried. */
	WANT("C_Login(user, 16 MiB PIN) logged out", F3->C_Login(h2, CKU_USER, huge, sizeof huge), CKR_PIN_LEN_RANGE, CKR_PIN_INCORRECT);
	CK_TOKEN_INFO ti;
	WANT("C_GetTokenInfo", F3->C_GetTokenInfo(slot, &ti), CKR_OK);
	check(!(ti.flags & CKF_USER_PIN_COUNT_LOW), "the 16 MiB PIN did not count as a wrong PIN");
	F3->C_CloseSession(h2);
	ensure_login();
}

/* gen_rsa_raw: an RSA key pair with the given CKA_MODULUS_BITS bytes (none
 * when bits is NULL) and exponent (session objects). */
static CK_RV gen_rsa_raw(CK_SESSION_HANDLE h, const void *bits, CK_ULONG bits_len, const CK_BYTE *e, CK_ULONG elen,
			 CK_OBJECT_HANDLE *pub, CK_OBJECT_HANDLE *priv)
{
	CK_MECHANISM m = {CKM_RSA_PKCS_KEY_PAIR_GEN, NULL, 0};
	CK_ATTRIBUTE pt[3] = {{CKA_TOKEN, &no, sizeof no}};
	CK_ULONG n = 1;
	if (bits != NULL)
		pt[n++] = (CK_ATTRIBUTE){CKA_MODULUS_BITS, (void *)bits, bits_len};
	pt[n++] = (CK_ATTRIBUTE){CKA_PUBLIC_EXPONENT, (void *)e, elen};
	CK_ATTRIBUTE st[] = {
		{CKA_TOKEN, &no, sizeof no},
		{CKA_SIGN, &yes, sizeof yes},
	};
	return F3->C_GenerateKeyPair(h, &m, pt, n, st, 2, pub, priv);
}

/* table_templates: malformed attribute values, key sizes and mechanism
 * parameters. */
static void table_templates(void)
{
	CK_SESSION_HANDLE h = open_session(1);
	CK_OBJECT_HANDLE o, pub, priv;
	CK_ULONG cls3 = CKO_DATA;
	CK_ATTRIBUTE short_class[] = {{CKA_CLASS, &cls3, 3}, {CKA_TOKEN, &no, sizeof no}};
	WANT("C_CreateObject(CKA_CLASS of 3 bytes)", F3->C_CreateObject(h, short_class, 2, &o), CKR_ATTRIBUTE_VALUE_INVALID, CKR_TEMPLATE_INCOMPLETE);
	CK_ULONG eight = 1;
	CK_ATTRIBUTE long_bool[] = {{CKA_CLASS, &data_class, sizeof data_class}, {CKA_TOKEN, &eight, sizeof eight}};
	WANT("C_CreateObject(CKA_TOKEN of 8 bytes)", F3->C_CreateObject(h, long_bool, 2, &o), CKR_ATTRIBUTE_VALUE_INVALID);
	CK_ATTRIBUTE empty_bool[] = {{CKA_CLASS, &data_class, sizeof data_class}, {CKA_TOKEN, NULL, 0}};
	WANT("C_CreateObject(CKA_TOKEN of 0 bytes)", F3->C_CreateObject(h, empty_bool, 2, &o), CKR_ATTRIBUTE_VALUE_INVALID);
	CK_ULONG bad_class = 0x7fffff00UL;
	CK_ATTRIBUTE unk_class[] = {{CKA_CLASS, &bad_class, sizeof bad_class}, {CKA_TOKEN, &no, sizeof no}};
	WANT("C_CreateObject(unknown CKA_CLASS)", F3->C_CreateObject(h, unk_class, 2, &o), CKR_ATTRIBUTE_VALUE_INVALID, CKR_TEMPLATE_INCONSISTENT);
	CK_ATTRIBUTE dup[] = {{CKA_CLASS, &data_class, sizeof data_class}, {CKA_TOKEN, &no, sizeof no}, {CKA_TOKEN, &yes, sizeof yes}};
	WANT("C_CreateObject(CKA_TOKEN twice, different values)", F3->C_CreateObject(h, dup, 3, &o), CKR_TEMPLATE_INCONSISTENT, CKR_ATTRIBUTE_VALUE_INVALID);
	CK_OBJECT_HANDLE d = data_object(h, CK_FALSE, "copy me");
	CK_OBJECT_CLASS keycls = CKO_SECRET_KEY;
	CK_ATTRIBUTE change_class = {CKA_CLASS, &keycls, sizeof keycls};
	WANT("C_CopyObject(changing CKA_CLASS)", F3->C_CopyObject(h, d, &change_class, 1, &o), CKR_ATTRIBUTE_READ_ONLY, CKR_TEMPLATE_INCONSISTENT);
	WANT("C_SetAttributeValue(CKA_CLASS)", F3->C_SetAttributeValue(h, d, &change_class, 1), CKR_ATTRIBUTE_READ_ONLY);

	/* RSA key generation. */
	CK_BYTE e3[] = {1, 0, 1}, e1[] = {1}, e_even[] = {1, 0, 0}, e0[] = {0};
	CK_ULONG b0 = 0, b8 = 8, b512 = 512, bbig = 1UL << 20, bmax = ~(CK_ULONG)0;
	unsigned b4 = 2048;
	WANT("C_GenerateKeyPair(CKA_MODULUS_BITS of 4 bytes)", gen_rsa_raw(h, &b4, sizeof b4, e3, 3, &pub, &priv), CKR_ATTRIBUTE_VALUE_INVALID);
	WANT("C_GenerateKeyPair(0 bits)", gen_rsa_raw(h, &b0, sizeof b0, e3, 3, &pub, &priv), CKR_KEY_SIZE_RANGE, CKR_ATTRIBUTE_VALUE_INVALID);
	WANT("C_GenerateKeyPair(8 bits)", gen_rsa_raw(h, &b8, sizeof b8, e3, 3, &pub, &priv), CKR_KEY_SIZE_RANGE, CKR_ATTRIBUTE_VALUE_INVALID);
	WANT("C_GenerateKeyPair(512 bits)", gen_rsa_raw(h, &b512, sizeof b512, e3, 3, &pub, &priv), CKR_KEY_SIZE_RANGE, CKR_ATTRIBUTE_VALUE_INVALID);
	WANT("C_GenerateKeyPair(2^20 bits)", gen_rsa_raw(h, &bbig, sizeof bbig, e3, 3, &pub, &priv), CKR_KEY_SIZE_RANGE, CKR_ATTRIBUTE_VALUE_INVALID);
	WANT("C_GenerateKeyPair(ULONG_MAX bits)", gen_rsa_raw(h, &bmax, sizeof bmax, e3, 3, &pub, &priv), CKR_KEY_SIZE_RANGE, CKR_ATTRIBUTE_VALUE_INVALID);
	WANT("C_GenerateKeyPair(no CKA_MODULUS_BITS)", gen_rsa_raw(h, NULL, 0, e3, 3, &pub, &priv), CKR_TEMPLATE_INCOMPLETE);
	WANT("C_GenerateKeyPair(CKA_MODULUS_BITS of 0 bytes)", gen_rsa_raw(h, e3, 0, e3, 3, &pub, &priv), CKR_ATTRIBUTE_VALUE_INVALID);
	CK_ULONG b2048 = 2048;
	WANT("C_GenerateKeyPair(e = 1)", gen_rsa_raw(h, &b2048, sizeof b2048, e1, 1, &pub, &priv), CKR_ATTRIBUTE_VALUE_INVALID, CKR_TEMPLATE_INCONSISTENT);
	WANT("C_GenerateKeyPair(e = 65536)", gen_rsa_raw(h, &b2048, sizeof b2048, e_even, 3, &pub, &priv), CKR_ATTRIBUTE_VALUE_INVALID, CKR_TEMPLATE_INCONSISTENT);
	WANT("C_GenerateKeyPair(e = 0)", gen_rsa_raw(h, &b2048, sizeof b2048, e0, 1, &pub, &priv), CKR_ATTRIBUTE_VALUE_INVALID, CKR_TEMPLATE_INCONSISTENT);
	static CK_BYTE e_huge[1 << 16];
	memset(e_huge, 0xff, sizeof e_huge);
	WANT("C_GenerateKeyPair(64 KiB exponent)", gen_rsa_raw(h, &b2048, sizeof b2048, e_huge, sizeof e_huge, &pub, &priv), CKR_ATTRIBUTE_VALUE_INVALID, CKR_TEMPLATE_INCONSISTENT);

	/* PSS parameters. */
	CK_BYTE sig[512];
	CK_ULONG sl = sizeof sig;
	CK_RSA_PKCS_PSS_PARAMS p_salt = {CKM_SHA256, CKG_MGF1_SHA256, ~(CK_ULONG)0};
	CK_RSA_PKCS_PSS_PARAMS p_hash = {CKM_SHA384, CKG_MGF1_SHA256, 32};
	CK_RSA_PKCS_PSS_PARAMS p_mgf = {CKM_SHA256, 0x7777, 32};
	CK_RSA_PKCS_PSS_PARAMS p_ok = {CKM_SHA256, CKG_MGF1_SHA256, 32};
	CK_MECHANISM m_salt = {CKM_SHA256_RSA_PKCS_PSS, &p_salt, sizeof p_salt};
	CK_MECHANISM m_hash = {CKM_SHA256_RSA_PKCS_PSS, &p_hash, sizeof p_hash};
	CK_MECHANISM m_mgf = {CKM_SHA256_RSA_PKCS_PSS, &p_mgf, sizeof p_mgf};
	CK_MECHANISM m_raw = {CKM_RSA_PKCS_PSS, &p_ok, sizeof p_ok};
	CK_RV rv = DO("C_SignInit(PSS salt ULONG_MAX)", F3->C_SignInit(h, &m_salt, keep_priv));
	if (rv == CKR_OK)
		rv = DO("C_Sign(PSS salt ULONG_MAX)", F3->C_Sign(h, MSG, MSG_LEN, sig, &sl));
	expect_in("PSS salt length ULONG_MAX (at C_SignInit or C_Sign)", rv,
		  (const CK_RV[]){CKR_MECHANISM_PARAM_INVALID, CKR_KEY_SIZE_RANGE, CKR_DATA_LEN_RANGE}, 3);
	F3->C_SessionCancel(h, CKF_SIGN);
	WANT("C_SignInit(PSS hashAlg SHA-384 with CKM_SHA256_RSA_PKCS_PSS)", F3->C_SignInit(h, &m_hash, keep_priv), CKR_MECHANISM_PARAM_INVALID);
	WANT("C_SignInit(PSS unknown MGF)", F3->C_SignInit(h, &m_mgf, keep_priv), CKR_MECHANISM_PARAM_INVALID);
	WANT("C_SignInit(CKM_RSA_PKCS_PSS)", F3->C_SignInit(h, &m_raw, keep_priv), CKR_OK);
	sl = sizeof sig;
	WANT("C_Sign(CKM_RSA_PKCS_PSS, 31-byte digest)", F3->C_Sign(h, MSG, 31, sig, &sl), CKR_DATA_LEN_RANGE);
	WANT("C_SignInit(CKM_RSA_PKCS_PSS)", F3->C_SignInit(h, &m_raw, keep_priv), CKR_OK, CKR_OPERATION_ACTIVE);
	WANT("C_SignUpdate(single-part CKM_RSA_PKCS_PSS)", F3->C_SignUpdate(h, MSG, 32), CKR_FUNCTION_NOT_SUPPORTED, CKR_MECHANISM_INVALID);
	F3->C_SessionCancel(h, CKF_SIGN);
	CK_RSA_PKCS_OAEP_PARAMS oaep = {CKM_SHA256, CKG_MGF1_SHA256, CKZ_DATA_SPECIFIED, NULL, 16};
	CK_MECHANISM m_oaep = {CKM_RSA_PKCS_OAEP, &oaep, sizeof oaep};
	WANT("C_EncryptInit(OAEP source NULL, length 16)", F3->C_EncryptInit(h, &m_oaep, keep_pub), CKR_MECHANISM_PARAM_INVALID, CKR_ARGUMENTS_BAD);
	oaep.pSourceData = small_in;
	oaep.ulSourceDataLen = ~(CK_ULONG)0;
	WANT("C_EncryptInit(OAEP source length ULONG_MAX)", F3->C_EncryptInit(h, &m_oaep, keep_pub), CKR_MECHANISM_PARAM_INVALID, CKR_ARGUMENTS_BAD);
	WANT("C_VerifyInit", F3->C_VerifyInit(h, &(CK_MECHANISM){CKM_SHA256_RSA_PKCS, NULL, 0}, keep_pub), CKR_OK);
	WANT("C_Verify(signature NULL, length 0)", F3->C_Verify(h, MSG, MSG_LEN, NULL, 0), CKR_SIGNATURE_LEN_RANGE, CKR_SIGNATURE_INVALID);
	WANT("C_DigestInit(SHA256)", F3->C_DigestInit(h, &(CK_MECHANISM){CKM_SHA256, NULL, 0}), CKR_OK);
	WANT("C_DigestKey(sensitive private key)", F3->C_DigestKey(h, keep_priv), CKR_KEY_INDIGESTIBLE, CKR_KEY_HANDLE_INVALID, CKR_FUNCTION_NOT_SUPPORTED);
	F3->C_SessionCancel(h, CKF_DIGEST);

	/* EC, when the token has it. */
	if (has_mech(slot, CKM_EC_KEY_PAIR_GEN)) {
		printf("note: the token lists CKM_EC_KEY_PAIR_GEN\n");
		CK_MECHANISM kg = {CKM_EC_KEY_PAIR_GEN, NULL, 0};
		CK_BYTE bad_oid[] = {0x06, 0x03, 0x2a, 0x03, 0x04};
		CK_BYTE not_der[] = {0x06, 0x7f, 0x01};
		CK_ATTRIBUTE pt[] = {{CKA_TOKEN, &no, sizeof no}, {CKA_EC_PARAMS, bad_oid, sizeof bad_oid}};
		CK_ATTRIBUTE st[] = {{CKA_TOKEN, &no, sizeof no}, {CKA_SIGN, &yes, sizeof yes}};
		WANT("C_GenerateKeyPair(EC, unknown curve OID)", F3->C_GenerateKeyPair(h, &kg, pt, 2, st, 2, &pub, &priv), CKR_CURVE_NOT_SUPPORTED);
		pt[1] = (CK_ATTRIBUTE){CKA_EC_PARAMS, not_der, sizeof not_der};
		WANT("C_GenerateKeyPair(EC, CKA_EC_PARAMS not DER)", F3->C_GenerateKeyPair(h, &kg, pt, 2, st, 2, &pub, &priv), CKR_ATTRIBUTE_VALUE_INVALID, CKR_CURVE_NOT_SUPPORTED, CKR_DOMAIN_PARAMS_INVALID);
		WANT("C_GenerateKeyPair(EC, no CKA_EC_PARAMS)", F3->C_GenerateKeyPair(h, &kg, pt, 1, st, 2, &pub, &priv), CKR_TEMPLATE_INCOMPLETE);
		if (WANT("C_GenerateKeyPair(EC P-256)", gen_ec(h, CK_FALSE, "ec", &pub, &priv), CKR_OK)) {
			CK_MECHANISM ecdsa = {CKM_ECDSA, NULL, 0};
			WANT("C_SignInit(CKM_ECDSA)", F3->C_SignInit(h, &ecdsa, priv), CKR_OK);
			sl = 63;
			WANT("C_Sign(ECDSA into 63 bytes)", F3->C_Sign(h, MSG, 32, sig, &sl), CKR_BUFFER_TOO_SMALL);
			check(sl == 64, "C_Sign(ECDSA, BUFFER_TOO_SMALL) reports 64");
			WANT("C_Sign(ECDSA, 64 KiB input)", F3->C_Sign(h, (CK_BYTE_PTR)e_huge, sizeof e_huge, sig, &sl), CKR_OK, CKR_DATA_LEN_RANGE);
			WANT("C_SignInit(CKM_ECDSA with an RSA key)", F3->C_SignInit(h, &ecdsa, keep_priv), CKR_KEY_TYPE_INCONSISTENT);
			CK_MECHANISM rsam = {CKM_SHA256_RSA_PKCS, NULL, 0};
			WANT("C_SignInit(CKM_SHA256_RSA_PKCS with an EC key)", F3->C_SignInit(h, &rsam, priv), CKR_KEY_TYPE_INCONSISTENT);
			WANT("C_VerifyInit(CKM_ECDSA)", F3->C_VerifyInit(h, &ecdsa, pub), CKR_OK);
			WANT("C_Verify(ECDSA 63-byte signature)", F3->C_Verify(h, MSG, 32, sig, 63), CKR_SIGNATURE_LEN_RANGE, CKR_SIGNATURE_INVALID);
		}
	} else {
		printf("note: the token does not list CKM_EC_KEY_PAIR_GEN\n");
	}
	F3->C_CloseSession(h);
}

/* table_closeall: C_CloseAllSessions on the real slot ends every session
 * and the login. */
static void table_closeall(void)
{
	CK_SESSION_HANDLE a = open_session(1), b = open_session(0);
	CK_SESSION_INFO si;
	WANT("C_CloseAllSessions(slot)", F3->C_CloseAllSessions(slot), CKR_OK);
	WANT("C_GetSessionInfo(after CloseAll)", F3->C_GetSessionInfo(a, &si), CKR_SESSION_HANDLE_INVALID);
	WANT("C_GetSessionInfo(R/O after CloseAll)", F3->C_GetSessionInfo(b, &si), CKR_SESSION_HANDLE_INVALID);
	WANT("C_GetSessionInfo(main after CloseAll)", F3->C_GetSessionInfo(main_h, &si), CKR_SESSION_HANDLE_INVALID);
	main_h = open_session(1);
	WANT("C_GetSessionInfo(new session)", F3->C_GetSessionInfo(main_h, &si), CKR_OK);
	check(si.state == CKS_RW_PUBLIC_SESSION, "closing every session logged the user out");
	ensure_login();
}

/* find_by_label finds objects of class cls labelled label; returns how many
 * (the first in *o). */
static int find_by_label(CK_SESSION_HANDLE h, CK_OBJECT_CLASS cls, const char *label, CK_OBJECT_HANDLE *o)
{
	CK_ATTRIBUTE t[] = {
		{CKA_CLASS, &cls, sizeof cls},
		{CKA_LABEL, (void *)label, strlen(label)},
	};
	CK_OBJECT_HANDLE found[8];
	CK_ULONG n = 0;
	MUST("find by label: init", F3->C_FindObjectsInit(h, t, 2));
	MUST("find by label", F3->C_FindObjects(h, found, 8, &n));
	MUST("find by label: final", F3->C_FindObjectsFinal(h));
	if (n > 0)
		*o = found[0];
	return (int)n;
}

/* integrity: the object count and the reference signature are unchanged. */
static void integrity(const char *when, long want_objects)
{
	char what[128];
	long n = count_objects(main_h);
	snprintf(what, sizeof what, "%s: %ld objects (before: %ld)", when, n, want_objects);
	check(n == want_objects, what);
	CK_BYTE sig[512];
	CK_ULONG sl = sizeof sig;
	snprintf(what, sizeof what, "%s: sign with keep", when);
	if (!WANT(what, sign_msg(main_h, keep_priv, sig, &sl), CKR_OK))
		return;
	snprintf(what, sizeof what, "%s: same signature as before", when);
	check(sl == ref_sig_len && memcmp(sig, ref_sig, sl) == 0, what);
	snprintf(what, sizeof what, "DATA sig-%s ", when);
	print_hex(what, sig, sl);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: badargs module so-pin user-pin\n");
		return 2;
	}
	SO_PIN = argv[2];
	USER_PIN = argv[3];
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_fault;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	pthread_t wd;
	pthread_create(&wd, NULL, watchdog, NULL);
	pthread_detach(wd);
	if (!load(argv[1]))
		return 1;

	/* 1. Before C_Initialize. */
	not_initialized("before C_Initialize");

	/* 2. C_Initialize. */
	CK_C_INITIALIZE_ARGS ia;
	memset(&ia, 0, sizeof ia);
	ia.pReserved = &ia;
	WANT("C_Initialize(pReserved set)", F3->C_Initialize(&ia), CKR_ARGUMENTS_BAD);
	memset(&ia, 0, sizeof ia);
	ia.CreateMutex = (CK_CREATEMUTEX)(void (*)(void))abort; /* never called: only 1 of 4 */
	WANT("C_Initialize(1 of 4 mutex functions)", F3->C_Initialize(&ia), CKR_ARGUMENTS_BAD);
	WANT("C_GetInfo after failed C_Initialize", F3->C_GetInfo((CK_INFO_PTR)info_buf), CKR_CRYPTOKI_NOT_INITIALIZED);
	memset(&ia, 0, sizeof ia);
	ia.flags = CKF_OS_LOCKING_OK;
	MUST("C_Initialize(CKF_OS_LOCKING_OK)", F3->C_Initialize(&ia));
	MUST("slot", first_slot(&slot));
	MUST("token set-up", setup_token(slot, SO_PIN, USER_PIN));
	main_h = open_session(1);
	MUST("C_Login(user)", F3->C_Login(main_h, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN)));
	MUST("generate keep", gen_rsa(main_h, 2048, CK_TRUE, "keep", &keep_pub, &keep_priv));
	ref_sig_len = sizeof ref_sig;
	MUST("reference signature", sign_msg(main_h, keep_priv, ref_sig, &ref_sig_len));
	CK_BYTE mod[512];
	long ml = get_attr(main_h, keep_pub, CKA_MODULUS, mod, sizeof mod);
	if (ml <= 0) {
		printf("FAIL read modulus\n");
		return 1;
	}
	print_hex("DATA modulus ", mod, (CK_ULONG)ml);
	printf("DATA message %s\n", (char *)MSG);
	print_hex("DATA sig-ref ", ref_sig, ref_sig_len);
	{
		CK_OBJECT_HANDLE d = data_object(main_h, CK_TRUE, "destroyed");
		MUST("destroy", F3->C_DestroyObject(main_h, d));
		destroyed_obj = d;
	}
	long objects = count_objects(main_h);
	printf("objects before: %ld\n", objects);

	/* 3. The sweep. 4. The table. */
	sweep();
	integrity("after-sweep", objects);
	table_general();
	table_sessions();
	table_login();
	table_objects();
	table_crypto();
	table_templates();
	table_closeall();
	integrity("after-table", objects);

	/* 5. C_Finalize, the calls again, C_Initialize again. */
	WANT("C_Finalize", F3->C_Finalize(NULL), CKR_OK);
	not_initialized("after C_Finalize");
	MUST("C_Initialize again", F3->C_Initialize(NULL));
	main_h = open_session(1);
	MUST("C_Login(user) again", F3->C_Login(main_h, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN)));
	/* Handles need not survive C_Finalize: find the key again. */
	check(find_by_label(main_h, CKO_PRIVATE_KEY, "keep", &keep_priv) == 1, "after C_Initialize again: one private key \"keep\"");
	integrity("after-reinit", objects);
	WANT("C_Finalize", F3->C_Finalize(NULL), CKR_OK);
	printf("DONE passes=%d fails=%d\n", passes, fails);
	return fails == 0 ? 0 : 1;
}
