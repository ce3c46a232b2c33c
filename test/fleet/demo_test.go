// Package fleet tests build/libmodexp-pkcs11-fleet.so with tokens in etcd:
// make demo-fleet's script (demo.sh) as a test — a three-member etcd
// cluster on loopback, a key made with the CLI on one host, signed by
// pkcs11-tool on another, the signature verified by openssl — and the
// fault test (fault_test.go): hosts signing while the member is killed.
package fleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

func TestDemoFleet(t *testing.T) {
	e2e.NeedTool(t, "pkcs11-tool")
	out, err := e2e.Run(append(os.Environ(), "FLEET_CLI="+bin.cli, "FLEET_MEMBER="+bin.member), 3*time.Minute,
		filepath.Join(e2e.Root(), "test/fleet/demo.sh"))
	if err != nil || !strings.Contains(out, "Verified OK") {
		t.Fatalf("demo.sh: %v\n%s", err, out)
	}
}
