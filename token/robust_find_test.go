package token

import (
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// Searches with CKA_ID go through the slot's CKA_ID index; every change
// that adds, replaces, hides or removes an object must show in the next
// search exactly as a scan would show it.
func TestFindByIDFollowsChanges(t *testing.T) {
	m, slot, sh := readyToken(t)
	data := func(id string, token, private bool) []Attribute {
		return []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DATA), aBool(ck.CKA_TOKEN, token), aBool(ck.CKA_PRIVATE, private),
			aStr(ck.CKA_LABEL, id)}
	}
	_, pub := rsaKeyTemplates(fuzzRSAKey)
	key := func(id string, token bool) []Attribute {
		return append(append([]Attribute{}, pub...), aBool(ck.CKA_TOKEN, token), aStr(ck.CKA_ID, id))
	}
	count := func(id string) int { return len(find(t, m, sh, aStr(ck.CKA_ID, id))) }
	scan := func(id string) int {
		n := 0
		for _, h := range find(t, m, sh) {
			res, err := m.GetAttributeValue(sh, h, []uint64{ck.CKA_ID})
			must(t, err)
			if res[0].Err == 0 && string(res[0].Value) == id {
				n++
			}
		}
		return n
	}
	check := func(step string, want map[string]int) {
		t.Helper()
		for id, n := range want {
			if got, scanned := count(id), scan(id); got != n || scanned != n {
				t.Fatalf("%s: CKA_ID %q found %d times through the index, %d by a scan; want %d", step, id, got, scanned, n)
			}
		}
	}
	a1, err := m.CreateObject(sh, key("a", true))
	must(t, err)
	_, err = m.CreateObject(sh, key("a", false))
	must(t, err)
	b1, err := m.CreateObject(sh, key("b", true))
	must(t, err)
	_, err = m.CreateObject(sh, data("no id", true, false))
	must(t, err)
	check("created", map[string]int{"a": 2, "b": 1, "c": 0})

	must(t, m.SetAttributeValue(sh, b1, []Attribute{aStr(ck.CKA_ID, "a")}))
	check("b renamed to a", map[string]int{"a": 3, "b": 0})

	must(t, m.DestroyObject(sh, a1))
	check("one a destroyed", map[string]int{"a": 2})

	priv, _ := rsaKeyTemplates(fuzzRSAKey)
	_, err = m.CreateObject(sh, append(append([]Attribute{}, priv...), aBool(ck.CKA_TOKEN, true), aStr(ck.CKA_ID, "c")))
	must(t, err)
	check("private c", map[string]int{"c": 1})
	must(t, m.Logout(sh))
	check("logged out", map[string]int{"c": 0, "a": 2})
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	check("logged in again", map[string]int{"c": 1})

	// Another process (a second Module on the same file) adds and removes.
	other, err := LoadFromEnv()
	must(t, err)
	defer other.Close()
	osh, err := other.OpenSession(slot, ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
	must(t, err)
	must(t, other.Login(osh, ck.CKU_USER, []byte(testUserPIN)))
	oh, err := other.CreateObject(osh, key("d", true))
	must(t, err)
	check("created by another process", map[string]int{"d": 1})
	must(t, other.DestroyObject(osh, oh))
	check("destroyed by another process", map[string]int{"d": 0})

	// Closing the session that owned the session object removes it.
	sh2 := openRW(t, m, slot)
	_, err = m.CreateObject(sh2, key("e", false))
	must(t, err)
	check("session object", map[string]int{"e": 1})
	must(t, m.CloseSession(sh2))
	check("its session closed", map[string]int{"e": 0})
}
