//go:build !linux

package rawsock

import "net"

func wrapUnix(uc *net.UnixConn) net.Conn { return uc }

func detachUnix(uc *net.UnixConn) (net.Conn, error) { return uc, nil }
