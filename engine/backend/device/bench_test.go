package device_test

import (
	"context"
	"testing"

	"github.com/modexp-token/modexp-token/cmd/modexpd/server"
	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/device"
)

// The protocol's own cost, with the daemon in this process on a unix
// socket: a PING, and a MODEXP on a 64-bit modulus (arithmetic negligible),
// one at a time and from parallel goroutines (pipelined on one
// connection). ns/op and allocs/op cover both ends.
//
//	go test -run '^$' -bench RoundTrip -benchmem ./engine/backend/device/
func BenchmarkRoundTrip(b *testing.B) {
	d := startDaemonB(b)
	e := openClientB(b, d)
	dev := e.(interface {
		Ping(context.Context, []byte) error
	})
	c := newExpCase(1, 64)
	m, err := e.NewModulus(c.n.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	ping := func() error { return dev.Ping(ctx, []byte("ping")) }
	modexp := func() error { _, _, err := e.Exp(ctx, m, c.base.Bytes(), c.exp.Bytes()); return err }
	for _, op := range []struct {
		name string
		f    func() error
	}{{"Ping", ping}, {"ModExp64", modexp}} {
		b.Run(op.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := op.f(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(op.name+"Parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := op.f(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func openClientB(b *testing.B, d *daemon) engine.Engine {
	b.Helper()
	e, err := device.New(context.Background(), d.config())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	return e
}

func startDaemonB(b *testing.B) *daemon {
	b.Helper()
	return startDaemonCfg(b, b.TempDir()+"/run/b.sock", server.Config{})
}
