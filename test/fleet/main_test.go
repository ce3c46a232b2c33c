package fleet

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// bin are the programs the tests run, built once per test binary by
// TestMain: the fleet module (make lib-fleet, in build/), and in a private
// directory the CLI and the etcd member (build tag modexp_etcd) and the
// host program (test/fleet/host/host.c; "" when p11-kit's pkcs11.h is
// missing: make deps).
var bin struct{ lib, cli, member, host string }

// pkcs11H is the header host.c includes.
const pkcs11H = "/usr/include/p11-kit-1/p11-kit/pkcs11.h"

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "modexp-fleet-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin.lib = filepath.Join(e2e.Root(), "build", "libmodexp-pkcs11-fleet.so")
	bin.cli = filepath.Join(dir, "modexp-token")
	bin.member = filepath.Join(dir, "member")
	builds := [][]string{
		{"go", "build", "-tags", "modexp_etcd", "-o", bin.cli, "./cmd/modexp-token"},
		{"go", "build", "-tags", "modexp_etcd", "-o", bin.member, "./keystore/etcdtest/member"},
	}
	if _, err := os.Stat(pkcs11H); err == nil {
		bin.host = filepath.Join(dir, "host")
		builds = append(builds, []string{"cc", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread", "-o", bin.host, "test/fleet/host/host.c", "-ldl"})
	}
	errs := make([]error, len(builds)+1)
	var wg sync.WaitGroup
	wg.Go(func() { errs[0] = e2e.Make("lib-fleet") })
	for i, b := range builds {
		wg.Go(func() { errs[1+i] = e2e.Build(b...) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
