package fork

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestForkNoExecMemfd: where the kernel refuses executable memory files
// (vm.memfd_noexec=2: memfd_create with MFD_EXEC fails, every memfd is
// sealed non-executable), the image for the forked children goes to an
// unnamed file in /dev/shm, $XDG_RUNTIME_DIR or $TMPDIR, the first one that
// can be mapped executable, and the parent's log says where and why
// (level WARN); when none can, the child's first call fails cleanly and the
// log names every refusal. The refusal is played by an LD_PRELOAD shim
// (csrc/noexecmemfd.c) and, where this test may make namespaces (root),
// by the kernel itself: the sysctl set in a new PID namespace, /dev/shm
// and $TMPDIR mounted noexec in a new mount namespace.
func TestForkNoExecMemfd(t *testing.T) {
	tk := newToken(t)
	bin := buildForksign(t, tk.dir)
	shim := filepath.Join(tk.dir, "noexecmemfd.so")
	if out, err := exec.Command("gcc", "-Wall", "-Werror", "-shared", "-fPIC", "-o", shim,
		filepath.Join(repoRoot, "test", "fork", "csrc", "noexecmemfd.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	noexecDir := filepath.Join(tk.dir, "noexec")
	if err := os.MkdirAll(noexecDir, 0o700); err != nil {
		t.Fatal(err)
	}
	// The kernel's own refusal needs a PID namespace (the sysctl is per
	// namespace, so the machine's stays as it is) and a mount namespace.
	kernel := func(mounts ...string) []string {
		script := "echo 2 > /proc/sys/vm/memfd_noexec || exit 97\n"
		for _, m := range mounts {
			script += "mount -t tmpfs -o noexec,size=64m tmpfs " + m + " || exit 97\n"
		}
		return []string{"unshare", "--mount", "--pid", "--fork", "--mount-proc", "sh", "-c", script + `exec "$@"`, "sh"}
	}
	for _, c := range []struct {
		name   string
		env    []string
		wrap   []string // command the forksign run is wrapped in
		broken bool     // the child must get a clean error
		log    []string // in the module log
	}{
		{name: "memfd refused executable (shim)", env: []string{"LD_PRELOAD=" + shim},
			log: []string{"level=WARN", "(memfd_create: Permission denied"}},
		{name: "memfd and /dev/shm refused executable (kernel)", wrap: kernel("/dev/shm"),
			log: []string{"level=WARN", "O_TMPFILE in /dev/shm: cannot be mapped executable: Operation not permitted"}},
		{name: "vm.memfd_noexec=2 (kernel)", wrap: kernel(),
			log: []string{"level=WARN", "is in /dev/shm (memfd_create (vm.memfd_noexec=2): Permission denied)"}},
		{name: "vm.memfd_noexec=2, /dev/shm and TMPDIR noexec (kernel)", wrap: kernel("/dev/shm", noexecDir),
			env: []string{"TMPDIR=" + noexecDir, "XDG_RUNTIME_DIR="}, broken: true,
			log: []string{"level=ERROR", "no image of the library to load (memfd_create (vm.memfd_noexec=2): Permission denied; " +
				"O_TMPFILE in /dev/shm: cannot be mapped executable: Operation not permitted; O_TMPFILE in " + noexecDir +
				": cannot be mapped executable: Operation not permitted)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.wrap != nil {
				if os.Geteuid() != 0 {
					t.Skip("needs root for the namespaces (unshare)")
				}
				if _, err := exec.LookPath("unshare"); err != nil {
					t.Skip("no unshare (util-linux)")
				}
			}
			logPath := tk.path("module.log")
			before, _ := os.ReadFile(logPath)
			args := []string{libPath, tk.dir, "rsa", "1", "20"}
			if c.broken {
				args = append(args, "broken")
			}
			name := bin
			if c.wrap != nil {
				name, args = c.wrap[0], append(append(c.wrap[1:], bin), args...)
			}
			env := append([]string{"FORKSIGN_PIN=" + userPIN, "FORKSIGN_TIMEOUT=20"}, c.env...)
			report, err := tk.run(env, 60*time.Second, name, args...)
			if strings.Contains(report, "memfd_create") && strings.Contains(report, "Invalid argument") {
				t.Skip("the kernel knows no MFD_NOEXEC_SEAL (before 6.3)")
			}
			if err != nil || !strings.Contains(report, "PASS") {
				t.Fatalf("%s %v: %v\n%s", name, args, err, report)
			}
			after, _ := os.ReadFile(logPath)
			for _, want := range c.log {
				if !bytes.Contains(after[len(before):], []byte(want)) {
					t.Errorf("module log lacks %q:\n%s", want, after[len(before):])
				}
			}
		})
	}
}
