//go:build modexp_etcd

package token

import (
	"crypto/sha256"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestFleetSignWhileStoreStalls: signing with a cached key never waits
// on the network. The etcd member is stopped (SIGSTOP: connections open,
// no answer, as during a leader election or a long pause) while the
// slot's follower is asking it for the change log (a notified change),
// another session's search is asking too and a third session's key
// generation is writing. Their request timeout is longer than any test
// run, so they wait until the member is continued; a hundred sign calls
// from the cache all return while the three are still waiting, which is
// the proof (a condition, not a duration: the latencies are logged).
func TestFleetSignWhileStoreStalls(t *testing.T) {
	e, endpoint := memberProcess(t, "stall")
	m, slotID, _ := etcdHostTimeout(t, endpoint, "/stall/", "1h")
	initToken(t, m, slotID)
	sh := openRW(t, m, slotID)
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	pub, priv := genEC(t, m, sh, "P-256", true)
	sh2 := openRW(t, m, slotID)
	sh3 := openRW(t, m, slotID)
	find(t, m, sh2) // the cache is loaded and the watch live
	s, err := m.slot(slotID)
	must(t, err)

	e.Stop()
	t.Cleanup(e.Cont) // before the kill of StartProcess's cleanup
	s.changed()       // what the watch does at a change: follow asks the store
	for s.fetching.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	var wg sync.WaitGroup
	var genErr, findErr error
	var genDone, findDone, findAsking atomic.Bool
	wg.Go(func() {
		_, _, genErr = m.GenerateKeyPair(sh3, &Mechanism{Type: ck.CKM_EC_KEY_PAIR_GEN},
			[]Attribute{aBytes(ck.CKA_EC_PARAMS, curveOf(t, "P-256").OID()), aBool(ck.CKA_TOKEN, true)},
			[]Attribute{aBool(ck.CKA_TOKEN, true), aBool(ck.CKA_SIGN, true)})
		genDone.Store(true)
	})
	wg.Go(func() {
		s.stale.Store(true) // the search asks the store too
		findAsking.Store(true)
		findErr = m.FindObjectsInit(sh2, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY)})
		findDone.Store(true)
		if findErr == nil {
			_, findErr = m.FindObjects(sh2, 10)
			must(t, m.FindObjectsFinal(sh2))
		}
	})
	for !findAsking.Load() {
		time.Sleep(time.Millisecond)
	}

	var lat []time.Duration
	digest := sha256.Sum256([]byte("signed while the store stalls"))
	for range 100 {
		t0 := time.Now()
		sig, err := signWith(t, m, sh, priv, ck.CKM_ECDSA, digest[:])
		lat = append(lat, time.Since(t0))
		must(t, err)
		must(t, verifyWith(t, m, sh, pub, ck.CKM_ECDSA, digest[:], sig))
		time.Sleep(2 * time.Millisecond)
	}
	if genDone.Load() || findDone.Load() || s.fetching.Load() == 0 {
		t.Errorf("the store's callers ended during the stall (key generation %v, search %v, follower fetching %d): the test proves nothing",
			genDone.Load(), findDone.Load(), s.fetching.Load())
	}
	slices.Sort(lat)
	t.Logf("%d sign calls while the store stalled: p50 %v, p99 %v, max %v", len(lat), lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1])

	e.Cont()
	wg.Wait()
	t.Logf("the search meanwhile: %v; the key generation: %v", findErr, genErr)
	if genErr != nil && ck.RV(genErr) != uint64(ck.CKR_DEVICE_ERROR) {
		t.Errorf("key generation during the stall: %v", genErr)
	}
	if findErr != nil {
		t.Errorf("search during the stall: %v", findErr)
	}
	// Back to normal: a write and its search.
	want := 2
	if genErr == nil {
		want = 3
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, _, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_EC_KEY_PAIR_GEN},
			[]Attribute{aBytes(ck.CKA_EC_PARAMS, curveOf(t, "P-256").OID()), aBool(ck.CKA_TOKEN, true)},
			[]Attribute{aBool(ck.CKA_TOKEN, true), aBool(ck.CKA_SIGN, true)})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("keygen not back after the stall: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitFind(t, m, sh, want, aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY))
}

// TestFleetTokenInfoFromCache: C_GetTokenInfo of a token in etcd answers
// from the slot's cached token record, which the watch keeps fresh: a
// wrong PIN counted by another host shows in the flags within moments,
// and with the member stopped (SIGSTOP) every call answers at once.
func TestFleetTokenInfoFromCache(t *testing.T) {
	e, endpoint := memberProcess(t, "info")
	// A request timeout longer than the test: a C_GetTokenInfo that asked
	// the stopped member would never return.
	a, slotA, _ := etcdHostTimeout(t, endpoint, "/info/", "1h")
	b, slotB, _ := etcdHostTimeout(t, endpoint, "/info/", "1h")
	initToken(t, a, slotA)
	info := func(m *Module, slot uint64) TokenInfo {
		t.Helper()
		ti, err := m.TokenInfo(slot)
		must(t, err)
		return ti
	}
	if ti := info(b, slotB); ti.Flags&ck.CKF_USER_PIN_COUNT_LOW != 0 || ti.Label != "Test Token" {
		t.Fatalf("token info on b: %+v", ti)
	}
	shA := openRW(t, a, slotA)
	wantRV(t, a.Login(shA, ck.CKU_USER, []byte("wrong pin")), ck.CKR_PIN_INCORRECT)
	// The host that counted it sees it at once (it asks the store again).
	if ti := info(a, slotA); ti.Flags&ck.CKF_USER_PIN_COUNT_LOW == 0 {
		t.Fatalf("token info on a after a wrong PIN: flags %#x", ti.Flags)
	}
	// The other host, through its watch.
	deadline := time.Now().Add(2 * time.Minute)
	for info(b, slotB).Flags&ck.CKF_USER_PIN_COUNT_LOW == 0 {
		if time.Now().After(deadline) {
			t.Fatal("host b does not see the wrong PIN counted on host a after 2 minutes")
		}
		time.Sleep(5 * time.Millisecond)
	}

	e.Stop()
	t.Cleanup(e.Cont)
	for _, h := range []struct {
		m    *Module
		slot uint64
	}{{a, slotA}, {b, slotB}} {
		for range 100 {
			if ti := info(h.m, h.slot); ti.Flags&ck.CKF_USER_PIN_COUNT_LOW == 0 || ti.Flags&ck.CKF_TOKEN_INITIALIZED == 0 {
				t.Fatalf("token info with the member stopped: flags %#x", ti.Flags)
			}
		}
	}
	e.Cont()
	must(t, a.Login(shA, ck.CKU_USER, []byte(testUserPIN)))
	// The success resets the count; both hosts see it.
	for _, h := range []struct {
		m    *Module
		slot uint64
	}{{a, slotA}, {b, slotB}} {
		deadline := time.Now().Add(2 * time.Minute)
		for info(h.m, h.slot).Flags&ck.CKF_USER_PIN_COUNT_LOW != 0 {
			if time.Now().After(deadline) {
				t.Fatal("the reset count not seen after 2 minutes")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// TestFleetConcurrentWrites: TestCacheConcurrentWrites on a token in etcd,
// where the follower applies every commit's notification (this host's own
// writes too) while the writers adopt theirs: the cache of the writing
// host and of another host end as the store, one handle per object.
func TestFleetConcurrentWrites(t *testing.T) {
	a, slotA, shA, b, _, shB := twoHosts(t)
	want := concurrentWrites(t, a, slotA, shA, 6)
	checkDataObjects(t, a, shA, want)
	waitFind(t, b, shB, len(want), aULong(ck.CKA_CLASS, ck.CKO_DATA))
	checkDataObjects(t, b, shB, want)
}
