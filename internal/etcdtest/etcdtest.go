//go:build modexp_etcd

// Package etcdtest starts etcd members inside a test binary (etcd's
// embeddable server) on loopback ports, for the tests of the keystore's
// etcd backend and of the module on it. Nothing else imports it.
package etcdtest

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// FreeLoopbackURL returns http://127.0.0.1:port with a port free now.
func FreeLoopbackURL() (*url.URL, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer l.Close()
	return url.Parse("http://" + l.Addr().String())
}

// Start starts a single-member cluster with its data in dir and returns it
// with its client URL. Close it with (*embed.Etcd).Close.
func Start(dir, name string) (*embed.Etcd, string, error) {
	cu, err := FreeLoopbackURL()
	if err != nil {
		return nil, "", err
	}
	pu, err := FreeLoopbackURL()
	if err != nil {
		return nil, "", err
	}
	cfg := embed.NewConfig()
	cfg.Name = name
	cfg.Dir = dir
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{filepath.Join(dir, "etcd.log")}
	cfg.UnsafeNoFsync = true // tests: speed over durability
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = name + "=" + pu.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, "", err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(20 * time.Second):
		e.Close()
		return nil, "", fmt.Errorf("etcd not ready in 20s")
	}
	return e, cu.String(), nil
}

// Shared is one member started by the first test that asks for it and
// shared by a package's tests (each on its own key prefix); the package's
// TestMain calls Stop.
type Shared struct {
	once sync.Once
	e    *embed.Etcd
	dir  string
	url  string
	err  error
	seq  atomic.Uint64
}

// Endpoint returns the shared member's client URL, starting it if needed.
func (s *Shared) Endpoint(t testing.TB) string {
	t.Helper()
	s.once.Do(func() {
		s.dir, s.err = os.MkdirTemp("", "etcdtest-")
		if s.err == nil {
			s.e, s.url, s.err = Start(s.dir, "test")
		}
	})
	if s.err != nil {
		t.Fatalf("embedded etcd: %v", s.err)
	}
	return s.url
}

// Prefix returns a key prefix no other test of the binary uses.
func (s *Shared) Prefix(t testing.TB) string {
	return fmt.Sprintf("/test/%s/%d/", t.Name(), s.seq.Add(1))
}

// Stop stops the member (if started) and removes its data.
func (s *Shared) Stop() {
	if s.e != nil {
		s.e.Close()
	}
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}
