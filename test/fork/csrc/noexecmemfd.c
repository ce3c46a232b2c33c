/*
 * noexecmemfd.c: an LD_PRELOAD shim for test/fork that plays a kernel with
 * vm.memfd_noexec=2 to the module: memfd_create with MFD_EXEC fails with
 * EACCES, and every other memfd is made MFD_NOEXEC_SEAL (the kernel then
 * really refuses to map it executable). Needs a kernel that knows
 * MFD_NOEXEC_SEAL (6.3 and later); elsewhere memfd_create is refused with
 * EINVAL, which the test takes as its reason to skip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif

int memfd_create(const char *name, unsigned int flags)
{
	if (flags & MFD_EXEC) {
		errno = EACCES;
		return -1;
	}
	return (int)syscall(SYS_memfd_create, name, flags | MFD_NOEXEC_SEAL);
}
