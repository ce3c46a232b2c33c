//go:build modexp_testhooks

package main

// testHookEnter, when set by a test, runs at the start of every export that
// reaches the module, after panic recovery is armed.
var testHookEnter func()

// testHook runs testHookEnter when set.
func testHook() {
	if testHookEnter != nil {
		testHookEnter()
	}
}
