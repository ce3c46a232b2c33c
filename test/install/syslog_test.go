// The system log: checks, with pkcs11-tool and the built module, that a
// module run without a log file says why it fails in the system log: each
// common mistake (a misspelt configuration key, a missing configuration
// file, an unknown engine, a token file that cannot be opened, a bad log
// path, a damaged token file) leaves a line on /dev/log with the reason and
// what to do, and nothing on stdout or stderr but pkcs11-tool's own words.
//
// /dev/log is replaced for the one pkcs11-tool process: it runs in a private
// mount namespace (unshare -m, root only) whose /dev is a tmpfs holding the
// few devices it needs and a /dev/log that leads to the test's socket.

package install

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// nsScript gives the command a /dev of its own whose log is $1/log.
const nsScript = `set -e
S=$1; shift
mount -t tmpfs tmpfs "$S/dev"
for d in null zero urandom random full; do touch "$S/dev/$d"; mount --bind "/dev/$d" "$S/dev/$d"; done
ln -s "$S/log" "$S/dev/log"
mount --bind "$S/dev" /dev
exec "$@"
`

type fakeLog struct {
	dir  string
	conn *net.UnixConn
}

func newFakeLog(t *testing.T) *fakeLog {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root (a private mount namespace for /dev/log)")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare (util-linux) not installed")
	}
	if err := exec.Command("unshare", "-m", "true").Run(); err != nil {
		t.Skipf("no mount namespaces here: %v", err)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ns.sh"), []byte(nsScript), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: filepath.Join(dir, "log"), Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &fakeLog{dir: dir, conn: c}
}

// lines returns the datagrams received so far, without waiting for more:
// the module sends each line before its call returns, so once pkcs11-tool
// has exited its lines are all queued, and no read deadline (which a
// paused goroutine could pass before reading) decides what is seen.
func (f *fakeLog) lines(t *testing.T) []string {
	t.Helper()
	rc, err := f.conn.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	buf := make([]byte, 64<<10)
	for {
		n, rerr := 0, error(nil)
		if err := rc.Read(func(fd uintptr) bool {
			n, _, rerr = syscall.Recvfrom(int(fd), buf, syscall.MSG_DONTWAIT)
			return true // never wait for readiness
		}); err != nil {
			t.Fatal(err)
		}
		if rerr != nil {
			return got // EAGAIN: nothing more queued
		}
		got = append(got, string(buf[:n]))
	}
}

// run runs pkcs11-tool in the namespace with env and returns its output.
func (f *fakeLog) run(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("unshare", append([]string{"-m", "sh", filepath.Join(f.dir, "ns.sh"), f.dir, "pkcs11-tool"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestModuleErrorsReachSyslog(t *testing.T) {
	if _, err := exec.LookPath("pkcs11-tool"); err != nil {
		t.Fatal("pkcs11-tool not installed (make deps)")
	}
	lib := e2e.Lib()
	if _, err := os.Stat(lib); err != nil {
		t.Fatalf("module not built (make build): %v", err)
	}
	f := newFakeLog(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("afile", "not a directory")
	write("damaged.db", strings.Repeat("not a token file\n", 300))
	fast := e2e.CheapKDF
	cases := []struct {
		name  string
		conf  string // file body, "" = none
		log   string // MODEXP_TOKEN_LOG
		args  []string
		fails bool
		want  []string
	}{
		{name: "misspelt key", conf: "[[slot]]\nlabel = \"t\"\ntoken_file = \"t.db\"\nengin = \"soft\"\n",
			args: []string{"-L"}, fails: true, want: []string{"C_Initialize failed", "unknown keys: slot.engin"}},
		{name: "missing file", args: []string{"-L"}, fails: true, want: []string{"C_Initialize failed", "no such file"}},
		{name: "unknown engine", conf: "[[slot]]\nlabel = \"t\"\ntoken_file = \"t.db\"\nengine = \"warp\"\n",
			args: []string{"-L"}, fails: true, want: []string{"C_Initialize failed", "warp"}},
		{name: "token file under a file", conf: "[[slot]]\nlabel = \"t\"\ntoken_file = \"afile/t.db\"\n" + fast,
			args: []string{"-L"}, want: []string{"afile/t.db"}},
		{name: "bad log path", conf: "[[slot]]\nlabel = \"t\"\ntoken_file = \"ok.db\"\n" + fast, log: filepath.Join(dir, "no", "dir", "m.log"),
			args: []string{"-L"}, fails: true, want: []string{"cannot open the log file named by MODEXP_TOKEN_LOG"}},
		{name: "damaged token file", conf: "[[slot]]\nlabel = \"t\"\ntoken_file = \"damaged.db\"\n" + fast,
			args: []string{"-O", "--login", "--pin", "123456"}, fails: true, want: []string{"token file corrupt"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conf := filepath.Join(dir, "none.toml")
			if c.conf != "" {
				conf = write(strings.ReplaceAll(c.name, " ", "-")+".toml", c.conf)
			}
			env := []string{"MODEXP_TOKEN_CONF=" + conf, "MODEXP_TOKEN_LOG=" + c.log, "HOME=" + dir, "XDG_DATA_HOME=" + filepath.Join(dir, "data")}
			out, err := f.run(t, env, append([]string{"--module", lib}, c.args...)...)
			if c.fails && err == nil {
				t.Fatalf("pkcs11-tool succeeded:\n%s", out)
			}
			got := strings.Join(f.lines(t), "\n")
			if got == "" {
				t.Fatalf("nothing in the system log; pkcs11-tool said:\n%s", out)
			}
			for _, w := range append(c.want, "modexp-pkcs11[", "modexp-token info") {
				if !strings.Contains(got, w) {
					t.Errorf("system log lacks %q:\n%s", w, got)
				}
			}
			if strings.Contains(out, "level=") || strings.Contains(out, "modexp-pkcs11[") {
				t.Errorf("the module printed:\n%s", out)
			}
		})
	}

	// With a log file, the log file takes everything and the system log
	// nothing.
	t.Run("log file", func(t *testing.T) {
		logPath := filepath.Join(dir, "module.log")
		env := []string{"MODEXP_TOKEN_CONF=" + write("typo2.toml", "[[slot]]\ntoken_file = \"t.db\"\nengin = \"soft\"\n"),
			"MODEXP_TOKEN_LOG=" + logPath, "HOME=" + dir}
		if out, err := f.run(t, env, "--module", lib, "-L"); err == nil {
			t.Fatalf("pkcs11-tool succeeded:\n%s", out)
		}
		if got := f.lines(t); len(got) != 0 {
			t.Errorf("system log lines with a log file: %q", got)
		}
		if b, _ := os.ReadFile(logPath); !strings.Contains(string(b), "slot.engin") {
			t.Errorf("log file lacks the reason:\n%s", b)
		}
	})
}
