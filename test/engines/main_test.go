// Package engines holds the integration tests of the token's engines with
// real processes: pkcs11-tool on the built module with chip engines, and the
// modexpd daemon (started on a unix socket in t.TempDir()) as the token's
// device, with injected faults, killed and restarted, several at once.
// Counts at scale (10,000 signatures) run through token.Module in this
// process against the real daemon.
package engines

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// Paths filled by TestMain.
var (
	libPath string // build/libmodexp-pkcs11.so, freshly built
	binDir  string // modexpd and modexp-token, built for these tests
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	libPath = e2e.Lib()
	var err error
	if binDir, err = os.MkdirTemp("", "engines-bin-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(binDir)
	if err := e2e.BuildCommands(binDir, "modexpd", "modexp-token"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return e2e.Main(m)
}

// startDaemon starts the modexpd built for these tests on the unix socket
// sock (e2e.StartDaemon).
func startDaemon(t testing.TB, sock string, args ...string) *e2e.Daemon {
	t.Helper()
	return e2e.StartDaemon(t, filepath.Join(binDir, "modexpd"), sock, args...)
}

// runCmd runs name with args in env (e2e.Run with e2e.DefaultTimeout).
func runCmd(env []string, name string, args ...string) (string, error) {
	return e2e.Run(env, e2e.DefaultTimeout, name, args...)
}
