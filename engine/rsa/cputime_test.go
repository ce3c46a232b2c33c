//go:build linux

package rsa

import (
	"context"
	"crypto"
	gorsa "crypto/rsa"
	"crypto/sha256"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine/soft"
)

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestPrivateCPUTime reports the CPU time of Private on the software
// engine beside crypto/rsa's SignPKCS1v15 on the same key. Opt-in:
// MODEXP_CPUTIME=1.
func TestPrivateCPUTime(t *testing.T) {
	if os.Getenv("MODEXP_CPUTIME") != "1" {
		t.Skip("set MODEXP_CPUTIME=1")
	}
	ctx := context.Background()
	for _, bits := range []int{2048, 3072, 4096} {
		gk := testKey(t, bits)
		digest := sha256.Sum256([]byte("cpu"))
		sig, _ := gorsa.SignPKCS1v15(nil, gk, crypto.SHA256, digest[:])
		em, _ := Public(gk.N, gk.E, sig)
		k, err := NewKey(soft.New(), privOf(gk), Options{})
		if err != nil {
			t.Fatal(err)
		}
		iters := 64
		if bits > 2048 {
			iters = 32
		}
		c0 := processCPU()
		for range iters {
			if _, _, err := k.Private(ctx, em); err != nil {
				t.Fatal(err)
			}
		}
		c1 := processCPU()
		for range iters {
			if _, err := gorsa.SignPKCS1v15(nil, gk, crypto.SHA256, digest[:]); err != nil {
				t.Fatal(err)
			}
		}
		c2 := processCPU()
		t.Logf("%d bits: Private (soft) %.2f ms, crypto/rsa SignPKCS1v15 %.2f ms (CPU time per op)",
			bits, float64((c1-c0)/time.Duration(iters))/1e6, float64((c2-c1)/time.Duration(iters))/1e6)
	}
}
