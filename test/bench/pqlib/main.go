// Command pqlib measures the libraries under the token's post-quantum,
// Ed448 and X25519 mechanisms, called directly in Go, beside the same
// operations through the module (the TSV p11bench writes): what the token
// adds to the library, per CPU second.
//
// Each operation runs at each thread count for the given seconds (one
// goroutine per thread, each locked to its OS thread), as the library
// alone and, for signatures, as the library's signature followed by its
// verification: what the token does, since it verifies every signature
// before release. The rates are operations per second of process CPU
// time (getrusage), as p11bench's ratio/CPU column.
//
//	go run ./test/bench/pqlib -seconds 1 -threads 1,2 -tsv before.tsv
//	(p11bench ... --tsv bench.tsv)
//	go run ./test/bench/pqlib -seconds 1 -threads 1,2 -before before.tsv -ours bench.tsv
//
// make bench runs it before and after p11bench (test/bench/run.sh): the
// library's rates are the mean of the two runs, which bracket the module's
// on a machine whose load drifts.
package main

import (
	"bufio"
	"crypto/ecdh"
	"crypto/mlkem"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cloudflare/circl/sign/ed448"
	"github.com/cloudflare/circl/sign/mldsa/mldsa44"
	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
	"github.com/cloudflare/circl/sign/mldsa/mldsa87"
	"github.com/cloudflare/circl/sign/slhdsa"
)

// op is one row: id is p11bench's op id, lib the library's operation on a
// 32-byte message, check (signatures only) the verification the token adds.
type op struct {
	id, title string
	lib       func(msg []byte) []byte
	check     func(msg, sig []byte) bool
}

func main() {
	seconds := flag.Float64("seconds", 1, "seconds per operation, thread count and variant")
	threads := flag.String("threads", "1,2", "thread counts")
	only := flag.String("only", "", "comma-separated substrings of op ids (default: all)")
	ours := flag.String("ours", "", "p11bench's TSV: print the module's rates and the overhead beside the library's")
	tsv := flag.String("tsv", "", "write a TSV here")
	before := flag.String("before", "", "a TSV of an earlier run: the library's rates are the mean of both")
	flag.Parse()
	ts, err := parseThreads(*threads)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pqlib:", err)
		os.Exit(2)
	}
	ops, err := operations()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pqlib:", err)
		os.Exit(1)
	}
	var module map[string]float64
	if *ours != "" {
		if module, err = readOurs(*ours); err != nil {
			fmt.Fprintln(os.Stderr, "pqlib:", err)
			os.Exit(1)
		}
	}
	var earlier map[string][2]float64
	if *before != "" {
		if earlier, err = readBefore(*before); err != nil {
			fmt.Fprintln(os.Stderr, "pqlib:", err)
			os.Exit(1)
		}
	}
	var rows []row
	for _, o := range ops {
		if !selected(o.id, *only) {
			continue
		}
		for _, n := range ts {
			r := row{op: o, threads: n, lib: measure(o, n, *seconds, false)}
			if o.check != nil {
				r.libCheck = measure(o, n, *seconds, true)
			}
			r.module = module[key(o.id, n)]
			if e, ok := earlier[key(o.id, n)]; ok {
				r.lib.perCPU = (r.lib.perCPU + e[0]) / 2
				r.libCheck.perCPU = (r.libCheck.perCPU + e[1]) / 2
				r.runs = 2
			}
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	printTable(os.Stdout, rows, *seconds)
	if *tsv != "" {
		if err := writeTSV(*tsv, rows); err != nil {
			fmt.Fprintln(os.Stderr, "pqlib:", err)
			os.Exit(1)
		}
	}
}

// operations builds the rows with fresh keys.
func operations() ([]op, error) {
	// ML-DSA, hedged with an empty context, as the token signs by default.
	pk44, sk44, err44 := mldsa44.GenerateKey(rand.Reader)
	pk65, sk65, err65 := mldsa65.GenerateKey(rand.Reader)
	pk87, sk87, err87 := mldsa87.GenerateKey(rand.Reader)
	if err := errors.Join(err44, err65, err87); err != nil {
		return nil, fmt.Errorf("ML-DSA keys: %w", err)
	}
	var ops []op
	for _, d := range []struct {
		id, name string
		size     int
		signTo   func(msg, sig []byte) error
		verify   func(msg, sig []byte) bool
	}{
		{"mldsa44", "ML-DSA-44", mldsa44.SignatureSize, func(m, s []byte) error { return mldsa44.SignTo(sk44, m, nil, true, s) },
			func(m, s []byte) bool { return mldsa44.Verify(pk44, m, nil, s) }},
		{"mldsa65", "ML-DSA-65", mldsa65.SignatureSize, func(m, s []byte) error { return mldsa65.SignTo(sk65, m, nil, true, s) },
			func(m, s []byte) bool { return mldsa65.Verify(pk65, m, nil, s) }},
		{"mldsa87", "ML-DSA-87", mldsa87.SignatureSize, func(m, s []byte) error { return mldsa87.SignTo(sk87, m, nil, true, s) },
			func(m, s []byte) bool { return mldsa87.Verify(pk87, m, nil, s) }},
	} {
		sign := func(m []byte) []byte {
			sig := make([]byte, d.size)
			if err := d.signTo(m, sig); err != nil {
				panic(err)
			}
			return sig
		}
		ops = append(ops,
			op{id: d.id + "-sign", title: d.name + " sign", lib: sign, check: d.verify},
			op{id: d.id + "-verify", title: d.name + " verify", lib: verifier(d.verify, sign(make([]byte, 32)))})
	}
	for _, s := range []struct {
		id  slhdsa.ID
		opn string
	}{{slhdsa.SHA2_128f, "slhdsa128f-sign"}, {slhdsa.SHA2_128s, "slhdsa128s-sign"}} {
		pk, sk, err := slhdsa.GenerateKey(rand.Reader, s.id)
		if err != nil {
			return nil, fmt.Errorf("%s key: %w", s.id, err)
		}
		ops = append(ops, op{id: s.opn, title: s.id.String() + " sign",
			lib: func(m []byte) []byte {
				sig, err := slhdsa.SignRandomized(&sk, rand.Reader, slhdsa.NewMessage(m), nil)
				if err != nil {
					panic(err)
				}
				return sig
			},
			check: func(m, sig []byte) bool { return slhdsa.Verify(&pk, slhdsa.NewMessage(m), sig, nil) }})
	}
	pk448, sk448, err := ed448.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("Ed448 key: %w", err)
	}
	sign448 := func(m []byte) []byte { return ed448.Sign(sk448, m, "") }
	verify448 := func(m, s []byte) bool { return ed448.Verify(pk448, m, s, "") }
	ops = append(ops,
		op{id: "ed448-sign", title: "Ed448 sign", lib: sign448, check: verify448},
		op{id: "ed448-verify", title: "Ed448 verify", lib: verifier(verify448, sign448(make([]byte, 32)))})
	dk, err := mlkem.GenerateKey768()
	if err != nil {
		return nil, fmt.Errorf("ML-KEM-768 key: %w", err)
	}
	ek := dk.EncapsulationKey()
	_, ct := ek.Encapsulate()
	ops = append(ops,
		op{id: "mlkem768-encap", title: "ML-KEM-768 encapsulate", lib: func([]byte) []byte { s, _ := ek.Encapsulate(); return s }},
		op{id: "mlkem768-decap", title: "ML-KEM-768 decapsulate", lib: func([]byte) []byte {
			s, err := dk.Decapsulate(ct)
			if err != nil {
				panic(err)
			}
			return s
		}})
	x, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("X25519 key: %w", err)
	}
	peer := x.PublicKey()
	ops = append(ops, op{id: "x25519-derive", title: "X25519 derive", lib: func([]byte) []byte {
		s, err := x.ECDH(peer)
		if err != nil {
			panic(err)
		}
		return s
	}})
	return ops, nil
}

// verifier is a verification row: the fixed signature over the zero
// message, which must verify.
func verifier(verify func(msg, sig []byte) bool, sig []byte) func([]byte) []byte {
	msg := make([]byte, 32)
	return func([]byte) []byte {
		if !verify(msg, sig) {
			panic("a good signature does not verify")
		}
		return nil
	}
}

// rate is one measurement.
type rate struct {
	ops            uint64
	wall, cpu      float64
	perSec, perCPU float64
}

// measure runs o on n threads for the given seconds: the library alone or,
// with check, followed by the verification of its result.
func measure(o op, n int, seconds float64, check bool) rate {
	var wg sync.WaitGroup
	counts := make([]uint64, n)
	start := make(chan struct{})
	deadline := time.Duration(seconds * float64(time.Second))
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			msg := make([]byte, 32)
			_, _ = rand.Read(msg)
			msg[0] ^= byte(i)
			<-start
			t0 := time.Now()
			var c uint64
			for time.Since(t0) < deadline {
				binary.LittleEndian.PutUint64(msg[8:], c)
				sig := o.lib(msg)
				if check && !o.check(msg, sig) {
					panic(o.id + ": the library's signature does not verify")
				}
				c++
			}
			counts[i] = c
		}()
	}
	runtime.GC()
	c0, t0 := cpuSeconds(), time.Now()
	close(start)
	wg.Wait()
	r := rate{wall: time.Since(t0).Seconds(), cpu: cpuSeconds() - c0}
	for _, c := range counts {
		r.ops += c
	}
	if r.wall > 0 {
		r.perSec = float64(r.ops) / r.wall
	}
	if r.cpu > 0 {
		r.perCPU = float64(r.ops) / r.cpu
	}
	return r
}

// cpuSeconds is the process's user and system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// row is one operation at one thread count; module is the module's
// ops per CPU-second (0: not measured).
type row struct {
	op            op
	threads       int
	lib, libCheck rate
	module        float64
	runs          int // 2: the library's rates are the mean of this run and an earlier one
}

// expected is what the token's operation costs the library: the
// signature and its check, or the operation alone.
func (r row) expected() float64 {
	if r.op.check != nil {
		return r.libCheck.perCPU
	}
	return r.lib.perCPU
}

func printTable(w io.Writer, rows []row, seconds float64) {
	runs := "one run"
	if len(rows) > 0 && rows[0].runs == 2 {
		runs = "mean of the runs before and after the module's"
	}
	fmt.Fprintf(w, "\n# the libraries called directly in Go (test/bench/pqlib), %.1f s per cell (%s), ops per process CPU-second;\n", seconds, runs)
	fmt.Fprintln(w, "# lib+check = the signature then its verification, as the token releases it; check cost = lib/(lib+check) - 1;")
	fmt.Fprintln(w, "# module = the same row of p11bench (ops per process CPU-second); overhead = (lib+check, or lib)/module - 1")
	fmt.Fprintf(w, "%-28s %3s %12s %12s %10s %12s %9s\n", "operation", "thr", "lib", "lib+check", "check cost", "module", "overhead")
	for _, r := range rows {
		libCheck, checkCost, mod, over := "-", "-", "-", "-"
		if r.op.check != nil && r.libCheck.perCPU > 0 {
			libCheck = fmt.Sprintf("%.1f", r.libCheck.perCPU)
			checkCost = fmt.Sprintf("%+.0f%%", 100*(r.lib.perCPU/r.libCheck.perCPU-1))
		}
		if r.module > 0 {
			mod = fmt.Sprintf("%.1f", r.module)
			if e := r.expected(); e > 0 {
				over = fmt.Sprintf("%+.0f%%", 100*(e/r.module-1))
			}
		}
		fmt.Fprintf(w, "%-28s %3d %12.1f %12s %10s %12s %9s\n", r.op.title, r.threads, r.lib.perCPU, libCheck, checkCost, mod, over)
	}
}

func writeTSV(path string, rows []row) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("tsv: %w", err)
	}
	bw := bufio.NewWriter(f)
	fmt.Fprintln(bw, "op\toperation\tthreads\tlib_ops_per_s\tlib_ops_per_cpu_s\tlib_check_ops_per_cpu_s\tmodule_ops_per_cpu_s\toverhead")
	for _, r := range rows {
		over := ""
		if e := r.expected(); r.module > 0 && e > 0 {
			over = fmt.Sprintf("%.3f", e/r.module-1)
		}
		check := ""
		if r.op.check != nil {
			check = fmt.Sprintf("%.2f", r.libCheck.perCPU)
		}
		mod := ""
		if r.module > 0 {
			mod = fmt.Sprintf("%.2f", r.module)
		}
		fmt.Fprintf(bw, "%s\t%s\t%d\t%.2f\t%.2f\t%s\t%s\t%s\n", r.op.id, r.op.title, r.threads, r.lib.perSec, r.lib.perCPU, check, mod, over)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("tsv: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("tsv: %w", err)
	}
	return nil
}

// readOurs reads the first module's ops per CPU-second from p11bench's TSV,
// by op id and thread count.
func readOurs(path string) (map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("p11bench TSV: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	if !sc.Scan() {
		return nil, errors.New("p11bench TSV: empty")
	}
	header := strings.Split(sc.Text(), "\t")
	col := -1
	for i, h := range header {
		if strings.HasSuffix(h, "_ops_per_cpu_s") && !strings.HasSuffix(h, "_thread_cpu_s") {
			col = i
			break
		}
	}
	if col < 0 || len(header) < 3 || header[0] != "op" || header[2] != "threads" {
		return nil, errors.New("p11bench TSV: no op, threads and _ops_per_cpu_s columns")
	}
	out := map[string]float64{}
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) <= col || f[col] == "" {
			continue
		}
		n, err1 := strconv.Atoi(f[2])
		v, err2 := strconv.ParseFloat(f[col], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("p11bench TSV: bad row %q", sc.Text())
		}
		out[key(f[0], n)] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("p11bench TSV: %w", err)
	}
	return out, nil
}

// readBefore reads the library's rates (plain, with the check) from an
// earlier run's TSV, by op id and thread count.
func readBefore(path string) (map[string][2]float64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // it selected no operation
	}
	if err != nil {
		return nil, fmt.Errorf("earlier run: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	out := map[string][2]float64{}
	for first := true; sc.Scan(); first = false {
		c := strings.Split(sc.Text(), "\t")
		if first || len(c) < 6 {
			continue
		}
		n, err := strconv.Atoi(c[2])
		if err != nil {
			return nil, fmt.Errorf("earlier run: bad row %q", sc.Text())
		}
		lib, _ := strconv.ParseFloat(c[4], 64)
		check, _ := strconv.ParseFloat(c[5], 64)
		out[key(c[0], n)] = [2]float64{lib, check}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("earlier run: %w", err)
	}
	return out, nil
}

func key(id string, threads int) string { return id + "/" + strconv.Itoa(threads) }

func parseThreads(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 64 {
			return nil, fmt.Errorf("bad -threads %q", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// selected is p11bench's --only: any of the comma-separated substrings.
func selected(id, only string) bool {
	if only == "" {
		return true
	}
	for _, t := range strings.Split(only, ",") {
		if t != "" && strings.Contains(id, t) {
			return true
		}
	}
	return false
}
