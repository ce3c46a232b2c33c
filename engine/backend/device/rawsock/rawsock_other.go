//go:build !linux

package rawsock

import (
	"errors"
	"net"
	"time"
)

func wrapUnix(uc *net.UnixConn) net.Conn { return uc }

func detachUnix(uc *net.UnixConn) (net.Conn, error) { return uc, nil }

// Poller is not implemented on this platform: NewPoller fails.
type Poller struct{}

// NewPoller fails on this platform.
func NewPoller() (*Poller, error) { return nil, errors.New("rawsock: no poller on this platform") }

// Add is not implemented on this platform.
func (p *Poller) Add(nc net.Conn, key uint64) error { return errors.ErrUnsupported }

// Remove is not implemented on this platform.
func (p *Poller) Remove(nc net.Conn) {}

// Wake is not implemented on this platform.
func (p *Poller) Wake() {}

// Wait is not implemented on this platform.
func (p *Poller) Wait(keys []uint64, d time.Duration) ([]uint64, error) {
	return keys, errors.ErrUnsupported
}

// Close is not implemented on this platform.
func (p *Poller) Close() error { return nil }

// TryRead is not implemented on this platform.
func TryRead(nc net.Conn, b []byte) (int, error) { return 0, errors.ErrUnsupported }
