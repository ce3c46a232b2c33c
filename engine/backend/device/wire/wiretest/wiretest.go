// Package wiretest is a test's own connection to an MXP daemon, for the
// frames a correct client never sends: the tests of the device client
// (engine/backend/device) and of the daemon's server (cmd/modexpd/server)
// share it. Only tests import it.
package wiretest

import (
	"net"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine/backend/device/wire"
)

// Conn is a raw connection to a daemon's Unix socket. Its methods fail
// the test on an error.
type Conn struct {
	t  testing.TB
	NC net.Conn // the connection itself, for reads past a fatal frame
}

// Dial connects to the Unix socket at path, with a 10 s deadline for the
// whole conversation; the connection closes when the test ends.
func Dial(t testing.TB, path string) *Conn {
	t.Helper()
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	return &Conn{t: t, NC: nc}
}

// Send writes f.
func (c *Conn) Send(f *wire.Frame) {
	c.t.Helper()
	if err := wire.WriteFrame(c.NC, f); err != nil {
		c.t.Fatal(err)
	}
}

// SendBytes writes b as it is (a frame the encoder would refuse).
func (c *Conn) SendBytes(b []byte) {
	c.t.Helper()
	if _, err := c.NC.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// Recv reads the next frame.
func (c *Conn) Recv() *wire.Frame {
	c.t.Helper()
	f, err := wire.ReadFrame(c.NC, wire.MaxFrame)
	if err != nil {
		c.t.Fatalf("recv: %v", err)
	}
	return f
}

// Ping checks that the connection still works: a PING with id is echoed.
func (c *Conn) Ping(id uint32) {
	c.t.Helper()
	c.Send(wire.NewRequest(wire.OpPing, id).Add(wire.TagPayload, []byte("alive")))
	f := c.Recv()
	if v, _ := f.Get(wire.TagPayload); f.ID != id || f.Status != wire.StatusOK || string(v) != "alive" {
		c.t.Fatalf("ping after: %+v", f)
	}
}
