//go:build modexp_etcd

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/internal/etcdtest"
)

// TestStoreCopy: init a file token with the CLI, copy it into etcd, and
// back into a second file; each copy answers to the CLI with the same
// PINs.
func TestStoreCopy(t *testing.T) {
	var srv etcdtest.Shared
	defer srv.Stop()
	dir := t.TempDir()
	conf := filepath.Join(dir, "modexp-token.toml")
	slot := `kdf_time = 1
kdf_memory_kib = 64
kdf_threads = 1
kdf_insecure = true
engine = "soft"
`
	body := fmt.Sprintf("[[slot]]\ntoken_file = \"a.db\"\n%s\n[[slot]]\netcd_endpoints = [%q]\netcd_prefix = %q\n%s\n[[slot]]\ntoken_file = \"b.db\"\n%s",
		slot, srv.Endpoint(t), srv.Prefix(t), slot, slot)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MODEXP_TOKEN_CONF", conf)
	t.Setenv("MODEXP_TOKEN_SO_PIN", "87654321")
	t.Setenv("MODEXP_TOKEN_PIN", "123456")
	ttyPath = os.DevNull + "/no-tty"
	cli := func(want int, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := run(args, &out, &errOut); code != want {
			t.Fatalf("modexp-token %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out.String(), errOut.String())
		}
		return out.String() + errOut.String()
	}
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
