//go:build modexp_etcd

package token

import (
	"crypto/sha256"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestFleetSignWhileStoreStalls: signing with a cached key never waits
// on the network. The etcd member is stopped (SIGSTOP: connections open,
// no answer, as during a leader election or a long pause) while the
// slot's follower is asking it for the change log (a notified change),
// another session's search is asking too and a third session's key
// generation is writing; they wait for the member (or the request
// timeout, 3 s), and meanwhile every sign call from the cache returns at
// once. Not a benchmark: the bounds (p99 under 50 ms, the slowest of some
// hundred calls under 300 ms: a loaded machine under -race has pauses)
// are two orders above a sign call and an order below the wait.
func TestFleetSignWhileStoreStalls(t *testing.T) {
	e, endpoint := memberProcess(t, "stall")
	const timeout = 3 * time.Second
	m, slotID, _ := etcdHostTimeout(t, endpoint, "/stall/", timeout.String())
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
	stalled := time.Now()
	s.changed() // what the watch does at a change: follow asks the store
	for s.fetching.Load() == 0 {
		if time.Since(stalled) > time.Second {
			t.Fatal("the follower did not ask the store")
		}
		time.Sleep(time.Millisecond)
	}
	var wg sync.WaitGroup
	var genErr error
	var genTook time.Duration
	wg.Go(func() {
		g0 := time.Now()
		_, _, genErr = m.GenerateKeyPair(sh3, &Mechanism{Type: ck.CKM_EC_KEY_PAIR_GEN},
			[]Attribute{aBytes(ck.CKA_EC_PARAMS, curveOf(t, "P-256").OID()), aBool(ck.CKA_TOKEN, true)},
			[]Attribute{aBool(ck.CKA_TOKEN, true), aBool(ck.CKA_SIGN, true)})
		genTook = time.Since(g0)
	})
	var findErr error
	var findTook time.Duration
	wg.Go(func() {
		s.stale.Store(true) // the search asks the store too
		f0 := time.Now()
		findErr = m.FindObjectsInit(sh2, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY)})
		findTook = time.Since(f0)
		if findErr == nil {
			_, findErr = m.FindObjects(sh2, 10)
			must(t, m.FindObjectsFinal(sh2))
		}
	})

	var lat []time.Duration
	digest := sha256.Sum256([]byte("signed while the store stalls"))
	for time.Since(stalled) < timeout*2/3 {
		t0 := time.Now()
		sig, err := signWith(t, m, sh, priv, ck.CKM_ECDSA, digest[:])
		lat = append(lat, time.Since(t0))
		must(t, err)
		must(t, verifyWith(t, m, sh, pub, ck.CKM_ECDSA, digest[:], sig))
		time.Sleep(2 * time.Millisecond)
	}
	slices.Sort(lat)
	worst, p99 := lat[len(lat)-1], lat[len(lat)*99/100]
	t.Logf("%d sign calls while the store stalled: p50 %v, p99 %v, max %v", len(lat), lat[len(lat)/2], p99, worst)
	if len(lat) < 100 || p99 > 50*time.Millisecond || worst > 300*time.Millisecond {
		t.Errorf("%d sign calls in %v with the store stalled, p99 %v, the slowest %v (want < 50 ms, < 300 ms)", len(lat), timeout*2/3, p99, worst)
	}

	e.Cont()
	wg.Wait()
	t.Logf("the search meanwhile: %v after %v; the key generation: %v after %v", findErr, findTook, genErr, genTook)
	if genTook < timeout/2 || (genErr != nil && ck.RV(genErr) != uint64(ck.CKR_DEVICE_ERROR)) {
		t.Errorf("key generation during the stall: %v after %v", genErr, genTook)
	}
	if findErr != nil || findTook > timeout+time.Second || findTook < timeout/2 {
		t.Errorf("search during the stall: %v after %v", findErr, findTook)
	}
	// Back to normal: a write and its search.
	want := 2
	if genErr == nil {
		want = 3
	}
	deadline := time.Now().Add(10 * time.Second)
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
	a, slotA, _ := etcdHostTimeout(t, endpoint, "/info/", "3s")
	b, slotB, _ := etcdHostTimeout(t, endpoint, "/info/", "3s")
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
	deadline := time.Now().Add(2 * time.Second)
	for info(b, slotB).Flags&ck.CKF_USER_PIN_COUNT_LOW == 0 {
		if time.Now().After(deadline) {
			t.Fatal("host b does not see the wrong PIN counted on host a after 2 s")
		}
		time.Sleep(5 * time.Millisecond)
	}

	e.Stop()
	t.Cleanup(e.Cont)
	for _, h := range []struct {
		m    *Module
		slot uint64
	}{{a, slotA}, {b, slotB}} {
		start := time.Now()
		for range 100 {
			if ti := info(h.m, h.slot); ti.Flags&ck.CKF_USER_PIN_COUNT_LOW == 0 || ti.Flags&ck.CKF_TOKEN_INITIALIZED == 0 {
				t.Fatalf("token info with the member stopped: flags %#x", ti.Flags)
			}
		}
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("100 C_GetTokenInfo with the member stopped took %v", d)
		}
	}
	e.Cont()
	must(t, a.Login(shA, ck.CKU_USER, []byte(testUserPIN)))
	// The success resets the count; both hosts see it.
	for _, h := range []struct {
		m    *Module
		slot uint64
	}{{a, slotA}, {b, slotB}} {
		deadline := time.Now().Add(5 * time.Second)
		for info(h.m, h.slot).Flags&ck.CKF_USER_PIN_COUNT_LOW != 0 {
			if time.Now().After(deadline) {
				t.Fatal("the reset count not seen after 5 s")
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
