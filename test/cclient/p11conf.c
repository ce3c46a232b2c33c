/*
 * p11conf.c: a conformance probe of the behaviours google/pkcs11test checks,
 * driven by test/p11conf_test.go against our module and against SoftHSMv2.
 *
 *   p11conf <module> <user PIN> <SO PIN>
 *
 * pkcs11test (a C++ gtest suite) cannot be fetched and built here, so this
 * probe is our own: one case per pkcs11test case we audited, named
 * "File.Case[/param]" after it, checking the same return codes, length
 * conventions, attribute rules and session states through the C ABI. Each
 * case runs in a fresh C_Initialize … C_Finalize, as pkcs11test's fixtures
 * do, and prints one line: "PASS name", "SKIP name: reason" or
 * "FAIL name: line: what, got X want Y". The exit status is 0 when the probe
 * ran to the end (failures are for the Go test to judge).
 *
 * Keys follow pkcs11test's fixtures: session objects labelled
 * "pkcs11test object", CKA_PRIVATE false, made in sessions that are not
 * logged in. Where pkcs11test makes a DES key only to test something else
 * (latching attributes, finding, wrapping, digesting a key, Tookan's
 * attacks), the probe runs the case twice: with DES as pkcs11test does
 * ("…/DES") and with AES ("…/AES"), so that a missing DES shows apart from
 * the behaviour under test.
 */
#include "check.h"

#define BAD_SLOT 88888UL
#define BAD_SESSION 99999UL
#define BAD_OBJECT 77777UL

static CK_FUNCTION_LIST_PTR F;
static CK_SLOT_ID slot;
static const char *upin, *sopin;
static CK_SESSION_HANDLE S;
static CK_FLAGS token_flags;

static const char *cname;
static int cfailed, cskipped;
static char cparam[32];

static CK_BBOOL T = CK_TRUE, FA = CK_FALSE;
static const char label[] = "pkcs11test object";

static void failf(int line, const char *what, unsigned long got, unsigned long want)
{
	if (!cfailed)
		printf("FAIL %s%s: line %d: %s, got 0x%lX want 0x%lX\n", cname, cparam, line, what, got, want);
	cfailed = 1;
}

/* failrv is failf for return values, by name. */
static void failrv(int line, const char *what, CK_RV got, CK_RV want)
{
	if (!cfailed) {
		printf("FAIL %s%s: line %d: %s, got %s", cname, cparam, line, what, rvname(got));
		printf(" want %s\n", rvname(want));
	}
	cfailed = 1;
}

#define RV(want, call)                                                      \
	do {                                                                \
		CK_RV r_ = (call);                                          \
		if (r_ != (CK_RV)(want))                                    \
			failrv(__LINE__, #call, r_, (CK_RV)(want));         \
	} while (0)
#define RV2(w1, w2, call)                                                   \
	do {                                                                \
		CK_RV r_ = (call);                                          \
		if (r_ != (CK_RV)(w1) && r_ != (CK_RV)(w2))                 \
			failrv(__LINE__, #call, r_, (CK_RV)(w1));           \
	} while (0)
#define OK(call) RV(CKR_OK, call)
#define EQ(want, got)                                                       \
	do {                                                                \
		unsigned long g_ = (unsigned long)(got), w_ = (unsigned long)(want); \
		if (g_ != w_)                                               \
			failf(__LINE__, #got, g_, w_);                      \
	} while (0)
#define TRUE_(cond) EQ(1, !!(cond))
#define SKIP(reason)                                                        \
	do {                                                                \
		if (!cfailed && !cskipped)                                  \
			printf("SKIP %s%s: %s\n", cname, cparam, reason);   \
		cskipped = 1;                                               \
		return;                                                     \
	} while (0)

/* Fixtures, as pkcs11test's. */
enum fixture { NONE, INIT, RO, RW, ROUSER, RWUSER, RWSO };

static void login(CK_USER_TYPE u)
{
	const char *p = u == CKU_SO ? sopin : upin;
	OK(F->C_Login(S, u, (CK_UTF8CHAR_PTR)p, strlen(p)));
}

static void run(const char *name, enum fixture fx, void (*fn)(void))
{
	cname = name;
	cfailed = cskipped = 0;
	S = BAD_SESSION;
	if (fx != NONE)
		OK(F->C_Initialize(NULL));
	if (fx >= RO) {
		CK_FLAGS fl = CKF_SERIAL_SESSION;
		if (fx == RW || fx == RWUSER || fx == RWSO)
			fl |= CKF_RW_SESSION;
		OK(F->C_OpenSession(slot, fl, NULL, NULL, &S));
		if (fx == ROUSER || fx == RWUSER)
			login(CKU_USER);
		if (fx == RWSO)
			login(CKU_SO);
	}
	if (!cfailed)
		fn();
	if (fx != NONE) {
		F->C_CloseAllSessions(slot);
		OK(F->C_Finalize(NULL));
	}
	if (!cfailed && !cskipped)
		printf("PASS %s%s\n", cname, cparam);
	fflush(stdout);
}

static int space_padded(const CK_UTF8CHAR *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (f[i] < 0x20 || f[i] > 0x7e)
			return 0;
	return 1;
}
#define PADDED(field) space_padded(field, sizeof(field))

/* ---- key fixtures ---- */

static CK_OBJECT_HANDLE secret_key(CK_MECHANISM_TYPE gen, CK_ULONG len, CK_ATTRIBUTE_TYPE *trues, int ntrue,
				   CK_ATTRIBUTE *extra, int nextra, CK_RV *rvp)
{
	CK_ATTRIBUTE a[16];
	int n = 0;
	a[n++] = (CK_ATTRIBUTE){CKA_LABEL, (void *)label, strlen(label)};
	for (int i = 0; i < ntrue; i++)
		a[n++] = (CK_ATTRIBUTE){trues[i], &T, 1};
	for (int i = 0; i < nextra; i++)
		a[n++] = extra[i];
	if (len)
		a[n++] = (CK_ATTRIBUTE){CKA_VALUE_LEN, &len, sizeof len};
	a[n++] = (CK_ATTRIBUTE){CKA_PRIVATE, &FA, 1};
	CK_MECHANISM m = {gen, NULL, 0};
	CK_OBJECT_HANDLE h = CK_INVALID_HANDLE;
	CK_RV rv = F->C_GenerateKey(S, &m, a, n, &h);
	if (rvp)
		*rvp = rv;
	return rv == CKR_OK ? h : CK_INVALID_HANDLE;
}

/* The secret key kind of a case: pkcs11test's DES or AES instead. */
static int use_des;
static CK_MECHANISM_TYPE kgen(void) { return use_des ? CKM_DES_KEY_GEN : CKM_AES_KEY_GEN; }
static CK_ULONG klen(void) { return use_des ? 0 : 16; }
static CK_MECHANISM_TYPE kecb(void) { return use_des ? CKM_DES_ECB : CKM_AES_ECB; }

static CK_OBJECT_HANDLE fixture_key(CK_ATTRIBUTE_TYPE *trues, int ntrue, CK_ATTRIBUTE *extra, int nextra)
{
	CK_RV rv;
	CK_OBJECT_HANDLE h = secret_key(kgen(), klen(), trues, ntrue, extra, nextra, &rv);
	if (rv != CKR_OK)
		failrv(__LINE__, use_des ? "C_GenerateKey(CKM_DES_KEY_GEN)" : "C_GenerateKey(CKM_AES_KEY_GEN)", rv, CKR_OK);
	return h;
}

static void keypair(CK_ATTRIBUTE_TYPE *pubt, int npub, CK_ATTRIBUTE_TYPE *privt, int npriv,
		    CK_OBJECT_HANDLE *pub, CK_OBJECT_HANDLE *priv)
{
	CK_ULONG bits = 1024;
	CK_BYTE e[] = {1, 0, 1};
	CK_ATTRIBUTE pa[12], sa[12];
	int np = 0, ns = 0;
	pa[np++] = (CK_ATTRIBUTE){CKA_LABEL, (void *)label, strlen(label)};
	sa[ns++] = (CK_ATTRIBUTE){CKA_LABEL, (void *)label, strlen(label)};
	for (int i = 0; i < npub; i++)
		pa[np++] = (CK_ATTRIBUTE){pubt[i], &T, 1};
	for (int i = 0; i < npriv; i++)
		sa[ns++] = (CK_ATTRIBUTE){privt[i], &T, 1};
	pa[np++] = (CK_ATTRIBUTE){CKA_MODULUS_BITS, &bits, sizeof bits};
	pa[np++] = (CK_ATTRIBUTE){CKA_PUBLIC_EXPONENT, e, sizeof e};
	pa[np++] = (CK_ATTRIBUTE){CKA_PRIVATE, &FA, 1};
	sa[ns++] = (CK_ATTRIBUTE){CKA_PRIVATE, &FA, 1};
	CK_MECHANISM m = {CKM_RSA_PKCS_KEY_PAIR_GEN, NULL, 0};
	*pub = *priv = CK_INVALID_HANDLE;
	OK(F->C_GenerateKeyPair(S, &m, pa, np, sa, ns, pub, priv));
}

static void fill(CK_BYTE *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (CK_BYTE)rand();
}

/* ================= init.cc ================= */

static void init_simple(void) { OK(F->C_Initialize(NULL)); OK(F->C_Finalize(NULL)); }

static void init_uninitialized(void)
{
	CK_SESSION_HANDLE h;
	RV(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &h));
	RV(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_CloseSession(1));
	CK_MECHANISM m = {CKM_AES_ECB, NULL, 0};
	RV(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_EncryptInit(1, &m, 1));
	CK_OBJECT_CLASS c = CKO_DATA;
	CK_ATTRIBUTE a[] = {{CKA_CLASS, &c, sizeof c}};
	CK_OBJECT_HANDLE o;
	RV(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_CreateObject(1, a, 1, &o));
	RV(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_FindObjectsInit(1, a, 1));
}

static void init_double_finalize(void)
{
	OK(F->C_Initialize(NULL));
	OK(F->C_Finalize(NULL));
	RV(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_Finalize(NULL));
}

static void init_unexpected_finalize(void) { RV(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_Finalize(NULL)); }

static void init_args_bad_reserved(void)
{
	CK_C_INITIALIZE_ARGS a;
	memset(&a, 0, sizeof a);
	a.pReserved = (void *)1;
	RV(CKR_ARGUMENTS_BAD, F->C_Initialize(&a));
}

static void init_args_no_new_threads(void)
{
	CK_C_INITIALIZE_ARGS a;
	memset(&a, 0, sizeof a);
	a.flags = CKF_LIBRARY_CANT_CREATE_OS_THREADS;
	CK_RV rv = F->C_Initialize(&a);
	if (rv == CKR_OK)
		OK(F->C_Finalize(NULL));
	else
		EQ(CKR_NEED_TO_CREATE_THREADS, rv);
}

static void init_args_no_lock(void)
{
	CK_C_INITIALIZE_ARGS a;
	memset(&a, 0, sizeof a);
	OK(F->C_Initialize(&a));
	OK(F->C_Finalize(NULL));
}

static void init_args_internal_locks(void)
{
	CK_C_INITIALIZE_ARGS a;
	memset(&a, 0, sizeof a);
	a.flags = CKF_OS_LOCKING_OK;
	OK(F->C_Initialize(&a));
	OK(F->C_Finalize(NULL));
}

static CK_RV mx_create(CK_VOID_PTR_PTR p) { *p = (void *)1; return CKR_OK; }
static CK_RV mx_other(CK_VOID_PTR p) { (void)p; return CKR_OK; }

static void my_locks(CK_FLAGS flags)
{
	CK_C_INITIALIZE_ARGS a;
	memset(&a, 0, sizeof a);
	a.CreateMutex = mx_create;
	a.DestroyMutex = mx_other;
	a.LockMutex = mx_other;
	a.UnlockMutex = mx_other;
	a.flags = flags;
	CK_RV rv = F->C_Initialize(&a);
	if (rv == CKR_CANT_LOCK)
		SKIP("application-provided locking functions not supported");
	OK(rv);
	OK(F->C_Finalize(NULL));
}
static void init_args_my_locks(void) { my_locks(0); }
static void init_args_my_or_internal_locks(void) { my_locks(CKF_OS_LOCKING_OK); }

static void init_nested_fail(void) { RV(CKR_CRYPTOKI_ALREADY_INITIALIZED, F->C_Initialize(NULL)); }
static void failed_termination(void) { RV(CKR_ARGUMENTS_BAD, F->C_Finalize((void *)1)); }

static void get_info(void)
{
	CK_INFO i;
	memset(&i, 0, sizeof i);
	OK(F->C_GetInfo(&i));
	TRUE_(PADDED(i.manufacturerID));
	TRUE_(PADDED(i.libraryDescription));
	TRUE_(i.cryptokiVersion.major >= 2);
}
static void get_info_fail(void) { RV2(CKR_ARGUMENTS_BAD, CKR_FUNCTION_FAILED, F->C_GetInfo(NULL)); }
static void get_info_no_init(void)
{
	CK_INFO i;
	RV(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_GetInfo(&i));
}
static void get_function_list(void)
{
	CK_FUNCTION_LIST_PTR l;
	OK(F->C_GetFunctionList(&l));
	EQ(0, memcmp(F, l, sizeof *l));
}
static void get_function_list_fail(void) { RV2(CKR_ARGUMENTS_BAD, CKR_FUNCTION_FAILED, F->C_GetFunctionList(NULL)); }

/* ================= slot.cc ================= */

static void enumerate_slots(void)
{
	CK_ULONG n;
	OK(F->C_GetSlotList(CK_FALSE, NULL, &n));
	TRUE_(n > 0);
	CK_SLOT_ID ids[16];
	if (n > 16)
		n = 16;
	OK(F->C_GetSlotList(CK_FALSE, ids, &n));
	for (CK_ULONG i = 0; i < n; i++) {
		CK_SLOT_INFO si;
		OK(F->C_GetSlotInfo(ids[i], &si));
		TRUE_(PADDED(si.slotDescription));
		TRUE_(PADDED(si.manufacturerID));
		EQ(0, si.flags & ~(CK_FLAGS)(CKF_TOKEN_PRESENT | CKF_REMOVABLE_DEVICE | CKF_HW_SLOT));
		if (!(si.flags & CKF_TOKEN_PRESENT))
			continue;
		CK_TOKEN_INFO ti;
		OK(F->C_GetTokenInfo(ids[i], &ti));
		TRUE_(PADDED(ti.label));
		TRUE_(PADDED(ti.manufacturerID));
		TRUE_(PADDED(ti.model));
		TRUE_(PADDED(ti.serialNumber));
		CK_FLAGS all = CKF_RNG | CKF_WRITE_PROTECTED | CKF_LOGIN_REQUIRED | CKF_USER_PIN_INITIALIZED |
			       CKF_RESTORE_KEY_NOT_NEEDED | CKF_CLOCK_ON_TOKEN | CKF_PROTECTED_AUTHENTICATION_PATH |
			       CKF_DUAL_CRYPTO_OPERATIONS | CKF_TOKEN_INITIALIZED | CKF_SECONDARY_AUTHENTICATION |
			       CKF_USER_PIN_COUNT_LOW | CKF_USER_PIN_FINAL_TRY | CKF_USER_PIN_LOCKED |
			       CKF_USER_PIN_TO_BE_CHANGED | CKF_SO_PIN_COUNT_LOW | CKF_SO_PIN_FINAL_TRY |
			       CKF_SO_PIN_LOCKED | CKF_SO_PIN_TO_BE_CHANGED;
		EQ(0, ti.flags & ~all);
		if (ti.flags & CKF_CLOCK_ON_TOKEN) {
			for (int k = 0; k < 14; k++)
				TRUE_(ti.utcTime[k] >= '0' && ti.utcTime[k] <= '9');
			TRUE_(ti.utcTime[14] == '0' && ti.utcTime[15] == '0');
		}
	}
}

/* The sets of PKCS#11 2.40 table 34 pkcs11test allows flags from, for the
 * mechanisms either module offers. */
static int in(CK_MECHANISM_TYPE m, const CK_MECHANISM_TYPE *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == m)
			return 1;
	return 0;
}
#define IN(m, set) in(m, set, sizeof set / sizeof set[0])

static const CK_MECHANISM_TYPE crypt_set[] = {
	CKM_RSA_PKCS, CKM_RSA_PKCS_OAEP, CKM_RSA_X_509, CKM_AES_ECB, CKM_AES_CBC, CKM_AES_CBC_PAD,
	CKM_DES_ECB, CKM_DES_CBC, CKM_DES_CBC_PAD, CKM_DES3_ECB, CKM_DES3_CBC, CKM_DES3_CBC_PAD};
static const CK_MECHANISM_TYPE sign_set[] = {
	CKM_RSA_PKCS, CKM_RSA_PKCS_PSS, CKM_RSA_X_509, CKM_MD5_RSA_PKCS, CKM_SHA1_RSA_PKCS,
	CKM_SHA256_RSA_PKCS, CKM_SHA384_RSA_PKCS, CKM_SHA512_RSA_PKCS, CKM_SHA1_RSA_PKCS_PSS,
	CKM_SHA256_RSA_PKCS_PSS, CKM_SHA384_RSA_PKCS_PSS, CKM_SHA512_RSA_PKCS_PSS, CKM_DSA, CKM_DSA_SHA1,
	CKM_ECDSA, CKM_ECDSA_SHA1, CKM_AES_MAC_GENERAL, CKM_AES_MAC, CKM_DES_MAC_GENERAL, CKM_DES_MAC,
	CKM_DES3_MAC_GENERAL, CKM_DES3_MAC, CKM_MD5_HMAC_GENERAL, CKM_MD5_HMAC, CKM_SHA_1_HMAC_GENERAL,
	CKM_SHA_1_HMAC, CKM_SHA256_HMAC_GENERAL, CKM_SHA256_HMAC, CKM_SHA384_HMAC_GENERAL, CKM_SHA384_HMAC,
	CKM_SHA512_HMAC_GENERAL, CKM_SHA512_HMAC};
static const CK_MECHANISM_TYPE recover_set[] = {CKM_RSA_PKCS, CKM_RSA_X_509};
static const CK_MECHANISM_TYPE digest_set[] = {CKM_MD5, CKM_SHA_1, CKM_SHA256, CKM_SHA384, CKM_SHA512};
static const CK_MECHANISM_TYPE gen_set[] = {
	CKM_RSA_PKCS_KEY_PAIR_GEN, CKM_RSA_X9_31_KEY_PAIR_GEN, CKM_DSA_KEY_PAIR_GEN, CKM_DSA_PARAMETER_GEN,
	CKM_EC_KEY_PAIR_GEN, CKM_DH_PKCS_KEY_PAIR_GEN, CKM_DH_PKCS_PARAMETER_GEN, CKM_X9_42_DH_KEY_PAIR_GEN,
	CKM_X9_42_DH_PARAMETER_GEN, CKM_GENERIC_SECRET_KEY_GEN, CKM_AES_KEY_GEN, CKM_DES_KEY_GEN,
	CKM_DES2_KEY_GEN, CKM_DES3_KEY_GEN};
static const CK_MECHANISM_TYPE wrap_set[] = {
	CKM_RSA_PKCS, CKM_RSA_PKCS_OAEP, CKM_RSA_X_509, CKM_AES_ECB, CKM_AES_CBC, CKM_AES_CBC_PAD,
	CKM_DES_ECB, CKM_DES_CBC, CKM_DES_CBC_PAD, CKM_DES3_ECB, CKM_DES3_CBC, CKM_DES3_CBC_PAD};
static const CK_MECHANISM_TYPE derive_set[] = {
	CKM_ECDH1_DERIVE, CKM_ECDH1_COFACTOR_DERIVE, CKM_ECMQV_DERIVE, CKM_DH_PKCS_DERIVE, CKM_X9_42_DH_DERIVE,
	CKM_DES_ECB_ENCRYPT_DATA, CKM_DES_CBC_ENCRYPT_DATA, CKM_DES3_ECB_ENCRYPT_DATA, CKM_DES3_CBC_ENCRYPT_DATA,
	CKM_AES_ECB_ENCRYPT_DATA, CKM_AES_CBC_ENCRYPT_DATA, CKM_MD5_KEY_DERIVATION, CKM_SHA1_KEY_DERIVATION,
	CKM_SHA256_KEY_DERIVATION, CKM_SHA384_KEY_DERIVATION, CKM_SHA512_KEY_DERIVATION,
	CKM_CONCATENATE_BASE_AND_KEY, CKM_CONCATENATE_BASE_AND_DATA, CKM_CONCATENATE_DATA_AND_BASE,
	CKM_XOR_BASE_AND_DATA, CKM_EXTRACT_KEY_FROM_KEY};

static void enumerate_mechanisms(void)
{
	CK_ULONG n;
	OK(F->C_GetMechanismList(slot, NULL, &n));
	CK_MECHANISM_TYPE *l = calloc(n + 1, sizeof *l);
	OK(F->C_GetMechanismList(slot, l, &n));
	char extra[2048] = "";
	int bad = 0;
	for (CK_ULONG i = 0; i < n && !cfailed; i++) {
		CK_MECHANISM_INFO mi;
		OK(F->C_GetMechanismInfo(slot, l[i], &mi));
		TRUE_(mi.ulMinKeySize <= mi.ulMaxKeySize);
		CK_FLAGS want = CKF_HW;
		if (IN(l[i], crypt_set))
			want |= CKF_ENCRYPT | CKF_DECRYPT;
		if (IN(l[i], sign_set))
			want |= CKF_SIGN | CKF_VERIFY;
		if (IN(l[i], recover_set))
			want |= CKF_SIGN_RECOVER | CKF_VERIFY_RECOVER;
		if (IN(l[i], digest_set))
			want |= CKF_DIGEST;
		if (IN(l[i], gen_set))
			want |= CKF_GENERATE | CKF_GENERATE_KEY_PAIR;
		if (IN(l[i], wrap_set))
			want |= CKF_WRAP | CKF_UNWRAP;
		if (IN(l[i], derive_set))
			want |= CKF_DERIVE;
		if (mi.flags & ~want) {
			bad++;
			size_t k = strlen(extra);
			if (k < sizeof extra - 40)
				snprintf(extra + k, sizeof extra - k, " 0x%lX(+0x%lX)", l[i], mi.flags & ~want);
		}
	}
	free(l);
	if (bad && !cfailed) {
		printf("FAIL %s: %d of %lu mechanisms have flags outside pkcs11test's table:%s\n", cname, bad, n, extra);
		cfailed = 1;
	}
}

static void get_slot_list(void)
{
	CK_ULONG n;
	OK(F->C_GetSlotList(CK_FALSE, NULL, &n));
	CK_SLOT_ID ids[16];
	if (n > 16)
		n = 16;
	OK(F->C_GetSlotList(CK_FALSE, ids, &n));
	for (CK_ULONG i = 0; i < n; i++) {
		RV2(CKR_ARGUMENTS_BAD, CKR_FUNCTION_FAILED, F->C_GetSlotInfo(ids[i], NULL));
		CK_SLOT_INFO si;
		OK(F->C_GetSlotInfo(ids[i], &si));
		if (!(si.flags & CKF_TOKEN_PRESENT)) {
			CK_TOKEN_INFO ti;
			RV(CKR_TOKEN_NOT_PRESENT, F->C_GetTokenInfo(ids[i], &ti));
		}
	}
	CK_ULONG m;
	OK(F->C_GetSlotList(CK_TRUE, NULL, &m));
	CK_SLOT_ID tids[16];
	if (m > 16)
		m = 16;
	OK(F->C_GetSlotList(CK_TRUE, tids, &m));
	for (CK_ULONG i = 0; i < m; i++) {
		int found = 0;
		for (CK_ULONG j = 0; j < n; j++)
			found |= ids[j] == tids[i];
		TRUE_(found);
		RV(CKR_ARGUMENTS_BAD, F->C_GetTokenInfo(tids[i], NULL));
	}
}

static void get_slot_list_too_small(void)
{
	CK_ULONG n;
	OK(F->C_GetSlotList(CK_FALSE, NULL, &n));
	if (n < 2)
		SKIP("one slot");
	CK_SLOT_ID ids[16];
	CK_ULONG k = n - 1;
	RV(CKR_BUFFER_TOO_SMALL, F->C_GetSlotList(CK_FALSE, ids, &k));
	EQ(n, k);
	k = n + 3 > 16 ? 16 : n + 3;
	OK(F->C_GetSlotList(CK_FALSE, ids, &k));
	EQ(n, k);
}

static void get_slot_list_args_bad(void) { RV2(CKR_ARGUMENTS_BAD, CKR_FUNCTION_FAILED, F->C_GetSlotList(CK_FALSE, NULL, NULL)); }

static void get_slot_info_fail(void)
{
	CK_SLOT_INFO si;
	RV(CKR_SLOT_ID_INVALID, F->C_GetSlotInfo(BAD_SLOT, &si));
	RV2(CKR_ARGUMENTS_BAD, CKR_FUNCTION_FAILED, F->C_GetSlotInfo(slot, NULL));
}

static void get_token_info_fail(void)
{
	CK_TOKEN_INFO ti;
	RV(CKR_SLOT_ID_INVALID, F->C_GetTokenInfo(BAD_SLOT, &ti));
	RV(CKR_ARGUMENTS_BAD, F->C_GetTokenInfo(slot, NULL));
}

static void wait_for_slot_event(void)
{
	CK_SLOT_ID s;
	CK_RV rv = F->C_WaitForSlotEvent(CKF_DONT_BLOCK, &s, NULL);
	if (rv == CKR_FUNCTION_NOT_SUPPORTED)
		SKIP("C_WaitForSlotEvent not supported");
	RV(CKR_NO_EVENT, F->C_WaitForSlotEvent(CKF_DONT_BLOCK, &s, NULL));
}

static void mechanism_list_errors(void)
{
	RV(CKR_ARGUMENTS_BAD, F->C_GetMechanismList(slot, NULL, NULL));
	CK_ULONG n;
	RV(CKR_SLOT_ID_INVALID, F->C_GetMechanismList(BAD_SLOT, NULL, &n));
	OK(F->C_GetMechanismList(slot, NULL, &n));
	CK_MECHANISM_TYPE *l = calloc(n + 4, sizeof *l);
	CK_ULONG k = n - 1;
	RV(CKR_BUFFER_TOO_SMALL, F->C_GetMechanismList(slot, l, &k));
	EQ(n, k);
	k = n + 3;
	OK(F->C_GetMechanismList(slot, l, &k));
	EQ(n, k);
	free(l);
	CK_MECHANISM_INFO mi;
	RV(CKR_MECHANISM_INVALID, F->C_GetMechanismInfo(slot, CKM_VENDOR_DEFINED + 1, &mi));
	RV(CKR_SLOT_ID_INVALID, F->C_GetMechanismInfo(BAD_SLOT, CKM_RSA_PKCS_KEY_PAIR_GEN, &mi));
	RV2(CKR_ARGUMENTS_BAD, CKR_FUNCTION_FAILED, F->C_GetMechanismInfo(slot, CKM_RSA_PKCS_KEY_PAIR_GEN, NULL));
}

static void slot_no_init(void)
{
	CK_ULONG n;
	RV(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_GetSlotList(CK_FALSE, NULL, &n));
	CK_SLOT_INFO si;
	RV(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_GetSlotInfo(slot, &si));
	CK_TOKEN_INFO ti;
	RV(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_GetTokenInfo(slot, &ti));
	CK_SLOT_ID s;
	RV(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_WaitForSlotEvent(CKF_DONT_BLOCK, &s, NULL));
	RV(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_GetMechanismList(slot, NULL, &n));
	CK_MECHANISM_INFO mi;
	RV(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_GetMechanismInfo(slot, CKM_RSA_PKCS_KEY_PAIR_GEN, &mi));
	CK_UTF8CHAR lab[32];
	memset(lab, ' ', sizeof lab);
	RV(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_InitToken(BAD_SLOT, (CK_UTF8CHAR_PTR)sopin, strlen(sopin), lab));
	RV(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_InitPIN(BAD_SESSION, (CK_UTF8CHAR_PTR)upin, strlen(upin)));
	RV(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_SetPIN(BAD_SESSION, (CK_UTF8CHAR_PTR)upin, strlen(upin),
						      (CK_UTF8CHAR_PTR)upin, strlen(upin)));
}

static void token_init_with_session(void)
{
	CK_UTF8CHAR lab[32];
	memset(lab, ' ', sizeof lab);
	RV(CKR_SESSION_EXISTS, F->C_InitToken(slot, (CK_UTF8CHAR_PTR)sopin, strlen(sopin), lab));
}

static void token_init_invalid(void)
{
	CK_UTF8CHAR lab[32];
	memset(lab, ' ', sizeof lab);
	RV(CKR_PIN_INCORRECT, F->C_InitToken(slot, (CK_UTF8CHAR_PTR)"wrong", 5, lab));
	RV(CKR_SLOT_ID_INVALID, F->C_InitToken(BAD_SLOT, (CK_UTF8CHAR_PTR)sopin, strlen(sopin), lab));
}

/* token_init re-initialises the token (pkcs11test -I, run last: it wipes
 * the token), sets the user PIN as the SO and logs the user in. */
static void token_init(void)
{
	CK_TOKEN_INFO ti;
	OK(F->C_GetTokenInfo(slot, &ti));
	OK(F->C_InitToken(slot, (CK_UTF8CHAR_PTR)sopin, strlen(sopin), ti.label));
	OK(F->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &S));
	login(CKU_SO);
	OK(F->C_InitPIN(S, (CK_UTF8CHAR_PTR)upin, strlen(upin)));
	OK(F->C_Logout(S));
	OK(F->C_CloseSession(S));
	OK(F->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &S));
	login(CKU_USER);
	OK(F->C_Logout(S));
}

/* ================= session.cc ================= */

static void open_session_errors(void)
{
	CK_SESSION_HANDLE h = 0;
	RV(CKR_SESSION_PARALLEL_NOT_SUPPORTED, F->C_OpenSession(slot, 0, NULL, NULL, &h));
	RV(CKR_SLOT_ID_INVALID, F->C_OpenSession(BAD_SLOT, CKF_SERIAL_SESSION, NULL, NULL, &h));
	RV2(CKR_ARGUMENTS_BAD, CKR_FUNCTION_FAILED, F->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, NULL));
}

static void closed_session_errors(void)
{
	CK_SESSION_HANDLE h;
	OK(F->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &h));
	OK(F->C_CloseSession(h));
	CK_SESSION_INFO i;
	RV(CKR_SESSION_HANDLE_INVALID, F->C_GetSessionInfo(h, &i));
	RV(CKR_SESSION_HANDLE_INVALID, F->C_CloseSession(h));
}

static void parallel_sessions(void)
{
	CK_FLAGS ro = CKF_SERIAL_SESSION, rw = CKF_SERIAL_SESSION | CKF_RW_SESSION;
	CK_SESSION_HANDLE s1, s2, s3;
	OK(F->C_OpenSession(slot, ro, NULL, NULL, &s1));
	OK(F->C_OpenSession(slot, ro, NULL, NULL, &s2));
	OK(F->C_OpenSession(slot, rw, NULL, NULL, &s3));
	CK_SESSION_INFO i1, i2, i3;
	OK(F->C_GetSessionInfo(s1, &i1));
	OK(F->C_GetSessionInfo(s2, &i2));
	OK(F->C_GetSessionInfo(s3, &i3));
	EQ(CKS_RO_PUBLIC_SESSION, i1.state);
	EQ(CKS_RO_PUBLIC_SESSION, i2.state);
	EQ(CKS_RW_PUBLIC_SESSION, i3.state);
	EQ(ro, i1.flags);
	EQ(ro, i2.flags);
	EQ(rw, i3.flags);
	EQ(slot, i1.slotID);
	EQ(slot, i3.slotID);
	OK(F->C_Login(s1, CKU_USER, (CK_UTF8CHAR_PTR)upin, strlen(upin)));
	OK(F->C_GetSessionInfo(s1, &i1));
	OK(F->C_GetSessionInfo(s2, &i2));
	OK(F->C_GetSessionInfo(s3, &i3));
	EQ(CKS_RO_USER_FUNCTIONS, i1.state);
	EQ(CKS_RO_USER_FUNCTIONS, i2.state);
	EQ(CKS_RW_USER_FUNCTIONS, i3.state);
	OK(F->C_Logout(s3));
	OK(F->C_GetSessionInfo(s1, &i1));
	OK(F->C_GetSessionInfo(s3, &i3));
	EQ(CKS_RO_PUBLIC_SESSION, i1.state);
	EQ(CKS_RW_PUBLIC_SESSION, i3.state);
	OK(F->C_CloseSession(s2));
	OK(F->C_GetSessionInfo(s1, &i1));
	RV(CKR_SESSION_HANDLE_INVALID, F->C_GetSessionInfo(s2, &i2));
	RV(CKR_SLOT_ID_INVALID, F->C_CloseAllSessions(BAD_SLOT));
	OK(F->C_GetSessionInfo(s1, &i1));
	OK(F->C_GetSessionInfo(s3, &i3));
	OK(F->C_CloseAllSessions(slot));
	RV(CKR_SESSION_HANDLE_INVALID, F->C_GetSessionInfo(s1, &i1));
	RV(CKR_SESSION_HANDLE_INVALID, F->C_GetSessionInfo(s3, &i3));
	RV(CKR_SESSION_HANDLE_INVALID, F->C_CloseSession(s1));
	RV(CKR_SESSION_HANDLE_INVALID, F->C_CloseSession(s3));
	OK(F->C_CloseAllSessions(slot));
}

static void invalid_session_info(void)
{
	RV(CKR_ARGUMENTS_BAD, F->C_GetSessionInfo(S, NULL));
	CK_SESSION_INFO i;
	RV(CKR_SESSION_HANDLE_INVALID, F->C_GetSessionInfo(BAD_SESSION, &i));
	RV(CKR_FUNCTION_NOT_PARALLEL, F->C_GetFunctionStatus(S));
	RV(CKR_FUNCTION_NOT_PARALLEL, F->C_CancelFunction(S));
	RV(CKR_SESSION_HANDLE_INVALID, F->C_CloseSession(BAD_SESSION));
}

static void session_info(void)
{
	CK_SESSION_INFO i;
	OK(F->C_GetSessionInfo(S, &i));
	int rw = (i.flags & CKF_RW_SESSION) != 0;
	EQ(slot, i.slotID);
	EQ(rw ? CKS_RW_PUBLIC_SESSION : CKS_RO_PUBLIC_SESSION, i.state);
	login(CKU_USER);
	OK(F->C_GetSessionInfo(S, &i));
	EQ(rw ? CKS_RW_USER_FUNCTIONS : CKS_RO_USER_FUNCTIONS, i.state);
	OK(F->C_Logout(S));
	OK(F->C_GetSessionInfo(S, &i));
	EQ(rw ? CKS_RW_PUBLIC_SESSION : CKS_RO_PUBLIC_SESSION, i.state);
}

static void operation_state(void)
{
	CK_ULONG n;
	CK_RV rv = F->C_GetOperationState(S, NULL, &n);
	if (rv == CKR_FUNCTION_NOT_SUPPORTED)
		SKIP("C_GetOperationState not supported");
	EQ(CKR_OPERATION_NOT_INITIALIZED, rv);
	RV(CKR_SESSION_HANDLE_INVALID, F->C_GetOperationState(BAD_SESSION, NULL, &n));
	RV(CKR_ARGUMENTS_BAD, F->C_GetOperationState(S, NULL, NULL));
}

/* ================= login.cc ================= */

static void user_login_wrong_pin(void)
{
	RV(CKR_PIN_INCORRECT, F->C_Login(S, CKU_USER, (CK_UTF8CHAR_PTR)"simply-wrong", 12));
	CK_TOKEN_INFO ti;
	OK(F->C_GetTokenInfo(slot, &ti));
	TRUE_(ti.flags & CKF_USER_PIN_COUNT_LOW);
	login(CKU_USER);
	OK(F->C_Logout(S));
	OK(F->C_GetTokenInfo(slot, &ti));
	TRUE_(!(ti.flags & CKF_USER_PIN_COUNT_LOW));
}

static void user_login_invalid(void)
{
	RV(CKR_SESSION_HANDLE_INVALID, F->C_Login(BAD_SESSION, CKU_USER, (CK_UTF8CHAR_PTR)upin, strlen(upin)));
	RV(CKR_USER_TYPE_INVALID, F->C_Login(S, 99, (CK_UTF8CHAR_PTR)upin, strlen(upin)));
}

static void so_login_ro_fail(void)
{
	RV(CKR_SESSION_READ_ONLY_EXISTS, F->C_Login(S, CKU_SO, (CK_UTF8CHAR_PTR)sopin, strlen(sopin)));
}

static void so_login_other_ro_fail(void)
{
	CK_SESSION_HANDLE h;
	OK(F->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &h));
	RV(CKR_SESSION_READ_ONLY_EXISTS, F->C_Login(S, CKU_SO, (CK_UTF8CHAR_PTR)sopin, strlen(sopin)));
	OK(F->C_CloseSession(h));
}

static void logout_invalid(void) { RV(CKR_SESSION_HANDLE_INVALID, F->C_Logout(BAD_SESSION)); }

static void user_login_already(void)
{
	RV(CKR_USER_ALREADY_LOGGED_IN, F->C_Login(S, CKU_USER, (CK_UTF8CHAR_PTR)upin, strlen(upin)));
}

static void so_login_after_user(void)
{
	RV2(CKR_SESSION_READ_ONLY_EXISTS, CKR_USER_ANOTHER_ALREADY_LOGGED_IN,
	    F->C_Login(S, CKU_SO, (CK_UTF8CHAR_PTR)sopin, strlen(sopin)));
}

static void so_login(void)
{
	CK_SESSION_INFO i;
	OK(F->C_GetSessionInfo(S, &i));
	EQ(CKS_RW_PUBLIC_SESSION, i.state);
	login(CKU_SO);
	OK(F->C_GetSessionInfo(S, &i));
	EQ(CKS_RW_SO_FUNCTIONS, i.state);
	OK(F->C_Logout(S));
	OK(F->C_GetSessionInfo(S, &i));
	EQ(CKS_RW_PUBLIC_SESSION, i.state);
	RV(CKR_USER_NOT_LOGGED_IN, F->C_Logout(S));
}

static void so_session_fail(void)
{
	CK_SESSION_HANDLE h;
	RV(CKR_SESSION_READ_WRITE_SO_EXISTS, F->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &h));
	RV(CKR_USER_ANOTHER_ALREADY_LOGGED_IN, F->C_Login(S, CKU_USER, (CK_UTF8CHAR_PTR)upin, strlen(upin)));
}

/* ================= object.cc ================= */

static CK_BYTE deadbeef[] = {0xDE, 0xAD, 0xBE, 0xEF};
static CK_UTF8CHAR app[] = "pkcs11test";

/* objects finds with a template, stride objects at a time. */
static int objects(CK_ATTRIBUTE *t, CK_ULONG n, CK_ULONG stride, CK_OBJECT_HANDLE *out, int max)
{
	int got = 0;
	OK(F->C_FindObjectsInit(S, t, n));
	for (;;) {
		CK_OBJECT_HANDLE buf[1024];
		CK_ULONG c = 0;
		OK(F->C_FindObjects(S, buf, stride, &c));
		if (c == 0 || cfailed)
			break;
		for (CK_ULONG i = 0; i < c; i++)
			if (got < max)
				out[got++] = buf[i];
	}
	OK(F->C_FindObjectsFinal(S));
	return got;
}

static int cmp_h(const void *a, const void *b)
{
	CK_OBJECT_HANDLE x = *(const CK_OBJECT_HANDLE *)a, y = *(const CK_OBJECT_HANDLE *)b;
	return x < y ? -1 : x > y;
}

/* same reports whether two handle lists hold the same set. */
static int same(CK_OBJECT_HANDLE *a, int na, CK_OBJECT_HANDLE *b, int nb)
{
	if (na != nb)
		return 0;
	qsort(a, na, sizeof *a, cmp_h);
	qsort(b, nb, sizeof *b, cmp_h);
	return memcmp(a, b, na * sizeof *a) == 0;
}

static void enumerate_objects(void)
{
	CK_SESSION_INFO si;
	OK(F->C_GetSessionInfo(S, &si));
	CK_OBJECT_HANDLE h[512];
	int n = objects(NULL, 0, 1, h, 512);
	for (int i = 0; i < n; i++) {
		CK_ULONG size;
		OK(F->C_GetObjectSize(S, h[i], &size));
		if (si.state == CKS_RO_PUBLIC_SESSION || si.state == CKS_RW_PUBLIC_SESSION) {
			CK_BBOOL p = 9;
			CK_ATTRIBUTE a = {CKA_PRIVATE, &p, 1};
			OK(F->C_GetAttributeValue(S, h[i], &a, 1));
			EQ(CK_FALSE, p);
		}
	}
	CK_OBJECT_HANDLE h2[512], h3[512];
	int n2 = objects(NULL, 0, 10, h2, 512), n3 = objects(NULL, 0, 1024, h3, 512);
	TRUE_(same(h, n, h2, n2));
	TRUE_(same(h, n, h3, n3));
}

static CK_OBJECT_HANDLE data_object(const char *lab)
{
	CK_OBJECT_CLASS c = CKO_DATA;
	CK_ATTRIBUTE a[] = {{CKA_CLASS, &c, sizeof c}, {CKA_TOKEN, &FA, 1}, {CKA_APPLICATION, app, sizeof app},
			    {CKA_VALUE, deadbeef, sizeof deadbeef}, {CKA_LABEL, (void *)lab, strlen(lab)}};
	CK_OBJECT_HANDLE h = CK_INVALID_HANDLE;
	OK(F->C_CreateObject(S, a, 5, &h));
	return h;
}

static void create_copy_destroy(void)
{
	CK_OBJECT_CLASS c = CKO_DATA;
	CK_UTF8CHAR lab[] = "OldLabel";
	CK_ATTRIBUTE a[] = {{CKA_CLASS, &c, sizeof c}, {CKA_TOKEN, &FA, 1}, {CKA_APPLICATION, app, sizeof app},
			    {CKA_VALUE, deadbeef, sizeof deadbeef}, {CKA_LABEL, lab, 8}};
	CK_OBJECT_HANDLE o, o2, o3;
	OK(F->C_CreateObject(S, a, 5, &o));
	if (cfailed)
		return;
	CK_ULONG s1, s2;
	OK(F->C_GetObjectSize(S, o, &s1));
	OK(F->C_CopyObject(S, o, a, 0, &o2));
	OK(F->C_GetObjectSize(S, o, &s2));
	EQ(s1, s2);
	CK_BYTE buf[256];
	for (int i = 0; i < 5; i++) {
		CK_ATTRIBUTE g = {a[i].type, buf, sizeof buf};
		OK(F->C_GetAttributeValue(S, o2, &g, 1));
		EQ(a[i].ulValueLen, g.ulValueLen);
		EQ(0, memcmp(buf, a[i].pValue, a[i].ulValueLen));
	}
	CK_ATTRIBUTE g = {CKA_CERTIFICATE_TYPE, buf, sizeof buf};
	RV(CKR_ATTRIBUTE_TYPE_INVALID, F->C_GetAttributeValue(S, o2, &g, 1));
	EQ(CK_UNAVAILABLE_INFORMATION, g.ulValueLen);
	CK_UTF8CHAR nl[] = "NewLabel";
	CK_ATTRIBUTE set = {CKA_LABEL, nl, 8};
	OK(F->C_SetAttributeValue(S, o, &set, 1));
	g.type = CKA_LABEL;
	g.ulValueLen = sizeof buf;
	OK(F->C_GetAttributeValue(S, o2, &g, 1));
	EQ(8, g.ulValueLen);
	EQ(0, memcmp(buf, lab, 8));
	g.ulValueLen = sizeof buf;
	OK(F->C_GetAttributeValue(S, o, &g, 1));
	EQ(0, memcmp(buf, nl, 8));
	CK_BYTE ff[] = {0xFA, 0xCE, 0xFE, 0xED};
	CK_ATTRIBUTE a3[] = {{CKA_VALUE, ff, 4}};
	OK(F->C_CopyObject(S, o, a3, 1, &o3));
	CK_ATTRIBUTE gv = {CKA_VALUE, buf, sizeof buf};
	OK(F->C_GetAttributeValue(S, o3, &gv, 1));
	EQ(4, gv.ulValueLen);
	EQ(0, memcmp(buf, ff, 4));
	CK_ATTRIBUTE appa = {CKA_APPLICATION, app, sizeof app};
	CK_OBJECT_HANDLE found[8], want[3] = {o, o2, o3};
	int n = objects(&appa, 1, 1, found, 8);
	TRUE_(same(found, n, want, 3));
	OK(F->C_DestroyObject(S, o3));
	OK(F->C_DestroyObject(S, o2));
	OK(F->C_DestroyObject(S, o));
	EQ(0, objects(&appa, 1, 1, found, 8));
}

static void create_object_invalid(void)
{
	CK_OBJECT_CLASS c = CKO_DATA;
	CK_ATTRIBUTE a[] = {{CKA_CLASS, &c, sizeof c}, {CKA_TOKEN, &FA, 1}, {CKA_APPLICATION, app, sizeof app},
			    {CKA_VALUE, deadbeef, sizeof deadbeef}};
	CK_OBJECT_HANDLE o;
	RV(CKR_SESSION_HANDLE_INVALID, F->C_CreateObject(BAD_SESSION, a, 4, &o));
	RV(CKR_ARGUMENTS_BAD, F->C_CreateObject(S, a, 4, NULL));
	RV2(CKR_TEMPLATE_INCOMPLETE, CKR_ARGUMENTS_BAD, F->C_CreateObject(S, NULL, 4, &o));
	RV2(CKR_TEMPLATE_INCOMPLETE, CKR_ARGUMENTS_BAD, F->C_CreateObject(S, a, 0, &o));
	RV(CKR_TEMPLATE_INCOMPLETE, F->C_CreateObject(S, &a[3], 1, &o));
}

static void set_latching(void)
{
	CK_OBJECT_HANDLE k = fixture_key(NULL, 0, NULL, 0);
	if (cfailed)
		return;
	CK_BBOOL v = CK_TRUE;
	CK_ATTRIBUTE a = {CKA_SENSITIVE, &v, 1};
	OK(F->C_SetAttributeValue(S, k, &a, 1));
	OK(F->C_GetAttributeValue(S, k, &a, 1));
	EQ(CK_TRUE, v);
	v = CK_FALSE;
	RV(CKR_ATTRIBUTE_READ_ONLY, F->C_SetAttributeValue(S, k, &a, 1));
	OK(F->C_GetAttributeValue(S, k, &a, 1));
	EQ(CK_TRUE, v);
	OK(F->C_DestroyObject(S, k));
}

static void copy_destroy_invalid(void)
{
	CK_OBJECT_HANDLE o = data_object("Label");
	if (cfailed)
		return;
	CK_ULONG size;
	RV(CKR_SESSION_HANDLE_INVALID, F->C_GetObjectSize(BAD_SESSION, o, &size));
	RV(CKR_OBJECT_HANDLE_INVALID, F->C_GetObjectSize(S, BAD_OBJECT, &size));
	RV(CKR_ARGUMENTS_BAD, F->C_GetObjectSize(S, o, NULL));
	CK_ATTRIBUTE a;
	CK_OBJECT_HANDLE o2;
	RV(CKR_ARGUMENTS_BAD, F->C_CopyObject(S, o, &a, 0, NULL));
	RV(CKR_ARGUMENTS_BAD, F->C_CopyObject(S, o, NULL, 1, &o2));
	CK_OBJECT_CLASS kc = CKO_PUBLIC_KEY;
	CK_ATTRIBUTE a2 = {CKA_CLASS, &kc, sizeof kc};
	RV(CKR_ATTRIBUTE_READ_ONLY, F->C_CopyObject(S, o, &a2, 1, &o2));
	RV(CKR_SESSION_HANDLE_INVALID, F->C_DestroyObject(BAD_SESSION, o));
	RV(CKR_OBJECT_HANDLE_INVALID, F->C_DestroyObject(S, BAD_OBJECT));
}

static void get_multiple_attributes(void)
{
	CK_OBJECT_HANDLE o = data_object("Label");
	if (cfailed)
		return;
	CK_BYTE b1[128], b2[128];
	CK_OBJECT_CLASS c;
	CK_BBOOL tok;
	CK_ATTRIBUTE g[] = {{CKA_LABEL, b1, sizeof b1}, {CKA_CLASS, &c, sizeof c}, {CKA_TOKEN, &tok, 1}, {CKA_VALUE, b2, sizeof b2}};
	OK(F->C_GetAttributeValue(S, o, g, 4));
	EQ(CKO_DATA, c);
	EQ(CK_FALSE, tok);
	EQ(5, g[0].ulValueLen);
	EQ(4, g[3].ulValueLen);
	EQ(0, memcmp(b2, deadbeef, 4));
	CK_ATTRIBUTE g2[] = {{CKA_CLASS, &c, sizeof c}, {999, b1, sizeof b1}};
	c = 0x55;
	RV(CKR_ATTRIBUTE_TYPE_INVALID, F->C_GetAttributeValue(S, o, g2, 2));
	EQ(CKO_DATA, c);
	EQ(CK_UNAVAILABLE_INFORMATION, g2[1].ulValueLen);
}

static void get_set_attribute_invalid(void)
{
	CK_OBJECT_HANDLE o = data_object("Label");
	if (cfailed)
		return;
	CK_BYTE buf[256];
	CK_ATTRIBUTE g = {CKA_LABEL, buf, sizeof buf};
	RV(CKR_SESSION_HANDLE_INVALID, F->C_GetAttributeValue(BAD_SESSION, o, &g, 1));
	RV(CKR_OBJECT_HANDLE_INVALID, F->C_GetAttributeValue(S, BAD_OBJECT, &g, 1));
	RV2(CKR_ARGUMENTS_BAD, CKR_TEMPLATE_INCOMPLETE, F->C_GetAttributeValue(S, o, NULL, 1));
	g.ulValueLen = 1;
	RV(CKR_BUFFER_TOO_SMALL, F->C_GetAttributeValue(S, o, &g, 1));
	CK_UTF8CHAR nl[] = "NewLabel";
	CK_ATTRIBUTE set = {CKA_LABEL, nl, 8};
	RV(CKR_SESSION_HANDLE_INVALID, F->C_SetAttributeValue(BAD_SESSION, o, &set, 1));
	RV(CKR_OBJECT_HANDLE_INVALID, F->C_SetAttributeValue(S, BAD_OBJECT, &set, 1));
	CK_OBJECT_CLASS kc = CKO_PUBLIC_KEY;
	CK_ATTRIBUTE ro = {CKA_CLASS, &kc, sizeof kc};
	RV(CKR_ATTRIBUTE_READ_ONLY, F->C_SetAttributeValue(S, o, &ro, 1));
}

static void find_object(void)
{
	CK_OBJECT_HANDLE o = data_object("Label");
	if (cfailed)
		return;
	CK_OBJECT_CLASS c = CKO_DATA;
	CK_ATTRIBUTE a[] = {{CKA_CLASS, &c, sizeof c}, {CKA_APPLICATION, app, sizeof app}, {CKA_LABEL, "Label", 5}};
	CK_OBJECT_HANDLE h[5];
	CK_ULONG n;
	OK(F->C_FindObjectsInit(S, a, 3));
	OK(F->C_FindObjects(S, h, 5, &n));
	EQ(1, n);
	EQ(o, h[0]);
	OK(F->C_FindObjects(S, h, 5, &n));
	EQ(0, n);
	OK(F->C_FindObjectsFinal(S));
	CK_ATTRIBUTE b[] = {{CKA_CLASS, &c, sizeof c}, {CKA_APPLICATION, app, sizeof app}, {CKA_LABEL, "LabelSuffix", 11}};
	OK(F->C_FindObjectsInit(S, b, 3));
	OK(F->C_FindObjects(S, h, 5, &n));
	EQ(0, n);
	OK(F->C_FindObjectsFinal(S));
}

static void find_object_invalid(void)
{
	CK_OBJECT_HANDLE o = data_object("Label");
	(void)o;
	if (cfailed)
		return;
	CK_OBJECT_CLASS c = CKO_DATA;
	CK_ATTRIBUTE a[] = {{CKA_CLASS, &c, sizeof c}, {CKA_APPLICATION, app, sizeof app}, {CKA_LABEL, "Label", 5}};
	CK_OBJECT_HANDLE h[5];
	CK_ULONG n;
	RV(CKR_OPERATION_NOT_INITIALIZED, F->C_FindObjects(S, h, 5, &n));
	RV(CKR_SESSION_HANDLE_INVALID, F->C_FindObjectsInit(BAD_SESSION, a, 3));
	OK(F->C_FindObjectsInit(S, a, 3));
	RV(CKR_SESSION_HANDLE_INVALID, F->C_FindObjects(BAD_SESSION, h, 5, &n));
	RV(CKR_ARGUMENTS_BAD, F->C_FindObjects(S, NULL, 1, &n));
	RV(CKR_ARGUMENTS_BAD, F->C_FindObjects(S, h, 5, NULL));
	RV(CKR_SESSION_HANDLE_INVALID, F->C_FindObjectsFinal(BAD_SESSION));
	OK(F->C_FindObjectsFinal(S));
	RV(CKR_OPERATION_NOT_INITIALIZED, F->C_FindObjects(S, h, 5, &n));
}

static void find_object_subset(void)
{
	CK_ATTRIBUTE_TYPE ed[] = {CKA_ENCRYPT, CKA_DECRYPT};
	CK_OBJECT_HANDLE k1 = fixture_key(ed, 2, NULL, 0), k2 = fixture_key(ed, 2, NULL, 0);
	CK_OBJECT_HANDLE k3 = secret_key(CKM_AES_KEY_GEN, 16, ed, 2, NULL, 0, NULL);
	CK_ATTRIBUTE_TYPE e[] = {CKA_ENCRYPT}, d[] = {CKA_DECRYPT};
	CK_OBJECT_HANDLE p1, s1, p2, s2;
	if (cfailed)
		return;
	keypair(e, 1, d, 1, &p1, &s1);
	keypair(e, 1, d, 1, &p2, &s2);
	if (cfailed)
		return;
	CK_ATTRIBUTE lab = {CKA_LABEL, (void *)label, strlen(label)};
	CK_OBJECT_HANDLE f[16], w[7] = {k1, k2, k3, p1, s1, p2, s2};
	int n = objects(&lab, 1, 10, f, 16);
	TRUE_(same(f, n, w, 7));
	CK_KEY_TYPE kt = use_des ? CKK_DES : CKK_AES;
	CK_ATTRIBUTE bytype[] = {lab, {CKA_KEY_TYPE, &kt, sizeof kt}};
	n = objects(bytype, 2, 1, f, 16);
	if (use_des) {
		CK_OBJECT_HANDLE wd[2] = {k1, k2};
		TRUE_(same(f, n, wd, 2));
	} else {
		TRUE_(same(f, n, w, 3));
	}
	CK_OBJECT_CLASS pc = CKO_PUBLIC_KEY, sc = CKO_PRIVATE_KEY;
	CK_ATTRIBUTE bypub[] = {lab, {CKA_CLASS, &pc, sizeof pc}}, bypriv[] = {lab, {CKA_CLASS, &sc, sizeof sc}};
	CK_OBJECT_HANDLE wp[2] = {p1, p2}, ws[2] = {s1, s2};
	n = objects(bypub, 2, 1, f, 16);
	TRUE_(same(f, n, wp, 2));
	n = objects(bypriv, 2, 1, f, 16);
	TRUE_(same(f, n, ws, 2));
}

/* ================= key.cc ================= */

static void generate_key_invalid(void)
{
	CK_MECHANISM m = {kgen(), NULL, 0};
	CK_ULONG len = 16;
	CK_ATTRIBUTE a[] = {{CKA_LABEL, (void *)label, strlen(label)}, {CKA_ENCRYPT, &T, 1}, {CKA_DECRYPT, &T, 1}, {CKA_VALUE_LEN, &len, sizeof len}};
	CK_ULONG n = use_des ? 3 : 4;
	CK_OBJECT_HANDLE k;
	RV(CKR_SESSION_HANDLE_INVALID, F->C_GenerateKey(BAD_SESSION, &m, a, n, &k));
	RV2(CKR_ARGUMENTS_BAD, CKR_MECHANISM_INVALID, F->C_GenerateKey(S, NULL, a, n, &k));
	RV(CKR_ARGUMENTS_BAD, F->C_GenerateKey(S, &m, NULL, n, &k));
	RV(CKR_ARGUMENTS_BAD, F->C_GenerateKey(S, &m, a, n, NULL));
}

static void generate_key_pair_invalid(void)
{
	CK_MECHANISM m = {CKM_RSA_PKCS_KEY_PAIR_GEN, NULL, 0};
	CK_ULONG bits = 1024;
	CK_BYTE e[] = {1, 0, 1};
	CK_ATTRIBUTE pa[] = {{CKA_LABEL, (void *)label, strlen(label)}, {CKA_MODULUS_BITS, &bits, sizeof bits},
			     {CKA_PUBLIC_EXPONENT, e, 3}, {CKA_ENCRYPT, &T, 1}};
	CK_ATTRIBUTE sa[] = {{CKA_LABEL, (void *)label, strlen(label)}, {CKA_DECRYPT, &T, 1}};
	CK_OBJECT_HANDLE p, s;
	RV(CKR_SESSION_HANDLE_INVALID, F->C_GenerateKeyPair(BAD_SESSION, &m, pa, 4, sa, 2, &p, &s));
	RV2(CKR_ARGUMENTS_BAD, CKR_MECHANISM_INVALID, F->C_GenerateKeyPair(S, NULL, pa, 4, sa, 2, &p, &s));
	RV(CKR_ARGUMENTS_BAD, F->C_GenerateKeyPair(S, &m, NULL, 4, sa, 2, &p, &s));
	RV(CKR_ARGUMENTS_BAD, F->C_GenerateKeyPair(S, &m, pa, 4, NULL, 2, &p, &s));
	RV(CKR_ARGUMENTS_BAD, F->C_GenerateKeyPair(S, &m, pa, 4, sa, 2, NULL, &s));
	RV(CKR_ARGUMENTS_BAD, F->C_GenerateKeyPair(S, &m, pa, 4, sa, 2, &p, NULL));
}

/* wrap_fixture makes k1 (insensitive) and k2 (wrap, unwrap, decrypt) and
 * wraps k1 with k2 under the case's ECB mechanism. */
static int wrap_fixture(CK_OBJECT_HANDLE *k1, CK_OBJECT_HANDLE *k2, CK_BYTE *data, CK_ULONG *len)
{
	CK_ATTRIBUTE ins = {CKA_SENSITIVE, &FA, 1};
	CK_ATTRIBUTE ext = {CKA_EXTRACTABLE, &T, 1};
	CK_ATTRIBUTE k1x[] = {ins, ext};
	*k1 = fixture_key(NULL, 0, k1x, use_des ? 1 : 2);
	CK_ATTRIBUTE_TYPE w[] = {CKA_WRAP, CKA_UNWRAP, CKA_DECRYPT};
	*k2 = fixture_key(w, 3, NULL, 0);
	if (cfailed)
		return 0;
	CK_MECHANISM m = {kecb(), NULL, 0};
	CK_RV rv = F->C_WrapKey(S, &m, *k2, *k1, data, len);
	if (rv == CKR_FUNCTION_NOT_SUPPORTED)
		return 0;
	OK(rv);
	return !cfailed;
}

static void wrap_unwrap(void)
{
	CK_OBJECT_HANDLE k1, k2, k3;
	CK_BYTE data[4096], key[4096], v1[256], v3[256];
	CK_ULONG len = sizeof data, klen_ = sizeof key;
	if (!wrap_fixture(&k1, &k2, data, &len)) {
		if (!cfailed)
			SKIP("key wrapping not supported");
		return;
	}
	CK_MECHANISM m = {kecb(), NULL, 0};
	OK(F->C_DecryptInit(S, &m, k2));
	OK(F->C_Decrypt(S, data, len, key, &klen_));
	CK_ATTRIBUTE g = {CKA_VALUE, v1, sizeof v1};
	OK(F->C_GetAttributeValue(S, k1, &g, 1));
	EQ(g.ulValueLen, klen_);
	EQ(0, memcmp(v1, key, klen_));
	CK_OBJECT_CLASS c = CKO_SECRET_KEY;
	CK_KEY_TYPE kt = use_des ? CKK_DES : CKK_AES;
	CK_ATTRIBUTE a3[] = {{CKA_LABEL, (void *)label, strlen(label)}, {CKA_CLASS, &c, sizeof c}, {CKA_KEY_TYPE, &kt, sizeof kt},
			     {CKA_ENCRYPT, &T, 1}, {CKA_DECRYPT, &T, 1}, {CKA_PRIVATE, &FA, 1}, {CKA_SENSITIVE, &FA, 1}, {CKA_EXTRACTABLE, &T, 1}};
	/* pkcs11test gives the first five; the key's value is then read back,
	 * which needs it insensitive (its default is the token's). */
	OK(F->C_UnwrapKey(S, &m, k2, data, len, a3, 8, &k3));
	CK_ATTRIBUTE g3 = {CKA_VALUE, v3, sizeof v3};
	OK(F->C_GetAttributeValue(S, k3, &g3, 1));
	EQ(g.ulValueLen, g3.ulValueLen);
	EQ(0, memcmp(v1, v3, g.ulValueLen));
}

static void wrap_invalid(void)
{
	CK_OBJECT_HANDLE k1, k2;
	CK_BYTE data[4096];
	CK_ULONG len = sizeof data;
	if (!wrap_fixture(&k1, &k2, data, &len)) {
		if (!cfailed)
			SKIP("key wrapping not supported");
		return;
	}
	CK_MECHANISM m = {kecb(), NULL, 0};
	len = sizeof data;
	RV(CKR_SESSION_HANDLE_INVALID, F->C_WrapKey(BAD_SESSION, &m, k2, k1, data, &len));
	RV2(CKR_ARGUMENTS_BAD, CKR_MECHANISM_INVALID, F->C_WrapKey(S, NULL, k2, k1, data, &len));
	RV(CKR_WRAPPING_KEY_HANDLE_INVALID, F->C_WrapKey(S, &m, BAD_OBJECT, k1, data, &len));
	RV(CKR_KEY_HANDLE_INVALID, F->C_WrapKey(S, &m, k2, BAD_OBJECT, data, &len));
	RV(CKR_ARGUMENTS_BAD, F->C_WrapKey(S, &m, k2, k1, data, NULL));
	OK(F->C_WrapKey(S, &m, k2, k1, NULL, &len));
	len = 1;
	RV(CKR_BUFFER_TOO_SMALL, F->C_WrapKey(S, &m, k2, k1, data, &len));
	/* UnwrapInvalid */
	len = sizeof data;
	OK(F->C_WrapKey(S, &m, k2, k1, data, &len));
	CK_OBJECT_CLASS c = CKO_SECRET_KEY;
	CK_KEY_TYPE kt = use_des ? CKK_DES : CKK_AES;
	CK_ATTRIBUTE a3[] = {{CKA_LABEL, (void *)label, strlen(label)}, {CKA_CLASS, &c, sizeof c}, {CKA_KEY_TYPE, &kt, sizeof kt},
			     {CKA_ENCRYPT, &T, 1}, {CKA_DECRYPT, &T, 1}};
	CK_OBJECT_HANDLE k3;
	RV(CKR_SESSION_HANDLE_INVALID, F->C_UnwrapKey(BAD_SESSION, &m, k2, data, len, a3, 5, &k3));
	RV2(CKR_ARGUMENTS_BAD, CKR_MECHANISM_INVALID, F->C_UnwrapKey(S, NULL, k2, data, len, a3, 5, &k3));
	RV(CKR_WRAPPING_KEY_HANDLE_INVALID, F->C_UnwrapKey(S, &m, CK_INVALID_HANDLE, data, len, a3, 5, &k3));
	RV(CKR_ARGUMENTS_BAD, F->C_UnwrapKey(S, &m, k2, NULL, len, a3, 5, &k3));
	RV(CKR_ARGUMENTS_BAD, F->C_UnwrapKey(S, &m, k2, data, len, NULL, 5, &k3));
	RV(CKR_ARGUMENTS_BAD, F->C_UnwrapKey(S, &m, k2, data, len, a3, 5, NULL));
}

/* ================= cipher.cc (AES-ECB, AES-CBC; DES below) ================= */

struct cipher {
	const char *name;
	CK_MECHANISM_TYPE gen, mode;
	CK_ULONG keylen, bs;
	int iv;
};
static const struct cipher ciphers[] = {
	{"DES-ECB", CKM_DES_KEY_GEN, CKM_DES_ECB, 0, 8, 0},
	{"DES-CBC", CKM_DES_KEY_GEN, CKM_DES_CBC, 0, 8, 1},
	{"3DES-ECB", CKM_DES3_KEY_GEN, CKM_DES3_ECB, 0, 8, 0},
	{"3DES-CBC", CKM_DES3_KEY_GEN, CKM_DES3_CBC, 0, 8, 1},
	{"AES-ECB", CKM_AES_KEY_GEN, CKM_AES_ECB, 16, 16, 0},
	{"AES-CBC", CKM_AES_KEY_GEN, CKM_AES_CBC, 16, 16, 1},
};
static const struct cipher *C;
static CK_OBJECT_HANDLE ck_key;
static CK_BYTE ck_iv[16], ck_pt[64];
static CK_MECHANISM ck_mech;
#define NB 4

/* cipher_fixture is pkcs11test's SecretKeyTest: a key with encrypt and
 * decrypt, a random IV and four random blocks. */
static int cipher_fixture(void)
{
	CK_ATTRIBUTE_TYPE ed[] = {CKA_ENCRYPT, CKA_DECRYPT};
	CK_RV rv;
	ck_key = secret_key(C->gen, C->keylen, ed, 2, NULL, 0, &rv);
	if (rv != CKR_OK) {
		failrv(__LINE__, "C_GenerateKey", rv, CKR_OK);
		return 0;
	}
	fill(ck_iv, sizeof ck_iv);
	fill(ck_pt, sizeof ck_pt);
	ck_mech = (CK_MECHANISM){C->mode, C->iv ? ck_iv : NULL, C->iv ? C->bs : 0};
	return 1;
}
#define PTLEN (NB * C->bs)

/* A direction of a cipher: the Encrypt or the Decrypt functions. */
struct dir {
	CK_RV (*init)(CK_SESSION_HANDLE, CK_MECHANISM_PTR, CK_OBJECT_HANDLE);
	CK_RV (*once)(CK_SESSION_HANDLE, CK_BYTE_PTR, CK_ULONG, CK_BYTE_PTR, CK_ULONG_PTR);
	CK_RV (*update)(CK_SESSION_HANDLE, CK_BYTE_PTR, CK_ULONG, CK_BYTE_PTR, CK_ULONG_PTR);
	CK_RV (*final)(CK_SESSION_HANDLE, CK_BYTE_PTR, CK_ULONG_PTR);
	int decrypt;
};
static struct dir enc, dec;

static void c_encrypt_decrypt(void)
{
	CK_BYTE ct[1024], pt[1024];
	CK_ULONG cl = sizeof ct, pl = sizeof pt;
	OK(F->C_EncryptInit(S, &ck_mech, ck_key));
	OK(F->C_Encrypt(S, ck_pt, PTLEN, ct, &cl));
	EQ(PTLEN, cl);
	OK(F->C_DecryptInit(S, &ck_mech, ck_key));
	OK(F->C_Decrypt(S, ct, cl, pt, &pl));
	EQ(PTLEN, pl);
	EQ(0, memcmp(pt, ck_pt, PTLEN));
	/* EncryptFailDecrypt */
	ct[0]++;
	pl = sizeof pt;
	OK(F->C_DecryptInit(S, &ck_mech, ck_key));
	OK(F->C_Decrypt(S, ct, cl, pt, &pl));
	EQ(PTLEN, pl);
	TRUE_(memcmp(pt, ck_pt, PTLEN) != 0);
}

/* get_space: the two-call convention of the single-part call, PTLEN bytes
 * in and out; a short buffer is left untouched. */
static void get_space(const struct dir *d, CK_BYTE *in, CK_BYTE *out, CK_ULONG cap)
{
	CK_ULONG n = 0;
	OK(d->init(S, &ck_mech, ck_key));
	OK(d->once(S, in, PTLEN, NULL, &n));
	EQ(PTLEN, n);
	n = PTLEN - 1;
	memset(out, 0xAB, cap);
	RV(CKR_BUFFER_TOO_SMALL, d->once(S, in, PTLEN, out, &n));
	EQ(PTLEN, n);
	EQ(0xAB, out[0]);
	n = cap;
	OK(d->once(S, in, PTLEN, out, &n));
}

static void c_get_space(void)
{
	CK_BYTE ct[1024], pt[1024];
	get_space(&enc, ck_pt, ct, sizeof ct);
	get_space(&dec, ct, pt, sizeof pt);
	EQ(0, memcmp(pt, ck_pt, PTLEN));
}

/* parts runs a direction block by block and returns the output length. */
static CK_ULONG parts(const struct dir *d, CK_BYTE *in, CK_BYTE *out, CK_ULONG cap)
{
	CK_ULONG total = 0, n;
	OK(d->init(S, &ck_mech, ck_key));
	for (int b = 0; b < NB; b++) {
		n = cap - total;
		OK(d->update(S, in + b * C->bs, C->bs, out + total, &n));
		EQ(C->bs, n);
		total += n;
	}
	n = cap - total;
	OK(d->final(S, out + total, &n));
	EQ(0, n);
	return total + n;
}

static void c_parts(void)
{
	CK_BYTE ct[1024], ct2[1024], pt[1024];
	CK_ULONG total = parts(&enc, ck_pt, ct, sizeof ct), c2 = sizeof ct2;
	OK(F->C_EncryptInit(S, &ck_mech, ck_key));
	OK(F->C_Encrypt(S, ck_pt, PTLEN, ct2, &c2));
	EQ(total, c2);
	EQ(0, memcmp(ct, ct2, total));
	EQ(PTLEN, parts(&dec, ct, pt, sizeof pt));
	EQ(0, memcmp(pt, ck_pt, PTLEN));
}

static void c_init_invalid(void)
{
	CK_MECHANISM bad = {999, NULL, 0}, mode = {C->mode, NULL, 0}, rsa = {CKM_RSA_PKCS, NULL, 0};
	const struct dir *dirs[] = {&enc, &dec};
	for (int i = 0; i < 2; i++) {
		const struct dir *d = dirs[i];
		RV(CKR_MECHANISM_INVALID, d->init(S, &bad, ck_key));
		RV(CKR_SESSION_HANDLE_INVALID, d->init(BAD_SESSION, &ck_mech, ck_key));
		RV(CKR_KEY_HANDLE_INVALID, d->init(S, &mode, BAD_OBJECT));
		RV2(CKR_ARGUMENTS_BAD, CKR_MECHANISM_INVALID, d->init(S, NULL, ck_key));
		RV(CKR_KEY_TYPE_INCONSISTENT, d->init(S, &rsa, ck_key));
		OK(d->init(S, &ck_mech, ck_key));
		RV(CKR_OPERATION_ACTIVE, d->init(S, &ck_mech, ck_key));
	}
}

/* call_errors: bad arguments to call (the single-part call or Update)
 * each end the operation, a bad session does not. */
static void call_errors(const struct dir *d, CK_RV (*call)(CK_SESSION_HANDLE, CK_BYTE_PTR, CK_ULONG, CK_BYTE_PTR, CK_ULONG_PTR),
			CK_BYTE *in, CK_ULONG inl)
{
	CK_BYTE out[1024];
	CK_ULONG n = sizeof out;
	OK(d->init(S, &ck_mech, ck_key));
	RV(CKR_ARGUMENTS_BAD, call(S, in, inl, NULL, NULL));
	OK(d->init(S, &ck_mech, ck_key));
	RV(CKR_SESSION_HANDLE_INVALID, call(BAD_SESSION, in, inl, out, &n));
	n = sizeof out;
	RV(CKR_ARGUMENTS_BAD, call(S, NULL, C->bs, out, &n));
}

/* once_errors: call_errors of the single-part call; an incomplete block
 * is a length error. */
static void once_errors(const struct dir *d, CK_BYTE *in, CK_ULONG inl)
{
	CK_BYTE out[1024];
	CK_ULONG n = sizeof out;
	call_errors(d, d->once, in, inl);
	OK(d->init(S, &ck_mech, ck_key));
	CK_RV rv = d->once(S, in, C->bs - 1, out, &n);
	TRUE_(rv == CKR_DATA_LEN_RANGE || rv == CKR_FUNCTION_FAILED || (d->decrypt && rv == CKR_ENCRYPTED_DATA_LEN_RANGE));
}

/* encrypted returns the four blocks encrypted in one call. */
static CK_ULONG encrypted(CK_BYTE *ct, CK_ULONG cap)
{
	OK(F->C_EncryptInit(S, &ck_mech, ck_key));
	OK(F->C_Encrypt(S, ck_pt, PTLEN, ct, &cap));
	return cap;
}

static void c_encrypt_errors(void) { once_errors(&enc, ck_pt, PTLEN); }

static void c_decrypt_errors(void)
{
	CK_BYTE ct[1024];
	CK_ULONG cl = encrypted(ct, sizeof ct);
	once_errors(&dec, ct, cl);
}

static void c_update_errors(void)
{
	CK_BYTE ct[1024];
	call_errors(&enc, enc.update, ck_pt, PTLEN);
	CK_ULONG cl = encrypted(ct, sizeof ct);
	call_errors(&dec, dec.update, ct, cl);
}

static void c_mode_policing(void)
{
	CK_BYTE ct[1024];
	CK_ULONG cl = sizeof ct;
	OK(F->C_EncryptInit(S, &ck_mech, ck_key));
	OK(F->C_EncryptUpdate(S, ck_pt, PTLEN, ct, &cl));
	RV(CKR_OPERATION_ACTIVE, F->C_Encrypt(S, ck_pt, PTLEN, ct, &cl));
	/* Policing2: a length query of C_Encrypt, then C_EncryptUpdate */
	F->C_EncryptFinal(S, ct, &cl);
	cl = 0;
	OK(F->C_EncryptInit(S, &ck_mech, ck_key));
	OK(F->C_Encrypt(S, ck_pt, PTLEN, NULL, &cl));
	RV(CKR_OPERATION_ACTIVE, F->C_EncryptUpdate(S, ck_pt, PTLEN, ct, &cl));
}

static void c_invalid_iv(void)
{
	if (!C->iv)
		return;
	CK_MECHANISM m = {C->mode, ck_iv, C->bs - 1};
	RV(CKR_MECHANISM_PARAM_INVALID, F->C_EncryptInit(S, &m, ck_key));
	RV(CKR_MECHANISM_PARAM_INVALID, F->C_DecryptInit(S, &m, ck_key));
}

/* fresh_session replaces the case's session with a new one of its kind
 * (its session objects go with it). */
static void fresh_session(void)
{
	CK_SESSION_INFO si;
	OK(F->C_GetSessionInfo(S, &si));
	OK(F->C_CloseSession(S));
	OK(F->C_OpenSession(slot, si.flags, NULL, NULL, &S));
}

/* final_errors: after an Update, a Final with bad arguments, then (in a
 * new session) a Final with a bad session, which leaves the operation. */
static void final_errors(const struct dir *d, CK_BYTE *in, CK_ULONG inl)
{
	CK_BYTE out[1024];
	CK_ULONG n = sizeof out;
	OK(d->init(S, &ck_mech, ck_key));
	OK(d->update(S, in, inl, out, &n));
	RV(CKR_ARGUMENTS_BAD, d->final(S, NULL, NULL));
	/* pkcs11test's next case has a fixture of its own */
	fresh_session();
	cipher_fixture();
	n = sizeof out;
	OK(d->init(S, &ck_mech, ck_key));
	OK(d->update(S, in, inl, out, &n));
	n = sizeof out;
	RV(CKR_SESSION_HANDLE_INVALID, d->final(BAD_SESSION, out, &n));
}

static void c_final_cases(void)
{
	CK_BYTE ct[1024];
	CK_ULONG cl = sizeof ct;
	/* EncryptFinalImmediate */
	OK(F->C_EncryptInit(S, &ck_mech, ck_key));
	OK(F->C_EncryptFinal(S, ct, &cl));
	EQ(0, cl);
	/* EncryptFinalErrors1 and 2, DecryptFinalErrors1 and 2 */
	final_errors(&enc, ck_pt, PTLEN);
	/* the encryption is still active: an incomplete block */
	cl = sizeof ct;
	CK_RV rv = F->C_EncryptUpdate(S, ck_pt, C->bs - 1, ct, &cl);
	if (rv == CKR_OK) {
		cl = sizeof ct;
		rv = F->C_EncryptFinal(S, ct, &cl);
	}
	TRUE_(rv == CKR_DATA_LEN_RANGE || rv == CKR_FUNCTION_FAILED);
	cl = encrypted(ct, sizeof ct);
	final_errors(&dec, ct, cl);
}

static void dual_digest_encrypt(void)
{
	CK_MECHANISM dm = {CKM_SHA_1, NULL, 0};
	CK_BYTE ct[1024], pt[1024], d1[64], d2[64];
	CK_ULONG total = 0, pl, n1 = sizeof d1, n2 = sizeof d2;
	OK(F->C_DigestInit(S, &dm));
	OK(F->C_EncryptInit(S, &ck_mech, ck_key));
	for (int b = 0; b < NB && !cfailed; b++) {
		pl = sizeof ct - total;
		CK_RV rv = F->C_DigestEncryptUpdate(S, ck_pt + b * C->bs, C->bs, ct + total, &pl);
		if (b == 0 && rv == CKR_FUNCTION_NOT_SUPPORTED)
			SKIP("dual digest+encrypt not supported");
		OK(rv);
		EQ(C->bs, pl);
		total += pl;
	}
	pl = sizeof ct - total;
	OK(F->C_EncryptFinal(S, ct + total, &pl));
	OK(F->C_DigestFinal(S, d1, &n1));
	EQ(20, n1);
	OK(F->C_DigestInit(S, &dm));
	OK(F->C_DecryptInit(S, &ck_mech, ck_key));
	CK_ULONG ptotal = 0;
	for (int b = 0; b < NB; b++) {
		pl = sizeof pt - ptotal;
		OK(F->C_DecryptDigestUpdate(S, ct + b * C->bs, C->bs, pt + ptotal, &pl));
		ptotal += pl;
	}
	pl = sizeof pt - ptotal;
	OK(F->C_DecryptFinal(S, pt + ptotal, &pl));
	OK(F->C_DigestFinal(S, d2, &n2));
	EQ(0, memcmp(pt, ck_pt, PTLEN));
	EQ(0, memcmp(d1, d2, 20));
}

static void (*const cipher_cases[])(void) = {
	c_encrypt_decrypt, c_get_space, c_parts, c_init_invalid, c_encrypt_errors, c_decrypt_errors,
	c_update_errors, c_mode_policing, c_invalid_iv, c_final_cases, dual_digest_encrypt};
static const char *const cipher_case_names[] = {
	"cipher.EncryptDecrypt+EncryptFailDecrypt", "cipher.EncryptDecryptGetSpace", "cipher.EncryptDecryptParts",
	"cipher.EncryptDecryptInitInvalid", "cipher.EncryptErrors", "cipher.DecryptErrors",
	"cipher.EncryptUpdateErrors+DecryptUpdateErrors", "cipher.EncryptModePolicing1+2",
	"cipher.EncryptInvalidIV+DecryptInvalidIV", "cipher.EncryptFinal*+DecryptFinal*", "dual.DigestEncrypt"};
static int cipher_case;
static void cipher_case_run(void)
{
	if (cipher_fixture())
		cipher_cases[cipher_case]();
}

/* imported_key_attributes checks what a key made from outside data says of
 * itself: not always sensitive, not never extractable, not local, no key
 * generation mechanism. */
static void imported_key_attributes(CK_OBJECT_HANDLE k)
{
	CK_BBOOL b = 9;
	CK_ATTRIBUTE g = {CKA_ALWAYS_SENSITIVE, &b, 1};
	OK(F->C_GetAttributeValue(S, k, &g, 1));
	EQ(CK_FALSE, b);
	g.type = CKA_NEVER_EXTRACTABLE;
	OK(F->C_GetAttributeValue(S, k, &g, 1));
	EQ(CK_FALSE, b);
	g.type = CKA_LOCAL;
	OK(F->C_GetAttributeValue(S, k, &g, 1));
	EQ(CK_FALSE, b);
	CK_MECHANISM_TYPE mt = 0;
	CK_ATTRIBUTE gm = {CKA_KEY_GEN_MECHANISM, &mt, sizeof mt};
	OK(F->C_GetAttributeValue(S, k, &gm, 1));
	EQ(CK_UNAVAILABLE_INFORMATION, mt);
}

static void create_secret_key_attributes(void)
{
	CK_OBJECT_CLASS c = CKO_SECRET_KEY;
	CK_KEY_TYPE kt = use_des ? CKK_DES : CKK_AES;
	CK_BYTE v[16] = {0};
	/* pkcs11test gives a DES key an empty CKA_VALUE; the AES run a real one. */
	CK_ATTRIBUTE a[] = {{CKA_LABEL, (void *)label, strlen(label)}, {CKA_ENCRYPT, &T, 1}, {CKA_DECRYPT, &T, 1},
			    {CKA_CLASS, &c, sizeof c}, {CKA_KEY_TYPE, &kt, sizeof kt}, {CKA_VALUE, v, use_des ? 0 : 16},
			    {CKA_PRIVATE, &FA, 1}};
	CK_OBJECT_HANDLE k;
	OK(F->C_CreateObject(S, a, 7, &k));
	if (cfailed)
		return;
	imported_key_attributes(k);
	OK(F->C_DestroyObject(S, k));
}

/* unhex_into decodes h into out and returns its length. */
static int unhex_into(const char *h, CK_BYTE *out)
{
	CK_ULONG n;
	CK_BYTE *b = unhex(h, &n);
	memcpy(out, b, n);
	free(b);
	return (int)n;
}

static void cipher_vectors(void)
{
	/* FIPS-197/SP 800-38A and DES known answers, as pkcs11test's table. */
	static const struct {
		CK_KEY_TYPE kt;
		CK_MECHANISM_TYPE mode;
		const char *key, *iv, *pt, *ct;
	} v[] = {
		{CKK_AES, CKM_AES_ECB, "2b7e151628aed2a6abf7158809cf4f3c", "", "6bc1bee22e409f96e93d7e117393172a", "3ad77bb40d7a3660a89ecaf32466ef97"},
		{CKK_AES, CKM_AES_CBC, "2b7e151628aed2a6abf7158809cf4f3c", "000102030405060708090a0b0c0d0e0f", "6bc1bee22e409f96e93d7e117393172a", "7649abac8119b246cee98e9b12e9197d"},
		{CKK_DES, CKM_DES_ECB, "8000000000000000", "", "0000000000000000", "95a8d72813daa94d"},
		{CKK_DES3, CKM_DES3_ECB, "800000000000000000000000000000000000000000000000", "", "0000000000000000", "95a8d72813daa94d"},
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0] && !cfailed; i++) {
		if ((v[i].kt != CKK_AES) != use_des)
			continue;
		CK_BYTE key[32], iv[16], pt[16], ct[16], out[64];
		int kl = unhex_into(v[i].key, key), il = unhex_into(v[i].iv, iv), pl = unhex_into(v[i].pt, pt), cl = unhex_into(v[i].ct, ct);
		CK_OBJECT_CLASS c = CKO_SECRET_KEY;
		CK_KEY_TYPE kt = v[i].kt;
		CK_ATTRIBUTE a[] = {{CKA_LABEL, (void *)label, strlen(label)}, {CKA_ENCRYPT, &T, 1}, {CKA_DECRYPT, &T, 1},
				    {CKA_CLASS, &c, sizeof c}, {CKA_KEY_TYPE, &kt, sizeof kt}, {CKA_VALUE, key, kl}, {CKA_PRIVATE, &FA, 1}};
		CK_OBJECT_HANDLE k;
		OK(F->C_CreateObject(S, a, 7, &k));
		CK_MECHANISM m = {v[i].mode, il ? iv : NULL, il};
		OK(F->C_EncryptInit(S, &m, k));
		CK_ULONG ol = sizeof out;
		OK(F->C_Encrypt(S, pt, pl, out, &ol));
		EQ(cl, ol);
		EQ(0, memcmp(out, ct, cl));
	}
}

/* ================= keypair.cc ================= */

static void kp_encrypt_decrypt(void)
{
	CK_ATTRIBUTE_TYPE pubt[] = {CKA_ENCRYPT, CKA_TOKEN}, privt[] = {CKA_DECRYPT, CKA_TOKEN};
	CK_OBJECT_HANDLE p, s;
	keypair(pubt, 2, privt, 2, &p, &s);
	if (cfailed)
		return;
	CK_BYTE pt[10], ct[1024], out[1024];
	memcpy(pt, "0123456789", 10);
	CK_MECHANISM m = {CKM_RSA_PKCS, NULL, 0};
	CK_ULONG cl = sizeof ct, ol = 10;
	OK(F->C_EncryptInit(S, &m, p));
	OK(F->C_Encrypt(S, pt, 10, ct, &cl));
	EQ(128, cl);
	OK(F->C_DecryptInit(S, &m, s));
	OK(F->C_Decrypt(S, ct, cl, out, &ol));
	EQ(10, ol);
	EQ(0, memcmp(out, pt, 10));
	OK(F->C_DestroyObject(S, p));
	OK(F->C_DestroyObject(S, s));
}

static void kp_public_exponent_4_bytes(void)
{
	CK_ULONG bits = 1024;
	CK_BYTE e[] = {0, 1, 0, 1};
	/* pkcs11test gives CKA_ENCRYPT and CKA_DECRYPT with no value (NULL, 0). */
	CK_ATTRIBUTE pa[] = {{CKA_ENCRYPT, NULL, 0}, {CKA_MODULUS_BITS, &bits, sizeof bits}, {CKA_PUBLIC_EXPONENT, e, 4}};
	CK_ATTRIBUTE sa[] = {{CKA_DECRYPT, NULL, 0}};
	CK_MECHANISM m = {CKM_RSA_PKCS_KEY_PAIR_GEN, NULL, 0};
	CK_OBJECT_HANDLE p = CK_INVALID_HANDLE, s = CK_INVALID_HANDLE;
	OK(F->C_GenerateKeyPair(S, &m, pa, 3, sa, 1, &p, &s));
}

static void kp_extract_keys(void)
{
	CK_ATTRIBUTE_TYPE pubt[] = {CKA_ENCRYPT}, privt[] = {CKA_DECRYPT, CKA_SENSITIVE};
	CK_OBJECT_HANDLE p, s;
	keypair(pubt, 1, privt, 2, &p, &s);
	if (cfailed)
		return;
	CK_BYTE mod[512], e[16], buf[1024];
	CK_ATTRIBUTE g[] = {{CKA_MODULUS, mod, sizeof mod}, {CKA_PUBLIC_EXPONENT, e, sizeof e}};
	OK(F->C_GetAttributeValue(S, p, g, 2));
	CK_ATTRIBUTE_TYPE secret[] = {CKA_PRIME_1, CKA_PRIME_2, CKA_PRIVATE_EXPONENT};
	for (int i = 0; i < 3; i++) {
		CK_ATTRIBUTE a = {secret[i], buf, sizeof buf};
		RV(CKR_ATTRIBUTE_SENSITIVE, F->C_GetAttributeValue(S, s, &a, 1));
	}
}

static void kp_asymmetric_token(void)
{
	CK_ULONG bits = 1024;
	CK_BYTE e[] = {1, 0, 1};
	CK_ATTRIBUTE pa[] = {{CKA_ENCRYPT, &T, 1}, {CKA_TOKEN, &FA, 1}, {CKA_LABEL, (void *)label, strlen(label)},
			     {CKA_MODULUS_BITS, &bits, sizeof bits}, {CKA_PUBLIC_EXPONENT, e, 3}};
	CK_ATTRIBUTE sa[] = {{CKA_DECRYPT, &T, 1}, {CKA_TOKEN, &T, 1}, {CKA_LABEL, (void *)label, strlen(label)}};
	CK_MECHANISM m = {CKM_RSA_PKCS_KEY_PAIR_GEN, NULL, 0};
	CK_OBJECT_HANDLE p, s;
	CK_RV rv = F->C_GenerateKeyPair(S, &m, pa, 5, sa, 3, &p, &s);
	if (rv == CKR_OK) {
		OK(F->C_DestroyObject(S, p));
		OK(F->C_DestroyObject(S, s));
	} else {
		EQ(CKR_TEMPLATE_INCONSISTENT, rv);
	}
}

static void kp_create_objects(void)
{
	static const char *n =
		"a8b3b284af8eb50b387034a860f146c4919f318763cd6c5598c8ae4811a1e0abc4c7e0b082d693a5e7fced675cf46685"
		"12772c0cbc64a742c6c630f533c8cc72f62ae833c40bf25842e984bb78bdbf97c0107d55bdb662f5c4e0fab9845cb514"
		"8ef7392dd3aaff93ae1e6b667bb3d4247616d4f5ba10d4cfd226de88d39f16fb";
	static const char *d =
		"53339cfdb79fc8466a655c7316aca85c55fd8f6dd898fdaf119517ef4f52e8fd8e258df93fee180fa0e4ab29693cd83b"
		"152a553d4ac4d1812b8b9fa5af0e7f55fe7304df41570926f3311f15c4d65a732c483116ee3d3d2d0af3549ad9bf7cbf"
		"b78ad884f84d5beb04724dc7369b31def37d0cf539e9cfcdd3de653729ead5d1";
	static const char *p1 = "d32737e7267ffe1341b2d5c0d150a81b586fb3132bed2f8d5262864a9cb9f30af38be448598d413a172efb802c21acf1c11c520c2f26a471dcad212eac7ca39d";
	static const char *p2 = "cc8853d1d54da630fac004f471f281c7b8982d8224a490edbeb33d3e3d5cc93c4765703d1dd791642f1f116a0dd852be2419b2af72bfe9a030e860b0288b5d77";
	static const char *e1 = "0e12bf1718e9cef5599ba1c3882fe8046a90874eefce8f2ccc20e4f2741fb0a33a3848aec9c9305fbecbd2d76819967d4671acc6431e4037968db37878e695c1";
	static const char *e2 = "95297b0f95a2fa67d00707d609dfd4fc05c89dafc2ef6d6ea55bec771ea333734d9251e79082ecda866efef13c459e1a631386b7e354c899f5f112ca85d71583";
	static const char *co = "4f456c502493bdc0ed2ab756a3a6ed4d67352a697d4216e93212b127a63d5411ce6fa98d5dbefd73263e3728142743818166ed7dd63687dd2a8ca1d2f4fbd8e1";
	CK_BYTE N[128], D[128], P1[64], P2[64], E1[64], E2[64], CO[64], E[] = {1, 0, 1};
	unhex_into(n, N), unhex_into(d, D), unhex_into(p1, P1), unhex_into(p2, P2), unhex_into(e1, E1), unhex_into(e2, E2), unhex_into(co, CO);
	CK_OBJECT_CLASS pc = CKO_PUBLIC_KEY, sc = CKO_PRIVATE_KEY;
	CK_KEY_TYPE kt = CKK_RSA;
	CK_ATTRIBUTE pa[] = {{CKA_LABEL, (void *)label, strlen(label)}, {CKA_ENCRYPT, &T, 1}, {CKA_VERIFY, &T, 1}, {CKA_TOKEN, &FA, 1},
			     {CKA_CLASS, &pc, sizeof pc}, {CKA_KEY_TYPE, &kt, sizeof kt}, {CKA_PUBLIC_EXPONENT, E, 3}, {CKA_MODULUS, N, 128}};
	CK_OBJECT_HANDLE p, s;
	OK(F->C_CreateObject(S, pa, 8, &p));
	/* pkcs11test leaves CKA_PRIVATE to the token's default; SoftHSMv2's
	 * and ours is true, which a public session cannot create: the probe
	 * says false (the attributes checked below are the point). */
	CK_ATTRIBUTE sa[] = {{CKA_LABEL, (void *)label, strlen(label)}, {CKA_DECRYPT, &T, 1}, {CKA_SIGN, &T, 1}, {CKA_SENSITIVE, &T, 1},
			     {CKA_EXTRACTABLE, &T, 1}, {CKA_TOKEN, &FA, 1}, {CKA_CLASS, &sc, sizeof sc}, {CKA_KEY_TYPE, &kt, sizeof kt},
			     {CKA_PUBLIC_EXPONENT, E, 3}, {CKA_PRIVATE_EXPONENT, D, 128}, {CKA_MODULUS, N, 128}, {CKA_PRIME_1, P1, 64},
			     {CKA_PRIME_2, P2, 64}, {CKA_EXPONENT_1, E1, 64}, {CKA_EXPONENT_2, E2, 64}, {CKA_COEFFICIENT, CO, 64},
			     {CKA_PRIVATE, &FA, 1}};
	OK(F->C_CreateObject(S, sa, 17, &s));
	if (cfailed)
		return;
	imported_key_attributes(s);
}

/* ================= sign.cc ================= */

/* The mechanism of a parameterised case (run_each) and its number: the
 * data bound of a signature, the size of a MAC or a digest. */
static CK_MECHANISM_TYPE p_mech;
static CK_ULONG p_val;

static void sign_cases(void)
{
	CK_ATTRIBUTE_TYPE v[] = {CKA_VERIFY}, sg[] = {CKA_SIGN};
	CK_OBJECT_HANDLE p, s;
	keypair(v, 1, sg, 1, &p, &s);
	if (cfailed)
		return;
	CK_BYTE data[1024], sig[1024];
	CK_ULONG dl = (CK_ULONG)rand() % p_val, sl = sizeof sig;
	fill(data, dl);
	CK_MECHANISM m = {p_mech, NULL, 0};
	CK_RV rv = F->C_SignInit(S, &m, s);
	if (rv == CKR_MECHANISM_INVALID)
		SKIP("mechanism not implemented");
	OK(rv);
	OK(F->C_Sign(S, data, dl, sig, &sl));
	OK(F->C_VerifyInit(S, &m, p));
	OK(F->C_Verify(S, data, dl, sig, sl));
	sig[0]++;
	OK(F->C_VerifyInit(S, &m, p));
	RV(CKR_SIGNATURE_INVALID, F->C_Verify(S, data, dl, sig, sl));
	sig[0]--;
	OK(F->C_VerifyInit(S, &m, p));
	RV(CKR_SIGNATURE_LEN_RANGE, F->C_Verify(S, data, dl, sig, 4));
}

static void sign_verify_recover(void)
{
	CK_ATTRIBUTE_TYPE pt[] = {CKA_VERIFY_RECOVER, CKA_ENCRYPT}, st[] = {CKA_SIGN_RECOVER, CKA_DECRYPT};
	CK_OBJECT_HANDLE p, s;
	keypair(pt, 2, st, 2, &p, &s);
	if (cfailed)
		return;
	CK_BYTE data[64], out[2048], rec[2048];
	fill(data, 64);
	CK_MECHANISM m = {CKM_RSA_PKCS, NULL, 0};
	CK_RV rv = F->C_SignRecoverInit(S, &m, s);
	if (rv == CKR_FUNCTION_NOT_SUPPORTED)
		SKIP("SignRecover not supported");
	if (rv == CKR_MECHANISM_INVALID)
		SKIP("mechanism not implemented");
	OK(rv);
	CK_ULONG ol = sizeof out, rl = sizeof rec;
	OK(F->C_SignRecover(S, data, 64, out, &ol));
	OK(F->C_VerifyRecoverInit(S, &m, p));
	OK(F->C_VerifyRecover(S, out, ol, rec, &rl));
	EQ(64, rl);
	EQ(0, memcmp(rec, data, 64));
}

/* ================= hmac.cc ================= */

static CK_OBJECT_HANDLE generic_key(const CK_BYTE *v, CK_ULONG n)
{
	CK_OBJECT_CLASS c = CKO_SECRET_KEY;
	CK_KEY_TYPE kt = CKK_GENERIC_SECRET;
	/* As pkcs11test: no CKA_PRIVATE (the token's default), in a public session. */
	CK_ATTRIBUTE a[] = {{CKA_LABEL, (void *)label, strlen(label)}, {CKA_SIGN, &T, 1}, {CKA_VERIFY, &T, 1},
			    {CKA_CLASS, &c, sizeof c}, {CKA_KEY_TYPE, &kt, sizeof kt}, {CKA_VALUE, (void *)v, n}};
	CK_OBJECT_HANDLE k = CK_INVALID_HANDLE;
	OK(F->C_CreateObject(S, a, 6, &k));
	return k;
}

static void hmac_cases(void)
{
	CK_BYTE kv[128], data[1024], mac[1024];
	CK_ULONG kl = 64 + rand() % 64, dl = rand() % 1024, ml = sizeof mac;
	fill(kv, kl);
	fill(data, dl);
	CK_OBJECT_HANDLE k = generic_key(kv, kl);
	if (cfailed)
		return;
	CK_MECHANISM m = {p_mech, NULL, 0};
	CK_RV rv = F->C_SignInit(S, &m, k);
	if (rv == CKR_MECHANISM_INVALID)
		SKIP("mechanism not implemented");
	OK(rv);
	OK(F->C_Sign(S, data, dl, mac, &ml));
	EQ(p_val, ml);
	OK(F->C_VerifyInit(S, &m, k));
	OK(F->C_Verify(S, data, dl, mac, ml));
	mac[0]++;
	OK(F->C_VerifyInit(S, &m, k));
	RV(CKR_SIGNATURE_INVALID, F->C_Verify(S, data, dl, mac, ml));
}

static void hmac_vectors(void)
{
	/* RFC 4231 test case 2 ("Jefe"). */
	CK_BYTE data[] = "what do ya want for nothing?", mac[64], want[32];
	unhex_into("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", want);
	CK_OBJECT_HANDLE k = generic_key((const CK_BYTE *)"Jefe", 4);
	if (cfailed)
		return;
	CK_MECHANISM m = {CKM_SHA256_HMAC, NULL, 0};
	OK(F->C_SignInit(S, &m, k));
	CK_ULONG ml = sizeof mac;
	OK(F->C_Sign(S, data, 28, mac, &ml));
	EQ(32, ml);
	EQ(0, memcmp(mac, want, 32));
}

/* ================= digest.cc ================= */

static void digest_cases(void)
{
	CK_MECHANISM m = {p_mech, NULL, 0};
	CK_BYTE data[1024], b1[512], b2[512];
	CK_ULONG dl = 2 + rand() % 1000, n1 = sizeof b1, n2 = sizeof b2;
	fill(data, dl);
	CK_RV rv = F->C_DigestInit(S, &m);
	if (rv == CKR_MECHANISM_INVALID)
		SKIP("mechanism not implemented");
	OK(rv);
	/* CompareIncremental */
	OK(F->C_Digest(S, data, dl, b1, &n1));
	EQ(p_val, n1);
	OK(F->C_DigestInit(S, &m));
	for (CK_ULONG off = 0; off < dl; off += 10)
		OK(F->C_DigestUpdate(S, data + off, dl - off < 10 ? dl - off : 10));
	OK(F->C_DigestFinal(S, b2, &n2));
	EQ(n1, n2);
	EQ(0, memcmp(b1, b2, n1));
	RV(CKR_SESSION_HANDLE_INVALID, F->C_DigestInit(BAD_SESSION, &m));
	/* DigestGetSpace */
	OK(F->C_DigestInit(S, &m));
	n1 = 0;
	OK(F->C_Digest(S, data, dl, NULL, &n1));
	EQ(p_val, n1);
	memset(b1, 0xAB, sizeof b1);
	n1 = 2;
	RV(CKR_BUFFER_TOO_SMALL, F->C_Digest(S, data, dl, b1, &n1));
	EQ(p_val, n1);
	EQ(0xAB, b1[0]);
	EQ(0xAB, b1[3]);
	OK(F->C_Digest(S, data, dl, b1, &n1));
	/* DigestFinalGetSpace */
	OK(F->C_DigestInit(S, &m));
	OK(F->C_DigestUpdate(S, data, dl));
	n1 = 0;
	OK(F->C_DigestFinal(S, NULL, &n1));
	EQ(p_val, n1);
	n1 = 2;
	RV(CKR_BUFFER_TOO_SMALL, F->C_DigestFinal(S, b1, &n1));
	EQ(p_val, n1);
	OK(F->C_DigestFinal(S, b1, &n1));
	/* DigestInvalid, DigestFinalInvalid: an ARGUMENTS_BAD ends the operation */
	OK(F->C_DigestInit(S, &m));
	RV(CKR_ARGUMENTS_BAD, F->C_Digest(S, data, dl, b1, NULL));
	n1 = sizeof b1;
	RV(CKR_OPERATION_NOT_INITIALIZED, F->C_Digest(S, data, dl, b1, &n1));
	OK(F->C_DigestInit(S, &m));
	RV(CKR_ARGUMENTS_BAD, F->C_DigestFinal(S, b1, NULL));
	n1 = sizeof b1;
	RV(CKR_OPERATION_NOT_INITIALIZED, F->C_DigestFinal(S, b1, &n1));
	/* DigestIntersperse */
	OK(F->C_DigestInit(S, &m));
	OK(F->C_DigestUpdate(S, data, 1));
	n1 = 0;
	OK(F->C_DigestFinal(S, NULL, &n1));
	EQ(p_val, n1);
	n1 = sizeof b1;
	RV(CKR_OPERATION_ACTIVE, F->C_Digest(S, data + 1, dl - 1, b1, &n1));
	n1 = sizeof b1;
	RV(CKR_OPERATION_NOT_INITIALIZED, F->C_DigestFinal(S, b1, &n1));
	/* DigestFinalIntersperse */
	OK(F->C_DigestInit(S, &m));
	n1 = 0;
	OK(F->C_Digest(S, data, dl, NULL, &n1));
	n1 = sizeof b1;
	RV(CKR_OPERATION_ACTIVE, F->C_DigestFinal(S, b1, &n1));
	n1 = sizeof b1;
	RV(CKR_OPERATION_NOT_INITIALIZED, F->C_Digest(S, data, dl, b1, &n1));
	/* DigestNoInit, DigestUpdateNoInit */
	RV(CKR_OPERATION_NOT_INITIALIZED, F->C_DigestUpdate(S, data, 1));
	/* DigestInvalidSession, DigestUpdateInvalidSession */
	OK(F->C_DigestInit(S, &m));
	n1 = sizeof b1;
	RV(CKR_SESSION_HANDLE_INVALID, F->C_Digest(BAD_SESSION, data, dl, b1, &n1));
	RV(CKR_SESSION_HANDLE_INVALID, F->C_DigestUpdate(BAD_SESSION, data, dl));
	/* DigestUpdateZeroLen */
	rv = F->C_DigestUpdate(S, data, 0);
	if (rv == CKR_OK) {
		n1 = sizeof b1;
		OK(F->C_DigestFinal(S, b1, &n1));
	} else {
		EQ(CKR_ARGUMENTS_BAD, rv);
	}
}

static void digest_key(void)
{
	CK_MECHANISM m = {p_mech, NULL, 0};
	CK_RV rv = F->C_DigestInit(S, &m);
	if (rv == CKR_MECHANISM_INVALID)
		SKIP("mechanism not implemented");
	OK(rv);
	CK_ATTRIBUTE_TYPE ed[] = {CKA_ENCRYPT, CKA_DECRYPT};
	CK_OBJECT_HANDLE k = fixture_key(ed, 2, NULL, 0);
	if (cfailed)
		return;
	rv = F->C_DigestKey(S, k);
	if (rv == CKR_KEY_INDIGESTIBLE)
		SKIP("key indigestible");
	OK(rv);
	RV(CKR_SESSION_HANDLE_INVALID, F->C_DigestKey(BAD_SESSION, k));
	RV(CKR_KEY_HANDLE_INVALID, F->C_DigestKey(S, BAD_OBJECT));
	CK_BYTE b[512];
	CK_ULONG n = sizeof b;
	F->C_DigestFinal(S, b, &n);
}

/* ================= rng.cc ================= */

static void rng_cases(void)
{
	CK_BYTE seed[8] = {1, 2, 3, 4, 5, 6, 7, 8}, d[1024], d2[100];
	CK_TOKEN_INFO ti;
	OK(F->C_GetTokenInfo(slot, &ti));
	if (ti.flags & CKF_RNG) {
		OK(F->C_SeedRandom(S, seed, 8));
		OK(F->C_GenerateRandom(S, d, sizeof d));
		OK(F->C_GenerateRandom(S, d, 10));
		OK(F->C_GenerateRandom(S, d, 100));
		OK(F->C_GenerateRandom(S, d2, 100));
		TRUE_(memcmp(d, d2, 100) != 0);
		RV2(CKR_OK, CKR_ARGUMENTS_BAD, F->C_GenerateRandom(S, d, 0));
	} else {
		RV(CKR_RANDOM_NO_RNG, F->C_SeedRandom(S, seed, 8));
	}
	RV(CKR_ARGUMENTS_BAD, F->C_SeedRandom(S, NULL, 1));
	RV(CKR_ARGUMENTS_BAD, F->C_GenerateRandom(S, NULL, 1));
	RV(CKR_SESSION_HANDLE_INVALID, F->C_SeedRandom(BAD_SLOT, seed, 8));
	RV(CKR_SESSION_HANDLE_INVALID, F->C_GenerateRandom(BAD_SLOT, d, 16));
}

static void rng_no_init(void)
{
	CK_BYTE seed[8] = {0};
	RV(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_SeedRandom(BAD_SLOT, seed, 8));
	RV(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_GenerateRandom(BAD_SLOT, seed, 8));
}

/* ================= tookan.cc ================= */

static void tookan_a1(void)
{
	CK_ATTRIBUTE_TYPE st[] = {CKA_SENSITIVE}, wt[] = {CKA_WRAP, CKA_DECRYPT};
	CK_OBJECT_HANDLE k1 = fixture_key(st, 1, NULL, 0), k2 = fixture_key(wt, 2, NULL, 0);
	if (cfailed)
		return;
	CK_MECHANISM m = {kecb(), NULL, 0};
	CK_BYTE data[4096];
	CK_ULONG len = sizeof data;
	CK_RV rv = F->C_WrapKey(S, &m, k2, k1, data, &len);
	if (rv == CKR_FUNCTION_NOT_SUPPORTED)
		SKIP("key wrapping not supported");
	RV2(CKR_KEY_NOT_WRAPPABLE, CKR_KEY_UNEXTRACTABLE, rv);
}

static void tookan_a2(void)
{
	CK_ATTRIBUTE_TYPE st[] = {CKA_SENSITIVE}, pw[] = {CKA_WRAP}, sd[] = {CKA_DECRYPT};
	CK_OBJECT_HANDLE k1 = fixture_key(st, 1, NULL, 0), p, s;
	if (cfailed)
		return;
	keypair(pw, 1, sd, 1, &p, &s);
	if (cfailed)
		return;
	CK_MECHANISM m = {CKM_RSA_PKCS, NULL, 0};
	CK_BYTE data[4096];
	CK_ULONG len = sizeof data;
	CK_RV rv = F->C_WrapKey(S, &m, p, k1, data, &len);
	if (rv == CKR_FUNCTION_NOT_SUPPORTED)
		SKIP("key wrapping not supported");
	RV2(CKR_KEY_NOT_WRAPPABLE, CKR_KEY_UNEXTRACTABLE, rv);
}

/* tookan_latch makes a key with extra attributes, checks that its value
 * cannot be read, that attribute at cannot be set back to !latched, and
 * that it still reads latched (Tookan's attacks A3 to A5). */
static void tookan_latch(CK_ATTRIBUTE *extra, int n, CK_ATTRIBUTE_TYPE at, CK_BBOOL latched)
{
	CK_OBJECT_HANDLE k = fixture_key(NULL, 0, extra, n);
	if (cfailed)
		return;
	CK_BYTE data[4096];
	CK_ATTRIBUTE a = {CKA_VALUE, data, sizeof data};
	RV(CKR_ATTRIBUTE_SENSITIVE, F->C_GetAttributeValue(S, k, &a, 1));
	CK_BBOOL back = !latched;
	CK_ATTRIBUTE to = {at, &back, 1};
	RV(CKR_ATTRIBUTE_READ_ONLY, F->C_SetAttributeValue(S, k, &to, 1));
	CK_BYTE b = 9;
	CK_ATTRIBUTE g = {at, &b, 1};
	OK(F->C_GetAttributeValue(S, k, &g, 1));
	EQ(latched, b);
}

static void tookan_a3(void)
{
	CK_ATTRIBUTE x[] = {{CKA_SENSITIVE, &T, 1}};
	tookan_latch(x, 1, CKA_SENSITIVE, CK_TRUE);
}

static void tookan_a4(void)
{
	CK_ATTRIBUTE x[] = {{CKA_EXTRACTABLE, &FA, 1}, {CKA_SENSITIVE, &FA, 1}};
	tookan_latch(x, 2, CKA_EXTRACTABLE, CK_FALSE);
}

/* ================= main ================= */

/* with_key_kinds runs a case with DES keys, then AES keys; prefix names
 * the parameter before the key kind ("" for none). */
static void with_key_kinds_of(const char *prefix, const char *name, enum fixture fx, void (*fn)(void))
{
	for (use_des = 1; use_des >= 0; use_des--) {
		snprintf(cparam, sizeof cparam, "%s/%s", prefix, use_des ? "DES" : "AES");
		run(name, fx, fn);
	}
	cparam[0] = 0;
	use_des = 0;
}
static void with_key_kinds(const char *name, enum fixture fx, void (*fn)(void)) { with_key_kinds_of("", name, fx, fn); }

/* A parameter of a case: its name, mechanism and number (p_mech, p_val). */
struct param {
	const char *n;
	CK_MECHANISM_TYPE m;
	CK_ULONG v;
};
static const struct param sigs[] = {
	{"RSA", CKM_RSA_PKCS, 64}, {"MD5-RSA", CKM_MD5_RSA_PKCS, 1024}, {"SHA1-RSA", CKM_SHA1_RSA_PKCS, 1024},
	{"SHA256-RSA", CKM_SHA256_RSA_PKCS, 1024}, {"SHA384-RSA", CKM_SHA384_RSA_PKCS, 1024},
	{"SHA512-RSA", CKM_SHA512_RSA_PKCS, 1024}};
static const struct param hmacs[] = {
	{"MD5-HMAC", CKM_MD5_HMAC, 16}, {"SHA1-HMAC", CKM_SHA_1_HMAC, 20}, {"SHA256-HMAC", CKM_SHA256_HMAC, 32},
	{"SHA384-HMAC", CKM_SHA384_HMAC, 48}, {"SHA512-HMAC", CKM_SHA512_HMAC, 64}};
static const struct param digests[] = {
	{"MD5", CKM_MD5, 16}, {"SHA-1", CKM_SHA_1, 20}, {"SHA-256", CKM_SHA256, 32},
	{"SHA-384", CKM_SHA384, 48}, {"SHA-512", CKM_SHA512, 64}};
#define NPARAM(t) (sizeof t / sizeof t[0])

/* run_each runs a case once per parameter of t; keys: with DES and AES
 * keys too. */
static void run_each(const struct param *t, size_t n, const char *name, enum fixture fx, void (*fn)(void), int keys)
{
	for (size_t i = 0; i < n; i++) {
		p_mech = t[i].m;
		p_val = t[i].v;
		char prefix[32];
		snprintf(prefix, sizeof prefix, "/%s", t[i].n);
		if (keys) {
			with_key_kinds_of(prefix, name, fx, fn);
			continue;
		}
		memcpy(cparam, prefix, sizeof prefix);
		run(name, fx, fn);
	}
	cparam[0] = 0;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: p11conf <module> <user PIN> <SO PIN>\n");
		return 2;
	}
	upin = argv[2];
	sopin = argv[3];
	srand(20261201);
	if ((F = load_2_40(argv[1])) == NULL)
		return 2;
	enc = (struct dir){F->C_EncryptInit, F->C_Encrypt, F->C_EncryptUpdate, F->C_EncryptFinal, 0};
	dec = (struct dir){F->C_DecryptInit, F->C_Decrypt, F->C_DecryptUpdate, F->C_DecryptFinal, 1};
	/* The slot: the one with an initialised token (pkcs11test's -s; SoftHSMv2
	 * also has a slot with an empty token). */
	if (F->C_Initialize(NULL) != CKR_OK) {
		fprintf(stderr, "C_Initialize failed\n");
		return 2;
	}
	CK_SLOT_ID ids[8];
	CK_ULONG n = 8;
	CK_TOKEN_INFO ti;
	int found = 0;
	if (F->C_GetSlotList(CK_TRUE, ids, &n) == CKR_OK)
		for (CK_ULONG i = 0; i < n && !found; i++)
			if (F->C_GetTokenInfo(ids[i], &ti) == CKR_OK && (ti.flags & CKF_TOKEN_INITIALIZED)) {
				slot = ids[i];
				token_flags = ti.flags;
				found = 1;
			}
	if (!found) {
		fprintf(stderr, "no slot with an initialised token\n");
		return 2;
	}
	F->C_Finalize(NULL);

	run("init.Simple", NONE, init_simple);
	run("init.Uninitialized", NONE, init_uninitialized);
	run("init.DoubleFinalize", NONE, init_double_finalize);
	run("init.UnexpectedFinalize", NONE, init_unexpected_finalize);
	run("init.InitArgsBadReserved", NONE, init_args_bad_reserved);
	run("init.InitArgsNoNewThreads", NONE, init_args_no_new_threads);
	run("init.InitArgsNoLock", NONE, init_args_no_lock);
	run("init.InitArgsInternalLocks", NONE, init_args_internal_locks);
	run("init.InitArgsMyLocks", NONE, init_args_my_locks);
	run("init.InitArgsMyOrInternalLocks", NONE, init_args_my_or_internal_locks);
	run("init.InitNestedFail", INIT, init_nested_fail);
	run("init.FailedTermination", INIT, failed_termination);
	run("init.GetInfo", INIT, get_info);
	run("init.GetInfoFail", INIT, get_info_fail);
	run("init.GetInfoNoInit", NONE, get_info_no_init);
	run("init.GetFunctionList", INIT, get_function_list);
	run("init.GetFunctionListFail", INIT, get_function_list_fail);

	run("slot.EnumerateSlots", INIT, enumerate_slots);
	run("slot.EnumerateMechanisms", INIT, enumerate_mechanisms);
	run("slot.GetSlotList", INIT, get_slot_list);
	run("slot.GetSlotListFailTooSmall+TooLarge", INIT, get_slot_list_too_small);
	run("slot.GetSlotListFailArgumentsBad", INIT, get_slot_list_args_bad);
	run("slot.GetSlotInfoFail", INIT, get_slot_info_fail);
	run("slot.GetTokenInfoFail", INIT, get_token_info_fail);
	run("slot.WaitForSlotEvent", INIT, wait_for_slot_event);
	run("slot.GetMechanismList*+GetMechanismInfo*", INIT, mechanism_list_errors);
	run("slot.NoInit", NONE, slot_no_init);
	run("slot.TokenInitWithSession", RO, token_init_with_session);
	run("slot.TokenInitPinIncorrect+InvalidSlot", INIT, token_init_invalid);

	run("session.OpenSession*", INIT, open_session_errors);
	run("session.ClosedSessionErrors", INIT, closed_session_errors);
	run("session.ParallelSessions", INIT, parallel_sessions);
	run("session.InvalidSessionInfo+CloseSessionInvalid/RO", RO, invalid_session_info);
	run("session.InvalidSessionInfo+CloseSessionInvalid/RW", RW, invalid_session_info);
	run("session.SessionInfo/RO", RO, session_info);
	run("session.SessionInfo/RW", RW, session_info);
	run("session.GetSetOperationState*", RW, operation_state);

	run("login.UserLoginWrongPIN", RO, user_login_wrong_pin);
	run("login.UserLoginInvalid", RO, user_login_invalid);
	run("login.SOLoginFail/RO", RO, so_login_ro_fail);
	run("login.ReadOnlySessionSOLoginFail", RW, so_login_other_ro_fail);
	run("login.LogoutInvalid/ROUser", ROUSER, logout_invalid);
	run("login.UserLoginAlreadyLoggedIn", ROUSER, user_login_already);
	run("login.SOLoginFail/RWUser", RWUSER, so_login_after_user);
	run("login.LogoutInvalid/RWUser", RWUSER, logout_invalid);
	run("login.SOLogin", RW, so_login);
	run("login.SOSessionFail+UserLoginFail", RWSO, so_session_fail);

	run("object.EnumerateObjects+ConsistentObjects/RO", RO, enumerate_objects);
	run("object.EnumerateObjects/ROUser", ROUSER, enumerate_objects);
	run("object.EnumerateObjects+ConsistentObjects/RW", RW, enumerate_objects);
	run("object.EnumerateObjects/RWUser", RWUSER, enumerate_objects);
	run("object.CreateCopyDestroyObject", RW, create_copy_destroy);
	run("object.CreateObjectInvalid", RW, create_object_invalid);
	with_key_kinds("object.SetLatchingAttribute", RW, set_latching);
	run("object.CopyDestroyObjectInvalid", RW, copy_destroy_invalid);
	run("object.GetMultipleAttributes+Invalid", RW, get_multiple_attributes);
	run("object.GetSetAttributeInvalid", RW, get_set_attribute_invalid);
	run("object.FindObject+FindNoObject", RW, find_object);
	run("object.FindObjectInvalid", RW, find_object_invalid);
	with_key_kinds("object.FindObjectSubset", RW, find_object_subset);

	with_key_kinds("key.GenerateKeyInvalid", RO, generate_key_invalid);
	run("key.GenerateKeyPairInvalid", RO, generate_key_pair_invalid);
	with_key_kinds("key.WrapUnwrap", RO, wrap_unwrap);
	with_key_kinds("key.WrapInvalid+UnwrapInvalid", RO, wrap_invalid);

	for (size_t c = 0; c < sizeof ciphers / sizeof ciphers[0]; c++) {
		C = &ciphers[c];
		for (size_t i = 0; i < sizeof cipher_cases / sizeof cipher_cases[0]; i++) {
			cipher_case = (int)i;
			snprintf(cparam, sizeof cparam, "/%s", C->name);
			run(cipher_case_names[i], RO, cipher_case_run);
		}
	}
	cparam[0] = 0;
	with_key_kinds("cipher.CreateSecretKeyAttributes", RO, create_secret_key_attributes);
	with_key_kinds("cipher.SecretKeyTestVectors", RO, cipher_vectors);

	run("keypair.EncryptDecrypt", RW, kp_encrypt_decrypt);
	run("keypair.PublicExponent4Bytes", RW, kp_public_exponent_4_bytes);
	run("keypair.ExtractKeys", RW, kp_extract_keys);
	run("keypair.AsymmetricTokenKeyPair", RW, kp_asymmetric_token);
	run("keypair.CreateKeyPairObjects", RO, kp_create_objects);

	run_each(sigs, NPARAM(sigs), "sign.SignVerify+SignFailVerifyWrong+SignFailVerifyShort", RO, sign_cases, 0);
	run("sign.SignVerifyRecover", RO, sign_verify_recover);
	run_each(hmacs, NPARAM(hmacs), "hmac.SignVerify+SignFailVerify", RO, hmac_cases, 0);
	run("hmac.HmacTestVectors", RO, hmac_vectors);
	run_each(digests, NPARAM(digests), "digest.*", RO, digest_cases, 0);
	run_each(digests, NPARAM(digests), "digest.DigestKey+DigestKeyInvalid", RO, digest_key, 1);

	run("rng.*", RO, rng_cases);
	run("rng.*NoInit", NONE, rng_no_init);

	with_key_kinds("tookan.TookanAttackA1", RW, tookan_a1);
	with_key_kinds("tookan.TookanAttackA2", RW, tookan_a2);
	with_key_kinds("tookan.TookanAttackA3+A5a", RW, tookan_a3);
	with_key_kinds("tookan.TookanAttackA4+A5b", RW, tookan_a4);

	run("slot.TokenInit", INIT, token_init);

	printf("END\n");
	return 0;
}
