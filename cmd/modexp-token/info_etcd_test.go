//go:build modexp_etcd

package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/keystore/etcdtest"
)

// TestInfoDeadEtcdSlot: info beside a working file slot names why an etcd
// slot whose cluster is out of reach is unusable, and what its calls get.
func TestInfoDeadEtcdSlot(t *testing.T) {
	// The budget is only a guard against a hang: the refusal is diagnosed
	// in what it leaves after the first request, and a short one may leave
	// too little on a loaded machine (the refusal is then taken for a
	// timeout). The request fails when its timeout has passed.
	u := etcdtest.ReserveLoopbackURL(t) // nothing listens there
	cli := cliWith(t, fmt.Sprintf("[[slot]]\ntoken_file = \"a.db\"\n%s\n"+
		"[[slot]]\netcd_endpoints = [%q]\netcd_prefix = \"/dead/\"\netcd_connect_budget = \"2m\"\netcd_request_timeout = \"300ms\"\n%s",
		cliSlot, u.String(), cliSlot))
	cli(0, "init", "--slot", "0", "--label", "file", "--yes")
	out := cli(1, "info", "--mechanisms=false") // a dead slot is a problem: exit 1
	for _, want := range []string{"token store etcd:/dead/ unusable since", "connection refused", "calls get CKR_DEVICE_ERROR"} {
		if !strings.Contains(out, want) {
			t.Fatalf("info does not say %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "PROBLEM:") != 1 || strings.Count(out, "PROBLEM: token store etcd:/dead/ unusable") != 1 {
		t.Fatalf("the dead slot's problem said more than once, or of the file slot:\n%s", out)
	}
}
