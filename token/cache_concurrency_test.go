package token

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestCacheConcurrentWrites: writers on several sessions (creating,
// changing and destroying token objects, each store request made without
// the slot lock) while other sessions sign and search: the cache ends as
// the store, one handle per object.
func TestCacheConcurrentWrites(t *testing.T) {
	m, slot, sh := readyToken(t)
	labels := concurrentWrites(t, m, slot, sh, 24)
	checkDataObjects(t, m, sh, labels)
}

// concurrentWrites runs the writers, a signer and a searcher on the
// slot (sh: logged in as the user) and returns the labels of the data
// objects that must remain.
func concurrentWrites(t *testing.T, m *Module, slot, sh uint64, rounds int) []string {
	t.Helper()
	pub, priv := genEC(t, m, sh, "P-256", true)
	const writers = 4
	var mu sync.Mutex
	var want []string
	var wg, bg sync.WaitGroup
	done := make(chan struct{})
	for w := range writers {
		ws := openRW(t, m, slot)
		wg.Go(func() {
			for i := range rounds {
				label := fmt.Sprintf("w%d-%d", w, i)
				h, err := m.CreateObject(ws, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DATA), aBool(ck.CKA_TOKEN, true), aStr(ck.CKA_LABEL, label)})
				if err != nil {
					t.Errorf("create %s: %v", label, err)
					return
				}
				switch i % 3 {
				case 0:
					if err := m.DestroyObject(ws, h); err != nil {
						t.Errorf("destroy %s: %v", label, err)
					}
					continue
				case 1:
					label += "-changed"
					if err := m.SetAttributeValue(ws, h, []Attribute{aStr(ck.CKA_LABEL, label)}); err != nil {
						t.Errorf("change %s: %v", label, err)
					}
				}
				mu.Lock()
				want = append(want, label)
				mu.Unlock()
			}
		})
	}
	ss := openRW(t, m, slot)
	bg.Go(func() {
		digest := sha256.Sum256([]byte("signed during the writes"))
		for {
			select {
			case <-done:
				return
			default:
			}
			sig, err := signWith(t, m, ss, priv, ck.CKM_ECDSA, digest[:])
			if err == nil {
				err = verifyWith(t, m, ss, pub, ck.CKM_ECDSA, digest[:], sig)
			}
			if err != nil {
				t.Errorf("sign during the writes: %v", err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
	fs := openRO(t, m, slot)
	bg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := m.FindObjectsInit(fs, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_DATA)}); err != nil {
				t.Errorf("search during the writes: %v", err)
				return
			}
			_, _ = m.FindObjects(fs, 1000)
			_ = m.FindObjectsFinal(fs)
			time.Sleep(time.Millisecond)
		}
	})
	wg.Wait()
	close(done)
	bg.Wait()
	slices.Sort(want)
	return want
}

// checkDataObjects checks that the token objects of class CKO_DATA that
// sh finds are labelled want, one object per label.
func checkDataObjects(t *testing.T, m *Module, sh uint64, want []string) {
	t.Helper()
	var got []string
	for _, h := range find(t, m, sh, aULong(ck.CKA_CLASS, ck.CKO_DATA)) {
		got = append(got, string(attrValue(t, m, sh, h, ck.CKA_LABEL)))
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("data objects found:\n%v\nwant:\n%v", got, want)
	}
}
