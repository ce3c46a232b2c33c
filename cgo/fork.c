/*
 * fork.c: a forked child gets a second, fresh copy of this library.
 *
 * Go code cannot run in a child forked (without exec) from a process that
 * loaded this library: the child has one thread and a Go runtime whose other
 * threads are gone, and it hangs as soon as it needs the scheduler or the GC.
 * Servers such as nginx initialise the module in their master process and
 * then fork workers that sign. So in a forked child no call enters the
 * inherited (frozen) runtime: every entry point forwards (FORK_GUARD in
 * entry.c) to the function lists of a second copy of this very library,
 * loaded in the child from an in-memory image of the library file. dlopen
 * maps it as a new object, whose Go runtime starts whole in the child; it
 * answers every function of every interface as the parent's does, and sees
 * the token as a fresh C_Initialize would.
 *
 * The image. dlopen identifies a library by its file (device and inode), so
 * each process generation loads from a file of its own: the atfork prepare
 * handler, at the first fork of a process, copies the library (from the
 * descriptor opened at load, checked to be the loaded file) into a sealed
 * memfd, inherited by every child of that process, whose pages they share.
 * A child that forks makes the image for its own children the same way (a
 * grandchild never loads its parent's copy: that copy is frozen there).
 *
 * State machine of one process generation (reset by the atfork child
 * handler in every new child):
 *
 *   inherited  the parent had the module initialised when it forked (the Go
 *              module or, in a grandchild, a started copy). As a C module's
 *              child, this one counts as initialised: its first call loads
 *              the copy and initialises it. C_Finalize just drops it.
 *   ready      the copy is initialised; every call is forwarded (fast path:
 *              one atomic load).
 *
 *   C_Initialize  ready: CKR_CRYPTOKI_ALREADY_INITIALIZED; otherwise load
 *                 the copy (once per generation) and initialise it.
 *   C_Finalize    ready: the copy's C_Finalize; inherited: CKR_OK;
 *                 otherwise CKR_CRYPTOKI_NOT_INITIALIZED.
 *   other calls   ready: forward; inherited: start, then forward; otherwise
 *                 CKR_CRYPTOKI_NOT_INITIALIZED.
 *
 * A copy loaded here knows it is one (fork.c tells it at its C_Initialize,
 * below): it makes no image, and in a child of its own process it answers
 * nothing (only the first copy, which the host calls, serves that child).
 *
 * Nothing here prints: failures go to the file named by MODEXP_TOKEN_LOG in
 * the load-time environment (component=cgo-fork).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pkcs11_3.h"
#include "fork.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

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

#define FK_COPY_PREFIX "/proc/self/fd/"

static char **fk_env;            /* deep copy of environ at load time */
static char fk_module[PATH_MAX]; /* absolute path of this library */
static int fk_lib_fd = -1;       /* this library's file, opened at load */
static dev_t fk_lib_dev;         /* ... and its identity */
static ino_t fk_lib_ino;
static int fk_by_fd;             /* loaded through a /proc/self/fd/ path (as fork.c loads a copy) */
static int fk_secondary;         /* this copy was loaded by fork.c (told at C_Initialize) */

/* fk_getenv looks name up in the load-time environment. */
static const char *fk_getenv(const char *name)
{
	size_t n = strlen(name);
	for (char **e = fk_env; e != NULL && *e != NULL; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

/* modexp_fork_snapshot_env copies environ. Called from the constructor (and
 * by the tests of this package, which change their environment later). */
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

static void fk_log(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* fk_log appends a line of the given level (ERROR, WARN). */
static void fk_log(const char *level, const char *fmt, ...)
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
	dprintf(fd, "time=%s level=%s msg=\"%s\" component=cgo-fork pid=%d\n", when, level, msg,
		(int)getpid());
	close(fd);
}

/* Test hooks, compiled only into the tests of this package: testsupport.go
 * (build tag modexp_testhooks) defines MODEXP_TEST_HOOKS. The built library
 * has none of them (test/symbols_test.go checks). The test binary is not a
 * library that can be loaded again: the tests give the copy's
 * C_GetInterface instead, or a module path that cannot be served. */
#ifdef MODEXP_TEST_HOOKS
static CK_C_GetInterface fk_test_getinterface;
static const char *fk_test_module;

void modexp_fork_test_set_getinterface(CK_C_GetInterface fn) { fk_test_getinterface = fn; }
void modexp_fork_test_set_module(const char *path) { fk_test_module = path; }
#else
#define fk_test_getinterface ((CK_C_GetInterface)NULL)
#define fk_test_module ((const char *)NULL)
#endif

/* ------------------------------------------------------------------------
 * The image of this library for the children of this process.
 * ---------------------------------------------------------------------- */

static pthread_mutex_t fk_image_mu = PTHREAD_MUTEX_INITIALIZER;
static int fk_image_fd = -1;   /* made by this process for its children */
static char fk_image_why[256]; /* why there is none, for the children's log */
static int fk_load_fd = -1;    /* in a child: the image its parent made */
static char fk_load_why[256];

/* fk_library_fd returns a descriptor of the loaded library's file: the one
 * opened at load if it still is that file, else the path opened anew if it
 * still names that file; -1 with the reason in why. The caller closes a
 * descriptor other than fk_lib_fd. */
static int fk_library_fd(char *why, size_t size)
{
	struct stat st;
	if (fk_test_module == NULL && fk_lib_fd >= 0 && fstat(fk_lib_fd, &st) == 0 && st.st_dev == fk_lib_dev &&
	    st.st_ino == fk_lib_ino)
		return fk_lib_fd;
	const char *path = fk_test_module ? fk_test_module : fk_module;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, size, "cannot open the library file %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || (fk_test_module == NULL && (st.st_dev != fk_lib_dev || st.st_ino != fk_lib_ino))) {
		snprintf(why, size, "the library file %s was replaced since it was loaded", path);
		close(fd);
		return -1;
	}
	return fd;
}

/* fk_image_size is how much of the library file the copy needs: up to
 * the end of its last loadable segment (the dynamic loader maps nothing
 * else; the symbol table and the DWARF after it, a third of the file,
 * stay out of the image). 0 when the file is not an ELF64 object it
 * understands: then the whole file is copied. */
static off_t fk_image_size(int src, off_t file_size)
{
	Elf64_Ehdr eh;
	if (pread(src, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 ||
	    eh.e_phnum > 64)
		return 0;
	Elf64_Phdr ph[64];
	size_t n = (size_t)eh.e_phnum * sizeof ph[0];
	if (pread(src, ph, n, (off_t)eh.e_phoff) != (ssize_t)n)
		return 0;
	off_t end = (off_t)(eh.e_phoff + n);
	for (int i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (off_t)(ph[i].p_offset + ph[i].p_filesz) > end)
			end = (off_t)(ph[i].p_offset + ph[i].p_filesz);
	return end <= file_size ? end : 0;
}

/* fk_exec_ok says whether fd can be mapped executable (what dlopen will
 * do): a memfd under vm.memfd_noexec, or a file on a noexec mount, cannot.
 * On refusal, the reason is appended to why. */
static int fk_exec_ok(int fd, const char *what, char *why, size_t size)
{
	void *p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (p != MAP_FAILED) {
		munmap(p, (size_t)sysconf(_SC_PAGESIZE));
		return 1;
	}
	size_t len = strlen(why);
	snprintf(why + len, size - len, "%s%s: cannot be mapped executable: %s", len ? "; " : "", what,
		 strerror(errno));
	return 0;
}

/* fk_note appends "what: strerror(err)" to why. */
static void fk_note(char *why, size_t size, const char *what, int err)
{
	size_t len = strlen(why);
	snprintf(why + len, size - len, "%s%s: %s", len ? "; " : "", what, strerror(err));
}

/* fk_image_file returns a new, empty, executable-mappable file for the
 * image, trying in turn a memfd (MFD_EXEC where the kernel knows it), then
 * an unnamed file (O_TMPFILE, mode 0555, gone with its last descriptor) in
 * /dev/shm, $XDG_RUNTIME_DIR and $TMPDIR (or /tmp); -1 with every refusal
 * in why. *where says which it took. (test/fork/csrc/noexecmemfd.c
 * plays a kernel with vm.memfd_noexec=2 to the built library.) */
static int fk_image_file(char *why, size_t size, const char **where)
{
	why[0] = '\0';
	int fd = memfd_create("modexp-pkcs11 fork copy", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
	if (fd < 0 && errno == EINVAL) /* kernels before 6.3 know no MFD_EXEC */
		fd = memfd_create("modexp-pkcs11 fork copy", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		int err = errno;
		char what[64] = "memfd_create";
		int fdn = open("/proc/sys/vm/memfd_noexec", O_RDONLY | O_CLOEXEC);
		if (fdn >= 0) {
			char v[8] = "";
			if (read(fdn, v, sizeof v - 1) > 0 && v[0] != '0')
				snprintf(what, sizeof what, "memfd_create (vm.memfd_noexec=%c)", v[0]);
			close(fdn);
		}
		fk_note(why, size, what, err);
	} else if (fk_exec_ok(fd, "memfd", why, size)) {
		*where = "memfd";
		return fd;
	} else {
		close(fd);
	}
	const char *tmp = fk_getenv("TMPDIR");
	const char *dirs[3] = {"/dev/shm", fk_getenv("XDG_RUNTIME_DIR"), tmp != NULL && *tmp ? tmp : "/tmp"};
	for (int i = 0; i < 3; i++) {
		if (dirs[i] == NULL || dirs[i][0] != '/')
			continue;
		char what[PATH_MAX + 16];
		snprintf(what, sizeof what, "O_TMPFILE in %s", dirs[i]);
		/* Readable by all: a child that changed its user (nginx's `user`)
		 * opens it again through /proc/self/fd. It is the library: no secret;
		 * only this descriptor (or root) can write it. */
		fd = open(dirs[i], O_TMPFILE | O_RDWR | O_CLOEXEC, 0555);
		if (fd < 0) {
			fk_note(why, size, what, errno);
			continue;
		}
		if (fk_exec_ok(fd, what, why, size)) {
			*where = dirs[i];
			return fd;
		}
		close(fd);
	}
	return -1;
}

/* fk_make_image copies the loadable part of the library into a new memory
 * file (fk_image_file), sealed against changes where it is a memfd.
 * Returns the descriptor or -1 with the reason in why. */
static int fk_make_image(char *why, size_t size)
{
	int src = fk_library_fd(why, size);
	if (src < 0)
		return -1;
	struct stat st;
	int fd = -1;
	if (fstat(src, &st) != 0) {
		snprintf(why, size, "fstat of the library file: %s", strerror(errno));
		goto out;
	}
	const char *where = "";
	char refused[sizeof fk_image_why];
	fd = fk_image_file(refused, sizeof refused, &where);
	if (fd < 0) {
		snprintf(why, size, "%s", refused);
		goto out;
	}
	if (refused[0] != '\0')
		fk_log("WARN", "the image of the library for forked children is in %s (%s)", where, refused);
	off_t want = fk_image_size(src, st.st_size);
	if (want == 0)
		want = st.st_size;
	off_t off = 0;
	while (off < want) {
		ssize_t n = sendfile(fd, src, &off, (size_t)(want - off));
		if (n <= 0) {
			snprintf(why, size, "copying the library into memory: %s",
				 n < 0 ? strerror(errno) : "short file");
			close(fd);
			fd = -1;
			goto out;
		}
	}
	if (want < st.st_size) {
		/* No section headers in the image: they are past its end. */
		Elf64_Ehdr eh;
		if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh) {
			eh.e_shoff = 0;
			eh.e_shnum = 0;
			eh.e_shstrndx = SHN_UNDEF;
			if (pwrite(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh) {
				snprintf(why, size, "writing the image's header: %s", strerror(errno));
				close(fd);
				fd = -1;
				goto out;
			}
		}
	}
	/* Nobody changes the image afterwards (no seals on a tmpfs file). */
	fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
out:
	if (src != fk_lib_fd)
		close(src);
	return fd;
}

/* fk_prepare (atfork prepare, in the forking process): make the image for
 * the children once per process generation (tried again at the next fork
 * when it failed). */
static void fk_prepare(void)
{
	if (fk_secondary)
		return;
	pthread_mutex_lock(&fk_image_mu);
	if (fk_image_fd < 0)
		fk_image_fd = fk_make_image(fk_image_why, sizeof fk_image_why);
	pthread_mutex_unlock(&fk_image_mu);
}

/* ------------------------------------------------------------------------
 * The state of this process generation.
 * ---------------------------------------------------------------------- */

static pthread_mutex_t fk_mu = PTHREAD_MUTEX_INITIALIZER;
static int fk_inherited;                 /* see the top of the file */
static int fk_parent_init;               /* the parent had it initialised (for the copy) */
static int fk_ready;                     /* atomic; fk_lists valid when set */
static int fk_loaded;                    /* fk_lists hold this generation's copy */
static struct modexp_fork_lists fk_lists; /* the copy's function lists */

static void fk_on_fork_child(void)
{
	int parent_forked = __atomic_load_n(&modexp_forked_child, __ATOMIC_SEQ_CST);
	if (parent_forked)
		fk_inherited = __atomic_load_n(&fk_ready, __ATOMIC_SEQ_CST) || fk_inherited;
	else
		fk_inherited = __atomic_load_n(&fk_go_initialized, __ATOMIC_SEQ_CST);
	fk_parent_init = fk_inherited;
	/* The parent's copy stays frozen here: this generation loads its own,
	 * from the image its parent made. */
	__atomic_store_n(&fk_ready, 0, __ATOMIC_SEQ_CST);
	fk_loaded = 0;
	if (fk_load_fd >= 0 && fk_load_fd != fk_image_fd)
		close(fk_load_fd);
	fk_load_fd = fk_image_fd;
	memcpy(fk_load_why, fk_image_why, sizeof fk_load_why);
	fk_image_fd = -1;
	fk_image_why[0] = '\0';
	pthread_mutex_init(&fk_mu, NULL);
	pthread_mutex_init(&fk_image_mu, NULL);
	__atomic_store_n(&modexp_forked_child, 1, __ATOMIC_SEQ_CST);
}

__attribute__((constructor)) static void fk_init(void)
{
	modexp_fork_snapshot_env();
	/* The library's path and file identity; a descriptor of it, unless it
	 * was loaded through a descriptor's path (fork.c loads its copies so:
	 * they need none). */
	Dl_info info;
	if (dladdr((void *)&fk_init, &info) != 0 && info.dli_fname != NULL) {
		fk_by_fd = strncmp(info.dli_fname, FK_COPY_PREFIX, strlen(FK_COPY_PREFIX)) == 0;
		if (fk_by_fd || realpath(info.dli_fname, fk_module) == NULL)
			snprintf(fk_module, sizeof fk_module, "%s", info.dli_fname);
	}
	struct stat st;
	if (fk_module[0] == '/' && stat(fk_module, &st) == 0) {
		fk_lib_dev = st.st_dev;
		fk_lib_ino = st.st_ino;
		if (!fk_by_fd)
			fk_lib_fd = open(fk_module, O_RDONLY | O_CLOEXEC);
	}
	pthread_atfork(fk_prepare, NULL, fk_on_fork_child);
}

/* fk_load loads this generation's copy and takes its function lists. Called
 * with fk_mu held. */
static CK_RV fk_load(void)
{
	if (fk_loaded)
		return CKR_OK;
	if (fk_secondary) {
		fk_log("ERROR", "forked child: a copy loaded for a forked child does not serve that child's children");
		return CKR_GENERAL_ERROR;
	}
	CK_C_GetInterface getif = fk_test_getinterface;
	if (getif == NULL) {
		if (fk_load_fd < 0) {
			fk_log("ERROR", "forked child: no image of the library to load (%s)",
			       fk_load_why[0] ? fk_load_why : "the parent made none");
			return CKR_GENERAL_ERROR;
		}
		char path[64];
		snprintf(path, sizeof path, FK_COPY_PREFIX "%d", fk_load_fd);
		void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (dl == NULL) {
			const char *err = dlerror();
			fk_log("ERROR", "forked child: cannot load the copy of %s: %s", fk_module, err ? err : "dlopen failed");
			return CKR_GENERAL_ERROR;
		}
		getif = (CK_C_GetInterface)dlsym(dl, "C_GetInterface");
		if (getif == NULL) {
			fk_log("ERROR", "forked child: the copy of %s has no C_GetInterface", fk_module);
			return CKR_GENERAL_ERROR;
		}
		/* The mapping keeps the image; its descriptor is no longer needed. */
		close(fk_load_fd);
		fk_load_fd = -1;
	}
	static CK_UTF8CHAR name[] = "PKCS 11";
	CK_VERSION v[3] = {{3, 2}, {3, 0}, {2, 40}};
	CK_INTERFACE_PTR it[3];
	for (int i = 0; i < 3; i++) {
		CK_RV rv = getif(name, &v[i], &it[i], 0);
		if (rv != CKR_OK || it[i] == NULL || it[i]->pFunctionList == NULL) {
			fk_log("ERROR", "forked child: the copy of %s lacks interface %d.%d: 0x%lx", fk_module, v[i].major,
			       v[i].minor, (unsigned long)rv);
			return CKR_GENERAL_ERROR;
		}
	}
	fk_lists.v32 = it[0]->pFunctionList;
	fk_lists.v30 = it[1]->pFunctionList;
	fk_lists.v240 = it[2]->pFunctionList;
	fk_loaded = 1;
	return CKR_OK;
}

/* ------------------------------------------------------------------------
 * What a copy is told by the copy that loads it: the parent's state, passed
 * in the pReserved of the copy's C_Initialize (only fork.c calls a copy's
 * C_Initialize, and only a copy honours it; anyone else's non-NULL
 * pReserved is refused as ever).
 * ---------------------------------------------------------------------- */

#define FK_HANDOVER_MAGIC 0x6d6f646578706b31ULL /* "modexpk1" */

struct fk_handover {
	unsigned long long magic;
	int parent_initialized; /* the forking process had the module initialised */
};

/* Read by the copy's Go (modexp_fork_parent_initialized). */
static int fk_parent_initialized;

int modexp_fork_parent_initialized(void) { return fk_parent_initialized; }

/* modexp_fork_take_handover (entry.c's C_Initialize): in a copy loaded by
 * fork.c, takes what the loading copy says and returns the arguments
 * without it (in *stripped); anything else is returned as it came. */
CK_VOID_PTR modexp_fork_take_handover(CK_VOID_PTR init_args, CK_C_INITIALIZE_ARGS *stripped)
{
	CK_C_INITIALIZE_ARGS *a = init_args;
	if (!fk_by_fd || a == NULL || a->pReserved == NULL)
		return init_args;
	const struct fk_handover *h = a->pReserved;
	if (h->magic != FK_HANDOVER_MAGIC)
		return init_args;
	fk_secondary = 1;
	fk_parent_initialized = h->parent_initialized;
	*stripped = *a;
	stripped->pReserved = NULL;
	return stripped;
}

/* fk_start loads the copy if needed and initialises it. Called with fk_mu
 * held and fk_ready clear. */
static CK_RV fk_start(CK_VOID_PTR init_args)
{
	CK_C_INITIALIZE_ARGS args = {NULL, NULL, NULL, NULL, 0, NULL};
	if (init_args != NULL) {
		args = *(CK_C_INITIALIZE_ARGS *)init_args;
		if (args.pReserved != NULL)
			return CKR_ARGUMENTS_BAD; /* as the module says */
	}
	CK_RV rv = fk_load();
	if (rv != CKR_OK)
		return rv;
	struct fk_handover h = {FK_HANDOVER_MAGIC, fk_parent_init};
	args.pReserved = &h;
	rv = fk_lists.v32->base.C_Initialize(&args);
	if (rv != CKR_OK)
		return rv;
	__atomic_store_n(&fk_ready, 1, __ATOMIC_RELEASE);
	return CKR_OK;
}

/* modexp_fork_target returns the function lists serving this forked child,
 * starting the copy when the child inherited an initialised module, or NULL
 * with the return value in *rv. */
const struct modexp_fork_lists *modexp_fork_target(CK_RV *rv)
{
	if (__builtin_expect(__atomic_load_n(&fk_ready, __ATOMIC_ACQUIRE), 1))
		return &fk_lists;
	pthread_mutex_lock(&fk_mu);
	const struct modexp_fork_lists *t = NULL;
	if (__atomic_load_n(&fk_ready, __ATOMIC_ACQUIRE)) {
		t = &fk_lists;
	} else if (!fk_inherited) {
		*rv = CKR_CRYPTOKI_NOT_INITIALIZED;
	} else if ((*rv = fk_start(NULL)) == CKR_OK) {
		fk_inherited = 0;
		t = &fk_lists;
	} else {
		*rv = CKR_GENERAL_ERROR; /* an inherited module that cannot serve */
	}
	pthread_mutex_unlock(&fk_mu);
	return t;
}

/* modexp_fork_initialize is C_Initialize in a forked child. */
CK_RV modexp_fork_initialize(CK_VOID_PTR init_args)
{
	pthread_mutex_lock(&fk_mu);
	CK_RV rv;
	if (__atomic_load_n(&fk_ready, __ATOMIC_ACQUIRE))
		rv = CKR_CRYPTOKI_ALREADY_INITIALIZED;
	else if ((rv = fk_start(init_args)) == CKR_OK)
		fk_inherited = 0;
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
		rv = fk_lists.v32->base.C_Finalize(NULL);
	} else if (fk_inherited) {
		fk_inherited = 0;
		rv = CKR_OK;
	} else {
		rv = CKR_CRYPTOKI_NOT_INITIALIZED;
	}
	pthread_mutex_unlock(&fk_mu);
	return rv;
}
