package engines

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
	"github.com/modexp-token/modexp-token/token/ck"
)

// deviceLine is the engine line of a slot on the daemon at sock.
func deviceLine(sock, opts string) string {
	return fmt.Sprintf("engine = %q", "device:unix:"+sock+opts)
}

// faultyDevice starts a modexpd on the software engine that injects fault
// (its --fault spec) and opens a module whose slot uses it, with the given
// fallback.
func faultyDevice(t *testing.T, fault, fallback string) (*e2e.Daemon, *mod) {
	t.Helper()
	sock := filepath.Join(e2e.SockDir(t), "d.sock")
	d := startDaemon(t, sock, "--engine", "soft", "--fault", fault)
	return d, openModule(t, deviceLine(sock, ""), fallback)
}

// TestDeviceBitflip: 10,000 RSA-1024 signatures through the token on a
// modexpd that flips a bit of 1% of its results (each CRT half is one
// request, so about 2% of signatures meet a fault). With fallback "soft"
// every signature is released and valid; the faults are counted. With
// fallback "fail" the faulty ones are refused with CKR_DEVICE_ERROR.
// -bitflip.signatures sets the count.
func TestDeviceBitflip(t *testing.T) {
	total := max(1, *bitflipSigs)
	if testing.Short() {
		total = 1000
	}
	for _, fallback := range []string{"soft", "fail"} {
		t.Run(fallback, func(t *testing.T) {
			n := total
			if fallback == "fail" && !testing.Short() {
				// Not with -short: 200 signatures at 1 % per request
				// met no fault about one run in eight.
				n = total / 5
			}
			d, md := faultyDevice(t, "bitflip:0.01", fallback)
			key := testKey(t, 1024)
			sh := md.session()
			h := md.importKey(sh, key, 1)
			before := d.Status()

			const workers = 4
			var (
				next, released, invalid, refused, other atomic.Int64
				wg                                      sync.WaitGroup
				firstErr                                atomic.Value
			)
			start := time.Now()
			for range workers {
				wg.Go(func() {
					sh := md.session()
					for {
						i := next.Add(1)
						if i > int64(n) {
							return
						}
						msg := []byte(fmt.Sprintf("message %d", i))
						sig, err := md.sign(sh, h, msg)
						switch {
						case err == nil:
							released.Add(1)
							if verifySig(&key.PublicKey, msg, sig) != nil {
								invalid.Add(1)
							}
						case isRV(err, ck.CKR_DEVICE_ERROR):
							refused.Add(1)
						default:
							other.Add(1)
							firstErr.CompareAndSwap(nil, err)
						}
					}
				})
			}
			wg.Wait()
			el := time.Since(start)
			after := d.Status()
			st := md.status()
			injected := after.FaultsInjected - before.FaultsInjected
			t.Logf("fallback %s: %d signatures in %v (%.0f/s): released %d, invalid %d, refused %d; faults detected by the token %d, injected by modexpd %d (requests %d)",
				fallback, n, el.Round(time.Millisecond), float64(n)/el.Seconds(), released.Load(), invalid.Load(), refused.Load(),
				st.Faults, injected, after.Modexps()-before.Modexps())
			if e := firstErr.Load(); e != nil {
				t.Fatalf("%d unexpected errors, first: %v", other.Load(), e)
			}
			if invalid.Load() != 0 {
				t.Fatalf("%d invalid signatures released", invalid.Load())
			}
			if injected == 0 || st.Faults == 0 {
				t.Fatalf("no fault injected (%d) or detected (%d): the test proves nothing", injected, st.Faults)
			}
			// Every injected flip spoils its signature: the token sees each
			// one, except when both halves of one signature were hit (one
			// fault for two flips). Faults may also count a request that
			// missed its cost-model deadline on a loaded machine, so more
			// faults than flips is not an error.
			if st.Faults < injected*9/10 {
				t.Fatalf("faults detected %d, injected %d", st.Faults, injected)
			}
			switch fallback {
			case "soft":
				if released.Load() != int64(n) {
					t.Fatalf("released %d of %d with the software fallback", released.Load(), n)
				}
			case "fail":
				if uint64(refused.Load()) != st.DeviceErrors || released.Load()+refused.Load() != int64(n) {
					t.Fatalf("refused %d, device errors %d, released %d", refused.Load(), st.DeviceErrors, released.Load())
				}
			}
		})
	}
}

// TestDeviceZeroAbove: modexpd returns all-zero results for moduli above
// 512 bits. engine/alg/rsa sends the CRT halves (512 bits for RSA-1024, 1024
// for RSA-2048), so zero-above:512 spoils RSA-2048 and spares RSA-1024
// (zero-above:1024 would only hit 4096-bit keys). The device's self-test
// at slot open fails (its 1024- and 2048-bit KATs), RSA-1024 works, and
// RSA-2048 is refused (fail) or done in software (soft).
func TestDeviceZeroAbove(t *testing.T) {
	for _, fallback := range []string{"fail", "soft"} {
		t.Run(fallback, func(t *testing.T) {
			sock := filepath.Join(e2e.SockDir(t), "d.sock")
			startDaemon(t, sock, "--engine", "soft", "--fault", "zero-above:512")
			md := openModule(t, deviceLine(sock, ""), fallback)
			if st := md.status(); st.SelfTest == "passed" {
				t.Fatalf("self-test passed on a device that zeroes above 512 bits")
			}
			sh := md.session()
			k1, k2 := testKey(t, 1024), testKey(t, 2048)
			h1, h2 := md.importKey(sh, k1, 1), md.importKey(sh, k2, 2)
			for i := range 3 {
				msg := []byte(fmt.Sprintf("zero-above %d", i))
				sig, err := md.sign(sh, h1, msg)
				if err != nil {
					t.Fatalf("RSA-1024: %v", err)
				}
				if err := verifySig(&k1.PublicKey, msg, sig); err != nil {
					t.Fatalf("RSA-1024 signature invalid: %v", err)
				}
				sig, err = md.sign(sh, h2, msg)
				if fallback == "fail" {
					if !isRV(err, ck.CKR_DEVICE_ERROR) || sig != nil {
						t.Fatalf("RSA-2048 on the faulty device: %v (sig %d bytes)", err, len(sig))
					}
					continue
				}
				if err != nil {
					t.Fatalf("RSA-2048 with soft fallback: %v", err)
				}
				if err := verifySig(&k2.PublicKey, msg, sig); err != nil {
					t.Fatalf("RSA-2048 signature invalid: %v", err)
				}
			}
			st := md.status()
			t.Logf("fallback %s: %+v", fallback, st)
			if st.KATFailures == 0 || len(st.KATSizes) != 1 || st.KATSizes[0] != 1024 {
				t.Fatalf("KAT failures %d, passed sizes %v: want failures at 2048 and a pass at 1024", st.KATFailures, st.KATSizes)
			}
		})
	}
}

// TestDeviceKillRestart: signers on a device with a 2 s deadline; the
// daemon is killed (SIGKILL) mid-load, then restarted on the same socket.
// While it is down every call ends within its deadline (failing with
// CKR_DEVICE_ERROR under "fail", falling back under "soft"); after the
// restart the same Module signs on the device again.
func TestDeviceKillRestart(t *testing.T) {
	for _, fallback := range []string{"fail", "soft"} {
		t.Run(fallback, func(t *testing.T) {
			sock := filepath.Join(e2e.SockDir(t), "d.sock")
			d := startDaemon(t, sock, "--engine", "soft")
			md := openModule(t, deviceLine(sock, ",timeout=2s"), fallback)
			key := testKey(t, 2048)
			h := md.importKey(md.session(), key, 1)

			var (
				stop                        atomic.Bool
				ok, failed, invalid, others atomic.Int64
				slowest                     atomic.Int64
				wg                          sync.WaitGroup
				lastOK                      atomic.Int64 // unix nanos of the last success
			)
			for w := range 3 {
				wg.Go(func() {
					sh := md.session()
					for i := 0; !stop.Load(); i++ {
						msg := []byte(fmt.Sprintf("w%d-%d", w, i))
						t0 := time.Now()
						sig, err := md.sign(sh, h, msg)
						if d := int64(time.Since(t0)); d > slowest.Load() {
							slowest.Store(d)
						}
						switch {
						case err == nil:
							ok.Add(1)
							lastOK.Store(time.Now().UnixNano())
							if verifySig(&key.PublicKey, msg, sig) != nil {
								invalid.Add(1)
							}
						case isRV(err, ck.CKR_DEVICE_ERROR):
							failed.Add(1)
							time.Sleep(10 * time.Millisecond)
						default:
							others.Add(1)
							t.Errorf("unexpected error: %v", err)
							return
						}
					}
				})
			}
			// The signers are under way (however slowly they start): a few
			// signatures first.
			waitFor(t, "signatures before the kill", func() bool { return ok.Load() >= 3 })
			okBefore, failedBefore := ok.Load(), failed.Load()
			d.Kill()
			// Down for 3 s at least, and until a call has met the dead
			// device: refused under "fail", signed in software under "soft".
			time.Sleep(3 * time.Second)
			waitFor(t, "a call while the device is down", func() bool {
				if fallback == "fail" {
					return failed.Load() > failedBefore
				}
				return ok.Load() > okBefore
			})
			okDown, failedDown := ok.Load()-okBefore, failed.Load()
			d.Start()
			restarted := time.Now()
			reqBefore := d.Status().Modexps()
			// Recovery: the device takes requests again, and a signature
			// ends after the restart.
			var recovered time.Duration
			waitFor(t, "the device taking requests again", func() bool {
				recovered = time.Since(restarted)
				return d.Status().Modexps() > reqBefore+10
			})
			waitFor(t, "a signature after the restart", func() bool { return lastOK.Load() >= restarted.UnixNano() })
			stop.Store(true)
			wg.Wait()
			st := md.status()
			t.Logf("fallback %s: before kill %d ok; while down (3 s) %d ok, %d refused; device back %v after restart; slowest call %v; total ok %d refused %d; %+v",
				fallback, okBefore, okDown, failedDown, recovered.Round(time.Millisecond),
				time.Duration(slowest.Load()).Round(time.Millisecond), ok.Load(), failed.Load(), st)
			if okBefore == 0 {
				t.Fatal("no signature before the kill")
			}
			if invalid.Load() != 0 {
				t.Fatalf("%d invalid signatures", invalid.Load())
			}
			// Every call ended (wg.Wait returned): none hung on the dead
			// device; the slowest is logged above.
			switch fallback {
			case "fail":
				if failedDown == 0 {
					t.Fatal("no call failed while the device was down")
				}
			case "soft":
				if okDown == 0 || failed.Load() != 0 {
					t.Fatalf("soft fallback while down: %d ok, %d refused", okDown, failed.Load())
				}
			}
		})
	}
}

// TestDevicePool: a slot with engines = [a, b] spreads its load over two
// daemons; with one killed the other carries every request, without a
// single refused signature (fallback "fail"); restarted, it takes requests
// again.
func TestDevicePool(t *testing.T) {
	dir := e2e.SockDir(t)
	sa, sb := filepath.Join(dir, "a.sock"), filepath.Join(dir, "b.sock")
	a := startDaemon(t, sa, "--engine", "soft")
	b := startDaemon(t, sb, "--engine", "soft")
	md := openModule(t, fmt.Sprintf("engines = [%q, %q]", "device:unix:"+sa+",timeout=2s", "device:unix:"+sb+",timeout=2s"), "fail")
	key := testKey(t, 2048)
	h := md.importKey(md.session(), key, 1)
	signN := func(n int) {
		t.Helper()
		var wg sync.WaitGroup
		var bad atomic.Int64
		for w := range 2 {
			wg.Go(func() {
				sh := md.session()
				for i := range n / 2 {
					msg := []byte(fmt.Sprintf("pool %d %d", w, i))
					sig, err := md.sign(sh, h, msg)
					if err != nil || verifySig(&key.PublicKey, msg, sig) != nil {
						bad.Add(1)
						t.Errorf("signature %d/%d: %v", w, i, err)
					}
				}
			})
		}
		wg.Wait()
		if bad.Load() > 0 {
			t.Fatalf("%d signatures failed", bad.Load())
		}
	}
	a0, b0 := a.Status().Modexps(), b.Status().Modexps()
	signN(100)
	a1, b1 := a.Status().Modexps(), b.Status().Modexps()
	t.Logf("100 signatures: device a %d requests, device b %d", a1-a0, b1-b0)
	if a1-a0 < 40 || b1-b0 < 40 {
		t.Fatalf("load not spread: a %d, b %d requests for 200 halves", a1-a0, b1-b0)
	}
	a.Kill()
	signN(100)
	b2 := b.Status().Modexps()
	t.Logf("a killed, 100 signatures: device b %d requests", b2-b1)
	if b2-b1 < 200 {
		t.Fatalf("device b took %d requests for 200 halves", b2-b1)
	}
	a.Start()
	// The pool tries a again after its cool-down, which grew (up to 10 s)
	// while a was down: signatures until a takes requests (a hang guard,
	// not a bound on the cool-down).
	rounds := 0
	waitFor(t, "the restarted device taking requests", func() bool {
		signN(10)
		rounds++
		return a.Status().Modexps() > 0
	})
	t.Logf("a restarted: device a %d requests after %d signatures; %+v", a.Status().Modexps(), 10*rounds, md.status())
}

// waitFor polls cond until it holds, failing after two minutes: a hang
// guard, not a bound on how long a loaded machine may take.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 2 minutes", what)
		}
	}
}
