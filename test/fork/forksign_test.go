package fork

import (
	"bufio"
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/hex"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Children and signatures per key and process of TestForkedChildrenSign.
const (
	forkChildren = 4
	forkSigns    = 200
)

// TestForkedChildrenSign runs forksign.c: the parent initialises the module,
// logs in and forks 4 children; each re-initialises, logs in and signs 200
// times per key (child 0 from two threads at once, child 1 also through a
// grandchild), while the parent signs too. Every signature is then verified
// here with crypto/rsa or crypto/ecdsa against the public key the parent read
// from the token.
func TestForkedChildrenSign(t *testing.T) {
	tk := newToken(t)
	bin := buildForksign(t, tk.dir)
	for _, c := range []struct{ name, label string }{
		{"RSA-2048", "rsa"},
		{"P-256", "ec"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.label == "ec" && tk.ecErr != "" {
				t.Fatalf("P-256: %s; the test of ECDSA in forked children cannot run", tk.ecErr)
			}
			out := filepath.Join(tk.dir, "out-"+c.label)
			if err := os.MkdirAll(out, 0o700); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			report, err := tk.run([]string{"FORKSIGN_PIN=" + userPIN, "FORKSIGN_TIMEOUT=100"}, 120*time.Second,
				bin, libPath, out, c.label, strconv.Itoa(forkChildren), strconv.Itoa(forkSigns))
			if err != nil || !strings.Contains(report, "PASS") {
				t.Fatalf("forksign: %v\n%s", err, report)
			}
			t.Logf("%d children x %d signatures (+ parent, thread, grandchild) in %v", forkChildren, forkSigns,
				time.Since(start).Round(time.Millisecond))
			pubs := readPublicKeys(t, filepath.Join(out, "pub"))
			// Signatures per file: child 0 signs from two threads.
			want := map[string]int{"parent": forkSigns, "child0": 2 * forkSigns, "grandchild1": forkSigns}
			for i := 1; i < forkChildren; i++ {
				want["child"+strconv.Itoa(i)] = forkSigns
			}
			for name, n := range want {
				got := verifyFile(t, filepath.Join(out, name), pubs)
				if got != n {
					t.Errorf("%s: %d verified signatures, want %d", name, got, n)
				}
			}
		})
	}
}

// readPublicKeys parses forksign's "pub" file.
func readPublicKeys(t *testing.T, path string) map[string]crypto.PublicKey {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]crypto.PublicKey{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Fatalf("pub line %q", line)
		}
		a, errA := hex.DecodeString(f[2])
		c, errC := hex.DecodeString(f[3])
		if errA != nil || errC != nil {
			t.Fatalf("pub line %q: bad hex", line)
		}
		switch f[0] {
		case "rsa":
			keys[f[1]] = &rsa.PublicKey{N: new(big.Int).SetBytes(a), E: int(new(big.Int).SetBytes(c).Int64())}
		case "ec":
			// CKA_EC_PARAMS: the P-256 OID; CKA_EC_POINT: DER OCTET STRING
			// holding the uncompressed point.
			if hex.EncodeToString(a) != "06082a8648ce3d030107" {
				t.Fatalf("%s: CKA_EC_PARAMS %x is not P-256", f[1], a)
			}
			if len(c) != 67 || c[0] != 0x04 || c[1] != 65 || c[2] != 0x04 {
				t.Fatalf("%s: CKA_EC_POINT %x is not a DER OCTET STRING of an uncompressed P-256 point", f[1], c)
			}
			keys[f[1]] = &ecdsa.PublicKey{Curve: elliptic.P256(),
				X: new(big.Int).SetBytes(c[3:35]), Y: new(big.Int).SetBytes(c[35:])}
		default:
			t.Fatalf("pub line %q", line)
		}
	}
	return keys
}

var sigLine = regexp.MustCompile(`^sig (\S+) (RSA_PKCS|RSA_PKCS_PSS|ECDSA) ([0-9a-f]{64}) ([0-9a-f]+)$`)

// verifyFile verifies every signature line of one process's file and
// returns how many verified (a bad one fails the test).
func verifyFile(t *testing.T, path string, pubs map[string]crypto.PublicKey) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Errorf("%v (did the process run?)", err)
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		m := sigLine.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Fatalf("%s: bad line %q", path, sc.Text())
		}
		hash, _ := hex.DecodeString(m[3])
		sig, _ := hex.DecodeString(m[4])
		var verr error
		switch pub := pubs[m[1]].(type) {
		case *rsa.PublicKey:
			if m[2] == "RSA_PKCS" {
				verr = rsa.VerifyPKCS1v15(pub, crypto.SHA256, hash, sig)
			} else {
				verr = rsa.VerifyPSS(pub, crypto.SHA256, hash, sig, &rsa.PSSOptions{SaltLength: 32})
			}
		case *ecdsa.PublicKey:
			if len(sig) != 64 {
				t.Fatalf("%s: ECDSA signature of %d bytes, want r||s of 64", path, len(sig))
			}
			if !ecdsa.Verify(pub, hash, new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
				verr = errBadSignature
			}
		default:
			t.Fatalf("%s: no public key for %q", path, m[1])
		}
		if verr != nil {
			t.Fatalf("%s: %s signature over %s does not verify: %v", path, m[2], m[3], verr)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

type sigError string

func (e sigError) Error() string { return string(e) }

const errBadSignature = sigError("ECDSA verification failed")

// TestForkCost measures, with forksign's bench mode, the cost of a signing
// call in the parent (the Go module in process) and in a forked child
// (through its own copy of the module); docs/FORK.md quotes runs of it. The numbers are logged; the
// test checks that every measured call succeeded in both processes.
func TestForkCost(t *testing.T) {
	tk := newToken(t)
	bin := buildForksign(t, tk.dir)
	labels := "rsa"
	if tk.ecErr == "" {
		labels = "rsa,ec"
	}
	report, err := tk.run([]string{"FORKSIGN_PIN=" + userPIN}, 120*time.Second, bin, libPath, tk.dir, labels, "0", "0",
		"bench", "200")
	if err != nil {
		t.Fatalf("forksign bench: %v\n%s", err, report)
	}
	var parent, child int
	for _, line := range strings.Split(report, "\n") {
		if strings.HasPrefix(line, "bench parent") {
			parent++
		}
		if strings.HasPrefix(line, "bench child") {
			child++
		}
	}
	// parent: GetSessionInfo + 2 RSA (+ ECDSA); child: the same + Initialize,
	// session, Finalize.
	wantParent := 3
	if tk.ecErr == "" {
		wantParent = 4
	}
	if parent != wantParent || child != wantParent+3 {
		t.Fatalf("bench lines: %d parent, %d child\n%s", parent, child, report)
	}
	t.Logf("\n%s", report)
	if tk.ecErr != "" {
		t.Errorf("P-256 not measured: %s", tk.ecErr)
	}
}

// TestForkMissingPieces takes away what a forked child's copy of the module
// is made from and checks that the child gets a clean error at once (no
// hang, no signal) with the reason in the module log, and that the parent
// keeps signing; a library file removed after the load is no missing piece
// (the image comes from the descriptor opened at load).
func TestForkMissingPieces(t *testing.T) {
	tk := newToken(t)
	bin := buildForksign(t, tk.dir)
	shim := filepath.Join(tk.dir, "nomemfd.so")
	if out, err := exec.Command("gcc", "-Wall", "-Werror", "-shared", "-fPIC", "-o", shim,
		filepath.Join(repoRoot, "test", "fork", "csrc", "nomemfd.c"), "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	for _, c := range []struct {
		name string
		env  []string
		mode string // forksign's last argument: "broken" (the child must fail) or "" (must work)
		log  string
	}{
		{"memfd_create and /dev/shm refused", []string{"LD_PRELOAD=" + shim}, "broken",
			"memfd_create: Operation not permitted; O_TMPFILE in /dev/shm: Permission denied"},
		{"library file removed after the load", []string{"FORKSIGN_UNLINK=1"}, "", ""},
		{"library file removed and its descriptor closed", []string{"FORKSIGN_UNLINK=1", "FORKSIGN_CLOSELIB=1"},
			"broken", "cannot open the library file"},
		{"library file replaced and its descriptor closed",
			[]string{"FORKSIGN_UNLINK=1", "FORKSIGN_REPLACE=1", "FORKSIGN_CLOSELIB=1"}, "broken",
			"was replaced since it was loaded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			lib := filepath.Join(t.TempDir(), "libmodexp-pkcs11.so")
			if b, err := os.ReadFile(libPath); err != nil || os.WriteFile(lib, b, 0o755) != nil {
				t.Fatalf("copy the module: %v", err)
			}
			logPath := tk.path("module.log")
			before, _ := os.ReadFile(logPath)
			args := []string{lib, tk.dir, "rsa", "1", "20"}
			if c.mode != "" {
				args = append(args, c.mode)
			}
			env := append([]string{"FORKSIGN_PIN=" + userPIN, "FORKSIGN_TIMEOUT=120"}, c.env...) // with the run's 3 minutes, hang guards
			report, err := tk.run(env, 3*time.Minute, bin, args...)
			if err != nil || !strings.Contains(report, "PASS") {
				t.Fatalf("forksign %v: %v\n%s", args, err, report)
			}
			after, _ := os.ReadFile(logPath)
			if c.log != "" && !bytes.Contains(after[len(before):], []byte(c.log)) {
				t.Errorf("module log lacks %q:\n%s", c.log, after[len(before):])
			}
		})
	}
}
