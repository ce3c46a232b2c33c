//go:build modexp_etcd

package keystore

import (
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/keystore/etcdtest"
)

// TestEtcdTLS: a member that serves only TLS and requires a client
// certificate. With the slot's CA, client certificate and key the token
// works; without the client certificate, or with another CA, opening it
// fails within the configured timeouts (an error, not a hang). Then with
// etcd's authentication on and the certificate's user (its CN) given a
// role on the token's prefix only: the watch, a login and a write work,
// another prefix is refused.
func TestEtcdTLS(t *testing.T) {
	dir := t.TempDir()
	ca, caKey, caFile, _ := etcdtest.Cert(t, dir, "ca", nil, nil, 0)
	_, _, otherCA, _ := etcdtest.Cert(t, dir, "other-ca", nil, nil, 0)
	_, _, serverCert, serverKey := etcdtest.Cert(t, dir, "server", ca, caKey, x509.ExtKeyUsageServerAuth)
	_, _, clientCert, clientKey := etcdtest.Cert(t, dir, "client", ca, caKey, x509.ExtKeyUsageClientAuth)
	e, endpoint, err := etcdtest.StartTLS(t.TempDir(), "tls", serverCert, serverKey, caFile)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()

	base := EtcdConfig{Endpoints: []string{endpoint}, Prefix: "/tls/", DialTimeout: 5 * time.Second, RequestTimeout: 5 * time.Second}
	good := base
	good.CAFile, good.CertFile, good.KeyFile = caFile, clientCert, clientKey
	// The accepted configurations' timeouts are hang guards; the refused
	// ones keep 5 s, which the refusal waits out before its diagnosis.
	good.DialTimeout, good.RequestTimeout = time.Minute, time.Minute
	key := initWith(t, openEtcdStore(t, good, testOptions()))
	key.Wipe()
	// Another host with the same TLS configuration sees the token.
	u, err := openEtcdStore(t, good, testOptions()).Login(User, userPIN)
	if err != nil {
		t.Fatalf("login through TLS: %v", err)
	}
	u.Wipe()

	noCert := base
	noCert.CAFile = caFile
	wrongCA := good
	wrongCA.CAFile = otherCA
	wrongCA.DialTimeout, wrongCA.RequestTimeout = base.DialTimeout, base.RequestTimeout
	// Each refusal is ErrAccessDenied with its cause named (the client
	// itself says only "deadline exceeded").
	for _, c := range []struct {
		name  string
		cfg   EtcdConfig
		cause string
	}{
		{"no client certificate", noCert, "TLS: bad certificate"},
		{"another CA", wrongCA, "TLS: unknown CA"},
	} {
		start := time.Now()
		s, err := OpenEtcd(c.cfg, testOptions())
		if err == nil {
			_ = s.Close()
			t.Errorf("%s: OpenEtcd succeeded", c.name)
			continue
		}
		if !errors.Is(err, ErrAccessDenied) || errors.Is(err, ErrUnavailable) || !strings.HasPrefix(Cause(err), c.cause) {
			t.Errorf("%s: %v (cause %q), want ErrAccessDenied with cause %q", c.name, err, Cause(err), c.cause)
		}
		t.Logf("%s: %v after %v", c.name, err, time.Since(start).Round(time.Millisecond))
	}

	// docs/FLEET.md's advice: each host's certificate (its CN is its etcd
	// user) has a role that reads and writes the token's prefix only. The
	// module needs nothing beyond it; another prefix is refused.
	_, _, rootCert, rootKey := etcdtest.Cert(t, dir, "root", ca, caKey, x509.ExtKeyUsageClientAuth)
	admin := base
	admin.CAFile, admin.CertFile, admin.KeyFile = caFile, rootCert, rootKey
	tlsConf, err := admin.tlsConfig()
	if err != nil {
		t.Fatal(err)
	}
	etcdtest.GrantPrefixes(t, endpoint, tlsConf, "root", map[string]string{"client": "/tls/"})
	h := openEtcdStore(t, good, testOptions())
	h.Follow(func() {})
	waitFor(t, "the watch with the prefix's role", h.Following)
	u, err = h.Login(User, userPIN)
	if err != nil {
		t.Fatalf("login with the prefix's role: %v", err)
	}
	if _, err := h.Put(u, keyPair("roles")[1]); err != nil {
		t.Fatalf("write with the prefix's role: %v", err)
	}
	u.Wipe()
	elsewhere := good
	elsewhere.Prefix = "/other/"
	if s, err := OpenEtcd(elsewhere, testOptions()); err == nil {
		_ = s.Close()
		t.Error("a prefix outside the certificate's role opened")
	} else if !errors.Is(err, ErrAccessDenied) || Cause(err) != "permission denied on the prefix" {
		t.Errorf("outside the role: %v (cause %q), want ErrAccessDenied, permission denied on the prefix", err, Cause(err))
	}
	_ = h.Close() // its watch, before the member stops (a member waits for open streams)
}

// TestEtcdOpenCause: an endpoint where nothing listens and one that
// accepts connections but never answers are ErrUnavailable, each with its
// cause: the silent one within the connect budget, whatever the request
// timeout. The refused one's budget is only a guard against a hang: its
// diagnosis has what the budget leaves after the first request, and a
// short budget, on a loaded machine, may leave too little to see the
// refusal (it is then taken for a timeout).
func TestEtcdOpenCause(t *testing.T) {
	refused := etcdtest.ReserveLoopbackURL(t) // nothing listens there
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() { // accept and hold: a port that never answers
		var held []net.Conn
		for {
			c, err := silent.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	for _, c := range []struct {
		name, endpoint, cause string
		request, budget       time.Duration
	}{
		{"refused", refused.String(), "connection refused", 300 * time.Millisecond, 2 * time.Minute},
		{"silent", "http://" + silent.Addr().String(), "timeout", 5 * time.Second, 400 * time.Millisecond},
	} {
		cfg := EtcdConfig{Endpoints: []string{c.endpoint}, Prefix: "/cause/", DialTimeout: 5 * time.Second,
			RequestTimeout: c.request, ConnectTimeout: c.budget}
		start := time.Now()
		s, err := OpenEtcd(cfg, testOptions())
		if err == nil {
			_ = s.Close()
			t.Fatalf("%s: OpenEtcd succeeded", c.name)
		}
		if !errors.Is(err, ErrUnavailable) || !strings.HasPrefix(Cause(err), c.cause) {
			t.Errorf("%s: %v (cause %q), want ErrUnavailable with cause %q", c.name, err, Cause(err), c.cause)
		}
		t.Logf("%s: %v after %v", c.name, err, time.Since(start).Round(time.Millisecond))
	}
}
