//go:build !linux

package device

import (
	"fmt"
	"net"
)

// checkPeer refuses: the listener's credentials cannot be read here.
func (c *Config) checkPeer(net.Conn) error {
	return fmt.Errorf("%w: SO_PEERCRED is Linux only", ErrPeerRefused)
}
