/*
 * forkuser.c: a forked child that changes its user before its first call,
 * as nginx's workers do (its `user` directive), must still load its copy
 * of the module from the image its parent (root) made (docs/FORK.md).
 *
 *   forkuser MODULE UID
 *
 * The parent loads MODULE, C_Initialize, then forks; the child drops to
 * UID (groups, gid and uid), calls C_Initialize and C_GetSlotList (tokens
 * present) and C_GetTokenInfo of the first slot, and reports; the parent
 * prints "child uid U initialize RV slots N label L" and "PASS", or
 * "FAIL ...". Needs root.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <p11-kit-1/p11-kit/pkcs11.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s MODULE UID\n", argv[0]);
		return 2;
	}
	uid_t uid = (uid_t)atoi(argv[2]);
	void *dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	CK_C_GetFunctionList gfl = dl ? (CK_C_GetFunctionList)dlsym(dl, "C_GetFunctionList") : NULL;
	CK_FUNCTION_LIST *f = NULL;
	if (gfl == NULL || gfl(&f) != CKR_OK || f->C_Initialize(NULL) != CKR_OK) {
		printf("FAIL parent: cannot load and initialise %s\n", argv[1]);
		return 1;
	}
	int rep[2];
	if (pipe(rep) != 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		alarm(30);
		char line[256];
		if (setgroups(0, NULL) != 0 || setgid((gid_t)uid) != 0 || setuid(uid) != 0) {
			snprintf(line, sizeof line, "FAIL child: cannot become uid %u\n", (unsigned)uid);
		} else {
			CK_RV rv = f->C_Initialize(NULL), rv2 = CKR_GENERAL_ERROR;
			CK_SLOT_ID slots[8];
			CK_ULONG n = 8;
			CK_TOKEN_INFO ti;
			memset(&ti, ' ', sizeof ti);
			if (rv == CKR_OK && (rv2 = f->C_GetSlotList(CK_TRUE, slots, &n)) == CKR_OK && n > 0)
				rv2 = f->C_GetTokenInfo(slots[0], &ti);
			snprintf(line, sizeof line, "child uid %u initialize 0x%lx slots 0x%lx %lu label %.32s\n",
				 (unsigned)getuid(), (unsigned long)rv, (unsigned long)rv2, (unsigned long)n, ti.label);
		}
		if (write(rep[1], line, strlen(line)) < 0)
			_exit(1);
		_exit(0);
	}
	close(rep[1]);
	char buf[256] = "";
	ssize_t got = read(rep[0], buf, sizeof buf - 1);
	int st;
	if (got <= 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		printf("FAIL child: no report\n");
		return 1;
	}
	buf[got] = '\0';
	fputs(buf, stdout);
	char want[64];
	snprintf(want, sizeof want, "child uid %u initialize 0x0 slots 0x0 ", (unsigned)uid);
	if (strncmp(buf, want, strlen(want)) != 0) {
		printf("FAIL\n");
		return 1;
	}
	printf("PASS\n");
	f->C_Finalize(NULL);
	return 0;
}
