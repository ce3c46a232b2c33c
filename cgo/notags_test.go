//go:build !modexp_testhooks

package main

import "testing"

// TestNeedsTestHooks fails a test run without the build tag: the tests of
// this package drive the C entry points through testsupport.go, which only
// the tag compiles (it is kept out of the built library).
func TestNeedsTestHooks(t *testing.T) {
	t.Fatal("the tests of ./cgo need the test hooks: go test -tags modexp_testhooks ./cgo (make test-cgo)")
}
