package fork

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// handshakesPerKey is the number of sequential full TLS handshakes per key.
const handshakesPerKey = 200

// keyURI is the PKCS#11 URI of the private key labelled label.
func keyURI(label string) string {
	return "pkcs11:token=t;object=" + label + ";type=private;pin-value=" + userPIN
}

// tlsKey is one key nginx serves: its label on the token and its
// certificate.
type tlsKey struct {
	label string
	cert  string // PEM file
	pool  *x509.CertPool
}

// TestNginx runs nginx (Debian's, from a private prefix, never the system
// service) in its default master/worker mode with ssl_engine pkcs11 and the
// token's RSA-2048 and P-256 keys; the master loads the keys, its workers
// (forked) sign every handshake through their own copy of the module. Both the
// foreground (daemon off) and the daemonised master (a forked child itself,
// whose workers are grandchildren) are tested.
func TestNginx(t *testing.T) {
	e2e.NeedTool(t, "nginx")
	e2e.NeedTool(t, "openssl")
	if _, err := os.Stat(e2e.LibP11Engine); err != nil {
		t.Fatalf("libp11 engine missing (Debian libengine-pkcs11-openssl): %v", err)
	}
	for _, daemon := range []bool{false, true} {
		name := "foreground"
		if daemon {
			name = "daemon"
		}
		t.Run(name, func(t *testing.T) { testNginx(t, daemon) })
	}
}

func testNginx(t *testing.T, daemon bool) {
	tk := newToken(t)
	conf := tk.path("openssl.cnf")
	writeFile(t, conf, e2e.OpenSSLEngineConf(libPath))
	engineEnv := []string{"OPENSSL_CONF=" + conf}

	keys := []*tlsKey{{label: "rsa"}}
	if tk.ecErr == "" {
		keys = append(keys, &tlsKey{label: "ec"})
	}
	var sslLines strings.Builder
	certReq := func(k *tlsKey) (string, error) {
		k.cert = tk.path(k.label + ".crt")
		args := []string{"req", "-new", "-x509", "-engine", "pkcs11", "-keyform", "engine", "-key", keyURI(k.label),
			"-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost", "-days", "2", "-out", k.cert}
		if k.label != "ed" {
			args = append(args, "-sha256")
		}
		return tk.run(engineEnv, 60*time.Second, "openssl", args...)
	}
	// Ed25519 (TLS 1.3), where the engine can load an EdDSA key: libp11
	// 0.4.12's (Debian 12) cannot, and fails on every key of a token that
	// holds one, so the key is deleted again and edErr says why its cases
	// skip.
	tk.p11(nil, "--login", "--pin", userPIN, "--keypairgen", "--key-type", "EC:edwards25519", "--id", "03", "--label", "ed")
	edErr := ""
	if out, err := certReq(&tlsKey{label: "ed"}); err != nil {
		if !strings.Contains(out, "PKCS11_get_private_key returned NULL") {
			t.Fatalf("openssl req (ed): %v\n%s", err, out)
		}
		edErr = "the libp11 engine " + e2e.LibP11Engine + " cannot load an Ed25519 key (PKCS11_get_private_key returned NULL)"
		for _, typ := range []string{"privkey", "pubkey"} {
			tk.p11(nil, "--login", "--pin", userPIN, "--delete-object", "--type", typ, "--label", "ed")
		}
	} else {
		keys = append(keys, &tlsKey{label: "ed"})
	}
	for _, k := range keys {
		if out, err := certReq(k); err != nil {
			t.Fatalf("openssl req (%s): %v\n%s", k.label, err, out)
		}
		k.pool = x509.NewCertPool()
		block, _ := pem.Decode(readFile(t, k.cert))
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		k.pool.AddCert(c)
		fmt.Fprintf(&sslLines, "        ssl_certificate %s;\n        ssl_certificate_key \"engine:pkcs11:%s\";\n",
			k.cert, keyURI(k.label))
	}

	port := freePort(t)
	prefix := tk.path("nginx")
	if err := os.MkdirAll(filepath.Join(prefix, "logs"), 0o700); err != nil {
		t.Fatal(err)
	}
	user := ""
	if os.Geteuid() == 0 {
		// Workers would run as nobody, who cannot reach the token in
		// t.TempDir(); the token is opened as the worker's user.
		user = "user root;"
	}
	daemonLine := "daemon off;"
	if daemon {
		daemonLine = "daemon on;"
	}
	nginxConf := filepath.Join(prefix, "nginx.conf")
	pidFile := filepath.Join(prefix, "nginx.pid")
	writeFile(t, nginxConf, fmt.Sprintf(`%s
%s
worker_processes 2;
pid %s;
error_log %s info;
ssl_engine pkcs11;
events { worker_connections 64; }
http {
    access_log off;
    server {
        listen 127.0.0.1:%d ssl;
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_session_cache off;
        ssl_session_tickets off;
%s        location / { return 200 "ok\n"; }
    }
}
`, user, daemonLine, pidFile, filepath.Join(prefix, "logs", "error.log"), port, sslLines.String()))

	// Start nginx in its own process group (daemon mode: its own session).
	cmd := exec.Command("nginx", "-p", prefix, "-c", nginxConf, "-e", filepath.Join(prefix, "logs", "error.log"))
	cmd.Env = append(append([]string{}, tk.env...), engineEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := os.Create(filepath.Join(prefix, "stdout"))
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var master int
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	if daemon {
		select {
		case err := <-waited:
			if err != nil {
				t.Fatalf("nginx (daemonising): %v\n%s", err, readFile(t, filepath.Join(prefix, "stdout")))
			}
		case <-time.After(60 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatal("nginx did not daemonise within 60 s")
		}
		master = readPid(t, pidFile, 2*time.Minute)
	} else {
		master = cmd.Process.Pid
	}
	group := master // daemon: setsid made the master a group leader
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = syscall.Kill(-group, syscall.SIGKILL)
			t.Logf("error log:\n%s", readFile(t, filepath.Join(prefix, "logs", "error.log")))
		}
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	waitListening(t, addr, 2*time.Minute)

	// Each forced signature scheme, through openssl s_client, verifying the
	// certificate chain and checking the server's signature type.
	variants := []struct {
		name, key, want string
		args            []string
	}{
		{"TLS1.3 RSA-PSS", "rsa", "RSA-PSS", []string{"-tls1_3", "-sigalgs", "rsa_pss_rsae_sha256"}},
		{"TLS1.2 ECDHE-RSA PKCS#1 v1.5", "rsa", "RSA", []string{"-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256",
			"-sigalgs", "RSA+SHA256"}},
		{"TLS1.2 ECDHE-RSA PSS", "rsa", "RSA-PSS", []string{"-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256",
			"-sigalgs", "rsa_pss_rsae_sha256"}},
		{"TLS1.3 ECDSA", "ec", "ECDSA", []string{"-tls1_3", "-sigalgs", "ecdsa_secp256r1_sha256"}},
		{"TLS1.2 ECDHE-ECDSA", "ec", "ECDSA", []string{"-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-GCM-SHA256",
			"-sigalgs", "ECDSA+SHA256"}},
		{"TLS1.3 Ed25519", "ed", "Ed25519", []string{"-tls1_3", "-sigalgs", "ed25519"}},
	}
	sclient := func(t *testing.T, round string) {
		for _, v := range variants {
			t.Run(round+"/"+v.name, func(t *testing.T) {
				if v.key == "ec" && tk.ecErr != "" {
					t.Fatalf("%s: %s", v.name, tk.ecErr)
				}
				if v.key == "ed" && edErr != "" {
					t.Skip(edErr)
				}
				for i := 0; i < 3; i++ {
					args := append([]string{"s_client", "-connect", addr, "-servername", "localhost",
						"-CAfile", tk.path(v.key + ".crt"), "-verify_return_error", "-no_ticket"}, v.args...)
					outS, err := tk.run(nil, 2*time.Minute, "openssl", args...) // a hang guard
					if err != nil || !strings.Contains(outS, "Peer signature type: "+v.want+"\n") ||
						!strings.Contains(outS, "Verify return code: 0 (ok)") {
						t.Fatalf("openssl s_client %v: %v\n%s", v.args, err, outS)
					}
				}
			})
		}
	}
	// handshakes does n sequential full handshakes per key with crypto/tls,
	// each verifying the chain to that key's certificate.
	handshakes := func(t *testing.T, n int) {
		for _, k := range keys {
			if k.label == "ed" {
				continue // no suite pins it: s_client's -sigalgs ed25519 does (variants)
			}
			suite := tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
			if k.label == "ec" {
				suite = tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
			}
			for _, ver := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
				cfg := &tls.Config{ServerName: "localhost", RootCAs: k.pool, MinVersion: ver, MaxVersion: ver,
					CipherSuites: []uint16{suite}}
				if ver == tls.VersionTLS13 && len(keys) > 1 {
					continue // nginx picks the certificate; TLS 1.2 suites pin it
				}
				for i := 0; i < n; i++ {
					c, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Minute}, "tcp", addr, cfg) // a hang guard
					if err != nil {
						t.Fatalf("%s handshake %d (TLS %x): %v", k.label, i, ver, err)
					}
					_ = c.Close()
				}
			}
		}
	}

	start := time.Now()
	handshakes(t, handshakesPerKey)
	t.Logf("%d sequential handshakes per key in %v", handshakesPerKey, time.Since(start).Round(time.Millisecond))
	sclient(t, "first workers")
	if tk.ecErr != "" {
		t.Errorf("ECDSA handshakes not run: %s", tk.ecErr)
	}

	// No helper process: the workers serve in process.
	before := groupProcs(group)
	if n := countComm(before, "nginx"); n != len(before) {
		t.Errorf("%d processes other than nginx in the process group: %v", len(before)-n, before)
	}
	oldWorkers := workers(before, master)
	if len(oldWorkers) != 2 {
		t.Fatalf("workers before reload: %v (all: %v)", oldWorkers, before)
	}

	// Reload: new workers replace the old ones and serve.
	if err := syscall.Kill(master, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute) // hang guards, here and below
	for {
		now := workers(groupProcs(group), master)
		replaced := len(now) == 2
		for _, p := range now {
			for _, o := range oldWorkers {
				if p == o {
					replaced = false
				}
			}
		}
		if replaced {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("workers not replaced 2 minutes after SIGHUP: old %v, now %v", oldWorkers, now)
		}
		time.Sleep(50 * time.Millisecond)
	}
	handshakes(t, 20)
	sclient(t, "after reload")

	// Stop: every process of the group ends.
	stopped = true
	if err := syscall.Kill(master, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(2 * time.Minute)
	for {
		left := groupProcs(group)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-group, syscall.SIGKILL)
			t.Fatalf("processes left 2 minutes after SIGTERM: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !daemon {
		select {
		case err := <-waited:
			if err != nil {
				t.Errorf("nginx exit: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("nginx master not reaped")
		}
	}
	errLog := string(readFile(t, filepath.Join(prefix, "logs", "error.log")))
	for _, bad := range []string{"[alert]", "[emerg]", "[crit]", "exited on signal"} {
		if strings.Contains(errLog, bad) {
			t.Errorf("nginx error log has %q:\n%s", bad, errLog)
		}
	}
}

// proc is one live process of a process group.
type proc struct {
	pid, ppid int
	comm      string
}

func (p proc) String() string { return fmt.Sprintf("%d(%s,ppid %d)", p.pid, p.comm, p.ppid) }

// groupProcs lists the live (not zombie) processes of process group pgid.
func groupProcs(pgid int) []proc {
	ents, _ := os.ReadDir("/proc")
	var ps []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		open, closeP := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closeP < 0 {
			continue
		}
		f := strings.Fields(s[closeP+1:])
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pg, _ := strconv.Atoi(f[2])
		if pg == pgid {
			ps = append(ps, proc{pid: pid, ppid: ppid, comm: s[open+1 : closeP]})
		}
	}
	return ps
}

func countComm(ps []proc, comm string) int {
	n := 0
	for _, p := range ps {
		if p.comm == comm {
			n++
		}
	}
	return n
}

// workers are the nginx children of the master.
func workers(ps []proc, master int) []int {
	var w []int
	for _, p := range ps {
		if p.ppid == master && p.comm == "nginx" {
			w = append(w, p.pid)
		}
	}
	return w
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitListening(t *testing.T, addr string, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for ctx.Err() == nil {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			_ = c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("nothing listens on %s after %v", addr, within)
}

func readPid(t *testing.T, path string, within time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				return pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no pid in %s after %v", path, within)
	return 0
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
