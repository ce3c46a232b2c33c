package device_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/cmd/modexpd/server"
	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/device"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire"
	"github.com/modexp-token/modexp-token/engine/enginetest/bigengine"
)

// TestTCPWithTLS: TLS 1.3 with pinned certificates both ways. The right
// client works; a client with an unpinned certificate, or one that pins
// another server, is refused; plain TCP is not served at all.
func TestTCPWithTLS(t *testing.T) {
	dir := t.TempDir()
	cred := func(name string) (string, string) {
		c, k := filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
		if err := wire.GenerateCredentials(c, k, name); err != nil {
			t.Fatal(err)
		}
		return c, k
	}
	srvCrt, srvKey := cred("server")
	cliCrt, cliKey := cred("client")
	strCrt, strKey := cred("stranger")
	if err := wire.GenerateCredentials(srvCrt, srvKey, "again"); err == nil {
		t.Fatal("credentials overwritten")
	}

	tc, err := wire.ServerTLSConfig(srvCrt, srvKey, cliCrt)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Engine: bigengine.New(0), TLS: tc})
	if err != nil {
		t.Fatal(err)
	}
	l, err := server.Listen("tcp:127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	addr := l.Addr().String()

	spec := "device:tcp:" + addr + ",ca=" + srvCrt + ",cert=" + cliCrt + ",key=" + cliKey + ",timeout=3s"
	e, err := engine.Open(spec)
	if err != nil {
		t.Fatalf("pinned client: %v", err)
	}
	defer e.Close()
	m, _ := e.NewModulus([]byte{0x0B})
	if r, _, err := e.Exp(context.Background(), m, []byte{2}, []byte{10}); err != nil || r[0] != 1 {
		t.Fatalf("Exp over TLS: %v %v", r, err)
	}

	for name, s := range map[string]string{
		"unpinned client":  "tcp:" + addr + ",ca=" + srvCrt + ",cert=" + strCrt + ",key=" + strKey,
		"wrong server pin": "tcp:" + addr + ",ca=" + strCrt + ",cert=" + cliCrt + ",key=" + cliKey,
	} {
		cfg, err := device.ParseSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard: the refusal is at once
		_, err = device.New(ctx, cfg)
		cancel()
		if !isDevice(err) || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v, want refusal", name, err)
		}
	}
	if srv.Stats().PeersRejected == 0 {
		t.Error("refused handshakes not counted")
	}
	// Status over TLS needs the credentials too.
	if _, err := server.FetchStatus(context.Background(), "tcp:"+addr, nil); err == nil {
		t.Error("status over tcp without TLS")
	}
	ctc, _ := wire.ClientTLSConfig(cliCrt, cliKey, srvCrt)
	if snap, err := server.FetchStatus(context.Background(), "tcp:"+addr, ctc); err != nil || snap.Ops["MODEXP"].Requests != 1 {
		t.Errorf("status over TLS: %+v %v", snap, err)
	}

	plain, _ := server.New(server.Config{Engine: bigengine.New(0)})
	pl, err := server.Listen("tcp:127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	if err := plain.Serve(pl); err == nil {
		t.Error("plain TCP served")
	}
}
