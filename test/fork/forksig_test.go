package fork

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestForkSignals runs forksig.c: in a forked child whose copy of the
// module runs (two Go runtimes' signal handlers installed, the frozen
// one's under the copy's), a fault in the host's code still kills the
// child with SIGSEGV, a write to a broken pipe still raises SIGPIPE at its
// default disposition and fails with EPIPE when the host ignores it, and a
// handler the host installed before loading the module still runs; the
// parent keeps working.
func TestForkSignals(t *testing.T) {
	tk := newToken(t)
	bin := filepath.Join(tk.dir, "forksig")
	if out, err := exec.Command("gcc", "-Wall", "-Wextra", "-Werror", "-O1", "-o", bin,
		filepath.Join(repoRoot, "test", "fork", "csrc", "forksig.c"), "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	for _, c := range []struct{ name, want string }{
		{"segv", fmt.Sprintf("child signal %d", syscall.SIGSEGV)},
		{"pipe", fmt.Sprintf("child signal %d", syscall.SIGPIPE)},
		{"pipe-ign", "child exit 0"},
		{"usr1", "child exit 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := tk.run(nil, 60*time.Second, bin, libPath, c.name)
			if err != nil || !strings.Contains(out, c.want+"\n") || !strings.Contains(out, "parent ok") {
				t.Fatalf("forksig %s: %v, want %q and \"parent ok\":\n%s", c.name, err, c.want, out)
			}
		})
	}
}
