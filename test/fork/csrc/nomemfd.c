/*
 * nomemfd.c: an LD_PRELOAD shim for test/fork that refuses what the fork
 * path makes a forked child's copy of the module in: memfd_create (as a
 * seccomp filter would) and an unnamed file (O_TMPFILE) in any directory.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/mman.h>

int memfd_create(const char *name, unsigned int flags)
{
	(void)name;
	(void)flags;
	errno = EPERM;
	return -1;
}

static int refuse(int flags) { return (flags & O_TMPFILE) == O_TMPFILE; }

#define OPEN(name)                                                                  \
	int name(const char *path, int flags, ...)                                  \
	{                                                                           \
		va_list ap;                                                         \
		va_start(ap, flags);                                                \
		mode_t mode = va_arg(ap, mode_t);                                   \
		va_end(ap);                                                         \
		if (refuse(flags)) {                                                 \
			errno = EACCES;                                             \
			return -1;                                                  \
		}                                                                   \
		int (*next)(const char *, int, ...) = dlsym(RTLD_NEXT, #name);      \
		return next(path, flags, mode);                                     \
	}
OPEN(open)
OPEN(open64)
