package keystore

import (
	"testing"
	"time"
)

func TestLogin(t *testing.T) {
	s := openStore(t, tokenPath(t), testOptions())
	if err := s.InitToken(soPIN, "t"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		who     UserType
		pin     []byte
		wantErr error
	}{
		{"SO right", SO, soPIN, nil},
		{"SO wrong", SO, userPIN, ErrPINIncorrect},
		{"SO empty", SO, nil, ErrPINIncorrect},
		{"user before InitUserPIN", User, userPIN, ErrPINNotSet},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, err := s.Login(tt.who, tt.pin)
			if tt.wantErr != nil {
				wantErr(t, "Login", err, tt.wantErr)
				if key != nil {
					t.Fatal("key returned with an error")
				}
				return
			}
			if err != nil || key == nil || key.UserType() != tt.who {
				t.Fatalf("Login: %v, %v", key, err)
			}
			key.Wipe()
		})
	}
	if _, err := s.Login(UserType(7), soPIN); err == nil {
		t.Fatal("Login of an unknown user type succeeded")
	}
}

func TestPINLockout(t *testing.T) {
	opts := testOptions()
	opts.MaxPINTries = 3
	for _, who := range []UserType{SO, User} {
		t.Run(who.String(), func(t *testing.T) {
			s, _ := initStore(t, opts)
			right := map[UserType][]byte{SO: soPIN, User: userPIN}[who]
			triesLeft := func() int {
				tr, err := s.Token()
				if err != nil {
					t.Fatal(err)
				}
				return map[UserType]int{SO: tr.SOTriesLeft, User: tr.UserTriesLeft}[who]
			}
			steps := []struct {
				pin       []byte
				wantErr   error
				triesLeft int
			}{
				{[]byte("wrong"), ErrPINIncorrect, 2},
				{[]byte("wrong"), ErrPINIncorrect, 1},
				{right, nil, 3}, // a right PIN resets the count
				{[]byte("wrong"), ErrPINIncorrect, 2},
				{[]byte("wrong"), ErrPINIncorrect, 1},
				{[]byte("wrong"), ErrPINIncorrect, 0},
				{right, ErrPINLocked, 0}, // locked even with the right PIN
				{[]byte("wrong"), ErrPINLocked, 0},
			}
			for i, st := range steps {
				key, err := s.Login(who, st.pin)
				if st.wantErr == nil {
					if err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					key.Wipe()
				} else {
					wantErr(t, "Login", err, st.wantErr)
				}
				if got := triesLeft(); got != st.triesLeft {
					t.Fatalf("step %d: %d tries left, want %d", i, got, st.triesLeft)
				}
			}
			// The count is in the file: a fresh Store sees the lockout.
			_, err := openStore(t, s.path, opts).Login(who, right)
			wantErr(t, "Login from a new Store", err, ErrPINLocked)
			err = s.SetPIN(who, right, []byte("new"))
			wantErr(t, "SetPIN while locked", err, ErrPINLocked)
		})
	}
}

func TestInitUserPINClearsLockout(t *testing.T) {
	opts := testOptions()
	opts.MaxPINTries = 2
	s, _ := initStore(t, opts)
	for range 2 {
		_, _ = s.Login(User, []byte("wrong"))
	}
	_, err := s.Login(User, userPIN)
	wantErr(t, "locked user", err, ErrPINLocked)
	so, err := s.Login(SO, soPIN)
	if err != nil {
		t.Fatal(err)
	}
	defer so.Wipe()
	newPIN := []byte("fresh user pin")
	if err := s.InitUserPIN(so, newPIN); err != nil {
		t.Fatal(err)
	}
	tr, _ := s.Token()
	if tr.UserTriesLeft != 2 {
		t.Fatalf("user tries left %d after InitUserPIN", tr.UserTriesLeft)
	}
	k, err := s.Login(User, newPIN)
	if err != nil {
		t.Fatal(err)
	}
	k.Wipe()
	_, err = s.Login(User, userPIN)
	wantErr(t, "old user PIN", err, ErrPINIncorrect)
}

func TestInitUserPINNeedsSOKey(t *testing.T) {
	s, user := initStore(t, testOptions())
	wiped, err := s.Login(SO, soPIN)
	if err != nil {
		t.Fatal(err)
	}
	wiped.Wipe()
	for name, key := range map[string]*Key{"nil": nil, "user key": user, "wiped SO key": wiped} {
		err := s.InitUserPIN(key, []byte("x"))
		wantErr(t, name, err, ErrKeyMismatch)
	}
}

func TestSetPIN(t *testing.T) {
	for _, who := range []UserType{SO, User} {
		t.Run(who.String(), func(t *testing.T) {
			s, key := initStore(t, testOptions())
			id, err := s.Put(key, Object{Attrs: map[uint64][]byte{0x11: []byte("secret")}, Sealed: map[uint64]bool{0x11: true}})
			if err != nil {
				t.Fatal(err)
			}
			old := map[UserType][]byte{SO: soPIN, User: userPIN}[who]
			newPIN := []byte("a brand new PIN")
			wantErr(t, "SetPIN with a wrong old PIN", s.SetPIN(who, []byte("wrong"), newPIN), ErrPINIncorrect)
			if tr, _ := s.Token(); tr.SOTriesLeft+tr.UserTriesLeft != 2*DefaultMaxPINTries-1 {
				t.Fatalf("wrong old PIN not counted: %+v", tr)
			}
			if err := s.SetPIN(who, old, newPIN); err != nil {
				t.Fatal(err)
			}
			_, err = s.Login(who, old)
			wantErr(t, "old PIN", err, ErrPINIncorrect)
			k, err := s.Login(who, newPIN)
			if err != nil {
				t.Fatal(err)
			}
			defer k.Wipe()
			// Same token key: the sealed attribute opens.
			obj, err := s.Get(k, id)
			if err != nil || string(obj.Attrs[0x11]) != "secret" {
				t.Fatalf("Get with the new PIN's key: %+v, %v", obj, err)
			}
		})
	}
}

func TestInitTokenReinitialises(t *testing.T) {
	s, key := initStore(t, testOptions())
	oldID, err := s.Put(key, Object{Attrs: map[uint64][]byte{3: []byte("old"), 0x11: []byte("s"), tID: []byte("id")}, Sealed: map[uint64]bool{0x11: true}})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := s.Token()

	wantErr(t, "InitToken with a wrong SO PIN", s.InitToken(userPIN, "new"), ErrPINIncorrect)
	objs, _, err := s.Objects(key)
	if err != nil || len(objs) != 1 {
		t.Fatalf("objects after refused InitToken: %d, %v", len(objs), err)
	}

	if err := s.InitToken(soPIN, "new label"); err != nil {
		t.Fatal(err)
	}
	after, err := s.Token()
	if err != nil {
		t.Fatal(err)
	}
	if after.Label != "new label" || after.Serial == before.Serial || after.UserPINSet ||
		after.SOTriesLeft != after.MaxPINTries || after.Generation <= before.Generation {
		t.Fatalf("after InitToken: %+v (before %+v)", after, before)
	}
	if objs, _, err := s.Objects(nil); err != nil || len(objs) != 0 {
		t.Fatalf("objects survived InitToken: %d, %v", len(objs), err)
	}
	if found, _, err := findByID(s, nil, []byte("id")); err != nil || len(found) != 0 {
		t.Fatalf("index survived InitToken: %d, %v", len(found), err)
	}
	_, err = s.Login(User, userPIN)
	wantErr(t, "user login after InitToken", err, ErrPINNotSet)
	_, _, err = s.Objects(key)
	wantErr(t, "old key", err, ErrKeyMismatch)
	_, err = s.Put(key, Object{Attrs: map[uint64][]byte{1: {1}}, Sealed: map[uint64]bool{1: true}})
	wantErr(t, "Put with old key", err, ErrKeyMismatch)

	newID, err := s.Put(nil, Object{Attrs: map[uint64][]byte{1: {1}}})
	if err != nil || newID <= oldID {
		t.Fatalf("new object ID %d (old %d): %v — IDs must not be reused", newID, oldID, err)
	}
}

// Every attempt pays one Argon2id derivation: right, wrong, and locked.
func TestEveryAttemptPaysKDF(t *testing.T) {
	opts := testOptions()
	opts.MaxPINTries = 1
	s, _ := initStore(t, opts)
	tests := []struct {
		name    string
		pin     []byte
		wantErr error
	}{
		{"right", userPIN, nil},
		{"wrong", []byte("wrong"), ErrPINIncorrect},
		{"locked, right PIN", userPIN, ErrPINLocked},
		{"locked, wrong PIN", []byte("wrong"), ErrPINLocked},
	}
	for _, tt := range tests {
		before := kdfRuns.Load()
		k, err := s.Login(User, tt.pin)
		if tt.wantErr != nil {
			wantErr(t, tt.name, err, tt.wantErr)
		} else if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		} else {
			k.Wipe()
		}
		// Other tests do not run in parallel with this one.
		if n := kdfRuns.Load() - before; n != 1 {
			t.Errorf("%s: %d derivations, want 1", tt.name, n)
		}
	}
}

// The one test of the default (strong) parameters: they work and are not
// cheap. The figure is logged (about 90 ms on the development machine when
// idle; more under load).
func TestDefaultKDFParams(t *testing.T) {
	if testing.Short() {
		t.Skip("default Argon2id parameters are slow")
	}
	if p := DefaultKDFParams; p.Time < MinKDFParams.Time || p.MemoryKiB < MinKDFParams.MemoryKiB {
		t.Fatalf("default Argon2id parameters %+v are below the floor %+v", p, MinKDFParams)
	}
	s := openStore(t, tokenPath(t), Options{})
	if err := s.InitToken(soPIN, "strong"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	k, err := s.Login(SO, soPIN)
	if err != nil {
		t.Fatal(err)
	}
	k.Wipe()
	d := time.Since(start)
	t.Logf("login with %+v: %v", DefaultKDFParams, d)
	if d < 10*time.Millisecond {
		t.Errorf("a default-parameter login took only %v", d)
	}
	_, err = s.Login(SO, []byte("wrong"))
	wantErr(t, "wrong PIN", err, ErrPINIncorrect)
}
