/*
 * forksign.c: a host that initialises libmodexp-pkcs11.so, logs in and then
 * forks children that sign, as nginx does with its workers. Driven by
 * test/fork/fork_test.go.
 *
 *   forksign MODULE OUTDIR KEYS CHILDREN SIGNS [bench N | broken]
 *
 * KEYS is a comma-separated list of key labels on the token, each "rsa..."
 * (RSA, signed with CKM_RSA_PKCS over a SHA-256 DigestInfo and with
 * CKM_RSA_PKCS_PSS, SHA-256, MGF1-SHA-256, salt 32, in turn) or "ec..."
 * (CKM_ECDSA over a 32-byte hash). The user PIN comes from FORKSIGN_PIN.
 *
 * The parent: C_Initialize, C_OpenSession, C_Login, finds the keys, forks
 * CHILDREN children, signs SIGNS times per key itself meanwhile, then waits
 * for the children (at most FORKSIGN_TIMEOUT seconds, default 60; a child
 * still running then is killed and counts as a failure). Each child calls
 * C_Initialize again without C_Finalize (CKR_OK or
 * CKR_CRYPTOKI_ALREADY_INITIALIZED), opens a session, logs in, finds the keys
 * and signs SIGNS times per key. Child 0 also signs from two threads at once;
 * child 1 forks a grandchild that signs too (without C_Initialize: it
 * inherits an initialised module); the even children end with C_Finalize,
 * the odd ones just exit.
 *
 * Every process writes OUTDIR/<name>.sig with lines
 *     sig <label> <mechanism> <hex hash> <hex signature>
 * and the parent OUTDIR/pub with lines
 *     rsa <label> <hex modulus> <hex public exponent>
 *     ec <label> <hex CKA_EC_PARAMS> <hex CKA_EC_POINT>
 * which the Go test verifies independently with crypto/rsa and crypto/ecdsa.
 *
 * With "bench N" it measures instead: N signatures per key in the parent,
 * then N in one forked child, and prints lines
 *     bench <where> <label> <mechanism> <N> <microseconds per call>
 * (where = parent or child), plus the cost of C_GetSessionInfo, a call
 * without cryptography.
 *
 * With "broken" (CHILDREN 1, SIGNS ignored) the child must get a clean
 * error, at once, from C_Initialize and from C_OpenSession: the test takes
 * away what the child's copy of the module needs first. The parent must
 * still sign afterwards.
 *
 * After the parent's login, FORKSIGN_CLOSELIB=1 closes the descriptors the
 * process holds on MODULE's file, FORKSIGN_UNLINK=1 removes the file and
 * FORKSIGN_REPLACE=1 (with FORKSIGN_UNLINK) puts another file in its place.
 *
 * Lines "FAIL ..." on stdout say what went wrong; exit status 0 means every
 * process did all its work.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <p11-kit-1/p11-kit/pkcs11.h>

#define MAX_KEYS 4

static CK_FUNCTION_LIST *f;
static const char *outdir;
static const char *pin;
static int nkeys;
static char *labels[MAX_KEYS];
static int signs;
static char procname[64] = "parent";

struct key {
	const char *label;
	int ec;
	CK_OBJECT_HANDLE priv;
};

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	printf("FAIL %s: %s\n", procname, buf);
	fflush(stdout);
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void random_bytes(CK_BYTE *p, size_t n)
{
	static __thread unsigned long long s;
	if (s == 0)
		s = (unsigned long long)now_us() ^ ((unsigned long long)getpid() << 32) ^ (unsigned long long)(size_t)&s;
	for (size_t i = 0; i < n; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		p[i] = (CK_BYTE)s;
	}
}

static void hex(FILE *out, const CK_BYTE *p, CK_ULONG n)
{
	for (CK_ULONG i = 0; i < n; i++)
		fprintf(out, "%02x", p[i]);
}

static int find_key(CK_SESSION_HANDLE s, CK_OBJECT_CLASS cls, const char *label, CK_OBJECT_HANDLE *h)
{
	CK_ATTRIBUTE tmpl[] = {
		{CKA_CLASS, &cls, sizeof cls},
		{CKA_LABEL, (void *)label, strlen(label)},
	};
	CK_ULONG n = 0;
	CK_RV rv = f->C_FindObjectsInit(s, tmpl, 2);
	if (rv != CKR_OK) {
		fail("C_FindObjectsInit(%s): 0x%lx", label, rv);
		return -1;
	}
	rv = f->C_FindObjects(s, h, 1, &n);
	f->C_FindObjectsFinal(s);
	if (rv != CKR_OK || n != 1) {
		fail("C_FindObjects(%s): 0x%lx, %lu found", label, rv, n);
		return -1;
	}
	return 0;
}

/* session opens a session, logs in and finds the private keys. */
static int session(CK_SESSION_HANDLE *s, struct key *keys)
{
	CK_SLOT_ID slots[8];
	CK_ULONG ns = 8;
	CK_RV rv = f->C_GetSlotList(CK_TRUE, slots, &ns);
	if (rv != CKR_OK || ns == 0) {
		fail("C_GetSlotList: 0x%lx, %lu slots", rv, ns);
		return -1;
	}
	rv = f->C_OpenSession(slots[0], CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, s);
	if (rv != CKR_OK) {
		fail("C_OpenSession: 0x%lx", rv);
		return -1;
	}
	rv = f->C_Login(*s, CKU_USER, (CK_UTF8CHAR *)pin, strlen(pin));
	if (rv != CKR_OK && rv != CKR_USER_ALREADY_LOGGED_IN) {
		fail("C_Login: 0x%lx", rv);
		return -1;
	}
	for (int i = 0; i < nkeys; i++) {
		keys[i].label = labels[i];
		keys[i].ec = strncmp(labels[i], "ec", 2) == 0;
		if (find_key(*s, CKO_PRIVATE_KEY, labels[i], &keys[i].priv) != 0)
			return -1;
	}
	return 0;
}

static const CK_BYTE sha256_prefix[] = {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
					0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20};

/* sign_once signs a random hash with key k (variant picks PKCS#1 or PSS for
 * RSA) and appends the line to out. */
static int sign_once(CK_SESSION_HANDLE s, const struct key *k, int variant, FILE *out)
{
	CK_BYTE hash[32], input[sizeof sha256_prefix + 32], sig[512];
	CK_ULONG siglen = sizeof sig, inlen;
	CK_RSA_PKCS_PSS_PARAMS pss = {CKM_SHA256, CKG_MGF1_SHA256, 32};
	CK_MECHANISM mech = {CKM_ECDSA, NULL, 0};
	const char *mname = "ECDSA";
	random_bytes(hash, sizeof hash);
	memcpy(input, hash, 32);
	inlen = 32;
	if (!k->ec && variant % 2 == 0) {
		mech.mechanism = CKM_RSA_PKCS;
		mname = "RSA_PKCS";
		memcpy(input, sha256_prefix, sizeof sha256_prefix);
		memcpy(input + sizeof sha256_prefix, hash, 32);
		inlen = sizeof input;
	} else if (!k->ec) {
		mech.mechanism = CKM_RSA_PKCS_PSS;
		mech.pParameter = &pss;
		mech.ulParameterLen = sizeof pss;
		mname = "RSA_PKCS_PSS";
	}
	CK_RV rv = f->C_SignInit(s, &mech, k->priv);
	if (rv != CKR_OK) {
		fail("C_SignInit(%s, %s): 0x%lx", k->label, mname, rv);
		return -1;
	}
	rv = f->C_Sign(s, input, inlen, sig, &siglen);
	if (rv != CKR_OK) {
		fail("C_Sign(%s, %s): 0x%lx", k->label, mname, rv);
		return -1;
	}
	if (out != NULL) {
		fprintf(out, "sig %s %s ", k->label, mname);
		hex(out, hash, 32);
		fputc(' ', out);
		hex(out, sig, siglen);
		fputc('\n', out);
	}
	return 0;
}

static FILE *open_out(const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", outdir, name);
	FILE *out = fopen(path, "w");
	if (out == NULL)
		fail("open %s: %s", path, strerror(errno));
	return out;
}

/* sign_all signs signs times with every key in session s. */
static int sign_all(CK_SESSION_HANDLE s, const struct key *keys, FILE *out)
{
	for (int i = 0; i < signs; i++)
		for (int k = 0; k < nkeys; k++)
			if (sign_once(s, &keys[k], i, out) != 0)
				return -1;
	return 0;
}

struct worker {
	struct key keys[MAX_KEYS];
	FILE *out;
	int ok;
};

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

static void *thread_main(void *arg)
{
	struct worker *w = arg;
	CK_SESSION_HANDLE s;
	CK_SLOT_ID slots[8];
	CK_ULONG ns = 8;
	if (f->C_GetSlotList(CK_TRUE, slots, &ns) != CKR_OK || ns == 0 ||
	    f->C_OpenSession(slots[0], CKF_SERIAL_SESSION, NULL, NULL, &s) != CKR_OK) {
		fail("thread: no session");
		return NULL;
	}
	/* The login of the process covers this session; the key handles too. */
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int ok = mem != NULL && sign_all(s, w->keys, mem) == 0;
	if (mem != NULL)
		fclose(mem);
	pthread_mutex_lock(&out_mu);
	if (ok)
		fwrite(buf, 1, len, w->out);
	pthread_mutex_unlock(&out_mu);
	free(buf);
	f->C_CloseSession(s);
	w->ok = ok;
	return NULL;
}

/* child_main is the life of one forked child; returns its exit status. */
static int child_main(int idx, int depth)
{
	CK_SESSION_HANDLE s;
	struct key keys[MAX_KEYS];
	snprintf(procname, sizeof procname, depth ? "grandchild%d" : "child%d", idx);
	FILE *out = open_out(procname);
	if (out == NULL)
		return 1;
	if (depth == 0) {
		CK_RV rv = f->C_Initialize(NULL);
		if (rv != CKR_OK && rv != CKR_CRYPTOKI_ALREADY_INITIALIZED) {
			fail("C_Initialize in the child: 0x%lx", rv);
			return 1;
		}
	}
	if (session(&s, keys) != 0)
		return 1;
	if (idx == 1 && depth == 0) {
		/* A child that forks again: the grandchild inherits an
		 * initialised module and does not call C_Initialize. */
		fflush(NULL);
		pid_t g = fork();
		if (g == 0)
			_exit(child_main(idx, 1));
		int rc = sign_all(s, keys, out) == 0 ? 0 : 1;
		int status;
		if (waitpid(g, &status, 0) != g || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fail("grandchild failed (status 0x%x)", status);
			rc = 1;
		}
		fclose(out);
		return rc;
	}
	int rc = 0;
	if (idx == 0 && depth == 0) {
		struct worker w[2];
		pthread_t th[2];
		for (int i = 0; i < 2; i++) {
			memcpy(w[i].keys, keys, sizeof keys);
			w[i].out = out;
			w[i].ok = 0;
			pthread_create(&th[i], NULL, thread_main, &w[i]);
		}
		for (int i = 0; i < 2; i++) {
			pthread_join(th[i], NULL);
			if (!w[i].ok)
				rc = 1;
		}
	} else if (sign_all(s, keys, out) != 0) {
		rc = 1;
	}
	fclose(out);
	if (idx % 2 == 0 && depth == 0) {
		CK_RV rv = f->C_Finalize(NULL);
		if (rv != CKR_OK) {
			fail("C_Finalize in the child: 0x%lx", rv);
			rc = 1;
		}
	}
	return rc;
}

static int write_pub(CK_SESSION_HANDLE s, const struct key *keys)
{
	FILE *out = open_out("pub");
	if (out == NULL)
		return -1;
	for (int i = 0; i < nkeys; i++) {
		CK_OBJECT_HANDLE pub;
		if (find_key(s, CKO_PUBLIC_KEY, keys[i].label, &pub) != 0)
			return -1;
		CK_BYTE a[1024], b[1024];
		CK_ATTRIBUTE t[2] = {
			{keys[i].ec ? CKA_EC_PARAMS : CKA_MODULUS, a, sizeof a},
			{keys[i].ec ? CKA_EC_POINT : CKA_PUBLIC_EXPONENT, b, sizeof b},
		};
		CK_RV rv = f->C_GetAttributeValue(s, pub, t, 2);
		if (rv != CKR_OK) {
			fail("C_GetAttributeValue(public %s): 0x%lx", keys[i].label, rv);
			return -1;
		}
		fprintf(out, "%s %s ", keys[i].ec ? "ec" : "rsa", keys[i].label);
		hex(out, a, t[0].ulValueLen);
		fputc(' ', out);
		hex(out, b, t[1].ulValueLen);
		fputc('\n', out);
	}
	return fclose(out) == 0 ? 0 : -1;
}

/* bench times n calls of each kind in this process. */
static int bench(const char *where, CK_SESSION_HANDLE s, const struct key *keys, int n)
{
	CK_SESSION_INFO info;
	double t0 = now_us();
	for (int i = 0; i < n * 10; i++)
		if (f->C_GetSessionInfo(s, &info) != CKR_OK) {
			fail("C_GetSessionInfo");
			return -1;
		}
	printf("bench %s - C_GetSessionInfo %d %.1f\n", where, n * 10, (now_us() - t0) / (n * 10));
	for (int k = 0; k < nkeys; k++)
		for (int variant = 0; variant < (keys[k].ec ? 1 : 2); variant++) {
			/* one warm-up call */
			if (sign_once(s, &keys[k], variant, NULL) != 0)
				return -1;
			t0 = now_us();
			for (int i = 0; i < n; i++)
				if (sign_once(s, &keys[k], variant, NULL) != 0)
					return -1;
			printf("bench %s %s %s %d %.1f\n", where, keys[k].label,
			       keys[k].ec ? "ECDSA" : (variant ? "RSA_PKCS_PSS" : "RSA_PKCS"), n,
			       (now_us() - t0) / n);
		}
	fflush(stdout);
	return 0;
}

/* wait_children waits for the pids until the deadline, then kills. */
static int wait_children(pid_t *pids, int n, double deadline_us)
{
	int bad = 0, left = n;
	while (left > 0) {
		int status;
		pid_t r = waitpid(-1, &status, WNOHANG);
		if (r > 0) {
			for (int i = 0; i < n; i++)
				if (pids[i] == r) {
					pids[i] = 0;
					left--;
					if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
						fail("child %d ended with status 0x%x", i, status);
						bad++;
					}
				}
			continue;
		}
		if (r < 0 && errno == ECHILD)
			break;
		if (now_us() > deadline_us) {
			for (int i = 0; i < n; i++)
				if (pids[i] > 0) {
					fail("child %d still running at the deadline: killed (a hang)", i);
					kill(pids[i], SIGKILL);
					bad++;
				}
			break;
		}
		usleep(5000);
	}
	return bad;
}

/* close_lib closes the descriptors this process holds on the file path (as
 * a host that closes what it did not open would). */
static void close_lib(const char *path)
{
	char want[PATH_MAX], link[PATH_MAX], fdpath[300];
	if (realpath(path, want) == NULL)
		return;
	DIR *d = opendir("/proc/self/fd");
	if (d == NULL)
		return;
	int fds[64], n = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL && n < 64;) {
		snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%s", e->d_name);
		ssize_t l = readlink(fdpath, link, sizeof link - 1);
		if (l > 0) {
			link[l] = 0;
			if (strcmp(link, want) == 0)
				fds[n++] = atoi(e->d_name);
		}
	}
	closedir(d);
	for (int i = 0; i < n; i++)
		close(fds[i]);
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: %s MODULE OUTDIR KEYS CHILDREN SIGNS [bench N]\n", argv[0]);
		return 2;
	}
	outdir = argv[2];
	for (char *tok = strtok(argv[3], ","); tok != NULL && nkeys < MAX_KEYS; tok = strtok(NULL, ","))
		labels[nkeys++] = tok;
	int children = atoi(argv[4]);
	signs = atoi(argv[5]);
	int bench_n = argc >= 8 && strcmp(argv[6], "bench") == 0 ? atoi(argv[7]) : 0;
	int broken = argc >= 7 && strcmp(argv[6], "broken") == 0;
	pin = getenv("FORKSIGN_PIN");
	const char *tmo = getenv("FORKSIGN_TIMEOUT");
	double deadline = now_us() + (tmo ? atof(tmo) : 60) * 1e6;
	if (pin == NULL || children < 0 || children > 64 || nkeys == 0) {
		fprintf(stderr, "bad arguments or FORKSIGN_PIN unset\n");
		return 2;
	}

	void *dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (dl == NULL) {
		fail("dlopen: %s", dlerror());
		return 1;
	}
	CK_C_GetFunctionList gfl = (CK_C_GetFunctionList)dlsym(dl, "C_GetFunctionList");
	if (gfl == NULL || gfl(&f) != CKR_OK) {
		fail("C_GetFunctionList");
		return 1;
	}
	CK_C_INITIALIZE_ARGS ia;
	memset(&ia, 0, sizeof ia);
	ia.flags = CKF_OS_LOCKING_OK;
	CK_RV rv = f->C_Initialize(&ia);
	if (rv != CKR_OK) {
		fail("C_Initialize: 0x%lx", rv);
		return 1;
	}
	CK_SESSION_HANDLE s;
	struct key keys[MAX_KEYS];
	if (session(&s, keys) != 0)
		return 1;
	if (getenv("FORKSIGN_CLOSELIB") != NULL)
		close_lib(argv[1]);
	if (getenv("FORKSIGN_UNLINK") != NULL && unlink(argv[1]) != 0) {
		fail("unlink %s: %s", argv[1], strerror(errno));
		return 1;
	}
	if (getenv("FORKSIGN_REPLACE") != NULL) {
		int fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0 || write(fd, "not the module\n", 15) != 15) {
			fail("replace %s: %s", argv[1], strerror(errno));
			return 1;
		}
		close(fd);
	}

	if (bench_n > 0) {
		if (bench("parent", s, keys, bench_n) != 0)
			return 1;
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			snprintf(procname, sizeof procname, "child");
			double t0 = now_us();
			rv = f->C_Initialize(NULL);
			if (rv != CKR_OK && rv != CKR_CRYPTOKI_ALREADY_INITIALIZED) {
				fail("C_Initialize in the child: 0x%lx", rv);
				_exit(1);
			}
			double t1 = now_us();
			if (session(&s, keys) != 0)
				_exit(1);
			printf("bench child - C_Initialize 1 %.1f\n", t1 - t0);
			printf("bench child - session+login+find 1 %.1f\n", now_us() - t1);
			int rc = bench("child", s, keys, bench_n) == 0 ? 0 : 1;
			t0 = now_us();
			rv = f->C_Finalize(NULL);
			printf("bench child - C_Finalize 1 %.1f\n", now_us() - t0);
			fflush(stdout);
			_exit(rc || rv != CKR_OK);
		}
		pid_t pids[1] = {pid};
		int bad = wait_children(pids, 1, deadline);
		f->C_Finalize(NULL);
		return bad ? 1 : 0;
	}

	if (broken) {
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			snprintf(procname, sizeof procname, "child");
			CK_SESSION_HANDLE cs;
			int bad = 0;
			rv = f->C_Initialize(NULL);
			printf("child C_Initialize 0x%lx\n", rv);
			if (rv == CKR_OK || rv == CKR_CRYPTOKI_ALREADY_INITIALIZED) {
				fail("C_Initialize succeeded without its copy: 0x%lx", rv);
				bad++;
			}
			rv = f->C_OpenSession(0, CKF_SERIAL_SESSION, NULL, NULL, &cs);
			printf("child C_OpenSession 0x%lx\n", rv);
			if (rv == CKR_OK) {
				fail("C_OpenSession succeeded without its copy");
				bad++;
			}
			fflush(stdout);
			_exit(bad ? 1 : 0);
		}
		pid_t pids[1] = {pid};
		int bad = wait_children(pids, 1, deadline);
		if (sign_once(s, &keys[0], 0, NULL) != 0)
			bad++;
		f->C_Finalize(NULL);
		printf("%s\n", bad ? "FAILED" : "PASS");
		return bad ? 1 : 0;
	}

	if (write_pub(s, keys) != 0)
		return 1;
	pid_t pids[64];
	fflush(NULL);
	for (int i = 0; i < children; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			fail("fork: %s", strerror(errno));
			return 1;
		}
		if (pids[i] == 0) {
			int rc = child_main(i, 0);
			fflush(NULL);
			_exit(rc);
		}
	}
	/* The parent signs meanwhile. */
	FILE *out = open_out("parent");
	int bad = out == NULL || sign_all(s, keys, out) != 0;
	if (out != NULL)
		fclose(out);
	bad += wait_children(pids, children, deadline);
	/* And still works after its children are gone. */
	if (sign_once(s, &keys[0], 0, NULL) != 0)
		bad++;
	rv = f->C_Finalize(NULL);
	if (rv != CKR_OK) {
		fail("C_Finalize: 0x%lx", rv);
		bad++;
	}
	printf("%s\n", bad ? "FAILED" : "PASS");
	return bad ? 1 : 0;
}
