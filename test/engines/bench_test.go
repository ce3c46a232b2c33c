package engines

import (
	"context"
	"crypto/rand"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/rsa"

	_ "github.com/modexp-token/modexp-token/engine/all"
)

// prepared returns the RSA-2048 test key prepared on eng (with exponent
// blinding, as the token does by default).
func prepared(tb testing.TB, eng engine.Engine) *rsa.Key {
	tb.Helper()
	k := testKey(tb, 2048)
	key, err := rsa.NewKey(eng, &rsa.PrivateKey{N: k.N, E: k.E, D: k.D, P: k.Primes[0], Q: k.Primes[1]},
		rsa.Options{ExponentBlinding: true})
	if err != nil {
		tb.Fatal(err)
	}
	return key
}

// runOps runs n private operations on key with workers goroutines and
// returns the wall time.
func runOps(tb testing.TB, key *rsa.Key, n, workers int) time.Duration {
	tb.Helper()
	in := make([]byte, key.Size())
	rand.Read(in[1:])
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if _, _, err := key.Private(context.Background(), in); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if e := failed.Load(); e != nil {
		tb.Fatal(e)
	}
	return time.Since(start)
}

// BenchmarkRSA2048Sign: the RSA-2048 private operation with 2 goroutines,
// on the software engine in this process ("soft") and on modexpd backed by
// the same software engine over a unix socket ("device").
//
//	go test -run '^$' -bench RSA2048Sign -benchtime 200x ./test/engines/
func BenchmarkRSA2048Sign(b *testing.B) {
	sock := filepath.Join(sockDir(b), "d.sock")
	startDaemon(b, sock, "--engine", "soft")
	for _, spec := range []string{"soft", "device:unix:" + sock} {
		name := "soft"
		if spec != "soft" {
			name = "device"
		}
		b.Run(name, func(b *testing.B) {
			eng, err := engine.Open(spec)
			if err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			key := prepared(b, eng)
			runOps(b, key, 4, 2) // warm up: connection, blinding pair
			b.ResetTimer()
			runOps(b, key, b.N, 2)
		})
	}
}

// TestDeviceOverhead measures what BenchmarkRSA2048Sign does, with a fixed
// count, and reports the device's throughput relative to the software
// engine used directly and the added time per operation. It asserts only a
// loose floor (the machine is shared); the figures are in the log.
func TestDeviceOverhead(t *testing.T) {
	const n = 60
	sock := filepath.Join(sockDir(t), "d.sock")
	startDaemon(t, sock, "--engine", "soft")
	soft, err := engine.Open("soft")
	if err != nil {
		t.Fatal(err)
	}
	defer soft.Close()
	dev, err := engine.Open("device:unix:" + sock)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	ks, kd := prepared(t, soft), prepared(t, dev)
	runOps(t, ks, 4, 2)
	runOps(t, kd, 4, 2)
	// Interleave two rounds each to even out the machine's load.
	var ws, wd time.Duration
	for range 2 {
		ws += runOps(t, ks, n/2, 2)
		wd += runOps(t, kd, n/2, 2)
	}
	ratio := ws.Seconds() / wd.Seconds()
	perS, perD := ws/time.Duration(n), wd/time.Duration(n)
	t.Logf("RSA-2048 private op, 2 goroutines, %d ops: soft %v/op (%.1f ops/s), device over unix socket %v/op (%.1f ops/s): throughput ratio %.1f%%, overhead %v per op",
		n, perS.Round(time.Microsecond), float64(n)/ws.Seconds(), perD.Round(time.Microsecond), float64(n)/wd.Seconds(), 100*ratio, (perD - perS).Round(time.Microsecond))
	if ratio < 0.5 {
		t.Fatalf("device throughput %.0f%% of the software engine's", 100*ratio)
	}
}
