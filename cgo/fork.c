/*
 * fork.c: serving a forked child without Go.
 *
 * Go code cannot run in a child forked (without exec) from a process that
 * loaded this library: the child has one thread and a Go runtime whose other
 * threads are gone, and it hangs as soon as it needs the scheduler or the GC.
 * Servers such as nginx initialise the module in their master process and
 * then fork workers that sign. So in a forked child every entry point is
 * answered here, in C, by forwarding to p11-kit's RPC client module
 * (p11-kit-client.so), whose server is a fresh process started with exec:
 *
 *     p11-kit-remote /abs/path/of/libmodexp-pkcs11.so
 *
 * (stdin/stdout of that process are the RPC socket). The exec'd process loads
 * this library anew, so its Go runtime is whole, and it sees the token as a
 * fresh C_Initialize would: same configuration, same token file, its own
 * sessions and login state.
 *
 * State machine of one process generation (reset by the atfork child
 * handler in every new child, so a child that forks again starts over):
 *
 *   inherited  the parent had the module initialised when it forked (the Go
 *              module or, in a grandchild, a started helper). Like a C
 *              module's child, this one counts as initialised: its first
 *              call starts the helper. C_Finalize just drops it.
 *   ready      the helper runs and the client is initialised in this
 *              process; every call is forwarded (fast path: one atomic load).
 *
 *   C_Initialize  ready: CKR_CRYPTOKI_ALREADY_INITIALIZED; otherwise start the
 *                 helper (CKR_OK), as a C module that notices the fork does.
 *   C_Finalize    ready: finalise the client (the helper exits); inherited:
 *                 CKR_OK; otherwise CKR_CRYPTOKI_NOT_INITIALIZED.
 *   other calls   ready: forward; inherited: start, then forward; otherwise
 *                 CKR_CRYPTOKI_NOT_INITIALIZED.
 *
 * The helper gets the environment this library saw when it was loaded (the
 * same one the Go runtime read its configuration from), not the child's:
 * nginx, for one, clears its workers' environment. It is installed only in
 * the intermediate process p11-kit forks to exec the helper (atfork child
 * handler, on the thread that forks), so the host's environment is never
 * touched, except for a few microseconds while p11-kit-client.so reads
 * P11_KIT_SERVER_ADDRESS in its C_GetFunctionList.
 *
 * SIGPIPE: p11-kit-client writes to the helper's socket with write(); if the
 * helper is gone (it could not be exec'd, or it died), that raises SIGPIPE,
 * which kills a host that does not ignore it. Every forwarded call therefore
 * runs with SIGPIPE blocked in the calling thread, and a SIGPIPE it raised is
 * consumed before the mask is restored: the caller gets the client's error
 * (CKR_DEVICE_ERROR...) instead of dying.
 *
 * Nothing here prints: failures go to the file named by MODEXP_TOKEN_LOG.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pkcs11_3.h"

extern char **environ;

/* Set in every forked child (read by FORK_GUARD in entry.c). */
int modexp_forked_child;

/* Mirrors the Go module's state (C_Initialize ... C_Finalize), see main.go. */
static int fk_go_initialized;

void modexp_note_initialized(int initialized)
{
	__atomic_store_n(&fk_go_initialized, initialized, __ATOMIC_SEQ_CST);
}

/* ------------------------------------------------------------------------
 * What the library knew when it was loaded.
 * ---------------------------------------------------------------------- */

static char **fk_env;          /* deep copy of environ at load time */
static char fk_module[PATH_MAX]; /* absolute path of this library */

/* fk_getenv looks name up in the load-time environment. */
static const char *fk_getenv(const char *name)
{
	size_t n = strlen(name);
	for (char **e = fk_env; e != NULL && *e != NULL; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

/* fk_snapshot_env copies environ. Called from the constructor (and by the
 * tests of this package, which change their environment later). */
void modexp_fork_snapshot_env(void)
{
	size_t n = 0;
	while (environ != NULL && environ[n] != NULL)
		n++;
	char **copy = calloc(n + 1, sizeof *copy);
	if (copy == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		if ((copy[i] = strdup(environ[i])) == NULL)
			return; /* keep the old snapshot; this one leaks */
	fk_env = copy; /* an older snapshot is left allocated: others may read it */
}

/* ------------------------------------------------------------------------
 * Logging (the module never prints): one line appended to MODEXP_TOKEN_LOG.
 * ---------------------------------------------------------------------- */

static void fk_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fk_log(const char *fmt, ...)
{
	const char *path = fk_getenv("MODEXP_TOKEN_LOG");
	if (path == NULL || *path == '\0')
		return;
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	for (char *p = msg; *p; p++)
		if (*p == '"' || *p == '\n')
			*p = '\'';
	char when[40] = "";
	struct timespec ts;
	struct tm tm;
	if (clock_gettime(CLOCK_REALTIME, &ts) == 0 && gmtime_r(&ts.tv_sec, &tm) != NULL)
		strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	dprintf(fd, "time=%s level=ERROR msg=\"%s\" component=cgo-fork pid=%d\n", when, msg,
		(int)getpid());
	close(fd);
}

/* ------------------------------------------------------------------------
 * Finding p11-kit.
 * ---------------------------------------------------------------------- */

#if defined(__x86_64__)
#define FK_MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define FK_MULTIARCH "aarch64-linux-gnu"
#elif defined(__i386__)
#define FK_MULTIARCH "i386-linux-gnu"
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FK_MULTIARCH "powerpc64le-linux-gnu"
#elif defined(__s390x__)
#define FK_MULTIARCH "s390x-linux-gnu"
#elif defined(__riscv) && __riscv_xlen == 64
#define FK_MULTIARCH "riscv64-linux-gnu"
#else
#define FK_MULTIARCH "unknown"
#endif

static const char *const fk_client_paths[] = {
	"/usr/lib/" FK_MULTIARCH "/pkcs11/p11-kit-client.so",
	"/usr/lib64/pkcs11/p11-kit-client.so",
	"/usr/lib/pkcs11/p11-kit-client.so",
	"/usr/local/lib/pkcs11/p11-kit-client.so",
	NULL,
};

/* p11-kit-remote takes the module path as its only argument; `p11-kit
 * remote` (the last candidate) execs it. */
static const char *const fk_remote_paths[] = {
	"/usr/libexec/p11-kit/p11-kit-remote",
	"/usr/lib/" FK_MULTIARCH "/p11-kit/p11-kit-remote",
	"/usr/lib/p11-kit/p11-kit-remote",
	"/usr/local/libexec/p11-kit/p11-kit-remote",
	NULL,
};

/* Test hooks, compiled only into the tests of this package: testsupport.go
 * (build tag modexp_testhooks) defines MODEXP_TEST_HOOKS. The built library
 * has none of them (test/symbols_test.go checks). */
#ifdef MODEXP_TEST_HOOKS
static CK_C_GetFunctionList fk_test_getlist;
static const char *fk_test_module;

void modexp_fork_test_set_getlist(CK_C_GetFunctionList fn) { fk_test_getlist = fn; }
void modexp_fork_test_set_module(const char *path) { fk_test_module = path; }
#else
#define fk_test_getlist ((CK_C_GetFunctionList)NULL)
#define fk_test_module ((const char *)NULL)
#endif

/* fk_quote appends s to buf in single quotes, for p11-kit's argv parser.
 * A quote or backslash in s cannot be expressed: -1. */
static int fk_quote(char *buf, size_t size, const char *s)
{
	if (strpbrk(s, "'\\") != NULL)
		return -1;
	size_t used = strlen(buf);
	int n = snprintf(buf + used, size - used, "%s'%s'", used > 1 ? " " : "", s);
	return (n < 0 || (size_t)n >= size - used) ? -1 : 0;
}

/* ------------------------------------------------------------------------
 * SIGPIPE (see the top of the file).
 * ---------------------------------------------------------------------- */

void modexp_fork_sigpipe_block(sigset_t *old)
{
	sigset_t pipe;
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, old);
}

void modexp_fork_sigpipe_restore(const sigset_t *old)
{
	if (!sigismember(old, SIGPIPE)) {
		sigset_t pending;
		if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) {
			sigset_t pipe;
			sigemptyset(&pipe);
			sigaddset(&pipe, SIGPIPE);
			struct timespec zero = {0, 0};
			sigtimedwait(&pipe, NULL, &zero);
		}
	}
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* ------------------------------------------------------------------------
 * The state of this process generation.
 * ---------------------------------------------------------------------- */

static pthread_mutex_t fk_mu = PTHREAD_MUTEX_INITIALIZER;
static int fk_inherited;               /* see the top of the file */
static int fk_ready;                   /* atomic; fk_target valid when set */
static CK_FUNCTION_LIST *fk_target;    /* the client instance of this generation */
static pid_t fk_target_pid;            /* the process fk_target was made in */
static void *fk_client_dl;             /* dlopen handle of p11-kit-client.so */
static char **fk_helper_env;           /* fk_env + P11_KIT_SERVER_ADDRESS */
static pthread_t fk_spawner;           /* the thread inside the client's C_Initialize */
static int fk_spawning;

void modexp_fx_reset(void);     /* forkmech.c */
void modexp_fx_forget_all(void); /* forkmech.c */

static void fk_on_fork_child(void)
{
	int parent_forked = __atomic_load_n(&modexp_forked_child, __ATOMIC_SEQ_CST);
	/* p11-kit forks inside the client's C_Initialize to exec the helper:
	 * give that process the load-time environment. */
	if (parent_forked && fk_spawning && pthread_equal(fk_spawner, pthread_self()) &&
	    fk_helper_env != NULL)
		environ = fk_helper_env;
	if (parent_forked)
		fk_inherited = __atomic_load_n(&fk_ready, __ATOMIC_SEQ_CST) || fk_inherited;
	else
		fk_inherited = __atomic_load_n(&fk_go_initialized, __ATOMIC_SEQ_CST);
	/* The parent's client instance stays where it is: its socket belongs to
	 * the parent's helper. This generation makes its own. */
	__atomic_store_n(&fk_ready, 0, __ATOMIC_SEQ_CST);
	fk_spawning = 0;
	pthread_mutex_init(&fk_mu, NULL);
	modexp_fx_reset(); /* the parent's emulated operations are not ours */
	__atomic_store_n(&modexp_forked_child, 1, __ATOMIC_SEQ_CST);
}

__attribute__((constructor)) static void fk_init(void)
{
	modexp_fork_snapshot_env();
	Dl_info info;
	if (dladdr((void *)&fk_init, &info) != 0 && info.dli_fname != NULL &&
	    realpath(info.dli_fname, fk_module) == NULL)
		snprintf(fk_module, sizeof fk_module, "%s", info.dli_fname);
	pthread_atfork(NULL, NULL, fk_on_fork_child);
}

/* fk_helper_address builds P11_KIT_SERVER_ADDRESS for the helper. */
static CK_RV fk_helper_address(char *buf, size_t size)
{
	const char *module = fk_test_module ? fk_test_module : fk_module;
	if (module[0] != '/') {
		fk_log("forked child: cannot find the path of this module (got '%s')", module);
		return CKR_GENERAL_ERROR;
	}
	const char *remote = fk_getenv("MODEXP_TOKEN_P11KIT_REMOTE");
	for (int i = 0; remote == NULL && fk_remote_paths[i] != NULL; i++)
		if (access(fk_remote_paths[i], X_OK) == 0)
			remote = fk_remote_paths[i];
	snprintf(buf, size, "|");
	if (remote == NULL) {
		if (access("/usr/bin/p11-kit", X_OK) != 0) {
			fk_log("forked child: p11-kit-remote not found (install p11-kit, or set "
			       "MODEXP_TOKEN_P11KIT_REMOTE)");
			return CKR_GENERAL_ERROR;
		}
		if (fk_quote(buf, size, "/usr/bin/p11-kit") != 0 || fk_quote(buf, size, "remote") != 0)
			return CKR_GENERAL_ERROR;
	} else if (fk_quote(buf, size, remote) != 0) {
		fk_log("forked child: unusable helper path '%s'", remote);
		return CKR_GENERAL_ERROR;
	}
	if (fk_quote(buf, size, module) != 0) {
		fk_log("forked child: module path '%s' has a quote or backslash, or is too long", module);
		return CKR_GENERAL_ERROR;
	}
	return CKR_OK;
}

/* fk_load_client finds p11-kit-client.so's C_GetFunctionList. */
static CK_C_GetFunctionList fk_load_client(void)
{
	if (fk_test_getlist != NULL)
		return fk_test_getlist;
	if (fk_client_dl == NULL) {
		const char *path = fk_getenv("MODEXP_TOKEN_P11KIT_CLIENT");
		if (path != NULL)
			fk_client_dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		for (int i = 0; path == NULL && fk_client_dl == NULL && fk_client_paths[i]; i++)
			fk_client_dl = dlopen(fk_client_paths[i], RTLD_NOW | RTLD_LOCAL);
		if (fk_client_dl == NULL) {
			const char *err = dlerror();
			fk_log("forked child: cannot load p11-kit-client.so (install p11-kit-modules, "
			       "or set MODEXP_TOKEN_P11KIT_CLIENT): %s",
			       err ? err : "not found");
			return NULL;
		}
	}
	CK_C_GetFunctionList fn = (CK_C_GetFunctionList)dlsym(fk_client_dl, "C_GetFunctionList");
	if (fn == NULL)
		fk_log("forked child: p11-kit-client.so has no C_GetFunctionList");
	return fn;
}

/* fk_start starts the helper and initialises the client. Called with fk_mu
 * held and fk_ready clear. */
static CK_RV fk_start(CK_VOID_PTR init_args)
{
	if (fk_target == NULL || fk_target_pid != getpid()) {
		char address[2 * PATH_MAX + 64];
		CK_RV rv = fk_helper_address(address, sizeof address);
		if (rv != CKR_OK)
			return rv;
		if (fk_helper_env == NULL) {
			size_t n = 0;
			while (fk_env != NULL && fk_env[n] != NULL)
				n++;
			char **env = calloc(n + 2, sizeof *env);
			if (env == NULL)
				return CKR_HOST_MEMORY;
			size_t j = 0;
			for (size_t i = 0; i < n; i++)
				if (strncmp(fk_env[i], "P11_KIT_SERVER_ADDRESS=", 23) != 0)
					env[j++] = fk_env[i];
			size_t len = strlen(address) + 24;
			if ((env[j] = malloc(len)) == NULL) {
				free(env);
				return CKR_HOST_MEMORY;
			}
			snprintf(env[j], len, "P11_KIT_SERVER_ADDRESS=%s", address);
			fk_helper_env = env;
		}
		CK_C_GetFunctionList getlist = fk_load_client();
		if (getlist == NULL)
			return CKR_GENERAL_ERROR;
		CK_FUNCTION_LIST *list = NULL;
		/* p11-kit-client reads P11_KIT_SERVER_ADDRESS here (and only here). */
		char **saved = environ;
		environ = fk_helper_env;
		rv = getlist(&list);
		environ = saved;
		if (rv != CKR_OK || list == NULL) {
			fk_log("forked child: p11-kit-client C_GetFunctionList: 0x%lx", (unsigned long)rv);
			return rv != CKR_OK ? rv : CKR_GENERAL_ERROR;
		}
		fk_target = list;
		fk_target_pid = getpid();
	}
	fk_spawner = pthread_self();
	fk_spawning = 1;
	sigset_t old;
	modexp_fork_sigpipe_block(&old);
	CK_RV rv = fk_target->C_Initialize(init_args);
	modexp_fork_sigpipe_restore(&old);
	fk_spawning = 0;
	if (rv != CKR_OK) {
		fk_log("forked child: starting the helper (%s) failed: 0x%lx", fk_module,
		       (unsigned long)rv);
		/* p11-kit-client keeps a failed instance half set up: make a new
		 * one next time. */
		fk_target = NULL;
		return rv;
	}
	__atomic_store_n(&fk_ready, 1, __ATOMIC_RELEASE);
	return CKR_OK;
}

/* modexp_fork_target returns the function list serving this forked child,
 * starting the helper when the child inherited an initialised module, or
 * NULL with the return value in *rv. */
const CK_FUNCTION_LIST *modexp_fork_target(CK_RV *rv)
{
	if (__builtin_expect(__atomic_load_n(&fk_ready, __ATOMIC_ACQUIRE), 1))
		return fk_target;
	pthread_mutex_lock(&fk_mu);
	const CK_FUNCTION_LIST *t = NULL;
	if (__atomic_load_n(&fk_ready, __ATOMIC_ACQUIRE)) {
		t = fk_target;
	} else if (!fk_inherited) {
		*rv = CKR_CRYPTOKI_NOT_INITIALIZED;
	} else if ((*rv = fk_start(NULL)) == CKR_OK) {
		fk_inherited = 0;
		t = fk_target;
	} else {
		*rv = CKR_GENERAL_ERROR; /* as before: an inherited module that cannot serve */
	}
	pthread_mutex_unlock(&fk_mu);
	return t;
}

/* modexp_fork_initialize is C_Initialize in a forked child. */
CK_RV modexp_fork_initialize(CK_VOID_PTR init_args)
{
	pthread_mutex_lock(&fk_mu);
	CK_RV rv;
	if (__atomic_load_n(&fk_ready, __ATOMIC_ACQUIRE)) {
		rv = CKR_CRYPTOKI_ALREADY_INITIALIZED;
	} else if ((rv = fk_start(init_args)) == CKR_OK) {
		fk_inherited = 0;
	} else if (rv != CKR_ARGUMENTS_BAD && rv != CKR_CANT_LOCK && rv != CKR_NEED_TO_CREATE_THREADS &&
		   rv != CKR_HOST_MEMORY) {
		rv = CKR_GENERAL_ERROR;
	}
	pthread_mutex_unlock(&fk_mu);
	return rv;
}

/* modexp_fork_finalize is C_Finalize in a forked child. */
CK_RV modexp_fork_finalize(CK_VOID_PTR reserved)
{
	if (reserved != NULL)
		return CKR_ARGUMENTS_BAD;
	pthread_mutex_lock(&fk_mu);
	CK_RV rv;
	if (__atomic_load_n(&fk_ready, __ATOMIC_ACQUIRE)) {
		/* Later calls of other threads wait on fk_mu, then see neither. */
		__atomic_store_n(&fk_ready, 0, __ATOMIC_SEQ_CST);
		sigset_t old;
		modexp_fork_sigpipe_block(&old);
		rv = fk_target->C_Finalize(NULL);
		modexp_fork_sigpipe_restore(&old);
		modexp_fx_forget_all();
	} else if (fk_inherited) {
		fk_inherited = 0;
		rv = CKR_OK;
	} else {
		rv = CKR_CRYPTOKI_NOT_INITIALIZED;
	}
	pthread_mutex_unlock(&fk_mu);
	return rv;
}
