//go:build modexp_etcd

package etcdtest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Cert writes a certificate and its key to dir/name.pem and
// dir/name-key.pem: a CA's, self-signed, when ca is nil, else one for
// 127.0.0.1 issued by ca for usage. It returns the certificate, its key
// and the two paths.
func Cert(t testing.TB, dir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, usage x509.ExtKeyUsage) (*x509.Certificate, *ecdsa.PrivateKey, string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
	}
	if ca == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign
		ca, caKey = tmpl, key
	} else {
		tmpl.KeyUsage, tmpl.ExtKeyUsage = x509.KeyUsageDigitalSignature, []x509.ExtKeyUsage{usage}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "PRIVATE KEY", kder)
	return cert, key, certFile, keyFile
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// GrantPrefixes turns etcd's authentication on at endpoint, through a
// client with tlsConf (a certificate whose CN etcd takes as the user:
// made root here): each user of grants (a client certificate's CN) gets a
// role that reads and writes its prefix only.
func GrantPrefixes(t testing.TB, endpoint string, tlsConf *tls.Config, rootCN string, grants map[string]string) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: time.Second, TLS: tlsConf, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	noPassword := &clientv3.UserAddOptions{NoPassword: true}
	steps := []func() error{
		func() error { _, err := cli.UserAddWithOptions(ctx, rootCN, "", noPassword); return err },
		func() error { _, err := cli.UserGrantRole(ctx, rootCN, "root"); return err },
	}
	for user, prefix := range grants {
		role := "role-" + user
		steps = append(steps,
			func() error { _, err := cli.RoleAdd(ctx, role); return err },
			func() error {
				_, err := cli.RoleGrantPermission(ctx, role, prefix, clientv3.GetPrefixRangeEnd(prefix), clientv3.PermissionType(clientv3.PermReadWrite))
				return err
			},
			func() error { _, err := cli.UserAddWithOptions(ctx, user, "", noPassword); return err },
			func() error { _, err := cli.UserGrantRole(ctx, user, role); return err },
		)
	}
	steps = append(steps, func() error { _, err := cli.AuthEnable(ctx); return err })
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("etcd auth setup: %v", err)
		}
	}
}
