package fleet

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/asn1"
	"encoding/hex"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestFleetFault: two module host processes (test/fleet/host/host.c, dlopen of
// build/libmodexp-pkcs11-fleet.so) sign continuously with one P-256 key
// of an etcd token while the one etcd member (a child process on loopback
// ports) is killed with SIGKILL and restarted on its data. Every
// signature must verify (Go's crypto/ecdsa, outside the module), no sign
// call may fail or take long (signing never asks the cluster), signatures
// continue during the outage, a key generation by the CLI meanwhile fails
// within seconds, and each host's write (C_CreateObject of a token object)
// succeeds once the member is back.
func TestFleetFault(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(root, "build/libmodexp-pkcs11-fleet.so")
	cli := filepath.Join(root, "build/modexp-token")
	for _, need := range []string{lib, cli, "/usr/include/p11-kit-1/p11-kit/pkcs11.h"} {
		if _, err := os.Stat(need); err != nil {
			t.Skipf("%s missing: make build, make deps", need)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	run := func(env []string, name string, args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	member := filepath.Join(dir, "member")
	host := filepath.Join(dir, "host")
	run(nil, "go", "build", "-tags", "modexp_etcd", "-o", member, "./internal/etcdtest/member")
	run(nil, "cc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", host, "test/fleet/host/host.c", "-ldl")

	client, peer := "http://"+freePort(t), "http://"+freePort(t)
	data := filepath.Join(dir, "m0")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	var proc *exec.Cmd
	var memberLog bytes.Buffer
	start := func() {
		t.Helper()
		proc = exec.Command(member, data, "m0", client, peer, "m0="+peer)
		proc.Stderr = &memberLog
		out, err := proc.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := proc.Start(); err != nil {
			t.Fatal(err)
		}
		ready := make(chan bool, 1)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if sc.Text() == "ready" {
					ready <- true
					for sc.Scan() {
					}
					return
				}
			}
			ready <- false
		}()
		select {
		case ok := <-ready:
			if !ok {
				t.Fatalf("etcd member failed to start:\n%s", tail(memberLog.String()))
			}
		case <-time.After(20 * time.Second):
			t.Fatal("etcd member not ready in 20 s")
		}
	}
	kill := func() {
		if proc != nil && proc.ProcessState == nil {
			_ = proc.Process.Kill()
			_ = proc.Wait()
		}
	}
	start()
	t.Cleanup(kill)

	conf := filepath.Join(dir, "host.toml")
	if err := os.WriteFile(conf, fmt.Appendf(nil, `log = %q

[[slot]]
label = "fleet"
engine = "soft"
etcd_endpoints = [%q]
etcd_prefix = "/modexp/fault/"
etcd_dial_timeout = "1s"
etcd_request_timeout = "1s"
`, filepath.Join(dir, "module.log"), client), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"MODEXP_TOKEN_CONF=" + conf, "MODEXP_TOKEN_SO_PIN=87654321", "MODEXP_TOKEN_PIN=123456", "HOME=" + dir}
	run(env, cli, "init", "--label", "fleet", "--yes")
	run(env, cli, "keys", "generate", "--type", "ec:P-256", "--label", "fault-key")

	const seconds = 9
	// A host that does not finish within this is hung.
	hctx, hcancel := context.WithTimeout(ctx, (seconds+25)*time.Second)
	defer hcancel()
	outs := make([]bytes.Buffer, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range outs {
		cmd := exec.CommandContext(hctx, host, lib, "fleet", "123456", "fault-key", strconv.Itoa(seconds))
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdout = &outs[i]
		cmd.Stderr = &outs[i]
		cmd.WaitDelay = time.Second
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { errs[i] = cmd.Wait() })
	}
	time.Sleep(3 * time.Second)
	down := time.Now()
	kill()
	// A write while the member is down fails with CKR_DEVICE_ERROR, within
	// the timeouts (a new process: dial, open and login, 1 s each at most).
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	wcmd := exec.CommandContext(wctx, cli, "keys", "generate", "--type", "ec:P-256", "--label", "during-outage")
	wcmd.Env = append(os.Environ(), env...)
	w0 := time.Now()
	wout, werr := wcmd.CombinedOutput()
	wtook := time.Since(w0)
	wcancel()
	if werr == nil || wtook > 5*time.Second || !strings.Contains(string(wout), "CKR_DEVICE_ERROR") {
		t.Errorf("a key generation with the member down: %v after %v\n%s", werr, wtook, wout)
	}
	time.Sleep(3*time.Second - time.Since(down))
	up := time.Now()
	start()
	wg.Wait()
	t.Logf("member killed at +3 s for %v; a key generation meanwhile failed after %v", up.Sub(down).Round(time.Millisecond), wtook.Round(time.Millisecond))

	for i := range outs {
		if errs[i] != nil {
			t.Fatalf("host %d: %v\n%s", i, errs[i], tail(outs[i].String()))
		}
		var pub *ecdsa.PublicKey
		var sigs, during, bad, failed int
		var maxUS float64
		var slowest time.Time
		write := ""
		for line := range strings.Lines(outs[i].String()) {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			switch f[0] {
			case "POINT":
				pub = ecPoint(t, f[1])
			case "SIG":
				ms, _ := strconv.ParseFloat(f[1], 64)
				us, _ := strconv.ParseFloat(f[2], 64)
				if us > maxUS {
					maxUS, slowest = us, time.UnixMilli(int64(ms))
				}
				h, _ := hex.DecodeString(f[3])
				sig, _ := hex.DecodeString(f[4])
				sigs++
				if at := time.UnixMilli(int64(ms)); at.After(down) && at.Before(up) {
					during++
				}
				if pub == nil || len(sig) != 64 || !ecdsa.Verify(pub, h, new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
					bad++
				}
			case "ERR":
				failed++
			case "WRITE":
				write = strings.TrimSpace(line)
			}
		}
		t.Logf("host %d: %d signatures (%d while the member was down), slowest sign call %.1f ms (ended %+.2f s after the kill), %s",
			i, sigs, during, maxUS/1e3, slowest.Sub(down).Seconds(), write)
		if bad != 0 || failed != 0 || sigs < 100 || during < 10 {
			t.Errorf("host %d: %d bad signatures, %d failed calls, %d signatures, %d during the outage\n%s", i, bad, failed, sigs, during, tail(outs[i].String()))
		}
		if maxUS > 1e6 {
			t.Errorf("host %d: a sign call took %.0f ms", i, maxUS/1e3)
		}
		if !strings.HasPrefix(write, "WRITE 0x0 ") {
			t.Errorf("host %d: the write after recovery failed: %q", i, write)
		}
	}
	// Both hosts' writes are in the store: a fresh process sees them.
	if _, err := exec.LookPath("pkcs11-tool"); err == nil {
		cmd := exec.CommandContext(ctx, "pkcs11-tool", "--module", lib, "--login", "--pin", "123456", "--list-objects", "--type", "data")
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if n := strings.Count(string(out), "fault-write"); err != nil || n != 2 {
			t.Errorf("pkcs11-tool sees %d of the 2 objects written (%v):\n%s", n, err, out)
		}
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// ecPoint parses CKA_EC_POINT (a DER OCTET STRING of an uncompressed
// P-256 point).
func ecPoint(t *testing.T, h string) *ecdsa.PublicKey {
	t.Helper()
	der, err := hex.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	var raw []byte
	if _, err := asn1.Unmarshal(der, &raw); err != nil || len(raw) != 65 || raw[0] != 4 {
		t.Fatalf("CKA_EC_POINT %s: %v", h, err)
	}
	return &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(raw[1:33]), Y: new(big.Int).SetBytes(raw[33:])}
}

func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}
