package device

import "context"

// SetAwaitHook sets testHookAwait to f until the test's end (restore).
// No call may run meanwhile but the test's own.
func SetAwaitHook(f func(ctx context.Context, leader bool)) (restore func()) {
	testHookAwait = f
	return func() { testHookAwait = nil }
}
