/*
 * stress.c: many threads and sessions on one libmodexp-pkcs11.so, driven
 * by test/stress (TestStress).
 *
 *   stress <module> <SO PIN> <user PIN> <operations> [threads] [sessions
 *          per thread] [RSS bound MiB] [generate per mille] [sample every]
 *
 * Defaults: 32 threads, 8 sessions each (256 sessions), 20 MiB, 10 per mille,
 * every 40th signature printed. The main thread sets the token up (C_InitToken
 * and C_InitPIN when blank), logs the user in and makes the stable keys:
 * two RSA-2048 token key pairs, two RSA-2048 session key pairs (session
 * objects of the main session, visible to every session), and, when the
 * token lists CKM_ECDSA and CKM_EC_KEY_PAIR_GEN, a P-256 token key pair and
 * a P-256 session key pair. Then the threads share the operation count;
 * each operation, on one of the thread's sessions, is one of:
 *
 *   pkcs   C_SignInit/C_Sign CKM_SHA256_RSA_PKCS with a stable RSA key,
 *          C_VerifyInit/C_Verify on another session: CKR_OK; every 16th
 *          also checks a flipped bit gives CKR_SIGNATURE_INVALID;
 *   pss    the same with CKM_SHA256_RSA_PKCS_PSS (SHA-256, MGF1-SHA256,
 *          salt 32);
 *   ecdsa  CKM_ECDSA over a SHA-256 digest made with C_Digest (when listed);
 *   find   the stable key by label (exactly one, the known handle); every
 *          4th find lists every object and reads each label (a temporary
 *          key destroyed meanwhile may give CKR_OBJECT_HANDLE_INVALID, a
 *          stable one may not);
 *   gen    a temporary key pair (RSA-2048, or P-256 every other time when
 *          ECDSA is listed), token or session objects in turn, signs,
 *          verifies, is destroyed, and its handle then gives
 *          CKR_KEY_HANDLE_INVALID.
 *
 * Sessions 0..5 of a thread are R/W, 6..7 R/O (signing and verifying work
 * in both; generation uses a R/W one). Every CK_RV other than the expected
 * one is an error ("ERR ..." lines, the first 50). The process's VmRSS
 * (/proc/self/status) is sampled after set-up and at every 5 % of the
 * operations ("rss PCT OPS KB"); the growth from 25 % to 100 % must stay
 * below the bound. At the end the object count is the initial one and the
 * stable keys still sign. A watchdog ends the process ("HANG") when no
 * operation completes for 60 s.
 *
 * Output for the Go test: "KEY label rsa MODULUS_HEX" / "KEY label ec
 * EC_POINT_HEX", sampled "SIG mech label MSG_HEX SIG_HEX", "rss ...",
 * "count OP N", "ops N seconds S rate R", "errors N", "DONE". Exit status
 * 0 when there was no error.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "common.h"

#define MAX_THREADS 256
#define MAX_SPT 64

static const char *SO_PIN, *USER_PIN;
static CK_SLOT_ID slot;
static long total_ops;
static int nthreads = 32, spt = 8, gen_permille = 10, sample_every = 40;
static long rss_bound_kb = 20 * 1024;
static int have_ec;

static atomic_long next_op, done_ops, errors, sig_count;
static atomic_long counts[8];
enum { C_PKCS, C_PSS, C_ECDSA, C_FIND, C_FINDALL, C_GEN, C_VERIFY, C_NEG };
static const char *count_names[] = {"pkcs", "pss", "ecdsa", "find", "find-all", "gen", "verify", "negative"};

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

/* The stable keys. */
typedef struct {
	char label[32];
	int ec;
	CK_OBJECT_HANDLE pub, priv;
} key;
static key keys[8];
static int nrsa, nkeys; /* keys[0..nrsa) RSA, then EC */

/* RSS samples: index 0 after set-up, 1..20 at every 5 %. */
static long rss_kb[21];
static long rss_ops[21];

static long vm_rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (f == NULL)
		return -1;
	char line[256];
	long kb = -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void err(int t, const char *op, const char *call, CK_RV rv)
{
	long n = atomic_fetch_add(&errors, 1);
	if (n < 50) {
		pthread_mutex_lock(&out_mu);
		printf("ERR thread %d op %s %s: %s\n", t, op, call, rvname(rv));
		fflush(stdout);
		pthread_mutex_unlock(&out_mu);
	}
}

/* OK: evaluate a call; on a return other than want, report and fail the op. */
#define EXPECT_RV(call, want)                                  \
	({                                                     \
		CK_RV r_ = (call);                             \
		if (r_ != (want))                              \
			err(t, op, #call, r_);                 \
		r_ == (want);                                  \
	})
#define OK(call) EXPECT_RV(call, CKR_OK)

typedef struct {
	int t;
	unsigned rng;
	CK_SESSION_HANDLE s[MAX_SPT];
	long gens;
} worker;

static unsigned rnd(worker *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 17;
	w->rng ^= w->rng << 5;
	return w->rng;
}

static void sample_sig(const char *mech, const char *label, const CK_BYTE *msg, CK_ULONG ml,
		       const CK_BYTE *sig, CK_ULONG sl)
{
	if (atomic_fetch_add(&sig_count, 1) % sample_every != 0)
		return;
	pthread_mutex_lock(&out_mu);
	printf("SIG %s %s ", mech, label);
	for (CK_ULONG i = 0; i < ml; i++)
		printf("%02x", msg[i]);
	putchar(' ');
	for (CK_ULONG i = 0; i < sl; i++)
		printf("%02x", sig[i]);
	putchar('\n');
	pthread_mutex_unlock(&out_mu);
}

/* sign_verify signs msg with priv on s1 and verifies with pub on s2. kind is
 * C_PKCS, C_PSS or C_ECDSA. Returns 1 on success. */
static int sign_verify(worker *w, int kind, CK_SESSION_HANDLE s1, CK_SESSION_HANDLE s2,
		       CK_OBJECT_HANDLE priv, CK_OBJECT_HANDLE pub, const char *label, int neg)
{
	int t = w->t;
	const char *op = count_names[kind];
	CK_BYTE msg[48];
	int ml = snprintf((char *)msg, sizeof msg, "stress %d %u %ld", t, rnd(w), atomic_load(&done_ops));
	CK_RSA_PKCS_PSS_PARAMS pss = {CKM_SHA256, CKG_MGF1_SHA256, 32};
	CK_MECHANISM m = {CKM_SHA256_RSA_PKCS, NULL, 0};
	const CK_BYTE *in = msg;
	CK_ULONG inlen = (CK_ULONG)ml;
	CK_BYTE digest[32];
	if (kind == C_PSS)
		m = (CK_MECHANISM){CKM_SHA256_RSA_PKCS_PSS, &pss, sizeof pss};
	if (kind == C_ECDSA) {
		CK_MECHANISM sha = {CKM_SHA256, NULL, 0};
		CK_ULONG dl = sizeof digest;
		if (!OK(F3->C_DigestInit(s1, &sha)) || !OK(F3->C_Digest(s1, msg, inlen, digest, &dl)))
			return 0;
		m = (CK_MECHANISM){CKM_ECDSA, NULL, 0};
		in = digest;
		inlen = dl;
	}
	CK_BYTE sig[512];
	CK_ULONG sl = sizeof sig;
	if (!OK(F3->C_SignInit(s1, &m, priv)) || !OK(F3->C_Sign(s1, (CK_BYTE_PTR)in, inlen, sig, &sl)))
		return 0;
	if (!OK(F3->C_VerifyInit(s2, &m, pub)) || !OK(F3->C_Verify(s2, (CK_BYTE_PTR)in, inlen, sig, sl)))
		return 0;
	atomic_fetch_add(&counts[C_VERIFY], 1);
	if (neg) {
		CK_BYTE bad[512];
		memcpy(bad, sig, sl);
		bad[sl / 2] ^= 0x10;
		if (!OK(F3->C_VerifyInit(s2, &m, pub)) ||
		    !EXPECT_RV(F3->C_Verify(s2, (CK_BYTE_PTR)in, inlen, bad, sl), CKR_SIGNATURE_INVALID))
			return 0;
		atomic_fetch_add(&counts[C_NEG], 1);
	}
	if (label != NULL)
		sample_sig(op, label, msg, (CK_ULONG)ml, sig, sl);
	return 1;
}

static int is_stable(CK_OBJECT_HANDLE o)
{
	for (int i = 0; i < nkeys; i++)
		if (keys[i].pub == o || keys[i].priv == o)
			return 1;
	return 0;
}

static void op_find(worker *w, CK_SESSION_HANDLE s, int all)
{
	int t = w->t;
	const char *op = all ? "find-all" : "find";
	if (!all) {
		key *k = &keys[rnd(w) % (unsigned)nkeys];
		CK_OBJECT_CLASS cls = rnd(w) & 1 ? CKO_PRIVATE_KEY : CKO_PUBLIC_KEY;
		CK_ATTRIBUTE tmpl[] = {
			{CKA_CLASS, &cls, sizeof cls},
			{CKA_LABEL, k->label, strlen(k->label)},
		};
		CK_OBJECT_HANDLE found[4];
		CK_ULONG n = 0;
		if (!OK(F3->C_FindObjectsInit(s, tmpl, 2)) || !OK(F3->C_FindObjects(s, found, 4, &n)) ||
		    !OK(F3->C_FindObjectsFinal(s)))
			return;
		CK_OBJECT_HANDLE want = cls == CKO_PRIVATE_KEY ? k->priv : k->pub;
		if (n != 1 || found[0] != want) {
			err(t, op, "find by label: not exactly the stable key", CKR_OK);
			return;
		}
		atomic_fetch_add(&counts[C_FIND], 1);
		return;
	}
	CK_OBJECT_HANDLE found[256];
	CK_ULONG n = 0, total = 0;
	int stable = 0;
	if (!OK(F3->C_FindObjectsInit(s, NULL, 0)))
		return;
	do {
		if (!OK(F3->C_FindObjects(s, found, 256, &n))) {
			F3->C_FindObjectsFinal(s);
			return;
		}
		for (CK_ULONG i = 0; i < n; i++) {
			char buf[64];
			CK_ATTRIBUTE a = {CKA_LABEL, buf, sizeof buf};
			CK_RV rv = F3->C_GetAttributeValue(s, found[i], &a, 1);
			if (is_stable(found[i])) {
				stable++;
				if (rv != CKR_OK)
					err(t, op, "C_GetAttributeValue(stable key label)", rv);
			} else if (rv != CKR_OK && rv != CKR_OBJECT_HANDLE_INVALID) {
				err(t, op, "C_GetAttributeValue(temporary object label)", rv);
			}
		}
		total += n;
	} while (n > 0);
	if (!OK(F3->C_FindObjectsFinal(s)))
		return;
	if (stable != 2 * nkeys) {
		err(t, op, "find all: stable keys missing", CKR_OK);
		return;
	}
	atomic_fetch_add(&counts[C_FINDALL], 1);
}

static void op_gen(worker *w, CK_SESSION_HANDLE s, CK_SESSION_HANDLE s2)
{
	int t = w->t;
	const char *op = "gen";
	char label[32];
	snprintf(label, sizeof label, "stress-tmp-%d-%ld", t, w->gens);
	int ec = have_ec && (w->gens & 1);
	CK_BBOOL token = (w->gens >> 1) & 1;
	w->gens++;
	CK_OBJECT_HANDLE pub, priv;
	CK_RV rv = ec ? gen_ec(s, token, label, &pub, &priv) : gen_rsa(s, 2048, token, label, &pub, &priv);
	if (rv != CKR_OK) {
		err(t, op, ec ? "gen_ec" : "gen_rsa", rv);
		return;
	}
	int ok = sign_verify(w, ec ? C_ECDSA : C_PSS, s, s2, priv, pub, NULL, 0);
	ok &= OK(F3->C_DestroyObject(s, priv));
	ok &= OK(F3->C_DestroyObject(s2, pub));
	CK_MECHANISM m = {ec ? CKM_ECDSA : CKM_SHA256_RSA_PKCS, NULL, 0};
	ok &= EXPECT_RV(F3->C_SignInit(s, &m, priv), CKR_KEY_HANDLE_INVALID);
	if (ok)
		atomic_fetch_add(&counts[C_GEN], 1);
}

static void note_done(void)
{
	long d = atomic_fetch_add(&done_ops, 1) + 1;
	long step = total_ops / 20;
	if (step > 0 && d % step == 0 && d / step <= 20) {
		rss_kb[d / step] = vm_rss_kb();
		rss_ops[d / step] = d;
	}
}

static void *run(void *arg)
{
	worker *w = arg;
	int t = w->t;
	const char *op = "open";
	for (int i = 0; i < spt; i++) {
		CK_FLAGS fl = CKF_SERIAL_SESSION | (i < spt - 2 || spt <= 2 ? CKF_RW_SESSION : 0);
		if (!OK(F3->C_OpenSession(slot, fl, NULL, NULL, &w->s[i])))
			return NULL;
	}
	for (;;) {
		long i = atomic_fetch_add(&next_op, 1);
		if (i >= total_ops)
			break;
		int si = (int)(i / nthreads % spt);
		CK_SESSION_HANDLE s = w->s[si], s2 = w->s[(si + 1) % spt];
		unsigned r = rnd(w) % 1000;
		int neg = (i % 16) == 0;
		if (r < (unsigned)gen_permille) {
			/* generation needs a R/W session */
			op_gen(w, w->s[0], w->s[1 % spt]);
		} else if (r < 400) {
			key *k = &keys[rnd(w) % (unsigned)nrsa];
			if (sign_verify(w, C_PKCS, s, s2, k->priv, k->pub, k->label, neg))
				atomic_fetch_add(&counts[C_PKCS], 1);
		} else if (r < 650 || (r < 800 && !have_ec)) {
			key *k = &keys[rnd(w) % (unsigned)nrsa];
			if (sign_verify(w, C_PSS, s, s2, k->priv, k->pub, k->label, neg))
				atomic_fetch_add(&counts[C_PSS], 1);
		} else if (r < 800) {
			key *k = &keys[nrsa + (int)(rnd(w) % (unsigned)(nkeys - nrsa))];
			if (sign_verify(w, C_ECDSA, s, s2, k->priv, k->pub, k->label, neg))
				atomic_fetch_add(&counts[C_ECDSA], 1);
		} else {
			op_find(w, s, r % 4 == 0);
		}
		note_done();
	}
	op = "close";
	for (int i = 0; i < spt; i++)
		OK(F3->C_CloseSession(w->s[i]));
	return NULL;
}

static void *watchdog(void *arg)
{
	(void)arg;
	long last = -1;
	double since = now_s();
	for (;;) {
		sleep(1);
		long d = atomic_load(&done_ops);
		if (d != last) {
			last = d;
			since = now_s();
		} else if (now_s() - since > 60) {
			printf("HANG no operation completed for 60 s (%ld done)\n", d);
			fflush(stdout);
			_exit(3);
		}
	}
	return NULL;
}

static void fatal(const char *what, CK_RV rv)
{
	printf("FAIL %s: %s\n", what, rvname(rv));
	printf("errors 1\n");
	exit(1);
}
#define MUST(what, call)                       \
	do {                                   \
		CK_RV r_ = (call);             \
		if (r_ != CKR_OK)              \
			fatal((what), r_);     \
	} while (0)

/* count_objects is find_count (common.h), fatal on an error. */
static long count_objects(CK_SESSION_HANDLE h)
{
	long total;
	MUST("count: find", find_count(h, &total));
	return total;
}

static void print_key(const key *k, CK_SESSION_HANDLE h)
{
	CK_BYTE buf[600];
	long n = get_attr(h, k->pub, k->ec ? CKA_EC_POINT : CKA_MODULUS, buf, sizeof buf);
	if (n <= 0)
		fatal("read public key", CKR_GENERAL_ERROR);
	printf("KEY %s %s ", k->label, k->ec ? "ec" : "rsa");
	print_hex("", buf, (CK_ULONG)n);
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: stress module so-pin user-pin operations [threads] [sessions/thread] [rss-MiB] [gen-permille] [sample-every]\n");
		return 2;
	}
	SO_PIN = argv[2];
	USER_PIN = argv[3];
	total_ops = atol(argv[4]);
	if (argc > 5)
		nthreads = atoi(argv[5]);
	if (argc > 6)
		spt = atoi(argv[6]);
	if (argc > 7)
		rss_bound_kb = atol(argv[7]) * 1024;
	if (argc > 8)
		gen_permille = atoi(argv[8]);
	if (argc > 9)
		sample_every = atoi(argv[9]);
	if (total_ops < 1 || nthreads < 1 || nthreads > MAX_THREADS || spt < 2 || spt > MAX_SPT || sample_every < 1) {
		fprintf(stderr, "stress: bad arguments\n");
		return 2;
	}
	if (!load(argv[1]))
		return 1;
	CK_C_INITIALIZE_ARGS ia;
	memset(&ia, 0, sizeof ia);
	ia.flags = CKF_OS_LOCKING_OK;
	MUST("C_Initialize", F3->C_Initialize(&ia));
	MUST("slot", first_slot(&slot));
	MUST("token set-up", setup_token(slot, SO_PIN, USER_PIN));
	CK_SESSION_HANDLE h;
	MUST("C_OpenSession", F3->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &h));
	MUST("C_Login", F3->C_Login(h, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN)));
	have_ec = has_mech(slot, CKM_ECDSA) && has_mech(slot, CKM_EC_KEY_PAIR_GEN);
	printf("ecdsa %s\n", have_ec ? "yes" : "no");
	long objects0 = count_objects(h);

	double t0 = now_s();
	for (int i = 0; i < 4; i++) {
		key *k = &keys[nkeys++];
		snprintf(k->label, sizeof k->label, "stress-rsa-%s-%d", i < 2 ? "tok" : "sess", i);
		MUST("generate stable RSA key", gen_rsa(h, 2048, i < 2, k->label, &k->pub, &k->priv));
	}
	nrsa = nkeys;
	printf("keygen rsa-2048 x4 %.3f s\n", now_s() - t0);
	if (have_ec) {
		for (int i = 0; i < 2; i++) {
			key *k = &keys[nkeys++];
			k->ec = 1;
			snprintf(k->label, sizeof k->label, "stress-ec-%s-%d", i == 0 ? "tok" : "sess", i);
			MUST("generate stable EC key", gen_ec(h, i == 0, k->label, &k->pub, &k->priv));
		}
	}
	for (int i = 0; i < nkeys; i++)
		print_key(&keys[i], h);
	long objects1 = count_objects(h);
	if (objects1 != objects0 + 2 * nkeys)
		fatal("object count after the stable keys", CKR_GENERAL_ERROR);
	fflush(stdout);

	pthread_t wd;
	pthread_create(&wd, NULL, watchdog, NULL);
	pthread_detach(wd);
	rss_kb[0] = vm_rss_kb();
	static worker ws[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	double start = now_s();
	for (int i = 0; i < nthreads; i++) {
		ws[i].t = i;
		ws[i].rng = 0x9e3779b9u * (unsigned)(i + 1);
		pthread_create(&th[i], NULL, run, &ws[i]);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	double secs = now_s() - start;

	/* Afterwards: the object count, the stable keys. */
	worker w0 = {.t = -1, .rng = 1};
	long objects2 = count_objects(h);
	printf("objects before %ld after %ld\n", objects1, objects2);
	if (objects2 != objects1) {
		printf("ERR object count changed\n");
		atomic_fetch_add(&errors, 1);
	}
	CK_SESSION_HANDLE h2;
	MUST("C_OpenSession", F3->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &h2));
	for (int i = 0; i < nkeys; i++)
		if (!sign_verify(&w0, keys[i].ec ? C_ECDSA : C_PKCS, h, h2, keys[i].priv, keys[i].pub, keys[i].label, 1))
			printf("ERR stable key %s after the run\n", keys[i].label);
	/* The session keys go with the session; the token keys are destroyed. */
	for (int i = 0; i < nkeys; i++)
		if (strstr(keys[i].label, "-tok-")) {
			MUST("destroy stable key", F3->C_DestroyObject(h, keys[i].priv));
			MUST("destroy stable key", F3->C_DestroyObject(h, keys[i].pub));
		}
	MUST("C_CloseSession", F3->C_CloseSession(h2));
	MUST("C_CloseSession", F3->C_CloseSession(h));
	MUST("C_OpenSession", F3->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &h));
	MUST("C_Login", F3->C_Login(h, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN)));
	long objects3 = count_objects(h);
	printf("objects at the end %ld (at the start %ld)\n", objects3, objects0);
	if (objects3 != objects0) {
		printf("ERR objects left behind\n");
		atomic_fetch_add(&errors, 1);
	}
	MUST("C_Finalize", F3->C_Finalize(NULL));

	long step = total_ops / 20;
	printf("rss 0 0 %ld\n", rss_kb[0]);
	for (int i = 1; i <= 20 && step > 0; i++)
		printf("rss %d %ld %ld\n", i * 5, rss_ops[i], rss_kb[i]);
	long growth = rss_kb[20] - rss_kb[5];
	printf("rss growth 25%%..100%% %ld kB (bound %ld kB)\n", growth, rss_bound_kb);
	if (step == 0 || rss_kb[5] <= 0 || rss_kb[20] <= 0 || growth >= rss_bound_kb) {
		printf("ERR RSS growth\n");
		atomic_fetch_add(&errors, 1);
	}
	for (int i = 0; i < 8; i++)
		printf("count %s %ld\n", count_names[i], atomic_load(&counts[i]));
	long done = atomic_load(&done_ops);
	printf("ops %ld seconds %.2f rate %.1f threads %d sessions %d\n", done, secs, done / secs, nthreads, nthreads * spt);
	printf("errors %ld\n", atomic_load(&errors));
	printf("DONE\n");
	return atomic_load(&errors) == 0 ? 0 : 1;
}
