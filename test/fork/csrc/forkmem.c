/*
 * forkmem.c: what K forked children cost, as an nginx start with K workers
 * does (docs/FORK.md). Any PKCS#11 module: ours or SoftHSMv2.
 *
 *   forkmem MODULE TOKEN-LABEL PIN KEY-LABEL K
 *
 * The parent loads MODULE, C_Initialize, logs in on the token labelled
 * TOKEN-LABEL, finds the private key KEY-LABEL and signs once (CKM_ECDSA
 * or CKM_RSA_PKCS by its CKA_KEY_TYPE), then forks K children. Each child
 * does what a worker does before its first handshake (C_Initialize,
 * C_OpenSession, C_Login, find, one signature), reports its wall time and
 * waits; with all K waiting, the parent reads each child's Rss and Pss
 * (/proc/PID/smaps_rollup) and CPU (utime + stime, /proc/PID/stat), then
 * lets them C_Finalize and exit. Prints
 *
 *   parent rss_kib R pss_kib P login_ms L
 *   fork_ms first F second S          (the parent's fork() calls)
 *   children K first_use_ms median M max X (C_Initialize I, C_Login L) cpu_ms total C
 *            rss_kib mean R pss_kib total P
 *
 * (the medians; first use is C_Initialize to the signature's end).
 *
 * or "FAIL ..." lines.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <p11-kit-1/p11-kit/pkcs11.h>

static CK_FUNCTION_LIST *f;
static const char *tokl, *pin, *keyl;

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* use: open a session on the token, log in, find the key, sign once. */
static int use(double *login_ms)
{
	CK_SLOT_ID slots[16];
	CK_ULONG n = 16;
	if (f->C_GetSlotList(CK_TRUE, slots, &n) != CKR_OK)
		return -1;
	CK_SESSION_HANDLE s = 0;
	for (CK_ULONG i = 0; i < n && s == 0; i++) {
		CK_TOKEN_INFO ti;
		if (f->C_GetTokenInfo(slots[i], &ti) == CKR_OK && strncmp((char *)ti.label, tokl, strlen(tokl)) == 0 &&
		    f->C_OpenSession(slots[i], CKF_SERIAL_SESSION, NULL, NULL, &s) != CKR_OK)
			return -1;
	}
	if (s == 0)
		return -1;
	double t0 = now_ms();
	CK_RV rv = f->C_Login(s, CKU_USER, (CK_UTF8CHAR *)pin, strlen(pin));
	if (login_ms != NULL)
		*login_ms = now_ms() - t0;
	if (rv != CKR_OK && rv != CKR_USER_ALREADY_LOGGED_IN)
		return -1;
	CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
	CK_ATTRIBUTE t[] = {{CKA_CLASS, &cls, sizeof cls}, {CKA_LABEL, (void *)keyl, strlen(keyl)}};
	CK_OBJECT_HANDLE k;
	if (f->C_FindObjectsInit(s, t, 2) != CKR_OK || f->C_FindObjects(s, &k, 1, &n) != CKR_OK ||
	    f->C_FindObjectsFinal(s) != CKR_OK || n != 1)
		return -1;
	CK_KEY_TYPE kt;
	CK_ATTRIBUTE a = {CKA_KEY_TYPE, &kt, sizeof kt};
	if (f->C_GetAttributeValue(s, k, &a, 1) != CKR_OK)
		return -1;
	CK_MECHANISM m = {kt == CKK_EC ? CKM_ECDSA : CKM_RSA_PKCS, NULL, 0};
	CK_BYTE data[32] = {1}, sig[1024];
	CK_ULONG sl = sizeof sig;
	if (f->C_SignInit(s, &m, k) != CKR_OK || f->C_Sign(s, data, sizeof data, sig, &sl) != CKR_OK)
		return -1;
	return 0;
}

/* mem reads Rss and Pss (kB) of pid. */
static void mem(pid_t pid, long *rss, long *pss)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
	FILE *in = fopen(path, "r");
	*rss = *pss = -1;
	while (in != NULL && fgets(line, sizeof line, in) != NULL) {
		sscanf(line, "Rss: %ld", rss);
		sscanf(line, "Pss: %ld", pss);
	}
	if (in != NULL)
		fclose(in);
}

/* cpu returns utime + stime of pid in ms. */
static double cpu(pid_t pid)
{
	char path[64], buf[2048];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *in = fopen(path, "r");
	if (in == NULL)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, in);
	fclose(in);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	unsigned long ut = 0, st = 0;
	if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (ut + st) * 1000.0 / sysconf(_SC_CLK_TCK);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 6)
		return 2;
	tokl = argv[2], pin = argv[3], keyl = argv[4];
	int k = atoi(argv[5]);
	if (k < 1 || k > 64)
		return 2;
	void *dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (dl == NULL || ((CK_C_GetFunctionList)dlsym(dl, "C_GetFunctionList"))(&f) != CKR_OK ||
	    f->C_Initialize(NULL) != CKR_OK) {
		printf("FAIL parent load\n");
		return 1;
	}
	double login;
	if (use(&login) != 0) {
		printf("FAIL parent use\n");
		return 1;
	}
	long rss, pss;
	mem(getpid(), &rss, &pss);
	printf("parent rss_kib %ld pss_kib %ld login_ms %.2f\n", rss, pss, login);
	fflush(NULL);
	int rep[2], go[2];
	if (pipe(rep) != 0 || pipe(go) != 0)
		return 1;
	pid_t pids[64];
	double fork_ms[2];
	for (int i = 0; i < k; i++) {
		double t0 = now_ms();
		pids[i] = fork();
		if (pids[i] > 0 && i < 2)
			fork_ms[i] = now_ms() - t0;
		if (pids[i] == 0) {
			alarm(60);
			close(rep[0]);
			close(go[1]);
			double t0 = now_ms(), r[3] = {-1, -1, -1};
			CK_RV rv = f->C_Initialize(NULL);
			r[1] = now_ms() - t0;
			if ((rv == CKR_OK || rv == CKR_CRYPTOKI_ALREADY_INITIALIZED) && use(&r[2]) == 0)
				r[0] = now_ms() - t0;
			if (write(rep[1], r, sizeof r) != sizeof r)
				_exit(1);
			char c;
			if (read(go[0], &c, 1) < 0)
				_exit(1);
			f->C_Finalize(NULL);
			_exit(r[0] < 0);
		}
	}
	close(rep[1]);
	close(go[0]);
	double ms[64], init[64], logins[64], total_cpu = 0;
	long rss_sum = 0, pss_sum = 0;
	int bad = 0;
	for (int i = 0; i < k; i++) {
		double r[3];
		if (read(rep[0], r, sizeof r) != sizeof r || r[0] < 0)
			bad++;
		ms[i] = r[0], init[i] = r[1], logins[i] = r[2];
	}
	for (int i = 0; i < k; i++) {
		mem(pids[i], &rss, &pss);
		rss_sum += rss, pss_sum += pss;
		total_cpu += cpu(pids[i]);
	}
	close(go[1]);
	for (int i = 0; i < k; i++) {
		int st;
		if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad++;
	}
	if (bad) {
		printf("FAIL %d children\n", bad);
		return 1;
	}
	qsort(ms, k, sizeof ms[0], cmp);
	qsort(init, k, sizeof init[0], cmp);
	qsort(logins, k, sizeof logins[0], cmp);
	printf("fork_ms first %.1f second %.1f\n", fork_ms[0], k > 1 ? fork_ms[1] : 0.0);
	printf("children %d first_use_ms median %.1f max %.1f (C_Initialize %.1f, C_Login %.1f) cpu_ms total %.0f "
	       "rss_kib mean %ld pss_kib total %ld\n",
	       k, ms[k / 2], ms[k - 1], init[k / 2], logins[k / 2], total_cpu, rss_sum / k, pss_sum);
	f->C_Finalize(NULL);
	return 0;
}
