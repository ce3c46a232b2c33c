//go:build modexp_testhooks

package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/token/ck"
)

// fakeSyslog listens on a unix datagram socket in a temporary directory and
// points syslogPath at it; lines returns what arrived so far.
func fakeSyslog(t *testing.T) (lines func() []string) {
	t.Helper()
	conn := listenSyslog(t)
	return func() []string { return queued(t, conn) }
}

// queued returns the datagrams waiting in conn, without waiting for more:
// each Write sends its datagram before it returns, so what a call logged
// is queued by the time it returns, and no read deadline (which a paused
// goroutine could pass before reading) decides what is seen.
func queued(t *testing.T, conn *net.UnixConn) []string {
	t.Helper()
	rc, err := conn.SyscallConn()
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

// setSyslogTimeout sets syslogTimeout (under sysLog.mu, as Write reads
// it) until the test ends.
func setSyslogTimeout(t *testing.T, d time.Duration) {
	sysLog.mu.Lock()
	old := syslogTimeout
	syslogTimeout = d
	sysLog.mu.Unlock()
	t.Cleanup(func() {
		sysLog.mu.Lock()
		syslogTimeout = old
		sysLog.mu.Unlock()
	})
}

// listenSyslog listens on a unix datagram socket in a temporary
// directory and points syslogPath at it until the test ends.
func listenSyslog(t *testing.T) *net.UnixConn {
	t.Helper()
	path := filepath.Join(t.TempDir(), "log")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatalf("listening as the system log: %v", err)
	}
	old := syslogPath
	syslogPath = path
	sysLog.reset()
	t.Cleanup(func() { conn.Close(); syslogPath = old; sysLog.reset() })
	// The dial and the write of a line are immediate on a local socket:
	// the 50 ms bound is for a stuck system log, and a pause of the
	// writing goroutine on a loaded machine must not pass it.
	setSyslogTimeout(t, time.Minute)
	return conn
}

// TestSyslogWhenNoLogFile: without MODEXP_TOKEN_LOG, a configuration
// mistake that fails C_Initialize reaches the system log with the reason
// and what to do; nothing is printed.
func TestSyslogWhenNoLogFile(t *testing.T) {
	lines := fakeSyslog(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "modexp-token.toml")
	if err := os.WriteFile(conf, []byte("[[slot]]\nlabel = \"x\"\ntoken_file = \"t.db\"\nengin = \"soft\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MODEXP_TOKEN_CONF", conf)
	t.Setenv("MODEXP_TOKEN_LOG", "")
	if rv := tsInitialize(false, 0, 0, false); rv != uint64(ck.CKR_FUNCTION_FAILED) {
		t.Fatalf("C_Initialize with a misspelt key = %v, want CKR_FUNCTION_FAILED", ck.Error(rv))
	}
	got := lines()
	if len(got) != 1 {
		t.Fatalf("%d syslog lines, want 1: %q", len(got), got)
	}
	for _, want := range []string{"<11>", "modexp-pkcs11[", "C_Initialize failed", "unknown keys: slot.engin", conf, "modexp-token info"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("syslog line lacks %q:\n%s", want, got[0])
		}
	}

	// A bad log path is said in the system log too.
	t.Setenv("MODEXP_TOKEN_LOG", filepath.Join(dir, "no", "such", "dir", "module.log"))
	t.Setenv("MODEXP_TOKEN_CONF", "")
	t.Setenv("HOME", dir)
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	if rv := tsInitialize(false, 0, 0, false); rv == 0 {
		tsFinalize(false)
		t.Fatal("C_Initialize with an unwritable log path succeeded")
	}
	got = lines()
	if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), "cannot open the log file named by MODEXP_TOKEN_LOG") {
		t.Errorf("no syslog line about the log path: %q", got)
	}
}

// TestSyslogWithLogFile: a log file takes everything; the system log gets
// nothing.
func TestSyslogWithLogFile(t *testing.T) {
	lines := fakeSyslog(t)
	dir := t.TempDir()
	t.Setenv("MODEXP_TOKEN_CONF", filepath.Join(dir, "missing.toml"))
	t.Setenv("MODEXP_TOKEN_LOG", filepath.Join(dir, "module.log"))
	if rv := tsInitialize(false, 0, 0, false); rv == 0 {
		tsFinalize(false)
		t.Fatal("C_Initialize with a missing configuration succeeded")
	}
	if got := lines(); len(got) != 0 {
		t.Errorf("syslog lines with a log file: %q", got)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "module.log"))
	if !strings.Contains(string(b), "missing.toml") {
		t.Errorf("log file lacks the reason:\n%s", b)
	}
}

// TestSyslogAbsent: without a system log socket (or when it stops
// answering) the lines go to the per-user file under XDG_STATE_HOME, or
// ~/.local/state without it, created 0600 in a directory 0700; nothing is
// lost and Write never fails.
func TestSyslogAbsent(t *testing.T) {
	home := t.TempDir()
	state := filepath.Join(t.TempDir(), "state")
	cases := []struct {
		name, xdg, want string
	}{
		{"XDG_STATE_HOME", state, filepath.Join(state, "modexp-token", "module.log")},
		{"HOME", "", filepath.Join(home, ".local", "state", "modexp-token", "module.log")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("HOME", home)
			t.Setenv("XDG_STATE_HOME", c.xdg)
			old := syslogPath
			syslogPath = filepath.Join(t.TempDir(), "absent")
			sysLog.reset()
			defer func() { syslogPath = old; sysLog.reset() }()
			const lines = 20
			for i := range lines {
				if n, err := sysLog.Write([]byte("level=ERROR msg=x" + strings.Repeat("y", i) + "\n")); err != nil || n == 0 {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			// The last line repeated within syslogRepeat is written once.
			_, _ = sysLog.Write([]byte("level=ERROR msg=x" + strings.Repeat("y", lines-1) + "\n"))
			b, err := os.ReadFile(c.want)
			if err != nil {
				t.Fatalf("no per-user log: %v", err)
			}
			got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			if len(got) != lines {
				t.Fatalf("%d lines in %s, want %d:\n%s", len(got), c.want, lines, b)
			}
			for i, l := range got {
				for _, want := range []string{"time=", "modexp-pkcs11[", "level=ERROR msg=x" + strings.Repeat("y", i) + " ", "modexp-token info"} {
					if !strings.Contains(l, want) {
						t.Errorf("line %d lacks %q: %s", i, want, l)
					}
				}
			}
			fi, err := os.Stat(c.want)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("log file mode %v, %v; want 0600", fi.Mode(), err)
			}
			di, err := os.Stat(filepath.Dir(c.want))
			if err != nil || di.Mode().Perm() != 0o700 {
				t.Errorf("log directory mode %v, %v; want 0700", di.Mode(), err)
			}
		})
	}
}

// TestSyslogGoneLater: a socket that stops answering after the first
// line sends the next ones to the per-user file.
func TestSyslogGoneLater(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	conn := listenSyslog(t)
	_, _ = sysLog.Write([]byte("level=WARN msg=first\n"))
	buf := make([]byte, 4096)
	n, err := conn.Read(buf)
	if err != nil || !strings.Contains(string(buf[:n]), "msg=first") {
		t.Fatalf("first line not in the system log: %q, %v", buf[:n], err)
	}
	conn.Close()
	_, _ = sysLog.Write([]byte("level=WARN msg=second\n"))
	b, err := os.ReadFile(filepath.Join(state, "modexp-token", "module.log"))
	if err != nil || !strings.Contains(string(b), "msg=second") || strings.Contains(string(b), "msg=first") {
		t.Fatalf("per-user log after the socket went: %q, %v", b, err)
	}
}
