//go:build modexp_etcd

// Package etcdtest starts etcd members inside a test binary (etcd's
// embeddable server) on loopback ports, for the tests of the keystore's
// etcd backend and of the module on it. Nothing else imports it.
package etcdtest

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// ReserveLoopbackURL returns http://127.0.0.1:port on a port reserved
// for t until its cleanup (see reservePorts): a connection to it is
// refused at once until a member listens there, and a member started on
// it, in this process or a child, again after a kill, never finds it
// taken by another process.
func ReserveLoopbackURL(t testing.TB) *url.URL {
	t.Helper()
	us, release, err := reservePorts(1)
	if err != nil {
		t.Fatalf("etcdtest: reserve a loopback port: %v", err)
	}
	t.Cleanup(release)
	return us[0]
}

// reservePorts returns n URLs on distinct loopback ports, each held until
// release by a TCP socket bound there with SO_REUSEADDR that never
// listens. While one is held the kernel hands its port to no bind to port
// 0 (no Listen on :0, no client's connect, of any process), a connection
// to it is refused (nothing listens: the kernel answers with a reset, the
// same at any load), and a member binds it all the same: Go's listeners
// set SO_REUSEADDR too, and two such sockets may share a port when only
// one listens. A port picked by a listener closed at once has none of
// this: another process may take it before the member binds it.
func reservePorts(n int) (us []*url.URL, release func(), err error) {
	var fds []int
	release = func() {
		for _, fd := range fds {
			_ = syscall.Close(fd)
		}
		fds = nil
	}
	defer func() {
		if err != nil {
			release()
		}
	}()
	for range n {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, nil, err
		}
		fds = append(fds, fd)
		if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
			return nil, nil, err
		}
		if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			return nil, nil, err
		}
		sa, err := syscall.Getsockname(fd)
		if err != nil {
			return nil, nil, err
		}
		u, err := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port))
		if err != nil {
			return nil, nil, err
		}
		us = append(us, u)
	}
	return us, release, nil
}

// Start starts a single-member cluster with its data in dir and returns it
// with its client URL. Close it with (*embed.Etcd).Close.
func Start(dir, name string) (*embed.Etcd, string, error) {
	us, release, err := reservePorts(2)
	if err != nil {
		return nil, "", err
	}
	defer release() // once the member listens: its listeners hold the ports
	e, err := StartAt(dir, name, us[0], us[1])
	return e, us[0].String(), err
}

// StartAt starts (or starts again, on the same data directory) a
// single-member cluster on the given client and peer URLs.
func StartAt(dir, name string, cu, pu *url.URL) (*embed.Etcd, error) {
	return startMember(dir, name, cu, pu, name+"="+pu.String())
}

// StartTLS starts a single-member cluster whose clients must use TLS: it
// serves https with certFile and keyFile and requires a client certificate
// issued by the CA in caFile. It returns the member and its client URL.
func StartTLS(dir, name, certFile, keyFile, caFile string) (*embed.Etcd, string, error) {
	us, release, err := reservePorts(2)
	if err != nil {
		return nil, "", err
	}
	defer release()
	cu, pu := us[0], us[1]
	cu.Scheme = "https"
	e, err := startMember(dir, name, cu, pu, name+"="+pu.String(), func(cfg *embed.Config) {
		cfg.ClientTLSInfo.CertFile, cfg.ClientTLSInfo.KeyFile = certFile, keyFile
		cfg.ClientTLSInfo.TrustedCAFile, cfg.ClientTLSInfo.ClientCertAuth = caFile, true
	})
	return e, cu.String(), err
}

// startMember starts one member of the cluster initial (name=peerURL,...);
// tweaks adjust its configuration.
func startMember(dir, name string, cu, pu *url.URL, initial string, tweaks ...func(*embed.Config)) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.TickMs, cfg.ElectionMs = 50, 500 // tests: elections in about a second
	cfg.Name = name
	cfg.Dir = dir
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{filepath.Join(dir, "etcd.log")}
	cfg.UnsafeNoFsync = true // tests: speed over durability
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = initial
	for _, tweak := range tweaks {
		tweak(cfg)
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(2 * time.Minute): // a guard against a hang, not a bound
		e.Close()
		return nil, fmt.Errorf("etcd not ready in 2 min")
	}
	return e, nil
}

// Shared is one member started by the first test that asks for it and
// shared by a package's tests (each on its own key prefix); the package's
// TestMain calls Stop.
type Shared struct {
	once sync.Once
	e    *embed.Etcd
	dir  string
	url  string
	err  error
	seq  atomic.Uint64
}

// Endpoint returns the shared member's client URL, starting it if needed.
func (s *Shared) Endpoint(t testing.TB) string {
	t.Helper()
	s.once.Do(func() {
		s.dir, s.err = os.MkdirTemp("", "etcdtest-")
		if s.err == nil {
			s.e, s.url, s.err = Start(s.dir, "test")
		}
	})
	if s.err != nil {
		t.Fatalf("embedded etcd: %v", s.err)
	}
	return s.url
}

// Prefix returns a key prefix no other test of the binary uses.
func (s *Shared) Prefix(t testing.TB) string {
	return fmt.Sprintf("/test/%s/%d/", t.Name(), s.seq.Add(1))
}

// Stop stops the member (if started) and removes its data.
func (s *Shared) Stop() {
	if s.e != nil {
		s.e.Close()
	}
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

// The member in a child process: the test binary runs itself with
// envServe set (its TestMain calls MaybeServe first), so a test can kill
// it with SIGKILL, a crash and not a graceful stop (which waits seconds
// for open watch streams).
const envServe = "MODEXP_ETCDTEST_SERVE"

// MaybeServe, called first in a TestMain, turns the process into an etcd
// member when it was started by StartProcess: it never returns then.
func MaybeServe() {
	v := os.Getenv(envServe)
	if v == "" {
		return
	}
	var dir, name, c, p, initial string
	if _, err := fmt.Sscan(v, &dir, &name, &c, &p, &initial); err != nil {
		fmt.Fprintln(os.Stderr, "etcdtest:", err)
		os.Exit(2)
	}
	cu, err1 := url.Parse(c)
	pu, err2 := url.Parse(p)
	if err1 != nil || err2 != nil {
		os.Exit(2)
	}
	Serve(dir, name, cu, pu, initial)
}

// Serve runs one member of the cluster initial (name=peerURL,...) until
// the process is killed; it prints "ready" once the member serves.
func Serve(dir, name string, cu, pu *url.URL, initial string) {
	if _, err := startMember(dir, name, cu, pu, initial); err != nil {
		fmt.Fprintln(os.Stderr, "etcdtest:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	select {}
}

// Process is a member running in a child process.
type Process struct {
	cmd    *exec.Cmd
	out    *childOutput
	exited chan struct{} // closed once the child has exited and been waited for
}

// StartProcess starts a single-member cluster in a child process (the
// test binary, see MaybeServe) on dir and the given URLs, and waits until
// it serves. The test's cleanup kills it; when the test failed, it logs
// what the child printed and the member's etcd.log.
func StartProcess(t testing.TB, dir, name string, cu, pu *url.URL) *Process {
	t.Helper()
	return startProcess(t, dir, name, cu, pu, name+"="+pu.String())
}

func startProcess(t testing.TB, dir, name string, cu, pu *url.URL, initial string) *Process {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %s %s %s", envServe, dir, name, cu, pu, initial))
	out := &childOutput{ready: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = (*childStdout)(out), (*childStderr)(out)
	p := &Process{cmd: cmd, out: out, exited: make(chan struct{})}
	t.Cleanup(func() { // after the kill below: all the output is in
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "etcd.log"))
			t.Logf("etcd member %s in a child process (%s, %s): %v; it printed:\n%s\n%s/etcd.log:\n%s",
				name, cu, pu, cmd.ProcessState, out.String(), dir, log)
		}
	})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(p.Kill)
	select {
	case <-out.ready:
	case <-p.exited:
		t.Fatalf("etcd child process failed to start (%v): its output is logged below", cmd.ProcessState)
	case <-time.After(2 * time.Minute): // a guard against a hang: a member that fails exits, and says so above
		t.Fatal("etcd child process not ready in 2 min")
	}
	return p
}

// childOutput is what a member in a child process prints, both streams
// in the order they came; ready is closed when stdout has said "ready".
type childOutput struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	stdout []byte // stdout until its "ready" line
	said   bool   // stdout has said "ready"
	ready  chan struct{}
}

func (o *childOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// childStdout and childStderr are the child's two streams into its
// childOutput.
type (
	childStdout childOutput
	childStderr childOutput
)

func (w *childStdout) Write(p []byte) (int, error) {
	o := (*childOutput)(w)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(p)
	if !o.said {
		o.stdout = append(o.stdout, p...)
		if bytes.HasPrefix(o.stdout, []byte("ready\n")) || bytes.Contains(o.stdout, []byte("\nready\n")) {
			o.said, o.stdout = true, nil
			close(o.ready)
		}
	}
	return len(p), nil
}

func (w *childStderr) Write(p []byte) (int, error) {
	o := (*childOutput)(w)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(p)
	return len(p), nil
}

// Kill kills the member with SIGKILL and waits for it.
func (p *Process) Kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// running reports whether the child has not exited.
func (p *Process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Stop stops the member with SIGSTOP: its connections stay open and
// nothing answers (a stalled member, as in a long pause), until Cont.
func (p *Process) Stop() {
	if p.running() {
		_ = p.cmd.Process.Signal(syscall.SIGSTOP)
	}
}

// Cont resumes a member stopped by Stop.
func (p *Process) Cont() {
	if p.running() {
		_ = p.cmd.Process.Signal(syscall.SIGCONT)
	}
}

// Member is one member of a Cluster.
type Member struct {
	Name, Dir string
	Client    *url.URL
	peer      *url.URL
	initial   string
	proc      *Process
}

// Cluster is a cluster of members in child processes.
type Cluster struct {
	Members []*Member
}

// StartCluster starts an n-member cluster in child processes on loopback
// ports, data in t.TempDir(), and waits until every member serves.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	c := &Cluster{}
	var initial []string
	us, release, err := reservePorts(2 * n) // held while the test runs: a killed member restarts on its ports
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	for i := range n {
		m := &Member{Name: fmt.Sprintf("m%d", i), Dir: t.TempDir(), Client: us[2*i], peer: us[2*i+1]}
		c.Members = append(c.Members, m)
		initial = append(initial, m.Name+"="+m.peer.String())
	}
	for _, m := range c.Members {
		m.initial = strings.Join(initial, ",")
	}
	// Members wait for each other's votes: start them together.
	var wg sync.WaitGroup
	for _, m := range c.Members {
		wg.Go(func() { m.proc = startProcess(t, m.Dir, m.Name, m.Client, m.peer, m.initial) }) // Fatal there ends only that goroutine: checked below
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return c
}

// Endpoints are the members' client URLs.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.Members {
		eps = append(eps, m.Client.String())
	}
	return eps
}

// Kill kills the member with SIGKILL.
func (m *Member) Kill() { m.proc.Kill() }

// Restart starts a killed member again on its data and ports.
func (m *Member) Restart(t testing.TB) {
	t.Helper()
	m.proc = startProcess(t, m.Dir, m.Name, m.Client, m.peer, m.initial)
}
