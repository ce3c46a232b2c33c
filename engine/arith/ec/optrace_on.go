//go:build ecoptrace

package ec

// With the ecoptrace build tag, every field operation folds its kind into
// opTrace, so a test can check that the sequence of operations of a
// constant-time routine does not depend on the secret scalar (see
// optrace_test.go). Not safe for concurrent use; tests only.
const traceOps = true

var opTrace, opCount uint64

func traceOp(kind uint64) {
	opTrace = (opTrace ^ kind) * 0x100000001b3
	opCount++
}

func resetTrace() { opTrace, opCount = 0xcbf29ce484222325, 0 }
