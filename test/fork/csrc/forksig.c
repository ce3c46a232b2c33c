/*
 * forksig.c: what becomes of signals in a forked child once its copy of the
 * module runs (two Go runtimes' handlers are installed there, the frozen
 * one's first). Driven by test/fork/forksig_test.go.
 *
 *   forksig MODULE CASE
 *
 * The parent initialises MODULE and forks; the child calls C_Initialize
 * (which loads its copy), C_GetSlotList, then:
 *
 *   segv      writes through a NULL pointer: the child must die of SIGSEGV;
 *   pipe      writes to a pipe without a reader, SIGPIPE at its default:
 *             the child must die of SIGPIPE;
 *   pipe-ign  the same with SIGPIPE ignored: write fails with EPIPE and
 *             the child exits 0;
 *   usr1      raises SIGUSR1, whose handler the host installed before the
 *             load: the handler must run (exit 0).
 *
 * The parent prints "child exit N" or "child signal N" and, after the
 * child, checks that its own module still answers ("parent ok").
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <p11-kit-1/p11-kit/pkcs11.h>

static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	const char *c = argv[2];
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	void *dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	CK_FUNCTION_LIST *f;
	if (dl == NULL || ((CK_C_GetFunctionList)dlsym(dl, "C_GetFunctionList"))(&f) != CKR_OK ||
	    f->C_Initialize(NULL) != CKR_OK) {
		printf("FAIL parent load\n");
		return 1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(30);
		CK_ULONG n = 0;
		CK_RV rv = f->C_Initialize(NULL);
		if (rv != CKR_OK || f->C_GetSlotList(CK_FALSE, NULL, &n) != CKR_OK || n == 0) {
			printf("FAIL child module 0x%lx\n", rv);
			fflush(NULL);
			_exit(3);
		}
		if (strcmp(c, "segv") == 0) {
			*(volatile int *)0 = 1;
		} else if (strcmp(c, "pipe") == 0 || strcmp(c, "pipe-ign") == 0) {
			signal(SIGPIPE, strcmp(c, "pipe") == 0 ? SIG_DFL : SIG_IGN);
			int p[2];
			if (pipe(p) != 0)
				_exit(4);
			close(p[0]);
			if (write(p[1], "x", 1) < 0 && errno == EPIPE)
				_exit(0);
			_exit(5);
		} else if (strcmp(c, "usr1") == 0) {
			raise(SIGUSR1);
			_exit(got_usr1 ? 0 : 6);
		}
		_exit(7);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return 1;
	if (WIFSIGNALED(st))
		printf("child signal %d\n", WTERMSIG(st));
	else
		printf("child exit %d\n", WEXITSTATUS(st));
	CK_INFO info;
	printf("parent %s\n", f->C_GetInfo(&info) == CKR_OK ? "ok" : "failed");
	f->C_Finalize(NULL);
	return 0;
}
