//go:build !ecoptrace

package ec

// traceOps is false in normal builds: the trace calls compile away.
const traceOps = false

func traceOp(kind uint64) {}
