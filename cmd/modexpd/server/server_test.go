package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/cmd/modexpd/server"
	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire/wiretest"
	"github.com/modexp-token/modexp-token/engine/enginetest/bigengine"
)

// daemon is a server on a Unix socket of the test's temporary folder.
type daemon struct {
	srv  *server.Server
	path string
}

// startDaemon serves eng until the test ends, and checks Serve then
// returns ErrServerClosed.
func startDaemon(t *testing.T, eng engine.Engine) *daemon {
	t.Helper()
	return startDaemonCfg(t, server.Config{Engine: eng, Cost: &wire.CostModel{}})
}

// startDaemonCfg is startDaemon with a configuration of its own.
func startDaemonCfg(t *testing.T, cfg server.Config) *daemon {
	t.Helper()
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run", "mxp.sock")
	l, err := server.ListenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard for the drain
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; !errors.Is(err, server.ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return &daemon{srv: srv, path: path}
}

// TestModExp: a well-formed request is answered with the engine's result,
// checked against math/big.
func TestModExp(t *testing.T) {
	d := startDaemon(t, bigengine.New(1024))
	c := wiretest.Dial(t, d.path)
	for i, tc := range []struct{ mod, base, exp, want []byte }{
		{[]byte{0x0B}, []byte{2}, []byte{3}, []byte{8}},
		{[]byte{0x0B}, []byte{3}, []byte{5}, []byte{1}},
		{[]byte{0x01, 0x01}, []byte{0x02}, []byte{0x10}, []byte{0x00, 0x01}}, // 2^16 mod 257 = 1
	} {
		id := uint32(i + 1)
		c.Send(wire.NewRequest(wire.OpModExp, id).Add(wire.TagMod, tc.mod).Add(wire.TagBase, tc.base).Add(wire.TagExp, tc.exp))
		f := c.Recv()
		got, _ := f.Get(wire.TagResult)
		if f.ID != id || f.Status != wire.StatusOK || !bytes.Equal(got, tc.want) {
			t.Errorf("case %d: id %d status %v (%q) result %x, want %x", i, f.ID, f.Status, f.Message(), got, tc.want)
		}
	}
	if st := d.srv.Stats(); st.BadFrames != 0 {
		t.Errorf("bad frames counted for good requests: %+v", st)
	}
}

func TestParseFault(t *testing.T) {
	for _, good := range []string{"zero-above:1024", "bitflip:0.5", "bitflip:1", "hang", "drop", "drop:3", "slow:0", "slow:25"} {
		f, err := server.ParseFault(good)
		if err != nil {
			t.Errorf("%s: %v", good, err)
			continue
		}
		if g, _ := server.ParseFault(f.String()); g != f {
			t.Errorf("%s: String %q does not parse back", good, f.String())
		}
	}
	for _, bad := range []string{"", "zero-above", "zero-above:x", "bitflip:0", "bitflip:2", "hang:1", "drop:0", "slow:-1", "melt"} {
		if _, err := server.ParseFault(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func le32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// TestBadRequests sends what a correct client never would; each gets its
// status and the connection keeps working.
func TestBadRequests(t *testing.T) {
	d := startDaemon(t, bigengine.New(1024))
	c := wiretest.Dial(t, d.path)
	mod := []byte{0x0B}
	req := func(op wire.Op, id uint32) *wire.Frame { return wire.NewRequest(op, id) }
	big1025 := bytes.Repeat([]byte{0xFF}, 129)
	cases := []struct {
		name string
		f    *wire.Frame
		st   wire.Status
	}{
		{"unknown op", req(0x0777, 1), wire.StatusUnknownOp},
		{"even modulus", req(wire.OpModExp, 2).Add(wire.TagMod, []byte{10}).Add(wire.TagBase, []byte{2}).Add(wire.TagExp, []byte{3}), wire.StatusInvalidModulus},
		{"modulus one", req(wire.OpModExp, 3).Add(wire.TagMod, []byte{0, 1}).Add(wire.TagBase, []byte{}).Add(wire.TagExp, []byte{3}), wire.StatusInvalidModulus},
		{"modulus above the engine", req(wire.OpModExp, 4).Add(wire.TagMod, big1025).Add(wire.TagBase, []byte{2}).Add(wire.TagExp, []byte{3}), wire.StatusTooLarge},
		{"operand above the protocol", req(wire.OpModExp, 5).Add(wire.TagMod, mod).Add(wire.TagBase, []byte{2}).Add(wire.TagExp, make([]byte, wire.MaxOperand+1)), wire.StatusTooLarge},
		{"missing base", req(wire.OpModExp, 6).Add(wire.TagMod, mod).Add(wire.TagExp, []byte{3}), wire.StatusBadArgument},
		{"base = modulus", req(wire.OpModExp, 7).Add(wire.TagMod, mod).Add(wire.TagBase, mod).Add(wire.TagExp, []byte{3}), wire.StatusBadArgument},
		{"bad mode", req(wire.OpModExp, 8).Add(wire.TagMod, mod).Add(wire.TagBase, []byte{2}).Add(wire.TagExp, []byte{3}).AddU8(wire.TagMode, 0x80), wire.StatusUnsupported},
		{"bad deadline", req(wire.OpModExp, 9).Add(wire.TagMod, mod).Add(wire.TagBase, []byte{2}).Add(wire.TagExp, []byte{3}).Add(wire.TagDeadlineMS, nil), wire.StatusBadArgument},
		{"unknown critical field", req(wire.OpPing, 10).Add(0x8123, []byte{1}), wire.StatusUnsupported},
		{"unknown curve", req(wire.OpECMul, 11).AddString(wire.TagCurve, "P-999").Add(wire.TagScalar, []byte{1}), wire.StatusUnsupportedCurve},
		{"point off the curve", req(wire.OpECMul, 12).AddString(wire.TagCurve, "P-256").Add(wire.TagScalar, []byte{1}).Add(wire.TagPX, []byte{1}).Add(wire.TagPY, []byte{1}), wire.StatusPointNotOnCurve},
		{"half a point", req(wire.OpECMul, 13).AddString(wire.TagCurve, "P-256").Add(wire.TagScalar, []byte{1}).Add(wire.TagPX, []byte{1}), wire.StatusBadArgument},
		{"crt even p", req(wire.OpModExpCRT, 14).Add(wire.TagP, []byte{4}).Add(wire.TagQ, []byte{7}).Add(wire.TagDP, []byte{1}).Add(wire.TagDQ, []byte{1}).Add(wire.TagQInv, []byte{1}).Add(wire.TagBase, []byte{1}), wire.StatusInvalidModulus},
		{"crt base ≥ p·q", req(wire.OpModExpCRT, 15).Add(wire.TagP, []byte{5}).Add(wire.TagQ, []byte{7}).Add(wire.TagDP, []byte{1}).Add(wire.TagDQ, []byte{1}).Add(wire.TagQInv, []byte{3}).Add(wire.TagBase, []byte{35}), wire.StatusBadArgument},
	}
	for _, cs := range cases {
		c.Send(cs.f)
		f := c.Recv()
		if f.ID != cs.f.ID || f.Status != cs.st || f.Kind != wire.KindResponse {
			t.Errorf("%s: got id %d status %v (%q), want %v", cs.name, f.ID, f.Status, f.Message(), cs.st)
		}
	}
	c.Ping(100)

	// Frames the decoder refuses, written byte by byte.
	hdr := func(version, kind byte, op uint16, id uint32, fields ...byte) []byte {
		b := append(le32(uint32(wire.HeaderLen+len(fields))), version, kind, byte(op>>8), byte(op))
		b = append(b, le32(id)...)
		return append(append(b, 0, 0, 0, 0), fields...)
	}
	raw := []struct {
		name string
		b    []byte
		st   wire.Status
		id   uint32
	}{
		{"version 2", hdr(2, 1, 0x11, 20), wire.StatusBadVersion, 20},
		{"id 0", hdr(1, 1, 0x11, 0), wire.StatusBadFrame, 0},
		{"kind 9", hdr(1, 9, 0x11, 21), wire.StatusBadFrame, 21},
		{"truncated field", hdr(1, 1, 0x11, 22, 0, 1, 0, 9, 1), wire.StatusBadFrame, 22},
		{"duplicate field", hdr(1, 1, 0x21, 23, 0, 1, 0, 0, 0, 1, 0, 0), wire.StatusBadFrame, 23},
	}
	for _, r := range raw {
		c.SendBytes(r.b)
		f := c.Recv()
		if f.ID != r.id || f.Status != r.st {
			t.Errorf("%s: got id %d status %v, want id %d %v", r.name, f.ID, f.Status, r.id, r.st)
		}
		if r.st == wire.StatusBadVersion {
			if v, ok, _ := f.Uint(wire.TagProtoMax); !ok || v != uint64(wire.MaxVersion) {
				t.Errorf("BAD_VERSION without PROTO_MAX")
			}
		}
	}
	c.Ping(101)

	// An oversized frame is skipped and answered TOO_LARGE.
	over := hdr(1, 1, uint16(wire.OpModExp), 30, append([]byte{0, 0x36, 0x4F, 0xFF}, make([]byte, 0x4FFF)...)...)
	c.SendBytes(over)
	if f := c.Recv(); f.ID != 30 || f.Status != wire.StatusTooLarge {
		t.Errorf("oversized: id %d status %v", f.ID, f.Status)
	}
	c.Ping(102)

	// A response sent to the daemon is ignored.
	c.Send(wire.NewResponse(wire.NewRequest(wire.OpPing, 40), wire.StatusOK))
	c.Ping(103)

	// A length the stream cannot recover from: BAD_FRAME with id 0, then
	// the connection closes. The daemon lives on.
	c.SendBytes(le32(3))
	if f := c.Recv(); f.ID != 0 || f.Status != wire.StatusBadFrame {
		t.Errorf("bad length: id %d status %v", f.ID, f.Status)
	}
	if _, err := wire.ReadFrame(c.NC, wire.MaxFrame); err != io.EOF {
		t.Errorf("after a fatal frame: %v, want EOF", err)
	}
	wiretest.Dial(t, d.path).Ping(1)
	if snap := d.srv.Stats(); snap.BadFrames < 7 {
		t.Errorf("bad frames counted: %d", snap.BadFrames)
	}
}
