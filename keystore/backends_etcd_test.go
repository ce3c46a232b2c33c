//go:build modexp_etcd

package keystore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// TestOnEtcd runs the keystore's tests of backendTests (backends_test.go)
// again with every token in etcd, on the shared embedded member: a token
// path names a key prefix (a Store's own path "etcd:" + prefix names the
// same one), and the tests' direct edits of the stored records (tampering,
// corruption, downgrades, the migrations' fixtures) are made with the etcd
// client under the prefix, as an etcd administrator could make them.
func TestOnEtcd(t *testing.T) {
	endpoint := etcdServer.Endpoint(t)
	useEtcd(t, endpoint, fmt.Sprintf("/onetcd/%d", etcdPrefixRun.Add(1)))
	for _, tc := range backendTests {
		t.Run(tc.name, tc.fn)
	}
}

var etcdPrefixRun atomic.Uint64

// envEtcdBackend carries "endpoint base" to TestTwoProcesses's child.
const envEtcdBackend = "KEYSTORE_TEST_ETCD"

func init() {
	backendFromEnv = func(t *testing.T) {
		if v := os.Getenv(envEtcdBackend); v != "" {
			endpoint, base, _ := strings.Cut(v, " ")
			useEtcd(t, endpoint, base)
		}
	}
}

// useEtcd sets the tests' hooks (helpers_test.go) to tokens in etcd at
// endpoint, under base + the token path, until t ends.
func useEtcd(t *testing.T, endpoint, base string) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: time.Minute, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	prefixOf := func(path string) string {
		if p, ok := strings.CutPrefix(path, "etcd:"); ok {
			return p
		}
		return base + path + "/"
	}
	openHook = func(t *testing.T, path string, opts Options) (*Store, error) {
		// Hang-guard timeouts: the defaults (3 s) are not, for a member
		// on a loaded machine.
		return OpenEtcd(EtcdConfig{Endpoints: []string{endpoint}, Prefix: prefixOf(path), DialTimeout: time.Minute, RequestTimeout: time.Minute}, opts)
	}
	rawHook = func(t *testing.T, path string) rawStore { return etcdRaw{t, cli, prefixOf(path)} }
	backendEnv = []string{envEtcdBackend + "=" + endpoint + " " + base}
	t.Cleanup(func() {
		openHook, rawHook, backendEnv = nil, nil, nil
		_ = cli.Close()
	})
}

// etcdRaw is rawStore on a token in etcd: plain gets, puts and deletes of
// the keys under the prefix (the layout of etcd.go), with no commit key
// put and no compare.
type etcdRaw struct {
	t      *testing.T
	cli    *clientv3.Client
	prefix string
}

func (r etcdRaw) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Minute) // a hang guard
}

func (r etcdRaw) must(err error) {
	r.t.Helper()
	if err != nil {
		r.t.Fatalf("etcd %s: %v", r.prefix, err)
	}
}

// epoch reads the bucket's marker: sequence(8) ‖ epoch(8).
func (r etcdRaw) epoch(bucket []byte) (uint64, bool) {
	r.t.Helper()
	ctx, cancel := r.ctx()
	defer cancel()
	resp, err := r.cli.Get(ctx, r.prefix+"b/"+string(bucket))
	r.must(err)
	if len(resp.Kvs) == 0 {
		return 0, false
	}
	if v := resp.Kvs[0].Value; len(v) == 16 {
		return binary.BigEndian.Uint64(v[8:]), true
	}
	r.t.Fatalf("bucket marker %q: %x", bucket, resp.Kvs[0].Value)
	return 0, false
}

// data is the key prefix of the bucket's keys.
func (r etcdRaw) data(bucket []byte) string {
	r.t.Helper()
	ep, ok := r.epoch(bucket)
	if !ok {
		r.t.Fatalf("etcd %s: no bucket %q", r.prefix, bucket)
	}
	return r.prefix + "k/" + string(bucket) + "/" + string(binary.BigEndian.AppendUint64(nil, ep))
}

func (r etcdRaw) get(bucket, key []byte) []byte {
	r.t.Helper()
	p := r.data(bucket)
	ctx, cancel := r.ctx()
	defer cancel()
	resp, err := r.cli.Get(ctx, p+string(key))
	r.must(err)
	if len(resp.Kvs) == 0 {
		return nil
	}
	return bytes.Clone(resp.Kvs[0].Value)
}

func (r etcdRaw) put(bucket, key, value []byte) {
	r.t.Helper()
	p := r.data(bucket)
	ctx, cancel := r.ctx()
	defer cancel()
	_, err := r.cli.Put(ctx, p+string(key), string(value))
	r.must(err)
}

func (r etcdRaw) all(bucket []byte) map[string][]byte {
	r.t.Helper()
	if !r.hasBucket(bucket) {
		return nil
	}
	p := r.data(bucket)
	ctx, cancel := r.ctx()
	defer cancel()
	resp, err := r.cli.Get(ctx, p, clientv3.WithPrefix())
	r.must(err)
	m := map[string][]byte{}
	for _, kv := range resp.Kvs {
		m[strings.TrimPrefix(string(kv.Key), p)] = bytes.Clone(kv.Value)
	}
	return m
}

func (r etcdRaw) hasBucket(name []byte) bool {
	r.t.Helper()
	_, ok := r.epoch(name)
	return ok
}

func (r etcdRaw) createBucket(name []byte) {
	r.t.Helper()
	if r.hasBucket(name) {
		r.t.Fatalf("etcd %s: bucket %q exists", r.prefix, name)
	}
	ctx, cancel := r.ctx()
	defer cancel()
	resp, err := r.cli.Get(ctx, r.prefix+"c")
	r.must(err)
	// An epoch no earlier incarnation of the bucket had: the keystore
	// takes a snapshot revision + 1, below this one's.
	marker := binary.BigEndian.AppendUint64(make([]byte, 8), uint64(resp.Header.Revision)+1)
	_, err = r.cli.Put(ctx, r.prefix+"b/"+string(name), string(marker))
	r.must(err)
}

func (r etcdRaw) deleteBucket(name []byte) {
	r.t.Helper()
	p := r.data(name)
	ctx, cancel := r.ctx()
	defer cancel()
	_, err := r.cli.Txn(ctx).Then(clientv3.OpDelete(r.prefix+"b/"+string(name)), clientv3.OpDelete(p, clientv3.WithPrefix())).Commit()
	r.must(err)
}

func (r etcdRaw) dump() []byte {
	r.t.Helper()
	ctx, cancel := r.ctx()
	defer cancel()
	resp, err := r.cli.Get(ctx, r.prefix, clientv3.WithPrefix())
	r.must(err)
	var out []byte
	for _, kv := range resp.Kvs {
		// The bytes as stored (a search for a secret must see them).
		out = fmt.Appendf(append(out, kv.Key...), " @%d = ", kv.ModRevision)
		out = append(append(out, kv.Value...), '\n')
	}
	return out
}

func (r etcdRaw) remove() {
	r.t.Helper()
	ctx, cancel := r.ctx()
	defer cancel()
	_, err := r.cli.Delete(ctx, r.prefix, clientv3.WithPrefix())
	r.must(err)
}

// TestEtcdRestoreOldSchema: a backup of schema version 1 cannot live in
// etcd (store copy refuses it too): RestoreTo says so before it deletes
// anything, and the token in the prefix is untouched.
func TestEtcdRestoreOldSchema(t *testing.T) {
	s := openEtcdStore(t, etcdConfig(t), testOptions())
	initWith(t, s)
	old, err := os.ReadFile("testdata/v1-token.db")
	must(t, err)
	before, err := s.Token()
	must(t, err)
	_, err = RestoreTo(s, bytes.NewReader(old), true)
	if err == nil || !strings.Contains(err.Error(), "schema version 1") {
		t.Fatalf("RestoreTo of a version-1 backup: %v", err)
	}
	if after, err := s.Token(); err != nil || after != before {
		t.Fatalf("the token after a refused restore: %+v, %v (was %+v)", after, err, before)
	}
}
