/*
 * forkrpc.c: a host that the Go test drives over a Unix socket, in the
 * parent and in its forked children. Driven by test/fork/forkrpc_test.go.
 *
 *   forkrpc MODULE SOCKET
 *
 * The host loads MODULE, takes its 3.2, 3.0 and 2.40 function lists,
 * connects to SOCKET and serves requests on that connection until it is
 * closed or told to exit. It knows no mechanism and no attribute: each
 * request names one PKCS#11 function (or a host action) and carries its
 * arguments as bytes; the Go side lays out every parameter structure.
 *
 * A frame is a little-endian u32 length and that many bytes. A request is
 * u64 op, then the op's arguments, each a u64 or a byte string (u64 length
 * and bytes). Composite arguments:
 *
 *   mechanism  u64 type, bytes parameter, u64 n, n × (u64 offset, bytes):
 *              the host copies each byte string to memory of its own and
 *              writes that memory's address at the offset in the
 *              parameter (a pointer field: CK_GCM_PARAMS.pIv ...);
 *   template   u64 n, n × (u64 type, bytes value).
 *
 * The reply is u64 CK_RV, u64 n, n × bytes: the function's outputs
 * (handles as u64, output buffers as filled), then, for a mechanism or a
 * message parameter, the contents of its pointed-to buffers after the
 * call (the tag and IV a C_EncryptMessage writes). An output buffer's
 * size is an argument: 0 asks the function first with a NULL buffer (the
 * two-call convention) and then with a buffer of the size it said.
 *
 * Host actions: OP_FORK forks; the child closes the connection, connects
 * again and serves the new connection (its reply, sent by the parent, is
 * the child's pid); OP_THREAD starts a thread that connects and serves;
 * OP_WAIT reaps a child (its wait status); OP_EXIT ends the process.
 * A request whose op has ACK set first gets an empty frame back, sent just
 * before the function is called, so that the test knows the call began.
 * The host writes nothing to stdout or stderr but its own fatal errors.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pkcs11_3.h"

enum {
	OP_INITIALIZE = 1, OP_FINALIZE, OP_GETINFO, OP_SLOTS, OP_MECHLIST, OP_MECHINFO,
	OP_OPEN, OP_CLOSE, OP_LOGIN, OP_CREATE, OP_FIND, OP_GETATTR, OP_DESTROY,
	OP_GENKEY, OP_GENPAIR, OP_INIT, OP_ONESHOT, OP_UPDATE, OP_FINAL,
	OP_WRAP, OP_UNWRAP, OP_DERIVE, OP_ENCAP, OP_DECAP, OP_MSG, OP_MSGFINAL,
	OP_FORK = 100, OP_THREAD, OP_WAIT, OP_EXIT,
};
#define ACK (1ULL << 32)

/* The kinds of an operation (OP_INIT, OP_ONESHOT, OP_UPDATE, OP_FINAL, OP_MSG). */
enum { K_ENCRYPT, K_DECRYPT, K_DIGEST, K_SIGN, K_VERIFY, K_MSG_ENCRYPT, K_MSG_DECRYPT, K_MSG_SIGN, K_MSG_VERIFY };

static CK_FUNCTION_LIST_3_2 *f32;
static CK_FUNCTION_LIST_3_0 *f30, *f;
static CK_FUNCTION_LIST *f240;
static const char *sockpath;

static void die(const char *what)
{
	fprintf(stderr, "forkrpc: %s: %s\n", what, strerror(errno));
	_exit(3);
}

/* conn is one connection's state: its descriptor, the request being read
 * and the reply being built, and what the request allocated. */
typedef struct {
	int fd;
	unsigned char *in;
	size_t inlen, pos;
	int bad;
	unsigned char *out;
	size_t outlen, outcap;
	uint64_t nout;
	void *allocs[256];
	int nallocs;
	/* the pointed-to buffers of the request's mechanism or parameter */
	struct { unsigned char *p; size_t n; } fix[16];
	int nfix;
} conn;

static void *alloc(conn *c, size_t n)
{
	void *p = calloc(1, n ? n : 1);
	if (p == NULL || c->nallocs == 256)
		die("alloc");
	c->allocs[c->nallocs++] = p;
	return p;
}

static int readfull(int fd, void *p, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = read(fd, (char *)p + got, n - got);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return -1;
		}
		got += r;
	}
	return 0;
}

static int writefull(int fd, const void *p, size_t n)
{
	for (size_t put = 0; put < n;) {
		ssize_t r = send(fd, (const char *)p + put, n - put, MSG_NOSIGNAL);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return -1;
		}
		put += r;
	}
	return 0;
}

static uint64_t u64(conn *c)
{
	uint64_t v = 0;
	if (c->pos + 8 > c->inlen) {
		c->bad = 1;
		return 0;
	}
	memcpy(&v, c->in + c->pos, 8);
	c->pos += 8;
	return v;
}

/* bytes returns a copy of the next byte string (NUL-terminated, never NULL). */
static unsigned char *bytes(conn *c, CK_ULONG *n)
{
	uint64_t len = u64(c);
	if (c->bad || len > c->inlen - c->pos) {
		c->bad = 1;
		*n = 0;
		return alloc(c, 1);
	}
	unsigned char *p = alloc(c, len + 1);
	memcpy(p, c->in + c->pos, len);
	c->pos += len;
	*n = len;
	return p;
}

static void mechanism(conn *c, CK_MECHANISM *m)
{
	CK_ULONG plen;
	m->mechanism = u64(c);
	unsigned char *p = bytes(c, &plen);
	m->pParameter = plen ? p : NULL;
	m->ulParameterLen = plen;
	uint64_t n = u64(c);
	for (uint64_t i = 0; i < n && !c->bad; i++) {
		uint64_t off = u64(c);
		CK_ULONG bl;
		unsigned char *b = bytes(c, &bl);
		if (off + sizeof(void *) > plen || c->nfix == 16) {
			c->bad = 1;
			return;
		}
		memcpy(p + off, &b, sizeof b);
		c->fix[c->nfix].p = b;
		c->fix[c->nfix++].n = bl;
	}
}

static CK_ATTRIBUTE *template(conn *c, CK_ULONG *n)
{
	*n = u64(c);
	if (c->bad || *n > 64) {
		c->bad = 1;
		*n = 0;
		return NULL;
	}
	CK_ATTRIBUTE *t = alloc(c, *n * sizeof *t);
	for (CK_ULONG i = 0; i < *n; i++) {
		t[i].type = u64(c);
		t[i].pValue = bytes(c, &t[i].ulValueLen);
	}
	return t;
}

static void put(conn *c, const void *p, size_t n)
{
	if (c->outlen + n > c->outcap) {
		c->outcap = (c->outlen + n) * 2;
		c->out = realloc(c->out, c->outcap);
		if (c->out == NULL)
			die("realloc");
	}
	memcpy(c->out + c->outlen, p, n);
	c->outlen += n;
}

static void out(conn *c, const void *p, size_t n)
{
	uint64_t len = n;
	put(c, &len, 8);
	put(c, p, n);
	c->nout++;
}

static void outu(conn *c, uint64_t v) { out(c, &v, 8); }

static void outfix(conn *c)
{
	for (int i = 0; i < c->nfix; i++)
		out(c, c->fix[i].p, c->fix[i].n);
}

/* An output buffer: size from the request, or asked for first (0). */
#define TWO_CALL(c, call_with)                                                   \
	do {                                                                     \
		CK_ULONG cap_ = u64(c), n_ = cap_;                               \
		CK_BYTE *buf_ = NULL;                                            \
		if (cap_ == 0) {                                                 \
			rv = call_with(NULL, &n_);                               \
			if (rv != CKR_OK)                                        \
				break;                                           \
		}                                                                \
		buf_ = alloc(c, n_);                                             \
		rv = call_with(buf_, &n_);                                       \
		if (rv == CKR_OK)                                                \
			out(c, buf_, n_);                                        \
	} while (0)

static void serve(int fd);

/* smk reads the arguments most functions start with: a session, a
 * mechanism and a key. */
static CK_OBJECT_HANDLE smk(conn *c, CK_SESSION_HANDLE *s, CK_MECHANISM *m)
{
	*s = u64(c);
	mechanism(c, m);
	return u64(c);
}

static void *thread_main(void *arg)
{
	(void)arg;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	strncpy(sa.sun_path, sockpath, sizeof sa.sun_path - 1);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
		die("connect");
	serve(fd);
	return NULL;
}

/* request runs one request of c; returns its CK_RV (the reply's first word). */
static CK_RV request(conn *c, uint64_t op)
{
	CK_RV rv = CKR_OK;
	CK_MECHANISM m = {0, NULL, 0};
	CK_ULONG n, n2, h;
	CK_ATTRIBUTE *t, *t2;
	unsigned char *b, *b2;
	CK_SESSION_HANDLE s;
	uint64_t kind;
	switch (op) {
	case OP_INITIALIZE: {
		CK_C_INITIALIZE_ARGS ia = {NULL, NULL, NULL, NULL, CKF_OS_LOCKING_OK, NULL};
		return f->C_Initialize(&ia);
	}
	case OP_FINALIZE:
		return f->C_Finalize(NULL);
	case OP_GETINFO: { /* u64 interface: 0 = 3.2, 1 = 3.0, 2 = 2.40 */
		CK_INFO info;
		uint64_t which = u64(c);
		rv = which == 2 ? f240->C_GetInfo(&info) : which == 1 ? f30->C_GetInfo(&info) : f32->base.C_GetInfo(&info);
		if (rv == CKR_OK)
			out(c, &info, sizeof info);
		return rv;
	}
	case OP_SLOTS: {
		CK_SLOT_ID ids[16];
		n = 16;
		if ((rv = f->C_GetSlotList(CK_TRUE, ids, &n)) == CKR_OK)
			out(c, ids, n * sizeof ids[0]);
		return rv;
	}
	case OP_MECHLIST: { /* u64 interface, u64 slot */
		uint64_t which = u64(c);
		CK_SLOT_ID slot = u64(c);
		CK_C_GetMechanismList gml = which == 2 ? f240->C_GetMechanismList : which == 1 ? f30->C_GetMechanismList : f32->base.C_GetMechanismList;
		if ((rv = gml(slot, NULL, &n)) != CKR_OK)
			return rv;
		CK_MECHANISM_TYPE *l = alloc(c, n * sizeof *l);
		if ((rv = gml(slot, l, &n)) == CKR_OK)
			out(c, l, n * sizeof *l);
		return rv;
	}
	case OP_MECHINFO: { /* u64 slot, u64 type */
		CK_MECHANISM_INFO mi;
		CK_SLOT_ID slot = u64(c);
		if ((rv = f->C_GetMechanismInfo(slot, u64(c), &mi)) == CKR_OK)
			out(c, &mi, sizeof mi);
		return rv;
	}
	case OP_OPEN:
		if ((rv = f->C_OpenSession(u64(c), CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &s)) == CKR_OK)
			outu(c, s);
		return rv;
	case OP_CLOSE:
		return f->C_CloseSession(u64(c));
	case OP_LOGIN:
		s = u64(c);
		h = u64(c);
		b = bytes(c, &n);
		return c->bad ? CKR_ARGUMENTS_BAD : f->C_Login(s, h, b, n);
	case OP_CREATE:
		s = u64(c);
		t = template(c, &n);
		if (c->bad)
			return CKR_ARGUMENTS_BAD;
		if ((rv = f->C_CreateObject(s, t, n, &h)) == CKR_OK)
			outu(c, h);
		return rv;
	case OP_FIND: {
		CK_OBJECT_HANDLE hs[64];
		s = u64(c);
		t = template(c, &n);
		if (c->bad)
			return CKR_ARGUMENTS_BAD;
		if ((rv = f->C_FindObjectsInit(s, t, n)) != CKR_OK)
			return rv;
		rv = f->C_FindObjects(s, hs, 64, &n2);
		CK_RV rv2 = f->C_FindObjectsFinal(s);
		if (rv == CKR_OK && rv2 == CKR_OK)
			out(c, hs, n2 * sizeof hs[0]);
		return rv != CKR_OK ? rv : rv2;
	}
	case OP_GETATTR: /* session, object, template of types (values ignored) */
		s = u64(c);
		h = u64(c);
		t = template(c, &n);
		if (c->bad)
			return CKR_ARGUMENTS_BAD;
		for (CK_ULONG i = 0; i < n; i++)
			t[i].pValue = NULL;
		if ((rv = f->C_GetAttributeValue(s, h, t, n)) != CKR_OK)
			return rv;
		for (CK_ULONG i = 0; i < n; i++)
			t[i].pValue = alloc(c, t[i].ulValueLen);
		if ((rv = f->C_GetAttributeValue(s, h, t, n)) == CKR_OK)
			for (CK_ULONG i = 0; i < n; i++)
				out(c, t[i].pValue, t[i].ulValueLen);
		return rv;
	case OP_DESTROY:
		s = u64(c);
		return f->C_DestroyObject(s, u64(c));
	case OP_GENKEY:
		s = u64(c);
		mechanism(c, &m);
		t = template(c, &n);
		if (c->bad)
			return CKR_ARGUMENTS_BAD;
		if ((rv = f->C_GenerateKey(s, &m, t, n, &h)) == CKR_OK)
			outu(c, h);
		return rv;
	case OP_GENPAIR:
		s = u64(c);
		mechanism(c, &m);
		t = template(c, &n);
		t2 = template(c, &n2);
		if (c->bad)
			return CKR_ARGUMENTS_BAD;
		CK_OBJECT_HANDLE hpub, hpriv;
		if ((rv = f->C_GenerateKeyPair(s, &m, t, n, t2, n2, &hpub, &hpriv)) == CKR_OK) {
			outu(c, hpub);
			outu(c, hpriv);
		}
		return rv;
	case OP_INIT: /* kind, session, mechanism, key */
		kind = u64(c);
		h = smk(c, &s, &m);
		if (c->bad)
			return CKR_ARGUMENTS_BAD;
		switch (kind) {
		case K_ENCRYPT: return f->C_EncryptInit(s, &m, h);
		case K_DECRYPT: return f->C_DecryptInit(s, &m, h);
		case K_DIGEST: return f->C_DigestInit(s, &m);
		case K_SIGN: return f->C_SignInit(s, &m, h);
		case K_VERIFY: return f->C_VerifyInit(s, &m, h);
		case K_MSG_ENCRYPT: return f->C_MessageEncryptInit(s, &m, h);
		case K_MSG_DECRYPT: return f->C_MessageDecryptInit(s, &m, h);
		case K_MSG_SIGN: return f->C_MessageSignInit(s, &m, h);
		case K_MSG_VERIFY: return f->C_MessageVerifyInit(s, &m, h);
		}
		return CKR_ARGUMENTS_BAD;
	case OP_ONESHOT: /* kind, session, data, then signature (verify) or output size */
	case OP_UPDATE:  /* kind, session, data, then output size (encrypt, decrypt) */
		kind = u64(c);
		s = u64(c);
		b = bytes(c, &n);
		if (c->bad)
			return CKR_ARGUMENTS_BAD;
		if (op == OP_UPDATE) {
#define UPD_ENC(p, pn) f->C_EncryptUpdate(s, b, n, p, pn)
#define UPD_DEC(p, pn) f->C_DecryptUpdate(s, b, n, p, pn)
			switch (kind) {
			case K_ENCRYPT: TWO_CALL(c, UPD_ENC); return rv;
			case K_DECRYPT: TWO_CALL(c, UPD_DEC); return rv;
			case K_DIGEST: return f->C_DigestUpdate(s, b, n);
			case K_SIGN: return f->C_SignUpdate(s, b, n);
			case K_VERIFY: return f->C_VerifyUpdate(s, b, n);
			}
			return CKR_ARGUMENTS_BAD;
		}
#define ONE_ENC(p, pn) f->C_Encrypt(s, b, n, p, pn)
#define ONE_DEC(p, pn) f->C_Decrypt(s, b, n, p, pn)
#define ONE_DIG(p, pn) f->C_Digest(s, b, n, p, pn)
#define ONE_SIG(p, pn) f->C_Sign(s, b, n, p, pn)
		switch (kind) {
		case K_ENCRYPT: TWO_CALL(c, ONE_ENC); return rv;
		case K_DECRYPT: TWO_CALL(c, ONE_DEC); return rv;
		case K_DIGEST: TWO_CALL(c, ONE_DIG); return rv;
		case K_SIGN: TWO_CALL(c, ONE_SIG); return rv;
		case K_VERIFY:
			b2 = bytes(c, &n2);
			return c->bad ? CKR_ARGUMENTS_BAD : f->C_Verify(s, b, n, b2, n2);
		}
		return CKR_ARGUMENTS_BAD;
	case OP_FINAL: /* kind, session, then signature (verify) or output size */
		kind = u64(c);
		s = u64(c);
		if (c->bad)
			return CKR_ARGUMENTS_BAD;
#define FIN_ENC(p, pn) f->C_EncryptFinal(s, p, pn)
#define FIN_DEC(p, pn) f->C_DecryptFinal(s, p, pn)
#define FIN_DIG(p, pn) f->C_DigestFinal(s, p, pn)
#define FIN_SIG(p, pn) f->C_SignFinal(s, p, pn)
		switch (kind) {
		case K_ENCRYPT: TWO_CALL(c, FIN_ENC); return rv;
		case K_DECRYPT: TWO_CALL(c, FIN_DEC); return rv;
		case K_DIGEST: TWO_CALL(c, FIN_DIG); return rv;
		case K_SIGN: TWO_CALL(c, FIN_SIG); return rv;
		case K_VERIFY:
			b2 = bytes(c, &n2);
			return c->bad ? CKR_ARGUMENTS_BAD : f->C_VerifyFinal(s, b2, n2);
		}
		return CKR_ARGUMENTS_BAD;
	case OP_WRAP: { /* session, mechanism, wrapping key, key, output size */
		CK_OBJECT_HANDLE wk = smk(c, &s, &m), k = u64(c);
		if (c->bad)
			return CKR_ARGUMENTS_BAD;
#define WRAP(p, pn) f->C_WrapKey(s, &m, wk, k, p, pn)
		TWO_CALL(c, WRAP);
		return rv;
	}
	case OP_UNWRAP: { /* session, mechanism, unwrapping key, blob, template */
		CK_OBJECT_HANDLE uk = smk(c, &s, &m);
		b = bytes(c, &n);
		t = template(c, &n2);
		if (c->bad)
			return CKR_ARGUMENTS_BAD;
		if ((rv = f->C_UnwrapKey(s, &m, uk, b, n, t, n2, &h)) == CKR_OK)
			outu(c, h);
		return rv;
	}
	case OP_DERIVE: { /* session, mechanism, base key, template */
		CK_OBJECT_HANDLE base = smk(c, &s, &m);
		t = template(c, &n);
		if (c->bad)
			return CKR_ARGUMENTS_BAD;
		if ((rv = f->C_DeriveKey(s, &m, base, t, n, &h)) == CKR_OK)
			outu(c, h);
		return rv;
	}
	case OP_ENCAP: { /* session, mechanism, public key, template, output size */
		CK_OBJECT_HANDLE pub = smk(c, &s, &m);
		t = template(c, &n);
		if (c->bad)
			return CKR_ARGUMENTS_BAD;
		h = 0;
#define ENCAP(p, pn) f32->C_EncapsulateKey(s, &m, pub, t, n, p, pn, &h)
		TWO_CALL(c, ENCAP);
		if (rv == CKR_OK)
			outu(c, h);
		return rv;
	}
	case OP_DECAP: { /* session, mechanism, private key, template, ciphertext */
		CK_OBJECT_HANDLE priv = smk(c, &s, &m);
		t = template(c, &n);
		b = bytes(c, &n2);
		if (c->bad)
			return CKR_ARGUMENTS_BAD;
		if ((rv = f32->C_DecapsulateKey(s, &m, priv, t, n, b, n2, &h)) == CKR_OK)
			outu(c, h);
		return rv;
	}
	case OP_MSG: { /* kind, session, parameter (as a mechanism of type 0), aad, data, signature or output size */
		kind = u64(c);
		s = u64(c);
		mechanism(c, &m);
		b = bytes(c, &n);
		b2 = bytes(c, &n2);
		if (c->bad)
			return CKR_ARGUMENTS_BAD;
		void *pp = m.pParameter;
		CK_ULONG pl = m.ulParameterLen;
#define MSG_ENC(p, pn) f->C_EncryptMessage(s, pp, pl, b, n, b2, n2, p, pn)
#define MSG_DEC(p, pn) f->C_DecryptMessage(s, pp, pl, b, n, b2, n2, p, pn)
#define MSG_SIG(p, pn) f->C_SignMessage(s, pp, pl, b2, n2, p, pn)
		switch (kind) {
		case K_MSG_ENCRYPT: TWO_CALL(c, MSG_ENC); break;
		case K_MSG_DECRYPT: TWO_CALL(c, MSG_DEC); break;
		case K_MSG_SIGN: TWO_CALL(c, MSG_SIG); break;
		case K_MSG_VERIFY: {
			CK_ULONG n3;
			unsigned char *sig = bytes(c, &n3);
			rv = c->bad ? CKR_ARGUMENTS_BAD : f->C_VerifyMessage(s, pp, pl, b2, n2, sig, n3);
			break;
		}
		default:
			return CKR_ARGUMENTS_BAD;
		}
		if (rv == CKR_OK)
			outfix(c);
		return rv;
	}
	case OP_MSGFINAL:
		kind = u64(c);
		s = u64(c);
		switch (kind) {
		case K_MSG_ENCRYPT: return f->C_MessageEncryptFinal(s);
		case K_MSG_DECRYPT: return f->C_MessageDecryptFinal(s);
		case K_MSG_SIGN: return f->C_MessageSignFinal(s);
		case K_MSG_VERIFY: return f->C_MessageVerifyFinal(s);
		}
		return CKR_ARGUMENTS_BAD;
	case OP_FORK: {
		pid_t pid = fork();
		if (pid < 0)
			return CKR_GENERAL_ERROR;
		if (pid == 0) {
			/* The child serves a connection of its own; its parent's
			 * other threads are gone, and so are their connections
			 * for it. */
			close(c->fd);
			thread_main(NULL);
			_exit(0);
		}
		outu(c, pid);
		return CKR_OK;
	}
	case OP_THREAD: {
		pthread_t th;
		if (pthread_create(&th, NULL, thread_main, NULL) != 0)
			return CKR_GENERAL_ERROR;
		pthread_detach(th);
		return CKR_OK;
	}
	case OP_WAIT: {
		int status;
		pid_t pid = u64(c);
		if (waitpid(pid, &status, 0) != pid)
			return CKR_GENERAL_ERROR;
		outu(c, (uint64_t)status);
		return CKR_OK;
	}
	}
	return CKR_FUNCTION_NOT_SUPPORTED;
}

static void serve(int fd)
{
	conn c = {.fd = fd};
	for (;;) {
		uint32_t len;
		if (readfull(fd, &len, 4) != 0)
			break;
		c.in = malloc(len ? len : 1);
		if (c.in == NULL || readfull(fd, c.in, len) != 0)
			break;
		c.inlen = len;
		c.pos = 0;
		c.bad = 0;
		c.outlen = 0;
		c.nout = 0;
		c.nfix = 0;
		uint64_t op = u64(&c);
		if (op & ACK) {
			uint32_t zero = 0;
			if (writefull(fd, &zero, 4) != 0)
				break;
			op &= ~ACK;
		}
		if (op == OP_EXIT)
			_exit(0);
		CK_RV rv = request(&c, op);
		if (c.bad)
			rv = CKR_ARGUMENTS_BAD;
		unsigned char *body = c.out;
		size_t blen = c.outlen;
		uint64_t head[2] = {rv, c.nout};
		uint32_t total = 16 + blen;
		int err = writefull(fd, &total, 4) || writefull(fd, head, 16) || (blen && writefull(fd, body, blen));
		free(c.in);
		c.in = NULL;
		for (int i = 0; i < c.nallocs; i++)
			free(c.allocs[i]);
		c.nallocs = 0;
		if (err)
			break;
	}
	free(c.out);
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: forkrpc MODULE SOCKET\n");
		return 2;
	}
	sockpath = argv[2];
	void *dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (dl == NULL) {
		fprintf(stderr, "forkrpc: dlopen: %s\n", dlerror());
		return 1;
	}
	CK_C_GetInterface getif = (CK_C_GetInterface)dlsym(dl, "C_GetInterface");
	CK_C_GetFunctionList getfl = (CK_C_GetFunctionList)dlsym(dl, "C_GetFunctionList");
	CK_INTERFACE *it32, *it30;
	CK_VERSION v32 = {3, 2}, v30 = {3, 0};
	if (getif == NULL || getfl == NULL || getif(NULL, &v32, &it32, 0) != CKR_OK ||
	    getif(NULL, &v30, &it30, 0) != CKR_OK || getfl(&f240) != CKR_OK) {
		fprintf(stderr, "forkrpc: the module's interfaces\n");
		return 1;
	}
	f32 = it32->pFunctionList;
	f30 = it30->pFunctionList;
	f = &f32->base;
	thread_main(NULL);
	return 0;
}
