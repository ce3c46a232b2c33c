//go:build modexp_etcd

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/keystore/etcdtest"
)

// TestBackupRestoreEtcd: a backup of a file token restores into an empty
// etcd prefix; a backup of that etcd token restores into a token file and
// into another prefix; restoring onto a prefix that holds a token is
// refused without --force, and with it the replaced token is saved first;
// an unreachable cluster fails within its timeouts. Every restored token
// answers to the CLI with the backup's PINs and keys.
func TestBackupRestoreEtcd(t *testing.T) {
	var srv etcdtest.Shared
	defer srv.Stop()
	dir := t.TempDir()
	ep := srv.Endpoint(t)
	p1, p2 := srv.Prefix(t), srv.Prefix(t)
	// The etcd slots' timeouts are hang guards (the defaults, 3 s, are
	// not, for a member on a loaded machine).
	const guard = "etcd_dial_timeout = \"1m\"\netcd_request_timeout = \"1m\"\n"
	cli := cliWith(t, fmt.Sprintf("[[slot]]\ntoken_file = \"a.db\"\n%s\n"+
		"[[slot]]\netcd_endpoints = [%q]\netcd_prefix = %q\n"+guard+"%s\n"+
		"[[slot]]\netcd_endpoints = [%q]\netcd_prefix = %q\n"+guard+"%s\n"+
		"[[slot]]\ntoken_file = \"b.db\"\n%s",
		cliSlot, ep, p1, cliSlot, ep, p2, cliSlot, cliSlot))
	has := func(slot string, labels ...string) {
		t.Helper()
		out := cli(0, "keys", "list", "--slot", slot)
		for _, l := range labels {
			if !strings.Contains(out, fmt.Sprintf("label=%q", l)) {
				t.Fatalf("slot %s: no key %q:\n%s", slot, l, out)
			}
		}
	}
	fileBackup := filepath.Join(dir, "file.backup")
	etcdBackup := filepath.Join(dir, "etcd.backup")

	// A file token's backup into an empty prefix.
	cli(0, "init", "--slot", "0", "--label", "from file", "--yes")
	cli(0, "keys", "generate", "--slot", "0", "--type", "ec:P-256", "--label", "k1")
	cli(0, "backup", "--slot", "0", "--out", fileBackup)
	out := cli(0, "restore", "--slot", "1", "--in", fileBackup, "--dry-run")
	if !strings.Contains(out, "into etcd:"+p1+" (empty)") || !strings.Contains(out, "nothing restored") {
		t.Fatalf("dry run: %s", out)
	}
	cli(5, "restore", "--slot", "1", "--in", fileBackup) // not confirmed
	if out := cli(0, "restore", "--slot", "1", "--in", fileBackup, "--yes"); !strings.Contains(out, "restored etcd:"+p1) {
		t.Fatalf("restore into etcd: %s", out)
	}
	has("1", "k1")

	// That etcd token, changed, backed up: into a token file and another prefix.
	cli(0, "keys", "generate", "--slot", "1", "--type", "ec:P-256", "--label", "k2")
	if out := cli(0, "backup", "--slot", "1", "--out", etcdBackup); !strings.Contains(out, "backed up etcd:"+p1) {
		t.Fatalf("backup of etcd: %s", out)
	}
	cli(0, "restore", "--slot", "3", "--in", etcdBackup, "--yes")
	has("3", "k1", "k2")
	cli(0, "restore", "--slot", "2", "--in", etcdBackup, "--yes")
	has("2", "k1", "k2")

	// Onto a prefix that holds a token: --force, and the old one is saved.
	out = cli(1, "restore", "--slot", "1", "--in", fileBackup, "--yes")
	if !strings.Contains(out, `holds the token "from file": restoring would replace it; add --force`) {
		t.Fatalf("restore onto a token without --force: %s", out)
	}
	has("1", "k2") // untouched
	out = cli(0, "restore", "--slot", "1", "--in", fileBackup, "--force", "--yes")
	if !strings.Contains(out, "the replaced token is saved in ") {
		t.Fatalf("restore --force: %s", out)
	}
	if out := cli(0, "keys", "list", "--slot", "1"); strings.Contains(out, `label="k2"`) || !strings.Contains(out, `label="k1"`) {
		t.Fatalf("after restore --force: %s", out)
	}
	kept, _ := filepath.Glob(filepath.Join(dir, "*.replaced-*.backup"))
	if len(kept) != 1 {
		t.Fatalf("saved tokens: %v", kept)
	}
	// The saved token brings k2 back (into the other file slot).
	cli(0, "restore", "--slot", "0", "--in", kept[0], "--yes")
	has("0", "k1", "k2")

	// A bad backup is refused before the cluster is touched.
	if err := os.WriteFile(filepath.Join(dir, "junk"), []byte("not a backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	cli(1, "restore", "--slot", "2", "--in", filepath.Join(dir, "junk"), "--force", "--yes")
	has("2", "k1", "k2")

	// An unreachable cluster: a clear error within the timeouts.
	u := etcdtest.ReserveLoopbackURL(t)
	cli = cliWith(t, fmt.Sprintf("[[slot]]\netcd_endpoints = [%q]\netcd_prefix = \"/down/\"\n"+
		"etcd_dial_timeout = \"300ms\"\netcd_request_timeout = \"300ms\"\n%s", u.String(), cliSlot))
	for _, args := range [][]string{
		{"backup", "--slot", "0", "--out", filepath.Join(dir, "down.backup")},
		{"restore", "--slot", "0", "--in", fileBackup, "--yes"},
	} {
		out := cli(1, args...)
		if !strings.Contains(out, "open etcd:/down/") || !strings.Contains(out, "hint: the etcd cluster did not answer") {
			t.Errorf("%s on an unreachable cluster: %s", args[0], out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "down.backup")); err == nil {
		t.Error("a failed backup left its file")
	}
}
