package keystore

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// The keystore's tests on both backends
//
// backendTests run on the token file (as every test does) and again, with
// every token in etcd, under TestOnEtcd (backends_etcd_test.go, build tag
// modexp_etcd: make test runs it with an embedded etcd member). They open
// stores through openStore and reach below the keystore through rawOf, so
// the same test edits the file's records with bbolt or the prefix's keys
// with the etcd client. A few subtests inside them damage the bbolt file
// itself and skip on etcd (TestCorruptFiles marks them).
//
// fileOnly lists the tests that do not run on etcd, each with its reason;
// backendOwn the tests that pick their backends themselves.
// TestEveryTestHasABackend keeps the lists complete: a new test must be
// put in one of them.
var backendTests = []struct {
	name string
	fn   func(*testing.T)
}{
	// Objects, sealing, record authentication.
	{"ObjectsRoundTrip", TestObjectsRoundTrip}, {"PutUpdateDelete", TestPutUpdateDelete},
	{"PutObjectsAllOrNothing", TestPutObjectsAllOrNothing}, {"WipedKey", TestWipedKey},
	{"SealedPlaintextNotInFile", TestSealedPlaintextNotInFile}, {"SealedValuesAreBound", TestSealedValuesAreBound},
	{"TamperedRecordRefused", TestTamperedRecordRefused}, {"TamperByteByByte", TestTamperByteByByte},
	{"CorruptFiles", TestCorruptFiles}, {"ManyObjects", TestManyObjects},
	{"ConcurrentGoroutines", TestConcurrentGoroutines}, {"TwoProcesses", TestTwoProcesses},
	// Store life: open, init, close, generation, change log.
	{"OpenMissingFile", TestOpenMissingFile}, {"InitTokenCreatesFile", TestInitTokenCreatesFile},
	{"ClosedStore", TestClosedStore}, {"GenerationCountsChanges", TestGenerationCountsChanges},
	{"Changes", TestChanges}, {"ChangesCostIsTheChange", TestChangesCostIsTheChange},
	{"ChangesAfterInitToken", TestChangesAfterInitToken}, {"TombstonesPruned", TestTombstonesPruned},
	// PINs, lockout, policy.
	{"Login", TestLogin}, {"PINLockout", TestPINLockout}, {"SetPIN", TestSetPIN},
	{"InitUserPINClearsLockout", TestInitUserPINClearsLockout}, {"InitUserPINNeedsSOKey", TestInitUserPINNeedsSOKey},
	{"InitTokenReinitialises", TestInitTokenReinitialises}, {"EveryAttemptPaysKDF", TestEveryAttemptPaysKDF},
	{"PolicyLivesInTheToken", TestPolicyLivesInTheToken}, {"PolicyAdoptedByOldTokens", TestPolicyAdoptedByOldTokens},
	{"KDFFloor", TestKDFFloor},
	{"PINCacheInProcess", TestPINCacheInProcess}, {"PINCacheOffAndExpired", TestPINCacheOffAndExpired},
	{"PINCacheKeyring", TestPINCacheKeyring},
	// Schema migrations (a version-2 token reaches etcd by store copy).
	{"MigrateV2", TestMigrateV2}, {"MigrateV3", TestMigrateV3},
	// Backup and restore.
	{"Backup", TestBackup}, {"RestoreRoundTrip", TestRestoreRoundTrip},
	{"RestoreRejectsBadBackups", TestRestoreRejectsBadBackups},
	{"RestoreOverDamagedAndMissingFile", TestRestoreOverDamagedAndMissingFile},
	{"ChangesAfterRestore", TestChangesAfterRestore},
}

// fileOnly are the tests inherently about the token file, or about no
// store at all, with the reason.
var fileOnly = map[string]string{
	"TestKeyringPayload":                   "the keyring payload's sealing alone: no store",
	"TestEmptyFileIsUninitialized":         "a zero-length file: no such thing in etcd",
	"TestLockTimeout":                      "the file's flock held by another process; etcd has no lock (optimistic transactions: TestBackendLockoutRace)",
	"TestBboltPanicReleasesLock":           "bbolt's panic on a truncated file and the flock release",
	"TestWriteDuringRestoreLandsInNewFile": "a writer waiting on the flock of a file renamed over by Restore",
	"TestChangesStamp":                     "the token file's stamp (stamp.go): its inode, times and meta pages; a truncated and a removed file",
	"TestReadStampPageSizes":               "the stamp of bbolt files of two page sizes",
	"TestChangesStampConcurrent":           "the token file's stamp read while another Store commits",
	"TestMigrateV1":                        "a version-1 token cannot be in etcd: store copy refuses it until a write upgrades it",
	"TestDefaultKDFParams":                 "the cost of the default Argon2id parameters, not the store's",
	"TestTokenRecordRoundTrip":             "record encoding, no store",
	"TestObjectRecordRoundTrip":            "record encoding, no store",
	"TestDecodeObjectRecordRejects":        "record encoding, no store",
	"TestDecodeTokenRecordRejects":         "record encoding, no store",
	"TestEveryTestHasABackend":             "this list's own check",
}

// backendOwn are the tests that run on the backends they name themselves;
// so are, by their names, TestEtcd* (etcd only) and TestBackend* (their
// own file and etcd runs), which make test's -run selects.
var backendOwn = []string{"TestMain", "TestOnEtcd", "TestCopyFileEtcdAndBack"}

// TestEveryTestHasABackend: every Test function of the package is in
// backendTests, fileOnly or backendOwn.
func TestEveryTestHasABackend(t *testing.T) {
	known := map[string]bool{}
	for _, bt := range backendTests {
		known["Test"+bt.name] = true
	}
	for name := range fileOnly {
		if known[name] {
			t.Errorf("%s is in backendTests and fileOnly", name)
		}
		known[name] = true
	}
	for _, name := range backendOwn {
		known[name] = true
	}
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !strings.HasPrefix(fd.Name.Name, "Test") {
				continue
			}
			seen[fd.Name.Name] = true
			own := strings.HasPrefix(fd.Name.Name, "TestEtcd") || strings.HasPrefix(fd.Name.Name, "TestBackend")
			if !known[fd.Name.Name] && !own {
				t.Errorf("%s (%s): put it in backendTests (it runs on etcd too) or fileOnly (say why)", fd.Name.Name, f)
			}
		}
	}
	for name := range known {
		if !seen[name] {
			t.Errorf("%s is listed but no such test exists", name)
		}
	}
}
