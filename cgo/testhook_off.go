//go:build !modexp_testhooks

package main

// testHook runs at the start of every export that reaches the module, after
// panic recovery is armed. In the library it does nothing (and is inlined
// away); the tests' version is in testhook_on.go.
func testHook() {}
