// Package engines holds the integration tests of the token's engines with
// real processes: pkcs11-tool on the built module with chip engines, and the
// modexpd daemon (started on a unix socket in t.TempDir()) as the token's
// device, with injected faults, killed and restarted, several at once.
// Counts at scale (10,000 signatures) run through token.Module in this
// process against the real daemon.
package engines

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Paths filled by TestMain.
var (
	repoRoot string // the module root
	libPath  string // build/libmodexp-pkcs11.so, freshly built
	binDir   string // modexpd and modexp-token, built for these tests
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	repoRoot = filepath.Dir(filepath.Dir(wd))
	cmd := exec.Command("make", "-s", "-C", repoRoot, "lib")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "make lib: %v\n%s", err, out)
		return 1
	}
	libPath = filepath.Join(repoRoot, "build", "libmodexp-pkcs11.so")
	if binDir, err = os.MkdirTemp("", "engines-bin-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(binDir)
	for _, c := range []string{"modexpd", "modexp-token"} {
		b := exec.Command("go", "build", "-o", filepath.Join(binDir, c), "./cmd/"+c)
		b.Dir = repoRoot
		if out, err := b.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", c, err, out)
			return 1
		}
	}
	return m.Run()
}

// daemon is a running modexpd.
type daemon struct {
	t    testing.TB
	sock string
	args []string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
}

// sockDir returns a short private directory for sockets (unix socket paths
// are limited to 107 bytes; t.TempDir() paths can be long).
func sockDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "mxd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// startDaemon starts modexpd on a unix socket in dir with extra args
// (--engine, --fault ...) and waits until it accepts connections.
func startDaemon(t testing.TB, sock string, args ...string) *daemon {
	t.Helper()
	d := &daemon{t: t, sock: sock, args: args, log: sock + ".log"}
	d.start()
	t.Cleanup(d.stop)
	return d
}

func (d *daemon) start() {
	d.t.Helper()
	args := append([]string{"serve", "--listen", "unix:" + d.sock, "--log", d.log}, d.args...)
	d.cmd = exec.Command(filepath.Join(binDir, "modexpd"), args...)
	var out bytes.Buffer
	d.cmd.Stdout, d.cmd.Stderr = &out, &out
	if err := d.cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	d.done = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) { c.Wait(); close(done) }(d.cmd, d.done)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("unix", d.sock); err == nil {
			c.Close()
			return
		}
		select {
		case <-d.done:
			d.t.Fatalf("modexpd exited: %s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("modexpd did not listen on %s", d.sock)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill ends the daemon with SIGKILL (no drain) and waits for it.
func (d *daemon) kill() {
	if d.cmd != nil && d.cmd.Process != nil {
		d.cmd.Process.Signal(syscall.SIGKILL)
		<-d.done
	}
}

// stop ends the daemon with SIGTERM (drain) and waits for it.
func (d *daemon) stop() {
	if d.cmd == nil || d.cmd.Process == nil {
		return
	}
	select {
	case <-d.done:
		return
	default:
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(15 * time.Second):
		d.cmd.Process.Kill()
		<-d.done
	}
}

// status is the part of the daemon's STATUS the tests read.
type status struct {
	FaultsInjected uint64 `json:"faults_injected"`
	Ops            map[string]struct {
		Requests uint64 `json:"requests"`
		Errors   uint64 `json:"errors"`
	} `json:"ops"`
}

// status asks the daemon for its counters (modexpd status --json).
func (d *daemon) status() status {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(binDir, "modexpd"), "status", "--listen", "unix:"+d.sock, "--json").Output()
	if err != nil {
		d.t.Fatalf("modexpd status: %v", err)
	}
	var s status
	if err := json.Unmarshal(out, &s); err != nil {
		d.t.Fatalf("modexpd status: %v\n%s", err, out)
	}
	return s
}

// modexps is the number of MODEXP and MODEXP_CRT requests the daemon saw.
func (s status) modexps() uint64 {
	var n uint64
	for name, o := range s.Ops {
		if strings.HasPrefix(strings.ToUpper(name), "MODEXP") {
			n += o.Requests
		}
	}
	return n
}

// runCmd runs name with args in env and returns stdout+stderr.
func runCmd(env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// needTool skips the test when a host program is missing (make deps
// installs them).
func needTool(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not installed (run make deps)", name)
	}
}
