package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Daemon is a running modexpd.
type Daemon struct {
	t    testing.TB
	bin  string
	Sock string   // its unix socket
	Args []string // the extra arguments it was started with
	Log  string   // its log file (Sock + ".log")
	cmd  *exec.Cmd
	done chan struct{}
}

// SockDir returns a short private directory for sockets (unix socket paths
// are limited to 107 bytes; t.TempDir() paths can be long).
func SockDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "mxd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// StartDaemon starts the modexpd binary bin on the unix socket sock with
// extra args (--engine, --fault ...), waits until it accepts connections
// and stops it (SIGTERM) when the test ends.
func StartDaemon(t testing.TB, bin, sock string, args ...string) *Daemon {
	t.Helper()
	d := &Daemon{t: t, bin: bin, Sock: sock, Args: args, Log: sock + ".log"}
	d.Start()
	t.Cleanup(d.Stop)
	return d
}

// Start starts the daemon (again, after Kill or Stop) and waits until it
// accepts connections.
func (d *Daemon) Start() {
	d.t.Helper()
	args := append([]string{"serve", "--listen", "unix:" + d.Sock, "--log", d.Log}, d.Args...)
	d.cmd = exec.Command(d.bin, args...)
	var out bytes.Buffer
	d.cmd.Stdout, d.cmd.Stderr = &out, &out
	if err := d.cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	d.done = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) { c.Wait(); close(done) }(d.cmd, d.done)
	deadline := time.Now().Add(2 * time.Minute) // a hang guard: the daemon measures its engine first
	for {
		if c, err := net.Dial("unix", d.Sock); err == nil {
			c.Close()
			return
		}
		select {
		case <-d.done:
			d.t.Fatalf("modexpd exited: %s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("modexpd did not listen on %s", d.Sock)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Kill ends the daemon with SIGKILL (no drain) and waits for it.
func (d *Daemon) Kill() {
	if d.cmd != nil && d.cmd.Process != nil {
		d.cmd.Process.Signal(syscall.SIGKILL)
		<-d.done
	}
}

// Stop ends the daemon with SIGTERM (drain) and waits for it.
func (d *Daemon) Stop() {
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
	case <-time.After(time.Minute):
		d.cmd.Process.Kill()
		<-d.done
	}
}

// Status is the part of the daemon's STATUS the tests read.
type Status struct {
	FaultsInjected uint64 `json:"faults_injected"`
	Ops            map[string]struct {
		Requests uint64 `json:"requests"`
		Errors   uint64 `json:"errors"`
	} `json:"ops"`
}

// Status asks the daemon for its counters (modexpd status --json).
func (d *Daemon) Status() Status {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	out, err := exec.CommandContext(ctx, d.bin, "status", "--listen", "unix:"+d.Sock, "--json").Output()
	if err != nil {
		d.t.Fatalf("modexpd status: %v", err)
	}
	var s Status
	if err := json.Unmarshal(out, &s); err != nil {
		d.t.Fatalf("modexpd status: %v\n%s", err, out)
	}
	return s
}

// Modexps is the number of MODEXP and MODEXP_CRT requests the daemon saw.
func (s Status) Modexps() uint64 {
	var n uint64
	for name, o := range s.Ops {
		if strings.HasPrefix(strings.ToUpper(name), "MODEXP") {
			n += o.Requests
		}
	}
	return n
}

// Pid is the daemon's process id (0 when it is not started).
func (d *Daemon) Pid() int {
	if d.cmd == nil || d.cmd.Process == nil {
		return 0
	}
	return d.cmd.Process.Pid
}
