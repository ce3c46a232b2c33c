package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/cmd/modexpd/server"
	"github.com/modexp-token/modexp-token/engine"
	_ "github.com/modexp-token/modexp-token/engine/backend/device"
)

// buildDaemon builds the real binary once per test.
func buildDaemon(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "modexpd")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// waitSocket waits for the daemon's socket (it measures its engine
// first); the two minutes are a hang guard.
func waitSocket(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if fi, err := os.Stat(path); err == nil && fi.Mode()&os.ModeSocket != 0 && fi.Mode().Perm() == 0o600 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("daemon socket never appeared")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDaemonBinary runs the real modexpd: a token-side engine reaches it by
// spec, `modexpd status` reports the work, and SIGTERM drains a request in
// flight before the daemon exits 0, leaving the CPU profile asked for.
func TestDaemonBinary(t *testing.T) {
	bin := buildDaemon(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "run", "d.sock")
	logPath := filepath.Join(dir, "modexpd.log")
	profPath := filepath.Join(dir, "cpu.pprof")
	cmd := exec.Command(bin, "--listen", "unix:"+sock, "--engine", "soft", "--fault", "slow:300", "--log", logPath, "--log-level", "debug",
		"--cpuprofile", profPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitSocket(t, sock)

	// The deadlines are hang guards: each answer waits 300 ms by the fault,
	// and the cost model's default floor (1 s) would leave a loaded
	// machine little more.
	e, err := engine.Open("device:unix:" + sock + ",timeout=2m,floor=1m")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	n := big.NewInt(0xFFFFFFFB) // odd
	m, err := e.NewModulus(n.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	base, exp := big.NewInt(123456789), big.NewInt(987654321)
	want := new(big.Int).Exp(base, exp, n)
	r, _, err := e.Exp(context.Background(), m, base.Bytes(), exp.Bytes())
	if err != nil || new(big.Int).SetBytes(r).Cmp(want) != 0 {
		t.Fatalf("Exp through the daemon: %x, %v", r, err)
	}

	out, err := exec.Command(bin, "status", "--listen", "unix:"+sock).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "MODEXP") || !strings.Contains(string(out), "OK=1") {
		t.Fatalf("status: %v\n%s", err, out)
	}

	// A request in flight when SIGTERM arrives is still answered. The
	// signal goes once the daemon's status shows the request in flight
	// (each answer waits 300 ms); one answered before a slow poll saw it
	// is sent again.
	var done chan error
	for deadline := time.Now().Add(2 * time.Minute); ; {
		done = make(chan error, 1)
		go func() {
			r, _, err := e.Exp(context.Background(), m, base.Bytes(), exp.Bytes())
			if err == nil && new(big.Int).SetBytes(r).Cmp(want) != 0 {
				err = os.ErrInvalid
			}
			done <- err
		}()
		if inFlight(t, sock, done, deadline) {
			break
		}
		if err := <-done; err != nil {
			t.Fatalf("request before SIGTERM: %v", err)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("request in flight during SIGTERM: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("daemon exit: %v\nstderr: %s", err, stderr.String())
	}
	if stdout.Len() != 0 || stderr.Len() != 0 {
		t.Errorf("daemon wrote to stdout %q / stderr %q with --log set", stdout.String(), stderr.String())
	}
	logText, _ := os.ReadFile(logPath)
	for _, want := range []string{"modexpd starting", "draining", "drained, exiting"} {
		if !bytes.Contains(logText, []byte(want)) {
			t.Errorf("log lacks %q:\n%s", want, logText)
		}
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left behind after exit")
	}
	// The profile is a gzipped protocol buffer, complete once the daemon
	// has exited.
	pf, err := os.Open(profPath)
	if err != nil {
		t.Fatalf("cpu profile: %v", err)
	}
	defer pf.Close()
	zr, err := gzip.NewReader(pf)
	if err != nil {
		t.Fatalf("cpu profile: %v", err)
	}
	if b, err := io.ReadAll(zr); err != nil || len(b) == 0 {
		t.Fatalf("cpu profile: %d bytes, %v", len(b), err)
	}
}

func TestCommandErrors(t *testing.T) {
	var out, errb bytes.Buffer
	cases := [][]string{
		{"frobnicate"},
		{"serve", "--engine", "nosuch", "--listen", "unix:" + filepath.Join(t.TempDir(), "s", "x.sock")},
		{"serve", "--fault", "melt"},
		{"serve", "--listen", "tcp:127.0.0.1:0"},
		{"serve", "--listen", "unix:/x.sock", "--cert", "a"},
		{"keygen"},
		{"status", "--listen", "unix:" + filepath.Join(t.TempDir(), "none.sock")},
	}
	for _, c := range cases {
		if code := run(c, &out, &errb); code == 0 {
			t.Errorf("%q: exit 0", c)
		}
	}
	dir := t.TempDir()
	if code := run([]string{"keygen", "--cert", filepath.Join(dir, "a.crt"), "--key", filepath.Join(dir, "a.key")}, &out, &errb); code != 0 {
		t.Errorf("keygen: %s", errb.String())
	}
	if fi, err := os.Stat(filepath.Join(dir, "a.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode: %v %v", fi, err)
	}
}

func TestParseCost(t *testing.T) {
	cases := []struct {
		in     string
		nilOK  bool // auto: the server measures
		fixed  uint64
		modexp uint64
		ec     uint64
		ok     bool
	}{
		{"auto", true, 0, 0, 0, true},
		{"none", false, 0, 0, 0, true},
		{"20000,4000,5000", false, 20000, 4000, 5000, true},
		{" 1, 2, 3", false, 1, 2, 3, true},
		{"1,2", false, 0, 0, 0, false},
		{"1,2,x", false, 0, 0, 0, false},
		{"1,2,-3", false, 0, 0, 0, false},
		{"1,99999999999,3", false, 0, 0, 0, false}, // beyond the protocol's limit
	}
	for _, tc := range cases {
		cm, err := parseCost(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if !tc.ok {
			continue
		}
		if tc.nilOK != (cm == nil) {
			t.Errorf("%q: model %+v", tc.in, cm)
			continue
		}
		if cm != nil && (cm.FixedNS != tc.fixed || cm.ModExpPS != tc.modexp || cm.ECPS != tc.ec) {
			t.Errorf("%q: %+v", tc.in, cm)
		}
	}
}

// inFlight polls the daemon's status until it shows a request in flight
// (true) or done is ready (false: the request was answered first; done
// is left to the caller), failing at deadline.
func inFlight(t *testing.T, sock string, done chan error, deadline time.Time) bool {
	t.Helper()
	for {
		if len(done) > 0 {
			return false
		}
		snap, err := server.FetchStatus(context.Background(), "unix:"+sock, nil)
		if err == nil && snap.InFlight > 0 {
			return true
		}
		if time.Now().After(deadline) {
			t.Fatalf("no request seen in flight: %+v, %v", snap, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
