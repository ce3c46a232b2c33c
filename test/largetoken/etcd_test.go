//go:build modexp_etcd

package largetoken

import (
	"fmt"
	"os"
	"testing"

	"github.com/modexp-token/modexp-token/keystore/etcdtest"
)

// TestEtcdSearchesAndChangesDoNotScan is TestSearchesAndChangesDoNotScan
// on a token in etcd: one member in a child process on loopback ports (so
// the heap figures are the module's alone), the other process's change
// brought by the watch. 2,000 objects in make test (about a second); the
// 100,000 of docs/PERFORMANCE.md with the package doc's command (the bulk
// load, 4,000 transactions of 25 objects, takes about 40 s).
func TestEtcdSearchesAndChangesDoNotScan(t *testing.T) {
	cu, pu := etcdtest.ReserveLoopbackURL(t), etcdtest.ReserveLoopbackURL(t)
	etcdtest.StartProcess(t, t.TempDir(), "large", cu, pu)
	searchesAndChanges(t, t.TempDir(), backend{
		name: "etcd",
		store: fmt.Sprintf("etcd_endpoints = [%q]\netcd_prefix = \"/large/\"\netcd_dial_timeout = \"5s\"\netcd_request_timeout = \"30s\"\n",
			cu.String()),
		batch:   25,
		follows: true,
	})
}

func TestMain(m *testing.M) {
	etcdtest.MaybeServe()
	os.Exit(m.Run())
}
