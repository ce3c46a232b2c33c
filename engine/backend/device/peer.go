package device

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Who the client talks to (unix sockets)
//
// The primes of a key go to whatever listens at the socket path, so before
// anything is sent the client checks two things:
//
//  1. The path. Every directory from / down to the socket's (symbolic
//     links resolved) must be owned by root, by this process's effective
//     uid or by the expected peer uid, and must not be writable by group or
//     others unless it has the sticky bit (as /tmp): otherwise another
//     user could rename or replace a directory or the socket. When the
//     socket's own directory is writable by others (sticky), the socket
//     must be owned by root or the expected peer (in a sticky directory
//     only a file's owner may remove or rename it). The path must name a
//     socket.
//  2. The listener. After connecting, SO_PEERCRED gives the uid of the
//     process that created the listening socket (the kernel's record, not
//     the peer's claim). It must be the expected peer uid: by default root
//     or this process's effective uid; with the spec option peeruid=N,
//     exactly N (a daemon running under its own account).
//
// The second check is the authoritative one (the first one has a window
// between the check and the connect); the first refuses a setup where
// another user could take the name at all, and says so before a dial. A
// refused socket fails the dial with an error wrapping ErrPeerRefused
// (and engine.ErrDevice); nothing has been written to it.

// ErrPeerRefused: the socket's path or its listener failed the checks
// above.
var ErrPeerRefused = errors.New("device: socket or listener not trusted")

// peerAllowed reports whether uid may own the path's directories and the
// socket (listener false), or be the listener (true).
func (c *Config) peerAllowed(uid uint32, listener bool) bool {
	if c.PeerUID != nil {
		if uid == uint32(*c.PeerUID) {
			return true
		}
		if listener {
			return false
		}
	}
	return uid == 0 || uid == uint32(os.Geteuid())
}

// checkSocketPath applies check 1 to path.
func (c *Config) checkSocketPath(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return err // a missing socket: the dial's ENOENT, said the same way
	}
	fi, err := os.Lstat(real)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSocket == 0 {
		return fmt.Errorf("%w: %s is not a socket", ErrPeerRefused, real)
	}
	st := fi.Sys().(*syscall.Stat_t)
	sockUID := st.Uid
	dir := filepath.Dir(real)
	for d := dir; ; d = filepath.Dir(d) {
		di, err := os.Stat(d)
		if err != nil {
			return err
		}
		ds := di.Sys().(*syscall.Stat_t)
		if !c.peerAllowed(ds.Uid, false) {
			return fmt.Errorf("%w: directory %s is owned by uid %d", ErrPeerRefused, d, ds.Uid)
		}
		shared := di.Mode().Perm()&0o022 != 0
		if shared && di.Mode()&fs.ModeSticky == 0 {
			return fmt.Errorf("%w: directory %s is writable by group or others (mode %v) and not sticky", ErrPeerRefused, d, di.Mode())
		}
		if shared && d == dir && sockUID != 0 && (c.PeerUID == nil || sockUID != uint32(*c.PeerUID)) {
			return fmt.Errorf("%w: socket %s in the shared directory %s is owned by uid %d", ErrPeerRefused, real, d, sockUID)
		}
		if d == "/" || d == filepath.Dir(d) {
			return nil
		}
	}
}

// expectedPeer describes the expected listener uid for errors.
func (c *Config) expectedPeer() string {
	if c.PeerUID != nil {
		return fmt.Sprintf("uid %d (peeruid)", *c.PeerUID)
	}
	return fmt.Sprintf("uid 0 or %d", os.Geteuid())
}
