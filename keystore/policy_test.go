package keystore

import (
	"errors"
	"testing"
)

// pinRecordOf reads who's PIN record straight from the store.
func pinRecordOf(t *testing.T, path string, who UserType) pinRecord {
	t.Helper()
	rec, err := decodeTokenRecord(rawOf(t, path).get(bucketToken, keyRecord))
	must(t, err)
	return *rec.pin(who)
}

// TestPolicyLivesInTheToken is issue 17's fifth point: two processes with
// different max_pin_tries saw different limits on one token, and a
// configuration could make PIN records cheap. The limit and the Argon2id
// parameters are the token's, set at InitToken; a Store's options can only
// make them stricter.
func TestPolicyLivesInTheToken(t *testing.T) {
	path := tokenPath(t)
	strict := KDFParams{Time: 2, MemoryKiB: 256, Threads: 1}
	init := testOptions()
	init.MaxPINTries = 3
	init.KDF = strict
	s := openStore(t, path, init)
	must(t, s.InitToken(soPIN, "policy"))
	so, err := s.Login(SO, soPIN)
	must(t, err)
	must(t, s.InitUserPIN(so, userPIN))
	so.Wipe()

	// A looser process: more tries, cheaper KDF.
	loose := testOptions()
	loose.MaxPINTries = 100
	s2 := openStore(t, path, loose)
	tr, err := s2.Token()
	must(t, err)
	if tr.MaxPINTries != 3 || tr.KDF != strict || tr.Policy.MaxPINTries != 3 {
		t.Fatalf("looser process sees %+v", tr)
	}
	for range 3 {
		if _, err := s2.Login(User, []byte("wrong")); !errors.Is(err, ErrPINIncorrect) {
			t.Fatalf("wrong PIN: %v", err)
		}
	}
	if _, err := s2.Login(User, userPIN); !errors.Is(err, ErrPINLocked) {
		t.Fatalf("after 3 wrong PINs through a process allowing 100: %v", err)
	}
	so, err = s2.Login(SO, soPIN)
	must(t, err)
	must(t, s2.InitUserPIN(so, userPIN)) // unlocks; written with the token's KDF
	if pr := pinRecordOf(t, path, User); pr.KDF != strict {
		t.Fatalf("PIN record written by the looser process: %+v", pr.KDF)
	}

	// A stricter process: fewer tries, costlier KDF, both apply.
	tight := testOptions()
	tight.MaxPINTries = 2
	tight.KDF = KDFParams{Time: 1, MemoryKiB: 512, Threads: 2}
	s3 := openStore(t, path, tight)
	if tr, _ := s3.Token(); tr.MaxPINTries != 2 {
		t.Fatalf("stricter process: limit %d", tr.MaxPINTries)
	}
	must(t, s3.SetPIN(User, userPIN, []byte("new-user-pin")))
	if pr := pinRecordOf(t, path, User); pr.KDF != (KDFParams{Time: 2, MemoryKiB: 512, Threads: 2}) {
		t.Fatalf("PIN record of the stricter process: %+v", pr.KDF)
	}
	so.Wipe()
}

// TestKDFFloor: below MinKDFParams only with AllowWeakKDF, for the
// options and for a policy alike.
func TestKDFFloor(t *testing.T) {
	weak := Options{KDF: KDFParams{Time: 1, MemoryKiB: 8, Threads: 1}}
	if _, err := openStoreErr(t, tokenPath(t), weak); err == nil {
		t.Fatal("8 KiB Argon2id accepted")
	}
	weak.KDF.MemoryKiB = 19 * 1024
	if _, err := openStoreErr(t, tokenPath(t), weak); err == nil {
		t.Fatal("t=1 accepted")
	}
	if _, err := openStoreErr(t, tokenPath(t), Options{KDF: MinKDFParams}); err != nil {
		t.Fatalf("the floor itself: %v", err)
	}
	s := openStore(t, tokenPath(t), Options{})
	if err := s.InitTokenPolicy(soPIN, "x", Policy{KDF: InsecureTestKDFParams}); err == nil {
		t.Fatal("a weak policy accepted")
	}
}

// TestPolicyAdoptedByOldTokens: a token record without a policy (written
// before policies were stored) gets the first login's options.
func TestPolicyAdoptedByOldTokens(t *testing.T) {
	path := fixtureCopy(t, "v2-token.db", 2)
	opts := testOptions()
	opts.MaxPINTries = 4
	s := openStore(t, path, opts)
	if tr, _ := s.Token(); tr.Policy != (Policy{}) {
		t.Fatalf("fixture has a policy: %+v", tr.Policy)
	}
	key, err := s.Login(User, userPIN)
	must(t, err)
	key.Wipe()
	if tr, _ := s.Token(); tr.Policy.MaxPINTries != 4 || tr.Policy.KDF != InsecureTestKDFParams {
		t.Fatalf("policy after the first login: %+v", tr.Policy)
	}
}
