package clients

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestModuleHygiene checks what a host sees of the module besides its
// answers: only C_* symbols, no output on the host's stdout or stderr
// unless MODEXP_TOKEN_LOG names a file, and the start-up cost of loading it.
//
// Finalize followed by a second C_Initialize in one process, and dlclose →
// dlopen, are checked by the C client of test/cclient (TestCClient); the
// exact list of exported entry points by test/symbols_test.go.
func TestModuleHygiene(t *testing.T) {
	t.Parallel()
	tk := newToken(t)
	if tk.kind != kindModExp {
		t.Skip("module hygiene is a property of our module only")
	}

	t.Run("only-C-symbols", func(t *testing.T) {
		tk := tk.with(t)
		needTools(t, "nm")
		r := tk.mustRun("nm", "-D", "--defined-only", tk.module)
		var bad []string
		n := 0
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			n++
			if name := f[len(f)-1]; !strings.HasPrefix(name, "C_") {
				bad = append(bad, name)
			}
		}
		if n == 0 || len(bad) > 0 {
			t.Fatalf("%d defined dynamic symbols; not C_*: %v", n, bad)
		}
	})

	t.Run("silent-unless-logging", func(t *testing.T) {
		tk := tk.with(t)
		tk.genRSA("01", "k", 2048)
		msg := tk.write("msg", "quiet, please\n")
		wrongPIN := "0000"
		runs := [][]string{
			{"--show-info"}, {"--list-slots"}, {"--list-mechanisms"}, {"--list-objects"},
			{"--login", "--pin", userPIN, "--list-objects"},
			{"--login", "--pin", userPIN, "--sign", "-m", "SHA256-RSA-PKCS", "--id", "01", "-i", msg, "-o", tk.path("sig")},
			{"--login", "--pin", wrongPIN, "--list-objects"},    // an error path
			{"--id", "77", "--read-object", "--type", "pubkey"}, // another
		}
		logFile := tk.path("module.log")
		for _, args := range runs {
			args = append([]string{"--module", tk.module}, args...)
			quiet := tk.runEnv(nil, nil, "pkcs11-tool", args...)
			logged := tk.runEnv([]string{"MODEXP_TOKEN_LOG=" + logFile, "MODEXP_TOKEN_LOG_LEVEL=debug"}, nil, "pkcs11-tool", args...)
			if quiet.stdout != logged.stdout || quiet.stderr != logged.stderr {
				t.Errorf("pkcs11-tool %v prints differently with and without MODEXP_TOKEN_LOG:\n"+
					"without:\n%s\nwith:\n%s", args[2:], quiet.combined(), logged.combined())
			}
			for _, s := range []string{quiet.combined(), logged.combined()} {
				// log/slog's text lines carry "level=" and "msg=".
				if strings.Contains(s, "level=") || strings.Contains(s, "msg=") {
					t.Errorf("pkcs11-tool %v output looks like the module's log:\n%s", args[2:], s)
				}
			}
		}
		if fi, err := os.Stat(logFile); err != nil || fi.Size() == 0 {
			t.Errorf("MODEXP_TOKEN_LOG=%s with level debug produced no log (%v)", logFile, err)
		}
		// A host that prints nothing itself: every byte on its stdout or
		// stderr would be the module's.
		probe := buildLoadTime(tk)
		r := tk.runEnv(nil, nil, probe, tk.module, tk.path("probe.out"))
		if r.err != nil || r.stdout != "" || r.stderr != "" {
			t.Errorf("silent C host: %v, stdout %q, stderr %q", r.err, r.stdout, r.stderr)
		}
	})

	t.Run("start-up-cost", func(t *testing.T) {
		tk := tk.with(t)
		probe := buildLoadTime(tk)
		const runs = 15
		var totals, inits []time.Duration
		for i := 0; i < runs; i++ {
			out := tk.path(fmt.Sprintf("load-%d.txt", i))
			r := tk.runEnv(nil, nil, probe, tk.module, out)
			if r.err != nil {
				t.Fatalf("loadtime: %v %s", r.err, r.combined())
			}
			var dl, in, total int64
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fmt.Sscan(string(b), &dl, &in, &total); err != nil {
				t.Fatalf("loadtime output %q: %v", b, err)
			}
			totals = append(totals, time.Duration(total))
			inits = append(inits, time.Duration(in))
		}
		sort.Slice(totals, func(i, j int) bool { return totals[i] < totals[j] })
		sort.Slice(inits, func(i, j int) bool { return inits[i] < inits[j] })
		t.Logf("dlopen+C_Initialize+C_GetSlotList+C_Finalize over %d fresh processes: median %v (min %v, max %v); "+
			"C_Initialize..C_Finalize alone: median %v", runs, totals[runs/2], totals[0], totals[runs-1], inits[runs/2])
		// A figure, not a bound (load time is a benchmark target:
		// docs/PERFORMANCE.md); the test checks that every run loaded,
		// initialised and finalised the module.
	})
}

// buildLoadTime compiles testdata/loadtime.c into the token's directory.
func buildLoadTime(tk *testToken) string {
	tk.t.Helper()
	needTools(tk.t, "gcc")
	src, err := filepath.Abs(filepath.Join("testdata", "loadtime.c"))
	if err != nil {
		tk.t.Fatal(err)
	}
	bin := tk.path("loadtime")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	tk.mustRun("gcc", "-O2", "-o", bin, src, "-ldl")
	return bin
}
