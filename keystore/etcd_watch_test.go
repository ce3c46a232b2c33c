//go:build modexp_etcd

package keystore

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/keystore/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// TestEtcdWatchCompacted: a host whose watch is cut (its only member
// killed) while other hosts write, and the cluster compacts past the
// revision the watch would resume from, is notified when its member is
// back (the watch starts again from now and the caller asks the change
// log) and reaches the others' generation, instead of resuming from a
// revision that no longer exists.
func TestEtcdWatchCompacted(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-member cluster")
	}
	c := etcdtest.StartCluster(t, 3)
	m0, m1, m2 := c.Members[0], c.Members[1], c.Members[2]
	cfg := func(ms ...*etcdtest.Member) EtcdConfig {
		var eps []string
		for _, m := range ms {
			eps = append(eps, m.Client.String())
		}
		return EtcdConfig{Endpoints: eps, Prefix: "/watch/", DialTimeout: time.Minute, RequestTimeout: time.Minute} // hang guards
	}
	b := openEtcdStore(t, cfg(m1, m2), testOptions())
	key := initWith(t, b)
	defer key.Wipe()

	var logs syncLog
	optsA := testOptions()
	optsA.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	a := openEtcdStore(t, cfg(m0), optsA)
	var notified atomic.Int64
	a.Follow(func() { notified.Add(1) })
	waitFor(t, "the watch", a.Following)
	// One notified change, so that the watch has a revision to resume from.
	before := notified.Load()
	if _, err := b.Put(key, keyPair("w0")[1]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first notification", func() bool { return notified.Load() > before })

	// The client keeps a broken watch stream and resumes it when the
	// member is back, from the revision after the last event it saw.
	m0.Kill()
	for i := range 5 {
		if _, err := b.Put(key, keyPair(fmt.Sprint("w", i+1))[1]); err != nil {
			t.Fatal(err)
		}
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: cfg(m1, m2).Endpoints, DialTimeout: time.Minute, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	resp, err := cli.Get(ctx, "/watch/c")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Compact(ctx, resp.Header.Revision); err != nil {
		t.Fatal(err)
	}
	want, err := b.Generation()
	if err != nil {
		t.Fatal(err)
	}

	before = notified.Load()
	m0.Restart(t)
	waitFor(t, "a notification after the restart", func() bool { return notified.Load() > before && a.Following() })
	if got, err := a.Generation(); err != nil || got != want {
		t.Fatalf("generation on the host that was cut off: %d, %v; want %d", got, err, want)
	}
	if !strings.Contains(logs.String(), "compacted") {
		t.Errorf("the watch did not meet the compacted revision; log:\n%s", logs.String())
	}
}

// waitFor polls cond for up to 2 minutes (a hang guard: a member's
// restart and the watch's return may crawl on a loaded machine).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 2 minutes", what)
		}
	}
}

// syncLog is a log destination safe for the watch's goroutine.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
