//go:build modexp_etcd

package keystore

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/keystore/etcdtest"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

var etcdServer etcdtest.Shared

// etcdConfig is a fresh token prefix on the shared test server.
// etcdConfig is a token on the shared member whose timeouts are hang
// guards (the defaults, 3 s, are not, for a member on a loaded machine);
// tests of the timeouts set their own.
func etcdConfig(t testing.TB) EtcdConfig {
	return EtcdConfig{Endpoints: []string{etcdServer.Endpoint(t)}, Prefix: etcdServer.Prefix(t),
		DialTimeout: time.Minute, RequestTimeout: time.Minute}
}

func openEtcdStore(t testing.TB, cfg EtcdConfig, opts Options) *Store {
	t.Helper()
	s, err := OpenEtcd(cfg, opts)
	if err != nil {
		t.Fatalf("OpenEtcd: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestMain(m *testing.M) {
	etcdtest.MaybeServe()
	code := m.Run()
	etcdServer.Stop()
	os.Exit(code)
}

// eachBackend runs fn against a fresh token in a file and in etcd; open
// returns a new Store (another host, with nothing shared but the store)
// on that token each time it is called.
func eachBackend(t *testing.T, fn func(t *testing.T, open func() *Store)) {
	t.Run("file", func(t *testing.T) {
		path := tokenPath(t)
		fn(t, func() *Store { return openStore(t, path, testOptions()) })
	})
	t.Run("etcd", func(t *testing.T) {
		cfg := etcdConfig(t)
		fn(t, func() *Store { return openEtcdStore(t, cfg, testOptions()) })
	})
}

// keyPair is a private and a public key object sharing CKA_ID id.
func keyPair(id string) []Object {
	class := func(c uint64) []byte { return binary.LittleEndian.AppendUint64(nil, c) }
	return []Object{
		{Attrs: map[uint64][]byte{attrClass: class(classPrivateKey), tID: []byte(id), 0x123: []byte("private exponent " + id)},
			Sealed: map[uint64]bool{0x123: true}},
		{Attrs: map[uint64][]byte{attrClass: class(2), tID: []byte(id), 0x120: []byte("modulus " + id)}},
	}
}

func TestBackendObjects(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func() *Store) {
		a := open()
		if _, err := a.Token(); !errors.Is(err, ErrNotInitialized) {
			t.Fatalf("Token before InitToken: %v", err)
		}
		key := initWith(t, a)
		b := open() // another host
		bkey, err := b.Login(User, userPIN)
		if err != nil {
			t.Fatal(err)
		}
		defer bkey.Wipe()
		_, gen0, err := b.Objects(bkey)
		if err != nil {
			t.Fatal(err)
		}

		ids, err := a.PutObjects(key, keyPair("k1"))
		if err != nil {
			t.Fatal(err)
		}
		// The other host finds the pair through the change log and the
		// index, its sealed value opened and its MAC checked.
		changed, deleted, gen1, full, err := b.Changes(bkey, gen0)
		if err != nil || full || len(changed) != 2 || len(deleted) != 0 || gen1 <= gen0 {
			t.Fatalf("Changes: %d changed, %v deleted, gen %d→%d, full %v, %v", len(changed), deleted, gen0, gen1, full, err)
		}
		found, _, err := findByID(b, bkey, []byte("k1"))
		if err != nil || len(found) != 2 {
			t.Fatalf("findByID: %d, %v", len(found), err)
		}
		priv, err := b.Get(bkey, ids[0])
		if err != nil || string(priv.Attrs[0x123]) != "private exponent k1" || !priv.Verified {
			t.Fatalf("Get: %+v, %v", priv, err)
		}
		// Without a key: public values only.
		pub, err := b.Get(nil, ids[0])
		if err != nil || pub.Attrs[0x123] != nil || !pub.Sealed[0x123] {
			t.Fatalf("Get without key: %+v, %v", pub, err)
		}
		// Update, then delete on b: a sees both.
		obj := found[1]
		if obj.ID != ids[1] {
			obj = found[0]
		}
		obj.Attrs[tID] = []byte("k2")
		if _, err := b.Put(bkey, obj); err != nil {
			t.Fatal(err)
		}
		if err := b.Delete(ids[0]); err != nil {
			t.Fatal(err)
		}
		if err := b.Delete(ids[0]); !errors.Is(err, ErrNotFound) {
			t.Fatalf("second Delete: %v", err)
		}
		changed, deleted, _, full, err = a.Changes(key, gen1)
		if err != nil || full || len(changed) != 1 || changed[0].ID != ids[1] || len(deleted) != 1 || deleted[0] != ids[0] {
			t.Fatalf("Changes after update+delete: %+v, %v, full %v, %v", changed, deleted, full, err)
		}
		if f, _, _ := findByID(a, key, []byte("k1")); len(f) != 0 {
			t.Fatalf("k1 still indexed: %d", len(f))
		}
		if f, _, _ := findByID(a, key, []byte("k2")); len(f) != 1 {
			t.Fatalf("k2 not indexed: %d", len(f))
		}
		// Many objects: listing pages through them.
		var many []Object
		for i := range 40 {
			many = append(many, Object{Attrs: map[uint64][]byte{tID: fmt.Appendf(nil, "m%d", i)}})
		}
		for i := 0; i < len(many); i += 4 {
			if _, err := a.PutObjects(key, many[i:i+4]); err != nil {
				t.Fatal(err)
			}
		}
		objs, _, err := b.Objects(bkey)
		if err != nil || len(objs) != 41 {
			t.Fatalf("Objects: %d, %v", len(objs), err)
		}
		// Re-initialisation wipes every object, and IDs are not reused.
		if err := a.InitToken(soPIN, "again"); err != nil {
			t.Fatal(err)
		}
		if objs, _, err := b.Objects(nil); err != nil || len(objs) != 0 {
			t.Fatalf("Objects after InitToken: %d, %v", len(objs), err)
		}
		so, err := b.Login(SO, soPIN)
		if err != nil {
			t.Fatal(err)
		}
		defer so.Wipe()
		id, err := b.Put(so, Object{Attrs: map[uint64][]byte{tID: []byte("after")}})
		if err != nil || id <= ids[1] {
			t.Fatalf("Put after InitToken: id %d (last %d), %v", id, ids[1], err)
		}
	})
}

// TestBackendLockoutRace: hosts guessing PINs at once never get more
// wrong tries than the limit between them.
func TestBackendLockoutRace(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func() *Store) {
		a := open()
		initWith(t, a)
		limit := testOptions().MaxPINTries
		if limit == 0 {
			limit = DefaultMaxPINTries
		}
		var incorrect, locked atomic.Int64
		var wg sync.WaitGroup
		for range 3 {
			s := open()
			for range 3 {
				wg.Go(func() {
					for range limit {
						_, err := s.Login(User, []byte("wrong"))
						switch {
						case errors.Is(err, ErrPINIncorrect):
							incorrect.Add(1)
						case errors.Is(err, ErrPINLocked):
							locked.Add(1)
						default:
							t.Errorf("Login: %v", err)
						}
					}
				})
			}
		}
		wg.Wait()
		if incorrect.Load() != int64(limit) {
			t.Fatalf("%d wrong PINs counted as incorrect, limit %d (%d locked)", incorrect.Load(), limit, locked.Load())
		}
		if _, err := a.Login(User, userPIN); !errors.Is(err, ErrPINLocked) {
			t.Fatalf("right PIN after lockout: %v", err)
		}
	})
}

// TestEtcdUnreachable: a cluster that does not answer gives
// ErrUnavailable in bounded time.
func TestEtcdUnreachable(t *testing.T) {
	u := etcdtest.ReserveLoopbackURL(t) // nothing listens there
	start := time.Now()
	_, err := OpenEtcd(EtcdConfig{Endpoints: []string{u.String()}, Prefix: "/x/",
		DialTimeout: 300 * time.Millisecond, RequestTimeout: 300 * time.Millisecond}, testOptions())
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("OpenEtcd on a closed port: %v", err)
	}
	t.Logf("OpenEtcd on a closed port failed after %v", time.Since(start))
	if _, err := OpenEtcd(EtcdConfig{Endpoints: []string{u.String()}}, testOptions()); err == nil {
		t.Fatal("empty prefix accepted")
	}
}

// TestCopyFileEtcdAndBack: a token copied from a file to etcd and back
// opens with the same PINs, its objects verified, its index working.
func TestCopyFileEtcdAndBack(t *testing.T) {
	file := openStore(t, tokenPath(t), testOptions())
	key := initWith(t, file)
	if _, err := file.PutObjects(key, keyPair("pair")); err != nil {
		t.Fatal(err)
	}
	var many []Object
	for i := range 250 { // more than one batch
		many = append(many, Object{Attrs: map[uint64][]byte{tID: fmt.Appendf(nil, "d%d", i)}})
	}
	if _, err := file.PutObjects(key, many); err != nil {
		t.Fatal(err)
	}
	check := func(s *Store, want int) {
		t.Helper()
		k, err := s.Login(User, userPIN)
		if err != nil {
			t.Fatalf("%s: Login: %v", s.Path(), err)
		}
		defer k.Wipe()
		objs, _, err := s.Objects(k)
		if err != nil || len(objs) != want {
			t.Fatalf("%s: %d objects, want %d: %v", s.Path(), len(objs), want, err)
		}
		pair, _, err := findByID(s, k, []byte("pair"))
		if err != nil || len(pair) != 2 || !pair[0].Verified {
			t.Fatalf("%s: findByID: %+v, %v", s.Path(), pair, err)
		}
	}
	etcd := openEtcdStore(t, etcdConfig(t), testOptions())
	n, err := Copy(etcd, file)
	if err != nil || n != 252 {
		t.Fatalf("Copy file→etcd: %d, %v", n, err)
	}
	check(etcd, 252)
	if _, err := Copy(etcd, file); !errors.Is(err, ErrTokenExists) {
		t.Fatalf("Copy onto a token: %v", err)
	}
	ek, err := etcd.Login(User, userPIN)
	if err != nil {
		t.Fatal(err)
	}
	defer ek.Wipe()
	if _, err := etcd.Put(ek, Object{Attrs: map[uint64][]byte{tID: []byte("made in etcd")}}); err != nil {
		t.Fatal(err)
	}
	back := openStore(t, tokenPath(t), testOptions())
	if n, err := Copy(back, etcd); err != nil || n != 253 {
		t.Fatalf("Copy etcd→file: %d, %v", n, err)
	}
	check(back, 253)
	if _, err := Copy(back, file); !errors.Is(err, ErrTokenExists) {
		t.Fatalf("Copy onto a token file: %v", err)
	}
}

// leader returns the index of the cluster's leader among its members.
func leader(t *testing.T, c *etcdtest.Cluster) int {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: time.Minute, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	deadline := time.Now().Add(2 * time.Minute) // a guard against a hang, not a bound
	for time.Now().Before(deadline) {
		for i, m := range c.Members {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // a member just restarted may not answer: ask the next
			st, err := cli.Status(ctx, m.Client.String())
			cancel()
			if err == nil && st.Leader != 0 && st.Leader == st.Header.MemberId {
				return i
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no leader in 2 minutes")
	return -1
}

// TestEtcdClusterFaults: two hosts under a mixed load of writes, deletes
// and wrong PINs on a three-member cluster whose leader, then a
// follower, is killed with SIGKILL (and started again): every
// acknowledged write is on both hosts afterwards (unless a delete of it
// failed: then either outcome is right), every acknowledged delete gone,
// no call hangs, and the wrong PINs counted never exceed the
// lockout limit.
func TestEtcdClusterFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-member cluster")
	}
	c := etcdtest.StartCluster(t, 3)
	// Timeouts far above an election's length, even under -race on a
	// loaded machine (1 s was not, at load 15: the first open timed out):
	// what is checked is that no acknowledged write is lost and no call
	// fails for good, not how long the faults take (logged below).
	cfg := EtcdConfig{Endpoints: c.Endpoints(), Prefix: "/faults/", DialTimeout: 30 * time.Second, RequestTimeout: 30 * time.Second}
	opts := testOptions()
	opts.MaxPINTries = 50
	hosts := []*Store{openEtcdStore(t, cfg, opts), openEtcdStore(t, cfg, opts)}
	key := initWith(t, hosts[0])
	keys := []*Key{key, nil}
	var err error
	if keys[1], err = hosts[1].Login(User, userPIN); err != nil {
		t.Fatal(err)
	}
	defer keys[1].Wipe()

	stop := make(chan struct{})
	var mu sync.Mutex
	written := map[uint64]bool{} // acknowledged: true live, false deleted
	var wrong, slowest atomic.Int64
	var failed atomic.Int64
	timed := func(f func() error) error {
		start := time.Now()
		err := f()
		if d := int64(time.Since(start)); d > slowest.Load() {
			slowest.Store(d)
		}
		if err != nil {
			failed.Add(1)
		}
		return err
	}
	var wg sync.WaitGroup
	for h := range hosts {
		s, k := hosts[h], keys[h]
		wg.Go(func() { // writes and deletes
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var ids []uint64
				if timed(func() (err error) { ids, err = s.PutObjects(k, keyPair(fmt.Sprintf("h%d-%d", h, i))); return }) == nil {
					mu.Lock()
					written[ids[0]], written[ids[1]] = true, true
					mu.Unlock()
					if i%3 == 0 {
						// A delete that fails while a leader dies may
						// still have been applied: its outcome is
						// unknown, and only acknowledged ones are checked.
						err := timed(func() error { return s.Delete(ids[1]) })
						mu.Lock()
						if err == nil {
							written[ids[1]] = false
						} else {
							delete(written, ids[1])
						}
						mu.Unlock()
					}
				}
			}
		})
		wg.Go(func() { // wrong PINs
			for {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				_ = timed(func() error {
					_, err := s.Login(User, []byte("wrong"))
					switch {
					case errors.Is(err, ErrPINIncorrect):
						wrong.Add(1)
						return nil
					case errors.Is(err, ErrPINLocked):
						return nil // the limit reached: what must happen
					}
					return err
				})
			}
		})
	}
	pause := func() { time.Sleep(700 * time.Millisecond) }
	pause()
	l := leader(t, c)
	// Opens (a module's C_Initialize) during the election: a read that
	// meets "no leader" or "leader changed" is retried until the new
	// leader answers, within the request timeout.
	var opens, openFailed atomic.Int64
	var openErr atomic.Value
	var slowestOpen atomic.Int64
	stopOpens := make(chan struct{})
	var owg sync.WaitGroup
	owg.Go(func() {
		ocfg := cfg
		for first := true; ; first = false {
			select {
			case <-stopOpens:
				if !first { // at least one open, however late this goroutine runs
					return
				}
			default:
			}
			start := time.Now()
			s, err := OpenEtcd(ocfg, opts)
			if err == nil {
				_, err = s.Token()
				_ = s.Close()
			}
			if d := int64(time.Since(start)); d > slowestOpen.Load() {
				slowestOpen.Store(d)
			}
			opens.Add(1)
			if err != nil {
				openFailed.Add(1)
				openErr.Store(err)
			}
		}
	})
	c.Members[l].Kill()
	pause()
	close(stopOpens)
	owg.Wait()
	if openFailed.Load() != 0 || opens.Load() == 0 {
		t.Errorf("%d of %d opens failed while the leader was down: %v", openFailed.Load(), opens.Load(), openErr.Load())
	}
	t.Logf("%d opens while the leader was down, slowest %v", opens.Load(), time.Duration(slowestOpen.Load()))
	c.Members[l].Restart(t)
	pause()
	f := (leader(t, c) + 1) % 3
	c.Members[f].Kill()
	pause()
	c.Members[f].Restart(t)
	pause()
	close(stop)
	wg.Wait()

	t.Logf("slowest call %v", time.Duration(slowest.Load()))
	for h, s := range hosts {
		objs, _, err := s.Objects(keys[h])
		if err != nil {
			t.Fatalf("host %d: Objects: %v", h, err)
		}
		have := map[uint64]bool{}
		for _, o := range objs {
			have[o.ID] = true
		}
		for id, live := range written {
			if have[id] != live {
				t.Errorf("host %d: object %d present %v, acknowledged live %v", h, id, have[id], live)
			}
		}
	}
	tr, err := hosts[1].Token()
	if err != nil {
		t.Fatal(err)
	}
	counted := opts.MaxPINTries - tr.UserTriesLeft
	if int(wrong.Load()) > counted || counted > opts.MaxPINTries {
		t.Errorf("%d wrong PINs acknowledged, %d counted, limit %d", wrong.Load(), counted, opts.MaxPINTries)
	}
	t.Logf("%d objects acknowledged, %d wrong PINs (%d counted), %d calls failed during the faults, slowest call %v",
		len(written), wrong.Load(), counted, failed.Load(), time.Duration(slowest.Load()))
}

// benchObjects is the size of BenchmarkBackends's cold open.
var benchObjects = flag.Int("backends.objects", 10000, "BenchmarkBackends: objects of the cold open")

// BenchmarkBackends: for a file token and an etcd token (one member on
// loopback) side by side, a key pair written (keygen's store part) and a
// cold open of 10,000 objects (-backends.objects): Objects with the
// key, as a module does at login.
//
//	go test -tags modexp_etcd -run XXX -bench Backends ./keystore
func BenchmarkBackends(b *testing.B) {
	n := *benchObjects
	for _, backend := range []string{"file", "etcd"} {
		var s *Store
		if backend == "file" {
			var err error
			if s, err = Open(filepath.Join(b.TempDir(), "token.db"), testOptions()); err != nil {
				b.Fatal(err)
			}
		} else {
			s = openEtcdStore(b, etcdConfig(b), testOptions())
		}
		if err := s.InitToken(soPIN, "bench"); err != nil {
			b.Fatal(err)
		}
		key, err := s.Login(SO, soPIN)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(backend+"/keypair-write", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, err := s.PutObjects(key, keyPair(fmt.Sprint(i))); err != nil {
					b.Fatal(err)
				}
			}
		})
		have, _, err := s.Objects(nil)
		if err != nil {
			b.Fatal(err)
		}
		for i := len(have); i < n; i += 10 { // five key pairs (ten objects) a transaction
			var batch []Object
			for j := range 5 {
				batch = append(batch, keyPair(fmt.Sprintf("bulk-%d-%d", i, j))...)
			}
			if _, err := s.PutObjects(key, batch); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("%s/open-%d", backend, n), func(b *testing.B) {
			for b.Loop() {
				objs, _, err := s.Objects(key)
				if err != nil || len(objs) < n {
					b.Fatalf("%d objects, %v", len(objs), err)
				}
			}
		})
		key.Wipe()
		s.Close()
	}
}

// faults makes the next n requests of every flakyKV fail with err.
type faults struct {
	n, calls atomic.Int32
	err      atomic.Value
}

func (f *faults) fail() bool {
	f.calls.Add(1)
	return f.n.Add(-1) >= 0
}

// flakyKV is a backend's requests with faults injected (etcdWrapKV).
type flakyKV struct {
	clientv3.KV
	*faults
}

func (f *flakyKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if f.fail() {
		return nil, f.err.Load().(error)
	}
	return f.KV.Get(ctx, key, opts...)
}

func (f *flakyKV) Txn(ctx context.Context) clientv3.Txn { return &flakyTxn{Txn: f.KV.Txn(ctx), kv: f} }

type flakyTxn struct {
	clientv3.Txn
	kv *flakyKV
}

func (t *flakyTxn) If(cs ...clientv3.Cmp) clientv3.Txn   { t.Txn = t.Txn.If(cs...); return t }
func (t *flakyTxn) Then(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Then(ops...); return t }
func (t *flakyTxn) Else(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Else(ops...); return t }

func (t *flakyTxn) Commit() (*clientv3.TxnResponse, error) {
	if t.kv.fail() {
		return nil, t.kv.err.Load().(error)
	}
	return t.Txn.Commit()
}

// TestEtcdTransientRetried: reads (the open, Token, Changes) retry the
// errors of an election ("leader changed", "no leader") with backoff and
// succeed; a write's reads retry "leader changed" only, and a write meets
// "no leader" at once with ErrUnavailable (counted writes fail fast); a
// read whose errors outlast the request timeout fails with ErrUnavailable.
func TestEtcdTransientRetried(t *testing.T) {
	flaky := &faults{}
	etcdWrapKV = func(kv clientv3.KV) clientv3.KV { return &flakyKV{KV: kv, faults: flaky} }
	t.Cleanup(func() { etcdWrapKV = nil })
	// The retries that must succeed have etcdConfig's hang-guard timeouts
	// (1 s was not enough for an open with retries at load 14); the
	// give-up case below has a store of its own with a short one.
	cfg := etcdConfig(t)
	s := openEtcdStore(t, cfg, testOptions())
	initWith(t, s).Wipe()
	short := cfg
	short.RequestTimeout = 2 * time.Second
	giveUp := openEtcdStore(t, short, testOptions())
	fail := func(n int32, err error) {
		flaky.err.Store(err)
		flaky.n.Store(n)
		flaky.calls.Store(0)
	}

	fail(3, rpctypes.ErrLeaderChanged)
	s2, err := OpenEtcd(cfg, testOptions())
	if err != nil {
		t.Fatalf("open with 3 x leader changed: %v", err)
	}
	_ = s2.Close()
	for _, e := range []error{rpctypes.ErrLeaderChanged, rpctypes.ErrNoLeader, rpctypes.ErrTimeoutDueToLeaderFail} {
		fail(3, e)
		if _, err := s.Token(); err != nil {
			t.Errorf("Token with 3 x %v: %v", e, err)
		}
		if c := flaky.calls.Load(); c < 4 {
			t.Errorf("Token with 3 x %v: %d requests", e, c)
		}
	}
	fail(2, rpctypes.ErrLeaderChanged)
	k, err := s.Login(User, userPIN)
	if err != nil {
		t.Fatalf("login with 2 x leader changed: %v", err)
	}
	k.Wipe()
	// A write transaction (a PIN failure's count, say) meeting "no
	// leader": ErrUnavailable at once, fn never run.
	fail(1, rpctypes.ErrNoLeader)
	ran := false
	err = s.update(func(tx kvTx) error { ran = true; return nil })
	if !errors.Is(err, ErrUnavailable) || ran || flaky.calls.Load() != 1 {
		t.Errorf("write with no leader: %v after %d requests (fn ran: %v), want ErrUnavailable after 1", err, flaky.calls.Load(), ran)
	}
	// Reads retry within the request timeout, then give up: the error at
	// all (with the store failing every request) shows they stop.
	fail(1000, rpctypes.ErrNoLeader)
	start := time.Now()
	if _, err := giveUp.Token(); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Token with no leader for good: %v", err)
	}
	t.Logf("Token with no leader for good failed after %v (request timeout %v)", time.Since(start), short.RequestTimeout)
	fail(0, rpctypes.ErrNoLeader)
}
