package token

import (
	"slices"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestFindByClassIndex: a search by CKA_CLASS (and no CKA_ID) examines the
// objects of that class only and finds what a scan of every object finds,
// through creations, destructions, another module's changes, logout and
// login.
func TestFindByClassIndex(t *testing.T) {
	m, slot, sh := readyToken(t)
	data := func(label string, token, private bool) []Attribute {
		return []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DATA), aBool(ck.CKA_TOKEN, token), aBool(ck.CKA_PRIVATE, private),
			aStr(ck.CKA_LABEL, label), aStr(ck.CKA_VALUE, "v")}
	}
	_, pub := rsaKeyTemplates(fuzzRSAKey)
	pubKey := func(label string, token bool) []Attribute {
		return append(slices.Clone(pub), aBool(ck.CKA_TOKEN, token), aStr(ck.CKA_LABEL, label))
	}
	var dataHandles []uint64
	for _, tmpl := range [][]Attribute{data("d1", true, false), data("d2", true, true), data("d3", false, false),
		data("d4", false, true), data("d5", true, false)} {
		h, err := m.CreateObject(sh, tmpl)
		must(t, err)
		dataHandles = append(dataHandles, h)
	}
	var keyHandles []uint64
	for _, tmpl := range [][]Attribute{pubKey("k1", true), pubKey("k2", false)} {
		h, err := m.CreateObject(sh, tmpl)
		must(t, err)
		keyHandles = append(keyHandles, h)
	}
	// check compares a search by class with a scan: the same handles, and
	// only the class's objects examined.
	check := func(what string, class uint64, want []uint64) {
		t.Helper()
		before := m.CacheStats()
		got := find(t, m, sh, aULong(ck.CKA_CLASS, class))
		examined := m.CacheStats().Examined - before.Examined
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: class %#x found %v, want %v", what, class, got, want)
		}
		if examined > uint64(len(want))+2 { // the index may hold a few stale handles
			t.Fatalf("%s: class %#x examined %d objects for %d", what, class, examined, len(want))
		}
		// A template that also names another attribute narrows it.
		if len(want) > 0 {
			label := attrValue(t, m, sh, want[0], ck.CKA_LABEL)
			if hs := find(t, m, sh, aULong(ck.CKA_CLASS, class), aBytes(ck.CKA_LABEL, label)); !slices.Contains(hs, want[0]) {
				t.Fatalf("%s: class and label %q: %v", what, label, hs)
			}
		}
	}
	check("created", ck.CKO_DATA, dataHandles)
	check("created", ck.CKO_PUBLIC_KEY, keyHandles)
	check("none", ck.CKO_SECRET_KEY, nil)
	// A class value of the wrong length matches nothing (a scan).
	if hs := find(t, m, sh, aBytes(ck.CKA_CLASS, []byte{byte(ck.CKO_DATA)})); len(hs) != 0 {
		t.Fatalf("a 1-byte CKA_CLASS found %v", hs)
	}

	must(t, m.DestroyObject(sh, dataHandles[0]))
	must(t, m.DestroyObject(sh, dataHandles[2]))
	dataHandles = []uint64{dataHandles[1], dataHandles[3], dataHandles[4]}
	check("destroyed", ck.CKO_DATA, dataHandles)

	// Another module (another process's view) adds and destroys token
	// objects; this one's next search sees it.
	other, err := LoadFromEnv()
	must(t, err)
	defer other.Close()
	osh, err := other.OpenSession(slot, ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
	must(t, err)
	must(t, other.Login(osh, ck.CKU_USER, []byte(testUserPIN)))
	_, err = other.CreateObject(osh, data("o1", true, false))
	must(t, err)
	hs := find(t, other, osh, aStr(ck.CKA_LABEL, "d5"))
	if len(hs) != 1 {
		t.Fatalf("other module finds d5 %d times", len(hs))
	}
	must(t, other.DestroyObject(osh, hs[0]))
	got := find(t, m, sh, aULong(ck.CKA_CLASS, ck.CKO_DATA))
	if len(got) != 3 || !slices.Contains(got, dataHandles[0]) || !slices.Contains(got, dataHandles[1]) || slices.Contains(got, dataHandles[2]) {
		t.Fatalf("after the other module's changes: %v (had %v, d5 destroyed, o1 added)", got, dataHandles)
	}
	dataHandles = got

	// Logout: private objects go (d2's handle, the session object d4);
	// the public token object o1 stays.
	must(t, m.Logout(sh))
	var public []uint64
	for _, h := range dataHandles {
		if _, err := m.GetAttributeValue(sh, h, []uint64{ck.CKA_LABEL}); err == nil {
			public = append(public, h)
		}
	}
	if len(public) != 1 {
		t.Fatalf("after logout %d of %v readable, want 1 (o1)", len(public), dataHandles)
	}
	check("logged out", ck.CKO_DATA, public)
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	got = find(t, m, sh, aULong(ck.CKA_CLASS, ck.CKO_DATA))
	if len(got) != 2 || slices.Contains(got, dataHandles[0]) { // d2 again (a new handle), o1
		t.Fatalf("after login: %v", got)
	}
	check("logged in", ck.CKO_DATA, got)
	check("logged in", ck.CKO_PUBLIC_KEY, keyHandles)
}

// BenchmarkFindClassAmongMany: a search by CKA_CLASS for the one key
// among 5,000 data objects (session objects: the cache is the same), as
// libp11 searches the private keys per key load.
func BenchmarkFindClassAmongMany(b *testing.B) {
	writeConfig(b, "engine = \"soft\"\n")
	m, err := LoadFromEnv()
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	slot := m.SlotList(true)[0]
	if err := m.InitToken(slot, []byte(testSOPIN), "bench"); err != nil {
		b.Fatal(err)
	}
	sh, err := m.OpenSession(slot, ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
	if err != nil {
		b.Fatal(err)
	}
	for range 5000 {
		if _, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DATA), aStr(ck.CKA_VALUE, "v")}); err != nil {
			b.Fatal(err)
		}
	}
	_, pub := rsaKeyTemplates(fuzzRSAKey)
	if _, err := m.CreateObject(sh, pub); err != nil {
		b.Fatal(err)
	}
	tmpl := []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY)}
	b.ReportAllocs()
	for b.Loop() {
		if err := m.FindObjectsInit(sh, tmpl); err != nil {
			b.Fatal(err)
		}
		if hs, err := m.FindObjects(sh, 10); err != nil || len(hs) != 1 {
			b.Fatal(hs, err)
		}
		if err := m.FindObjectsFinal(sh); err != nil {
			b.Fatal(err)
		}
	}
}
