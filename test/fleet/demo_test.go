// Package fleet tests build/libmodexp-pkcs11-fleet.so with tokens in etcd:
// make demo-fleet's script (demo.sh) as a test — a three-member etcd
// cluster on loopback, a key made with the CLI on one host, signed by
// pkcs11-tool on another, the signature verified by openssl — and the
// fault test (fault_test.go): hosts signing while the member is killed.
package fleet

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDemoFleet(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, need := range []string{"build/libmodexp-pkcs11-fleet.so", "build/modexp-token"} {
		if _, err := os.Stat(filepath.Join(root, need)); err != nil {
			t.Skipf("%s missing: make build", need)
		}
	}
	if _, err := exec.LookPath("pkcs11-tool"); err != nil {
		t.Skip("pkcs11-tool missing: make deps")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "test/fleet/demo.sh"))
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Verified OK") {
		t.Fatalf("demo.sh: %v\n%s", err, out)
	}
}
