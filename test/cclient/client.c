/*
 * client.c: a C host for libmodexp-pkcs11.so, driven by test/cclient_test.go.
 *
 *   client <path to libmodexp-pkcs11.so>
 *
 * It dlopens the module, takes the 3.0 interface through C_GetInterface and
 * runs a token's life: init token and PIN, login, RSA-2048 key generation,
 * signatures (SHA256-RSA-PKCS, SHA256-RSA-PKCS-PSS, RSA-PKCS-PSS over a
 * digest), encryption and decryption (OAEP, PKCS#1 v1.5), the error codes of
 * wrong PINs, sessions, handles and templates, threads, fork,
 * Finalize → Initialize and dlclose → dlopen. Each check prints a line
 * "ok ..." or "FAIL ..."; "DATA name hex" lines carry values the Go test
 * verifies independently (public key, signatures). Exit status: 0 when every
 * check passed.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static const char *SO_PIN = "so-pin-1234";
static const char *USER_PIN = "user-pin-5678";
static CK_BYTE MSG[] = "ModExp Token: a message signed through the C ABI";
#define MSG_LEN (sizeof MSG - 1)

static CK_BBOOL yes = CK_TRUE;
static CK_BYTE key_id[] = {0x42, 0x17};
static char key_label[] = "cclient-rsa";

static void *lib;
static CK_FUNCTION_LIST_3_0 *f;   /* the 3.0 list */
static CK_FUNCTION_LIST *f2;      /* the 2.40 list */
static CK_SLOT_ID slot;

static int load(const char *path)
{
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		CHECK(0, "dlopen %s: %s", path, dlerror());
		return 0;
	}
	CK_C_GetInterface gi = (CK_C_GetInterface)dlsym(lib, "C_GetInterface");
	CK_C_GetFunctionList gfl = (CK_C_GetFunctionList)dlsym(lib, "C_GetFunctionList");
	CHECK(gi != NULL && gfl != NULL, "dlsym C_GetInterface and C_GetFunctionList");
	if (gi == NULL || gfl == NULL)
		return 0;
	CK_INTERFACE *it = NULL;
	if (!EXPECT(gi(NULL, NULL, &it, 0), CKR_OK, "C_GetInterface(default)"))
		return 0;
	f = (CK_FUNCTION_LIST_3_0 *)it->pFunctionList;
	/* The default is the 3.2 list, whose first 92 entries are the 3.0 list's. */
	CHECK(strcmp((char *)it->pInterfaceName, "PKCS 11") == 0 && f->version.major == 3 && f->version.minor == 2,
	      "default interface is \"PKCS 11\" 3.2 (got %s %d.%d)", it->pInterfaceName, f->version.major, f->version.minor);
	if (!EXPECT(gfl(&f2), CKR_OK, "C_GetFunctionList"))
		return 0;
	CHECK(f2->version.major == 2 && f2->version.minor == 40, "C_GetFunctionList gives 2.40");
	return 1;
}

static int initialize(void)
{
	CK_C_INITIALIZE_ARGS args;
	memset(&args, 0, sizeof args);
	args.flags = CKF_OS_LOCKING_OK;
	return EXPECT(f->C_Initialize(&args), CKR_OK, "C_Initialize(CKF_OS_LOCKING_OK)");
}

static int blank_padded(const unsigned char *p, int n)
{
	for (int i = 0; i < n; i++)
		if (p[i] == 0)
			return 0;
	return p[0] != ' ';
}

static CK_SESSION_HANDLE open_rw(void)
{
	CK_SESSION_HANDLE h = CK_INVALID_HANDLE;
	EXPECT(f->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &h), CKR_OK, "C_OpenSession(RW)");
	return h;
}

static CK_OBJECT_HANDLE find_one(CK_SESSION_HANDLE h, CK_OBJECT_CLASS cls)
{
	CK_ATTRIBUTE t[] = {
		{CKA_CLASS, &cls, sizeof cls},
		{CKA_ID, key_id, sizeof key_id},
	};
	CK_OBJECT_HANDLE found[4];
	CK_ULONG n = 0;
	EXPECT(f->C_FindObjectsInit(h, t, 2), CKR_OK, "C_FindObjectsInit(class, id)");
	EXPECT(f->C_FindObjects(h, found, 4, &n), CKR_OK, "C_FindObjects");
	EXPECT(f->C_FindObjectsFinal(h), CKR_OK, "C_FindObjectsFinal");
	CHECK(n == 1, "exactly one object of class %lu with the key's ID (found %lu)", cls, n);
	return n == 1 ? found[0] : CK_INVALID_HANDLE;
}

/* sign_pkcs1 signs MSG with SHA256-RSA-PKCS; returns the length. */
static CK_ULONG sign_pkcs1(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE priv, CK_BYTE *sig)
{
	CK_MECHANISM m = {CKM_SHA256_RSA_PKCS, NULL, 0};
	CK_ULONG len = 512;
	if (f->C_SignInit(h, &m, priv) != CKR_OK)
		return 0;
	if (f->C_Sign(h, MSG, MSG_LEN, sig, &len) != CKR_OK)
		return 0;
	return len;
}

static CK_BYTE ref_sig[512];
static CK_ULONG ref_sig_len;

struct worker {
	CK_OBJECT_HANDLE priv;
	int ok;
};

static void *sign_worker(void *arg)
{
	struct worker *w = arg;
	CK_SESSION_HANDLE h;
	CK_BYTE sig[512];
	w->ok = 0;
	if (f->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &h) != CKR_OK)
		return NULL;
	int good = 0;
	for (int i = 0; i < 3; i++) {
		CK_ULONG n = sign_pkcs1(h, w->priv, sig);
		good += n == ref_sig_len && memcmp(sig, ref_sig, n) == 0;
	}
	f->C_CloseSession(h);
	w->ok = good == 3;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s libmodexp-pkcs11.so\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!load(argv[1]))
		goto out;

	/* Before C_Initialize. */
	CK_INFO info;
	EXPECT(f->C_GetInfo(&info), CKR_CRYPTOKI_NOT_INITIALIZED, "C_GetInfo before C_Initialize");
	if (!initialize())
		goto out;
	EXPECT(f->C_Initialize(NULL), CKR_CRYPTOKI_ALREADY_INITIALIZED, "second C_Initialize");

	/* Interface versions and padded strings. */
	if (EXPECT(f->C_GetInfo(&info), CKR_OK, "C_GetInfo (3.2 list)"))
		CHECK(info.cryptokiVersion.major == 3 && info.cryptokiVersion.minor == 2 &&
		      blank_padded(info.manufacturerID, 32) && blank_padded(info.libraryDescription, 32),
		      "3.2 C_GetInfo: version %d.%d, blank-padded strings", info.cryptokiVersion.major, info.cryptokiVersion.minor);
	if (EXPECT(f2->C_GetInfo(&info), CKR_OK, "C_GetInfo (2.40 list)"))
		CHECK(info.cryptokiVersion.major == 2 && info.cryptokiVersion.minor == 40,
		      "2.40 C_GetInfo: version %d.%d", info.cryptokiVersion.major, info.cryptokiVersion.minor);

	/* Slots, two calls. */
	CK_ULONG nslots = 0;
	EXPECT(f->C_GetSlotList(CK_FALSE, NULL, &nslots), CKR_OK, "C_GetSlotList(NULL)");
	CHECK(nslots >= 1, "at least one slot (%lu)", nslots);
	CK_SLOT_ID slots[16];
	CK_ULONG small = 0;
	if (nslots > 0)
		EXPECT(f->C_GetSlotList(CK_FALSE, slots, &small), CKR_BUFFER_TOO_SMALL, "C_GetSlotList(room for 0)");
	CHECK(small == nslots, "C_GetSlotList reports the count with CKR_BUFFER_TOO_SMALL");
	CK_ULONG room = 16;
	if (!EXPECT(f->C_GetSlotList(CK_FALSE, slots, &room), CKR_OK, "C_GetSlotList") || room == 0)
		goto out;
	slot = slots[0];

	/* Token initialisation. */
	CK_UTF8CHAR label[32];
	memset(label, ' ', sizeof label);
	memcpy(label, "cclient token", 13);
	EXPECT(f->C_InitToken(slot, (CK_UTF8CHAR_PTR)SO_PIN, strlen(SO_PIN), label), CKR_OK, "C_InitToken");
	CK_TOKEN_INFO ti;
	if (EXPECT(f->C_GetTokenInfo(slot, &ti), CKR_OK, "C_GetTokenInfo")) {
		CHECK(memcmp(ti.label, label, 32) == 0, "token label is the blank-padded label given");
		CHECK(blank_padded(ti.manufacturerID, 32) && blank_padded(ti.model, 16), "token strings blank-padded");
		CHECK(ti.flags & CKF_TOKEN_INITIALIZED, "CKF_TOKEN_INITIALIZED set");
	}

	CK_SESSION_HANDLE h = open_rw();
	EXPECT(f->C_Login(h, CKU_SO, (CK_UTF8CHAR_PTR)"wrong-so-pin", 12), CKR_PIN_INCORRECT, "SO login, wrong PIN");
	EXPECT(f->C_Login(h, CKU_SO, (CK_UTF8CHAR_PTR)SO_PIN, strlen(SO_PIN)), CKR_OK, "SO login");
	EXPECT(f->C_InitPIN(h, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN)), CKR_OK, "C_InitPIN");
	EXPECT(f->C_Logout(h), CKR_OK, "SO logout");
	EXPECT(f->C_Login(h, CKU_USER, (CK_UTF8CHAR_PTR)"000000", 6), CKR_PIN_INCORRECT, "user login, wrong PIN");
	EXPECT(f->C_LoginUser(h, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN), (CK_UTF8CHAR_PTR)"bob", 3),
	       CKR_ARGUMENTS_BAD, "C_LoginUser with a username");
	EXPECT(f->C_LoginUser(h, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN), NULL, 0), CKR_OK,
	       "C_LoginUser without a username");

	/* RSA-2048 key pair. */
	CK_ULONG bits = 2048;
	CK_BYTE e[] = {1, 0, 1};
	CK_ATTRIBUTE pubt[] = {
		{CKA_TOKEN, &yes, 1}, {CKA_VERIFY, &yes, 1}, {CKA_ENCRYPT, &yes, 1},
		{CKA_MODULUS_BITS, &bits, sizeof bits}, {CKA_PUBLIC_EXPONENT, e, sizeof e},
		{CKA_LABEL, key_label, strlen(key_label)}, {CKA_ID, key_id, sizeof key_id},
	};
	CK_ATTRIBUTE privt[] = {
		{CKA_TOKEN, &yes, 1}, {CKA_PRIVATE, &yes, 1}, {CKA_SENSITIVE, &yes, 1},
		{CKA_SIGN, &yes, 1}, {CKA_DECRYPT, &yes, 1},
		{CKA_LABEL, key_label, strlen(key_label)}, {CKA_ID, key_id, sizeof key_id},
	};
	CK_MECHANISM gen = {CKM_RSA_PKCS_KEY_PAIR_GEN, NULL, 0};
	CK_OBJECT_HANDLE pub = 0, priv = 0;
	if (!EXPECT(f->C_GenerateKeyPair(h, &gen, pubt, 7, privt, 7, &pub, &priv), CKR_OK, "C_GenerateKeyPair RSA-2048"))
		goto out;

	/* Attributes: two calls, short buffer, sensitive, invalid. */
	CK_BYTE modulus[600], exponent[16];
	CK_ATTRIBUTE ma = {CKA_MODULUS, NULL, 0};
	EXPECT(f->C_GetAttributeValue(h, pub, &ma, 1), CKR_OK, "CKA_MODULUS length query");
	CHECK(ma.ulValueLen == 256, "modulus length %lu", ma.ulValueLen);
	ma.pValue = modulus;
	ma.ulValueLen = 10;
	EXPECT(f->C_GetAttributeValue(h, pub, &ma, 1), CKR_BUFFER_TOO_SMALL, "CKA_MODULUS into 10 bytes");
	CHECK(ma.ulValueLen == CK_UNAVAILABLE_INFORMATION, "short buffer gives CK_UNAVAILABLE_INFORMATION");
	CK_ATTRIBUTE pa[] = {{CKA_MODULUS, modulus, sizeof modulus}, {CKA_PUBLIC_EXPONENT, exponent, sizeof exponent}};
	if (EXPECT(f->C_GetAttributeValue(h, pub, pa, 2), CKR_OK, "CKA_MODULUS, CKA_PUBLIC_EXPONENT")) {
		print_hex("modulus", modulus, pa[0].ulValueLen);
		print_hex("exponent", exponent, pa[1].ulValueLen);
	}
	CK_BYTE junk[600];
	CK_ATTRIBUTE sa[] = {{CKA_PRIVATE_EXPONENT, junk, sizeof junk}, {CKA_ID, junk, sizeof junk}};
	EXPECT(f->C_GetAttributeValue(h, priv, sa, 2), CKR_ATTRIBUTE_SENSITIVE, "CKA_PRIVATE_EXPONENT of a sensitive key");
	CHECK(sa[0].ulValueLen == CK_UNAVAILABLE_INFORMATION && sa[1].ulValueLen == sizeof key_id,
	      "sensitive attribute unavailable, the others answered");
	CK_ATTRIBUTE ia[] = {{0x0000FFF0UL, junk, sizeof junk}};
	EXPECT(f->C_GetAttributeValue(h, pub, ia, 1), CKR_ATTRIBUTE_TYPE_INVALID, "unknown attribute type");
	CHECK(ia[0].ulValueLen == CK_UNAVAILABLE_INFORMATION, "unknown attribute unavailable");

	/* SHA256-RSA-PKCS: two calls, short buffer, multi-part equals single-part. */
	print_hex("message", MSG, MSG_LEN);
	CK_MECHANISM sha256_pkcs = {CKM_SHA256_RSA_PKCS, NULL, 0};
	CK_BYTE sig[512];
	CK_ULONG siglen = 0;
	EXPECT(f->C_SignInit(h, &sha256_pkcs, priv), CKR_OK, "C_SignInit SHA256-RSA-PKCS");
	EXPECT(f->C_Sign(h, MSG, MSG_LEN, NULL, &siglen), CKR_OK, "C_Sign length query");
	CHECK(siglen == 256, "signature length %lu", siglen);
	siglen = 10;
	EXPECT(f->C_Sign(h, MSG, MSG_LEN, sig, &siglen), CKR_BUFFER_TOO_SMALL, "C_Sign into 10 bytes");
	CHECK(siglen == 256, "C_Sign reports 256 with CKR_BUFFER_TOO_SMALL (%lu)", siglen);
	EXPECT(f->C_Sign(h, MSG, MSG_LEN, NULL, NULL), CKR_ARGUMENTS_BAD, "C_Sign with NULL pulSignatureLen");
	/* Every error but CKR_BUFFER_TOO_SMALL ends the operation (PKCS#11 C_Sign). */
	siglen = sizeof sig;
	EXPECT(f->C_Sign(h, MSG, MSG_LEN, sig, &siglen), CKR_OPERATION_NOT_INITIALIZED, "C_Sign after CKR_ARGUMENTS_BAD");
	EXPECT(f->C_SignInit(h, &sha256_pkcs, priv), CKR_OK, "C_SignInit again");
	siglen = 10;
	EXPECT(f->C_Sign(h, MSG, MSG_LEN, sig, &siglen), CKR_BUFFER_TOO_SMALL, "C_Sign into 10 bytes again");
	siglen = sizeof sig;
	if (EXPECT(f->C_Sign(h, MSG, MSG_LEN, sig, &siglen), CKR_OK, "C_Sign (operation kept alive by BUFFER_TOO_SMALL)"))
		print_hex("sig_sha256_pkcs1", sig, siglen);
	memcpy(ref_sig, sig, siglen);
	ref_sig_len = siglen;
	EXPECT(f->C_Sign(h, MSG, MSG_LEN, sig, &siglen), CKR_OPERATION_NOT_INITIALIZED, "C_Sign after the operation ended");

	CK_BYTE sig2[512];
	CK_ULONG sig2len = sizeof sig2;
	EXPECT(f->C_SignInit(h, &sha256_pkcs, priv), CKR_OK, "C_SignInit (multi-part)");
	EXPECT(f->C_SignUpdate(h, MSG, 10), CKR_OK, "C_SignUpdate 1");
	EXPECT(f->C_SignUpdate(h, MSG + 10, MSG_LEN - 10), CKR_OK, "C_SignUpdate 2");
	EXPECT(f->C_SignFinal(h, sig2, &sig2len), CKR_OK, "C_SignFinal");
	CHECK(sig2len == ref_sig_len && memcmp(sig2, ref_sig, sig2len) == 0, "multi-part signature equals single-part");

	EXPECT(f->C_VerifyInit(h, &sha256_pkcs, pub), CKR_OK, "C_VerifyInit");
	EXPECT(f->C_Verify(h, MSG, MSG_LEN, ref_sig, ref_sig_len), CKR_OK, "C_Verify good signature");
	memcpy(sig2, ref_sig, ref_sig_len);
	sig2[100] ^= 1;
	EXPECT(f->C_VerifyInit(h, &sha256_pkcs, pub), CKR_OK, "C_VerifyInit");
	EXPECT(f->C_Verify(h, MSG, MSG_LEN, sig2, ref_sig_len), CKR_SIGNATURE_INVALID, "C_Verify tampered signature");

	/* PSS: SHA256-RSA-PKCS-PSS and RSA-PKCS-PSS over a digest. */
	CK_RSA_PKCS_PSS_PARAMS pss = {CKM_SHA256, CKG_MGF1_SHA256, 32};
	CK_MECHANISM sha256_pss = {CKM_SHA256_RSA_PKCS_PSS, &pss, sizeof pss};
	siglen = sizeof sig;
	EXPECT(f->C_SignInit(h, &sha256_pss, priv), CKR_OK, "C_SignInit SHA256-RSA-PKCS-PSS");
	if (EXPECT(f->C_Sign(h, MSG, MSG_LEN, sig, &siglen), CKR_OK, "C_Sign SHA256-RSA-PKCS-PSS"))
		print_hex("sig_sha256_pss", sig, siglen);
	EXPECT(f->C_VerifyInit(h, &sha256_pss, pub), CKR_OK, "C_VerifyInit SHA256-RSA-PKCS-PSS");
	EXPECT(f->C_Verify(h, MSG, MSG_LEN, sig, siglen), CKR_OK, "C_Verify SHA256-RSA-PKCS-PSS");

	CK_BYTE digest[32];
	CK_ULONG dlen = sizeof digest;
	CK_MECHANISM sha256 = {CKM_SHA256, NULL, 0};
	EXPECT(f->C_DigestInit(h, &sha256), CKR_OK, "C_DigestInit SHA256");
	EXPECT(f->C_Digest(h, MSG, MSG_LEN, digest, &dlen), CKR_OK, "C_Digest SHA256");
	CK_MECHANISM raw_pss = {CKM_RSA_PKCS_PSS, &pss, sizeof pss};
	siglen = sizeof sig;
	EXPECT(f->C_SignInit(h, &raw_pss, priv), CKR_OK, "C_SignInit RSA-PKCS-PSS");
	if (EXPECT(f->C_Sign(h, digest, dlen, sig, &siglen), CKR_OK, "C_Sign RSA-PKCS-PSS over the digest"))
		print_hex("sig_raw_pss", sig, siglen);
	EXPECT(f->C_VerifyInit(h, &raw_pss, pub), CKR_OK, "C_VerifyInit RSA-PKCS-PSS");
	EXPECT(f->C_Verify(h, digest, dlen, sig, siglen), CKR_OK, "C_Verify RSA-PKCS-PSS");
	raw_pss.ulParameterLen = sizeof pss - 1;
	EXPECT(f->C_SignInit(h, &raw_pss, priv), CKR_MECHANISM_PARAM_INVALID, "PSS parameters of the wrong length");

	/* OAEP and PKCS#1 v1.5 encryption. */
	CK_BYTE label_bytes[] = "oaep label";
	CK_RSA_PKCS_OAEP_PARAMS oaeps[2] = {
		{CKM_SHA256, CKG_MGF1_SHA256, CKZ_DATA_SPECIFIED, NULL, 0},
		{CKM_SHA256, CKG_MGF1_SHA256, CKZ_DATA_SPECIFIED, label_bytes, sizeof label_bytes - 1},
	};
	CK_MECHANISM encmechs[3] = {
		{CKM_RSA_PKCS_OAEP, &oaeps[0], sizeof oaeps[0]},
		{CKM_RSA_PKCS_OAEP, &oaeps[1], sizeof oaeps[1]},
		{CKM_RSA_PKCS, NULL, 0},
	};
	const char *encnames[3] = {"OAEP-SHA256", "OAEP-SHA256 with label", "RSA-PKCS"};
	CK_BYTE secret[] = "attack at dawn";
	for (int i = 0; i < 3; i++) {
		CK_BYTE ct[512], pt[512];
		CK_ULONG ctlen = 0, ptlen = 0;
		char what[96];
		snprintf(what, sizeof what, "C_EncryptInit %s", encnames[i]);
		EXPECT(f->C_EncryptInit(h, &encmechs[i], pub), CKR_OK, what);
		EXPECT(f->C_Encrypt(h, secret, sizeof secret - 1, NULL, &ctlen), CKR_OK, "C_Encrypt length query");
		CHECK(ctlen == 256, "%s ciphertext length %lu", encnames[i], ctlen);
		ctlen = sizeof ct;
		snprintf(what, sizeof what, "C_Encrypt %s", encnames[i]);
		EXPECT(f->C_Encrypt(h, secret, sizeof secret - 1, ct, &ctlen), CKR_OK, what);
		snprintf(what, sizeof what, "C_DecryptInit %s", encnames[i]);
		EXPECT(f->C_DecryptInit(h, &encmechs[i], priv), CKR_OK, what);
		EXPECT(f->C_Decrypt(h, ct, ctlen, NULL, &ptlen), CKR_OK, "C_Decrypt length query");
		CHECK(ptlen >= sizeof secret - 1 && ptlen <= 256, "C_Decrypt length query %lu", ptlen);
		ptlen = sizeof pt;
		snprintf(what, sizeof what, "C_Decrypt %s", encnames[i]);
		EXPECT(f->C_Decrypt(h, ct, ctlen, pt, &ptlen), CKR_OK, what);
		CHECK(ptlen == sizeof secret - 1 && memcmp(pt, secret, ptlen) == 0, "%s round trip", encnames[i]);
	}
	/* A tampered OAEP ciphertext is refused. */
	{
		CK_BYTE ct[512], pt[512];
		CK_ULONG ctlen = sizeof ct, ptlen = sizeof pt;
		f->C_EncryptInit(h, &encmechs[0], pub);
		f->C_Encrypt(h, secret, sizeof secret - 1, ct, &ctlen);
		ct[5] ^= 0x40;
		EXPECT(f->C_DecryptInit(h, &encmechs[0], priv), CKR_OK, "C_DecryptInit OAEP");
		EXPECT2(f->C_Decrypt(h, ct, ctlen, pt, &ptlen), CKR_ENCRYPTED_DATA_INVALID, CKR_FUNCTION_FAILED,
			"C_Decrypt tampered OAEP ciphertext");
	}

	/* Error codes. */
	EXPECT(f->C_SignInit(0xDEAD, &sha256_pkcs, priv), CKR_SESSION_HANDLE_INVALID, "C_SignInit on a wrong session");
	EXPECT(f->C_SignInit(h, &sha256_pkcs, 0xBEEF), CKR_KEY_HANDLE_INVALID, "C_SignInit with a wrong key handle");
	CK_ATTRIBUTE la = {CKA_LABEL, junk, sizeof junk};
	EXPECT(f->C_GetAttributeValue(h, 0xBEEF, &la, 1), CKR_OBJECT_HANDLE_INVALID, "C_GetAttributeValue of a wrong handle");
	siglen = sizeof sig;
	EXPECT(f->C_Sign(h, MSG, MSG_LEN, sig, &siglen), CKR_OPERATION_NOT_INITIALIZED, "C_Sign without C_SignInit");
	CK_MECHANISM bogus = {0x7FFF1234UL, NULL, 0};
	EXPECT(f->C_SignInit(h, &bogus, priv), CKR_MECHANISM_INVALID, "C_SignInit with an unknown mechanism");
	EXPECT2(f->C_SignInit(h, &sha256_pkcs, pub), CKR_KEY_FUNCTION_NOT_PERMITTED, CKR_KEY_TYPE_INCONSISTENT,
		"C_SignInit with the public key");
	CK_OBJECT_HANDLE p2, q2;
	CK_ATTRIBUTE nobits[] = {{CKA_PUBLIC_EXPONENT, e, sizeof e}};
	EXPECT(f->C_GenerateKeyPair(h, &gen, nobits, 1, privt, 7, &p2, &q2), CKR_TEMPLATE_INCOMPLETE,
	       "C_GenerateKeyPair without CKA_MODULUS_BITS");
	CK_BYTE short_class[3] = {3, 0, 0};
	CK_ATTRIBUTE badclass[] = {{CKA_CLASS, short_class, sizeof short_class}, {CKA_LABEL, key_label, 3}};
	CK_OBJECT_HANDLE o;
	EXPECT(f->C_CreateObject(h, badclass, 2, &o), CKR_ATTRIBUTE_VALUE_INVALID, "C_CreateObject with a 3-byte CKA_CLASS");
	CK_ATTRIBUTE nullval[] = {{CKA_LABEL, NULL, 4}};
	EXPECT(f->C_FindObjectsInit(h, nullval, 1), CKR_ARGUMENTS_BAD, "C_FindObjectsInit with NULL pValue and length 4");

	/* Threads: four sessions signing at once. */
	{
		pthread_t th[4];
		struct worker w[4];
		for (int i = 0; i < 4; i++) {
			w[i].priv = priv;
			pthread_create(&th[i], NULL, sign_worker, &w[i]);
		}
		int good = 0;
		for (int i = 0; i < 4; i++) {
			pthread_join(th[i], NULL);
			good += w[i].ok;
		}
		CHECK(good == 4, "4 threads x 3 signatures in parallel sessions equal the reference (%d/4 threads)", good);
	}

	/* Fork: the child works through a freshly exec'd helper (cgo/fork.c):
	 * it initialises, opens its own session, logs in and signs the same
	 * signature; the parent's session handle means nothing there. */
	{
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			CK_SESSION_HANDLE ch = CK_INVALID_HANDLE;
			CK_BYTE s[512];
			CK_ULONG sl = sizeof s;
			int bad = 0;
			CK_RV rv = f->C_Initialize(NULL);
			bad += rv != CKR_OK && rv != CKR_CRYPTOKI_ALREADY_INITIALIZED;
			bad += f->C_GetInfo(&info) != CKR_OK;
			bad += f->C_Sign(h, MSG, MSG_LEN, s, &sl) == CKR_OK;
			bad += f->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &ch) != CKR_OK;
			bad += f->C_Login(ch, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN)) != CKR_OK;
			CK_OBJECT_HANDLE cpriv = find_one(ch, CKO_PRIVATE_KEY);
			bad += sign_pkcs1(ch, cpriv, s) != ref_sig_len || memcmp(s, ref_sig, ref_sig_len) != 0;
			bad += f->C_Finalize(NULL) != CKR_OK;
			_exit(bad);
		}
		int status = -1, waited = 0;
		pid_t r = 0;
		while (waited < 10000 && (r = waitpid(pid, &status, WNOHANG)) == 0) {
			usleep(10000);
			waited += 10;
		}
		if (r == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			CHECK(0, "forked child hung (killed after 10 s)");
		} else {
			CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "forked child: initialises, logs in and signs the reference signature (%d wrong)",
			      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		}
		CHECK(sign_pkcs1(h, priv, sig) == ref_sig_len && memcmp(sig, ref_sig, ref_sig_len) == 0,
		      "parent still signs after the fork");
	}

	EXPECT(f->C_Logout(h), CKR_OK, "C_Logout");
	EXPECT(f->C_CloseSession(h), CKR_OK, "C_CloseSession");
	EXPECT(f->C_CloseSession(h), CKR_SESSION_HANDLE_INVALID, "C_CloseSession twice");

	/* Finalize → Initialize: the key persists and signs the same. */
	EXPECT(f->C_Finalize(NULL), CKR_OK, "C_Finalize");
	EXPECT(f->C_GetInfo(&info), CKR_CRYPTOKI_NOT_INITIALIZED, "C_GetInfo after C_Finalize");
	if (initialize()) {
		h = open_rw();
		EXPECT(f->C_Login(h, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN)), CKR_OK, "login after re-initialize");
		priv = find_one(h, CKO_PRIVATE_KEY);
		CHECK(sign_pkcs1(h, priv, sig) == ref_sig_len && memcmp(sig, ref_sig, ref_sig_len) == 0,
		      "signature after Finalize → Initialize equals the reference");
		EXPECT(f->C_Finalize(NULL), CKR_OK, "C_Finalize with a session open");
	}

	/* dlclose → dlopen → Initialize (dlclose is a no-op for a Go library). */
	dlclose(lib);
	if (load(argv[1]) && initialize()) {
		h = open_rw();
		EXPECT(f->C_Login(h, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN)), CKR_OK, "login after dlopen");
		priv = find_one(h, CKO_PRIVATE_KEY);
		CHECK(sign_pkcs1(h, priv, sig) == ref_sig_len && memcmp(sig, ref_sig, ref_sig_len) == 0,
		      "signature after dlclose → dlopen → Initialize equals the reference");
		EXPECT(f->C_Finalize(NULL), CKR_OK, "final C_Finalize");
	}
	dlclose(lib);

out:
	printf("SUMMARY pass=%d fail=%d\n", passes, fails);
	return fails == 0 ? 0 : 1;
}
