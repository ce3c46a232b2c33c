package e2e

import (
	"encoding/asn1"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
)

// DSAParams reads DSA domain parameters (made by openssl) from
// engine/alg/dsa/testdata/name, e.g. "params_2048_256.pem".
func DSAParams(t testing.TB, name string) (p, q, g *big.Int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Root(), "engine", "alg", "dsa", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("%s: no PEM block", name)
	}
	var pqg struct{ P, Q, G *big.Int }
	if _, err := asn1.Unmarshal(blk.Bytes, &pqg); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return pqg.P, pqg.Q, pqg.G
}
