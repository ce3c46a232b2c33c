package stress

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBadArgs runs csrc/badargs.c: every entry point of both function lists
// with bad arguments, stale handles and wrong states, before C_Initialize,
// while initialised and after C_Finalize; a table of expected return
// values; and the proof that the stored data is untouched (the reference
// signature, checked here with crypto/rsa, is reproduced after the sweep,
// after the table and after C_Finalize + C_Initialize).
func TestBadArgs(t *testing.T) {
	needBuild(t)
	k := newToken(t)
	out, errOut, err := k.runC(t, 5*time.Minute, badargs, libPath, soPIN, userPIN)
	var fails []string
	data := map[string]string{}
	passes, sweepCalls := -1, -1
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "FAIL"), strings.HasPrefix(line, "HANG"), strings.Contains(line, "CRASH"):
			fails = append(fails, line)
		case strings.HasPrefix(line, "note:"):
			// Behaviour the standard allows or the report describes.
			t.Log(line)
		case strings.HasPrefix(line, "DATA "):
			name, val, _ := strings.Cut(strings.TrimPrefix(line, "DATA "), " ")
			data[name] = val
		case strings.HasPrefix(line, "sweep calls="):
			sweepCalls, _ = strconv.Atoi(strings.TrimPrefix(line, "sweep calls="))
		case strings.HasPrefix(line, "DONE passes="):
			f := strings.Fields(line)
			passes, _ = strconv.Atoi(strings.TrimPrefix(f[1], "passes="))
		}
	}
	for _, f := range fails {
		t.Error(f)
	}
	if err != nil {
		t.Fatalf("badargs: %v\nstdout (end):\n%s\nstderr (end):\n%s", err, tail(out, 30), tail(errOut, 30))
	}
	// 13 variants × (2.40 entries + 3.0 entries): at least 2000 calls.
	if sweepCalls < 2000 {
		t.Errorf("sweep made %d calls, want at least 2000", sweepCalls)
	}
	if passes < 250 {
		t.Errorf("%d table checks passed, want at least 250", passes)
	}
	t.Logf("sweep: %d calls; table: %d checks passed", sweepCalls, passes)

	// The reference signature is a valid PKCS#1 v1.5 SHA-256 signature of
	// the message under the key's modulus, and the module made the same one
	// after every phase.
	n, ok := new(big.Int).SetString(data["modulus"], 16)
	if !ok {
		t.Fatalf("no modulus in the output")
	}
	pub := &rsa.PublicKey{N: n, E: 65537}
	ref := mustHex(t, data["sig-ref"])
	d := sha256.Sum256([]byte(data["message"]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, d[:], ref); err != nil {
		t.Errorf("reference signature: %v", err)
	}
	for _, when := range []string{"after-sweep", "after-table", "after-reinit"} {
		if got := mustHex(t, data["sig-"+when]); !bytes.Equal(got, ref) {
			t.Errorf("signature %s differs from the reference", when)
		}
	}
	// The signature over 16 MiB of 0x3c.
	big16 := sha256.Sum256(bytes.Repeat([]byte{0x3c}, 16<<20))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, big16[:], mustHex(t, data["sig16m"])); err != nil {
		t.Errorf("signature over 16 MiB: %v", err)
	}
	k.checkLog(t)
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil || len(b) == 0 {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}
