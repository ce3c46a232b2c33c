// Package testkeys holds fixed public RSA test keys (1024, 2048 and 4096
// bits) for the tests (engines, guard, token, test/engines). It is a test
// kit: no product package imports it (test/imports_test.go checks).
package testkeys

import (
	"crypto/rsa"
	"crypto/x509"
	"embed"
	"encoding/pem"
	"fmt"
	"math/big"
)

//go:embed *.pem
var files embed.FS

// Key is an RSA key with its CRT values.
type Key struct {
	N, D, P, Q, Dp, Dq, Qinv *big.Int
	E                        int
	// PrivateKey is the same key for crypto/rsa (precomputed).
	PrivateKey *rsa.PrivateKey
}

// Load returns the fixed key of 1024, 2048 or 4096 bits.
func Load(bits int) (*Key, error) {
	b, err := files.ReadFile(fmt.Sprintf("rsa%d.pem", bits))
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("test key %d: no PEM block", bits)
	}
	k, err := x509.ParsePKCS1PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("test key %d: %w", bits, err)
	}
	return &Key{N: k.N, D: k.D, P: k.Primes[0], Q: k.Primes[1], Dp: k.Precomputed.Dp, Dq: k.Precomputed.Dq,
		Qinv: k.Precomputed.Qinv, E: k.E, PrivateKey: k}, nil
}
