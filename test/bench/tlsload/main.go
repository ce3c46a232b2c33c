// Command tlsload is the load client of the nginx benchmark
// (test/bench/nginx.sh): it makes full TLS handshakes (no session reuse)
// against one loopback server from several goroutines for a fixed time and
// prints one TSV line: handshakes per second, latency percentiles and the
// server's CPU per handshake split by process kind, read from
// /proc/<pid>/stat (utime+stime) of every process in the server's process
// group before and after the run.
//
// The first handshake verifies the server's certificate chain against -ca
// (a wrong key or certificate fails the cell); the measured ones skip the
// client-side verification, which only costs the client CPU that the server
// shares on a loopback run.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// clkTck is USER_HZ, the unit of utime and stime in /proc/<pid>/stat (100 on
// every Linux architecture Go supports).
const clkTck = 100

func main() {
	addr := flag.String("addr", "", "server host:port (loopback)")
	ca := flag.String("ca", "", "PEM certificate the server must present")
	version := flag.String("tls", "1.3", "TLS version: 1.2 or 1.3")
	key := flag.String("key", "rsa", "server key kind: rsa, ec or ed (Ed25519; picks the TLS 1.2 suite)")
	seconds := flag.Float64("seconds", 3, "measured time")
	conns := flag.Int("conns", 4, "concurrent clients")
	pgid := flag.Int("pgid", 0, "the server's process group (its master's pid) for CPU accounting")
	flag.Parse()
	if err := run(*addr, *ca, *version, *key, *seconds, *conns, *pgid); err != nil {
		fmt.Fprintln(os.Stderr, "tlsload:", err)
		os.Exit(1)
	}
}

func run(addr, caFile, version, key string, seconds float64, conns, pgid int) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s is not a loopback address", addr)
	}
	// X25519 for the key exchange; P-256 listed too, which TLS 1.2 servers
	// require for an ECDSA P-256 certificate.
	cfg := &tls.Config{ServerName: "localhost", CurvePreferences: []tls.CurveID{tls.X25519, tls.CurveP256}}
	switch version {
	case "1.2":
		cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
		cfg.CipherSuites = []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}
		if key == "ec" || key == "ed" {
			cfg.CipherSuites = []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}
		}
	case "1.3":
		cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS13, tls.VersionTLS13
	default:
		return fmt.Errorf("-tls %q: want 1.2 or 1.3", version)
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("%s: no certificate", caFile)
	}
	verified := cfg.Clone()
	verified.RootCAs = pool
	if err := handshake(addr, verified); err != nil {
		return fmt.Errorf("first handshake (verified): %w", err)
	}
	cfg.InsecureSkipVerify = true // verified above; ClientSessionCache stays nil: no resumption

	before := groupCPU(pgid)
	start := time.Now()
	deadline := start.Add(time.Duration(seconds * float64(time.Second)))
	var (
		mu       sync.Mutex
		lat      []time.Duration
		fails    atomic.Int64
		firstErr error
		wg       sync.WaitGroup
	)
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if err := handshake(addr, cfg); err != nil {
					if fails.Add(1) == 1 {
						mu.Lock()
						firstErr = err
						mu.Unlock()
					}
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	after := groupCPU(pgid)
	if len(lat) == 0 {
		return fmt.Errorf("no handshake succeeded (%d failures; first: %v)", fails.Load(), firstErr)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Millisecond)
	}
	n := float64(len(lat))
	perHS := func(kind string) float64 {
		return float64(after[kind]-before[kind]) * 1000 / clkTck / n
	}
	master, workers, helpers := perHS("master"), perHS("workers"), perHS("helpers")
	total := master + workers + helpers
	// handshakes/s, p50 ms, p99 ms, failures, then CPU ms per handshake:
	// master, workers, helpers, total; then handshakes per server CPU second.
	perCPU := 0.0
	if total > 0 {
		perCPU = 1000 / total
	}
	fmt.Printf("%.0f\t%.2f\t%.2f\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.0f\n",
		n/elapsed.Seconds(), pct(0.50), pct(0.99), fails.Load(), master, workers, helpers, total, perCPU)
	if f := fails.Load(); f > 0 {
		fmt.Fprintf(os.Stderr, "tlsload: %d handshakes failed; first: %v\n", f, firstErr)
	}
	return nil
}

// handshake makes one full TLS handshake and closes the connection.
func handshake(addr string, cfg *tls.Config) error {
	d := &net.Dialer{Timeout: 10 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return err
	}
	return c.Close()
}

// groupCPU sums utime+stime (clock ticks) of the live processes of process
// group pgid by kind: "master" (the group leader), "workers" (other nginx
// processes) and "helpers" (everything else: p11-kit-remote and its kin).
// Processes that end between the two readings lose their share; the nginx
// benchmark's processes live through a cell.
func groupCPU(pgid int) map[string]int64 {
	sum := map[string]int64{}
	if pgid <= 0 {
		return sum
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, f, err := stat(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil || len(f) < 13 {
			continue
		}
		if pg, _ := strconv.Atoi(f[2]); pg != pgid {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		kind := "helpers"
		switch {
		case pid == pgid:
			kind = "master"
		case comm == "nginx":
			kind = "workers"
		}
		sum[kind] += ut + st
	}
	return sum
}

// stat reads /proc/<pid>/stat: the command name and the fields after it
// (f[0] is the state, f[11] utime, f[12] stime).
func stat(path string) (string, []string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", nil, errors.New("bad stat")
	}
	return s[open+1 : end], strings.Fields(s[end+1:]), nil
}
