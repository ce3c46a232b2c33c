package keystore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// loginRuns logs who in with pin on s and returns the error and the number
// of token-cost Argon2id derivations it ran (tests here do not run in
// parallel).
func loginRuns(s *Store, who UserType, pin []byte) (error, uint64) {
	before := kdfRuns.Load()
	k, err := s.Login(who, pin)
	runs := kdfRuns.Load() - before
	if err == nil {
		if k.Remembered() != (runs == 0) {
			panic(fmt.Sprintf("Key.Remembered() = %v after %d derivations", k.Remembered(), runs))
		}
		k.Wipe()
	}
	return err, runs
}

// TestPINCacheInProcess: a right PIN is checked with Argon2id once, then
// remembered; a wrong PIN still pays Argon2id and is counted; a locked
// PIN stays locked; a PIN set meanwhile (here or by another Store) and
// Close forget it; a lifetime that has passed forgets it.
func TestPINCacheInProcess(t *testing.T) {
	opts := testOptions()
	opts.PINCache = time.Hour
	opts.MaxPINTries = 3
	s, _ := initStore(t, opts) // the user PIN is now remembered
	steps := []struct {
		name    string
		pin     []byte
		wantErr error
		runs    uint64
	}{
		{"remembered", userPIN, nil, 0},
		{"again", userPIN, nil, 0},
		{"wrong", []byte("wrong-pin"), ErrPINIncorrect, 1},
		{"right after a wrong one (tries reset)", userPIN, nil, 0},
		{"wrong 1", []byte("wrong-pin"), ErrPINIncorrect, 1},
		{"wrong 2", []byte("wrong-pin"), ErrPINIncorrect, 1},
		{"wrong 3", []byte("wrong-pin"), ErrPINIncorrect, 1},
		{"locked, remembered PIN", userPIN, ErrPINLocked, 0},
		{"locked, wrong PIN", []byte("wrong-pin"), ErrPINLocked, 1},
	}
	for _, st := range steps {
		err, runs := loginRuns(s, User, st.pin)
		if st.wantErr != nil {
			wantErr(t, st.name, err, st.wantErr)
		} else if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if runs != st.runs {
			t.Errorf("%s: %d derivations, want %d", st.name, runs, st.runs)
		}
	}

	// The SO unlocks the user with a new PIN: the old one is forgotten.
	so, err := s.Login(SO, soPIN)
	must(t, err)
	must(t, s.InitUserPIN(so, []byte("new-user-pin")))
	so.Wipe()
	if err, runs := loginRuns(s, User, userPIN); runs != 1 {
		t.Errorf("old PIN after InitUserPIN: %v, %d derivations, want 1", err, runs)
	}
	if err, runs := loginRuns(s, User, []byte("new-user-pin")); err != nil || runs != 1 {
		t.Errorf("new PIN, first: %v, %d derivations, want 1", err, runs)
	}
	if err, runs := loginRuns(s, User, []byte("new-user-pin")); err != nil || runs != 0 {
		t.Errorf("new PIN, again: %v, %d derivations, want 0", err, runs)
	}

	// Another Store (another process) changes the PIN: the record moved,
	// the remembered PIN misses.
	other := openStore(t, s.path, testOptions())
	must(t, other.SetPIN(User, []byte("new-user-pin"), []byte("third-pin")))
	if err, runs := loginRuns(s, User, []byte("new-user-pin")); runs != 1 {
		t.Errorf("PIN changed elsewhere: %v, %d derivations, want 1", err, runs)
	}
	if err, runs := loginRuns(s, User, []byte("third-pin")); err != nil || runs != 1 {
		t.Errorf("the new PIN: %v, %d derivations, want 1", err, runs)
	}
	must(t, s.Close())
	if len(s.pins.entries) != 0 {
		t.Errorf("%d remembered PINs after Close", len(s.pins.entries))
	}
}

// TestPINCacheOffAndExpired: PINCache zero remembers nothing, and an
// entry whose lifetime has passed is not used.
func TestPINCacheOffAndExpired(t *testing.T) {
	cases := []struct {
		name  string
		cache time.Duration
	}{
		{"off", 0},
		{"expired", time.Nanosecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := testOptions()
			opts.PINCache = c.cache
			s, _ := initStore(t, opts)
			for i := range 3 {
				if err, runs := loginRuns(s, User, userPIN); err != nil || runs != 1 {
					t.Fatalf("login %d: %v, %d derivations, want 1", i, err, runs)
				}
			}
		})
	}
}

// keyringOrSkip skips where this process may not use the kernel keyring
// (containers with a seccomp filter).
func keyringOrSkip(t *testing.T) {
	t.Helper()
	if !KeyringAvailable() {
		t.Skip("no kernel keyring here (keyctl missing or refused)")
	}
}

// TestPINCacheKeyring: a second Store of the token (a new process of the
// same user) logs in with a PIN the first one checked, without Argon2id
// at the token's cost, through a possessor-only key with a timeout; a
// wrong PIN still pays Argon2id and is counted; setting the PIN revokes
// the key.
func TestPINCacheKeyring(t *testing.T) {
	keyringOrSkip(t)
	opts := testOptions()
	opts.PINCache = time.Minute
	opts.PINCacheKeyring = true
	first, _ := initStore(t, opts)
	rec, err := first.tokenRecordForTest()
	must(t, err)
	desc := keyringDesc(pinContext(first.path, User, rec.Serial, rec.User))
	t.Cleanup(func() { keyringForget(desc) })

	id, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", desc, 0)
	if err != nil {
		t.Fatalf("no keyring entry after a login: %v", err)
	}
	d, err := unix.KeyctlString(unix.KEYCTL_DESCRIBE, id)
	must(t, err)
	// type;uid;gid;perm;description
	if f := strings.Split(d, ";"); len(f) != 5 || f[3] != fmt.Sprintf("%08x", keyPossessorAll) {
		t.Errorf("keyring entry %q: want permissions %08x (possessor only)", d, keyPossessorAll)
	}
	if strings.Contains(d, rec.Serial) || strings.Contains(d, first.path) {
		t.Errorf("keyring description %q names the token", d)
	}

	second := openStore(t, first.path, opts)
	if err, runs := loginRuns(second, User, []byte("wrong-pin")); runs != 1 {
		t.Errorf("wrong PIN in a new Store: %v, %d derivations, want 1", err, runs)
	} else {
		wantErr(t, "wrong PIN", err, ErrPINIncorrect)
	}
	if err, runs := loginRuns(second, User, userPIN); err != nil || runs != 0 {
		t.Errorf("remembered PIN in a new Store: %v, %d derivations, want 0", err, runs)
	}
	third := openStore(t, first.path, opts)
	if err, runs := loginRuns(third, User, userPIN); err != nil || runs != 0 {
		t.Errorf("remembered PIN in a third Store: %v, %d derivations, want 0", err, runs)
	}

	// Without the keyring option a new Store pays Argon2id.
	plain := openStore(t, first.path, testOptions())
	if err, runs := loginRuns(plain, User, userPIN); err != nil || runs != 1 {
		t.Errorf("no cache: %v, %d derivations, want 1", err, runs)
	}

	// A PIN change revokes the entry.
	must(t, second.SetPIN(User, userPIN, []byte("changed-pin")))
	if _, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", desc, 0); err == nil {
		t.Error("keyring entry of the old PIN record still found after SetPIN")
	}
	fourth := openStore(t, first.path, opts)
	if err, runs := loginRuns(fourth, User, userPIN); runs != 1 {
		t.Errorf("old PIN after SetPIN: %v, %d derivations, want 1", err, runs)
	}
	rec, err = first.tokenRecordForTest()
	must(t, err)
	t.Cleanup(func() { keyringForget(keyringDesc(pinContext(first.path, User, rec.Serial, rec.User))) })
}

// TestKeyringPayload: the payload opens with the PIN and context it was
// sealed for, and with nothing else.
func TestKeyringPayload(t *testing.T) {
	kek := []byte("0123456789abcdef0123456789abcdef")
	ctx := []byte("context")
	p := sealKeyringPayload(ctx, userPIN, kek)
	cases := []struct {
		name    string
		payload []byte
		ctx     []byte
		pin     []byte
		ok      bool
	}{
		{"right", p, ctx, userPIN, true},
		{"wrong PIN", p, ctx, []byte("other"), false},
		{"other context", p, []byte("context2"), userPIN, false},
		{"truncated", p[:20], ctx, userPIN, false},
		{"flipped", append(append([]byte(nil), p[:len(p)-1]...), p[len(p)-1]^1), ctx, userPIN, false},
	}
	for _, c := range cases {
		got := openKeyringPayload(c.payload, c.ctx, c.pin)
		if (got != nil) != c.ok || (c.ok && string(got) != string(kek)) {
			t.Errorf("%s: opened %x, want ok=%v", c.name, got, c.ok)
		}
	}
}

// tokenRecordForTest reads the token record.
func (s *Store) tokenRecordForTest() (*tokenRecord, error) {
	var rec *tokenRecord
	err := s.view(func(tx kvTx) error {
		var err error
		rec, err = loadToken(tx)
		return err
	})
	return rec, err
}
