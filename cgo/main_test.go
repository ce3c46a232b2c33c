//go:build modexp_testhooks

package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// useTempConfig points the module at a fresh token file in t.TempDir(), with
// cheap PIN hashing, and keeps HOME and XDG_DATA_HOME away from the real
// ones.
func useTempConfig(t testing.TB) string {
	t.Helper()
	return useTempConfigWith(t, "")
}

// standardPolicy is the slot key that restores the standard's permissive
// key-management policy (docs/THREATS.md): for the tests of the wrap
// mechanisms, which check each wrap against Go under a wrapping key of a
// known value and read unwrapped values back (what the safe policy
// refuses: the trojan wrapping key and the re-import attacks).
const standardPolicy = "key_policy = \"standard\"\n"

// useTempConfigWith is useTempConfig with extra keys of the slot.
func useTempConfigWith(t testing.TB, extra string) string {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "modexp-token.toml")
	body := fmt.Sprintf(`[[slot]]
label = "cgo test"
token_file = %q
engine = "soft"
kdf_time = 1
kdf_memory_kib = 64
kdf_threads = 1
kdf_insecure = true
%s`, filepath.Join(dir, "token.db"), extra)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MODEXP_TOKEN_CONF", conf)
	t.Setenv("MODEXP_TOKEN_LOG", filepath.Join(dir, "module.log"))
	t.Setenv("HOME", filepath.Join(dir, "home"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	return dir
}

// initModule initialises the module on a temporary token and finalizes it
// at the end of the test.
func initModule(t testing.TB) {
	t.Helper()
	initModuleWith(t, "")
}

// initModuleWith is initModule with extra keys of the slot.
func initModuleWith(t testing.TB, extra string) {
	t.Helper()
	useTempConfigWith(t, extra)
	if rv := tsInitialize(true, 0, ck.CKF_OS_LOCKING_OK, false); rv != 0 {
		t.Fatalf("C_Initialize = %v", ck.Error(rv))
	}
	t.Cleanup(func() {
		if rv := tsFinalize(false); rv != 0 && rv != uint64(ck.CKR_CRYPTOKI_NOT_INITIALIZED) {
			t.Errorf("C_Finalize = %v", ck.Error(rv))
		}
	})
}

// pureC are the entry points answered in C without the module.
var pureC = map[string]bool{"C_GetFunctionList": true, "C_GetInterfaceList": true, "C_GetInterface": true}

func TestNotInitialized(t *testing.T) {
	names := tsEntryNames()
	rvs := tsCallAll(false)
	for i, name := range names {
		if pureC[name] || name == "C_Initialize" {
			continue
		}
		if rvs[i] != uint64(ck.CKR_CRYPTOKI_NOT_INITIALIZED) {
			t.Errorf("%s before C_Initialize = %v, want CKR_CRYPTOKI_NOT_INITIALIZED", name, ck.Error(rvs[i]))
		}
	}
	if len(names) != 104 {
		t.Errorf("3.2 list has %d entries, want 104", len(names))
	}
}

func TestFunctionLists(t *testing.T) {
	v2, v3, v32, same, bad := tsListsCheck()
	if bad != 0 {
		t.Errorf("%d NULL or mismatched entries in the function lists (1000+: in the 3.2 list)", bad)
	}
	if v2 != [2]byte{2, 40} || v3 != [2]byte{3, 0} || v32 != [2]byte{3, 2} {
		t.Errorf("list versions %v, %v and %v, want 2.40, 3.0 and 3.2", v2, v3, v32)
	}
	if same {
		t.Error("two lists share C_GetInfo; each must report its own version")
	}
}

func TestGetInterface(t *testing.T) {
	pkcs11, vendor := "PKCS 11", "Vendor ModExp"
	v32, v30, v240, v31, v211 := [2]byte{3, 2}, [2]byte{3, 0}, [2]byte{2, 40}, [2]byte{3, 1}, [2]byte{2, 11}
	cases := []struct {
		name    string
		iname   *string
		version *[2]byte
		flags   uint64
		nullPP  bool
		want    ck.Error
		major   int
		minor   int
	}{
		{"default", nil, nil, 0, false, ck.CKR_OK, 3, 2},
		{"PKCS 11 latest", &pkcs11, nil, 0, false, ck.CKR_OK, 3, 2},
		{"PKCS 11 3.2", &pkcs11, &v32, 0, false, ck.CKR_OK, 3, 2},
		{"PKCS 11 3.0", &pkcs11, &v30, 0, false, ck.CKR_OK, 3, 0},
		{"PKCS 11 2.40", &pkcs11, &v240, 0, false, ck.CKR_OK, 2, 40},
		{"any name 2.40", nil, &v240, 0, false, ck.CKR_OK, 2, 40},
		{"PKCS 11 3.1 unknown", &pkcs11, &v31, 0, false, ck.CKR_ARGUMENTS_BAD, 0, 0},
		{"PKCS 11 2.11 unknown", &pkcs11, &v211, 0, false, ck.CKR_ARGUMENTS_BAD, 0, 0},
		{"unknown name", &vendor, nil, 0, false, ck.CKR_ARGUMENTS_BAD, 0, 0},
		{"fork-safe asked, not offered", &pkcs11, nil, ck.CKF_INTERFACE_FORK_SAFE, false, ck.CKR_ARGUMENTS_BAD, 0, 0},
		{"ppInterface NULL", nil, nil, 0, true, ck.CKR_ARGUMENTS_BAD, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rv, major, minor := tsGetInterface(c.iname, c.version, c.flags, c.nullPP)
			if rv != uint64(c.want) {
				t.Fatalf("C_GetInterface = %v, want %v", ck.Error(rv), c.want)
			}
			if c.want == ck.CKR_OK && (major != c.major || minor != c.minor) {
				t.Fatalf("got interface %d.%d, want %d.%d", major, minor, c.major, c.minor)
			}
		})
	}
}

func TestGetInterfaceList(t *testing.T) {
	cases := []struct {
		mode      int
		want      ck.Error
		wantCount uint64
	}{
		{0, ck.CKR_ARGUMENTS_BAD, 4},    // pulCount NULL: count untouched
		{1, ck.CKR_OK, 3},               // length query
		{2, ck.CKR_BUFFER_TOO_SMALL, 3}, // room for 1
		{3, ck.CKR_OK, 3},
	}
	for _, c := range cases {
		rv, count := tsGetInterfaceList(c.mode)
		if rv != uint64(c.want) || count != c.wantCount {
			t.Errorf("mode %d: C_GetInterfaceList = %v, count %d; want %v, %d", c.mode, ck.Error(rv), count, c.want, c.wantCount)
		}
	}
}

func TestGetInfoReportsChosenInterface(t *testing.T) {
	initModule(t)
	for _, c := range []struct {
		which        int
		major, minor byte
	}{{32, 3, 2}, {3, 3, 0}, {2, 2, 40}, {0, 2, 40}} {
		rv, info := tsGetInfo(c.which)
		if rv != 0 {
			t.Fatalf("C_GetInfo(list %d) = %v", c.which, ck.Error(rv))
		}
		if info.Major != c.major || info.Minor != c.minor {
			t.Errorf("C_GetInfo(list %d) cryptokiVersion %d.%d, want %d.%d", c.which, info.Major, info.Minor, c.major, c.minor)
		}
		for _, field := range [][]byte{info.Manufacturer, info.Description} {
			if bytes.IndexByte(field, 0) >= 0 {
				t.Errorf("C_GetInfo string %q holds a NUL; must be blank-padded", field)
			}
			if len(bytes.TrimRight(field, " ")) == 0 {
				t.Errorf("C_GetInfo string is empty")
			}
		}
	}
}

func TestFinalizeInitializeCycle(t *testing.T) {
	useTempConfig(t)
	for i := 0; i < 3; i++ {
		if rv := tsInitialize(false, 0, 0, false); rv != 0 {
			t.Fatalf("cycle %d: C_Initialize = %v", i, ck.Error(rv))
		}
		if rv := tsInitialize(false, 0, 0, false); rv != uint64(ck.CKR_CRYPTOKI_ALREADY_INITIALIZED) {
			t.Fatalf("cycle %d: second C_Initialize = %v, want CKR_CRYPTOKI_ALREADY_INITIALIZED", i, ck.Error(rv))
		}
		if rv, _ := tsGetInfo(3); rv != 0 {
			t.Fatalf("cycle %d: C_GetInfo = %v", i, ck.Error(rv))
		}
		if rv := tsFinalize(true); rv != uint64(ck.CKR_ARGUMENTS_BAD) {
			t.Fatalf("cycle %d: C_Finalize(non-NULL) = %v, want CKR_ARGUMENTS_BAD", i, ck.Error(rv))
		}
		if rv := tsFinalize(false); rv != 0 {
			t.Fatalf("cycle %d: C_Finalize = %v", i, ck.Error(rv))
		}
		if rv := tsFinalize(false); rv != uint64(ck.CKR_CRYPTOKI_NOT_INITIALIZED) {
			t.Fatalf("cycle %d: second C_Finalize = %v, want CKR_CRYPTOKI_NOT_INITIALIZED", i, ck.Error(rv))
		}
		if rv, _ := tsGetInfo(3); rv != uint64(ck.CKR_CRYPTOKI_NOT_INITIALIZED) {
			t.Fatalf("cycle %d: C_GetInfo after C_Finalize = %v", i, ck.Error(rv))
		}
	}
}

func TestInitializeBadConfig(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(conf, []byte("[[slot]]\nengine = \"no-such-engine\"\ntoken_file = \"t.db\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MODEXP_TOKEN_CONF", conf)
	t.Setenv("HOME", dir)
	t.Setenv("XDG_DATA_HOME", dir)
	rv := tsInitialize(false, 0, 0, false)
	if rv == 0 {
		tsFinalize(false)
		t.Fatal("C_Initialize with an unknown engine succeeded")
	}
	// The failure leaves the module uninitialised, not half-loaded.
	if rv, _ := tsGetInfo(3); rv != uint64(ck.CKR_CRYPTOKI_NOT_INITIALIZED) {
		t.Fatalf("C_GetInfo after a failed C_Initialize = %v", ck.Error(rv))
	}
}

func TestPanicRecovery(t *testing.T) {
	testHookEnter = func() { panic("test hook") }
	defer func() { testHookEnter = nil }()
	names := tsEntryNames()
	rvs := tsCallAll(true)
	for i, name := range names {
		if pureC[name] {
			continue
		}
		if rvs[i] != uint64(ck.CKR_GENERAL_ERROR) {
			t.Errorf("%s with a panicking module = %v, want CKR_GENERAL_ERROR", name, ck.Error(rvs[i]))
		}
	}
	testHookEnter = nil
	// No lock was left held: the module still initialises and answers.
	useTempConfig(t)
	if rv := tsInitialize(false, 0, 0, false); rv != 0 {
		t.Fatalf("C_Initialize after panics = %v", ck.Error(rv))
	}
	if rv := tsFinalize(false); rv != 0 {
		t.Fatalf("C_Finalize after panics = %v", ck.Error(rv))
	}
}

func TestBadArguments(t *testing.T) {
	initModule(t)
	names, rvs := tsBadArgs()
	if len(names) < 50 {
		t.Fatalf("only %d calls made", len(names))
	}
	for i, name := range names {
		want := ck.CKR_ARGUMENTS_BAD
		if strings.HasPrefix(name, "PARAM ") {
			want = ck.CKR_MECHANISM_PARAM_INVALID
		}
		if rvs[i] != uint64(want) {
			t.Errorf("%s = %v, want %v", name, ck.Error(rvs[i]), want)
		}
	}
}

func TestTwoCallSlotList(t *testing.T) {
	initModule(t)
	rv, n, _ := tsGetSlotList(true, 0)
	if rv != 0 || n == 0 {
		t.Fatalf("C_GetSlotList(NULL) = %v, count %d", ck.Error(rv), n)
	}
	rv, n2, _ := tsGetSlotList(false, int(n)-1)
	if rv != uint64(ck.CKR_BUFFER_TOO_SMALL) || n2 != n {
		t.Fatalf("C_GetSlotList(short) = %v, count %d; want CKR_BUFFER_TOO_SMALL, %d", ck.Error(rv), n2, n)
	}
	rv, n3, slots := tsGetSlotList(false, int(n)+3)
	if rv != 0 || n3 != n || len(slots) != int(n) {
		t.Fatalf("C_GetSlotList = %v, count %d, slots %v", ck.Error(rv), n3, slots)
	}
}

// firstSlot initialises the module and returns its first slot.
func firstSlot(t testing.TB) uint64 {
	t.Helper()
	return firstSlotWith(t, "")
}

// firstSlotWith is firstSlot with extra keys of the slot.
func firstSlotWith(t testing.TB, extra string) uint64 {
	t.Helper()
	initModuleWith(t, extra)
	rv, _, slots := tsGetSlotList(false, 8)
	if rv != 0 || len(slots) == 0 {
		t.Fatalf("C_GetSlotList = %v, %v", ck.Error(rv), slots)
	}
	return slots[0]
}

// firstSession initialises the module and opens a read-only session on
// the first slot, closed when the test ends.
func firstSession(t *testing.T) uint64 {
	t.Helper()
	h := openSession(t, firstSlot(t), false)
	t.Cleanup(func() { tsCloseSession(h) })
	return h
}

func TestTwoCallDigest(t *testing.T) {
	h := firstSession(t)
	msg := []byte("two-call convention")
	want := sha256.Sum256(msg)
	if rv := tsDigestInit(h, ck.CKM_SHA256); rv != 0 {
		t.Fatalf("C_DigestInit = %v", ck.Error(rv))
	}
	if rv, l, _ := tsDigest(h, msg, true, 0); rv != 0 || l != 32 {
		t.Fatalf("C_Digest(NULL) = %v, len %d; want CKR_OK, 32", ck.Error(rv), l)
	}
	if rv, l, _ := tsDigest(h, msg, false, 8); rv != uint64(ck.CKR_BUFFER_TOO_SMALL) || l != 32 {
		t.Fatalf("C_Digest(8 bytes) = %v, len %d; want CKR_BUFFER_TOO_SMALL, 32", ck.Error(rv), l)
	}
	rv, l, out := tsDigest(h, msg, false, 64)
	if rv != 0 || l != 32 || !bytes.Equal(out, want[:]) {
		t.Fatalf("C_Digest = %v, len %d, %x; want %x", ck.Error(rv), l, out, want)
	}
	// The single-part call ended the operation.
	if rv, _, _ := tsDigest(h, msg, false, 64); rv != uint64(ck.CKR_OPERATION_NOT_INITIALIZED) {
		t.Fatalf("C_Digest after the end = %v, want CKR_OPERATION_NOT_INITIALIZED", ck.Error(rv))
	}
}

func TestGenerateRandom(t *testing.T) {
	h := firstSession(t)
	rv, a := tsGenerateRandom(h, 48)
	_, b := tsGenerateRandom(h, 48)
	if rv != 0 || bytes.Equal(a, b) || bytes.Equal(a, make([]byte, 48)) {
		t.Fatalf("C_GenerateRandom = %v, %x then %x", ck.Error(rv), a, b)
	}
}

// TestForkedChild forks (from C) and checks the forked child's state
// machine (fork.c) without ever entering Go in the child: with a fake copy
// standing for the second copy of the library, and with a library file
// that is missing (a clean error, never a hang). test/fork runs the real
// thing.
func TestForkedChild(t *testing.T) {
	const (
		ok       = ck.CKR_OK
		already  = ck.CKR_CRYPTOKI_ALREADY_INITIALIZED
		notInit  = ck.CKR_CRYPTOKI_NOT_INITIALIZED
		general  = ck.CKR_GENERAL_ERROR
		fakeSign = ck.CKR_DATA_INVALID      // what the fake copy's C_Sign answers
		fakeUser = ck.CKR_USER_TYPE_INVALID // and its C_LoginUser
	)
	cases := []struct {
		name       string
		parentInit bool
		fake       bool
		script     int
		want       []ck.Error
		what       []string
	}{
		{"no library file, parent not initialised", false, false, 0,
			[]ck.Error{general, notInit, notInit, notInit, notInit},
			[]string{"C_Initialize", "C_GetInfo", "C_GetSlotList", "C_Sign", "C_Finalize"}},
		{"no library file, parent initialised", true, false, 0,
			[]ck.Error{general, general, general, general, ok},
			[]string{"C_Initialize", "C_GetInfo", "C_GetSlotList", "C_Sign", "C_Finalize (drops the inherited state)"}},
		{"inherited: first call starts the copy", true, true, 1,
			[]ck.Error{ok, already, fakeSign, fakeUser, ok, notInit, notInit, ok, already, 2},
			[]string{"C_GetInfo (fake)", "C_Initialize", "C_Sign", "C_LoginUser", "C_Finalize", "C_GetInfo",
				"C_Finalize", "C_Initialize", "C_Initialize", "fake C_Initialize calls"}},
		{"not inherited", false, true, 2,
			[]ck.Error{notInit, notInit, ok, ok},
			[]string{"C_Finalize", "C_GetInfo", "C_Initialize", "C_GetInfo (fake)"}},
		{"grandchild starts its own copy", false, true, 3,
			[]ck.Error{ok, ok, 2, already},
			[]string{"child C_Initialize", "grandchild C_GetInfo (fake)", "grandchild fake C_Initialize calls",
				"grandchild C_Initialize"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.parentInit {
				initModule(t)
			}
			status, rvs := tsForkScript(c.script, c.fake, 10000)
			if status != len(c.want) {
				t.Fatalf("fork script status %d, want %d values (-1: child hung)", status, len(c.want))
			}
			for i := range c.want {
				if rvs[i] != uint64(c.want[i]) {
					t.Errorf("child %s = %v, want %v", c.what[i], ck.Error(rvs[i]), c.want[i])
				}
			}
			if c.parentInit {
				// The parent is unaffected.
				if rv, _ := tsGetInfo(3); rv != 0 {
					t.Fatalf("parent C_GetInfo after fork = %v", ck.Error(rv))
				}
			}
		})
	}
}

var errToken = errors.New("token failure")
