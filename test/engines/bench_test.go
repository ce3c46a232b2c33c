package engines

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/rsa"

	_ "github.com/modexp-token/modexp-token/engine/backend/all"
	"github.com/modexp-token/modexp-token/test/internal/e2e"
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
	sock := filepath.Join(e2e.SockDir(b), "d.sock")
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

// cpuTime is the CPU time (user + system) consumed so far by process pid,
// in nanoseconds, from the scheduler's per-thread counters
// (/proc/PID/task/*/schedstat, nanosecond resolution).
func cpuTime(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatalf("cpu time: %v", err)
	}
	var total time.Duration
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if err != nil {
			continue // the thread ended meanwhile
		}
		var ns int64
		fmt.Sscan(string(b), &ns)
		total += time.Duration(ns)
	}
	return total
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// The flags of BenchmarkDeviceOverhead and TestDeviceBitflip.
var (
	overheadProfile = flag.String("overhead.cpuprofile", "", "BenchmarkDeviceOverhead: modexpd's CPU profile `FILE`")
	bitflipSigs     = flag.Int("bitflip.signatures", 10000, "TestDeviceBitflip: signatures (1000 with -short)")
)

// BenchmarkDeviceOverhead measures what BenchmarkRSA2048Sign does, in b.N
// rounds of 40 operations interleaving the software engine used directly
// and the device (modexpd backed by the same engine, over a unix socket),
// and reports medians over the rounds: wall time per operation (throughput
// ratio) and CPU time per operation, the client's (this process) plus, for
// the device, the daemon's. CPU time is what the protocol really adds; wall
// time on a shared machine also holds other people's load, which is why
// this is a benchmark and not a test. -benchtime Nx sets the rounds;
// -overhead.cpuprofile=FILE has modexpd write a CPU profile there.
//
//	go test -run '^$' -bench DeviceOverhead -benchtime 21x -v ./test/engines/
func BenchmarkDeviceOverhead(b *testing.B) {
	const perRound = 40
	sock := filepath.Join(e2e.SockDir(b), "d.sock")
	args := []string{"--engine", "soft"}
	if p := *overheadProfile; p != "" {
		args = append(args, "--cpuprofile", p)
	}
	d := startDaemon(b, sock, args...)
	soft, err := engine.Open("soft")
	if err != nil {
		b.Fatal(err)
	}
	defer soft.Close()
	dev, err := engine.Open("device:unix:" + sock)
	if err != nil {
		b.Fatal(err)
	}
	defer dev.Close()
	ks, kd := prepared(b, soft), prepared(b, dev)
	runOps(b, ks, 8, 2)
	runOps(b, kd, 8, 2)
	self, dpid := os.Getpid(), d.Pid()
	var wallS, wallD, cpuS, cpuD, cpuDC, cpuDD []time.Duration
	per := func(d time.Duration) time.Duration { return d / perRound }
	b.ResetTimer()
	for range b.N {
		c0 := cpuTime(b, self)
		w := runOps(b, ks, perRound, 2)
		wallS, cpuS = append(wallS, per(w)), append(cpuS, per(cpuTime(b, self)-c0))

		c0, dd0 := cpuTime(b, self), cpuTime(b, dpid)
		w = runOps(b, kd, perRound, 2)
		cc, dc := cpuTime(b, self)-c0, cpuTime(b, dpid)-dd0
		wallD, cpuD = append(wallD, per(w)), append(cpuD, per(cc+dc))
		cpuDC, cpuDD = append(cpuDC, per(cc)), append(cpuDD, per(dc))
	}
	b.StopTimer()
	ws, wd := median(wallS), median(wallD)
	cs, cd := median(cpuS), median(cpuD)
	ratio := ws.Seconds() / wd.Seconds()
	b.Logf("RSA-2048 private op, 2 goroutines, %d rounds of %d ops, medians: soft %v/op wall, device %v/op wall: throughput ratio %.1f%%, wall overhead %v/op",
		b.N, perRound, ws.Round(time.Microsecond), wd.Round(time.Microsecond), 100*ratio, (wd - ws).Round(time.Microsecond))
	b.Logf("CPU per op: soft %v; device %v (client %v + daemon %v): CPU overhead %v/op (%.1f%%)",
		cs.Round(time.Microsecond), cd.Round(time.Microsecond), median(cpuDC).Round(time.Microsecond), median(cpuDD).Round(time.Microsecond),
		(cd - cs).Round(time.Microsecond), 100*(cd.Seconds()/cs.Seconds()-1))
	b.ReportMetric(0, "ns/op") // a round's time says nothing; the metrics below do
	b.ReportMetric(float64(ws.Microseconds()), "soft-µs/op")
	b.ReportMetric(float64(wd.Microseconds()), "device-µs/op")
	b.ReportMetric(100*ratio, "throughput-%")
	b.ReportMetric(100*(cd.Seconds()/cs.Seconds()-1), "cpu-overhead-%")
}
