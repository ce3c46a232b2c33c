package wire

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"time"
)

// TCP transports run MXP/1 inside TLS 1.3 with mutual authentication by
// pinned certificates: each side holds a self-signed certificate and key
// (made by [GenerateCredentials]) and a file of the peer certificates it
// accepts. A peer is accepted when its leaf certificate is byte-for-byte one
// of the pinned ones; names, chains and expiry play no part (pins, not a
// PKI: revoking a peer is removing its certificate from the file).

// ErrNotPinned: the peer's certificate is not among the pinned ones.
var ErrNotPinned = errors.New("wire: peer certificate not pinned")

// GenerateCredentials writes a new self-signed ECDSA P-256 certificate to
// certPath (mode 0644) and its key to keyPath (mode 0600). Existing files
// are not overwritten.
func GenerateCredentials(certPath, keyPath, name string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("wire: generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return fmt.Errorf("wire: serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: name, Organization: []string{"ModExp Token"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(20, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		DNSNames:              []string{name},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("wire: create certificate: %w", err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("wire: marshal key: %w", err)
	}
	if err := writeNew(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		return err
	}
	return writeNew(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func writeNew(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("wire: create %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("wire: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("wire: close %s: %w", path, err)
	}
	return nil
}

// LoadPins reads the certificates (PEM, one or more) a side accepts.
func LoadPins(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("wire: read pins: %w", err)
	}
	var pins [][]byte
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return nil, fmt.Errorf("wire: pins %s: %w", path, err)
		}
		pins = append(pins, b.Bytes)
	}
	if len(pins) == 0 {
		return nil, fmt.Errorf("wire: pins %s: no certificate", path)
	}
	return pins, nil
}

func verifyPinned(pins [][]byte) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return fmt.Errorf("%w: no certificate presented", ErrNotPinned)
		}
		leaf := cs.PeerCertificates[0].Raw
		for _, p := range pins {
			if bytes.Equal(p, leaf) {
				return nil
			}
		}
		return fmt.Errorf("%w: %q", ErrNotPinned, cs.PeerCertificates[0].Subject.CommonName)
	}
}

func loadPair(certFile, keyFile, pinFile string) (tls.Certificate, [][]byte, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return cert, nil, fmt.Errorf("wire: load key pair: %w", err)
	}
	pins, err := LoadPins(pinFile)
	return cert, pins, err
}

// ServerTLSConfig is the daemon's TLS configuration: TLS 1.3 only, its own
// certificate, and client certificates required and pinned to those in
// clientsFile. Session tickets are off, so every connection authenticates
// with a certificate.
func ServerTLSConfig(certFile, keyFile, clientsFile string) (*tls.Config, error) {
	cert, pins, err := loadPair(certFile, keyFile, clientsFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:             tls.VersionTLS13,
		Certificates:           []tls.Certificate{cert},
		ClientAuth:             tls.RequireAnyClientCert,
		VerifyConnection:       verifyPinned(pins),
		SessionTicketsDisabled: true,
		NextProtos:             []string{"mxp/1"},
	}, nil
}

// ClientTLSConfig is the client's TLS configuration: TLS 1.3 only, its own
// certificate, and the server's certificate pinned to one in serverFile.
// The standard chain and name checks are replaced by the pin check (which
// runs on every connection, resumed or not).
func ClientTLSConfig(certFile, keyFile, serverFile string) (*tls.Config, error) {
	cert, pins, err := loadPair(certFile, keyFile, serverFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:         tls.VersionTLS13,
		Certificates:       []tls.Certificate{cert},
		InsecureSkipVerify: true, // replaced by the pin check below
		VerifyConnection:   verifyPinned(pins),
		NextProtos:         []string{"mxp/1"},
	}, nil
}
