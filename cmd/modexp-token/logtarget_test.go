package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInfoLogTarget: without a log file, info names the system log when
// its socket answers and the per-user file when it does not (never
// "syslog" where there is none).
func TestInfoLogTarget(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "modexp-token.toml")
	if err := os.WriteFile(conf, []byte(testConf), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MODEXP_TOKEN_CONF", conf)
	t.Setenv("MODEXP_TOKEN_LOG", "")
	t.Setenv("HOME", dir)
	state := filepath.Join(dir, "state")
	socket := filepath.Join(dir, "log")
	old := syslogSocket
	syslogSocket = socket
	defer func() { syslogSocket = old }()
	cases := []struct {
		name   string
		listen bool
		xdg    string
		want   string
	}{
		{"no syslog, XDG_STATE_HOME", false, state, "log:      " + filepath.Join(state, "modexp-token", "module.log") + " (warnings and errors"},
		{"no syslog, HOME", false, "", "log:      " + filepath.Join(dir, ".local", "state", "modexp-token", "module.log") + " (warnings and errors"},
		{"syslog", true, state, "log:      syslog (warnings and errors"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", c.xdg)
			if c.listen {
				l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: socket, Net: "unixgram"})
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
			}
			var out, errOut bytes.Buffer
			if code := run([]string{"info", "--mechanisms=false"}, &out, &errOut); code != 0 {
				t.Fatalf("info: exit %d\n%s%s", code, out.String(), errOut.String())
			}
			if !strings.Contains(out.String(), c.want) {
				t.Fatalf("info lacks %q:\n%s", c.want, out.String())
			}
		})
	}
}
