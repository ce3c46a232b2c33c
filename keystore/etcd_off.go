//go:build !modexp_etcd

package keystore

import "fmt"

// EtcdBuilt reports whether this build has the etcd backend.
const EtcdBuilt = false

// OpenEtcd is the etcd backend's entry point; this build has none.
func OpenEtcd(cfg EtcdConfig, opts Options) (*Store, error) {
	return nil, fmt.Errorf("keystore: etcd:%s: this module is built without the etcd backend: use libmodexp-pkcs11-fleet.so (built with -tags modexp_etcd, docs/FLEET.md)", cfg.Prefix)
}

// Cause is the short cause of a failed OpenEtcd; this build has none.
func Cause(error) string { return "" }
