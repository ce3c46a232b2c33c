//go:build modexp_etcd

// Command member runs one etcd member (etcd's embeddable server) for
// make demo-fleet (test/fleet/demo.sh): a local cluster without installing
// etcd. Not for production: it turns fsync off.
//
//	member DIR NAME CLIENT_URL PEER_URL INITIAL_CLUSTER
package main

import (
	"fmt"
	"net/url"
	"os"

	"github.com/modexp-token/modexp-token/keystore/etcdtest"
)

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: member DIR NAME CLIENT_URL PEER_URL INITIAL_CLUSTER")
		os.Exit(2)
	}
	cu, err1 := url.Parse(os.Args[3])
	pu, err2 := url.Parse(os.Args[4])
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "member: bad URL")
		os.Exit(2)
	}
	etcdtest.Serve(os.Args[1], os.Args[2], cu, pu, os.Args[5])
}
