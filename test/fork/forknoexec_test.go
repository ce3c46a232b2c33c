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
			env := append([]string{"FORKSIGN_PIN=" + userPIN, "FORKSIGN_TIMEOUT=120"}, c.env...) // with the run's 3 minutes, hang guards
			report, err := tk.run(env, 3*time.Minute, name, args...)
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

// TestForkChildChangesUser: a child that changes its user before its first
// call, as nginx's workers do (`user`), loads its copy from the image its
// parent, root, made: from the memfd and from the unnamed file that takes
// its place where memfds cannot be executable (mode 0555: the child opens
// it again through /proc/self/fd as the new user). The token is handed to
// that user (csrc/forkuser.c: C_Initialize, C_GetSlotList, C_GetTokenInfo).
func TestForkChildChangesUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to change the child's user")
	}
	const nobody = 65534
	tk := newToken(t)
	bin := filepath.Join(tk.dir, "forkuser")
	shim := filepath.Join(tk.dir, "noexecmemfd.so")
	for _, b := range [][]string{
		{"-Wall", "-Wextra", "-Werror", "-O1", "-o", bin, filepath.Join(repoRoot, "test", "fork", "csrc", "forkuser.c"), "-ldl"},
		{"-Wall", "-Werror", "-shared", "-fPIC", "-o", shim, filepath.Join(repoRoot, "test", "fork", "csrc", "noexecmemfd.c")},
	} {
		if out, err := exec.Command("gcc", b...).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
	}
	// The token, its configuration and its log to the child's user; the
	// directories above it passable.
	logPath := tk.path("module.log")
	if f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		t.Fatal(err)
	} else {
		f.Close()
	}
	if err := os.Chmod(filepath.Dir(tk.dir), 0o711); err != nil {
		t.Fatal(err)
	}
	if err := filepath.WalkDir(tk.dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, nobody, nobody)
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		env  []string
		log  string
	}{
		{"memfd", nil, ""},
		{"unnamed file (memfd refused executable)", []string{"LD_PRELOAD=" + shim}, "(memfd_create: Permission denied"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before, _ := os.ReadFile(logPath)
			out, err := tk.run(c.env, 60*time.Second, bin, libPath, "65534")
			after, _ := os.ReadFile(logPath)
			if err != nil || !strings.Contains(out, "PASS") || !strings.Contains(out, "label t ") {
				t.Fatalf("forkuser: %v\n%s\nmodule log:\n%s", err, out, after[len(before):])
			}
			if c.log != "" && !bytes.Contains(after[len(before):], []byte(c.log)) {
				t.Errorf("module log lacks %q:\n%s", c.log, after[len(before):])
			}
		})
	}
}
