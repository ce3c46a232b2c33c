package config

import (
	"net"
	"path/filepath"
	"testing"
)

func TestStateLogFile(t *testing.T) {
	home := t.TempDir()
	state := filepath.Join(t.TempDir(), "state")
	cases := []struct {
		name, xdg, want string
	}{
		{"XDG_STATE_HOME", state, filepath.Join(state, "modexp-token", "module.log")},
		{"unset", "", filepath.Join(home, ".local", "state", "modexp-token", "module.log")},
		{"relative", "rel/state", filepath.Join(home, ".local", "state", "modexp-token", "module.log")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("HOME", home)
			t.Setenv("XDG_STATE_HOME", c.xdg)
			got, err := StateLogFile()
			if err != nil || got != c.want {
				t.Fatalf("StateLogFile() = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestSyslogReachable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log")
	if SyslogReachable(path) {
		t.Fatal("a missing socket is reachable")
	}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	if !SyslogReachable(path) {
		t.Fatal("a listening socket is not reachable")
	}
	conn.Close()
	if SyslogReachable(path) {
		t.Fatal("a closed socket is reachable")
	}
}
