package token

import (
	"maps"
	"slices"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// A second Module on the same token file (another process's view) sees
// this module's changes, and the reverse, through the keystore's change
// log: one delta per noticed generation, only the changed objects decoded,
// handles of unchanged and changed objects kept, deleted ones invalid.
func TestCacheDeltaFromOtherModule(t *testing.T) {
	m, slot, sh := readyToken(t)
	other, err := LoadFromEnv()
	must(t, err)
	defer other.Close()
	osh, err := other.OpenSession(slot, ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
	must(t, err)
	must(t, other.Login(osh, ck.CKU_USER, []byte(testUserPIN)))

	_, pub := rsaKeyTemplates(fuzzRSAKey)
	key := func(label, id string) []Attribute {
		return append(slices.Clone(pub), aBool(ck.CKA_TOKEN, true), aStr(ck.CKA_LABEL, label), aStr(ck.CKA_ID, id))
	}
	handles := map[string]uint64{}
	for _, l := range []string{"keep", "change", "destroy"} {
		h, err := m.CreateObject(sh, key(l, "id-"+l))
		must(t, err)
		handles[l] = h
	}
	// A private data object: its value is sealed in the file.
	secret := []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DATA), aBool(ck.CKA_TOKEN, true), aBool(ck.CKA_PRIVATE, true),
		aStr(ck.CKA_LABEL, "secret"), aStr(ck.CKA_VALUE, "old secret")}
	handles["secret"], err = m.CreateObject(sh, secret)
	must(t, err)
	byID := func(mod *Module, s uint64, id string) []uint64 {
		return find(t, mod, s, aStr(ck.CKA_ID, id))
	}
	// The other module finds them (its cache loads once).
	oh := map[string]uint64{}
	for _, l := range []string{"change", "destroy"} {
		hs := byID(other, osh, "id-"+l)
		if len(hs) != 1 {
			t.Fatalf("other module finds %d objects with id-%s", len(hs), l)
		}
		oh[l] = hs[0]
	}
	if hs := find(t, other, osh, aStr(ck.CKA_LABEL, "secret")); len(hs) == 1 {
		oh["secret"] = hs[0]
	} else {
		t.Fatalf("other module finds %d secrets", len(hs))
	}

	byID(m, sh, "id-keep") // this module's cache catches up with its own writes
	before := m.CacheStats()
	must(t, other.SetAttributeValue(osh, oh["change"], []Attribute{aStr(ck.CKA_LABEL, "changed"), aStr(ck.CKA_ID, "id-new")}))
	must(t, other.SetAttributeValue(osh, oh["secret"], []Attribute{aStr(ck.CKA_VALUE, "new secret")}))
	must(t, other.DestroyObject(osh, oh["destroy"]))
	_, err = other.CreateObject(osh, key("added", "id-added"))
	must(t, err)

	// This module notices on its next search.
	if hs := byID(m, sh, "id-keep"); !slices.Equal(hs, []uint64{handles["keep"]}) {
		t.Fatalf("id-keep: %v, want [%d]", hs, handles["keep"])
	}
	after := m.CacheStats()
	if d := after.Deltas - before.Deltas; d != 1 {
		t.Fatalf("%d deltas applied, want 1", d)
	}
	if after.FullLoads != before.FullLoads || after.IndexRebuilds != before.IndexRebuilds {
		t.Fatalf("full loads %d→%d, index rebuilds %d→%d", before.FullLoads, after.FullLoads, before.IndexRebuilds, after.IndexRebuilds)
	}
	if d := after.Decoded - before.Decoded; d != 3 {
		t.Fatalf("%d objects decoded for 4 changes (2 changed, 1 added, 1 deleted), want 3", d)
	}
	for _, tc := range []struct {
		id   string
		want []uint64
	}{
		{"id-change", nil},
		{"id-new", []uint64{handles["change"]}},
		{"id-destroy", nil},
	} {
		if hs := byID(m, sh, tc.id); !slices.Equal(hs, tc.want) {
			t.Errorf("%s: %v, want %v", tc.id, hs, tc.want)
		}
	}
	if hs := byID(m, sh, "id-added"); len(hs) != 1 || slices.Contains(slices.Collect(maps.Values(handles)), hs[0]) {
		t.Errorf("id-added: %v", hs)
	}
	if got := string(attrValue(t, m, sh, handles["change"], ck.CKA_LABEL)); got != "changed" {
		t.Errorf("changed object's label %q", got)
	}
	if got := string(attrValue(t, m, sh, handles["secret"], ck.CKA_VALUE)); got != "new secret" {
		t.Errorf("private object's value %q (sealed value not unsealed in the delta?)", got)
	}
	_, err = m.GetAttributeValue(sh, handles["destroy"], []uint64{ck.CKA_LABEL})
	wantRV(t, err, ck.CKR_OBJECT_HANDLE_INVALID)
	if s := m.CacheStats(); s.Examined-after.Examined > 8 {
		t.Errorf("searches by CKA_ID examined %d objects", s.Examined-after.Examined)
	}

	// This module's own change reaches the other the same way.
	byID(other, osh, "id-keep") // the other module catches up with its own writes
	ob := other.CacheStats()
	must(t, m.SetAttributeValue(sh, handles["keep"], []Attribute{aStr(ck.CKA_LABEL, "kept")}))
	if got := string(attrValue(t, other, osh, byID(other, osh, "id-keep")[0], ck.CKA_LABEL)); got != "kept" {
		t.Errorf("other module reads label %q", got)
	}
	if oa := other.CacheStats(); oa.Deltas-ob.Deltas != 1 || oa.FullLoads != ob.FullLoads || oa.Decoded-ob.Decoded != 1 {
		t.Errorf("other module: %+v → %+v", ob, oa)
	}
	// And its own write, noticed as a change of the generation, decodes
	// the one object again and keeps its snapshot and handle.
	if hs := byID(m, sh, "id-keep"); !slices.Equal(hs, []uint64{handles["keep"]}) {
		t.Fatalf("id-keep after own change: %v", hs)
	}
}

// Re-initialising the token from another module makes the cache reload
// whole (the change log starts again).
func TestCacheFullReloadAfterInitElsewhere(t *testing.T) {
	m, slot, sh := readyToken(t)
	_, pub := rsaKeyTemplates(fuzzRSAKey)
	h, err := m.CreateObject(sh, append(pub, aBool(ck.CKA_TOKEN, true), aStr(ck.CKA_ID, "x")))
	must(t, err)
	if hs := find(t, m, sh, aStr(ck.CKA_ID, "x")); !slices.Equal(hs, []uint64{h}) {
		t.Fatalf("found %v", hs)
	}
	must(t, m.Logout(sh)) // the login belongs to the old initialisation
	other, err := LoadFromEnv()
	must(t, err)
	defer other.Close()
	must(t, other.InitToken(slot, []byte(testSOPIN), "Again"))
	before := m.CacheStats()
	if hs := find(t, m, sh, aStr(ck.CKA_ID, "x")); len(hs) != 0 {
		t.Fatalf("found %v on the re-initialised token", hs)
	}
	if after := m.CacheStats(); after.FullLoads != before.FullLoads+1 || after.Deltas != before.Deltas {
		t.Fatalf("stats %+v → %+v, want one full load", before, after)
	}
}
