/*
 * vectors.c: known-answer vectors through the C ABI of libmodexp-pkcs11.so,
 * driven by test/vectors_test.go (which feeds it Wycheproof and FIPS 202
 * vectors).
 *
 *   vectors <module> <user PIN>   < lines
 *
 * On a token already initialised, it logs in and runs one case per line of
 * standard input (values in hex, "-" for empty):
 *
 *   ECDH <mech> <ec-params> <d> <public> <valid|invalid|acceptable> <shared>
 *       imports d as a session private key (CKA_DERIVE), derives with
 *       C_DeriveKey(mech, CKD_NULL, public) a readable generic secret and
 *       compares it with shared; an invalid case must be refused with
 *       CKR_MECHANISM_PARAM_INVALID.
 *   EDDSA <seed> <public> <message> <signature> <valid|invalid>
 *       imports the Ed25519 key pair, checks C_Verify(CKM_EDDSA); for a
 *       valid case also that C_Sign gives the same signature.
 *   DIGEST <mech> <message> <digest>
 *
 * A failed case prints a "FAIL" line; the last line is
 * "SUMMARY pass=N fail=M" and the exit status is 0 when M is 0.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static CK_FUNCTION_LIST *f;
static CK_SESSION_HANDLE h;
static CK_BBOOL yes = CK_TRUE, no = CK_FALSE;

static void result(int ok, const char *kind, const char *why, CK_RV rv)
{
	if (ok) {
		passes++;
		return;
	}
	fails++;
	printf("FAIL %s case %d: %s (0x%lX)\n", kind, passes + fails, why, rv);
	fflush(stdout);
}

static void ecdh_case(char **a)
{
	CK_ULONG ml, pl, dl, ql, sl;
	CK_BYTE *mb = unhex(a[0], &ml), *params = unhex(a[1], &pl), *d = unhex(a[2], &dl);
	CK_BYTE *pub = unhex(a[3], &ql), *shared = unhex(a[5], &sl);
	CK_MECHANISM_TYPE mt = 0;
	for (CK_ULONG i = 0; i < ml; i++)
		mt = mt << 8 | mb[i];
	CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
	CK_KEY_TYPE kt = CKK_EC;
	CK_ATTRIBUTE kt_[] = {
		{CKA_CLASS, &cls, sizeof cls}, {CKA_KEY_TYPE, &kt, sizeof kt}, {CKA_TOKEN, &no, sizeof no},
		{CKA_DERIVE, &yes, sizeof yes}, {CKA_EC_PARAMS, params, pl}, {CKA_VALUE, d, dl},
	};
	CK_OBJECT_HANDLE key = 0, secret = 0;
	CK_RV rv = f->C_CreateObject(h, kt_, 6, &key);
	if (rv != CKR_OK) {
		result(0, "ECDH", "C_CreateObject of the private key", rv);
		goto out;
	}
	CK_ECDH1_DERIVE_PARAMS p = {CKD_NULL, 0, NULL, ql, pub};
	CK_MECHANISM mech = {mt, &p, sizeof p};
	CK_OBJECT_CLASS scls = CKO_SECRET_KEY;
	CK_KEY_TYPE skt = CKK_GENERIC_SECRET;
	CK_ATTRIBUTE st[] = {
		{CKA_CLASS, &scls, sizeof scls}, {CKA_KEY_TYPE, &skt, sizeof skt}, {CKA_TOKEN, &no, sizeof no},
		{CKA_SENSITIVE, &no, sizeof no}, {CKA_EXTRACTABLE, &yes, sizeof yes},
	};
	rv = f->C_DeriveKey(h, &mech, key, st, 5, &secret);
	if (rv != CKR_OK) {
		if (strcmp(a[4], "valid") == 0)
			result(0, "ECDH", "valid case refused", rv);
		else
			result(rv == CKR_MECHANISM_PARAM_INVALID, "ECDH", "refused without CKR_MECHANISM_PARAM_INVALID", rv);
		goto out;
	}
	if (strcmp(a[4], "invalid") == 0) {
		result(0, "ECDH", "invalid case derived", rv);
		goto out;
	}
	CK_BYTE v[256];
	CK_ATTRIBUTE va = {CKA_VALUE, v, sizeof v};
	rv = f->C_GetAttributeValue(h, secret, &va, 1);
	result(rv == CKR_OK && va.ulValueLen == sl && memcmp(v, shared, sl) == 0, "ECDH", "wrong secret", rv);
out:
	if (secret)
		f->C_DestroyObject(h, secret);
	if (key)
		f->C_DestroyObject(h, key);
	free(mb), free(params), free(d), free(pub), free(shared);
}

static void eddsa_case(char **a)
{
	CK_ULONG kl, ql, ml, sl;
	CK_BYTE *seed = unhex(a[0], &kl), *pk = unhex(a[1], &ql), *msg = unhex(a[2], &ml), *sig = unhex(a[3], &sl);
	CK_BYTE params[] = {0x06, 0x03, 0x2b, 0x65, 0x70}; /* id-Ed25519 */
	CK_BYTE point[2 + 32] = {0x04, 0x20};
	CK_OBJECT_CLASS pubc = CKO_PUBLIC_KEY, privc = CKO_PRIVATE_KEY;
	CK_KEY_TYPE kt = CKK_EC_EDWARDS;
	CK_OBJECT_HANDLE pub = 0, priv = 0;
	CK_RV rv;
	if (ql != 32 || kl != 32) {
		result(0, "EDDSA", "key sizes", 0);
		goto out;
	}
	memcpy(point + 2, pk, 32);
	CK_ATTRIBUTE pt[] = {
		{CKA_CLASS, &pubc, sizeof pubc}, {CKA_KEY_TYPE, &kt, sizeof kt}, {CKA_TOKEN, &no, sizeof no},
		{CKA_EC_PARAMS, params, sizeof params}, {CKA_EC_POINT, point, sizeof point},
	};
	CK_ATTRIBUTE qt[] = {
		{CKA_CLASS, &privc, sizeof privc}, {CKA_KEY_TYPE, &kt, sizeof kt}, {CKA_TOKEN, &no, sizeof no},
		{CKA_EC_PARAMS, params, sizeof params}, {CKA_VALUE, seed, kl}, {CKA_SIGN, &yes, sizeof yes},
	};
	if ((rv = f->C_CreateObject(h, pt, 5, &pub)) != CKR_OK || (rv = f->C_CreateObject(h, qt, 6, &priv)) != CKR_OK) {
		result(0, "EDDSA", "C_CreateObject", rv);
		goto out;
	}
	CK_MECHANISM mech = {CKM_EDDSA, NULL, 0};
	rv = f->C_VerifyInit(h, &mech, pub);
	if (rv == CKR_OK)
		rv = f->C_Verify(h, msg, ml, sig, sl);
	if (strcmp(a[4], "valid") != 0) {
		result(rv == CKR_SIGNATURE_INVALID || rv == CKR_SIGNATURE_LEN_RANGE, "EDDSA", "invalid signature not refused", rv);
		goto out;
	}
	if (rv != CKR_OK) {
		result(0, "EDDSA", "valid signature refused", rv);
		goto out;
	}
	CK_BYTE mine[64];
	CK_ULONG n = sizeof mine;
	rv = f->C_SignInit(h, &mech, priv);
	if (rv == CKR_OK)
		rv = f->C_Sign(h, msg, ml, mine, &n);
	result(rv == CKR_OK && n == sl && memcmp(mine, sig, n) == 0, "EDDSA", "C_Sign differs from the vector", rv);
out:
	if (pub)
		f->C_DestroyObject(h, pub);
	if (priv)
		f->C_DestroyObject(h, priv);
	free(seed), free(pk), free(msg), free(sig);
}

static void digest_case(char **a)
{
	CK_ULONG ml, il, dl;
	CK_BYTE *mb = unhex(a[0], &ml), *in = unhex(a[1], &il), *want = unhex(a[2], &dl);
	CK_MECHANISM_TYPE mt = 0;
	for (CK_ULONG i = 0; i < ml; i++)
		mt = mt << 8 | mb[i];
	CK_MECHANISM mech = {mt, NULL, 0};
	CK_BYTE out[64];
	CK_ULONG n = sizeof out;
	CK_RV rv = f->C_DigestInit(h, &mech);
	if (rv == CKR_OK)
		rv = f->C_Digest(h, in, il, out, &n);
	result(rv == CKR_OK && n == dl && memcmp(out, want, n) == 0, "DIGEST", "wrong digest", rv);
	free(mb), free(in), free(want);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: vectors module pin < cases\n");
		return 2;
	}
	if ((f = load_2_40(argv[1])) == NULL)
		return 1;
	CK_SLOT_ID slots[4];
	CK_ULONG ns = 4;
	if (f->C_Initialize(NULL) != CKR_OK || f->C_GetSlotList(CK_TRUE, slots, &ns) != CKR_OK || ns == 0 ||
	    f->C_OpenSession(slots[0], CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &h) != CKR_OK ||
	    f->C_Login(h, CKU_USER, (CK_UTF8CHAR *)argv[2], strlen(argv[2])) != CKR_OK) {
		printf("FAIL setup\n");
		return 1;
	}
	static char line[1 << 16];
	while (fgets(line, sizeof line, stdin)) {
		char *a[8];
		int n = 0;
		for (char *tok = strtok(line, " \n"); tok && n < 8; tok = strtok(NULL, " \n"))
			a[n++] = tok;
		if (n == 7 && strcmp(a[0], "ECDH") == 0)
			ecdh_case(a + 1);
		else if (n == 6 && strcmp(a[0], "EDDSA") == 0)
			eddsa_case(a + 1);
		else if (n == 4 && strcmp(a[0], "DIGEST") == 0)
			digest_case(a + 1);
		else if (n > 0)
			result(0, "input", "malformed line", 0);
	}
	f->C_CloseSession(h);
	f->C_Finalize(NULL);
	printf("SUMMARY pass=%d fail=%d\n", passes, fails);
	return fails != 0;
}
