//go:build linux

package rsa

import (
	"context"
	"crypto"
	gorsa "crypto/rsa"
	"crypto/sha256"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine/arith/mont"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
	"github.com/modexp-token/modexp-token/engine/internal/cputime"
)

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// TestPrivateCPUTime reports the process CPU time of Private on the
// software engine (with and without exponent blinding, halves one after
// the other so that the figure is the cost of one operation) beside
// crypto/rsa's SignPKCS1v15 on the same key, and, for each size, where
// the time goes: the two half-size exponentiations, the reductions and
// Garner, the blinding (the squaring of the pair on every use plus a new
// pair every 32 uses, with the multiplications by rᵉ and r⁻¹), the check
// sᵉ = c, and the allocations. Opt-in: MODEXP_CPUTIME=1.
func TestPrivateCPUTime(t *testing.T) {
	cputime.OptIn(t)
	defer func(p int) { crtPolicy = p }(crtPolicy)
	crtPolicy = crtNever
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
		kx, err := NewKey(soft.New(), privOf(gk), Options{ExponentBlinding: true})
		if err != nil {
			t.Fatal(err)
		}
		iters := max(2, 32*2048*2048/(bits*bits))
		priv := cputime.MinProcess(7, iters, func() {
			if _, _, err := k.Private(ctx, em); err != nil {
				t.Fatal(err)
			}
		})
		privX := cputime.MinProcess(7, iters, func() {
			if _, _, err := kx.Private(ctx, em); err != nil {
				t.Fatal(err)
			}
		})
		gorsaT := cputime.MinProcess(7, iters, func() {
			if _, err := gorsa.SignPKCS1v15(nil, gk, crypto.SHA256, digest[:]); err != nil {
				t.Fatal(err)
			}
		})
		// The parts, timed inside one loop so that the machine's load hits
		// them alike: the steps of privateOn one by one, and the two
		// engine exponentiations alone on the same reduced inputs.
		pr := k.pr
		x := make([]uint64, k.n.Limbs())
		mont.SetBytes(x, em)
		tt := make([]uint64, k.n.ScratchLen())
		yp := make([]byte, k.p.Size())
		yq := make([]byte, k.q.Size())
		var blindT, crtT, unblindT, checkT, expsT time.Duration
		parts := 4 * iters
		for range parts {
			c0 := cputime.Process()
			sc := k.getScratch()
			rE, rInv := sc.rE, sc.rInv
			if err := k.blind.take(k.secret, rE, rInv, tt); err != nil {
				t.Fatal(err)
			}
			blinded := make([]uint64, len(x))
			k.n.MontMul(blinded, x, rE, tt)
			c1 := cputime.Process()
			sl, _, err := k.crtExp(ctx, pr, blinded, sc)
			if err != nil {
				t.Fatal(err)
			}
			c2 := cputime.Process()
			k.n.MontMul(sl, sl, rInv, tt)
			c3 := cputime.Process()
			v := make([]uint64, len(x))
			k.n.ExpVarTime(v, sl, k.eBytes)
			if mont.Equal(v, x) != 1 {
				t.Fatal("check failed")
			}
			c4 := cputime.Process()
			k.putScratch(sc)
			mont.FillBytes(yp, blinded[:k.p.Limbs()])
			mont.FillBytes(yq, blinded[:k.q.Limbs()])
			yp[0], yq[0] = 0, 0 // below p and q
			c5 := cputime.Process()
			pr.eng.Exp(ctx, pr.pm, yp, k.crt.DP)
			pr.eng.Exp(ctx, pr.qm, yq, k.crt.DQ)
			c6 := cputime.Process()
			blindT += c1 - c0
			crtT += c2 - c1
			unblindT += c3 - c2
			checkT += c4 - c3
			expsT += c6 - c5
		}
		total := blindT + crtT + unblindT + checkT
		pct := func(d time.Duration) float64 { return 100 * float64(d) / float64(total) }
		per := func(d time.Duration) float64 { return ms(d / time.Duration(parts)) }
		allocs := testing.AllocsPerRun(iters, func() { k.Private(ctx, em) })
		t.Logf("%d bits: Private %.3f ms, with exponent blinding %.3f ms (+%.1f%%), crypto/rsa SignPKCS1v15 %.3f ms (CPU per op, kernel %s)",
			bits, ms(priv), ms(privX), 100*(float64(privX)/float64(priv)-1), ms(gorsaT), mont.Kernel())
		t.Logf("%d bits: parts (%d ops, %.3f ms each): two half exps %.3f ms (%.1f%%); reductions mod p, q + Garner %.3f ms (%.1f%%); blinding (pair from the cache, renewed every %d uses, and the products by rᵉ and r⁻¹) %.3f ms (%.1f%%); check sᵉ = c %.3f ms (%.1f%%); %.0f allocations per Private",
			bits, parts, per(total), per(expsT), pct(expsT), per(crtT-expsT), pct(crtT-expsT), blindingRenewal,
			per(blindT+unblindT), pct(blindT+unblindT), per(checkT), pct(checkT), allocs)
	}
}

// TestCRTPolicyCPUTime compares the CRT scheduling policies (split the
// halves always, never, or while cores are idle, with and without the
// check of the machine's load) with 1 and 2 client
// goroutines signing with one 2048-bit key (exponent blinding on, as in
// the token): wall-clock throughput and process CPU time per signature,
// the median of 5 rounds in which the policies alternate. Opt-in:
// MODEXP_CPUTIME=1; on a shared machine the wall column measures the
// neighbours as much as the code.
func TestCRTPolicyCPUTime(t *testing.T) {
	cputime.OptIn(t)
	ctx := context.Background()
	gk := testKey(t, 2048)
	digest := sha256.Sum256([]byte("policy"))
	sig, _ := gorsa.SignPKCS1v15(nil, gk, crypto.SHA256, digest[:])
	em, _ := Public(gk.N, gk.E, sig)
	k, err := NewKey(soft.New(), privOf(gk), Options{ExponentBlinding: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func(p int) { crtPolicy = p }(crtPolicy)
	const perClient, rounds = 60, 5
	defer func(f func() bool) { machineBusy = f }(machineBusy)
	busy := machineBusy
	policies := []struct {
		name       string
		p          int
		ignoreLoad bool
	}{{"always", crtAlways, false}, {"never", crtNever, false}, {"adaptive", crtAdaptive, false}, {"adaptive, machine load ignored", crtAdaptive, true}}
	for _, clients := range []int{1, 2} {
		rate := make([][]float64, len(policies))
		cpu := make([][]float64, len(policies))
		for range rounds {
			for i, pol := range policies {
				crtPolicy = pol.p
				machineBusy = busy
				if pol.ignoreLoad {
					machineBusy = func() bool { return false }
				}
				var wg sync.WaitGroup
				w0, c0 := time.Now(), cputime.Process()
				for range clients {
					wg.Go(func() {
						for range perClient {
							if _, _, err := k.Private(ctx, em); err != nil {
								t.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				wall, c := time.Since(w0), cputime.Process()-c0
				ops := float64(clients * perClient)
				rate[i] = append(rate[i], ops/wall.Seconds())
				cpu[i] = append(cpu[i], float64(c)/ops/1e6)
			}
		}
		for i, pol := range policies {
			t.Logf("%d client(s), split %-30s: %5.0f sig/s wall, %.3f ms CPU/sig, %.2f CPUs busy (medians of %d rounds)",
				clients, pol.name, median(rate[i]), median(cpu[i]), median(rate[i])*median(cpu[i])/1e3, rounds)
		}
	}
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	slices.Sort(s)
	return s[len(s)/2]
}
