//go:build modexp_etcd

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/keystore/etcdtest"
)

// cliSlot are the settings of every slot of the CLI's etcd tests: cheap
// Argon2id, the software engine.
const cliSlot = `kdf_time = 1
kdf_memory_kib = 64
kdf_threads = 1
kdf_insecure = true
engine = "soft"
`

// cliWith points the CLI at the configuration body (written to a file in
// a temporary directory, where relative token files go), with the test
// PINs in the environment, and returns a runner of the CLI that checks its
// exit code and returns its output.
func cliWith(t *testing.T, body string) func(want int, args ...string) string {
	conf := filepath.Join(t.TempDir(), "modexp-token.toml")
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MODEXP_TOKEN_CONF", conf)
	t.Setenv("MODEXP_TOKEN_SO_PIN", "87654321")
	t.Setenv("MODEXP_TOKEN_PIN", "123456")
	ttyPath = os.DevNull + "/no-tty"
	return func(want int, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := run(args, &out, &errOut); code != want {
			t.Fatalf("modexp-token %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out.String(), errOut.String())
		}
		return out.String() + errOut.String()
	}
}

// TestStoreCopy: init a file token with the CLI, copy it into etcd, and
// back into a second file; each copy answers to the CLI with the same
// PINs.
func TestStoreCopy(t *testing.T) {
	var srv etcdtest.Shared
	defer srv.Stop()
	cli := cliWith(t, fmt.Sprintf("[[slot]]\ntoken_file = \"a.db\"\n%s\n[[slot]]\netcd_endpoints = [%q]\netcd_prefix = %q\n%s\n[[slot]]\ntoken_file = \"b.db\"\n%s",
		cliSlot, srv.Endpoint(t), srv.Prefix(t), cliSlot, cliSlot))
	cli(0, "init", "--slot", "0", "--label", "moving", "--yes")
	cli(0, "keys", "generate", "--slot", "0", "--type", "ec:P-256", "--label", "k1")
	if out := cli(0, "store", "copy", "--from", "0", "--to", "1"); !strings.Contains(out, "(2 objects)") {
		t.Fatalf("copy: %s", out)
	}
	if out := cli(0, "keys", "list", "--slot", "1"); !strings.Contains(out, "k1") {
		t.Fatalf("keys list on etcd: %s", out)
	}
	cli(1, "store", "copy", "--from", "0", "--to", "1") // a token is there
	cli(0, "store", "copy", "--from", "1", "--to", "2")
	if out := cli(0, "keys", "list", "--slot", "2"); !strings.Contains(out, "k1") {
		t.Fatalf("keys list on the copy back: %s", out)
	}
}
