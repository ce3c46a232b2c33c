package rsa

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/mont"
)

// crtPolicy decides when the two CRT halves run concurrently (see
// splitCRT). Tests change it to compare the policies; it must not change
// while private operations run.
var crtPolicy = crtAdaptive

const (
	crtAdaptive = iota // concurrent only while cores are idle (the default)
	crtAlways          // concurrent whenever the engine has ≥ 2 cores
	crtNever           // always one after the other
)

// inFlight counts the private operations (all keys) that are between the
// reduction mod p, q and the end of their exponentiations.
var inFlight atomic.Int64

// splitCRT reports whether this private operation should run its mod-q
// exponentiation in a second goroutine. Splitting halves the latency of a
// lone signature, but a signature costs the same CPU either way (a bit
// more split: the goroutine hand-off), so when other private operations
// already keep the cores busy, splitting only adds scheduling and takes a
// core from another client. The adaptive policy therefore splits only
// while the number of operations in flight (this one included, all keys
// and engines) is below the engine's Info().Cores (for the software
// engine, the CPUs). On 2 cores: one client gets both cores, two clients
// get one each. The count is read without a lock: a stale read only picks the
// other, equally correct, schedule. Nor does it split while the machine is
// busy (machineBusy: every CPU has a runnable task, other processes
// included): the second half would wait for a CPU, or take it from
// another process, and a lone signer would cost more than one CPU per
// signature stream for no gain in latency. (On the IFMA kernel the
// software engine computes both halves interleaved in one ExpPair call
// and this choice does not arise.)
func (k *Key) splitCRT(pr *prepared) bool {
	if !pr.parallel {
		return false
	}
	switch crtPolicy {
	case crtAlways:
		return true
	case crtNever:
		return false
	}
	return inFlight.Load() < int64(pr.cores) && !machineBusy()
}

// machineBusy reports whether every CPU of the machine is running
// something (busy_linux.go); elsewhere it is never known to be.
var machineBusy = func() bool { return false }

// crtExp returns y^d mod n (plain limbs of n, in sc.s) computed on the
// engine, on sc's scratch.
func (k *Key) crtExp(ctx context.Context, pr *prepared, y []uint64, sc *scratch) ([]uint64, engine.Cost, error) {
	name := pr.name
	yb := sc.yb
	mont.FillBytes(yb, y)
	dpE, dqE, err := k.exponents(sc)
	if err != nil {
		return nil, engine.Cost{}, err
	}
	if pr.nativeCRT != nil {
		ck := engine.CRTKey{P: bytes.Clone(k.crt.P), Q: bytes.Clone(k.crt.Q), DP: dpE, DQ: dqE, QInv: bytes.Clone(k.crt.QInv)}
		r, cost, err := pr.nativeCRT.ExpCRT(ctx, &ck, yb)
		if err != nil {
			return nil, cost, fmt.Errorf("rsa: private: engine %s: ExpCRT: %w", name, err)
		}
		s := sc.s
		ok := len(r) == k.n.Size() && mont.SetBytes(s, r)&k.n.Less(s) == 1
		clear(r)
		if !ok {
			return nil, cost, fmt.Errorf("rsa: private: engine %s: ExpCRT result out of range: %w (%w)", name, ErrFault, engine.ErrDevice)
		}
		return s, cost, nil
	}

	yp, yq := sc.yp, sc.yq
	k.p.Reduce(yp, yb)
	k.q.Reduce(yq, yb)
	ypb, yqb := sc.ypb, sc.yqb
	mont.FillBytes(ypb, yp)
	mont.FillBytes(yqb, yq)

	inFlight.Add(1)
	defer inFlight.Add(-1)
	var (
		m1, m2     []byte
		c1, c2     engine.Cost
		err1, err2 error
	)
	// An engine may decline a pair (ErrUnsupported: the software engine
	// pairs only on the kernels that interleave two exponentiations);
	// the halves then run as for an engine without ExpPair.
	paired := false
	if pr.pair != nil {
		m1, m2, c1, err1 = pr.pair.ExpPair(ctx,
			engine.ExpOp{M: pr.pm, Base: ypb, Exp: dpE}, engine.ExpOp{M: pr.qm, Base: yqb, Exp: dqE})
		paired = !errors.Is(err1, engine.ErrUnsupported)
	}
	switch {
	case paired:
	case k.splitCRT(pr):
		m1, m2, c1, c2, err1, err2 = expSplit(ctx, pr, ypb, yqb, dpE, dqE)
	default:
		m1, c1, err1 = pr.eng.Exp(ctx, pr.pm, ypb, dpE)
		if err1 == nil {
			m2, c2, err2 = pr.eng.Exp(ctx, pr.qm, yqb, dqE)
		}
	}
	cost := c1.Add(c2)
	if err1 != nil {
		return nil, cost, fmt.Errorf("rsa: private: engine %s: exp mod p: %w", name, err1)
	}
	if err2 != nil {
		return nil, cost, fmt.Errorf("rsa: private: engine %s: exp mod q: %w", name, err2)
	}
	m1l, m2l := sc.m1, sc.m2
	ok1 := mont.SetBytes(m1l, m1) & k.p.Less(m1l)
	ok2 := mont.SetBytes(m2l, m2) & k.q.Less(m2l)
	if len(m1) != k.p.Size() || len(m2) != k.q.Size() || ok1&ok2 != 1 {
		return nil, cost, fmt.Errorf("rsa: private: engine %s: result out of range: %w (%w)", name, ErrFault, engine.ErrDevice)
	}
	k.garner(sc.s, m1l, m2, m2l, sc)
	clear(m1) // the halves are ours (the engine's results): not left to the collector
	clear(m2)
	return sc.s, cost, nil
}

// expSplit runs the mod-q half in a second goroutine and the mod-p half
// on this one (see splitCRT); what the goroutine shares escapes to the
// heap only on this path.
func expSplit(ctx context.Context, pr *prepared, ypb, yqb, dpE, dqE []byte) (m1, m2 []byte, c1, c2 engine.Cost, err1, err2 error) {
	var wg sync.WaitGroup
	wg.Go(func() { m2, c2, err2 = pr.eng.Exp(ctx, pr.qm, yqb, dqE) })
	m1, c1, err1 = pr.eng.Exp(ctx, pr.pm, ypb, dpE)
	wg.Wait()
	return m1, m2, c1, c2, err1, err2
}
