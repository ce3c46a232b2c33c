package config

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"
)

// SyslogSocket is the system log's socket (journald or a syslog daemon
// reads it). The module sends warnings and errors there when no log file
// is configured.
const SyslogSocket = "/dev/log"

// StateLogName is the file name of the per-user fallback log.
const StateLogName = "module.log"

// StateLogFile is the per-user log that takes the module's warnings and
// errors when no log file is configured and the system log is absent
// (containers, CI runners): $XDG_STATE_HOME/modexp-token/module.log, or
// ~/.local/state/modexp-token/module.log when XDG_STATE_HOME is unset or
// relative (the XDG base directory specification). The module creates the
// file 0600 in a directory 0700.
func StateLogFile() (string, error) {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, appDir, StateLogName), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("config: per-user log file: %w", err)
	}
	return filepath.Join(home, ".local", "state", appDir, StateLogName), nil
}

// SyslogReachable reports whether the system log socket at path accepts a
// datagram connection (it does not when the socket is missing, as in most
// containers, or nobody reads it).
func SyslogReachable(path string) bool {
	c, err := net.DialTimeout("unixgram", path, 50*time.Millisecond)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// FallbackLogTarget names where the module's warnings and errors go when
// no log file is configured: "syslog" when the system log socket (socket,
// normally SyslogSocket) answers, else the per-user file (StateLogFile).
func FallbackLogTarget(socket string) string {
	if SyslogReachable(socket) {
		return "syslog"
	}
	f, err := StateLogFile()
	if err != nil {
		return "nowhere (" + err.Error() + ")"
	}
	return f
}
