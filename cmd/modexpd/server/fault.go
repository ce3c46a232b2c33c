package server

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FaultKind is a kind of injected fault.
type FaultKind int

// Fault kinds. See [ParseFault] for their specs.
const (
	// FaultZeroAbove answers all-zero results for moduli (or fields) wider
	// than Bits: the Cryptech 2015 "new core" fault.
	FaultZeroAbove FaultKind = iota + 1
	// FaultBitFlip flips one random bit of a result with probability Prob.
	FaultBitFlip
	// FaultHang never answers arithmetic requests (MODEXP, MODEXP_CRT,
	// EC_MUL, SELFTEST), ignoring deadlines and CANCEL; INFO, PING and
	// STATUS still answer, as a device whose control processor is alive
	// while its arithmetic core is stuck.
	FaultHang
	// FaultDrop closes the connection instead of answering every Every-th
	// arithmetic request (counted across the daemon).
	FaultDrop
	// FaultSlow delays every arithmetic answer by Delay (within the
	// request's deadline: past it the answer is TIMEOUT).
	FaultSlow
)

// Fault is one injected fault.
type Fault struct {
	Kind  FaultKind
	Bits  int           // FaultZeroAbove
	Prob  float64       // FaultBitFlip
	Every uint64        // FaultDrop (≥ 1)
	Delay time.Duration // FaultSlow
}

// ParseFault reads a fault spec: "zero-above:BITS", "bitflip:PROB" (0 <
// PROB ≤ 1), "hang", "drop" or "drop:EVERY" (close the connection on every
// EVERY-th arithmetic request; default 1), "slow:MS".
func ParseFault(spec string) (Fault, error) {
	kind, arg, hasArg := strings.Cut(spec, ":")
	bad := func(why string) (Fault, error) {
		return Fault{}, fmt.Errorf("server: fault %q: %s", spec, why)
	}
	switch kind {
	case "zero-above":
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 {
			return bad("want zero-above:BITS")
		}
		return Fault{Kind: FaultZeroAbove, Bits: n}, nil
	case "bitflip":
		p, err := strconv.ParseFloat(arg, 64)
		if err != nil || !(p > 0 && p <= 1) {
			return bad("want bitflip:PROB with 0 < PROB ≤ 1")
		}
		return Fault{Kind: FaultBitFlip, Prob: p}, nil
	case "hang":
		if hasArg {
			return bad("hang takes no argument")
		}
		return Fault{Kind: FaultHang}, nil
	case "drop":
		every := uint64(1)
		if hasArg {
			n, err := strconv.ParseUint(arg, 10, 32)
			if err != nil || n == 0 {
				return bad("want drop or drop:EVERY with EVERY ≥ 1")
			}
			every = n
		}
		return Fault{Kind: FaultDrop, Every: every}, nil
	case "slow":
		ms, err := strconv.Atoi(arg)
		if err != nil || ms < 0 {
			return bad("want slow:MS")
		}
		return Fault{Kind: FaultSlow, Delay: time.Duration(ms) * time.Millisecond}, nil
	}
	return bad("unknown fault (zero-above:BITS, bitflip:PROB, hang, drop[:EVERY], slow:MS)")
}

// String is the fault's spec.
func (f Fault) String() string {
	switch f.Kind {
	case FaultZeroAbove:
		return fmt.Sprintf("zero-above:%d", f.Bits)
	case FaultBitFlip:
		return "bitflip:" + strconv.FormatFloat(f.Prob, 'g', -1, 64)
	case FaultHang:
		return "hang"
	case FaultDrop:
		return fmt.Sprintf("drop:%d", f.Every)
	case FaultSlow:
		return fmt.Sprintf("slow:%d", f.Delay.Milliseconds())
	}
	return "unknown"
}
