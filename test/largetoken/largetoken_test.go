// Package largetoken measures a token with many objects (issue 8): opening
// it, finding a key by CKA_ID and listing by class, on ModExp Token and on
// SoftHSMv2 holding the same objects, and checks by counting (not by
// timing) that a search by CKA_ID and another process's change do not cost
// a pass over every object.
//
// Ours is driven in-process through token.Module (the Go API the cgo layer
// calls one-for-one; a C→Go call costs ~80 ns, nothing at these scales);
// its objects are written through the keystore in batches, as copies of one
// RSA public key object made by C_CreateObject, so they are exactly what
// the token stores. SoftHSMv2 (C) is loaded in-process through
// github.com/miekg/pkcs11 and filled with C_CreateObject of the same
// template.
//
//	go test ./test/largetoken                       # counting test, 2,000 objects
//	go test -run Large -v -timeout 60m ./test/largetoken -large
//	go test ... ./test/largetoken -large -large.objects=20000   # another size
//
// The counting test also runs on a token in etcd (etcd_test.go, build tag
// modexp_etcd; make test runs it at 2,000 objects); at 100,000 objects on
// both backends, with the figures logged (about a minute):
//
//	go test -tags modexp_etcd -run SearchesAndChanges -v -timeout 30m ./test/largetoken -large -large.objects=100000
package largetoken

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/binary"
	"flag"
	"fmt"
	"math/big"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	_ "github.com/modexp-token/modexp-token/engine/backend/all" // the engines a slot may name
	"github.com/modexp-token/modexp-token/keystore"
	"github.com/modexp-token/modexp-token/test/internal/e2e"
	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/config"
)

const (
	soPIN   = "so-secret-1"
	userPIN = "user-1234"
)

// objID is the CKA_ID of object i.
func objID(i int) []byte { return binary.BigEndian.AppendUint64([]byte("key-"), uint64(i)) }

// pubTemplate is the RSA public key object i (CKA_ID objID(i)).
type attr struct {
	typ uint64
	val []byte
}

func pubTemplate(pub *rsa.PublicKey, i int) []attr {
	return []attr{
		{ck.CKA_CLASS, ck.ULong(ck.CKO_PUBLIC_KEY)},
		{ck.CKA_KEY_TYPE, ck.ULong(ck.CKK_RSA)},
		{ck.CKA_TOKEN, ck.Bool(true)},
		{ck.CKA_PRIVATE, ck.Bool(false)},
		{ck.CKA_VERIFY, ck.Bool(true)},
		{ck.CKA_ENCRYPT, ck.Bool(true)},
		{ck.CKA_MODULUS, pub.N.Bytes()},
		{ck.CKA_PUBLIC_EXPONENT, big.NewInt(int64(pub.E)).Bytes()},
		{ck.CKA_LABEL, []byte("key " + strconv.Itoa(i))},
		{ck.CKA_ID, objID(i)},
	}
}

func ours(tmpl []attr) []token.Attribute {
	out := make([]token.Attribute, len(tmpl))
	for i, a := range tmpl {
		out[i] = token.Attribute{Type: a.typ, Value: a.val}
	}
	return out
}

// backend is where a test's token lives: the [[slot]] lines naming its
// store, and how many objects one bulk transaction of ourToken may hold
// (etcd refuses a transaction of more than --max-txn-ops operations, 128
// by default; an object is about four).
type backend struct {
	name    string
	store   string
	batch   int
	follows bool // the cache follows the store's notifications (etcd's watch), not the searches
}

// fileBackend is a token file in dir.
func fileBackend(dir string) backend {
	return backend{name: "file", store: fmt.Sprintf("token_file = %q\n", filepath.Join(dir, "token.db")), batch: 2000}
}

// openSlotStore opens the keystore of a configured slot, in a file or in
// etcd, for ourToken's bulk writes.
func openSlotStore(sc config.Slot) (*keystore.Store, error) {
	if sc.Etcd() {
		return keystore.OpenEtcd(keystore.EtcdConfig{Endpoints: sc.EtcdEndpoints, Prefix: sc.EtcdPrefix,
			DialTimeout: sc.EtcdDialTimeout.Duration, RequestTimeout: sc.EtcdRequestTimeout.Duration}, keystore.Options{})
	}
	return keystore.Open(sc.TokenFile, keystore.Options{})
}

// ourToken makes a token of n RSA public keys in dir (a token file) and
// returns its configuration. cheapKDF selects test Argon2id parameters (the
// counting test) instead of the defaults (the measurement).
func ourToken(t testing.TB, dir string, n int, pub *rsa.PublicKey, cheapKDF bool) *config.Config {
	return ourTokenIn(t, dir, fileBackend(dir), n, pub, cheapKDF)
}

// ourTokenIn is ourToken with the token in be.
func ourTokenIn(t testing.TB, dir string, be backend, n int, pub *rsa.PublicKey, cheapKDF bool) *config.Config {
	t.Helper()
	body := "[[slot]]\nlabel = \"large\"\nengine = \"soft\"\n" + be.store
	if cheapKDF {
		body += e2e.CheapKDF
	}
	cfg, err := config.Parse([]byte(body), dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := token.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	slot := m.SlotList(true)[0]
	must(t, m.InitToken(slot, []byte(soPIN), "large"))
	sh, err := m.OpenSession(slot, ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
	must(t, err)
	must(t, m.Login(sh, ck.CKU_SO, []byte(soPIN)))
	must(t, m.InitPIN(sh, []byte(userPIN)))
	must(t, m.Logout(sh))
	must(t, m.Login(sh, ck.CKU_USER, []byte(userPIN)))
	_, err = m.CreateObject(sh, ours(pubTemplate(pub, 0)))
	must(t, err)
	m.Close()

	st, err := openSlotStore(cfg.Slots[0])
	must(t, err)
	defer st.Close()
	objs, _, err := st.Objects(nil)
	if err != nil || len(objs) != 1 {
		t.Fatalf("model object: %d, %v", len(objs), err)
	}
	model := objs[0]
	for done := 1; done < n; {
		var put []keystore.Object
		for ; done < n && len(put) < be.batch; done++ {
			o := keystore.Object{Attrs: map[uint64][]byte{}, Sealed: model.Sealed}
			for t, v := range model.Attrs {
				o.Attrs[t] = v
			}
			o.Attrs[ck.CKA_ID] = objID(done)
			o.Attrs[ck.CKA_LABEL] = []byte("key " + strconv.Itoa(done))
			put = append(put, o)
		}
		if _, err := st.PutObjects(nil, put); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// findAll runs one complete search and returns the handles.
func findAll(t testing.TB, m *token.Module, sh uint64, tmpl ...token.Attribute) []uint64 {
	t.Helper()
	must(t, m.FindObjectsInit(sh, tmpl))
	var all []uint64
	for {
		hs, err := m.FindObjects(sh, 1000)
		must(t, err)
		if len(hs) == 0 {
			break
		}
		all = append(all, hs...)
	}
	must(t, m.FindObjectsFinal(sh))
	return all
}

func byID(i int) token.Attribute { return token.Attribute{Type: ck.CKA_ID, Value: objID(i)} }

func classPub() token.Attribute {
	return token.Attribute{Type: ck.CKA_CLASS, Value: ck.ULong(ck.CKO_PUBLIC_KEY)}
}

var testKey *rsa.PrivateKey

func rsaKey(t testing.TB) *rsa.PrivateKey {
	if testKey == nil {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		must(t, err)
		testKey = k
	}
	return testKey
}

// TestSearchesAndChangesDoNotScan: on a token of 2,000 objects (or
// -large.objects with -large), searches by CKA_ID examine only the matching
// object, and another process's change is applied as a delta that decodes
// only the changed objects — counted through Module.CacheStats, not timed.
// TestEtcdSearchesAndChangesDoNotScan (etcd_test.go) is the same on a
// token in etcd.
func TestSearchesAndChangesDoNotScan(t *testing.T) {
	dir := t.TempDir()
	searchesAndChanges(t, dir, fileBackend(dir))
}

// The flags of the large runs: the comparison with SoftHSMv2 runs only
// with -large, and -large.objects (with -large) sets the size.
var (
	large        = flag.Bool("large", false, "run the large-token comparison (minutes) and honour -large.objects")
	largeObjects = flag.Int("large.objects", 0, "objects of the large runs (0: 2,000 for the counting tests, 100,000 for the comparison)")
)

// objectCount is the number of objects of a test whose default is n:
// -large.objects with -large, else n.
func objectCount(t testing.TB, n int) int {
	if *large && *largeObjects != 0 {
		if *largeObjects < 10 {
			t.Fatalf("-large.objects=%d: at least 10", *largeObjects)
		}
		return *largeObjects
	}
	return n
}

// heapInUse is the live heap after two collections (the second frees what
// finalizers of the first released), and the bytes allocated so far.
func heapInUse() (live, total uint64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.TotalAlloc
}

// searchesAndChanges is TestSearchesAndChangesDoNotScan on a token in be.
// It also logs what the open (Load to the first search by CKA_ID, the
// login's full load included), a search by CKA_ID and a listing by class
// took, and the heap the loaded token holds (live after a collection, and
// allocated by the open): the figures of docs/PERFORMANCE.md's keystore
// bullet at -large.objects=100000.
func searchesAndChanges(t *testing.T, dir string, be backend) {
	n := objectCount(t, 2000)
	key := rsaKey(t)
	start := time.Now()
	cfg := ourTokenIn(t, dir, be, n, &key.PublicKey, true)
	t.Logf("%s: %d objects written in %v", be.name, n, time.Since(start).Round(time.Millisecond))

	live0, total0 := heapInUse()
	t0 := time.Now()
	m, err := token.Load(cfg)
	must(t, err)
	defer m.Close()
	slot := m.SlotList(true)[0]
	sh, err := m.OpenSession(slot, ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
	must(t, err)
	must(t, m.Login(sh, ck.CKU_USER, []byte(userPIN)))
	if hs := findAll(t, m, sh, byID(n/2)); len(hs) != 1 {
		t.Fatalf("CKA_ID %d: found %d", n/2, len(hs))
	}
	open := time.Since(t0)
	live1, total1 := heapInUse()

	s0 := m.CacheStats()
	if s0.FullLoads != 1 || s0.Decoded != uint64(n) || s0.Examined != 1 {
		t.Fatalf("after login and a search: %+v, want one full load of %d objects, one examined", s0, n)
	}
	handles := map[int]uint64{}
	const finds = 50
	t1 := time.Now()
	for k := range finds {
		i := (k * 7919) % n
		hs := findAll(t, m, sh, byID(i))
		if len(hs) != 1 {
			t.Fatalf("CKA_ID %d: found %d", i, len(hs))
		}
		handles[i] = hs[0]
	}
	find := time.Since(t1) / finds
	s1 := m.CacheStats()
	if got := s1.Examined - s0.Examined; got != finds || s1.IndexRebuilds != 0 || s1.Decoded != s0.Decoded {
		t.Fatalf("%d searches by CKA_ID examined %d objects (want %d), index rebuilds %d, decoded %d more",
			finds, got, finds, s1.IndexRebuilds, s1.Decoded-s0.Decoded)
	}
	t1 = time.Now()
	if got := len(findAll(t, m, sh, classPub())); got != n {
		t.Fatalf("listed %d public keys, want %d", got, n)
	}
	t.Logf("%s, %d objects: open %v, find by CKA_ID %v (mean of %d), list by class %v; heap %.1f MB live after the open, %.1f MB allocated by it",
		be.name, n, open.Round(time.Millisecond), find.Round(time.Microsecond), finds, time.Since(t1).Round(time.Microsecond),
		float64(live1-min(live0, live1))/1e6, float64(total1-total0)/1e6)

	h1before := findAll(t, m, sh, byID(1))
	h2before := findAll(t, m, sh, byID(2))

	// Another process (a second Module on the store) changes one object,
	// deletes one and adds one.
	s2 := m.CacheStats()
	other, err := token.Load(cfg)
	must(t, err)
	defer other.Close()
	osh, err := other.OpenSession(slot, ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
	must(t, err)
	must(t, other.Login(osh, ck.CKU_USER, []byte(userPIN)))
	oh := findAll(t, other, osh, byID(1))
	must(t, other.SetAttributeValue(osh, oh[0], []token.Attribute{{Type: ck.CKA_LABEL, Value: []byte("renamed")}}))
	od := findAll(t, other, osh, byID(2))
	must(t, other.DestroyObject(osh, od[0]))
	_, err = other.CreateObject(osh, ours(pubTemplate(&key.PublicKey, n)))
	must(t, err)

	wantDeltas := func(d uint64) bool { return d == 1 }
	if be.follows {
		// The watch brings the change (as one delta or a few) to the
		// cache before any search asks.
		for deadline := time.Now().Add(2 * time.Minute); m.CacheStats().Decoded-s2.Decoded < 2; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the change did not reach the cache in 2 minutes: %+v → %+v", s2, m.CacheStats())
			}
		}
		wantDeltas = func(d uint64) bool { return d >= 1 && d <= 4 }
	}
	h1 := findAll(t, m, sh, byID(1))
	s3 := m.CacheStats()
	if s3.FullLoads != s2.FullLoads || !wantDeltas(s3.Deltas-s2.Deltas) || s3.Decoded-s2.Decoded != 2 || s3.Examined-s2.Examined != 1 {
		t.Fatalf("after another process's change: %+v → %+v; want deltas decoding 2 objects, one examined", s2, s3)
	}
	if len(h1) != 1 || len(h1before) != 1 || h1[0] != h1before[0] {
		t.Fatalf("changed object's handle %v, was %v", h1, h1before)
	}
	for i, h := range handles {
		if i == 2 {
			continue
		}
		if hs := findAll(t, m, sh, byID(i)); len(hs) != 1 || hs[0] != h {
			t.Fatalf("object %d: handle %v, was %d", i, hs, h)
		}
	}
	res, err := m.GetAttributeValue(sh, h1[0], []uint64{ck.CKA_LABEL})
	must(t, err)
	if string(res[0].Value) != "renamed" {
		t.Fatalf("label %q", res[0].Value)
	}
	if _, err := m.GetAttributeValue(sh, h2before[0], []uint64{ck.CKA_LABEL}); ck.RV(err) != uint64(ck.CKR_OBJECT_HANDLE_INVALID) {
		t.Fatalf("deleted object's handle: %v", err)
	}
	if hs := findAll(t, m, sh, byID(2)); len(hs) != 0 {
		t.Fatalf("deleted object found: %v", hs)
	}
	if hs := findAll(t, m, sh, byID(n)); len(hs) != 1 {
		t.Fatalf("added object found %d times", len(hs))
	}
	// Listing by class examines every object, once.
	s4 := m.CacheStats()
	if got := len(findAll(t, m, sh, classPub())); got != n {
		t.Fatalf("listed %d public keys, want %d", got, n)
	}
	if s5 := m.CacheStats(); s5.Examined-s4.Examined != uint64(n) || s5.Decoded != s4.Decoded {
		t.Fatalf("listing: %+v → %+v", s4, s5)
	}
}
