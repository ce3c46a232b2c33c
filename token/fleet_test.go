//go:build modexp_etcd

package token

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/modexp-token/modexp-token/internal/etcdtest"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/config"
)

var etcdServer etcdtest.Shared

// etcdHost loads a module ("a host": its own caches) whose one slot is the
// token under prefix on the shared test etcd member.
func etcdHost(t *testing.T, prefix string) (*Module, uint64) {
	t.Helper()
	dir := t.TempDir()
	body := fmt.Sprintf(`log = %q
log_level = "debug"

[[slot]]
label = "Fleet"
engine = "soft"
max_pin_tries = 3
kdf_time = 1
kdf_memory_kib = 64
kdf_threads = 1
kdf_insecure = true
etcd_endpoints = [%q]
etcd_prefix = %q
`, filepath.Join(dir, "module.log"), etcdServer.Endpoint(t), prefix)
	cfg, err := config.Parse([]byte(body), dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(cfg)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	slots := m.SlotList(true)
	if len(slots) != 1 {
		t.Fatalf("slots = %v", slots)
	}
	return m, slots[0]
}

// TestFleetTwoHosts: two module instances share one token in etcd; a key
// pair made on one signs on the other, and its deletion is seen there.
func TestFleetTwoHosts(t *testing.T) {
	prefix := etcdServer.Prefix(t)
	a, slotA := etcdHost(t, prefix)
	b, slotB := etcdHost(t, prefix)
	initToken(t, a, slotA)

	shA := openRW(t, a, slotA)
	must(t, a.Login(shA, ck.CKU_USER, []byte(testUserPIN)))
	shB := openRW(t, b, slotB)
	must(t, b.Login(shB, ck.CKU_USER, []byte(testUserPIN)))

	pubA, privA := genEC(t, a, shA, "P-256", true)
	id := attr(t, a, shA, privA, ck.CKA_ID)
	if len(id) == 0 {
		// The module leaves CKA_ID empty: give the pair one.
		id = []byte("fleet-key")
		must(t, a.SetAttributeValue(shA, privA, []Attribute{aBytes(ck.CKA_ID, id)}))
		must(t, a.SetAttributeValue(shA, pubA, []Attribute{aBytes(ck.CKA_ID, id)}))
	}
	privs := find(t, b, shB, aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aBytes(ck.CKA_ID, id))
	pubs := find(t, b, shB, aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aBytes(ck.CKA_ID, id))
	if len(privs) != 1 || len(pubs) != 1 {
		t.Fatalf("host b finds %d private, %d public keys", len(privs), len(pubs))
	}
	digest := sha256.Sum256([]byte("signed on host b"))
	sig, err := signWith(t, b, shB, privs[0], ck.CKM_ECDSA, digest[:])
	must(t, err)
	must(t, verifyWith(t, a, shA, pubA, ck.CKM_ECDSA, digest[:], sig))

	must(t, a.DestroyObject(shA, privA))
	if got := find(t, b, shB, aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aBytes(ck.CKA_ID, id)); len(got) != 0 {
		t.Fatalf("host b still finds the deleted key: %v", got)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	etcdServer.Stop()
	os.Exit(code)
}
