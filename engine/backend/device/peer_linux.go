package device

import (
	"fmt"
	"net"
	"syscall"
)

// checkPeer applies check 2 (peer.go) to a connected unix socket.
func (c *Config) checkPeer(nc net.Conn) error {
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		return fmt.Errorf("%w: not a unix connection", ErrPeerRefused)
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := rc.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("%w: SO_PEERCRED: %v", ErrPeerRefused, cerr)
	}
	if !c.peerAllowed(cred.Uid, true) {
		return fmt.Errorf("%w: listener runs as uid %d (pid %d), not the expected %s", ErrPeerRefused, cred.Uid, cred.Pid, c.expectedPeer())
	}
	return nil
}
