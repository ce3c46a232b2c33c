package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/modexp-token/modexp-token/engine/backend/device/wire"
)

// FetchStatus asks the daemon at addr ("unix:/path" or "tcp:HOST:PORT",
// the latter with tc) for its STATUS.
func FetchStatus(ctx context.Context, addr string, tc *tls.Config) (*Snapshot, error) {
	network, where, _ := strings.Cut(addr, ":")
	d := &net.Dialer{Timeout: 2 * time.Second}
	var nc net.Conn
	var err error
	switch network {
	case "unix":
		nc, err = d.DialContext(ctx, "unix", where)
	case "tcp":
		if tc == nil {
			return nil, fmt.Errorf("server: status %s: tcp needs TLS credentials", addr)
		}
		nc, err = (&tls.Dialer{NetDialer: d, Config: tc}).DialContext(ctx, "tcp", where)
	default:
		return nil, fmt.Errorf("server: status %q: want unix:/path or tcp:HOST:PORT", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("server: status: dial %s: %w", addr, err)
	}
	defer nc.Close()
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	} else {
		nc.SetDeadline(time.Now().Add(5 * time.Second))
	}
	if err := wire.WriteFrame(nc, wire.NewRequest(wire.OpStatus, 1)); err != nil {
		return nil, fmt.Errorf("server: status: %w", err)
	}
	f, err := wire.ReadFrame(nc, wire.MaxFrame)
	if err != nil {
		return nil, fmt.Errorf("server: status: %w", err)
	}
	if f.Status != wire.StatusOK {
		return nil, fmt.Errorf("server: status: %v: %s", f.Status, f.Message())
	}
	js, _ := f.Get(wire.TagStats)
	var snap Snapshot
	if err := json.Unmarshal(js, &snap); err != nil {
		return nil, fmt.Errorf("server: status: %w", err)
	}
	return &snap, nil
}
