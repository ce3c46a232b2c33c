//go:build modexp_etcd

package token

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/keystore/etcdtest"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/config"
)

var etcdServer etcdtest.Shared

// etcdHost loads a module ("a host": its own caches) whose one slot is the
// token under prefix on the shared test etcd member.
func etcdHost(t *testing.T, prefix string) (*Module, uint64) {
	t.Helper()
	return etcdHostOn(t, etcdServer.Endpoint(t), prefix)
}

// etcdHostOn is etcdHost on the member at endpoint. Its timeouts (10 s)
// leave room for a loaded machine (500 ms did not, at load 15, under
// -race): the tests that use it expect the requests to succeed.
func etcdHostOn(t *testing.T, endpoint, prefix string) (*Module, uint64) {
	t.Helper()
	m, slot, _ := etcdHostTimeout(t, endpoint, prefix, "10s")
	return m, slot
}

// etcdHostLog is etcdHostTimeout with short timeouts (500 ms), for the
// tests of a cluster that never answers; it also returns the module log's
// path.
func etcdHostLog(t *testing.T, endpoint, prefix string) (*Module, uint64, string) {
	t.Helper()
	return etcdHostTimeout(t, endpoint, prefix, "500ms")
}

// etcdHostTimeout is etcdHostLog with the given dial and request timeouts.
func etcdHostTimeout(t *testing.T, endpoint, prefix, timeout string) (*Module, uint64, string) {
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
etcd_dial_timeout = %[4]q
etcd_request_timeout = %[4]q
`, filepath.Join(dir, "module.log"), endpoint, prefix, timeout)
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
	return m, slots[0], filepath.Join(dir, "module.log")
}

// TestFleetTwoHosts: two module instances share one token in etcd; a key
// pair made on one signs on the other, and its deletion is seen there.
func TestFleetTwoHosts(t *testing.T) {
	a, _, shA, b, _, shB := twoHosts(t)

	pubA, privA := genEC(t, a, shA, "P-256", true)
	id := attrValue(t, a, shA, privA, ck.CKA_ID)
	if len(id) == 0 {
		// The module leaves CKA_ID empty: give the pair one.
		id = []byte("fleet-key")
		must(t, a.SetAttributeValue(shA, privA, []Attribute{aBytes(ck.CKA_ID, id)}))
		must(t, a.SetAttributeValue(shA, pubA, []Attribute{aBytes(ck.CKA_ID, id)}))
	}
	privs := waitFind(t, b, shB, 1, aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aBytes(ck.CKA_ID, id))
	pubs := waitFind(t, b, shB, 1, aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aBytes(ck.CKA_ID, id))
	if len(privs) != 1 || len(pubs) != 1 {
		t.Fatalf("host b finds %d private, %d public keys", len(privs), len(pubs))
	}
	digest := sha256.Sum256([]byte("signed on host b"))
	sig, err := signWith(t, b, shB, privs[0], ck.CKM_ECDSA, digest[:])
	must(t, err)
	must(t, verifyWith(t, a, shA, pubA, ck.CKM_ECDSA, digest[:], sig))

	must(t, a.DestroyObject(shA, privA))
	waitFind(t, b, shB, 0, aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aBytes(ck.CKA_ID, id))
}

// twoHosts is two hosts (etcdHost) on a new token, each with a R/W
// session logged in as the user.
func twoHosts(t *testing.T) (a *Module, slotA, shA uint64, b *Module, slotB, shB uint64) {
	t.Helper()
	prefix := etcdServer.Prefix(t)
	a, slotA = etcdHost(t, prefix)
	b, slotB = etcdHost(t, prefix)
	initToken(t, a, slotA)
	shA = openRW(t, a, slotA)
	must(t, a.Login(shA, ck.CKU_USER, []byte(testUserPIN)))
	shB = openRW(t, b, slotB)
	must(t, b.Login(shB, ck.CKU_USER, []byte(testUserPIN)))
	return a, slotA, shA, b, slotB, shB
}

// memberProcess starts a one-member cluster in a child process (to stop
// or kill) and returns it with its client URL.
func memberProcess(t *testing.T, name string) (*etcdtest.Process, string) {
	t.Helper()
	cu, pu := etcdtest.ReserveLoopbackURL(t), etcdtest.ReserveLoopbackURL(t)
	return etcdtest.StartProcess(t, t.TempDir(), name, cu, pu), cu.String()
}

// waitFind searches until it finds n objects (a change reaches another
// host through etcd's watch: milliseconds, not at once), failing only
// after 30 s, a bound against a hang that no loaded machine reaches.
func waitFind(t *testing.T, m *Module, sh uint64, n int, tmpl ...Attribute) []uint64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := find(t, m, sh, tmpl...)
		if len(got) == n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("found %d objects, want %d, after 30 s", len(got), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFleetPropagation: objects made on one host reach the other's cache
// through the watch, without a call on that host asking the store (a
// search with the watch live and nothing notified answers from the cache:
// the loop below sees an object only once the notification was applied).
func TestFleetPropagation(t *testing.T) {
	ep := etcdServer.Endpoint(t)
	propagation(t, ep, ep, etcdServer.Prefix(t), "one member")
}

// TestFleetPropagationThreeMembers is TestFleetPropagation on a cluster
// of three members (child processes), each host on a member of its own:
// a change goes through the leader's replication to the other host's
// member and its watch.
func TestFleetPropagationThreeMembers(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-member cluster")
	}
	c := etcdtest.StartCluster(t, 3)
	propagation(t, c.Members[0].Client.String(), c.Members[1].Client.String(), "/propagation/", "three members, hosts on two")
}

// propagation measures how long an object made by a host on endpoint epA
// takes to be found by a host on epB.
func propagation(t *testing.T, epA, epB, prefix, what string) {
	a, slotA := etcdHostOn(t, epA, prefix)
	b, slotB := etcdHostOn(t, epB, prefix)
	initToken(t, a, slotA)
	shA := openRW(t, a, slotA)
	shB := openRO(t, b, slotB)
	find(t, b, shB) // loads b's cache; the watch is established with it
	var lat []time.Duration
	for i := range 20 {
		label := fmt.Sprintf("obj-%d", i)
		start := time.Now()
		_, err := a.CreateObject(shA, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DATA), aBool(ck.CKA_TOKEN, true), aStr(ck.CKA_LABEL, label)})
		must(t, err)
		waitFind(t, b, shB, 1, aStr(ck.CKA_LABEL, label))
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	t.Logf("create on a → seen on b: p50 %v, p99 %v (n=%d, loopback, %s)", lat[len(lat)/2], lat[len(lat)*99/100], len(lat), what)
}

// TestFleetClusterDown: with the cluster stopped, signing goes on from the
// cache and searches answer from it, writes and logins fail with
// CKR_DEVICE_ERROR after the request timeout; all recovers when the
// cluster is back. The timeouts are etcdHostOn's 10 s: the writes before
// the kill must succeed on a loaded machine (500 ms is what failed
// TestFleetTwoHosts' writes there), so the two failures cost 10 s each.
// The member's ports stay reserved while it is down: it restarts on them.
func TestFleetClusterDown(t *testing.T) {
	dir := t.TempDir()
	cu, pu := etcdtest.ReserveLoopbackURL(t), etcdtest.ReserveLoopbackURL(t)
	e := etcdtest.StartProcess(t, dir, "down", cu, pu)
	m, slot, _ := etcdHostTimeout(t, cu.String(), "/down/", "10s")
	initToken(t, m, slot)
	sh := openRW(t, m, slot)
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	pub, priv := genEC(t, m, sh, "P-256", true)
	digest := sha256.Sum256([]byte("while the cluster is down"))

	// Signatures and searches work from the cache with the cluster down
	// (that they never wait on the network is TestFleetSignWhileStoreStalls').
	e.Kill()
	start := time.Now()
	for range 20 {
		sig, err := signWith(t, m, sh, priv, ck.CKM_ECDSA, digest[:])
		must(t, err)
		must(t, verifyWith(t, m, sh, pub, ck.CKM_ECDSA, digest[:], sig))
	}
	for range 10 {
		if got := find(t, m, sh, aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY)); len(got) != 1 {
			t.Fatalf("search with the cluster down: %v", got)
		}
	}
	t.Logf("20 signatures and 10 searches with the cluster down: %v", time.Since(start))
	gen := func() error {
		_, _, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_EC_KEY_PAIR_GEN},
			[]Attribute{aBytes(ck.CKA_EC_PARAMS, curveOf(t, "P-256").OID()), aBool(ck.CKA_TOKEN, true)},
			[]Attribute{aBool(ck.CKA_TOKEN, true), aBool(ck.CKA_SIGN, true)})
		return err
	}
	start = time.Now()
	wantRV(t, gen(), ck.CKR_DEVICE_ERROR)
	t.Logf("keygen failed in %v", time.Since(start))
	// A login must be counted: it fails too, and works again when the
	// cluster is back.
	must(t, m.Logout(sh))
	start = time.Now()
	wantRV(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)), ck.CKR_DEVICE_ERROR)
	t.Logf("login failed in %v", time.Since(start))

	etcdtest.StartProcess(t, dir, "down", cu, pu)
	start = time.Now()
	for err := m.Login(sh, ck.CKU_USER, []byte(testUserPIN)); err != nil; err = m.Login(sh, ck.CKU_USER, []byte(testUserPIN)) {
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("login back %v after the cluster", time.Since(start))
	for err := gen(); err != nil; err = gen() {
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("writes back %v after the cluster", time.Since(start))
	waitFind(t, m, sh, 2, aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY))
}

// TestFleetUnreachableAtLoad: a cluster that does not answer when the
// module loads leaves the slot up; its calls fail in bounded time with
// CKR_DEVICE_ERROR and a log line naming the cause, and the store is
// tried again in the background (TestFleetSlotBySlot).
func TestFleetUnreachableAtLoad(t *testing.T) {
	u := etcdtest.ReserveLoopbackURL(t) // nothing listens there
	start := time.Now()
	m, slot, logPath := etcdHostLog(t, u.String(), "/nowhere/")
	_, err := m.TokenInfo(slot)
	wantRV(t, err, ck.CKR_DEVICE_ERROR)
	t.Logf("load and C_GetTokenInfo: %v", time.Since(start))
	logs, err := os.ReadFile(logPath)
	if err != nil || !strings.Contains(string(logs), `msg="token store unusable"`) ||
		!strings.Contains(string(logs), `cause="connection refused"`) {
		t.Fatalf("no log line: %v\n%s", err, logs)
	}
}

func TestMain(m *testing.M) {
	etcdtest.MaybeServe()
	code := m.Run()
	etcdServer.Stop()
	os.Exit(code)
}
