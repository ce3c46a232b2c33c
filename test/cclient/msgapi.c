/*
 * msgapi.c: a PKCS#11 3.0 client of the message-based functions of
 * libmodexp-pkcs11.so, driven by test/msgapi_test.go (neither pkcs11-tool
 * nor PyKCS11 calls them).
 *
 *   msgapi <module> <user PIN> <AES key> <HMAC key> <message>   (hex)
 *
 * It takes the 3.0 interface with C_GetInterface, logs in, and:
 *   - checks CKF_MESSAGE_* in C_GetMechanismInfo(CKM_AES_GCM, CKM_SHA256_HMAC);
 *   - encrypts the message three times with C_EncryptMessage, the token
 *     generating the IV (CKG_GENERATE_COUNTER after a 32-bit prefix the
 *     client fixes), with the two-call convention; once more in parts
 *     (C_EncryptMessageBegin, C_EncryptMessageNext, CKF_END_OF_MESSAGE,
 *     CKG_GENERATE_RANDOM);
 *   - decrypts each with C_DecryptMessage, refuses a changed tag;
 *   - signs the message with C_SignMessage (CKM_SHA256_HMAC) and in parts,
 *     verifies with C_VerifyMessage.
 * "DATA" lines carry the IVs, ciphertexts, tags and the MAC, which the Go
 * test checks with crypto/cipher and crypto/hmac. Exit status 0 when every
 * check passed.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static CK_FUNCTION_LIST_3_0 *f;
static CK_BBOOL yes = CK_TRUE;

static CK_OBJECT_HANDLE secret(CK_SESSION_HANDLE h, CK_KEY_TYPE kt, CK_BYTE *v, CK_ULONG n, CK_ATTRIBUTE_TYPE use1,
			       CK_ATTRIBUTE_TYPE use2)
{
	CK_OBJECT_CLASS cls = CKO_SECRET_KEY;
	CK_ATTRIBUTE t[] = {
		{CKA_CLASS, &cls, sizeof cls}, {CKA_KEY_TYPE, &kt, sizeof kt}, {CKA_VALUE, v, n},
		{use1, &yes, sizeof yes},      {use2, &yes, sizeof yes},
	};
	CK_OBJECT_HANDLE k = 0;
	EXPECT(f->C_CreateObject(h, t, 5, &k), CKR_OK, "C_CreateObject(secret key)");
	return k;
}

static void mech_flags(CK_SLOT_ID slot, CK_MECHANISM_TYPE m, CK_FLAGS want, const char *name)
{
	CK_MECHANISM_INFO info;
	if (EXPECT(f->C_GetMechanismInfo(slot, m, &info), CKR_OK, "C_GetMechanismInfo"))
		CHECK((info.flags & want) == want, "%s flags %#lx carry %#lx", name, info.flags, want);
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: msgapi module pin aes-key hmac-key message (hex)\n");
		return 2;
	}
	void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		printf("FAIL dlopen: %s\n", dlerror());
		return 1;
	}
	CK_C_GetInterface gi = (CK_C_GetInterface)dlsym(lib, "C_GetInterface");
	CK_VERSION v30 = {3, 0};
	CK_INTERFACE *it = NULL;
	if (gi == NULL || !EXPECT(gi((CK_UTF8CHAR *)"PKCS 11", &v30, &it, 0), CKR_OK, "C_GetInterface(PKCS 11, 3.0)"))
		return 1;
	f = (CK_FUNCTION_LIST_3_0 *)it->pFunctionList;
	CK_ULONG kl, hl, ml;
	CK_BYTE *kv = unhex(argv[3], &kl), *hv = unhex(argv[4], &hl), *msg = unhex(argv[5], &ml);

	EXPECT(f->C_Initialize(NULL), CKR_OK, "C_Initialize");
	CK_SLOT_ID slots[4];
	CK_ULONG ns = 4;
	EXPECT(f->C_GetSlotList(CK_TRUE, slots, &ns), CKR_OK, "C_GetSlotList");
	mech_flags(slots[0], CKM_AES_GCM, CKF_MESSAGE_ENCRYPT | CKF_MESSAGE_DECRYPT | CKF_MULTI_MESSAGE, "CKM_AES_GCM");
	mech_flags(slots[0], CKM_SHA256_HMAC, CKF_MESSAGE_SIGN | CKF_MESSAGE_VERIFY | CKF_MULTI_MESSAGE, "CKM_SHA256_HMAC");
	CK_SESSION_HANDLE h;
	EXPECT(f->C_OpenSession(slots[0], CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &h), CKR_OK, "C_OpenSession");
	EXPECT(f->C_Login(h, CKU_USER, (CK_UTF8CHAR *)argv[2], strlen(argv[2])), CKR_OK, "C_Login");
	CK_OBJECT_HANDLE aes = secret(h, CKK_AES, kv, kl, CKA_ENCRYPT, CKA_DECRYPT);
	CK_OBJECT_HANDLE mac = secret(h, CKK_GENERIC_SECRET, hv, hl, CKA_SIGN, CKA_VERIFY);

	/* Encryption, the token making the IV after the client's prefix. */
	CK_MECHANISM gcm = {CKM_AES_GCM, NULL, 0};
	EXPECT(f->C_MessageEncryptInit(h, &gcm, aes), CKR_OK, "C_MessageEncryptInit");
	CK_BYTE aad[] = "associated data";
	CK_BYTE iv[4][12], tag[4][16], ct[4][256];
	CK_ULONG ctl[4];
	if (ml > sizeof ct[0]) {
		printf("FAIL message too long\n");
		return 1;
	}
	for (int i = 0; i < 3; i++) {
		CK_BYTE prefix[12] = {0x0c, 0x11, 0xe7, 0x70};
		memcpy(iv[i], prefix, sizeof prefix);
		MODEXP_GCM_MESSAGE_PARAMS p = {iv[i], 12, 32, CKG_GENERATE_COUNTER, tag[i], 128};
		CK_ULONG n = 0;
		EXPECT(f->C_EncryptMessage(h, &p, sizeof p, aad, sizeof aad - 1, msg, ml, NULL, &n), CKR_OK,
		       "C_EncryptMessage (length)");
		CHECK(n == ml && memcmp(iv[i], prefix, 12) == 0, "length %lu, the IV untouched by the length report", n);
		ctl[i] = sizeof ct[i];
		EXPECT(f->C_EncryptMessage(h, &p, sizeof p, aad, sizeof aad - 1, msg, ml, ct[i], &ctl[i]), CKR_OK,
		       "C_EncryptMessage");
		CHECK(memcmp(iv[i], prefix, 4) == 0, "the IV keeps the 32-bit prefix");
		CHECK(i == 0 || memcmp(iv[i], iv[i - 1], 12) != 0, "a new IV for message %d", i);
		char name[16];
		snprintf(name, sizeof name, "iv%d", i);
		print_hex(name, iv[i], 12);
		snprintf(name, sizeof name, "ct%d", i);
		print_hex(name, ct[i], ctl[i]);
		snprintf(name, sizeof name, "tag%d", i);
		print_hex(name, tag[i], 16);
	}
	/* In parts: the IV at Begin, the ciphertext and the tag at the end. */
	memset(iv[3], 0, 12);
	MODEXP_GCM_MESSAGE_PARAMS pm = {iv[3], 12, 0, CKG_GENERATE_RANDOM, tag[3], 128};
	EXPECT(f->C_EncryptMessageBegin(h, &pm, sizeof pm, aad, sizeof aad - 1), CKR_OK, "C_EncryptMessageBegin");
	CK_ULONG half = ml / 2, n1 = sizeof ct[3], n2;
	EXPECT(f->C_EncryptMessageNext(h, &pm, sizeof pm, msg, half, ct[3], &n1, 0), CKR_OK, "C_EncryptMessageNext");
	n2 = sizeof ct[3] - n1;
	EXPECT(f->C_EncryptMessageNext(h, &pm, sizeof pm, msg + half, ml - half, ct[3] + n1, &n2, CKF_END_OF_MESSAGE),
	       CKR_OK, "C_EncryptMessageNext(CKF_END_OF_MESSAGE)");
	ctl[3] = n1 + n2;
	print_hex("iv3", iv[3], 12);
	print_hex("ct3", ct[3], ctl[3]);
	print_hex("tag3", tag[3], 16);
	EXPECT(f->C_MessageEncryptFinal(h), CKR_OK, "C_MessageEncryptFinal");

	/* Decryption of each, and a changed tag refused. */
	EXPECT(f->C_MessageDecryptInit(h, &gcm, aes), CKR_OK, "C_MessageDecryptInit");
	for (int i = 0; i < 4; i++) {
		MODEXP_GCM_MESSAGE_PARAMS p = {iv[i], 12, 0, CKG_NO_GENERATE, tag[i], 128};
		CK_BYTE pt[256];
		CK_ULONG pl = sizeof pt;
		EXPECT(f->C_DecryptMessage(h, &p, sizeof p, aad, sizeof aad - 1, ct[i], ctl[i], pt, &pl), CKR_OK,
		       "C_DecryptMessage");
		CHECK(pl == ml && memcmp(pt, msg, ml) == 0, "message %d decrypts to the message", i);
	}
	tag[0][0] ^= 1;
	MODEXP_GCM_MESSAGE_PARAMS bad = {iv[0], 12, 0, CKG_NO_GENERATE, tag[0], 128};
	CK_BYTE pt[256];
	CK_ULONG pl = sizeof pt;
	EXPECT(f->C_DecryptMessage(h, &bad, sizeof bad, aad, sizeof aad - 1, ct[0], ctl[0], pt, &pl),
	       CKR_ENCRYPTED_DATA_INVALID, "C_DecryptMessage(changed tag)");
	EXPECT(f->C_MessageDecryptFinal(h), CKR_OK, "C_MessageDecryptFinal");

	/* HMAC messages. */
	CK_MECHANISM hm = {CKM_SHA256_HMAC, NULL, 0};
	EXPECT(f->C_MessageSignInit(h, &hm, mac), CKR_OK, "C_MessageSignInit");
	CK_BYTE s1[32], s2[32];
	CK_ULONG sl1 = 0, sl2 = sizeof s2;
	EXPECT(f->C_SignMessage(h, NULL, 0, msg, ml, NULL, &sl1), CKR_OK, "C_SignMessage (length)");
	CHECK(sl1 == 32, "HMAC-SHA256 length %lu", sl1);
	EXPECT(f->C_SignMessage(h, NULL, 0, msg, ml, s1, &sl1), CKR_OK, "C_SignMessage");
	print_hex("hmac", s1, sl1);
	EXPECT(f->C_SignMessageBegin(h, NULL, 0), CKR_OK, "C_SignMessageBegin");
	EXPECT(f->C_SignMessageNext(h, NULL, 0, msg, half, NULL, NULL), CKR_OK, "C_SignMessageNext(part)");
	EXPECT(f->C_SignMessageNext(h, NULL, 0, msg + half, ml - half, s2, &sl2), CKR_OK, "C_SignMessageNext(last)");
	CHECK(sl2 == 32 && memcmp(s1, s2, 32) == 0, "the MAC in parts is the MAC");
	EXPECT(f->C_MessageSignFinal(h), CKR_OK, "C_MessageSignFinal");
	EXPECT(f->C_MessageVerifyInit(h, &hm, mac), CKR_OK, "C_MessageVerifyInit");
	EXPECT(f->C_VerifyMessage(h, NULL, 0, msg, ml, s1, sl1), CKR_OK, "C_VerifyMessage");
	s1[0] ^= 1;
	EXPECT(f->C_VerifyMessage(h, NULL, 0, msg, ml, s1, sl1), CKR_SIGNATURE_INVALID, "C_VerifyMessage(changed)");
	EXPECT(f->C_MessageVerifyFinal(h), CKR_OK, "C_MessageVerifyFinal");

	EXPECT(f->C_CloseSession(h), CKR_OK, "C_CloseSession");
	EXPECT(f->C_Finalize(NULL), CKR_OK, "C_Finalize");
	printf("SUMMARY pass=%d fail=%d\n", passes, fails);
	return fails != 0;
}
