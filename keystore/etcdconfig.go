package keystore

import (
	"errors"
	"time"
)

// The etcd backend (etcd.go) is compiled only with the build tag
// modexp_etcd: the etcd client (gRPC, protobuf) doubles the module's size
// and adds to its start-up, which a user of token files must not pay.
// build/libmodexp-pkcs11-fleet.so is the module built with it
// (docs/FLEET.md); without it OpenEtcd says so (etcd_off.go).

// EtcdConfig places a token in an etcd cluster.
type EtcdConfig struct {
	Endpoints []string // client URLs, e.g. https://10.0.0.1:2379
	Prefix    string   // key prefix of this token (one token per prefix)

	// Client TLS (all optional): CA bundle to verify the members, client
	// certificate and key to authenticate to them.
	CAFile, CertFile, KeyFile string

	// Username and Password for etcd's own authentication (optional).
	Username, Password string

	// DialTimeout bounds connecting (default 3s); RequestTimeout bounds
	// every request (default 3s). An unreachable cluster gives
	// ErrUnavailable after them, never a hang.
	DialTimeout, RequestTimeout time.Duration

	// ConnectTimeout bounds OpenEtcd's first contact with the cluster (the
	// first read of the token, its retries included, and the diagnosis
	// of a failure). 0: no budget, the first read has RequestTimeout and
	// the diagnosis DialTimeout. The requests after it keep RequestTimeout.
	ConnectTimeout time.Duration
}

// ErrUnavailable: the store could not be reached in time (an etcd cluster
// without quorum, or unreachable). Nothing was written.
var ErrUnavailable = errors.New("keystore: token store unavailable")

// ErrAccessDenied: the store refuses this client (etcd: permission denied
// on the prefix, failed authentication, or the TLS handshake rejected: an
// unknown CA, a refused client certificate). Waiting does not cure it; a
// change of configuration, certificate or role does.
var ErrAccessDenied = errors.New("keystore: token store refuses access")
