// Package test holds the end-to-end tests of ModExp Token: they build
// libmodexp-pkcs11.so once and drive it with real hosts (a C client that
// dlopens it, pkcs11-tool, openssl), each test on a token file in its own
// t.TempDir() with HOME and XDG_DATA_HOME pointing there too.
package test

import (
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// Paths of the module and what TestMain built.
var (
	repoRoot = e2e.Root() // the module root
	libPath  = e2e.Lib()  // build/libmodexp-pkcs11.so, freshly built
)

func TestMain(m *testing.M) {
	os.Exit(e2e.Main(m))
}

// tokenEnv is a process environment for one test's private token
// (e2e.NewToken) and its directory.
func tokenEnv(t *testing.T) (env []string, dir string) {
	t.Helper()
	k := e2e.NewToken(t, "integration", "")
	return k.Env, k.Dir
}

// runCmd runs name with args in env and returns stdout+stderr (e2e.Run
// with e2e.DefaultTimeout).
func runCmd(t *testing.T, env []string, name string, args ...string) (string, error) {
	t.Helper()
	return e2e.Run(env, e2e.DefaultTimeout, name, args...)
}

// cReport reads the report of a C client in test/cclient: each "FAIL ..."
// line fails the test, "DATA name hex" lines are returned by name, and the
// "SUMMARY ..." line is returned as it is ("" when there is none).
func cReport(t *testing.T, out string) (data map[string][]byte, summary string) {
	t.Helper()
	data = map[string][]byte{}
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "FAIL "):
			t.Error(line)
		case strings.HasPrefix(line, "DATA "):
			f := strings.Fields(line)
			if len(f) != 3 {
				t.Errorf("bad DATA line %q", line)
				continue
			}
			b, err := hex.DecodeString(f[2])
			if err != nil {
				t.Errorf("bad DATA line %q: %v", line, err)
			}
			data[f[1]] = b
		case strings.HasPrefix(line, "SUMMARY "):
			summary = line
		}
	}
	return data, summary
}
