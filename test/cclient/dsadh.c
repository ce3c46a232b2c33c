/*
 * dsadh.c: DSA and Diffie-Hellman through the C ABI of libmodexp-pkcs11.so,
 * driven by test/dsadh_test.go.
 *
 *   dsadh <module> <user PIN> <p> <q> <g> <message> <dh p> <dh g> <peer y>
 *
 * (values in hex). On a token already initialised, it logs in, generates a
 * DSA key pair on (p, q, g) (token objects, CKA_ID 0d5a, for pkcs11-tool
 * afterwards), signs the message with CKM_DSA_SHA256 and
 * verifies it with C_Verify (and refuses an altered one); generates DSA
 * domain parameters with C_GenerateKey(CKM_DSA_PARAMETER_GEN); generates a
 * DH key pair on (dh p, dh g) and derives with C_DeriveKey
 * (CKM_DH_PKCS_DERIVE, the peer's y as the parameter) a readable generic
 * secret. "ok"/"FAIL" lines are checks; "DATA name hex" lines carry the
 * public keys (CKA_PUBLIC_KEY_INFO), the signature and the secret, which the
 * Go test checks with openssl. Exit status 0 when every check passed.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static CK_FUNCTION_LIST *f;
static CK_BBOOL yes = CK_TRUE, no = CK_FALSE;

/* attr reads one attribute (two calls); returns a malloc'ed value. */
static CK_BYTE *attr(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE o, CK_ATTRIBUTE_TYPE t, CK_ULONG *n)
{
	CK_ATTRIBUTE a = {t, NULL, 0};
	if (!EXPECT(f->C_GetAttributeValue(h, o, &a, 1), CKR_OK, "C_GetAttributeValue (length)"))
		return NULL;
	a.pValue = malloc(a.ulValueLen ? a.ulValueLen : 1);
	if (!EXPECT(f->C_GetAttributeValue(h, o, &a, 1), CKR_OK, "C_GetAttributeValue"))
		return NULL;
	*n = a.ulValueLen;
	return a.pValue;
}

int main(int argc, char **argv)
{
	if (argc != 10) {
		fprintf(stderr, "usage: dsadh module pin p q g message dh-p dh-g peer-y (hex)\n");
		return 2;
	}
	if ((f = load_2_40(argv[1])) == NULL)
		return 1;
	CK_ULONG pl, ql, gl, ml, dpl, dgl, yl;
	CK_BYTE *p = unhex(argv[3], &pl), *q = unhex(argv[4], &ql), *g = unhex(argv[5], &gl);
	CK_BYTE *msg = unhex(argv[6], &ml);
	CK_BYTE *dp = unhex(argv[7], &dpl), *dg = unhex(argv[8], &dgl), *peer = unhex(argv[9], &yl);

	EXPECT(f->C_Initialize(NULL), CKR_OK, "C_Initialize");
	CK_SLOT_ID slots[4];
	CK_ULONG ns = 4;
	EXPECT(f->C_GetSlotList(CK_TRUE, slots, &ns), CKR_OK, "C_GetSlotList");
	CK_SESSION_HANDLE h;
	EXPECT(f->C_OpenSession(slots[0], CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &h), CKR_OK, "C_OpenSession");
	EXPECT(f->C_Login(h, CKU_USER, (CK_UTF8CHAR *)argv[2], strlen(argv[2])), CKR_OK, "C_Login");

	/* DSA key pair, signature, verification. */
	CK_MECHANISM kpg = {CKM_DSA_KEY_PAIR_GEN, NULL, 0};
	CK_BYTE id[] = {0x0d, 0x5a};
	CK_ATTRIBUTE pubT[] = {
		{CKA_PRIME, p, pl}, {CKA_SUBPRIME, q, ql}, {CKA_BASE, g, gl},
		{CKA_TOKEN, &yes, sizeof yes}, {CKA_VERIFY, &yes, sizeof yes}, {CKA_ID, id, sizeof id},
	};
	CK_ATTRIBUTE privT[] = {{CKA_TOKEN, &yes, sizeof yes}, {CKA_SIGN, &yes, sizeof yes}, {CKA_ID, id, sizeof id}};
	CK_OBJECT_HANDLE pub = 0, priv = 0;
	EXPECT(f->C_GenerateKeyPair(h, &kpg, pubT, 6, privT, 3, &pub, &priv), CKR_OK, "C_GenerateKeyPair(CKM_DSA_KEY_PAIR_GEN)");
	CK_ULONG n;
	CK_BYTE *spki = attr(h, pub, CKA_PUBLIC_KEY_INFO, &n);
	if (spki)
		print_hex("dsa_spki", spki, n);
	CK_MECHANISM sm = {CKM_DSA_SHA256, NULL, 0};
	CK_BYTE sig[128];
	CK_ULONG sl = 0;
	EXPECT(f->C_SignInit(h, &sm, priv), CKR_OK, "C_SignInit(CKM_DSA_SHA256)");
	EXPECT(f->C_Sign(h, msg, ml, NULL, &sl), CKR_OK, "C_Sign (length)");
	CHECK(sl == 2 * ql, "signature length %lu for a %lu-byte q", sl, ql);
	EXPECT(f->C_Sign(h, msg, ml, sig, &sl), CKR_OK, "C_Sign");
	print_hex("dsa_sig", sig, sl);
	EXPECT(f->C_VerifyInit(h, &sm, pub), CKR_OK, "C_VerifyInit");
	EXPECT(f->C_Verify(h, msg, ml, sig, sl), CKR_OK, "C_Verify of the token's signature");
	sig[sl - 1] ^= 1;
	EXPECT(f->C_VerifyInit(h, &sm, pub), CKR_OK, "C_VerifyInit");
	EXPECT(f->C_Verify(h, msg, ml, sig, sl), CKR_SIGNATURE_INVALID, "C_Verify of an altered signature");

	/* DSA domain parameters. */
	CK_MECHANISM pg = {CKM_DSA_PARAMETER_GEN, NULL, 0};
	CK_ULONG bits = 1024;
	CK_ATTRIBUTE pgT[] = {{CKA_PRIME_BITS, &bits, sizeof bits}};
	CK_OBJECT_HANDLE dom = 0;
	EXPECT(f->C_GenerateKey(h, &pg, pgT, 1, &dom), CKR_OK, "C_GenerateKey(CKM_DSA_PARAMETER_GEN)");
	CK_BYTE *dprime = attr(h, dom, CKA_PRIME, &n);
	CHECK(dprime != NULL && n == 128 && (dprime[0] & 0x80), "generated CKA_PRIME of %lu bytes", n);

	/* DH key pair and derivation. */
	CK_MECHANISM dkpg = {CKM_DH_PKCS_KEY_PAIR_GEN, NULL, 0};
	CK_ATTRIBUTE dpubT[] = {{CKA_PRIME, dp, dpl}, {CKA_BASE, dg, dgl}, {CKA_TOKEN, &no, sizeof no}};
	CK_ATTRIBUTE dprivT[] = {{CKA_TOKEN, &no, sizeof no}, {CKA_DERIVE, &yes, sizeof yes}};
	CK_OBJECT_HANDLE dpub = 0, dpriv = 0;
	EXPECT(f->C_GenerateKeyPair(h, &dkpg, dpubT, 3, dprivT, 2, &dpub, &dpriv), CKR_OK, "C_GenerateKeyPair(CKM_DH_PKCS_KEY_PAIR_GEN)");
	CK_BYTE *dspki = attr(h, dpub, CKA_PUBLIC_KEY_INFO, &n);
	if (dspki)
		print_hex("dh_spki", dspki, n);
	CK_MECHANISM dm = {CKM_DH_PKCS_DERIVE, peer, yl};
	CK_OBJECT_CLASS sc = CKO_SECRET_KEY;
	CK_KEY_TYPE kt = CKK_GENERIC_SECRET;
	CK_ATTRIBUTE sT[] = {
		{CKA_CLASS, &sc, sizeof sc}, {CKA_KEY_TYPE, &kt, sizeof kt},
		{CKA_SENSITIVE, &no, sizeof no}, {CKA_EXTRACTABLE, &yes, sizeof yes},
	};
	CK_OBJECT_HANDLE sec = 0;
	EXPECT(f->C_DeriveKey(h, &dm, dpriv, sT, 4, &sec), CKR_OK, "C_DeriveKey(CKM_DH_PKCS_DERIVE)");
	CK_BYTE *z = attr(h, sec, CKA_VALUE, &n);
	if (z)
		print_hex("dh_secret", z, n);
	CK_BYTE one = 1;
	CK_MECHANISM bad = {CKM_DH_PKCS_DERIVE, &one, 1};
	EXPECT(f->C_DeriveKey(h, &bad, dpriv, sT, 4, &sec), CKR_MECHANISM_PARAM_INVALID, "C_DeriveKey with the peer value 1");

	EXPECT(f->C_Logout(h), CKR_OK, "C_Logout");
	EXPECT(f->C_Finalize(NULL), CKR_OK, "C_Finalize");
	printf("SUMMARY pass=%d fail=%d\n", passes, fails);
	return fails ? 1 : 0;
}
