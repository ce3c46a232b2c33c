package main

// modexp-token bench: RSA private operations on one engine, with the
// engine's simulated device time (engine.Cost) next to the wall time.

import (
	"context"
	"crypto/rand"
	stdrsa "crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/rsa"
	"github.com/modexp-token/modexp-token/engine/guard"
)

func benchCmd() *cobra.Command {
	o := &benchOpts{}
	c := &cobra.Command{
		Use:   "bench [--engine SPEC] [--bits N] [-n N] [--workers N] [--fallback fail|soft]",
		Short: "Time RSA private operations on one engine: ops, simulated device time, wall time",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBench(o, cmd.OutOrStdout())
		},
	}
	f := c.Flags()
	f.StringVar(&o.spec, "engine", "soft", "engine spec: soft, chip:NAME[,opts], device:unix:/path, pool:A|B")
	f.IntVar(&o.bits, "bits", 2048, "RSA key size (a fresh key, unless --key)")
	f.StringVar(&o.keyFile, "key", "", "PEM RSA private key to use instead of a fresh one (PKCS#1 or PKCS#8)")
	f.IntVarP(&o.n, "n", "n", 20, "private operations")
	f.IntVar(&o.workers, "workers", 1, "goroutines running operations at once")
	f.StringVar(&o.fallback, "fallback", "fail", "fail | soft: what a result failing the check does")
	f.BoolVar(&o.blind, "exponent-blinding", true, "blind the CRT exponents (turned off with a note if the engine refuses the longer exponent)")
	f.BoolVar(&o.selftest, "selftest", true, "run the engine's self-test first")
	return c
}

type benchOpts struct {
	spec, keyFile, fallback string
	bits, n, workers        int
	blind, selftest         bool
}

// runBench is `modexp-token bench`.
func runBench(o *benchOpts, stdout io.Writer) error {
	spec, bits, keyFile, n, workers, fallback, blind, selftest := &o.spec, &o.bits, &o.keyFile, &o.n, &o.workers, &o.fallback, &o.blind, &o.selftest
	if *n < 1 || *workers < 1 {
		return usageErrorf("-n and --workers must be at least 1")
	}
	if *fallback != "fail" && *fallback != "soft" {
		return usageErrorf("--fallback %q: want fail or soft", *fallback)
	}
	eng, err := engine.Open(*spec)
	if err != nil {
		return err
	}
	defer eng.Close()
	info := eng.Info()
	_, nativeCRT := engine.As[engine.CRTEngine](eng)
	fmt.Fprintf(stdout, "engine    %s (%s; simulated %v, constant time %v, native CRT %v, cores %d)\n",
		info.Name, info.Model, info.Simulated, info.ConstantTime, nativeCRT, info.Cores)
	if *selftest {
		t0 := time.Now()
		err := eng.SelfTest(context.Background())
		res := "passed"
		if err != nil {
			res = "FAILED: " + err.Error()
		}
		fmt.Fprintf(stdout, "self-test %s (%v)\n", res, time.Since(t0).Round(time.Microsecond))
	}

	priv, err := benchKey(*keyFile, *bits)
	if err != nil {
		return err
	}
	// The key runs as in a token slot: through engine/guard (the
	// known-answer test at its size, the software engine behind the
	// engine with --fallback soft, faults counted).
	gopts := guard.Options{ExponentBlinding: *blind, Fallback: *fallback == "soft"}
	if gopts.Fallback {
		soft, err := engine.Open("soft")
		if err != nil {
			return err
		}
		defer soft.Close()
		gopts.Software = soft
	}
	g := guard.New(eng, gopts) // not closed: eng is closed above
	key, err := g.RSAKey(priv)
	if err != nil && gopts.ExponentBlinding && errors.Is(err, engine.ErrOperandTooLarge) {
		// The engine refuses the blinded exponents (orup561 at 1024 bits).
		fmt.Fprintf(stdout, "note      exponent blinding off: %v\n", err)
		gopts.ExponentBlinding = false
		g = guard.New(eng, gopts)
		key, err = g.RSAKey(priv)
	}
	if err != nil {
		return err
	}
	faults0 := g.Status().Faults // the known-answer test's, if it failed
	input := func() []byte {
		c, _ := rand.Int(rand.Reader, priv.N)
		return c.FillBytes(make([]byte, key.Size()))
	}

	var (
		next, okOps, failed atomic.Int64
		mu                  sync.Mutex
		total               engine.Cost
		firstErr            error
		wg                  sync.WaitGroup
	)
	start := time.Now()
	for range *workers {
		wg.Go(func() {
			for next.Add(1) <= int64(*n) {
				_, c, err := key.Private(context.Background(), input())
				mu.Lock()
				total = total.Add(c)
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				if err != nil {
					failed.Add(1)
				} else {
					okOps.Add(1)
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	per := func(d time.Duration) time.Duration { return (d / time.Duration(*n)).Round(time.Microsecond) }
	fmt.Fprintf(stdout, "key       RSA-%d, CRT, exponent blinding %v, fallback %s\n", priv.N.BitLen(), gopts.ExponentBlinding, *fallback)
	fmt.Fprintf(stdout, "ops       %d (%d ok, %d failed; %d faults detected), %d workers\n", *n, okOps.Load(), failed.Load(), g.Status().Faults-faults0, *workers)
	fmt.Fprintf(stdout, "device    %v per op simulated device time (%d cycles", per(total.Device), total.Cycles/uint64(*n))
	if total.Energy > 0 {
		fmt.Fprintf(stdout, ", %.3g J", total.Energy/float64(*n))
	}
	fmt.Fprintln(stdout, ")")
	fmt.Fprintf(stdout, "wall      %v per op, %.1f ops/s (total %v)\n", per(wall), float64(*n)/wall.Seconds(), wall.Round(time.Millisecond))
	if firstErr != nil {
		fmt.Fprintf(stdout, "error     %v\n", firstErr)
	}
	return nil
}

// benchKey reads a PEM RSA key or generates one of bits.
func benchKey(path string, bits int) (*rsa.PrivateKey, error) {
	var k *stdrsa.PrivateKey
	if path == "" {
		var err error
		if k, err = stdrsa.GenerateKey(rand.Reader, bits); err != nil {
			return nil, fmt.Errorf("generate RSA-%d: %w", bits, err)
		}
	} else {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		blk, _ := pem.Decode(b)
		if blk == nil {
			return nil, fmt.Errorf("%s: no PEM block", path)
		}
		if k, err = x509.ParsePKCS1PrivateKey(blk.Bytes); err != nil {
			any, err2 := x509.ParsePKCS8PrivateKey(blk.Bytes)
			var ok bool
			if k, ok = any.(*stdrsa.PrivateKey); err2 != nil || !ok {
				return nil, fmt.Errorf("%s: not an RSA private key: %w", path, err)
			}
		}
	}
	if len(k.Primes) != 2 {
		return nil, errors.New("multi-prime RSA keys are not supported")
	}
	return &rsa.PrivateKey{N: k.N, E: k.E, D: k.D, P: k.Primes[0], Q: k.Primes[1]}, nil
}
