package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Listen opens a listener for an address "unix:/path/to.sock" or
// "tcp:HOST:PORT". See [ListenUnix] for the unix socket's permissions.
func Listen(addr string) (net.Listener, error) {
	network, where, ok := strings.Cut(addr, ":")
	if !ok || where == "" {
		return nil, fmt.Errorf("server: listen %q: want unix:/path or tcp:HOST:PORT", addr)
	}
	switch network {
	case "unix":
		return ListenUnix(where)
	case "tcp":
		l, err := net.Listen("tcp", where)
		if err != nil {
			return nil, fmt.Errorf("server: listen %s: %w", addr, err)
		}
		return l, nil
	}
	return nil, fmt.Errorf("server: listen %q: unknown network %q", addr, network)
}

// ListenUnix listens on a unix socket at path with mode 0600, inside a
// directory of mode 0700 owned by the daemon's uid (created if missing; an
// existing directory open to group or others is refused). A stale socket
// left by a dead daemon is replaced; a live one is an error.
func ListenUnix(path string) (net.Listener, error) {
	path = filepath.Clean(path)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("server: socket directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("server: socket directory: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("server: socket directory %s has mode %v: want 0700", dir, fi.Mode().Perm())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return nil, fmt.Errorf("server: socket directory %s is owned by uid %d, not %d", dir, st.Uid, os.Getuid())
	}
	if _, err := os.Lstat(path); err == nil {
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			c.Close()
			return nil, fmt.Errorf("server: %s: another daemon is listening", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("server: remove stale socket: %w", err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("server: socket: %w", err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("server: listen unix:%s: %w", path, err)
	}
	// The 0700 directory closes the window between bind and chmod.
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("server: chmod socket: %w", err)
	}
	return l, nil
}
