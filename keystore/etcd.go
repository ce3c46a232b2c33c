//go:build modexp_etcd

package keystore

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/grpclog"
	"google.golang.org/grpc/status"
)

// A token in etcd
//
// One token lives under one key prefix; the layout mirrors the file's
// buckets (schema.go):
//
//	prefix "c"                        the commit key: every write
//	                                  transaction puts it, and commits only
//	                                  if its mod revision is the one read
//	prefix "b/" name                  a bucket: sequence(8) ‖ epoch(8)
//	prefix "k/" name "/" epoch(8) key a key of the bucket
//
// A transaction reads at one revision (the first read fixes it: a
// snapshot), buffers its writes, and commits them in one etcd Txn that
// compares the commit key's mod revision with the one it read: if another
// host committed meanwhile, the transaction runs again from the start
// against the new state. Writes are so serializable per token, as with the
// file's lock, and a compare-and-swap decides every PIN failure count: two
// hosts guessing at once cannot both count from the same tries value.
//
// Deleting a bucket (InitToken wipes the objects) gives it a new epoch and
// deletes the old epoch's keys with one range delete, which never overlaps
// the new keys in the same Txn (etcd refuses overlapping operations).
//
// etcd limits the operations of one Txn (--max-txn-ops, 128 by default):
// a key pair takes about fifteen; a transaction over the limit fails
// whole (nothing is written) with a clear error.

const (
	defaultEtcdDialTimeout    = 3 * time.Second
	defaultEtcdRequestTimeout = 3 * time.Second
	etcdPageSize              = 512
	etcdMaxAttempts           = 32
)

func init() {
	// gRPC's default logger writes errors to stderr, and the module never
	// prints: it is silenced before any gRPC use (it is not safe to set
	// later). Our own errors carry what matters.
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, io.Discard))
}

// EtcdBuilt reports whether this build has the etcd backend.
const EtcdBuilt = true

// OpenEtcd opens the token stored in etcd under cfg.Prefix. An empty
// prefix is refused (a token would spread over the whole keyspace). As
// with a file, a prefix holding no token is not an error: the Store
// reports ErrNotInitialized until InitToken. An unreachable cluster gives
// ErrUnavailable after cfg.DialTimeout.
func OpenEtcd(cfg EtcdConfig, opts Options) (*Store, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Prefix == "" {
		return nil, fmt.Errorf("keystore: etcd: an empty key prefix is refused")
	}
	if len(cfg.Endpoints) == 0 {
		return nil, fmt.Errorf("keystore: etcd: no endpoints")
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = defaultEtcdDialTimeout
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = defaultEtcdRequestTimeout
	}
	tlsConf, err := cfg.tlsConfig()
	if err != nil {
		return nil, err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:            cfg.Endpoints,
		DialTimeout:          cfg.DialTimeout,
		DialKeepAliveTime:    5 * time.Second,
		DialKeepAliveTimeout: cfg.DialTimeout,
		TLS:                  tlsConf,
		Username:             cfg.Username,
		Password:             cfg.Password,
		Logger:               zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("keystore: etcd %v: %v: %w", cfg.Endpoints, err, ErrUnavailable)
	}
	name := "etcd:" + cfg.Prefix
	be := &etcdBackend{cli: cli, kv: cli.KV, cfg: cfg, name: name, log: o.Logger}
	if etcdWrapKV != nil {
		be.kv = etcdWrapKV(be.kv)
	}
	s := &Store{path: name, opts: o, remote: be}
	// The first contact runs within the connect budget: each request and
	// the retries within half of it (a call ends within about two of its
	// limits), the diagnosis of a failure within the rest.
	// Without a budget the first read has the request timeout, and the
	// diagnosis the dial timeout.
	connect := cfg.ConnectTimeout
	if connect > 0 {
		be.cfg.RequestTimeout = min(cfg.RequestTimeout, connect/2)
	}
	start := time.Now()
	err = s.view(func(tx kvTx) error {
		_, err := loadToken(tx)
		return err
	})
	be.cfg.RequestTimeout = cfg.RequestTimeout
	if err != nil && !errors.Is(err, ErrNotInitialized) {
		_ = cli.Close()
		left := cfg.DialTimeout
		if cfg.ConnectTimeout > 0 {
			left = max(connect-time.Since(start), 0)
		}
		err = classifyOpen(cfg, tlsConf, err, left)
		o.Logger.Error("keystore: etcd token store unusable", "endpoints", cfg.Endpoints, "prefix", cfg.Prefix,
			"cause", Cause(err), "err", err)
		return nil, err
	}
	return s, nil
}

// openError is a failed OpenEtcd with its cause named.
type openError struct {
	cause string
	err   error
}

func (e *openError) Error() string { return e.cause + ": " + e.err.Error() }
func (e *openError) Unwrap() error { return e.err }

// Cause is the short cause of a failed OpenEtcd ("connection refused",
// "timeout", "TLS: unknown CA", "TLS: bad certificate", "permission
// denied on the prefix", ...), or "" for another error.
func Cause(err error) string {
	var oe *openError
	if errors.As(err, &oe) {
		return oe.cause
	}
	return ""
}

// classifyOpen names the cause of the first contact's failure err: etcd's
// own refusals from err itself; for a cluster that did not answer (the
// client says only "deadline exceeded" whatever the reason), a diagnosis
// of the first endpoint within left: a TCP dial (refused, timeout) and,
// with TLS, a handshake and one read (the members' certificate not from
// the configured CA; the members refusing the client certificate). Access
// refusals wrap ErrAccessDenied; the rest wraps ErrUnavailable.
func classifyOpen(cfg EtcdConfig, tlsConf *tls.Config, err error, left time.Duration) error {
	denied := func(cause string) error {
		return &openError{cause: cause, err: fmt.Errorf("keystore: etcd:%s: %w (%v)", cfg.Prefix, ErrAccessDenied, err)}
	}
	switch {
	case errors.Is(err, rpctypes.ErrPermissionDenied):
		return denied("permission denied on the prefix")
	case errors.Is(err, rpctypes.ErrAuthFailed), errors.Is(err, rpctypes.ErrInvalidAuthToken), errors.Is(err, rpctypes.ErrUserNotFound):
		return denied("authentication failed")
	case !errors.Is(err, ErrUnavailable):
		return err
	}
	cause := diagnose(cfg.Endpoints[0], tlsConf, max(left, 50*time.Millisecond))
	if strings.HasPrefix(cause, "TLS:") {
		return denied(cause)
	}
	if errors.Is(err, rpctypes.ErrNoLeader) || strings.Contains(err.Error(), "no leader") {
		cause = "no quorum (the members have no leader)"
	}
	return &openError{cause: cause, err: err}
}

// diagnose says why endpoint does not answer, within budget.
func diagnose(endpoint string, tlsConf *tls.Config, budget time.Duration) string {
	host := endpoint
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
		host = u.Host
	}
	deadline := time.Now().Add(budget)
	conn, err := net.DialTimeout("tcp", host, budget)
	switch {
	case err == nil:
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case isTimeout(err):
		return "timeout"
	default:
		return "cannot connect: " + err.Error()
	}
	defer conn.Close()
	_ = conn.SetDeadline(deadline)
	if tlsConf == nil {
		return "timeout (the endpoint accepts connections but does not answer)"
	}
	conf := tlsConf.Clone()
	if h, _, err := net.SplitHostPort(host); err == nil {
		conf.ServerName = h
	}
	conf.NextProtos = []string{"h2"}
	tc := tls.Client(conn, conf)
	err = tc.Handshake()
	if err == nil {
		// TLS 1.3: the members' verdict on the client certificate comes
		// after the handshake, as an alert on the first read.
		_, err = tc.Read(make([]byte, 1))
	}
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ce *tls.CertificateVerificationError
	switch {
	case errors.As(err, &ua) || (errors.As(err, &ce) && errors.As(ce.Err, &ua)):
		return "TLS: unknown CA (the members' certificate is not signed by etcd_ca)"
	case errors.As(err, &hn):
		return "TLS: the members' certificate does not name " + host
	case err != nil && (strings.Contains(err.Error(), "bad certificate") || strings.Contains(err.Error(), "certificate required") ||
		strings.Contains(err.Error(), "unknown certificate authority")):
		return "TLS: bad certificate (the members refuse the client certificate: " + err.Error() + ")"
	case err != nil && isTimeout(err):
		return "timeout (the endpoint accepts connections but does not answer)"
	case err != nil:
		return "TLS: " + err.Error()
	}
	return "timeout (the endpoint answers TLS but not the request)"
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

func (c EtcdConfig) tlsConfig() (*tls.Config, error) {
	if c.CAFile == "" && c.CertFile == "" && c.KeyFile == "" {
		return nil, nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("keystore: etcd CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("keystore: etcd CA %s: no PEM certificate", c.CAFile)
		}
		conf.RootCAs = pool
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, fmt.Errorf("keystore: etcd: a client certificate needs its key and the key its certificate")
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("keystore: etcd client certificate: %w", err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

// etcdWrapKV, set by tests only, wraps the requests of every backend
// opened after (failures injected).
var etcdWrapKV func(clientv3.KV) clientv3.KV

// etcdBackend is a token in etcd (remoteBackend).
type etcdBackend struct {
	cli  *clientv3.Client
	kv   clientv3.KV // cli's requests (a test may wrap them)
	cfg  EtcdConfig
	name string
	log  *slog.Logger
	// mu makes this process's own writers queue instead of conflicting.
	mu sync.Mutex

	// The watch (follow): live while a watch on the commit key is
	// established; stop cancels it.
	followMu sync.Mutex
	live     atomic.Bool
	stop     context.CancelFunc
	done     chan struct{}
}

func (e *etcdBackend) close() error {
	e.followMu.Lock()
	if e.stop != nil {
		e.stop()
		<-e.done
		e.stop = nil
	}
	e.followMu.Unlock()
	return e.cli.Close()
}

// follow watches the commit key, which every committed write transaction
// puts: changed is called after every commit by any host, and whenever
// the watch is (re)established (changes may have been missed while it was
// down). The client resumes a broken watch from the last revision it saw;
// a watch that ends (no leader, compaction, the cluster gone) is started
// again from the revision after the last event, after a pause; a compacted
// revision needs nothing special: changed makes the caller ask the change
// log, which answers with a full reload when it is too far behind. No
// polling: an idle token costs nothing but the watch stream.
func (e *etcdBackend) follow(changed func()) {
	e.followMu.Lock()
	defer e.followMu.Unlock()
	if e.stop != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.stop, e.done = cancel, make(chan struct{})
	go func() {
		defer close(e.done)
		var next int64 // revision to resume from (0: now)
		pause := 100 * time.Millisecond
		for ctx.Err() == nil {
			opts := []clientv3.OpOption{clientv3.WithCreatedNotify()}
			if next > 0 {
				opts = append(opts, clientv3.WithRev(next))
			}
			wch := e.cli.Watch(clientv3.WithRequireLeader(ctx), e.commitKey(), opts...)
			for resp := range wch {
				if err := resp.Err(); err != nil {
					if resp.CompactRevision != 0 {
						next = 0 // from now: changed below makes the caller catch up
					}
					e.log.Warn("keystore: etcd watch ended", "store", e.name, "err", err)
					break
				}
				if resp.Created {
					e.live.Store(true)
					pause = 100 * time.Millisecond
					changed()
					continue
				}
				if len(resp.Events) > 0 {
					next = resp.Events[len(resp.Events)-1].Kv.ModRevision + 1
					changed()
				}
			}
			e.live.Store(false)
			select {
			case <-ctx.Done():
			case <-time.After(pause):
				pause = min(2*pause, 2*time.Second)
			}
		}
	}()
}

// following reports whether the watch is established now.
func (e *etcdBackend) following() bool { return e.live.Load() }

func (e *etcdBackend) key(parts ...string) string { return e.cfg.Prefix + strings.Join(parts, "") }

func (e *etcdBackend) commitKey() string { return e.key("c") }

func (e *etcdBackend) markerKey(bucket string) string { return e.key("b/", bucket) }

func (e *etcdBackend) dataPrefix(bucket string, epoch uint64) string {
	return e.key("k/", bucket, "/", string(binary.BigEndian.AppendUint64(nil, epoch)))
}

// netErr classifies a failed request. The request's error stays in the
// chain (transient, leaderChanged look at it).
func (e *etcdBackend) netErr(what string, err error) error {
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		return errCompacted
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), transient(err),
		strings.Contains(err.Error(), "Unavailable"), strings.Contains(err.Error(), "DeadlineExceeded"):
		return fmt.Errorf("keystore: %s: %s: %w (after at most %v): %w", e.name, what, err, e.cfg.RequestTimeout, ErrUnavailable)
	}
	return fmt.Errorf("keystore: %s: %s: %w", e.name, what, err)
}

// transient reports whether a request failed for a reason that an
// election or a reconnection ends: the member has no leader, the leader
// changed while it served a read, it or the connection is unavailable
// (gRPC's Unavailable, which etcd also gives to its own request
// timeouts), or the request's deadline passed.
func transient(err error) bool {
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		return ee.Code() == codes.Unavailable || ee.Code() == codes.DeadlineExceeded
	}
	c := status.Code(err)
	return c == codes.Unavailable || c == codes.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded)
}

// leaderChanged reports etcd's "leader changed": the leader changed while
// a linearizable read waited for it (nothing was written: etcd gives this
// error to reads only).
func leaderChanged(err error) bool { return errors.Is(err, rpctypes.ErrLeaderChanged) }

// retry paces the retries of one call after transient failures: bounded
// backoff, 20 ms doubling to 250 ms with jitter, for as long as the call
// has been running less than the request timeout (so a call ends within
// about two request timeouts, never hangs).
type retry struct {
	start   time.Time
	backoff time.Duration
	limit   time.Duration
	tries   int
}

func (e *etcdBackend) newRetry() *retry {
	return &retry{start: time.Now(), backoff: 20 * time.Millisecond, limit: e.cfg.RequestTimeout}
}

// again sleeps before the next try and reports true if err may be retried
// (retryable) within the budget.
func (r *retry) again(err error, retryable func(error) bool) bool {
	if err == nil || !retryable(err) {
		return false
	}
	pause := r.backoff/2 + rand.N(r.backoff)
	if time.Since(r.start)+pause >= r.limit {
		return false
	}
	time.Sleep(pause)
	r.backoff = min(2*r.backoff, 250*time.Millisecond)
	r.tries++
	return true
}

// errCompacted: the snapshot revision was compacted during a transaction,
// which runs again.
var errCompacted = errors.New("keystore: etcd revision compacted")

// ctx bounds a request; a member without a leader answers at once
// (ErrNoLeader) instead of at the timeout.
func (e *etcdBackend) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(clientv3.WithRequireLeader(context.Background()), e.cfg.RequestTimeout)
}

// begin starts a transaction: one request reads the commit key and every
// bucket marker, at the revision the transaction then reads at.
func (e *etcdBackend) begin(writable bool) (*etcdTx, error) {
	ctx, cancel := e.ctx()
	defer cancel()
	resp, err := e.kv.Txn(ctx).Then(
		clientv3.OpGet(e.commitKey()),
		clientv3.OpGet(e.key("b/"), clientv3.WithPrefix()),
	).Commit()
	if err != nil {
		return nil, e.netErr("begin", err)
	}
	tx := &etcdTx{be: e, writable: writable, rev: resp.Header.Revision, buckets: map[string]*etcdBucket{}}
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) == 1 {
		tx.commitMod = kvs[0].ModRevision
	}
	for _, kv := range resp.Responses[1].GetResponseRange().Kvs {
		name := strings.TrimPrefix(string(kv.Key), e.key("b/"))
		if len(kv.Value) != 16 {
			return nil, fmt.Errorf("keystore: %s: bad bucket marker %q: %w", e.name, name, ErrCorrupt)
		}
		tx.buckets[name] = &etcdBucket{
			tx: tx, name: name, exists: true,
			seq:   binary.BigEndian.Uint64(kv.Value),
			epoch: binary.BigEndian.Uint64(kv.Value[8:]),
		}
	}
	return tx, nil
}

// view runs fn in a snapshot, again (with backoff, within the request
// timeout) after a transient failure: a read during a leader election
// waits for the new leader instead of failing.
func (e *etcdBackend) view(fn func(kvTx) error) error {
	r := e.newRetry()
	for {
		err := e.viewOnce(fn)
		if !r.again(err, transient) {
			if r.tries > 0 {
				e.log.Info("keystore: etcd read retried after transient failures", "store", e.name, "retries", r.tries, "err", err)
			}
			return err
		}
	}
}

func (e *etcdBackend) viewOnce(fn func(kvTx) error) error {
	for range etcdMaxAttempts {
		tx, err := e.begin(false)
		if err != nil {
			return err
		}
		if err = runEtcdTx(tx, fn); !errors.Is(err, errCompacted) {
			return err
		}
	}
	return fmt.Errorf("keystore: %s: snapshot compacted away again and again: %w", e.name, ErrLocked)
}

// update runs fn in a read-write transaction. Writes fail fast when the
// cluster has no leader (what must be counted, a PIN failure, is not
// left waiting); only a "leader changed" of the transaction's reads,
// before anything is sent to be written, is retried (with backoff,
// within the request timeout). A failed commit is never sent again: it
// may have been applied.
func (e *etcdBackend) update(fn func(kvTx) error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	backoff := time.Millisecond
	r := e.newRetry()
	for range etcdMaxAttempts {
		tx, err := e.begin(true)
		if err == nil {
			err = runEtcdTx(tx, fn)
		}
		if errors.Is(err, errCompacted) || r.again(err, leaderChanged) {
			continue
		}
		if err != nil {
			return err
		}
		ok, err := tx.commit()
		if err != nil || ok {
			return err
		}
		// Another host committed since our snapshot: run again on the
		// new state, after a short random pause.
		time.Sleep(backoff/2 + rand.N(backoff))
		backoff = min(2*backoff, 100*time.Millisecond)
	}
	return fmt.Errorf("keystore: %s: transaction kept conflicting with other hosts: %w", e.name, ErrLocked)
}

// etcdTx is a transaction on a token in etcd (kvTx).
type etcdTx struct {
	be        *etcdBackend
	writable  bool
	rev       int64 // snapshot revision
	commitMod int64 // the commit key's mod revision at rev (0: none)
	buckets   map[string]*etcdBucket
	drop      []string // data prefixes of deleted buckets (range deletes)
}

func (t *etcdTx) Writable() bool { return t.writable }
func (t *etcdTx) Path() string   { return t.be.name }

func (t *etcdTx) Empty() bool {
	for _, b := range t.buckets {
		if b.exists {
			return false
		}
	}
	return true
}

func (t *etcdTx) Bucket(name []byte) kvBucket {
	if b := t.buckets[string(name)]; b != nil && b.exists {
		return b
	}
	return nil
}

var errReadOnly = errors.New("keystore: write in a read-only transaction")

func (t *etcdTx) CreateBucket(name []byte) (kvBucket, error) {
	if !t.writable {
		return nil, errReadOnly
	}
	if t.Bucket(name) != nil {
		return nil, fmt.Errorf("keystore: bucket %q exists", name)
	}
	// A new epoch, above every epoch the bucket had: the snapshot
	// revision is unique to this transaction's commit.
	b := &etcdBucket{tx: t, name: string(name), exists: true, fresh: true, dirty: true, epoch: uint64(t.rev) + 1}
	t.buckets[b.name] = b
	return b, nil
}

func (t *etcdTx) CreateBucketIfNotExists(name []byte) (kvBucket, error) {
	if b := t.Bucket(name); b != nil {
		return b, nil
	}
	return t.CreateBucket(name)
}

func (t *etcdTx) DeleteBucket(name []byte) error {
	if !t.writable {
		return errReadOnly
	}
	b := t.buckets[string(name)]
	if b == nil || !b.exists {
		return fmt.Errorf("keystore: bucket %q not found", name)
	}
	if !b.fresh {
		t.drop = append(t.drop, t.be.dataPrefix(b.name, b.epoch))
	}
	b.exists, b.dirty, b.over, b.cache = false, true, nil, nil
	return nil
}

// commit writes the buffered changes in one Txn, if nothing was committed
// since the snapshot; ok false reports a conflict.
func (t *etcdTx) commit() (ok bool, err error) {
	e := t.be
	ops := []clientv3.Op{clientv3.OpPut(e.commitKey(), "")}
	for _, p := range t.drop {
		ops = append(ops, clientv3.OpDelete(p, clientv3.WithPrefix()))
	}
	names := make([]string, 0, len(t.buckets))
	for name := range t.buckets {
		names = append(names, name)
	}
	slices.Sort(names)
	writes := 0
	for _, name := range names {
		b := t.buckets[name]
		if b.dirty {
			writes++
			if b.exists {
				ops = append(ops, clientv3.OpPut(e.markerKey(name), string(b.marker())))
			} else {
				ops = append(ops, clientv3.OpDelete(e.markerKey(name)))
			}
		}
		if !b.exists {
			continue
		}
		p := e.dataPrefix(name, b.epoch)
		for _, k := range b.overKeys() {
			writes++
			if v := b.over[k]; v.del {
				ops = append(ops, clientv3.OpDelete(p+k))
			} else {
				ops = append(ops, clientv3.OpPut(p+k, string(v.val)))
			}
		}
	}
	if writes == 0 && len(t.drop) == 0 {
		return true, nil
	}
	ctx, cancel := e.ctx()
	defer cancel()
	resp, err := e.kv.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(e.commitKey()), "=", t.commitMod)).
		Then(ops...).Commit()
	if err != nil {
		if strings.Contains(err.Error(), "too many operations") {
			return false, fmt.Errorf("keystore: %s: one transaction of %d etcd operations exceeds the cluster's --max-txn-ops: %w", e.name, len(ops), err)
		}
		return false, e.netErr("commit", err)
	}
	return resp.Succeeded, nil
}

// etcdBucket is a bucket of an etcd transaction (kvBucket): reads at the
// snapshot revision, cached; writes buffered in over.
type etcdBucket struct {
	tx     *etcdTx
	name   string
	exists bool
	fresh  bool // created in this transaction: nothing stored under its epoch
	dirty  bool // the marker (sequence, epoch, existence) changed
	seq    uint64
	epoch  uint64
	over   map[string]overVal // buffered writes
	cache  map[string][]byte  // values read (nil: absent)
	whole  bool               // cache holds the whole bucket
	okeys  []string           // sorted keys of over (nil: stale)
}

type overVal struct {
	val []byte
	del bool
}

func (b *etcdBucket) marker() []byte {
	m := binary.BigEndian.AppendUint64(nil, b.seq)
	return binary.BigEndian.AppendUint64(m, b.epoch)
}

// smallBuckets are read whole at their first read: a few keys, read by
// every transaction.
var smallBuckets = map[string]bool{string(bucketMeta): true, string(bucketToken): true}

func (b *etcdBucket) Get(key []byte) []byte {
	if v, ok := b.over[string(key)]; ok {
		if v.del {
			return nil
		}
		return v.val
	}
	if b.fresh {
		return nil
	}
	if v, ok := b.cache[string(key)]; ok || b.whole {
		return v
	}
	e := b.tx.be
	ctx, cancel := e.ctx()
	defer cancel()
	p := e.dataPrefix(b.name, b.epoch)
	if b.cache == nil {
		b.cache = map[string][]byte{}
	}
	if smallBuckets[b.name] {
		resp, err := e.kv.Get(ctx, p, clientv3.WithPrefix(), clientv3.WithRev(b.tx.rev))
		if err != nil {
			panic(etcdPanic{e.netErr("read", err)})
		}
		for _, kv := range resp.Kvs {
			b.cache[strings.TrimPrefix(string(kv.Key), p)] = nonNil(kv.Value)
		}
		b.whole = true
		return b.cache[string(key)]
	}
	resp, err := e.kv.Get(ctx, p+string(key), clientv3.WithRev(b.tx.rev))
	if err != nil {
		panic(etcdPanic{e.netErr("read", err)})
	}
	var v []byte
	if len(resp.Kvs) == 1 {
		v = nonNil(resp.Kvs[0].Value)
	}
	b.cache[string(key)] = v
	return v
}

func (b *etcdBucket) write(key []byte, v overVal) error {
	if !b.tx.writable {
		return errReadOnly
	}
	if b.over == nil {
		b.over = map[string]overVal{}
	}
	if _, ok := b.over[string(key)]; !ok {
		b.okeys = nil
	}
	b.over[string(key)] = v
	return nil
}

func (b *etcdBucket) Put(key, value []byte) error {
	return b.write(key, overVal{val: bytes.Clone(value)})
}

func (b *etcdBucket) Delete(key []byte) error { return b.write(key, overVal{del: true}) }

func (b *etcdBucket) NextSequence() (uint64, error) {
	if !b.tx.writable {
		return 0, errReadOnly
	}
	b.seq++
	b.dirty = true
	return b.seq, nil
}

func (b *etcdBucket) Sequence() uint64 { return b.seq }

func (b *etcdBucket) SetSequence(v uint64) error {
	if !b.tx.writable {
		return errReadOnly
	}
	b.seq, b.dirty = v, true
	return nil
}

func (b *etcdBucket) overKeys() []string {
	if b.okeys == nil && len(b.over) > 0 {
		b.okeys = make([]string, 0, len(b.over))
		for k := range b.over {
			b.okeys = append(b.okeys, k)
		}
		sort.Strings(b.okeys)
	}
	return b.okeys
}

func (b *etcdBucket) Cursor() kvCursor { return &etcdCursor{b: b} }

// etcdCursor walks the bucket's stored keys (read in pages at the
// snapshot revision) merged with its buffered writes.
type etcdCursor struct {
	b    *etcdBucket
	pos  []byte // current key (nil: not positioned / at the end)
	page []*pageKV
	from string // page holds every stored key ≥ from up to its last
	done bool   // the page reaches the bucket's end
}

type pageKV struct {
	k string
	v []byte
}

func (c *etcdCursor) First() ([]byte, []byte) { return c.seekGE("") }

func (c *etcdCursor) Seek(seek []byte) ([]byte, []byte) { return c.seekGE(string(seek)) }

func (c *etcdCursor) Next() ([]byte, []byte) {
	if c.pos == nil {
		return nil, nil
	}
	return c.seekGE(string(c.pos) + "\x00")
}

func (c *etcdCursor) Delete() error {
	if c.pos == nil {
		return fmt.Errorf("keystore: cursor delete at the end")
	}
	return c.b.Delete(c.pos)
}

// seekGE positions the cursor on the first key ≥ k.
func (c *etcdCursor) seekGE(k string) ([]byte, []byte) {
	b := c.b
	// The first stored key ≥ k that the buffer does not delete.
	rk, rv, rok := "", []byte(nil), false
	for from := k; ; {
		kk, vv, ok := c.remoteGE(from)
		if !ok {
			break
		}
		if ov, in := b.over[kk]; in && ov.del {
			from = kk + "\x00"
			continue
		}
		rk, rv, rok = kk, vv, true
		break
	}
	// The first buffered key ≥ k that is not a delete.
	ok, okOK := "", false
	keys := b.overKeys()
	for i := sort.SearchStrings(keys, k); i < len(keys); i++ {
		if !b.over[keys[i]].del {
			ok, okOK = keys[i], true
			break
		}
	}
	var key string
	switch {
	case rok && (!okOK || rk <= ok):
		key = rk
		if ov, in := b.over[rk]; in {
			rv = ov.val
		}
	case okOK:
		key, rv = ok, b.over[ok].val
	default:
		c.pos = nil
		return nil, nil
	}
	c.pos = []byte(key)
	return c.pos, rv
}

// remoteGE returns the first stored key ≥ k (at the snapshot revision),
// fetching a page when the current one does not answer.
func (c *etcdCursor) remoteGE(k string) (string, []byte, bool) {
	b := c.b
	if b.fresh {
		return "", nil, false
	}
	if c.page != nil && k >= c.from {
		i := sort.Search(len(c.page), func(i int) bool { return c.page[i].k >= k })
		if i < len(c.page) {
			return c.page[i].k, c.page[i].v, true
		}
		if c.done {
			return "", nil, false
		}
	}
	e := b.tx.be
	p := e.dataPrefix(b.name, b.epoch)
	ctx, cancel := e.ctx()
	defer cancel()
	resp, err := e.kv.Get(ctx, p+k, clientv3.WithRange(clientv3.GetPrefixRangeEnd(p)),
		clientv3.WithLimit(etcdPageSize), clientv3.WithRev(b.tx.rev))
	if err != nil {
		panic(etcdPanic{e.netErr("read", err)})
	}
	c.page = c.page[:0]
	for _, kv := range resp.Kvs {
		c.page = append(c.page, &pageKV{k: strings.TrimPrefix(string(kv.Key), p), v: nonNil(kv.Value)})
	}
	c.from, c.done = k, !resp.More
	if len(c.page) == 0 {
		return "", nil, false
	}
	return c.page[0].k, c.page[0].v, true
}

// runEtcdTx runs fn, turning a failed read into its error.
func runEtcdTx(tx *etcdTx, fn func(kvTx) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			p, ok := r.(etcdPanic)
			if !ok {
				panic(r)
			}
			err = p.err
		}
	}()
	return fn(tx)
}

// nonNil keeps an empty stored value apart from a missing one.
func nonNil(v []byte) []byte {
	if v == nil {
		return []byte{}
	}
	return v
}

// etcdPanic carries a failed read out of code written against the seam
// (whose Get, like bbolt's, cannot fail) to the transaction's runner.
type etcdPanic struct{ err error }
