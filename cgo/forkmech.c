/*
 * forkmech.c: a forked child offers what the parent offers.
 *
 * In a forked child every call goes to p11-kit's RPC client (fork.c), and
 * p11-kit 0.24's RPC carries only the mechanisms on its allow-list: gone
 * are CKM_ECDSA_SHA224..512, CKM_DSA_SHA224..512, CKM_SHA*_RSA_PKCS_PSS,
 * CKM_SHA224_RSA_PKCS and the CKM_SHA224 digest, while CKM_ECDSA, CKM_DSA,
 * CKM_RSA_PKCS, CKM_RSA_PKCS_PSS (with its parameters) and the other
 * digests cross. So the child's C layer does each missing hashed mechanism
 * itself, as the token does: the digest (remote CKM_SHA_1/SHA256/SHA384/
 * SHA512 on the same session, or SHA-224 here, which has no remote
 * mechanism), then the raw mechanism on the digest: CKM_ECDSA or CKM_DSA
 * as is, CKM_RSA_PKCS over the SHA-224 DigestInfo, CKM_RSA_PKCS_PSS with
 * the caller's CK_RSA_PKCS_PSS_PARAMS. C_GetMechanismList adds them (when
 * their raw mechanism is there), C_GetMechanismInfo answers the raw
 * mechanism's sizes with sign/verify flags, and C_GetInfo answers the
 * version of the interface the caller chose (3.0 through C_GetInterface,
 * 2.40 through C_GetFunctionList), where p11-kit-client says 2.40 for both.
 *
 * Limits: an emulated operation uses the remote session's digest operation
 * (except SHA-224): an application that keeps its own C_DigestInit open on
 * the session and starts an emulated sign or verify gets
 * CKR_OPERATION_ACTIVE. Mechanisms that are not a digest plus a carried
 * raw mechanism (CKM_EDDSA, ECDH derivation, EdDSA key generation) stay
 * unavailable in a child. Nothing here calls Go.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "pkcs11_3.h"

/* ------------------------------------------------------------------------
 * SHA-224 (FIPS 180-4 §6.3: SHA-256 with its own initial value, truncated).
 * ---------------------------------------------------------------------- */

typedef struct {
	uint32_t h[8];
	uint64_t len; /* bytes hashed */
	uint8_t buf[64];
	size_t n; /* bytes in buf */
} fx_sha224;

static const uint32_t fx_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define FX_ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void fx_block(uint32_t h[8], const uint8_t p[64])
{
	uint32_t w[64];
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
		       p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = FX_ROR(w[i - 15], 7) ^ FX_ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = FX_ROR(w[i - 2], 17) ^ FX_ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = k + (FX_ROR(e, 6) ^ FX_ROR(e, 11) ^ FX_ROR(e, 25)) + ((e & f) ^ (~e & g)) + fx_k[i] + w[i];
		uint32_t t2 = (FX_ROR(a, 2) ^ FX_ROR(a, 13) ^ FX_ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		k = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

static void fx_sha224_init(fx_sha224 *s)
{
	static const uint32_t iv[8] = {0xc1059ed8, 0x367cd507, 0x3070dd17, 0xf70e5939,
				       0xffc00b31, 0x68581511, 0x64f98fa7, 0xbefa4fa4};
	memcpy(s->h, iv, sizeof iv);
	s->len = 0;
	s->n = 0;
}

static void fx_sha224_update(fx_sha224 *s, const uint8_t *p, size_t len)
{
	s->len += len;
	while (len > 0) {
		size_t take = 64 - s->n < len ? 64 - s->n : len;
		memcpy(s->buf + s->n, p, take);
		s->n += take, p += take, len -= take;
		if (s->n == 64) {
			fx_block(s->h, s->buf);
			s->n = 0;
		}
	}
}

static void fx_sha224_final(fx_sha224 *s, uint8_t out[28])
{
	uint64_t bits = s->len * 8;
	uint8_t pad[72] = {0x80};
	size_t padlen = (s->n < 56 ? 56 : 120) - s->n;
	for (int i = 0; i < 8; i++)
		pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
	fx_sha224_update(s, pad, padlen + 8);
	for (int i = 0; i < 7; i++) {
		out[4 * i] = (uint8_t)(s->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)s->h[i];
	}
}

/* modexp_fx_sha224 hashes in one call (tests). */
void modexp_fx_sha224(const uint8_t *p, size_t len, uint8_t out[28])
{
	fx_sha224 s;
	fx_sha224_init(&s);
	fx_sha224_update(&s, p, len);
	fx_sha224_final(&s, out);
}

/* ------------------------------------------------------------------------
 * The emulated mechanisms.
 * ---------------------------------------------------------------------- */

enum { FX_AS_IS, FX_PKCS1, FX_PSS };

typedef struct {
	CK_MECHANISM_TYPE mech, digest, raw;
	int how;
} fx_map;

static const fx_map fx_maps[] = {
	{CKM_ECDSA_SHA224, CKM_SHA224, CKM_ECDSA, FX_AS_IS},
	{CKM_ECDSA_SHA256, CKM_SHA256, CKM_ECDSA, FX_AS_IS},
	{CKM_ECDSA_SHA384, CKM_SHA384, CKM_ECDSA, FX_AS_IS},
	{CKM_ECDSA_SHA512, CKM_SHA512, CKM_ECDSA, FX_AS_IS},
	{CKM_DSA_SHA224, CKM_SHA224, CKM_DSA, FX_AS_IS},
	{CKM_DSA_SHA256, CKM_SHA256, CKM_DSA, FX_AS_IS},
	{CKM_DSA_SHA384, CKM_SHA384, CKM_DSA, FX_AS_IS},
	{CKM_DSA_SHA512, CKM_SHA512, CKM_DSA, FX_AS_IS},
	{CKM_SHA224_RSA_PKCS, CKM_SHA224, CKM_RSA_PKCS, FX_PKCS1},
	{CKM_SHA1_RSA_PKCS_PSS, CKM_SHA_1, CKM_RSA_PKCS_PSS, FX_PSS},
	{CKM_SHA224_RSA_PKCS_PSS, CKM_SHA224, CKM_RSA_PKCS_PSS, FX_PSS},
	{CKM_SHA256_RSA_PKCS_PSS, CKM_SHA256, CKM_RSA_PKCS_PSS, FX_PSS},
	{CKM_SHA384_RSA_PKCS_PSS, CKM_SHA384, CKM_RSA_PKCS_PSS, FX_PSS},
	{CKM_SHA512_RSA_PKCS_PSS, CKM_SHA512, CKM_RSA_PKCS_PSS, FX_PSS},
};
#define FX_NMAPS (sizeof fx_maps / sizeof fx_maps[0])

/* DER of SHA-224's DigestInfo up to the digest (RFC 8017 §9.2 note 1). */
static const uint8_t fx_sha224_prefix[] = {0x30, 0x2d, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
					   0x65, 0x03, 0x04, 0x02, 0x04, 0x05, 0x00, 0x04, 0x1c};

static const fx_map *fx_lookup(CK_MECHANISM_TYPE m)
{
	for (size_t i = 0; i < FX_NMAPS; i++)
		if (fx_maps[i].mech == m)
			return &fx_maps[i];
	return NULL;
}

/* ------------------------------------------------------------------------
 * Operations in progress, per session: an emulated sign, verify, or a
 * SHA-224 digest. A fixed table: a forked child uses a few sessions.
 * ---------------------------------------------------------------------- */

enum { FX_SIGN, FX_VERIFY, FX_DIGEST, FX_KINDS };
#define FX_SLOTS 64

typedef struct {
	int used;
	CK_SESSION_HANDLE h;
	const fx_map *m; /* NULL for a plain SHA-224 digest */
	fx_sha224 sha;   /* when the digest is SHA-224 */
	int have;        /* digest[0..dlen) is final */
	uint8_t digest[64];
	CK_ULONG dlen;
} fx_op;

static pthread_mutex_t fx_mu = PTHREAD_MUTEX_INITIALIZER;
static fx_op fx_ops[FX_KINDS][FX_SLOTS];

/* modexp_fx_reset forgets every operation (a new process generation, or
 * C_Finalize). */
void modexp_fx_reset(void)
{
	memset(fx_ops, 0, sizeof fx_ops);
	pthread_mutex_init(&fx_mu, NULL);
}

static fx_op *fx_find(int kind, CK_SESSION_HANDLE h)
{
	fx_op *op = NULL;
	pthread_mutex_lock(&fx_mu);
	for (int i = 0; i < FX_SLOTS && op == NULL; i++)
		if (fx_ops[kind][i].used && fx_ops[kind][i].h == h)
			op = &fx_ops[kind][i];
	pthread_mutex_unlock(&fx_mu);
	return op;
}

static fx_op *fx_new(int kind, CK_SESSION_HANDLE h)
{
	fx_op *op = NULL;
	pthread_mutex_lock(&fx_mu);
	for (int i = 0; i < FX_SLOTS && op == NULL; i++)
		if (!fx_ops[kind][i].used) {
			op = &fx_ops[kind][i];
			memset(op, 0, sizeof *op);
			op->used = 1;
			op->h = h;
		}
	pthread_mutex_unlock(&fx_mu);
	return op;
}

static void fx_end(fx_op *op)
{
	pthread_mutex_lock(&fx_mu);
	memset(op, 0, sizeof *op);
	pthread_mutex_unlock(&fx_mu);
}

/* modexp_fx_forget ends the emulated operations of session h (closed). */
void modexp_fx_forget(CK_SESSION_HANDLE h)
{
	pthread_mutex_lock(&fx_mu);
	for (int k = 0; k < FX_KINDS; k++)
		for (int i = 0; i < FX_SLOTS; i++)
			if (fx_ops[k][i].used && fx_ops[k][i].h == h)
				memset(&fx_ops[k][i], 0, sizeof fx_ops[k][i]);
	pthread_mutex_unlock(&fx_mu);
}

/* modexp_fx_forget_all ends every emulated operation (C_CloseAllSessions). */
void modexp_fx_forget_all(void)
{
	pthread_mutex_lock(&fx_mu);
	memset(fx_ops, 0, sizeof fx_ops);
	pthread_mutex_unlock(&fx_mu);
}

/* ------------------------------------------------------------------------
 * C_GetInfo: the parent's answer, with the version of the interface.
 * ---------------------------------------------------------------------- */

/* modexp_fx_GetInfo forwards C_GetInfo (p11-kit-client passes the
 * helper's manufacturer, description and library version through: the
 * same library's) and answers the version of the interface the caller
 * chose, where p11-kit-client would say its own 2.40. */
CK_RV modexp_fx_GetInfo(const CK_FUNCTION_LIST *t, CK_INFO_PTR pInfo, int major, int minor)
{
	if (pInfo == NULL)
		return CKR_ARGUMENTS_BAD;
	CK_RV rv = t->C_GetInfo(pInfo);
	if (rv != CKR_OK)
		return rv;
	pInfo->cryptokiVersion.major = (CK_BYTE)major;
	pInfo->cryptokiVersion.minor = (CK_BYTE)minor;
	return CKR_OK;
}

/* ------------------------------------------------------------------------
 * Mechanism list and info.
 * ---------------------------------------------------------------------- */

static int fx_has(const CK_MECHANISM_TYPE *list, CK_ULONG n, CK_MECHANISM_TYPE m)
{
	for (CK_ULONG i = 0; i < n; i++)
		if (list[i] == m)
			return 1;
	return 0;
}

/* fx_offered reports whether the child can do m given the remote list. */
static int fx_offered(const fx_map *m, const CK_MECHANISM_TYPE *list, CK_ULONG n)
{
	return fx_has(list, n, m->raw) && (m->digest == CKM_SHA224 || fx_has(list, n, m->digest));
}

#define FX_MAX_MECHS 512

CK_RV modexp_fx_GetMechanismList(const CK_FUNCTION_LIST *t, CK_SLOT_ID slot, CK_MECHANISM_TYPE_PTR out,
				 CK_ULONG_PTR count)
{
	if (count == NULL)
		return CKR_ARGUMENTS_BAD;
	CK_MECHANISM_TYPE list[FX_MAX_MECHS + FX_NMAPS + 1];
	CK_ULONG n = 0;
	CK_RV rv = t->C_GetMechanismList(slot, NULL, &n);
	if (rv != CKR_OK)
		return rv;
	if (n > FX_MAX_MECHS)
		return CKR_GENERAL_ERROR;
	if (n > 0 && (rv = t->C_GetMechanismList(slot, list, &n)) != CKR_OK)
		return rv;
	CK_ULONG remote = n;
	for (size_t i = 0; i < FX_NMAPS; i++)
		if (!fx_has(list, n, fx_maps[i].mech) && fx_offered(&fx_maps[i], list, remote))
			list[n++] = fx_maps[i].mech;
	if (!fx_has(list, n, CKM_SHA224))
		list[n++] = CKM_SHA224;
	if (out == NULL) {
		*count = n;
		return CKR_OK;
	}
	if (*count < n) {
		*count = n;
		return CKR_BUFFER_TOO_SMALL;
	}
	memcpy(out, list, n * sizeof *out);
	*count = n;
	return CKR_OK;
}

CK_RV modexp_fx_GetMechanismInfo(const CK_FUNCTION_LIST *t, CK_SLOT_ID slot, CK_MECHANISM_TYPE type,
				 CK_MECHANISM_INFO_PTR info)
{
	CK_RV rv = t->C_GetMechanismInfo(slot, type, info);
	if (rv != CKR_MECHANISM_INVALID || info == NULL)
		return rv;
	if (type == CKM_SHA224) {
		info->ulMinKeySize = info->ulMaxKeySize = 0;
		info->flags = CKF_DIGEST;
		return CKR_OK;
	}
	const fx_map *m = fx_lookup(type);
	if (m == NULL)
		return rv;
	if (m->digest != CKM_SHA224) {
		CK_MECHANISM_INFO d;
		if (t->C_GetMechanismInfo(slot, m->digest, &d) != CKR_OK)
			return CKR_MECHANISM_INVALID;
	}
	if ((rv = t->C_GetMechanismInfo(slot, m->raw, info)) != CKR_OK)
		return rv;
	/* Sign and verify only, with the raw mechanism's sizes and EC flags. */
	info->flags &= CKF_HW | CKF_SIGN | CKF_VERIFY | ~(CK_FLAGS)0xfffff;
	return CKR_OK;
}

/* ------------------------------------------------------------------------
 * Sign and verify.
 * ---------------------------------------------------------------------- */

/* fx_abort ends the remote raw operation of kind on h after a failure of
 * ours (an empty input is refused, and a refusal ends the operation). */
static void fx_abort(const CK_FUNCTION_LIST *t, int kind, CK_SESSION_HANDLE h)
{
	CK_BYTE buf[1024];
	CK_ULONG len = sizeof buf;
	if (kind == FX_SIGN)
		t->C_Sign(h, buf, 0, buf, &len);
	else
		t->C_Verify(h, buf, 0, buf, 0);
}

/* fx_digest_final finishes op's digest (once). */
static CK_RV fx_digest_final(const CK_FUNCTION_LIST *t, fx_op *op)
{
	if (op->have)
		return CKR_OK;
	CK_RV rv = CKR_OK;
	if (op->m->digest == CKM_SHA224) {
		fx_sha224_final(&op->sha, op->digest);
		op->dlen = 28;
	} else {
		op->dlen = sizeof op->digest;
		rv = t->C_DigestFinal(op->h, op->digest, &op->dlen);
	}
	op->have = rv == CKR_OK;
	return rv;
}

/* fx_input is what the raw mechanism signs: the digest, or the DigestInfo. */
static CK_ULONG fx_input(const fx_op *op, uint8_t *out)
{
	CK_ULONG n = 0;
	if (op->m->how == FX_PKCS1) {
		memcpy(out, fx_sha224_prefix, sizeof fx_sha224_prefix);
		n = sizeof fx_sha224_prefix;
	}
	memcpy(out + n, op->digest, op->dlen);
	return n + op->dlen;
}

static CK_RV fx_init(const CK_FUNCTION_LIST *t, int kind, CK_SESSION_HANDLE h, CK_MECHANISM_PTR mech,
		     CK_OBJECT_HANDLE key)
{
	const fx_map *m = mech != NULL ? fx_lookup(mech->mechanism) : NULL;
	if (m == NULL)
		return kind == FX_SIGN ? t->C_SignInit(h, mech, key) : t->C_VerifyInit(h, mech, key);
	if (fx_find(kind, h) != NULL)
		return CKR_OPERATION_ACTIVE;
	CK_MECHANISM raw = {m->raw, NULL, 0};
	if (m->how == FX_PSS) {
		const CK_RSA_PKCS_PSS_PARAMS *p = mech->pParameter;
		if (p == NULL || mech->ulParameterLen != sizeof *p || p->hashAlg != m->digest)
			return CKR_MECHANISM_PARAM_INVALID;
		raw.pParameter = mech->pParameter;
		raw.ulParameterLen = mech->ulParameterLen;
	} else if (mech->pParameter != NULL || mech->ulParameterLen != 0) {
		return CKR_MECHANISM_PARAM_INVALID;
	}
	fx_op *op = fx_new(kind, h);
	if (op == NULL)
		return CKR_HOST_MEMORY;
	op->m = m;
	CK_RV rv;
	if (m->digest == CKM_SHA224) {
		fx_sha224_init(&op->sha);
	} else {
		CK_MECHANISM d = {m->digest, NULL, 0};
		if ((rv = t->C_DigestInit(h, &d)) != CKR_OK) {
			fx_end(op);
			return rv;
		}
	}
	rv = kind == FX_SIGN ? t->C_SignInit(h, &raw, key) : t->C_VerifyInit(h, &raw, key);
	if (rv != CKR_OK) {
		fx_digest_final(t, op); /* ends the remote digest */
		fx_end(op);
	}
	return rv;
}

static CK_RV fx_update(const CK_FUNCTION_LIST *t, int kind, CK_SESSION_HANDLE h, CK_BYTE_PTR part,
		       CK_ULONG len)
{
	fx_op *op = fx_find(kind, h);
	if (op == NULL)
		return kind == FX_SIGN ? t->C_SignUpdate(h, part, len) : t->C_VerifyUpdate(h, part, len);
	if (part == NULL && len != 0) {
		fx_digest_final(t, op);
		fx_abort(t, kind, h);
		fx_end(op);
		return CKR_ARGUMENTS_BAD;
	}
	CK_RV rv = CKR_OK;
	if (op->have)
		rv = CKR_OPERATION_ACTIVE;
	else if (op->m->digest == CKM_SHA224)
		fx_sha224_update(&op->sha, part, len);
	else
		rv = t->C_DigestUpdate(h, part, len);
	if (rv != CKR_OK) {
		fx_digest_final(t, op);
		fx_abort(t, kind, h);
		fx_end(op);
	}
	return rv;
}

/* fx_complete finishes: digest (with data when one-part), then the raw
 * sign or verify. A signature length query, or a buffer too small, keeps
 * the operation; anything else ends it. */
static CK_RV fx_complete(const CK_FUNCTION_LIST *t, int kind, fx_op *op, CK_BYTE_PTR data, CK_ULONG len,
			 int one_part, CK_BYTE_PTR sig, CK_ULONG_PTR siglen, CK_ULONG sigin)
{
	CK_RV rv = CKR_OK;
	if (one_part && !op->have) {
		if (data == NULL && len != 0)
			rv = CKR_ARGUMENTS_BAD;
		else if (op->m->digest == CKM_SHA224)
			fx_sha224_update(&op->sha, data, len);
		else {
			op->dlen = sizeof op->digest;
			rv = t->C_Digest(op->h, data, len, op->digest, &op->dlen);
			op->have = rv == CKR_OK;
		}
	}
	if (rv == CKR_OK)
		rv = fx_digest_final(t, op);
	if (rv != CKR_OK) {
		fx_digest_final(t, op);
		fx_abort(t, kind, op->h);
		fx_end(op);
		return rv;
	}
	uint8_t in[sizeof fx_sha224_prefix + 64];
	CK_ULONG n = fx_input(op, in);
	if (kind == FX_SIGN) {
		if (siglen == NULL) {
			fx_abort(t, kind, op->h);
			fx_end(op);
			return CKR_ARGUMENTS_BAD;
		}
		rv = t->C_Sign(op->h, in, n, sig, siglen);
		if ((rv == CKR_OK && sig == NULL) || rv == CKR_BUFFER_TOO_SMALL)
			return rv;
	} else {
		rv = t->C_Verify(op->h, in, n, sig, sigin);
	}
	fx_end(op);
	return rv;
}

CK_RV modexp_fx_SignInit(const CK_FUNCTION_LIST *t, CK_SESSION_HANDLE h, CK_MECHANISM_PTR mech,
			 CK_OBJECT_HANDLE key)
{
	return fx_init(t, FX_SIGN, h, mech, key);
}

CK_RV modexp_fx_Sign(const CK_FUNCTION_LIST *t, CK_SESSION_HANDLE h, CK_BYTE_PTR data, CK_ULONG len,
		     CK_BYTE_PTR sig, CK_ULONG_PTR siglen)
{
	fx_op *op = fx_find(FX_SIGN, h);
	if (op == NULL)
		return t->C_Sign(h, data, len, sig, siglen);
	return fx_complete(t, FX_SIGN, op, data, len, 1, sig, siglen, 0);
}

CK_RV modexp_fx_SignUpdate(const CK_FUNCTION_LIST *t, CK_SESSION_HANDLE h, CK_BYTE_PTR part, CK_ULONG len)
{
	return fx_update(t, FX_SIGN, h, part, len);
}

CK_RV modexp_fx_SignFinal(const CK_FUNCTION_LIST *t, CK_SESSION_HANDLE h, CK_BYTE_PTR sig,
			  CK_ULONG_PTR siglen)
{
	fx_op *op = fx_find(FX_SIGN, h);
	if (op == NULL)
		return t->C_SignFinal(h, sig, siglen);
	return fx_complete(t, FX_SIGN, op, NULL, 0, 0, sig, siglen, 0);
}

CK_RV modexp_fx_VerifyInit(const CK_FUNCTION_LIST *t, CK_SESSION_HANDLE h, CK_MECHANISM_PTR mech,
			   CK_OBJECT_HANDLE key)
{
	return fx_init(t, FX_VERIFY, h, mech, key);
}

CK_RV modexp_fx_Verify(const CK_FUNCTION_LIST *t, CK_SESSION_HANDLE h, CK_BYTE_PTR data, CK_ULONG len,
		       CK_BYTE_PTR sig, CK_ULONG siglen)
{
	fx_op *op = fx_find(FX_VERIFY, h);
	if (op == NULL)
		return t->C_Verify(h, data, len, sig, siglen);
	return fx_complete(t, FX_VERIFY, op, data, len, 1, sig, NULL, siglen);
}

CK_RV modexp_fx_VerifyUpdate(const CK_FUNCTION_LIST *t, CK_SESSION_HANDLE h, CK_BYTE_PTR part, CK_ULONG len)
{
	return fx_update(t, FX_VERIFY, h, part, len);
}

CK_RV modexp_fx_VerifyFinal(const CK_FUNCTION_LIST *t, CK_SESSION_HANDLE h, CK_BYTE_PTR sig, CK_ULONG siglen)
{
	fx_op *op = fx_find(FX_VERIFY, h);
	if (op == NULL)
		return t->C_VerifyFinal(h, sig, siglen);
	return fx_complete(t, FX_VERIFY, op, NULL, 0, 0, sig, NULL, siglen);
}

/* ------------------------------------------------------------------------
 * CKM_SHA224 as a digest (no remote mechanism).
 * ---------------------------------------------------------------------- */

CK_RV modexp_fx_DigestInit(const CK_FUNCTION_LIST *t, CK_SESSION_HANDLE h, CK_MECHANISM_PTR mech)
{
	if (mech == NULL || mech->mechanism != CKM_SHA224)
		return t->C_DigestInit(h, mech);
	if (fx_find(FX_DIGEST, h) != NULL)
		return CKR_OPERATION_ACTIVE;
	if (mech->pParameter != NULL || mech->ulParameterLen != 0)
		return CKR_MECHANISM_PARAM_INVALID;
	/* The session must exist: ask the remote for it. */
	CK_SESSION_INFO si;
	CK_RV rv = t->C_GetSessionInfo(h, &si);
	if (rv != CKR_OK)
		return rv;
	fx_op *op = fx_new(FX_DIGEST, h);
	if (op == NULL)
		return CKR_HOST_MEMORY;
	fx_sha224_init(&op->sha);
	return CKR_OK;
}

/* fx_digest_out answers a digest's output with the two-call convention. */
static CK_RV fx_digest_out(fx_op *op, CK_BYTE_PTR out, CK_ULONG_PTR outlen)
{
	if (outlen == NULL) {
		fx_end(op);
		return CKR_ARGUMENTS_BAD;
	}
	if (out == NULL) {
		*outlen = 28;
		return CKR_OK;
	}
	if (*outlen < 28) {
		*outlen = 28;
		return CKR_BUFFER_TOO_SMALL;
	}
	if (!op->have) {
		fx_sha224_final(&op->sha, op->digest);
		op->have = 1;
	}
	memcpy(out, op->digest, 28);
	*outlen = 28;
	fx_end(op);
	return CKR_OK;
}

CK_RV modexp_fx_Digest(const CK_FUNCTION_LIST *t, CK_SESSION_HANDLE h, CK_BYTE_PTR data, CK_ULONG len,
		       CK_BYTE_PTR out, CK_ULONG_PTR outlen)
{
	fx_op *op = fx_find(FX_DIGEST, h);
	if (op == NULL)
		return t->C_Digest(h, data, len, out, outlen);
	if (data == NULL && len != 0) {
		fx_end(op);
		return CKR_ARGUMENTS_BAD;
	}
	if (!op->have) {
		fx_sha224_update(&op->sha, data, len);
		fx_sha224_final(&op->sha, op->digest);
		op->have = 1;
	}
	return fx_digest_out(op, out, outlen);
}

CK_RV modexp_fx_DigestUpdate(const CK_FUNCTION_LIST *t, CK_SESSION_HANDLE h, CK_BYTE_PTR part, CK_ULONG len)
{
	fx_op *op = fx_find(FX_DIGEST, h);
	if (op == NULL)
		return t->C_DigestUpdate(h, part, len);
	if ((part == NULL && len != 0) || op->have) {
		fx_end(op);
		return part == NULL ? CKR_ARGUMENTS_BAD : CKR_OPERATION_ACTIVE;
	}
	fx_sha224_update(&op->sha, part, len);
	return CKR_OK;
}

CK_RV modexp_fx_DigestKey(const CK_FUNCTION_LIST *t, CK_SESSION_HANDLE h, CK_OBJECT_HANDLE key)
{
	fx_op *op = fx_find(FX_DIGEST, h);
	if (op == NULL)
		return t->C_DigestKey(h, key);
	fx_end(op);
	return CKR_KEY_INDIGESTIBLE;
}

CK_RV modexp_fx_DigestFinal(const CK_FUNCTION_LIST *t, CK_SESSION_HANDLE h, CK_BYTE_PTR out,
			    CK_ULONG_PTR outlen)
{
	fx_op *op = fx_find(FX_DIGEST, h);
	if (op == NULL)
		return t->C_DigestFinal(h, out, outlen);
	return fx_digest_out(op, out, outlen);
}

/* ------------------------------------------------------------------------
 * Sessions ending.
 * ---------------------------------------------------------------------- */

CK_RV modexp_fx_CloseSession(const CK_FUNCTION_LIST *t, CK_SESSION_HANDLE h)
{
	CK_RV rv = t->C_CloseSession(h);
	if (rv == CKR_OK || rv == CKR_SESSION_HANDLE_INVALID)
		modexp_fx_forget(h);
	return rv;
}

CK_RV modexp_fx_CloseAllSessions(const CK_FUNCTION_LIST *t, CK_SLOT_ID slot)
{
	CK_RV rv = t->C_CloseAllSessions(slot);
	if (rv == CKR_OK)
		modexp_fx_forget_all();
	return rv;
}
